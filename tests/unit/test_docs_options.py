"""The documentation names the command line as it is: every option written after
`auditor COMMAND` in README.md or docs/ (in a code span or a code block) is an option of
that command, and every visible option of every command is named after it somewhere.

The commands and their options are read from the click group itself (`auditor.cli.main`),
so a new option fails this test until the documentation names it, and a renamed one
until the documentation stops naming the old spelling.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import click
import pytest

from auditor.cli import main
from tests.support.paths import REPO

HELP = {"-h", "--help"}
# A fenced code block, then (in what is left) a code span, which may wrap a line.
FENCE = re.compile(r"^(```|~~~)[^\n]*\n(.*?)^\1[ \t]*$", re.MULTILINE | re.DOTALL)
SPAN = re.compile(r"(?<!`)`([^`\n]+(?:\n[^`\n]+)?)`(?!`)")
OPTION = re.compile(r"^(--?[A-Za-z][\w-]*)")
# What ends a command in shell text: another command, a comment or a redirection.
ENDS = {"&&", "||", ";", "#", ">", ">>", "2>", "<"}


def doc_files() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def commands() -> dict[tuple[str, ...], click.Command]:
    """Every command by its path of names, the group itself as ()."""
    found: dict[tuple[str, ...], click.Command] = {}

    def walk(command: click.Command, path: tuple[str, ...]) -> None:
        found[path] = command
        if isinstance(command, click.Group):
            for name, sub in command.commands.items():
                walk(sub, (*path, name))

    walk(main, ())
    return found


def names_of(command: click.Command, visible_only: bool = False) -> list[list[str]]:
    """Each option's spellings (`--out`, `-o`); hidden ones left out when `visible_only`."""
    return [
        [*p.opts, *p.secondary_opts]
        for p in command.params
        if isinstance(p, click.Option) and not (visible_only and p.hidden)
    ]


def shell_text(text: str) -> list[str]:
    """The code of a Markdown page, as lines of shell: fenced blocks with their
    continuation lines joined, then code spans (a table cell's `\\|` is a `|`)."""
    lines = []
    for match in FENCE.finditer(text):
        lines += match.group(2).replace("\\\n", " ").splitlines()
    for span in SPAN.findall(FENCE.sub("", text)):
        lines.append(" ".join(span.replace("\\|", "|").split()))
    return lines


def unquoted(line: str) -> str:
    """The line without its quoted strings (SQL, notes), a quote left open to its end."""
    line = re.sub(r"\"[^\"]*\"|'[^']*'", " ", line)
    return re.split(r"[\"']", line, maxsplit=1)[0]


def mentions(line: str, known: dict[tuple[str, ...], click.Command]) -> list[tuple]:
    """(command path, option) for each option written after `auditor COMMAND` on a line."""
    tokens = unquoted(line).split()
    found = []
    for start, token in enumerate(tokens):
        if token != "auditor" and not token.endswith("/auditor"):
            continue
        path: tuple[str, ...] = ()
        rest = tokens[start + 1 :]
        while rest and (*path, rest[0]) in known:
            path, rest = (*path, rest[0]), rest[1:]
        if not path and not (rest and rest[0].startswith("-")):
            continue  # `auditor` as a word, a folder or a package, not the command line
        for i, word in enumerate(rest):
            if word in ENDS or word.startswith("#"):
                break
            # A pipe ends the command, unless it separates alternatives (`--a X | --b Y`).
            if word == "|" and not (i + 1 < len(rest) and rest[i + 1].startswith("-")):
                break
            option = OPTION.match(word.lstrip("[("))
            if option:
                found.append((path, option.group(1)))
    return found


def documented() -> dict[tuple[str, ...], dict[str, set[str]]]:
    """For each command path, each option the docs name after it, with where."""
    known = commands()
    named: dict[tuple[str, ...], dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for path in doc_files():
        where = str(path.relative_to(REPO))
        for line in shell_text(path.read_text(encoding="utf-8")):
            for command, option in mentions(line, known):
                named[command][option].add(where)
    return named


def test_the_docs_are_read():
    """The reader finds the pages and the command lines in them (a reader that finds
    nothing would pass the tests below)."""
    named = documented()
    assert len(doc_files()) > 5
    assert {"--out", "--exit-zero"} <= set(named[("audit",)])
    assert len(named) >= 10


def test_every_option_the_docs_name_is_one_the_command_has():
    known = commands()
    wrong = []
    for path, options in sorted(documented().items()):
        spellings = {name for names in names_of(known[path]) for name in names} | HELP
        for option, where in sorted(options.items()):
            if option not in spellings:
                command = " ".join(("auditor", *path))
                wrong.append(f"`{command} {option}` in {', '.join(sorted(where))}")
    assert wrong == [], "the docs name options these commands do not have:\n" + "\n".join(wrong)


def test_every_option_of_every_command_is_documented():
    named = documented()
    missing = []
    for path, command in sorted(commands().items()):
        if command.hidden:
            continue
        for names in names_of(command, visible_only=True):
            if not set(names) & set(named.get(path, {})):
                missing.append(f"auditor {' '.join(path)} {' / '.join(names)}".replace("  ", " "))
    assert missing == [], "options no page names after their command:\n" + "\n".join(missing)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            "auditor audit DATASET --out OUTDIR [--exit-zero]",
            {("audit", "--out"), ("audit", "--exit-zero")},
        ),
        (
            ".venv/bin/auditor audit sample_data --out out --exit-zero",
            {("audit", "--out"), ("audit", "--exit-zero")},
        ),
        ("auditor rules --format csv | head -n 3", {("rules", "--format")}),
        (
            "auditor report X --patron ID | --dealer ID",
            {("report", "--patron"), ("report", "--dealer")},
        ),
        ("auditor archive add A B", set()),
        ("auditor --version", {("", "--version")}),
        ('auditor query out "SELECT 1 -- --not-an-option" -o x.csv', {("query", "-o")}),
        ('auditor review A "open a quote --x', set()),
        ("the auditor/report/ package --quiet", set()),
        ("auditor audit D -o O  # --comment", {("audit", "-o")}),
    ],
)
def test_the_reader_of_command_lines(line, expected):
    assert {(" ".join(path), option) for path, option in mentions(line, commands())} == expected


def test_the_reader_finds_code_in_blocks_and_spans():
    text = (
        "Run `auditor diff A B\n--format csv` or:\n\n```sh\nauditor audit D \\\n"
        "  --quiet --out O\n```\n"
    )
    assert shell_text(text) == [
        "auditor audit D    --quiet --out O",
        "auditor diff A B --format csv",
    ]
