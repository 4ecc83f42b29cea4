"""The command line's conventions: `--out`/`-o` everywhere (the old spellings still work,
with a note), `--format table|csv|json` whose json parses, a file's format from its
name, output to a pipe never wrapped, the simulator's refusals and summary, the audit's
closing digest, labelled progress."""

from __future__ import annotations

import csv
import fcntl
import io
import json
import os
import pty
import re
import shutil
import struct
import subprocess
import termios
from decimal import Decimal
from pathlib import Path

import polars as pl
import pytest
from rich.console import Console

from auditor.check_docs import check_docs
from auditor.commands import progress
from auditor.commands.digest import findings_digest
from auditor.commands.progress import count_text, progress_bar
from auditor.commands.shared_options import deprecation_note
from auditor.output.files import money_total
from tests.support.cli import AUDITOR, cli
from tests.support.datasets import base_rows
from tests.support.paths import SAMPLE


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two small simulated nights with faults, each audited: root/a, root/b (datasets)
    and root/a_out, root/b_out (their output sets)."""
    root = tmp_path_factory.mktemp("runs")
    for name, seed in (("a", 1), ("b", 2)):
        dealt = cli("simulate", "-o", root / name, "--rounds", 300, "--seed", seed, "--faults", 0.1)
        assert dealt.exit_code == 0, dealt.output
        audited = cli("audit", root / name, "-o", root / f"{name}_out", "--quiet")
        assert audited.exit_code == 1, audited.output
    return root


def outside(command: list[str], tmp_path: Path, **kwargs) -> subprocess.CompletedProcess:
    """The installed command, run from a folder outside the repository."""
    return subprocess.run([AUDITOR, *command], cwd=tmp_path, **kwargs)


# ---- --out, -o and the old spellings --------------------------------------------------


def test_the_old_spellings_work_with_one_line_naming_out(runs: Path, tmp_path: Path) -> None:
    target = tmp_path / "rules.csv"
    old = cli("query", runs / "a_out", "SELECT 1 AS a", "--output", target)
    assert old.exit_code == 0, old.output
    assert target.read_text() == "a\n1\n"
    assert old.stderr == deprecation_note("--output", "FILE") + "\n"
    assert "use --out FILE (or -o FILE)" in old.stderr and old.stderr.count("\n") == 1
    changes = tmp_path / "changes.parquet"
    diffed = cli("diff", runs / "a_out", runs / "b_out", "--output", changes)
    assert diffed.exit_code == 1 and pl.read_parquet(changes).height > 0
    assert diffed.stderr.startswith("warning: --output is deprecated") and "--out" in diffed.stderr
    dealt = cli("simulate", tmp_path / "night", "--rounds", 20)
    assert dealt.exit_code == 0, dealt.output
    assert dealt.stderr == deprecation_note("OUT", "OUT") + "\n"
    assert "use --out OUT" in dealt.stderr
    assert (tmp_path / "night" / "rounds.parquet").is_file()


def test_the_new_spelling_prints_no_note_and_two_spellings_are_refused(
    runs: Path, tmp_path: Path
) -> None:
    new = cli("query", runs / "a_out", "SELECT 1 AS a", "-o", tmp_path / "a.csv")
    assert new.exit_code == 0 and new.stderr == ""
    both = cli("query", runs / "a_out", "SELECT 1", "-o", tmp_path / "b.csv", "--output", "c.csv")
    assert both.exit_code == 2 and "give --out once" in both.output
    assert not (tmp_path / "b.csv").exists()
    twice = cli("simulate", tmp_path / "x", "--out", tmp_path / "y", "--rounds", 5)
    assert twice.exit_code == 2 and not (tmp_path / "x").exists()
    neither = cli("simulate", "--rounds", 5)
    assert neither.exit_code == 2 and "--out" in neither.output


# ---- --format json parses, csv reads back ---------------------------------------------


def test_rules_json_and_csv(tmp_path: Path) -> None:
    checks = check_docs()
    listed = json.loads(cli("rules", "--format", "json").stdout)
    assert [c["code"] for c in listed] == [c.code for c in checks]
    rows = list(csv.DictReader(io.StringIO(cli("rules", "--format", "csv").stdout)))
    assert [r["citation"] for r in rows] == [c.citation for c in checks]
    one = json.loads(cli("rules", "drw003", "--format", "json").stdout)
    assert one["code"] == "DRW003" and one["why"]
    sections = json.loads(cli("rules", "DRW003", "--by-section", "--format", "json").stdout)
    assert sections and all("DRW003" in s["codes"] for s in sections)
    every = json.loads(cli("rules", "--by-section", "--format", "json").stdout)
    assert len(every) > len(sections)
    schema = cli("rules", "--schema", "--format", "json")
    assert json.loads(schema.stdout)["type"] == "object"
    refused = cli("rules", "--schema", "--format", "csv")
    assert refused.exit_code == 2 and "JSON Schema" in refused.output


def test_rules_by_section_shows_that_codes_sections_only() -> None:
    result = cli("rules", "DRW003", "--by-section")
    assert result.exit_code == 0, result.output
    listed = [line.split() for line in result.stdout.splitlines() if line.startswith("  ")]
    assert listed and all("DRW003" in words for words in listed)
    everything = cli("rules", "--by-section").stdout
    assert "not from logs" in everything and "not from logs" not in result.stdout
    unknown = cli("rules", "XYZ999", "--by-section")
    assert unknown.exit_code == 2 and "XYZ999" in unknown.output


def test_validate_json_and_csv(runs: Path, write_dataset) -> None:
    clean = cli("validate", runs / "a", "--format", "json")
    assert clean.exit_code == 0, clean.output
    data = json.loads(clean.stdout)
    assert data["quarantine"] == [] and {c["table"] for c in data["counts"]} >= {"rounds"}
    rows = list(csv.DictReader(io.StringIO(cli("validate", runs / "a", "--format", "csv").stdout)))
    assert {r["table"]: int(r["rows_in"]) for r in rows}["rounds"] == 300
    broken = base_rows()
    broken["wagers"][0]["bet"] = "not-a-bet"
    quarantined = cli("validate", write_dataset(broken), "--format", "json")
    assert quarantined.exit_code == 1  # the exit status does not depend on the format
    entries = json.loads(quarantined.stdout)["quarantine"]
    assert [e["row_key"] for e in entries] == ["W1"]


def test_diff_json_keeps_money_exact(runs: Path, tmp_path: Path) -> None:
    result = cli("diff", runs / "a_out", runs / "b_out", "--format", "json")
    assert result.exit_code == 1
    changes = json.loads(result.stdout)
    assert {c["change"] for c in changes} == {"new", "gone"}
    impacts = [c["impact"] for c in changes if c["impact"] is not None]
    assert impacts and all(isinstance(i, str) for i in impacts)  # never a float
    assert all(Decimal(i) == Decimal(i).quantize(Decimal("0.01")) for i in impacts)
    same = cli("diff", runs / "a_out", runs / "a_out", "--format", "json")
    assert same.exit_code == 0 and json.loads(same.stdout) == []
    as_csv = cli("diff", runs / "a_out", runs / "b_out", "--format", "csv")
    assert len(list(csv.DictReader(io.StringIO(as_csv.stdout)))) == len(changes)


def test_diff_writes_the_format_its_file_is_named_for(runs: Path, tmp_path: Path) -> None:
    for name, read in (
        ("d.json", json.loads),
        ("d.csv", lambda t: list(csv.DictReader(io.StringIO(t)))),
    ):
        cli("diff", runs / "a_out", runs / "b_out", "-o", tmp_path / name)
        assert len(read((tmp_path / name).read_text())) > 0
    cli("diff", runs / "a_out", runs / "b_out", "-o", tmp_path / "d.parquet")
    assert pl.read_parquet(tmp_path / "d.parquet").height > 0
    missing = cli("diff", runs / "a_out", runs / "b_out", "-o", tmp_path / "no" / "d.csv")
    assert missing.exit_code == 2 and "no folder" in missing.output


def test_query_json_parses(runs: Path) -> None:
    result = cli(
        "query",
        runs / "a_out",
        "SELECT rule, count(*) AS n FROM findings GROUP BY 1",
        "--format",
        "json",
    )
    assert result.exit_code == 0, result.output
    assert all({"rule", "n"} == set(row) for row in json.loads(result.stdout))


# ---- query --out: the format from the name --------------------------------------------


def test_query_out_takes_its_format_from_the_name(runs: Path, tmp_path: Path) -> None:
    sql = "SELECT finding_id, impact FROM findings ORDER BY finding_id LIMIT 3"
    for name in ("f.csv", "f.json", "f.parquet"):
        result = cli("query", runs / "a_out", sql, "--out", tmp_path / name)
        assert result.exit_code == 0, result.output
    assert (tmp_path / "f.csv").read_text().startswith("finding_id,impact\n")
    assert len(json.loads((tmp_path / "f.json").read_text())) == 3
    assert pl.read_parquet(tmp_path / "f.parquet").height == 3
    agreed = cli("query", runs / "a_out", sql, "--format", "csv", "-o", tmp_path / "g.CSV")
    assert agreed.exit_code == 0


def test_query_out_refuses_a_conflicting_or_silent_name(runs: Path, tmp_path: Path) -> None:
    conflict = cli(
        "query", runs / "a_out", "SELECT 1", "--format", "json", "-o", tmp_path / "f.csv"
    )
    assert conflict.exit_code == 2 and "disagree" in conflict.output
    silent = cli("query", runs / "a_out", "SELECT 1", "-o", tmp_path / "f.txt")
    assert silent.exit_code == 2 and "--format" in silent.output
    table = cli("query", runs / "a_out", "SELECT 1", "--format", "table", "-o", tmp_path / "f.csv")
    assert table.exit_code == 2
    assert sorted(tmp_path.iterdir()) == []
    named = cli(
        "query", runs / "a_out", "SELECT 1 AS a", "--format", "csv", "-o", tmp_path / "f.txt"
    )
    assert named.exit_code == 0 and (tmp_path / "f.txt").read_text() == "a\n1\n"


# ---- terminals and pipes --------------------------------------------------------------


def on_a_terminal(command: list[str], tmp_path: Path, columns: int = 80) -> tuple[int, str, str]:
    """Run the installed command with stdout on a pseudo-terminal `columns` wide."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    env = {**os.environ, "COLUMNS": str(columns), "TERM": "xterm"}
    process = subprocess.Popen(
        [AUDITOR, *command], stdout=follower, stderr=subprocess.PIPE, cwd=tmp_path, env=env
    )
    os.close(follower)
    shown = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closed with the process
            break
        if not chunk:
            break
        shown += chunk
    os.close(leader)
    stderr = process.stderr.read().decode() if process.stderr else ""
    return process.wait(), shown.decode(errors="replace"), stderr


@pytest.mark.e2e
def test_parquet_to_a_terminal_is_refused_and_to_a_pipe_written(runs: Path, tmp_path: Path) -> None:
    command = ["query", str(runs / "a_out"), "SELECT 42 AS a", "--format", "parquet"]
    status, shown, stderr = on_a_terminal(command, tmp_path)
    assert status == 2 and shown == ""
    assert stderr.startswith("error: --format parquet is binary") and "--out" in stderr
    piped = outside(command, tmp_path, capture_output=True)
    assert piped.returncode == 0
    assert pl.read_parquet(io.BytesIO(piped.stdout))["a"].to_list() == [42]


@pytest.mark.e2e
def test_a_pipe_gets_whole_lines_and_a_terminal_its_width(tmp_path: Path) -> None:
    piped = outside(["rules"], tmp_path, capture_output=True, text=True)
    assert piped.returncode == 0
    lines = piped.stdout.splitlines()
    for check in check_docs():
        assert any(check.citation in line and check.name in line for line in lines), check.code
    assert max(map(len, lines)) > 80
    status, shown, _ = on_a_terminal(["rules"], tmp_path, columns=80)
    assert status == 0
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", shown)  # colours are not columns
    assert max(len(line) for line in plain.splitlines()) <= 80


@pytest.mark.e2e
def test_a_reader_that_stops_ends_the_command_quietly(tmp_path: Path) -> None:
    for command in (["rules", "--format", "csv"], ["rules"]):
        reader, writer = os.pipe()
        os.close(reader)  # the reader is gone before a byte is written
        done = outside(command, tmp_path, stdout=writer, stderr=subprocess.PIPE, text=True)
        os.close(writer)
        assert done.returncode == 141 and done.stderr == "", (command, done.stderr)
    whole = outside(["rules", "--format", "csv"], tmp_path, capture_output=True, text=True)
    assert whole.returncode == 0 and whole.stderr == ""


# ---- simulate: refusals, summary ------------------------------------------------------


def test_simulate_refuses_a_folder_of_other_files_naming_it(tmp_path: Path) -> None:
    copy = tmp_path / "copy of the sample"
    shutil.copytree(SAMPLE, copy)
    before = pl.read_parquet(copy / "rounds.parquet").height
    result = cli("simulate", "-o", copy, "--rounds", 10)
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: {copy}: ") and "_simulation.json" in result.stderr
    assert pl.read_parquet(copy / "rounds.parquet").height == before


def test_simulate_replaces_its_own_and_says_what_it_wrote(tmp_path: Path) -> None:
    out = tmp_path / "night"
    for rounds in (40, 25):
        result = cli("simulate", "--out", out, "--rounds", rounds, "--faults", 0.1)
        assert result.exit_code == 0, result.output
        assert pl.read_parquet(out / "rounds.parquet").height == rounds
    summary = result.stdout
    assert summary.startswith("25 rounds in ") and f"written to {out}" in summary
    assert "Summary(" not in summary and "PosixPath" not in summary and "{" not in summary


# ---- audit: the digest it ends with ---------------------------------------------------


def test_audit_ends_with_findings_by_rule_and_the_report(runs: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = cli("audit", runs / "a", "-o", out, "--quiet")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    head = next(i for i, line in enumerate(lines) if "findings written to" in line)
    assert lines[head + 1].split() == ["rule", "findings", "money", "at", "stake"]
    findings = pl.read_parquet(out / "findings.parquet")
    top = findings.group_by("rule").len().sort(["len", "rule"], descending=[True, False])
    first = lines[head + 2].split()
    assert first[:2] == [top["rule"][0], f"{top['len'][0]:,}"]
    assert lines[-1] == f"report: {out}/report.html" and (out / "report.html").is_file()


def test_the_digest_is_short_and_says_how_many_more() -> None:
    rules = [f"R{k:03d}" for k in range(8)]
    findings = pl.DataFrame(
        {
            "rule": [r for k, r in enumerate(rules) for _ in range(10 - k)],
            "impact": [
                Decimal("-2.50") if r == "R000" else None
                for k, r in enumerate(rules)
                for _ in range(10 - k)
            ],
        },
        schema={"rule": pl.String, "impact": pl.Decimal(18, 2)},
    )
    lines = findings_digest(findings, "out")
    assert lines[0] == f"{findings.height:,} findings written to out:"
    assert lines[2].split() == ["R000", "10", "$25.00"]
    assert lines[3].split() == ["R001", "9", "—"]
    assert lines[2 + 5] == "  and 3 more rules (out/summary.txt)"
    assert lines[-2:] == [
        "  money at stake: $25.00 ($0.00 overpaid, $25.00 underpaid)",
        "  most money at stake: R000 $25.00",
    ]
    none = findings_digest(findings.clear(), "out")
    assert none == ["0 findings written to out"]


def test_money_at_stake_is_summed_in_decimal_and_a_float_column_is_refused() -> None:
    amounts = pl.Series("impact", [Decimal("0.10"), Decimal("0.20"), None], pl.Decimal(18, 2))
    assert money_total(amounts) == Decimal("0.30") and money_total(amounts.clear()) == 0
    with pytest.raises(TypeError, match="float"):
        money_total(pl.Series("impact", [0.1, 0.2]))


# ---- progress: labelled, with separators ----------------------------------------------


def test_the_progress_counter_names_its_unit_with_separators(monkeypatch) -> None:
    assert count_text(12_500, 2_000_000, "rounds") == "12,500/2,000,000 rounds"
    assert count_text(1_234, None, "rows") == "1,234 rows"
    screen = io.StringIO()
    monkeypatch.setattr(progress, "stderr", Console(file=screen, force_terminal=True, width=160))
    with progress_bar("dealing", 2_000_000, unit="rounds") as advance:
        advance(12_500)
    assert "12,500/2,000,000 rounds" in screen.getvalue()
    quiet = io.StringIO()
    monkeypatch.setattr(progress, "stderr", Console(file=quiet, force_terminal=True, width=160))
    with progress_bar("dealing", 100, quiet=True, unit="rounds") as advance:
        advance(50)
    assert quiet.getvalue() == ""


def test_the_digest_ends_with_the_money_overpaid_and_underpaid_and_the_costliest_rules() -> None:
    findings = pl.DataFrame(
        {
            "rule": ["PAY001", "PAY001", "COM001", "TOT001", "PAY002"],
            "impact": [
                Decimal("100.00"),
                Decimal("-40.00"),
                Decimal("0.25"),
                None,
                Decimal("-5.00"),
            ],
        },
        schema={"rule": pl.String, "impact": pl.Decimal(18, 2)},
    )
    lines = findings_digest(findings, "out")
    assert lines[-2:] == [
        "  money at stake: $145.25 ($100.25 overpaid, $45.00 underpaid)",
        "  most money at stake: PAY001 $140.00, PAY002 $5.00, COM001 $0.25",
    ]
    # No money named, no money lines.
    quiet = findings_digest(findings.filter(pl.col("impact").is_null()), "out")
    assert not any("money at stake:" in line for line in quiet)


def test_tables_piped_are_plain_text_and_query_numbers_right_aligned(runs: Path) -> None:
    boxes = set("─━│┃┏┓┗┛┡┩╇╈┼")
    for args in (("rules",), ("query", runs / "a_out", "SELECT 1 AS n, 'x' AS s")):
        result = cli(*args)
        assert result.exit_code == 0, result.output
        assert not boxes & set(result.output), args
    shown = cli("query", runs / "a_out", "SELECT 7 AS n, 'x' AS s UNION ALL SELECT 1234, 'yz'")
    header, *rows = shown.output.splitlines()[:3]
    # The number column ends where its header ends; the text column starts where its does.
    assert [r.index("7") + 1 for r in rows[:1]] == [header.index("n") + 1]
    assert rows[1].index("yz") == header.index("s")
