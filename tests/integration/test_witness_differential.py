"""The differential test: every check's witness (`auditor/witness/sql/CODE.sql`) finds
exactly the entities the check finds, with the same expected, logged and impact to the
cent, on the sample night, on simulated faulted nights, on hostile datasets and on every
YAML case. Where they differ, one of two implementations of the rule is wrong.

`AUDITOR_WITNESS_ROUNDS=N` deals four faulted nights of N rounds each instead of the two
small ones (at least 75000 for the 300,000 rounds the proof is held to before a release).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings

from auditor import witness
from auditor.casework.batch import write_batch
from auditor.casework.build import case_rows
from auditor.casework.runner import pack_of
from auditor.errors import AuditorError
from auditor.pipeline import all_checks
from tests.support.cases import ALL_CASES, PACKS
from tests.support.cli import AUDITOR
from tests.support.datasets import base_rows, write_rows
from tests.support.hostile import damaged_rows
from tests.support.paths import SAMPLE
from tests.support.witness import (
    described,
    differences,
    differences_of_every_code,
    memory_catalog,
)

# At volume: every witness against its check over 300,000 simulated rounds and the hostile
# datasets (`pytest -m "not e2e"` leaves it out).
pytestmark = pytest.mark.e2e

CODES = sorted(check.code for check in all_checks())
# Every check has its witness (tests/integration/test_witness.py::test_every_check_has_a_witness).
WITNESSED = CODES
BIG = int(os.environ.get("AUDITOR_WITNESS_ROUNDS", "0"))
FAULTS = ["--faults", "0.05", "--shoe-faults", "0.3"]
NIGHTS = [(seed, BIG) for seed in (11, 12, 13, 14)] if BIG else [(1, 20_000), (2, 20_000)]


def _audited(out: Path, dataset: Path) -> duckdb.DuckDBPyConnection:
    subprocess.run(
        [AUDITOR, "audit", str(dataset), "--out", str(out), "--exit-zero", "--quiet"],
        check=True,
        capture_output=True,
    )
    return duckdb.connect(str(out / "audit.duckdb"), read_only=True)


@pytest.fixture(scope="module")
def nights(tmp_path_factory) -> list[tuple[str, duckdb.DuckDBPyConnection]]:
    root = tmp_path_factory.mktemp("witness")
    catalogs = [("sample_data", _audited(root / "sample", SAMPLE))]
    for number, rounds in NIGHTS:
        seed = ["--seed", str(number)]
        dealt = root / f"night{number}"
        subprocess.run(
            [AUDITOR, "simulate", "--out", str(dealt), "--rounds", str(rounds), *FAULTS, *seed],
            check=True,
            capture_output=True,
        )
        audited = _audited(root / f"out{number}", dealt)
        catalogs.append((f"night {number} ({rounds} rounds)", audited))
    return catalogs


@pytest.mark.parametrize("code", WITNESSED)
def test_the_witness_finds_what_the_check_finds_on_whole_nights(code, nights):
    problems = []
    for name, con in nights:
        missing, extra = differences(con, code)
        if missing or extra:
            problems.append(described(code, name, missing, extra))
    assert not problems, "\n".join(problems)


def test_the_catalogs_witness_findings_view_is_every_witness(nights):
    """The catalog's view, which writes the statements a group of witnesses shares once,
    returns every finding of every night and nothing else."""
    problems = [
        described(code, name, missing, extra)
        for name, con in nights
        for code, (missing, extra) in differences_of_every_code(con).items()
    ]
    assert not problems, "\n".join(problems)
    _, con = nights[0]
    assert {r[0] for r in con.execute("SELECT DISTINCT rule FROM witness_findings").fetchall()}


def test_a_view_without_one_witness_is_caught(nights):
    """The comparison through the view can fail: left without one code's witness (in the
    middle of its group of shared statements), the view misses that code's findings."""
    _, con = nights[1]
    counted = con.execute("SELECT rule, count(*) FROM findings GROUP BY rule").fetchall()
    left_out = next(code for code, _ in sorted(counted) if code.startswith("PAY00"))
    statement = witness.view_statement(c for c in WITNESSED if c != left_out)
    prefix = f"CREATE VIEW {witness.VIEW} AS"
    assert statement.startswith(prefix)
    con.execute("CREATE TEMP VIEW without_one AS" + statement.removeprefix(prefix))
    differing = differences_of_every_code(con, "without_one")
    assert set(differing) == {left_out}
    assert differing[left_out][0] and not differing[left_out][1]


def test_a_witness_that_misses_a_finding_is_caught(nights):
    """The differential test itself: a witness narrowed to nothing differs."""
    _, con = nights[0]
    code = next(
        c
        for c in WITNESSED
        if con.execute("SELECT count(*) FROM findings WHERE rule = ?", [c]).fetchone()[0]
    )
    statement = witness.statement(code)
    missing = con.execute(
        f"SELECT round_id FROM findings WHERE rule = '{code}' "
        f"EXCEPT SELECT round_id FROM ({statement}) WHERE false"
    ).fetchall()
    assert missing


@pytest.fixture(scope="module")
def cases(tmp_path_factory) -> duckdb.DuckDBPyConnection:
    """Every YAML case as one dataset, each under ids of its own (`auditor.casework`), as
    the case runner audits them: one catalog for the 414 cases."""
    root = tmp_path_factory.mktemp("witness_cases") / "dataset"
    write_batch([case_rows(case.spec, pack_of(case, PACKS)) for case in ALL_CASES], root)
    return memory_catalog(root)


@pytest.mark.parametrize("code", WITNESSED)
def test_the_witness_finds_what_the_check_finds_on_the_yaml_cases(code, cases):
    missing, extra = differences(cases, code)
    assert not (missing or extra), described(code, "the YAML cases", missing, extra)


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(rows=damaged_rows())
def test_the_witnesses_find_what_the_checks_find_on_hostile_datasets(tmp_path_factory, rows):
    root = tmp_path_factory.mktemp("hostile_witness")
    write_rows(root / "data", rows)
    try:
        con = memory_catalog(root / "data")
    except AuditorError as refused:
        # A dataset refused whole has no findings to prove.
        assert refused.exit_code == 2
        return
    # Every code at once through the view (the rule is a column compared): a code's
    # statement bound on its own, 60 times an example, was most of this test's time.
    problems = [
        described(code, "a hostile dataset", missing, extra)
        for code, (missing, extra) in differences_of_every_code(con).items()
    ]
    assert not problems, "\n".join(problems)


def test_a_row_quarantined_under_an_id_past_the_bound_is_left_out_by_the_witnesses(tmp_path):
    """The quarantine names an id past the contract's 1,000 characters by its start and
    length; a witness leaves the row out by that name (`quarantine_id`), or it would
    find the faults of a shoe the audit did not audit (a hostile dataset showed it)."""
    rows = base_rows()
    past_bound = "S" * 5_000
    rows["shoes"][0] |= {"shoe_id": past_bound, "decks": -1}
    for one_round in rows["rounds"]:
        one_round["shoe_id"] = past_bound
    write_rows(tmp_path / "data", rows)
    con = memory_catalog(tmp_path / "data")
    named = con.execute(
        "SELECT DISTINCT row_key FROM quarantine WHERE \"table\" = 'shoes'"
    ).fetchall()
    assert named == [("S" * 64 + "… (5000 characters)",)]
    assert con.execute("SELECT quarantine_id(?)", [past_bound]).fetchall() == named
    assert con.execute("SELECT quarantine_id('S1')").fetchone() == ("S1",)
    # Read by the id as logged, the quarantined shoe's decks would be SHO001's finding.
    as_logged = witness.statement("SHO001").replace("quarantine_id(s.shoe_id)", "s.shoe_id")
    assert con.execute(f"SELECT count(*) FROM ({as_logged})").fetchone() == (1,)
    assert differences_of_every_code(con) == {}
