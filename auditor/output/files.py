"""Last stage, outputs: findings.parquet, quarantine, row counts and the DuckDB catalog
(`catalog.py`).

Every file is written to a temporary name in OUTDIR and renamed into place, so a
reader never sees half an output and a failed run leaves the previous one intact.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from auditor.output.catalog import RunInfo, write_catalog

FINDINGS_FILE = "findings.parquet"
QUARANTINE_FILE = "quarantine.parquet"
COUNTS_FILE = "row_counts.parquet"
DUCKDB_FILE = "audit.duckdb"
SUMMARY_FILE = "summary.txt"


@dataclass(frozen=True)
class AuditOutputs:
    findings: pl.DataFrame
    quarantine: pl.DataFrame
    counts: pl.DataFrame


def write_outputs(out: Path, results: AuditOutputs, run: RunInfo | None = None) -> None:
    """Every output; given the run (its dataset, checks and command), the catalog also
    holds the views over the dataset, the run's record, the checks and traceability."""
    out.mkdir(parents=True, exist_ok=True)
    _atomic_parquet(results.findings, out / FINDINGS_FILE)
    _atomic_parquet(results.quarantine, out / QUARANTINE_FILE)
    _atomic_parquet(results.counts, out / COUNTS_FILE)
    tables = {
        "findings": results.findings,
        "quarantine": results.quarantine,
        "row_counts": results.counts,
    }
    write_catalog(out / DUCKDB_FILE, tables, run)
    _atomic_text(out / SUMMARY_FILE, summary_text(results))


def _atomic_parquet(frame: pl.DataFrame, target: Path) -> None:
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    os.close(fd)
    try:
        # No statistics timestamps or writer-dependent metadata: re-runs give the same bytes.
        frame.write_parquet(tmp, compression="zstd", statistics=False)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _atomic_text(target: Path, text: str) -> None:
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, target)


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
