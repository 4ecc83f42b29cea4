"""A subject against the game, night by night: what an investigation across nights (`across`)
reads of the surveillance counts each run keeps in its set (`surveillance.cells`), and the
running sum a period's test stands on.

For each night, the subject's observed count less what the game gives, from the runs in
force (`coverage_current`: a re-audit supersedes):

- a patron: side wagers won less the wins their chances give, and money won less its
  exact expectation (`cells_patrons.parquet`: the run's rated wagers summed per patron
  and bet);
- a dealer: rounds with a finding less the dealer's share of the night's (`cells_rounds`:
  per shoe, dealer and table), and the patrons' money won at the dealer's rounds less
  its exact expectation (`cells_dealers`: per dealer and bet, over all the run's tables);
- a table: its patrons' money won less its exact expectation, what the house kept below
  the theoretical hold in dollars (`cells_tables`: per table and bet).

A run's counts are summed over its tables and nights, so a night is read only from runs
that audited that gaming day alone; a patron's only from runs in force for every table
they audited (a patron's counts are not kept per table). What is left out is said.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import polars as pl

from auditor.archive.catalog import RUNS, SET
from auditor.output.sandboxed_query import Catalog
from auditor.report import data
from auditor.surveillance.cells import CELL_FILES
from auditor.surveillance.patrons import FAMILY_OF

NIGHT_ROWS = 120  # nights listed under the chart; the chart draws them all


@dataclass(frozen=True)
class Measure:
    """One quantity night by night: `rows` hold day, observed, expected, excess
    (observed less expected) and to_date (the running sum of the excess)."""

    name: str  # the chart's file-safe name
    title: str  # what is counted, for a person
    unit: str  # "money" (dollars) or a count's noun ("wins", "rounds")
    observed: str  # the observed column's heading
    rows: list[dict[str, Any]]


@dataclass
class AgainstGame:
    measures: list[Measure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # runs, or parts of them, left out
    runs: dict[date, list[str]] = field(default_factory=dict)  # each night's runs read


@dataclass(frozen=True)
class _Run:
    run_id: str
    day: date
    tables: tuple[str, ...]  # in force for the night
    whole: bool  # in force for every table it audited


def against_the_game(
    catalog: Catalog, archive: Path, kind: str, subject_id: str, window: tuple[str, dict]
) -> AgainstGame:
    """The subject's nights against the game, from the kept counts of the runs in force
    (`window`: the gaming-day clause and its parameters, as `across.data` builds them)."""
    found = AgainstGame()
    runs = _runs_in_force(catalog, window, found.notes)
    readable = []
    for run in runs:
        folder = archive / RUNS / run.run_id / SET
        if not all((folder / name).is_file() for name in CELL_FILES.values()):
            found.notes.append(
                f"run {run.run_id[:12]} ({run.day}) keeps no surveillance counts (an earlier "
                "auditor): its night is left out"
            )
            continue
        readable.append((run, folder))
    reader = {"patron": _patron, "dealer": _dealer, "table": _table}[kind]
    per_night: dict[date, dict[str, float]] = {}
    for run, folder in readable:
        got = reader(run, folder, subject_id, found.notes)
        if got is None:
            continue
        found.runs.setdefault(run.day, []).append(run.run_id)
        night = per_night.setdefault(run.day, {})
        for key, value in got.items():
            night[key] = night.get(key, 0.0) + value
    found.measures = _measures(kind, per_night)
    return found


def _runs_in_force(catalog: Catalog, window: tuple[str, dict], notes: list[str]) -> list[_Run]:
    """Each run in force for a night of the window, with the tables it is in force for;
    a run over several gaming days is said and left out."""
    days, params = window
    rows = data.frame(
        catalog,
        f"""WITH current AS (
          SELECT run_id, table_id, gaming_day FROM coverage_current WHERE true{days}
        )
        SELECT v.run_id, v.table_id, v.gaming_day, c.run_id IS NOT NULL AS in_force
        FROM coverage v LEFT JOIN current c ON c.run_id = v.run_id
         AND c.table_id = v.table_id AND c.gaming_day = v.gaming_day
        WHERE v.run_id IN (SELECT run_id FROM current)
        ORDER BY v.run_id, v.gaming_day, v.table_id""",
        params,
    )
    runs = []
    for (run_id,), covered in rows.group_by("run_id", maintain_order=True):
        nights = covered["gaming_day"].unique().sort()
        if nights.len() != 1:
            notes.append(
                f"run {str(run_id)[:12]} audited {nights.len()} gaming days at once "
                f"({nights[0]} to {nights[-1]}): its counts are not kept night by night and "
                "are left out"
            )
            continue
        kept = covered.filter(pl.col("in_force"))["table_id"].sort().to_list()
        runs.append(_Run(str(run_id), nights[0], tuple(kept), bool(covered["in_force"].all())))
    return sorted(runs, key=lambda r: (r.day, r.run_id))


def _patron(run: _Run, folder: Path, patron: str, notes: list[str]) -> dict[str, float] | None:
    cells = (
        pl.scan_parquet(folder / CELL_FILES["patrons"]).filter(pl.col("patron_id") == patron)
    ).collect()
    if cells.height == 0:
        return None
    if not run.whole:
        notes.append(
            f"run {run.run_id[:12]} ({run.day}): partly superseded, and a patron's counts are "
            "kept over all its tables: left out"
        )
        return None
    side = cells.filter(pl.col("bet").is_in(list(FAMILY_OF)))
    return {
        "side_n": float(side["n"].sum()),
        "wins": float(side["wins"].sum()),
        "expected_wins": float(side["expected_wins"].sum()),
        "money_n": float(cells["money_n"].sum()),
        "net": float(cells["net"].sum()),
        "expected": float(cells["expected"].sum()),
    }


def _dealer(run: _Run, folder: Path, dealer: str, notes: list[str]) -> dict[str, float] | None:
    cells = (
        pl.scan_parquet(folder / CELL_FILES["rounds"])
        .filter(pl.col("table_id").is_in(list(run.tables)))
        .group_by(pl.col("dealer_id") == dealer)
        .agg(pl.col("rounds").sum(), pl.col("finding_rounds").sum())
        .collect()
    )
    if cells.height == 0:
        return None
    # The night's rounds count even where the dealer dealt none of this run's: the
    # dealer's share is weighed against every round of the night.
    mine = cells.filter(pl.col("dealer_id"))
    return {
        "rounds": float(mine["rounds"].sum()),
        "finding_rounds": float(mine["finding_rounds"].sum()),
        "night_rounds": float(cells["rounds"].sum()),
        "night_finding_rounds": float(cells["finding_rounds"].sum()),
        **_dealer_money(run, folder, dealer),
    }


def _dealer_money(run: _Run, folder: Path, dealer: str) -> dict[str, float]:
    """The patrons' money won at the dealer's rounds, where the run keeps it and all of
    the run is in force (a dealer's money is summed over the run's tables)."""
    path = folder / CELL_FILES["dealers"]
    if not run.whole or not path.is_file():
        return {}
    cells = pl.scan_parquet(path).filter(pl.col("dealer_id") == dealer).collect()
    return {
        "money_n": float(cells["money_n"].sum()),
        "net": float(cells["net"].sum()),
        "expected": float(cells["expected"].sum()),
    }


def _table(run: _Run, folder: Path, table: str, notes: list[str]) -> dict[str, float] | None:
    if table not in run.tables:
        return None
    cells = (
        pl.scan_parquet(folder / CELL_FILES["tables"]).filter(pl.col("table_id") == table)
    ).collect()
    if cells.height == 0 or not cells["money_n"].sum():
        return None
    return {
        "money_n": float(cells["money_n"].sum()),
        "stake": float(cells["stake"].sum()),
        "net": float(cells["net"].sum()),
        "expected": float(cells["expected"].sum()),
    }


def _measures(kind: str, nights: dict[date, dict[str, float]]) -> list[Measure]:
    days = sorted(nights)
    if not days:
        return []
    if kind == "patron":
        measures = [
            _measure("side-wins", "Side wagers won, beyond their chances", "wins", "won",
                     days, nights, "wins", "expected_wins", "side_n"),
            _measure("money-won", "Money won, beyond the game's expectation", "money", "won",
                     days, nights, "net", "expected", "money_n"),
        ]  # fmt: skip
    elif kind == "dealer":
        for night in nights.values():
            share = night["night_finding_rounds"] / night["night_rounds"]
            night["expected_finding_rounds"] = night["rounds"] * share
        measures = [
            _measure("finding-rounds", "Rounds with a finding, beyond the night's rate",
                     "rounds", "with a finding", days, nights, "finding_rounds",
                     "expected_finding_rounds", "rounds"),
            _measure("patrons-won", "Patrons' money won, beyond the game's", "money", "won",
                     days, nights, "net", "expected", "money_n"),
        ]  # fmt: skip
    else:
        measures = [
            _measure("patrons-won", "Patrons' money won, beyond the game's expectation",
                     "money", "won", days, nights, "net", "expected", "money_n"),
        ]  # fmt: skip
    return [m for m in measures if m.rows]


def _measure(
    name: str,
    title: str,
    unit: str,
    observed: str,
    days: list[date],
    nights: dict[date, dict[str, float]],
    seen: str,
    expected: str,
    count: str,
) -> Measure:
    kept = [d for d in days if nights[d].get(count)]
    excess = [nights[d][seen] - nights[d][expected] for d in kept]
    running = itertools.accumulate(excess)
    rows = [
        {
            "day": day,
            "count": int(nights[day][count]),
            "observed": nights[day][seen],
            "expected": nights[day][expected],
            "excess": over,
            "to_date": to_date,
        }
        for day, over, to_date in zip(kept, excess, running, strict=True)
    ]
    return Measure(name, title, unit, observed, rows)
