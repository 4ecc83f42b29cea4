"""Where an archive keeps its live runs (`auditor watch`): `ARCHIVE/live/DAY/`, one
folder per gaming day, whose `findings.jsonl` holds every finding reported while the
day was dealt, in the order reported, and `closed.json` the run that closed the day
(an archived run like any other, under `runs/`, which a later audit supersedes).
`auditor verify` leaves the folder alone: it vouches for runs and periods only.

A day's closing run is the archived run that audited the day's own dataset
(`ARCHIVE/live/DAY/dataset/`, as its `run.json` records, hashed in the archive's
record): the archive itself says whether a day was closed, so a close cut off between
adding its run and writing `closed.json` finishes with that run instead of adding a
second."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterable
from pathlib import Path, PurePath

import polars as pl

from auditor.contract import MONEY
from auditor.errors import InputError
from auditor.output.macros import sql_literal
from auditor.regular_files import read_regular, read_regular_text

LIVE = "live"
LIVE_FINDINGS = "findings.jsonl"
CLOSED_FILE = "closed.json"
LIVE_DATASET = "dataset"
# A day's live findings file is read whole: far above a day of findings (some 500 bytes
# a line), far below what a reader may hold.
LIVE_LIMIT = 512 * 1024**2


def closed_live_day(dataset: object) -> str | None:
    """The gaming day whose live dataset a run audited (its `run.json` `dataset`), None
    for a run of any other dataset. By the path's end only: a moved archive's closing
    runs name where it was."""
    if not isinstance(dataset, str):
        return None
    parts = PurePath(dataset).parts
    if len(parts) >= 3 and parts[-3] == LIVE and parts[-1] == LIVE_DATASET:
        return parts[-2]
    return None


def closing_run(archive: Path, day: str) -> str | None:
    """The id of the run the archive holds that closed `day` (the latest added, should
    there be several), None when the day was never closed into it."""
    found = [run_id for run_id, closed in closing_runs(archive) if closed == day]
    return found[-1] if found else None


def closing_runs(archive: Path) -> list[tuple[str, str]]:
    """Each run the archive's record holds that closed a live day, with the day, in the
    order added (an archive made before its record: none, as it held no live runs)."""
    from auditor.archive.record import RecordMissing, recorded_runs

    try:
        recorded = recorded_runs(Path(archive))
    except RecordMissing:
        return []
    found = []
    for run_id in sorted(recorded, key=lambda name: recorded[name]["seq"]):
        path = Path(archive) / "runs" / run_id / "run.json"
        try:
            dataset = json.loads(read_regular_text(path)).get("dataset")
        except (OSError, ValueError, InputError, AttributeError):
            continue  # a run not as written: `auditor verify` names it
        if (day := closed_live_day(dataset)) is not None:
            found.append((run_id, day))
    return found


# A live finding is read from its day's live run, whose id names the day: the run its
# reviews are recorded against until the day's closing run holds it.
LIVE_RUN_PREFIX = "live-"
_DAY = re.compile(r"\d{4}-\d\d-\d\d")
# What the desk, the ledger and the catalog read of a reported line; the rest (`was`,
# the findings' own words before a change) is the watch's.
LINE_SCHEMA = {
    "finding_id": pl.String,
    "rule": pl.String,
    "severity": pl.String,
    "citation": pl.String,
    "table_id": pl.String,
    "located_table_id": pl.String,  # the table it happened at (none before the watch said)
    "shoe_id": pl.String,
    "round_id": pl.String,
    "wager_id": pl.String,
    "expected": pl.String,
    "logged": pl.String,
    "impact": pl.String,  # decimal text, never a float
    "message": pl.String,
    "discriminator": pl.String,
    "final": pl.String,
    "change": pl.String,
    "found_at": pl.String,
}


def live_run_id(day: str) -> str:
    return f"{LIVE_RUN_PREFIX}{day}"


def live_days(archive: Path) -> list[str]:
    """The gaming days the archive holds a live run of (a day's folder, never a link)."""
    root = Path(archive) / LIVE
    if root.is_symlink() or not root.is_dir():
        return []
    return sorted(
        folder.name
        for folder in root.iterdir()
        if _DAY.fullmatch(folder.name) and folder.is_dir() and not folder.is_symlink()
    )


def reported_lines(archive: Path, days: list[str] | None = None) -> pl.DataFrame:
    """Every whole line the live runs of `days` (every day: None) hold, in the order
    reported, each with its `day` and `line` number; a line torn by a kill is never read."""
    frames = []
    for day in live_days(archive) if days is None else days:
        path = Path(archive) / LIVE / day / LIVE_FINDINGS
        try:
            data = read_regular(path, LIVE_LIMIT)
        except FileNotFoundError:
            continue
        whole = data[: data.rfind(b"\n") + 1]
        if not whole.strip():
            continue
        frame = pl.read_ndjson(io.BytesIO(whole), schema=LINE_SCHEMA)
        frames.append(frame.with_row_index("line").with_columns(pl.lit(day).alias("day")))
    if not frames:
        schema = {"line": pl.UInt32, **LINE_SCHEMA, "day": pl.String}
        return pl.DataFrame(schema=schema)
    return pl.concat(frames)


def closed_days(archive: Path, days: list[str]) -> set[str]:
    """Those of `days` the archive holds a closing run of; a day marked closed is one
    without reading a run (its run was added before it was marked)."""
    marked = {day for day in days if (Path(archive) / LIVE / day / CLOSED_FILE).is_file()}
    unmarked = set(days) - marked
    if not unmarked:
        return marked
    return marked | (unmarked & {day for _, day in closing_runs(archive)})


def live_findings(archive: Path) -> pl.DataFrame:
    """The findings of the live runs of days not yet closed, each as last reported (a
    withdrawn one left out), with when it was first reported (`found_at`) and last
    changed (`changed_at`), its day's live run as its `run_id`."""
    days = live_days(archive)
    days = [day for day in days if day not in closed_days(archive, days)]
    return latest_states(reported_lines(archive, days)).filter(pl.col("change") != "withdrawn")


def latest_states(lines: pl.DataFrame) -> pl.DataFrame:
    """Each finding of each day as last reported (withdrawn ones too)."""
    stamp = pl.col("found_at").str.to_datetime(time_zone="UTC")
    return (
        lines.sort("day", "line")
        .group_by("day", "finding_id", maintain_order=True)
        .agg(pl.all().last(), stamp.first().alias("first_found_at"))
        .select(
            "finding_id",
            pl.concat_str(pl.lit(LIVE_RUN_PREFIX), "day").alias("run_id"),
            pl.col("day").str.to_date().alias("gaming_day"),
            *[c for c in LINE_SCHEMA if c not in ("finding_id", "found_at", "impact")],
            pl.col("impact").cast(MONEY),
            pl.col("first_found_at").alias("found_at"),
            stamp.alias("changed_at"),
        )
    )


def live_held(
    archive: Path, finding_ids: set[str], *, current: bool, runs: Iterable[str] = ()
) -> dict[str, set[str]]:
    """Each of `finding_ids` a live run holds, with the live runs that do: as it stands
    (`current`: a day not yet closed, the finding not withdrawn), or ever reported by one
    of the live `runs` (their ids; only those days are read)."""
    if not finding_ids:
        return {}
    if current:
        found = live_findings(archive)
    else:
        days = sorted({r.removeprefix(LIVE_RUN_PREFIX) for r in runs} & set(live_days(archive)))
        found = reported_lines(archive, days).select(
            "finding_id", pl.concat_str(pl.lit(LIVE_RUN_PREFIX), "day").alias("run_id")
        )
    held: dict[str, set[str]] = {}
    wanted = found.filter(pl.col("finding_id").is_in(sorted(finding_ids)))
    for finding_id, run_id in wanted.select("finding_id", "run_id").unique().iter_rows():
        held.setdefault(finding_id, set()).add(run_id)
    return held


def live_identities(archive: Path, runs: dict[str, str]) -> dict[str, dict]:
    """The identity each finding's live run (`runs`: finding id to live run id) reported
    it with."""
    days = sorted({run_id.removeprefix(LIVE_RUN_PREFIX) for run_id in runs.values()})
    states = latest_states(reported_lines(archive, [d for d in days if _DAY.fullmatch(d)]))
    keys = ("rule", "table_id", "shoe_id", "round_id", "wager_id", "discriminator")
    return {
        row["finding_id"]: {key: row[key] for key in keys}
        for row in states.iter_rows(named=True)
        if runs.get(row["finding_id"]) == row["run_id"]
    }


FINDINGS_LIVE = "findings_live"
# The live days of the archive's catalog: the views a catalog written before the live
# runs were read (`catalog.is_earlier_catalog`) does not hold.
LIVE_VIEWS = (FINDINGS_LIVE,)
LIVE_COMMENT = (
    "the findings reported live on gaming days not yet closed, each as last reported "
    "(withdrawn ones left out); run_id names the day's live run"
)


def live_view_statements(archive: Path) -> list[str]:
    """The view of the live runs, once one holds a finding (the catalog is written anew
    by its next reader then): the same findings `live_findings` reads. A day is closed
    once the archive holds its closing run (`closed_live_day`); a line torn by a kill is
    skipped."""
    if not any((Path(archive) / LIVE / d / LIVE_FINDINGS).is_file() for d in live_days(archive)):
        return []
    glob = sql_literal(str(Path(archive) / LIVE / "*" / LIVE_FINDINGS))
    typed = {"impact": "DECIMAL(18,2)", "found_at": "TIMESTAMPTZ"}
    columns = ", ".join(f"{name}: '{typed.get(name, 'VARCHAR')}'" for name in LINE_SCHEMA)
    kept = ", ".join(c for c in LINE_SCHEMA if c not in ("finding_id", "found_at"))
    return [
        f"""CREATE VIEW {FINDINGS_LIVE} AS
WITH line AS (
  SELECT *, regexp_extract(filename, '/{LIVE}/([0-9]{{4}}-[0-9]{{2}}-[0-9]{{2}})/findings[.]jsonl$',
                           1) AS live_day
  FROM read_json({glob}, format = 'newline_delimited', filename = true, ignore_errors = true,
                 columns = {{{columns}}})
  WHERE finding_id IS NOT NULL
), state AS (
  SELECT *, min(found_at) OVER (PARTITION BY live_day, finding_id) AS first_found_at
  FROM line
  QUALIFY row_number() OVER (PARTITION BY live_day, finding_id ORDER BY found_at DESC) = 1
)
SELECT finding_id, '{LIVE_RUN_PREFIX}' || live_day AS run_id,
       CAST(live_day AS DATE) AS gaming_day, {kept},
       first_found_at AS found_at, found_at AS changed_at
FROM state
WHERE live_day <> '' AND change <> 'withdrawn'
  AND live_day NOT IN (
    SELECT regexp_extract(dataset, '/{LIVE}/([^/]+)/{LIVE_DATASET}$', 1) FROM runs
    WHERE dataset IS NOT NULL)"""
    ]
