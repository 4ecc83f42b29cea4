"""The engine against a second, independent replay: `tests/reference/`, a plain row-by-row
auditor written from the regulation texts with its own tables (it imports nothing from
`auditor`). On DRW, TOT001-TOT004, PAY, COM001-COM003 and WAG the two must agree finding
for finding: the same (rule, round_id, wager_id, impact).

Where they disagree and the reference's reading of the regulation is kept, the case is a
known difference (`reference/known.py`, each with its reason): the data-driven tests
allow exactly those, recognised from the rows, and the hand-built case of each is an
`xfail(strict=True)` on the engine's side, so that a fixed engine shows up as XPASS.
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

from auditor.audit import find, run_validation
from auditor.simulator.simulate import simulate

from .conftest import contract_frame
from .reference import known
from .reference.audit import COVERED, reference_findings
from .reference.dataset import load
from .reference.mutate import mutate
from .reference.tables import MARYLAND_10E3, RULESETS, TABLE_1, commission_cents
from .test_rule_cases import case_rows, load_cases

Key = tuple[str, str, str | None, Decimal | None]
REFERENCE = Path(__file__).parent / "reference"
# Two simulated nights, 100,000 rounds at tables of all four rulesets: one at the usual
# fault rate, one dense with faults so that their combinations meet.
SIMULATED = ((2026, 70_000, 0.05), (7, 30_000, 0.5))


def engine_keys(root: Path) -> set[Key]:
    validated = run_validation(root)
    assert validated.quarantine.height == 0, validated.quarantine.head().to_dicts()
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


def unexplained(engine: set[Key], reference: set[Key], root: Path) -> list[tuple[str, Key]]:
    """The differences that no known difference explains."""
    data = load(root)
    return sorted(
        (
            ("engine only" if key in engine else "reference only", key)
            for key in engine ^ reference
            if known.known_difference(key, data) is None
        ),
        key=str,
    )


def known_counts(engine: set[Key], reference: set[Key], root: Path) -> Counter[str]:
    data = load(root)
    return Counter(known.known_difference(key, data) or "" for key in engine ^ reference)


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


@pytest.mark.slow
def test_engine_and_reference_agree_on_simulated_faults(tmp_path_factory) -> None:
    rounds = 0
    rulesets: set[str] = set()
    families: set[str] = set()
    for seed, count, fault_rate in SIMULATED:
        root = tmp_path_factory.mktemp(f"simulated{seed}")
        simulate(root, count, seed=seed, fault_rate=fault_rate)
        engine = engine_keys(root)
        started = time.perf_counter()
        reference = reference_keys(root)
        elapsed = time.perf_counter() - started
        assert not unexplained(engine, reference, root)
        allowed = dict(known_counts(engine, reference, root))
        print(
            f"seed {seed}: {count} rounds, {len(engine)} engine findings, reference "
            f"{elapsed:.1f} s; known differences: {allowed or 'none'}"
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
    assert not unexplained(engine, reference, tmp_path)
    assert {key[0] for key in engine} == set(COVERED)


ID_COLUMNS = ("table_id", "shoe_id", "round_id", "wager_id", "collection_id")


def test_engine_and_reference_agree_on_every_rule_case(tmp_path: Path) -> None:
    """Every case of `tests/cases/`, each at a table of its own in one dataset."""
    merged: dict[str, list[dict]] = {}
    for index, (_, _, case) in enumerate(load_cases()):
        for table, rows in case_rows(case).items():
            for row in rows:
                for column in ID_COLUMNS:
                    if row.get(column) is not None:
                        row[column] = f"C{index:03}-{row[column]}"
                merged.setdefault(table, []).append(row)
    for table, rows in merged.items():
        contract_frame(table, rows).write_parquet(tmp_path / f"{table}.parquet")
    engine, reference = engine_keys(tmp_path), reference_keys(tmp_path)
    assert not unexplained(engine, reference, tmp_path)
    assert len(engine) > 100


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


def reason(case: dict) -> str:
    return getattr(known, case["reason"])


@pytest.mark.parametrize("name", list(HAND_BUILT["cases"]))
def test_hand_built_case(name: str, write_dataset) -> None:
    case = HAND_BUILT["cases"][name]
    root = write_case(case, write_dataset)
    assert reference_keys(root) == expected_keys(case)
    assert engine_keys(root) == expected_keys(case)


@pytest.mark.parametrize("name", list(HAND_BUILT["known"]))
def test_known_difference_reference_answer(name: str, write_dataset) -> None:
    case = HAND_BUILT["known"][name]
    root = write_case(case, write_dataset)
    reference = reference_keys(root)
    assert reference == expected_keys(case)
    # The allow-list recognises this case's differences, by this case's reason only.
    differences = engine_keys(root) ^ reference
    data = load(root)
    assert differences
    assert {known.known_difference(key, data) for key in differences} == {reason(case)}


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=reason(case)))
        for name, case in HAND_BUILT["known"].items()
    ],
)
def test_known_difference_engine_agrees(name: str, write_dataset) -> None:
    """Fails while the engine differs; once it agrees, XPASS(strict) says: remove the
    known difference."""
    case = HAND_BUILT["known"][name]
    assert engine_keys(write_case(case, write_dataset)) == expected_keys(case)
