"""One `--format table|csv|json` on every command that prints results, found by walking
the click command tree: the same choices, default and help everywhere; csv reads back
with a header, json is one document, and both carry the figures the table shows; with
csv or json, stdout holds the data alone."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

import click
import polars as pl
import pytest
from click.testing import CliRunner

from auditor.cli import main
from auditor.commands.formats import FORMAT_HELP, TEXT_FORMATS
from tests.support.cli import cli

NIGHTS = ("2026-11-01", "2026-11-02")

# The commands whose stdout is a message, not results: each writes something elsewhere
# and says where (or, for `review --verify`, what it found in a ledger, as lines).
MESSAGES_ONLY = {
    ("simulate",): "writes a dataset and says what it wrote",
    ("report",): "writes a page and says where",
    ("archive", "add"): "adds a run and says so",
    ("archive", "init"): "makes an archive and says where its key is",
    ("archive", "seal"): "records an archive's runs and says how many",
    ("review",): "writes review records and says the ledger's head",
    ("serve",): "serves the desk and says its address",
    ("users", "add"): "adds a user and says so",
    ("users", "remove"): "removes a user and says so",
    ("users", "passwd"): "changes a password and says so",
    ("watch",): "prints each finding as a JSON line the moment it is final, nothing else",
}


def leaf_commands(group: click.Group = main, prefix: tuple[str, ...] = ()) -> list[tuple]:
    found = []
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            found += leaf_commands(command, (*prefix, name))
        else:
            found.append((*prefix, name))
    return found


def command_at(path: tuple[str, ...]) -> click.Command:
    command: click.Command = main
    for name in path:
        assert isinstance(command, click.Group)
        command = command.commands[name]
    return command


def format_of(path: tuple[str, ...]) -> click.Option | None:
    options = [p for p in command_at(path).params if isinstance(p, click.Option)]
    return next((p for p in options if "--format" in p.opts), None)


def named(path: tuple[str, ...]) -> str:
    return " ".join(path)


@pytest.mark.parametrize("path", leaf_commands(), ids=named)
def test_every_command_that_prints_results_takes_the_one_format_option(path) -> None:
    option = format_of(path)
    if path in MESSAGES_ONLY:
        assert option is None, f"{named(path)} prints results now: take it out of MESSAGES_ONLY"
        return
    assert option is not None, f"auditor {named(path)} prints results without --format"
    assert isinstance(option.type, click.Choice)
    assert tuple(option.type.choices[:3]) == TEXT_FORMATS
    assert option.name == "fmt" and option.help and option.help.startswith(FORMAT_HELP)
    assert option.default == "table" or "[default: table" in option.help


def test_messages_only_names_commands_that_exist() -> None:
    assert set(MESSAGES_ONLY) <= set(leaf_commands())


# ---- each format carries the table's figures ----------------------------------------------


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two simulated nights with faults, each audited into an OUTDIR and one archive."""
    root = tmp_path_factory.mktemp("formats")
    dealt = cli("simulate", "-o", root / "nights", "--rounds", 150, "--faults", 0.1,
                "--from", NIGHTS[0], "--to", NIGHTS[-1])  # fmt: skip
    assert dealt.exit_code == 0, dealt.output
    for night in NIGHTS:
        done = cli("audit", root / "nights" / night, "-o", root / night, "--quiet",
                   "--archive", root / "archive")  # fmt: skip
        assert done.exit_code == 1, done.output
    return {"root": root, "night": root / NIGHTS[0], "other": root / NIGHTS[1],
            "dataset": root / "nights" / NIGHTS[0], "archive": root / "archive"}  # fmt: skip


def three(*args: object) -> tuple[str, list[list[str]], object]:
    """The command's table, csv rows (header first) and json, each read back; the exit
    status and stderr's silence on stdout's behalf checked alike."""
    table, as_csv, as_json = (cli(*args, "--format", f) for f in TEXT_FORMATS)
    assert table.exit_code == as_csv.exit_code == as_json.exit_code, (table.output, as_csv.output)
    assert table.exit_code in (0, 1), table.output
    return table.stdout, list(csv.reader(io.StringIO(as_csv.stdout))), json.loads(as_json.stdout)


def table_rows(text: str) -> list[list[str]]:
    return [line.split() for line in text.splitlines() if line.strip()]


def check_audit(world: dict[str, Path]) -> None:
    out = world["root"] / "again"
    table, rows, data = three("audit", world["dataset"], "-o", out, "--quiet")
    lines = table_rows(table)
    accounting = {row[0]: [int(n.replace(",", "")) for n in row[1:]] for row in lines[2:8]}
    assert accounting == {
        c["table"]: [c["rows_in"], c["audited"], c["quarantined"]] for c in data["counts"]
    }
    assert f"{data['findings']:,} findings written to {out}:" in table
    by_rule = {r["rule"]: r for r in data["by_rule"]}
    head = next(i for i, line in enumerate(lines) if line[:2] == ["rule", "findings"])
    for rule, count, *_ in lines[head + 1 : head + 6]:
        assert by_rule[rule]["findings"] == int(count)
    money = data["money_at_stake"]
    total, over, under = (f"${Decimal(money[k]):,.2f}" for k in ("total", "overpaid", "underpaid"))
    assert f"money at stake: {total} ({over} overpaid, {under} underpaid)" in table
    assert all(isinstance(v, str) for v in money.values())  # decimal text, never a float
    assert sum(s["findings"] for s in data["by_severity"]) == data["findings"]
    assert rows[0] == ["part", "name", "figure", "value"]
    figures = {(p, n, f): v for p, n, f, v in rows[1:]}
    assert figures[("money_at_stake", "", "total")] == money["total"]
    assert figures[("findings", "", "findings")] == str(data["findings"])
    assert all(figures[("rule", r, "findings")] == str(v["findings"]) for r, v in by_rule.items())
    assert figures[("alerts", "", "alerts")] == str(data["alerts"])


def check_validate(world: dict[str, Path]) -> None:
    table, rows, data = three("validate", world["dataset"])
    shown = {row[0]: int(row[1].replace(",", "")) for row in table_rows(table)[2:]}
    assert shown == {c["table"]: c["rows_in"] for c in data["counts"]}
    assert {r[0]: int(r[1]) for r in rows[1:]} == shown


def check_diff(world: dict[str, Path]) -> None:
    table, rows, data = three("diff", world["night"], world["other"])
    title = table.splitlines()[0].strip()
    counted = {c: sum(d["change"] == c for d in data) for c in ("new", "gone", "changed")}
    assert title == ", ".join(f"{n:,} {c}" for c, n in counted.items())
    assert len(rows) - 1 == len(data)


def check_query(world: dict[str, Path]) -> None:
    sql = "SELECT rule, count(*) AS n, sum(impact) AS at_stake FROM findings GROUP BY 1 ORDER BY 1"
    table, rows, data = three("query", world["night"], sql)
    shown = [row for row in table_rows(table)[1:] if not row[0].isdigit()]
    assert [row[:2] for row in shown] == [[d["rule"], str(d["n"])] for d in data]
    assert [r[:2] for r in rows[1:]] == [[d["rule"], str(d["n"])] for d in data]
    assert all(d["at_stake"] is None or isinstance(d["at_stake"], str) for d in data)


def check_rules(world: dict[str, Path]) -> None:
    table, rows, data = three("rules")
    codes = [line.split()[0] for line in table.splitlines()[2:] if line.strip()]
    assert codes == [c["code"] for c in data] == [r[0] for r in rows[1:]]


def check_rules_lint(world: dict[str, Path]) -> None:
    folder = world["root"] / "packs"
    folder.mkdir(exist_ok=True)
    (folder / "broken.yaml").write_text("ruleset: [\n", encoding="utf-8")
    table, as_csv, as_json = (cli("rules", "lint", folder, "--format", f) for f in TEXT_FORMATS)
    assert table.exit_code == as_csv.exit_code == as_json.exit_code == 2
    problems = json.loads(as_json.stdout)
    rows = list(csv.reader(io.StringIO(as_csv.stdout)))
    assert rows[0] == ["problem"] and [r[0] for r in rows[1:]] == problems
    assert problems and all(p.split("\n")[0] in table.stdout for p in problems)


def check_archive_list(world: dict[str, Path]) -> None:
    table, rows, data = three("archive", "list", world["archive"])
    assert [row[0] for row in table_rows(table)[1:]] == [r["run_id"] for r in data]
    assert [r[0] for r in rows[1:]] == [r["run_id"] for r in data]


def check_surveil(world: dict[str, Path]) -> None:
    table, rows, data = three("surveil", world["archive"], "--from", NIGHTS[0], "--to", NIGHTS[1])
    said = re.match(r"\S+ to \S+: (\d+) runs?, ([\d,]+) tests?, ([\d,]+) alerts?", table)
    assert said, table
    assert [int(n.replace(",", "")) for n in said.groups()] == [
        data["runs"], data["tests"], len(data["alerts"])
    ]  # fmt: skip
    assert data["runs"] == len(NIGHTS) and data["from"] == NIGHTS[0]
    assert rows[0] == ["level", "key", "statistic", "p_value", "q_value", "detail"]
    assert len(rows) - 1 == len(data["alerts"])


def check_explain(world: dict[str, Path]) -> None:
    from auditor import witness

    findings = pl.read_parquet(world["night"] / "findings.parquet")
    proven = findings.filter(pl.col("rule").is_in(witness.codes()))
    assert proven.height, "the faulted night has no finding whose check has a witness"
    finding_id = proven["finding_id"][0]
    table, rows, data = three("explain", world["night"], finding_id)
    assert data["agrees"] is True and "The witness returns this finding" in table
    assert rows[0] == ["column", "finding", "witness"]
    assert {row[0]: row[1] for row in rows[1:]} == data["finding"] | {
        c: "" for c, v in data["finding"].items() if v is None
    }
    assert data["witness"] == data["finding"]
    assert data["statement"] in table


def check_verify(world: dict[str, Path]) -> None:
    table, rows, data = three("verify", world["night"])
    assert table.strip() == f"{world['night']}: intact, every file as written"
    assert data["intact"] is True and data["problems"] == []
    assert rows == [["folder", "intact", "problem"], [str(world["night"]), "true", ""]]


def check_odds(world: dict[str, Path]) -> None:
    table, rows, data = three("odds", "--decks", 8)
    everyone = [w for r in data["rulesets"] for w in r["wagers"]]
    bets = {w["bet"] for w in everyone}
    wager_lines = [
        words for words in map(str.split, table.splitlines()) if words[:1] and words[0] in bets
    ]
    # The first figure of 9 places on a wager's line is its chance to win.
    wins = [next(w for w in words if re.fullmatch(r"\d\.\d{9}", w)) for words in wager_lines]
    assert wins == [w["win"]["decimal"] for w in everyone]
    header, *body = rows
    assert [row[header.index("win")] for row in body] == wins
    assert all("/" in w["win"]["fraction"] for w in everyone)


def check_users_list(world: dict[str, Path]) -> None:
    users = world["root"] / "users.json"
    for name, role in (("jdoe", "reviewer"), ("asmith", "regulator")):
        added = CliRunner().invoke(
            main,
            ["users", "add", str(users), name, "--role", role, "--password-stdin"],
            input="a long password\n",
        )
        assert added.exit_code == 0, added.output
    table, rows, data = three("users", "list", users)
    shown = [line.split("\t") for line in table.splitlines()]
    assert shown == [[u["name"], u["role"]] for u in data] == rows[1:]
    assert rows[0] == ["name", "role"] and len(data) == 2


PARITY: dict[tuple[str, ...], Callable[[dict[str, Path]], None]] = {
    ("audit",): check_audit,
    ("validate",): check_validate,
    ("diff",): check_diff,
    ("query",): check_query,
    ("rules",): check_rules,
    ("archive", "list"): check_archive_list,
    ("surveil",): check_surveil,
    ("verify",): check_verify,
    ("explain",): check_explain,
    ("odds",): check_odds,
    ("users", "list"): check_users_list,
}


@pytest.mark.parametrize("path", [p for p in leaf_commands() if p not in MESSAGES_ONLY], ids=named)
def test_each_format_parses_and_carries_the_tables_figures(path, world) -> None:
    assert path in PARITY, f"no check that auditor {named(path)}'s formats agree"
    PARITY[path](world)


def test_rules_lint_prints_its_problems_in_each_format(world) -> None:
    check_rules_lint(world)


def test_with_json_the_messages_go_to_stderr(world) -> None:
    archive = world["root"] / "archive-json"
    done = cli("audit", world["dataset"], "-o", world["root"] / "json-run", "--quiet",
               "--archive", archive, "--format", "json")  # fmt: skip
    assert done.exit_code == 1
    assert json.loads(done.stdout)["findings"] > 0
    assert "added to" in done.stderr
    intact = cli("verify", world["night"], "--format", "json")
    assert json.loads(intact.stdout)["intact"] and "intact" in intact.stderr
