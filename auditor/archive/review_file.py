"""A batch of reviews from a file (`auditor review ARCHIVE --from-file FILE`): a CSV
(UTF-8, a header row) or Parquet file with the columns finding_id, status, note and by,
read into the entries `archive.ledger.append_reviews` takes whole or not at all."""

from __future__ import annotations

import io
from pathlib import Path

import polars as pl

from auditor.archive.ledger import LedgerError, ReviewInput
from auditor.archive.ledger_format import REVIEW_COLUMNS


def read_review_file(path: Path) -> list[ReviewInput]:
    """A batch from a CSV (UTF-8, a header row) or Parquet file with the columns
    finding_id, status, note and by; an empty note may be left blank."""
    path = Path(path)
    frame = _read_frame(path)
    missing = [column for column in REVIEW_COLUMNS if column not in frame.columns]
    if missing:
        needed = ", ".join(REVIEW_COLUMNS)
        raise LedgerError(f"{path}: no column {', '.join(missing)} (needs {needed})")
    try:
        frame = frame.select([pl.col(column).cast(pl.String) for column in REVIEW_COLUMNS])
    except pl.exceptions.PolarsError as exc:
        raise LedgerError(f"{path}: a review column is not text ({exc})") from exc
    frame = frame.with_columns(pl.col("note").fill_null(""))
    return [ReviewInput(**row) for row in frame.iter_rows(named=True)]


def _read_frame(path: Path) -> pl.DataFrame:
    kind = {".csv": "CSV", ".parquet": "Parquet", ".pq": "Parquet"}.get(path.suffix.lower())
    if kind is None:
        raise LedgerError(f"{path}: a review batch is a .csv or .parquet file")
    try:
        if kind == "Parquet":
            return pl.read_parquet(path)
        # utf-8-sig: a spreadsheet's export often starts with a byte-order mark.
        text = path.read_bytes().decode("utf-8-sig").encode("utf-8")
        return pl.read_csv(io.BytesIO(text), infer_schema=False, empty_string_is_null=False)
    except (OSError, UnicodeDecodeError, pl.exceptions.PolarsError) as exc:
        raise LedgerError(f"{path}: not a readable {kind} file ({exc})") from exc
