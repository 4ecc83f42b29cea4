"""`auditor rules`: the checks, one check's documentation, the traceability matrix by
regulation section, or a rule pack's JSON Schema; as a table, csv or json."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from auditor.commands.formats import emit, emit_rows, format_option, json_text, say
from auditor.commands.shared_options import loaded_packs, rules_options
from auditor.commands.terminal import fail, stdout, text_table, visible
from auditor.errors import AuditorError, ExitStatus


@click.command()
@click.argument("words", nargs=-1, metavar="[CODE | lint DIR | test DIR]")
@click.option(
    "--schema",
    is_flag=True,
    help="Print the JSON Schema of a rule pack (rules/*.yaml), for editors.",
)
@click.option(
    "--by-section",
    is_flag=True,
    help="Print the traceability matrix: every regulation section, its verdict and checks "
    "(with CODE, the sections that check's findings cite).",
)
@click.option(
    "--sql",
    is_flag=True,
    help="With CODE, print the check's witness: the SQL statement that finds what it finds.",
)
@format_option()
@rules_options
def rules(
    words: tuple[str, ...],
    schema: bool,
    by_section: bool,
    sql: bool,
    fmt: str,
    rules_dir: Path | None,
    replace_builtin: bool,
) -> None:
    """List the checks (code, title, citation), or document one CODE in full; or, with
    `lint DIR`, check the rule packs of a folder before an audit runs under them: every
    problem on a line of its own, with file, line and key path (exit 2), or none (exit 0):
    what an audit under the folder would refuse, and each citation its pack cannot quote
    (with --replace-builtin, as an audit that replaces the built-in packs); with
    --format csv or json, the problems as a column or a list. With `test DIR`, run the
    YAML cases of DIR/cases/ through the whole audit under the folder's packs: a line per
    case, PASSED or FAILED with what differs below it.

    With --schema, print the JSON Schema of a rule pack instead, for editors (json only).
    With --by-section, print every section of the regulations the packs encode (the
    files each pack's `regulation` names, from INDEX.md), whether the logs can audit it
    and the checks that do (those whose findings cite it, and those the pack's
    traceability file ties to it), or why none does; with a CODE too, only the
    sections that check's findings cite. With --rules DIR, the rule packs an audit with
    the same --rules would load, each with its file and SHA-256 (a pack that does not
    load is refused with its file and key, exit 2); with a CODE too, that check's
    documentation citing those packs' own sections.

    Exit status: 0, or 2 for an unknown CODE; `test DIR`: 1 when a case fails, 2 for
    a pack or case file that cannot be read.

    Examples:

    \b
      auditor rules
      auditor rules DRW003
      auditor rules DRW003 --by-section
      auditor rules DRW003 --sql
      auditor rules --format csv
      auditor rules --rules /packs/freedonia
      auditor rules lint /packs/freedonia
      auditor rules test /packs/freedonia
    """
    if words[:1] == ("lint",):
        _lint(words[1:], replace_builtin, fmt)
        return
    if words[:1] == ("test",):
        from auditor.commands.rule_tests import run_pack_cases

        run_pack_cases(words[1:], replace_builtin)
        return
    if len(words) > 1:
        raise click.UsageError("give one CODE, or lint DIR, or test DIR")
    code = words[0] if words else None
    if sql:
        _witness(code)
        return
    if (rules_dir is not None or replace_builtin) and code is None:
        _packs(rules_dir, replace_builtin, fmt)
        return
    if schema:
        _print_schema(fmt)
        return
    chosen, packs = _checks(code), None
    if rules_dir is not None or replace_builtin:
        packs = _loaded(rules_dir, replace_builtin)
        chosen = _cited_under(chosen, packs)
    if by_section:
        _sections(chosen[0] if code else None, fmt, packs)
    elif code:
        _one_check(chosen[0], fmt)
    else:
        _checks_list(chosen, fmt)


CHECK_COLUMNS = ["code", "name", "title", "severity", "citation"]
CHECK_DOC_COLUMNS = [*CHECK_COLUMNS, "what", "why", "example"]
SECTION_COLUMNS = ["ruleset", "section", "verdict", "from_logs", "codes", "reason"]


PACK_COLUMNS = ["ruleset", "title", "file", "sha256", "builtin"]


def _lint(folders: tuple[str, ...], replace_builtin: bool, fmt: str) -> None:
    from auditor.findings.words import count_text
    from auditor.packs.lint import lint_folder

    if len(folders) != 1:
        raise click.UsageError("lint takes one folder of rule packs: auditor rules lint DIR")
    try:
        problems = lint_folder(Path(folders[0]), replace_builtin)
    except AuditorError as error:
        fail(error)
    if fmt == "json":
        emit(json_text(problems))
    elif fmt == "csv":
        emit_rows([{"problem": p} for p in problems], ["problem"], "csv")
    else:
        for problem in problems:
            click.echo(visible(problem).replace("\\n", "\n  "))
    if problems:
        click.echo(f"{count_text(len(problems), 'problem', 'problems')} found", err=True)
        sys.exit(ExitStatus.UNUSABLE)
    say(f"{folders[0]}: the rule packs are clean", fmt)


def _packs(rules_dir: Path | None, replace_builtin: bool, fmt: str) -> None:
    try:
        packs = loaded_packs(rules_dir, replace_builtin)
    except AuditorError as error:
        fail(error)
    rows = [
        {
            "ruleset": ruleset,
            "title": pack.title,
            "file": pack.file,
            "sha256": pack.digest,
            "builtin": ruleset not in packs.added,
        }
        for ruleset, pack in packs.items()
    ]
    if fmt != "table":
        emit_rows(rows, PACK_COLUMNS, fmt)
        return
    table = text_table(title=f"{len(rows)} rule packs")
    for name in PACK_COLUMNS:
        table.add_column(name)
    for row in rows:
        table.add_row(*(visible(str(row[c])) for c in PACK_COLUMNS))
    stdout.print(table)


def _print_schema(fmt: str) -> None:
    import json

    from auditor.packs.sections import pack_json_schema

    if fmt == "csv":
        raise click.UsageError("--schema prints a JSON Schema: --format json or table")
    click.echo(json.dumps(pack_json_schema(), indent=2))


def _checks(code: str | None) -> list:
    """Every check's documentation, or CODE's alone; an unknown CODE exits 2."""
    from auditor.check_docs import check_docs

    checks = check_docs()
    if code is None:
        return checks
    chosen = [c for c in checks if c.code == code.upper()]
    if not chosen:
        click.echo(f"error: no check {visible(code)!r}; `auditor rules` lists them", err=True)
        sys.exit(ExitStatus.UNUSABLE)
    return chosen


def _witness(code: str | None) -> None:
    """The check's witness as its file holds it (`auditor.witness`)."""
    from auditor import witness

    if code is None:
        raise click.UsageError("--sql prints one check's witness: auditor rules CODE --sql")
    check = _checks(code)[0]
    text = witness.text(check.code)
    if text is None:
        click.echo(f"error: {check.code} has no witness yet", err=True)
        sys.exit(ExitStatus.UNUSABLE)
    click.echo(text, nl=not text.endswith("\n"))


def _loaded(rules_dir: Path | None, replace_builtin: bool):  # -> LoadedPacks
    try:
        return loaded_packs(rules_dir, replace_builtin)
    except AuditorError as error:
        fail(error)


def _cited_under(checks: list, packs) -> list:
    """The checks' documentation citing the sections of `packs`."""
    from dataclasses import replace

    from auditor.packs.cited import cite_rules

    return [replace(c, citation=cite_rules(c.subject, c.rules, packs)) for c in checks]


def _checks_list(checks: list, fmt: str) -> None:
    if fmt != "table":
        emit_rows([vars(c) for c in checks], CHECK_COLUMNS, fmt)
        return
    table = text_table(title=f"{len(checks)} checks")
    for name in ("code", "name", "title", "severity", "cites"):
        table.add_column(name)
    for check in checks:
        table.add_row(check.code, check.name, check.title, check.severity, check.citation)
    stdout.print(table)


def _one_check(check, fmt: str) -> None:
    if fmt == "json":
        emit(json_text({c: getattr(check, c) for c in CHECK_DOC_COLUMNS}))
        return
    if fmt == "csv":
        emit_rows([vars(check)], CHECK_DOC_COLUMNS, fmt)
        return
    click.echo(f"{check.code} {check.name}: {check.title}")
    click.echo(f"severity: {check.severity}\ncites: {check.citation}\n")
    for heading, text in (
        ("What it does", check.what),
        ("Why is this bad?", check.why),
        ("Example", check.example),
    ):
        click.echo(f"## {heading}\n{text}\n")


def _sections_heading(rows, code: str | None) -> str:
    if code is not None:
        return f"{rows.height} section{'s' * (rows.height > 1)} cited by {code}"
    audited = rows.filter(rows["codes"].list.len() > 0).height
    from_logs = rows.filter(rows["from_logs"]).height
    return (
        f"{rows.height} sections, {from_logs} auditable from the logs (or partly), "
        f"{audited} audited by checks"
    )


def _sections(check, fmt: str, packs=None) -> None:  # check: a CheckDoc or None
    """The traceability matrix of `packs` (the built-in ones by default), or the sections
    `check`'s findings cite: the references its rules hold in each pack, never a section
    the hand-kept traceability file alone ties it to."""
    import polars as pl

    from auditor.output.traceability import matrix
    from auditor.packs.cited_sections import cited_sections
    from auditor.packs.loaded import builtin_packs

    sections = matrix(packs)
    code = None if check is None else check.code
    if check is not None:
        cited = [
            {"ruleset": ruleset, "section": section}
            for ruleset, pack in (packs or builtin_packs()).items()
            for section in cited_sections(pack, check.rules)
        ]
        keys = pl.DataFrame(cited, schema={"ruleset": pl.String, "section": pl.String})
        sections = sections.join(keys, on=["ruleset", "section"], how="semi")
    if fmt != "table":
        emit_rows(sections.select(SECTION_COLUMNS).to_dicts(), SECTION_COLUMNS, fmt)
        return
    if sections.height == 0:
        click.echo(f"{code}: cites no section of the packs' regulations")
        return
    # Plain lines, one section each: 355 rows read (and grep) better than a wrapped table.
    for (ruleset,), rows in sections.group_by("ruleset", maintain_order=True):
        click.echo(f"{ruleset}: {_sections_heading(rows, code)}")
        for row in rows.iter_rows(named=True):
            codes = " ".join(row["codes"]) or "-"
            reason = f"  ({row['reason']})" if row["reason"] else ""
            click.echo(f"  {row['section']:<22}{row['verdict']:<15}{codes}{reason}")
        click.echo("")
