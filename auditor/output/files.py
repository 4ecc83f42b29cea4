"""Last stage, outputs: findings.parquet, quarantine, row counts, the DuckDB catalog
(`catalog.py`), the summary and the manifest that names them.

The whole set is written into a staging folder and switched into OUTDIR at once
(`outdir.switch_in`): a reader never sees half an output, nor the files of two runs side
by side, and a failed or killed run leaves the previous set intact.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import polars as pl

from auditor import __version__
from auditor.output import outdir
from auditor.output.catalog import RunInfo, write_catalog

FINDINGS_FILE = "findings.parquet"
QUARANTINE_FILE = "quarantine.parquet"
COUNTS_FILE = "row_counts.parquet"
DUCKDB_FILE = "audit.duckdb"
SUMMARY_FILE = "summary.txt"
MANIFEST_FILE = outdir.MANIFEST_FILE
OUTPUT_FILES = (FINDINGS_FILE, QUARANTINE_FILE, COUNTS_FILE, DUCKDB_FILE, SUMMARY_FILE)


@dataclass(frozen=True)
class AuditOutputs:
    findings: pl.DataFrame
    quarantine: pl.DataFrame
    counts: pl.DataFrame


def write_outputs(out: Path, results: AuditOutputs, run: RunInfo | None = None) -> Path:
    """Every output, switched into `out` as one set; returns the folder written (a
    symlinked OUTDIR's target). Given the run (its dataset, checks and command), the
    catalog also holds the views over the dataset, the run's record, the checks and
    traceability."""
    out = outdir.prepare(out, run.dataset.root if run is not None else None)
    staging = outdir.staging_folder(out)
    try:
        _write_parquet(results.findings, staging / FINDINGS_FILE)
        _write_parquet(results.quarantine, staging / QUARANTINE_FILE)
        _write_parquet(results.counts, staging / COUNTS_FILE)
        tables = {
            "findings": results.findings,
            "quarantine": results.quarantine,
            "row_counts": results.counts,
        }
        write_catalog(staging / DUCKDB_FILE, tables, run, outdir=out)
        (staging / SUMMARY_FILE).write_text(summary_text(results), encoding="utf-8")
        written_at = datetime.now(UTC).isoformat(timespec="microseconds")
        outdir.write_manifest(
            staging, OUTPUT_FILES, {"version": __version__, "written_at": written_at}
        )
        outdir.switch_in(staging, out)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return out


def _write_parquet(frame: pl.DataFrame, target: Path) -> None:
    # No statistics timestamps or writer-dependent metadata: re-runs give the same bytes.
    frame.write_parquet(target, compression="zstd", statistics=False)


def summary_text(results: AuditOutputs) -> str:
    lines = ["Row accounting (rows in = audited + quarantined):"]
    lines.append(f"  {'table':<24}{'in':>12}{'audited':>12}{'quarantined':>14}")
    for table, rows_in, audited, quarantined in results.counts.iter_rows():
        lines.append(f"  {table:<24}{rows_in:>12,}{audited:>12,}{quarantined:>14,}")
    lines.append("")
    lines.append(f"Findings: {results.findings.height:,}")
    if results.findings.height:
        by_rule = results.findings.group_by("rule").len().sort("rule")
        for rule, n in by_rule.iter_rows():
            lines.append(f"  {rule:<10}{n:>10,}")
    return "\n".join(lines) + "\n"
