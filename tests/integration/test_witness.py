"""Witnesses as a reader meets them: `auditor rules CODE --sql`, the catalog's
`witness_findings` view, `auditor explain OUTDIR FINDING_ID [--sql]`, and the witness
files' own form (header, one statement, no ruleset named)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from auditor import witness
from auditor.cli import main
from auditor.commands.explain import _show
from auditor.packs.loaded import builtin_packs
from tests.support.cli import AUDITOR
from tests.support.paths import SAMPLE


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([AUDITOR, *args], capture_output=True, text=True)


@pytest.fixture(scope="module")
def out(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("explain") / "out"
    done = CliRunner().invoke(
        main, ["audit", str(SAMPLE), "--out", str(folder), "--exit-zero", "--quiet"]
    )
    assert done.exit_code == 0, done.output
    return folder


def finding_of(out: Path, code: str) -> str:
    with duckdb.connect(str(out / "audit.duckdb"), read_only=True) as con:
        row = con.execute(
            "SELECT finding_id FROM findings WHERE rule = ? ORDER BY finding_id LIMIT 1", [code]
        ).fetchone()
    assert row, f"the sample has no {code} finding"
    return row[0]


# ---- the files ---------------------------------------------------------------------------


@pytest.mark.parametrize("code", witness.codes())
def test_each_witness_names_its_code_and_what_it_proves_and_no_ruleset(code):
    text = witness.text(code)
    assert text.startswith(f"-- {code} "), "the header's first line names the code"
    assert witness.proves(code), "a `-- proves:` line says what it proves"
    statement = witness.statement(code)
    assert ";" not in _code_only(statement), "one statement"
    assert re.match(r"(WITH|SELECT)\b", statement)
    lowered = text.lower()
    assert not [r for r in builtin_packs() if r in lowered], "a witness names no ruleset"


def _code_only(statement: str) -> str:
    """The statement without its string literals and `--` comments, where a ';' or a
    quote is text."""
    kept, in_literal, i = [], False, 0
    while i < len(statement):
        char = statement[i]
        if in_literal:
            in_literal = char != "'"
        elif char == "'":
            in_literal = True
        elif statement.startswith("--", i):
            i = statement.find("\n", i)
            if i < 0:
                break
            continue
        else:
            kept.append(char)
        i += 1
    return "".join(kept)


def test_a_code_without_a_witness_has_no_text():
    assert witness.text("ZZZ999") is None
    assert witness.statement("../../etc/passwd") is None


def test_the_view_of_no_witness_is_empty_but_typed():
    con = duckdb.connect()
    con.execute(witness.view_statement([]))
    names = [r[0] for r in con.execute("DESCRIBE witness_findings").fetchall()]
    assert names == list(witness.COLUMNS)
    assert con.execute("SELECT count(*) FROM witness_findings").fetchone()[0] == 0


# ---- auditor rules CODE --sql --------------------------------------------------------------


@pytest.mark.e2e
def test_rules_sql_prints_the_witness_file():
    code = witness.codes()[0]
    done = run("rules", code.lower(), "--sql")
    assert done.returncode == 0, done.stderr
    assert done.stdout == witness.text(code)


def test_every_check_has_a_witness():
    from auditor.pipeline import all_checks

    assert set(witness.codes()) == {check.code for check in all_checks()}


@pytest.mark.e2e
def test_rules_sql_refuses_a_check_without_a_witness_and_no_code(monkeypatch):
    # Every check has one; a check added without its witness is refused, not printed empty.
    monkeypatch.setattr(witness, "text", lambda code: None)
    done = CliRunner().invoke(main, ["rules", "DRW001", "--sql"])
    assert done.exit_code == 2
    assert "DRW001 has no witness yet" in done.stderr
    assert run("rules", "--sql").returncode == 2
    assert run("rules", "XYZ123", "--sql").returncode == 2


@pytest.mark.e2e
def test_rules_sql_imports_none_of_the_pipeline(tmp_path):
    program = (
        "import sys; from auditor.cli import main\n"
        "try:\n    main(['rules', 'DRW001', '--sql'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in ('polars', 'pandera', 'scipy') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    assert done.stdout.strip().splitlines()[-1] == "[]"


# ---- the catalog's view and auditor explain ------------------------------------------------


@pytest.mark.e2e
def test_the_catalog_describes_its_witness_view(out):
    with duckdb.connect(str(out / "audit.duckdb"), read_only=True) as con:
        comment = con.execute(
            "SELECT comment FROM duckdb_views() WHERE view_name = 'witness_findings'"
        ).fetchone()
    assert comment and "witness" in comment[0]


@pytest.mark.e2e
def test_explain_shows_the_witness_row_beside_the_finding(out):
    finding = finding_of(out, "DRW003")
    done = run("explain", str(out), finding)
    assert done.returncode == 0, done.stderr
    assert "Banker stands" in done.stdout
    assert "the SQL proves it" in done.stdout
    assert "IS NOT DISTINCT FROM" in done.stdout


@pytest.mark.e2e
def test_explain_sql_prints_a_statement_duckdb_runs_alone(out):
    finding = finding_of(out, "TOT003")
    done = run("explain", str(out), finding, "--sql")
    assert done.returncode == 0, done.stderr
    assert "the SQL proves it" not in done.stdout
    with duckdb.connect(str(out / "audit.duckdb"), read_only=True) as con:
        con.execute("SET TimeZone = 'Asia/Tokyo'")  # a reader's own zone changes nothing
        rows = con.execute(done.stdout).fetchall()
        found = con.execute(
            "SELECT round_id, expected, logged FROM findings WHERE finding_id = ?", [finding]
        ).fetchall()
    assert [(r[3], r[6], r[7]) for r in rows] == found


@pytest.mark.e2e
def test_explain_refuses_an_unknown_finding(out):
    done = run("explain", str(out), "0" * 20)
    assert done.returncode == 2
    assert "no finding" in done.stderr


def test_explain_refuses_a_finding_whose_check_has_no_witness(out, monkeypatch):
    monkeypatch.setattr(witness, "narrowed", lambda code, finding: None)
    done = CliRunner().invoke(main, ["explain", str(out), finding_of(out, "DRW003")])
    assert done.exit_code == 2
    assert "DRW003 has no witness yet" in done.stderr


@pytest.mark.e2e
def test_explain_refuses_a_folder_without_a_set(tmp_path):
    assert run("explain", str(tmp_path), "0" * 20).returncode == 2


def test_a_witness_row_that_differs_is_said_to_differ(capsys):
    finding = {c: None for c in witness.COLUMNS} | {"finding_id": "f", "rule": "DRW003"}
    finding |= {"round_id": "R1", "expected": "Banker stands", "logged": "Banker drew 6D"}
    assert _show(finding, [dict(finding)])
    assert not _show(finding, [dict(finding, logged="Banker drew 7D")])
    assert "differ" in capsys.readouterr().out
    assert not _show(finding, [])
    assert "no row" in capsys.readouterr().out


def test_a_shared_statement_is_written_whole_into_every_witness_that_names_it():
    """A statement several witnesses share lives in one file; what a regulator is shown
    never holds the line that names it, only its statement."""
    folder = Path(witness.__file__).parent / "sql"
    named = 0
    for code in witness.codes():
        own = (folder / f"{code}.sql").read_text()
        whole = witness.text(code)
        assert whole is not None and witness.INCLUDE not in whole, code
        for line in own.splitlines():
            if line.startswith(witness.INCLUDE):
                shared = (folder / line.removeprefix(witness.INCLUDE).strip()).read_text()
                body = shared.splitlines()
                while body and body[0].startswith("--"):  # its header, not its statement
                    body.pop(0)
                assert "\n".join(body).strip() in whole, (code, line)
                named += 1
    # The payout, commission, wager, shoe and procedure families share theirs.
    assert named >= 50
    with pytest.raises(ValueError, match="not a shared file"):
        witness._included(witness.INCLUDE + "../../rules/ma-baccarat.yaml\n")
