"""One finding as the desk shows it: its evidence as the reports draw it (read from the
catalog of the run it is in force from, `report.evidence`), every archived run that found
it, and its review records.

The finding's id comes from the URL: it is checked to be an id (hexadecimal) before it is
used, and then only ever a parameter or a value compared with.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import polars as pl

from auditor.archive.catalog import RUNS, SET
from auditor.archive.ledger import finding_runs
from auditor.desk.snapshot import State
from auditor.errors import AuditorError
from auditor.packs.loaded import builtin_packs
from auditor.report import data, evidence
from auditor.report.evidence import Evidence

FINDING_ID = re.compile(r"[0-9a-f]{8,64}")
HISTORY_COLUMNS = ("finding_id", "rule", "severity", "impact", "message")


@dataclass
class FindingView:
    finding: dict[str, Any]
    in_force: bool
    status: str
    title: str = ""
    ev: Evidence | None = None
    anchor: str = ""
    evidence_note: str | None = None
    reviews: list[dict[str, Any]] = field(default_factory=list)
    history: list[dict[str, Any]] = field(default_factory=list)


def is_finding_id(text: str) -> bool:
    return FINDING_ID.fullmatch(text) is not None


def rows(state: State, sql: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    cursor = state.cursor()
    result = cursor.execute(sql, params)
    names = [d[0] for d in result.description]
    return [dict(zip(names, row, strict=True)) for row in result.fetchall()]


def finding_view(archive: Path, state: State, finding_id: str) -> FindingView | None:
    """What the finding's page shows; None when no archived run holds it."""
    current = rows(state, "SELECT * FROM queue WHERE finding_id = $id LIMIT 1", {"id": finding_id})
    history = _history(archive, state, finding_id, current[0]["run_id"] if current else None)
    if not current and not history:
        return None
    reviews = rows(
        state, "SELECT * FROM reviews WHERE finding_id = $id ORDER BY seq", {"id": finding_id}
    )
    status = reviews[-1]["status"] if reviews else "open"
    if current:
        view = FindingView(current[0], True, status)
    else:
        latest = history[-1]
        view = FindingView({**latest, "table_id": None}, False, status)
    view.reviews, view.history = reviews, history
    run_id = view.finding.get("run_id")
    if view.finding.get("found_live_at") is not None:
        # A live run keeps no set to draw from: the closing run's set will.
        view.evidence_note = (
            "Found live: the evidence is drawn once its day is closed; the finding's own "
            "words until then."
        )
    elif view.in_force and isinstance(run_id, str):
        _evidence(archive / RUNS / run_id / SET, view)
    return view


def _history(
    archive: Path, state: State, finding_id: str, in_force_run: str | None
) -> list[dict[str, Any]]:
    """Every archived run that found it, oldest audit first."""
    held = finding_runs(archive, {finding_id}).get(finding_id, set())
    started = {
        run_id: moment
        for run_id, moment in zip(
            state.archived.runs.column("run_id").to_pylist(),
            state.archived.runs.column("started_at").to_pylist(),
            strict=True,
        )
    }
    found = []
    for run_id in sorted(held):
        if run_id not in started:
            continue  # a folder the archive's record does not hold
        path = archive / RUNS / run_id / SET / "findings.parquet"
        frame = pl.read_parquet(path, columns=list(HISTORY_COLUMNS)).filter(
            pl.col("finding_id") == finding_id
        )
        for row in frame.iter_rows(named=True):
            found.append({**row, "run_id": run_id, "started_at": started[run_id]})
    days = {
        r["run_id"]: r["gaming_day"]
        for r in rows(
            state,
            "SELECT run_id, gaming_day FROM findings WHERE finding_id = $id",
            {"id": finding_id},
        )
    }
    for entry in found:
        entry["in_force"] = entry["run_id"] == in_force_run
        entry["gaming_day"] = days.get(entry["run_id"])
    return sorted(found, key=lambda e: e["started_at"] or datetime.min)


def _evidence(run_set: Path, view: FindingView) -> None:
    """The evidence as the reports draw it, read from the run's own catalog; what cannot
    be read (the dataset moved) leaves the finding's own words, and says why."""
    finding_id = view.finding["finding_id"]
    try:
        catalog = data.open_report_catalog(run_set)
    except AuditorError as error:
        view.evidence_note = f"The run's set cannot be read for evidence: {error}"
        return
    try:
        checks = data.checks(catalog)
        packs = builtin_packs()
        view.title = str(checks.get(view.finding["rule"], {}).get("title", ""))
        try:
            located = data.located(catalog, "f.finding_id = $id", {"id": finding_id})
            round_ids = data.ids_of(located["round_id"])
            neighbours = data.located(
                catalog, data.among("f.round_id", "ids", round_ids), {"ids": round_ids}
            )
            sources, _ = evidence.load_sources(catalog, located, neighbours, checks, packs)
        except AuditorError as error:
            located = data.located(catalog, "f.finding_id = $id", {"id": finding_id}, plain=True)
            sources = evidence.no_sources(checks, packs)
            view.evidence_note = (
                f"The night's hand histories cannot be read (the dataset is no longer where "
                f"it was audited): the finding's own words only. {error}"
            )
        if located.height:
            shown = located.row(0, named=True)
            view.ev = evidence.build(shown, sources)
            view.anchor = evidence.anchor(finding_id)
    finally:
        catalog.close()
