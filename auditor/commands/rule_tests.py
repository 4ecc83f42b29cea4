"""`auditor rules test DIR`: the YAML cases in DIR/cases/ run against the packs of DIR,
each case's verdict on a line as pytest prints one, the failures' differences below."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from auditor.commands.shared_options import loaded_packs
from auditor.commands.terminal import fail, visible
from auditor.errors import AuditorError

CASES_FOLDER = "cases"
EXIT_CASE_FAILED = 1


def run_pack_cases(folders: tuple[str, ...], replace_builtin: bool) -> None:
    """Run the cases; exit 0 when all pass, 1 when one fails, 2 when the pack or a case
    file cannot be read (every problem named by file and line)."""
    # The pipeline is imported here, when the command runs: `auditor rules --help`
    # (and every other `auditor rules` use) starts without it.
    from auditor.casework.files import case_file_paths
    from auditor.casework.runner import load_cases, run_cases

    if len(folders) != 1:
        raise click.UsageError("test takes one pack folder: auditor rules test DIR")
    folder = Path(folders[0])
    started = time.perf_counter()
    try:
        packs = loaded_packs(folder, replace_builtin)
        cases = load_cases(case_file_paths(folder / CASES_FOLDER), packs)
    except AuditorError as error:
        _refuse(error)
    results = run_cases(cases, packs)
    for result in results:
        click.echo(f"{visible(result.case.label)} {'PASSED' if result.passed else 'FAILED'}")
        for failure in result.failures:
            click.echo(visible(_indented(failure), lines=True))
    failed = sum(not result.passed for result in results)
    elapsed = time.perf_counter() - started
    click.echo(f"{len(results) - failed} passed, {failed} failed in {elapsed:.2f} s")
    if failed:
        sys.exit(EXIT_CASE_FAILED)


def _refuse(error: AuditorError) -> None:
    """Every problem of the pack and case files on a line of its own, as `auditor rules
    lint` prints them (exit 2); any other error as the commands print one."""
    problems = getattr(error, "problems", None)
    if not problems:
        fail(error)
    for problem in problems:
        click.echo(visible(problem))
    click.echo(f"{len(problems)} problem{'s' * (len(problems) > 1)} found", err=True)
    sys.exit(error.exit_code)


def _indented(text: str) -> str:
    return "\n".join(f"  {line}" for line in text.splitlines())
