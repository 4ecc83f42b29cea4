"""Two runs' findings compared by their identity (rule, entity, discriminator: what their
`finding_id` hashes): what is new in the second run, what is gone from it, and what
changed (same discrepancy, other severity, citation, expected or logged value, or impact).

Compared by the identity's fields rather than by the id, so that a set written before the
id stopped hashing the message (scheme 1) still compares finding for finding with a newer
one."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from auditor.errors import AuditorError, InputError
from auditor.findings.table import OUTPUT_SCHEMA, identity_text

FINDINGS_FILE = "findings.parquet"
# What may differ between two runs for one finding id; a change in any is reported.
COMPARED = ("severity", "citation", "expected", "logged", "impact")
CHANGES = ("new", "gone", "changed")


class ChangesNotWritten(AuditorError):
    """`--output` names a file that cannot be written; exit status 2."""


def read_findings(outdir: Path) -> pl.DataFrame:
    """The findings an audit wrote into `outdir`, in the columns and types it writes them
    with; a file that is not that is an `InputError` naming it."""
    path = Path(outdir) / FINDINGS_FILE
    if not path.is_file():
        raise InputError(f"{outdir}: no {FINDINGS_FILE}; is it the output folder of an audit?")
    try:
        findings = pl.read_parquet(path)
    except (OSError, pl.exceptions.PolarsError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(
            f"{path}: not a readable Parquet file ({reason}); re-run the audit to write it",
            path=str(path),
        ) from exc
    if "finding_id" not in findings.columns:
        raise InputError(f"{path}: no finding_id column; re-run the audit with this version")
    if "discriminator" not in findings.columns:  # written before findings had one
        findings = findings.with_columns(pl.lit(None, dtype=pl.String).alias("discriminator"))
    missing = [c for c in OUTPUT_SCHEMA if c not in findings.columns]
    if missing:
        raise InputError(
            f"{path}: no column {', '.join(missing)}: not the findings an audit writes; "
            "re-run the audit with this version",
            path=str(path),
        )
    try:
        return findings.select(list(OUTPUT_SCHEMA)).cast(pl.Schema(OUTPUT_SCHEMA))
    except pl.exceptions.PolarsError as exc:
        raise InputError(
            f"{path}: a column of another type than an audit writes ({exc}); "
            "re-run the audit with this version",
            path=str(path),
        ) from exc


def diff_findings(before: pl.DataFrame, after: pl.DataFrame) -> pl.DataFrame:
    """One row per finding that is new, gone or changed: `change`, then the finding as
    the later run has it (as the earlier one had it for a gone finding), and for a changed
    one the fields that differ, `field: before -> after`."""
    columns = list(OUTPUT_SCHEMA)
    before = before.with_columns(identity_text().alias("_identity"))
    after = after.with_columns(identity_text().alias("_identity"))
    new = after.join(before, on="_identity", how="anti").select(columns)
    gone = before.join(after, on="_identity", how="anti").select(columns)
    both = after.select(*columns, "_identity").join(
        before.select("_identity", *COMPARED), on="_identity", how="inner", suffix="_before"
    )
    differs = [
        pl.when(pl.col(c).ne_missing(pl.col(f"{c}_before"))).then(
            pl.format(
                "{}: {} -> {}",
                pl.lit(c),
                pl.col(f"{c}_before").cast(pl.String).fill_null("null"),
                pl.col(c).cast(pl.String).fill_null("null"),
            )
        )
        for c in COMPARED
    ]
    changed = (
        both.with_columns(pl.concat_str(differs, separator="; ", ignore_nulls=True).alias("what"))
        .filter(pl.col("what") != "")
        .select(*columns, "what")
    )
    empty_what = pl.lit(None, dtype=pl.String).alias("what")
    return pl.concat(
        [
            new.with_columns(empty_what).select(pl.lit("new").alias("change"), pl.all()),
            gone.with_columns(empty_what).select(pl.lit("gone").alias("change"), pl.all()),
            changed.select(pl.lit("changed").alias("change"), pl.all()),
        ],
        how="vertical",
    ).sort("change", "table_id", "shoe_id", "round_id", "wager_id", "rule", nulls_last=False)


def diff_runs(before: Path, after: Path) -> pl.DataFrame:
    """`diff_findings` of the findings two audits wrote into their output folders."""
    return diff_findings(read_findings(before), read_findings(after))


def write_changes(changes: pl.DataFrame, output: Path) -> None:
    """`diff_findings`' rows as Parquet at `output` (`auditor diff --output`)."""
    try:
        changes.write_parquet(output)
    except OSError as exc:
        folder = Path(output).parent
        reason = exc.strerror or (str(exc).splitlines() or [type(exc).__name__])[0]
        if not folder.is_dir():
            reason = f"no folder {folder}; create it first"
        raise ChangesNotWritten(f"{output}: cannot write the differences ({reason})") from exc
