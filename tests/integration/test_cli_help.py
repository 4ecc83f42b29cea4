"""Every command answers -h and --help with examples that parse, and `python -m auditor` is
the same command line. The commands are discovered from the click group: a new command
is covered without a line here."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from datetime import datetime
from itertools import pairwise

import click
import pytest
from click.testing import CliRunner

from auditor import __version__
from auditor.cli import main


def command_paths(group: click.Group = main, prefix: tuple[str, ...] = ()) -> list[tuple]:
    paths = [prefix]
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            paths += command_paths(command, (*prefix, name))
        else:
            paths.append((*prefix, name))
    return paths


def named(path: tuple[str, ...]) -> str:
    return " ".join(path) or "auditor"


def help_of(path: tuple[str, ...], flag: str = "--help") -> str:
    result = CliRunner().invoke(main, [*path, flag])
    assert result.exit_code == 0, result.output
    return result.output


def examples(help_text: str) -> list[str]:
    """The command lines under "Examples:", up to the next blank line after them."""
    lines = help_text.splitlines()
    start = lines.index("  Examples:") + 1
    found: list[str] = []
    for line in lines[start:]:
        if not line.strip():
            if found:
                break
            continue
        found.append(line.strip())
    return found


def parse(example: str) -> click.Context:
    """Parse `example` as the command line would, down to its command, without running
    it: an unknown option, a missing argument or a bad value raises a UsageError."""
    words = shlex.split(example)
    assert words[0] == "auditor", example
    command: click.Command = main
    ctx = command.make_context("auditor", words[1:], resilient_parsing=False)
    while isinstance(command, click.Group):
        name, command, rest = command.resolve_command(ctx, ctx._protected_args + ctx.args)
        ctx = command.make_context(name, rest, parent=ctx)
    return ctx


@pytest.mark.parametrize("path", command_paths(), ids=named)
@pytest.mark.parametrize("flag", ["-h", "--help"])
def test_every_command_answers_help(path, flag):
    assert help_of(path, flag).startswith("Usage: ")


@pytest.mark.parametrize("path", command_paths(), ids=named)
def test_every_command_shows_examples_that_parse(path):
    shown = examples(help_of(path))
    assert shown, f"{named(path)} --help has no example"
    for example in shown:
        ctx = parse(example)
        assert ctx.command is not None


def test_a_wrong_example_would_be_caught():
    with pytest.raises(click.UsageError):
        parse("auditor audit /exports/2026-11-24 --output /audits/2026-11-24")
    with pytest.raises(click.UsageError):
        parse("auditor query")  # OUTDIR missing
    assert parse("auditor audit night -o out").params["out"] == "out"


@pytest.mark.parametrize("path", command_paths(), ids=named)
def test_no_help_shows_a_strftime_pattern(path):
    assert "%" not in help_of(path)


def test_the_strftime_check_would_catch_a_bare_datetime_option():
    @click.command()
    @click.option("--day", type=click.DateTime(["%Y-%m-%d"]))
    def bare(day: datetime) -> None:
        """A command that forgot the metavar."""

    assert "[%Y-%m-%d]" in CliRunner().invoke(bare, ["--help"]).output


def test_audit_help_states_every_exit_status_and_explains_its_engine():
    text = help_of(("audit",))
    statuses = text[text.index("Exit status:") :]
    for status, meaning in [
        ("0", "no finding"),
        ("1", "findings written"),
        ("2", "unusable input"),
        ("3", "internal error"),
        ("130", "interrupted"),
    ]:
        assert f"  {status} " in statuses and meaning in statuses, (status, statuses)
    assert "traceback" in statuses
    options = {p.name: p for p in main.commands["audit"].params}
    assert "Dask" in options["engine"].help and "scheduler" in options["scheduler"].help


def test_every_option_is_explained():
    unexplained = [
        f"{named(path)} {param.opts[0]}"
        for path in command_paths()
        if path
        for param in _command(path).params
        if isinstance(param, click.Option) and not param.hidden and not param.help
    ]
    assert unexplained == []


def _command(path: tuple[str, ...]) -> click.Command:
    command: click.Command = main
    for name in path:
        assert isinstance(command, click.Group)
        command = command.commands[name]
    return command


@pytest.mark.e2e
def test_python_m_auditor_is_the_command_line(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "auditor", "--version"],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,  # not the repository: `-m` imports from the working folder first
    )
    assert done.stdout.strip() == f"auditor, version {__version__}"
    helped = subprocess.run(
        [sys.executable, "-m", "auditor", "rules", "-h"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert helped.returncode == 0 and helped.stdout.startswith("Usage: auditor rules ")
    wrong = subprocess.run(
        [sys.executable, "-m", "auditor", "no-such-command"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert wrong.returncode == 2 and "No such command" in wrong.stderr


@pytest.mark.e2e
@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_shell_completion_as_the_readme_says(tmp_path, shell):
    auditor = os.path.join(os.path.dirname(sys.executable), "auditor")
    env = {**os.environ, "_AUDITOR_COMPLETE": f"{shell}_source"}
    done = subprocess.run([auditor], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 0 and "_AUDITOR_COMPLETE" in done.stdout
    unknown = {**os.environ, "_AUDITOR_COMPLETE": "tcsh_source"}
    refused = subprocess.run([auditor], capture_output=True, text=True, env=unknown, cwd=tmp_path)
    assert refused.returncode != 0 and "_AUDITOR_COMPLETE" not in refused.stdout


@pytest.mark.e2e
def test_shell_completion_completes_commands_and_options(tmp_path):
    auditor = os.path.join(os.path.dirname(sys.executable), "auditor")
    env = {**os.environ, "_AUDITOR_COMPLETE": "bash_complete", "COMP_WORDS": "auditor au"}
    done = subprocess.run(
        [auditor], capture_output=True, text=True, env={**env, "COMP_CWORD": "1"}, cwd=tmp_path
    )
    assert "plain,audit" in done.stdout.splitlines()
    env["COMP_WORDS"] = "auditor query out --fo"
    done = subprocess.run(
        [auditor], capture_output=True, text=True, env={**env, "COMP_CWORD": "3"}, cwd=tmp_path
    )
    assert "plain,--format" in done.stdout.splitlines()


@pytest.mark.parametrize("path", command_paths(), ids=named)
def test_every_ruleset_an_example_names_ships(path):
    """An example that runs under the built-in packs alone (no --rules DIR) names a
    ruleset `auditor rules --rules DIR` would list among the built-in ones."""
    from auditor.packs.loaded import builtin_packs

    shipped = set(builtin_packs())
    for example in examples(help_of(path)):
        words = shlex.split(example)
        if "--rules" in words:
            continue  # a folder's packs beside the built-in ones: its own ids
        named_rulesets = [after for word, after in pairwise(words) if word == "--ruleset"]
        assert set(named_rulesets) <= shipped, (example, sorted(shipped))


def test_the_odds_example_names_a_pack_that_offers_the_percent_it_asks():
    from auditor.packs.loaded import builtin_packs

    example = next(e for e in examples(help_of(("odds",))) if "--ruleset" in e)
    words = shlex.split(example)
    pack = builtin_packs()[words[words.index("--ruleset") + 1]]
    percent = next(w for w in words if w.startswith("commission_percent="))
    assert int(percent.partition("=")[2]) in pack.commission.percents.values
    assert "{" not in help_of(("odds",))
