"""Last stage, outputs: findings.parquet, quarantine, row counts, the DuckDB catalog
(`catalog.py`), the summary and the manifest that names them.

The whole set is written into a staging folder and switched into OUTDIR at once
(`outdir.switch_in`): a reader never sees half an output, nor the files of two runs side
by side, and a failed or killed run leaves the previous set intact.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import polars as pl

from auditor import __version__
from auditor.findings.check import Check
from auditor.findings.table import FINDING_ID_SCHEME
from auditor.interrupts import interrupts_deferred
from auditor.money import usd_text
from auditor.output import outdir
from auditor.output.catalog import (
    RunInfo,
    point_views_at_files,
    point_views_at_origin,
    write_catalog,
)
from auditor.output.located import write_located
from auditor.surveillance.schema import empty_alerts, empty_surveillance

FINDINGS_FILE = "findings.parquet"
QUARANTINE_FILE = "quarantine.parquet"
COUNTS_FILE = "row_counts.parquet"
DUCKDB_FILE = "audit.duckdb"
SUMMARY_FILE = "summary.txt"
# Surveillance: every statistical test of the night, and the alerts (never findings).
SURVEILLANCE_FILE = "surveillance.parquet"
ALERTS_FILE = "alerts.parquet"
MANIFEST_FILE = outdir.MANIFEST_FILE
CELLS_PREFIX = "cells_"  # the night's surveillance counts, for a period's tests
OUTPUT_FILES = (
    FINDINGS_FILE,
    QUARANTINE_FILE,
    COUNTS_FILE,
    SURVEILLANCE_FILE,
    ALERTS_FILE,
    DUCKDB_FILE,
    SUMMARY_FILE,
)
# More files of the set, written into the staging folder once the catalog is there (the
# nightly report, which reads it); returns their paths relative to the folder.
ExtraWriter = Callable[[Path], Sequence[str]]


@dataclass(frozen=True)
class AuditOutputs:
    findings: pl.DataFrame
    quarantine: pl.DataFrame
    counts: pl.DataFrame
    # `auditor.surveillance`; empty (the schema only) when the caller ran none. A night's
    # tests may be many: a LazyFrame (over the file surveillance wrote) is written
    # streaming and loaded into the catalog from the written file.
    surveillance: pl.DataFrame | pl.LazyFrame = field(default_factory=empty_surveillance)
    alerts: pl.DataFrame = field(default_factory=empty_alerts)
    # The night's summed surveillance counts (`surveillance.cells`), a folder of files
    # copied into the set as they are, so that a period is tested without the datasets.
    cells: Path | None = None


def write_outputs(
    out: Path,
    results: AuditOutputs,
    run: RunInfo | None = None,
    extra: ExtraWriter | None = None,
    *,
    claimed: bool = False,
) -> Path:
    """Every output, switched into `out` as one set; returns the folder written (a
    symlinked OUTDIR's target). Given the run (its dataset, checks and command), the
    catalog also holds the views over the dataset, the run's record, the checks and
    traceability. `extra` writes more files into the set (the report), named in the
    manifest with the rest. `claimed`: the caller holds OUTDIR (`outdir.claim`) already,
    as a whole audit does from its start; otherwise it is claimed for the writing."""
    dataset = run.dataset.root if run is not None else None
    if claimed:
        return _write_set(out, dataset, results, run, extra)
    with outdir.claim(out, dataset) as target:
        return _write_set(target, dataset, results, run, extra)


def _write_set(
    out: Path,
    dataset: Path | None,
    results: AuditOutputs,
    run: RunInfo | None,
    extra: ExtraWriter | None,
) -> Path:
    # Checked again under the lock, just before the set replaces what is there.
    out = outdir.prepare(out, dataset)
    staging: Path | None = None
    try:
        with interrupts_deferred():  # a folder made is a folder named, to be removed
            staging = outdir.staging_folder(out)
        _write_parquet(results.findings, staging / FINDINGS_FILE)
        _write_parquet(results.quarantine, staging / QUARANTINE_FILE)
        _write_parquet(results.counts, staging / COUNTS_FILE)
        _write_parquet(results.surveillance, staging / SURVEILLANCE_FILE)
        _write_parquet(results.alerts, staging / ALERTS_FILE)
        tables: dict[str, pl.DataFrame | Path] = {
            "findings": results.findings,
            "quarantine": results.quarantine,
            "row_counts": results.counts,
            "surveillance": staging / SURVEILLANCE_FILE,
            "alerts": results.alerts,
        }
        write_catalog(staging / DUCKDB_FILE, tables, run, outdir=out)
        checks = run.checks if run is not None else ()
        (staging / SUMMARY_FILE).write_text(summary_text(results, checks), encoding="utf-8")
        # Where and when each finding happened, and what the night covered, while the
        # dataset is in place: what an archive of runs reads instead of the dataset.
        located = write_located(staging / DUCKDB_FILE, staging) if run is not None else ()
        extra_files = located + (tuple(extra(staging)) if extra is not None else ())
        extra_files += _copy_cells(results.cells, staging)
        if run is not None and run.origin is not None:
            point_views_at_origin(staging / DUCKDB_FILE, run)
        elif run is not None and run.dataset.gathered:
            point_views_at_files(staging / DUCKDB_FILE, run)
        written_at = datetime.now(UTC).isoformat(timespec="microseconds")
        outdir.write_manifest(
            staging,
            OUTPUT_FILES + extra_files,
            {
                "version": __version__,
                "written_at": written_at,
                "finding_id_scheme": FINDING_ID_SCHEME,
                **_inputs_record(run),
            },
        )
        outdir.switch_in(staging, out)
    finally:
        # Removed whole even when Ctrl-C is what stopped the writing, or arrives again.
        with interrupts_deferred():
            if staging is not None and staging.exists():
                shutil.rmtree(staging, ignore_errors=True)
    return out


def _copy_cells(cells: Path | None, staging: Path) -> tuple[str, ...]:
    if cells is None:
        return ()
    names = tuple(sorted(path.name for path in cells.glob(f"{CELLS_PREFIX}*.parquet")))
    for name in names:
        shutil.copyfile(cells / name, staging / name)
    return names


def _inputs_record(run: RunInfo | None) -> dict:
    """What the run read, for the manifest: the dataset and each input file with its size.
    `auditor query` admits these folders alone to its sandbox, from the manifest and never
    from the catalog, whose tables a user can edit."""
    if run is None:
        return {"dataset": None, "inputs": []}
    sources = [s for table in run.dataset.tables() for s in run.dataset.files[table]]
    return {
        "dataset": run.location(),
        "inputs": [{"path": run.location(s), "bytes": s.path.stat().st_size} for s in sources],
    }


def _write_parquet(frame: pl.DataFrame | pl.LazyFrame, target: Path) -> None:
    # No statistics timestamps or writer-dependent metadata: re-runs give the same bytes.
    if isinstance(frame, pl.LazyFrame):
        frame.sink_parquet(target, compression="zstd", statistics=False)
    else:
        frame.write_parquet(target, compression="zstd", statistics=False)


def summary_text(results: AuditOutputs, checks: Sequence[Check] = ()) -> str:
    """The row accounting, the findings by rule with each rule's title, and the money at
    stake, for the terminal."""
    lines = ["Row accounting (rows in = audited + quarantined):"]
    lines.append(f"  {'table':<24}{'in':>12}{'audited':>12}{'quarantined':>14}")
    for table, rows_in, audited, quarantined in results.counts.iter_rows():
        lines.append(f"  {table:<24}{rows_in:>12,}{audited:>12,}{quarantined:>14,}")
    if nothing_audited(results.counts):
        lines += ["", nothing_audited_line(results.counts)]
    lines.append("")
    findings = results.findings
    lines.append(f"Findings: {findings.height:,}")
    if findings.height:
        titles = {c.code: c.title for c in checks}
        impact = pl.col("impact")
        by_rule = (
            findings.group_by("rule", "severity")
            .agg(
                pl.len().alias("n"),
                impact.filter(impact > 0).sum().alias("over"),
                (-impact.filter(impact < 0).sum()).alias("under"),
            )
            .sort("rule")
        )
        for rule, severity, n, over, under in by_rule.iter_rows():
            money = "".join(
                f"  {word} {_dollars(amount)}"
                for word, amount in (("overpaid", over), ("underpaid", under))
                if amount
            )
            title = titles.get(rule, "")
            lines.append(f"  {rule:<8}{severity:<8}{n:>8,}  {title}{money}")
        over = money_total(findings.filter(impact > 0)["impact"])
        under = -money_total(findings.filter(impact < 0)["impact"])
        lines.append("")
        lines.append(
            f"Money at stake: {_dollars(over + under)} (overpaid {_dollars(over)}, "
            f"underpaid {_dollars(under)}) over "
            f"{findings.filter(impact.is_not_null()).height:,} findings"
        )
    lines += surveillance_lines(results)
    return "\n".join(lines) + "\n"


def nothing_audited(counts: pl.DataFrame) -> bool:
    """Every row of a dataset that had rows quarantined: the audit checked nothing, so its
    lack of findings says nothing about the night."""
    return counts["rows_in"].sum() > 0 and counts["rows_audited"].sum() == 0


def nothing_audited_line(counts: pl.DataFrame) -> str:
    return (
        f"Nothing audited: every one of the {counts['rows_in'].sum():,} rows was quarantined "
        f"({QUARANTINE_FILE} says why); no finding here means nothing was checked."
    )


def surveillance_lines(results: AuditOutputs) -> list[str]:
    """The alerts, apart from the findings: statistics, not violations."""
    first = results.surveillance.lazy().select(pl.len(), pl.col("alert_fdr").first()).collect()
    tested, rate = first.row(0)
    if tested == 0:
        return []
    alerts = results.alerts
    lines = [
        "",
        f"Surveillance alerts (not findings): {alerts.height:,} of {tested:,} tests, "
        f"false-discovery rate {rate:g} (Benjamini-Hochberg)",
    ]
    for level, key, statistic, p in alerts.select(
        "level", "key", "statistic", "p_value"
    ).iter_rows():
        lines.append(f"  {level:<8}{key:<20}{statistic:<28}p = {p:.2e}")
    return lines


def money_total(amounts: pl.Series) -> Decimal:
    """The sum of a money column (`contract.MONEY`, Decimal dollars; 0 for none). A float
    column is refused, not summed: money is never float."""
    total = amounts.sum()
    if isinstance(total, float):
        raise TypeError(f"{amounts.name}: a float column, where money is Decimal dollars")
    return Decimal(total)


def _dollars(amount: object) -> str:
    return usd_text(Decimal(str(amount)))
