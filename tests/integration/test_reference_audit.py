"""The engine against a second, independent replay: `tests/reference/`, a plain row-by-row
auditor written from the regulation texts with its own tables (it imports nothing from
`auditor`). On DRW, TOT001-TOT004, PAY, COM001-COM003 and WAG the two must agree finding
for finding: the same (rule, round_id, wager_id, impact), with no list of exceptions.
Where the texts are ambiguous both apply INDEX.md's reading (Ambiguities 27-30 among
them); the hand-built cases pin those readings down on real cards.
"""

from __future__ import annotations

import ast
import time
from collections import Counter
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import polars as pl
import pytest
import yaml
from hypothesis import given

from auditor.casework.build import case_rows
from auditor.casework.files import case_file_paths
from auditor.casework.runner import load_cases
from auditor.contract import TABLES
from auditor.errors import AuditorError
from auditor.input.validate import ValidatedDataset
from auditor.packs.loaded import builtin_packs
from auditor.pipeline import find, run_validation
from auditor.simulator.simulate import simulate
from tests.reference.audit import COVERED, reference_findings
from tests.reference.mutate import mutate
from tests.reference.tables import MARYLAND_10E3, RULESETS, TABLE_1, commission_cents
from tests.support.datasets import contract_frame, write_rows
from tests.support.hostile import damaged_rows
from tests.support.paths import CASES, TESTS

# At volume: the second auditor over 200,000 simulated rounds and more
# (`pytest -m "not e2e"` leaves it out).
pytestmark = pytest.mark.e2e

Key = tuple[str, str, str | None, Decimal | None]
REFERENCE = TESTS / "reference"
# Two seeds, each two simulated nights of 100,000 rounds together at tables of all four
# rulesets: one at the usual fault rate, one dense with faults so that their combinations
# meet.
SIMULATED = {
    "first": ((2026, 70_000, 0.05), (7, 30_000, 0.5)),
    "second": ((2027, 70_000, 0.05), (8, 30_000, 0.5)),
}


def engine_keys(root: Path) -> set[Key]:
    validated = run_validation(root)
    assert validated.quarantine.height == 0, validated.quarantine.head().to_dicts()
    return found_keys(validated)


def found_keys(validated: ValidatedDataset) -> set[Key]:
    found = find(validated).filter(pl.col("rule").is_in(COVERED))
    keys = [
        (row["rule"], row["round_id"], row["wager_id"], row["impact"])
        for row in found.iter_rows(named=True)
    ]
    return distinct(keys)


def reference_keys(root: Path) -> set[Key]:
    return distinct([finding.key for finding in reference_findings(root)])


def distinct(keys: list[Key]) -> set[Key]:
    """The keys as a set, once each: a finding reported twice would count its impact twice."""
    repeated = [key for key, n in Counter(keys).items() if n > 1]
    assert not repeated, repeated[:5]
    return set(keys)


def differences(engine: set[Key], reference: set[Key]) -> list[tuple[str, Key]]:
    """Every finding one side reports and the other does not."""
    return sorted(
        (("engine only" if key in engine else "reference only", key) for key in engine ^ reference),
        key=str,
    )


# ---- the reference stands apart -------------------------------------------------------


def test_the_reference_imports_nothing_from_the_engine() -> None:
    for path in sorted(REFERENCE.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                modules = [node.module or ""]
            else:
                continue
            for module in modules:
                assert module.split(".")[0] != "auditor", f"{path.name} imports {module}"


@pytest.mark.parametrize("third", range(10))
@pytest.mark.parametrize("banker", range(3, 7))
def test_the_maryland_long_hand_is_table_1(banker: int, third: int) -> None:
    """The reference copies md .10E(3) keyed by the third card and ma §11(c)(2)(iii)
    Table 1 keyed by the Banker's total; INDEX.md says they agree in all 40 cases."""
    assert (banker in MARYLAND_10E3[third]) == (third in TABLE_1[banker])


@pytest.mark.parametrize(
    ("won", "percent", "rounding", "owed"),
    [
        (100, 5, True, 25),  # the contract: "$1 pays 25 cents"
        (3750, 5, True, 200),  # 5% of $37.50 is $1.875: up to $2.00
        (10000, 5, True, 500),  # an exact multiple stays
        (1010, 5, False, 51),  # $0.505 half up to the cent
        (10100, 4, True, 420),  # 4% of $101.00 is $4.04: up to 20 cents, $4.20
        (30000, 4, True, 1200),
    ],
)
def test_reference_commission(won: int, percent: int, rounding: bool, owed: int) -> None:
    assert commission_cents(won, percent, rounding) == owed


# ---- data-driven differentials --------------------------------------------------------


@pytest.mark.parametrize("seeds", list(SIMULATED))
def test_engine_and_reference_agree_on_simulated_faults(tmp_path_factory, seeds: str) -> None:
    rounds = 0
    rulesets: set[str] = set()
    families: set[str] = set()
    for seed, count, fault_rate in SIMULATED[seeds]:
        root = tmp_path_factory.mktemp(f"simulated{seed}")
        started = time.perf_counter()
        simulate(root, count, seed=seed, fault_rate=fault_rate)
        simulated = time.perf_counter() - started
        engine = engine_keys(root)
        audited = time.perf_counter() - started - simulated
        reference = reference_keys(root)
        referenced = time.perf_counter() - started - simulated - audited
        assert not differences(engine, reference)
        print(
            f"seed {seed}: {count} rounds, {len(engine)} engine findings; simulate "
            f"{simulated:.1f} s, engine {audited:.1f} s, reference {referenced:.1f} s"
        )
        rounds += pl.scan_parquet(root / "rounds.parquet").select(pl.len()).collect().item()
        rulesets |= set(pl.read_parquet(root / "tables.parquet")["ruleset"])
        families |= {key[0][:3] for key in engine}
    assert rounds >= 100_000
    assert rulesets == set(RULESETS)
    assert families == {"DRW", "TOT", "PAY", "COM", "WAG"}


def test_engine_and_reference_agree_on_a_mutated_dataset(tmp_path: Path) -> None:
    """Mutations beyond the simulator's faults reach every covered check."""
    simulate(tmp_path, 30_000, seed=41, fault_rate=0.1)
    mutate(tmp_path, seed=41)
    engine, reference = engine_keys(tmp_path), reference_keys(tmp_path)
    assert not differences(engine, reference)
    assert {key[0] for key in engine} == set(COVERED)


ID_COLUMNS = ("table_id", "shoe_id", "round_id", "wager_id", "collection_id")


def test_engine_and_reference_agree_on_every_rule_case(tmp_path: Path) -> None:
    """Every case of `tests/cases/`, each at a table of its own in one dataset."""
    merged: dict[str, list[dict]] = {}
    cases = load_cases(case_file_paths(CASES), builtin_packs())
    for index, case in enumerate(cases):
        for table, rows in case_rows(case.spec).items():
            for row in rows:
                for column in ID_COLUMNS:
                    if row.get(column) is not None:
                        row[column] = f"C{index:03}-{row[column]}"
                merged.setdefault(table, []).append(row)
    for table, rows in merged.items():
        contract_frame(table, rows).write_parquet(tmp_path / f"{table}.parquet")
    engine, reference = engine_keys(tmp_path), reference_keys(tmp_path)
    assert not differences(engine, reference)
    assert len(engine) > 100


@given(rows=damaged_rows())
def test_engine_and_reference_agree_on_hostile_input(tmp_path_factory, rows) -> None:
    """The datasets of `test_hostile_input`: what validation lets through to the audit,
    the reference audits too, and the two agree on it. A dataset refused whole (exit 2)
    has nothing audited to compare."""
    root = tmp_path_factory.mktemp("hostile")
    write_rows(root / "data", rows)
    try:
        validated = run_validation(root / "data")
        engine = found_keys(validated)
    except AuditorError as error:
        assert error.exit_code == 2
        return
    write_audited(validated, root / "audited")
    assert not differences(engine, reference_keys(root / "audited"))


def write_audited(validated: ValidatedDataset, root: Path) -> None:
    """The rows validation passed to the audit, in contract columns, as a dataset."""
    root.mkdir()
    for table, columns in TABLES.items():
        audited = validated.audited[table].collect()
        audited.select(c for c in columns if c in audited.columns).write_parquet(
            root / f"{table}.parquet"
        )


# ---- hand-built cases with known answers ----------------------------------------------

HAND_BUILT = yaml.safe_load((REFERENCE / "hand_built.yaml").read_text())


def write_case(case: dict, write_dataset) -> Path:
    rows = case_rows(case)
    for wager in rows["wagers"]:
        if wager["placed_at"] == "late":
            wager["placed_at"] = rows["rounds"][0]["no_more_bets_at"] + timedelta(seconds=2)
    return write_dataset(rows)


def expected_keys(case: dict) -> set[Key]:
    return {
        (rule, round_id, wager_id, None if impact is None else Decimal(impact))
        for rule, round_id, wager_id, impact in case["expected"]
    }


@pytest.mark.parametrize("name", list(HAND_BUILT["cases"]))
def test_hand_built_case(name: str, write_dataset) -> None:
    case = HAND_BUILT["cases"][name]
    root = write_case(case, write_dataset)
    assert reference_keys(root) == expected_keys(case)
    assert engine_keys(root) == expected_keys(case)
