"""Compare two output sets of `auditor audit`: the same findings, quarantine, surveillance
and catalog, so that a change meant to be faster is shown to change nothing else.

Usage:
    python bench/compare_outputs.py OUTDIR_A OUTDIR_B [--rel-tol 1e-9]

Every Parquet file of either set (the names in each `manifest.json`) is compared: equal
when its bytes are (the manifests' SHA-256), else frame by frame, floats within
`--rel-tol` (sums whose order of addition differs), everything else exactly. The catalog
(`audit.duckdb`) is compared table by table, its base tables only (the views read the
dataset and the Parquet files compared already); in `runs`, the columns that differ from
run to run whatever the code (when it ran, how long, the command and the paths) are left
out. The HTML report and `summary.txt` are compared as text with the output folder's own
path, the run's
start and its command taken out. Prints one line per file or table and exits 1 when any differs.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC
from pathlib import Path

import duckdb
import polars as pl
from polars.testing import assert_frame_equal

# What a run records about itself rather than about the night.
RUN_COLUMNS_LEFT_OUT = ("run_id", "started_at", "ended_at", "command", "command_line", "outdir")


def _manifest(folder: Path) -> dict[str, dict]:
    files: dict[str, dict] = json.loads((folder / "manifest.json").read_text())["files"]
    return files


def _frames_equal(a: pl.DataFrame, b: pl.DataFrame, rel_tol: float) -> str | None:
    try:
        assert_frame_equal(a, b, check_exact=False, rel_tol=rel_tol, abs_tol=rel_tol)
    except AssertionError as differs:
        return str(differs).splitlines()[0][:300]
    return None


def compare_parquet(a: Path, b: Path, rel_tol: float) -> str | None:
    return _frames_equal(pl.read_parquet(a), pl.read_parquet(b), rel_tol)


def _catalog_tables(path: Path) -> dict[str, pl.DataFrame]:
    with duckdb.connect(str(path), read_only=True) as connection:
        names = [
            row[0]
            for row in connection.sql(
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_type = 'BASE TABLE' ORDER BY 1"
            ).fetchall()
        ]
        tables = {}
        for name in names:
            frame = connection.sql(f'SELECT * FROM "{name}"').pl()
            if name == "runs":
                frame = frame.drop([c for c in RUN_COLUMNS_LEFT_OUT if c in frame.columns])
            tables[name] = frame
    return tables


def compare_catalogs(a: Path, b: Path, rel_tol: float) -> list[tuple[str, str | None]]:
    left, right = _catalog_tables(a), _catalog_tables(b)
    results: list[tuple[str, str | None]] = []
    for name in sorted(set(left) | set(right)):
        if name not in left or name not in right:
            results.append((name, "in one catalog only"))
            continue
        results.append((name, _frames_equal(left[name], right[name], rel_tol)))
    return results


def _run_words(folder: Path) -> list[str]:
    """What a report prints about the run itself: when it started, where it wrote."""
    with duckdb.connect(str(folder / "audit.duckdb"), read_only=True) as connection:
        ((started, outdir),) = connection.sql("SELECT started_at, outdir FROM runs").fetchall()
    words = [started.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"), str(outdir)]
    return [*words, str(folder.resolve()), str(folder)]


def compare_text(a: Path, b: Path, folder_a: Path, folder_b: Path) -> str | None:
    texts = []
    for path, folder in ((a, folder_a), (b, folder_b)):
        text = path.read_text()
        for words in sorted(_run_words(folder), key=len, reverse=True):
            text = text.replace(words, "RUN")
        texts.append(text)
    return None if texts[0] == texts[1] else "text differs"


def compare(a: Path, b: Path, rel_tol: float = 1e-9) -> list[tuple[str, str | None]]:
    """(file or catalog table, None if equal else how it differs), for every one."""
    files_a, files_b = _manifest(a), _manifest(b)
    results: list[tuple[str, str | None]] = []
    for name in sorted(set(files_a) | set(files_b)):
        if name not in files_a or name not in files_b:
            results.append((name, "in one set only"))
        elif files_a[name]["sha256"] == files_b[name]["sha256"]:
            results.append((name, None))
        elif name.endswith(".parquet"):
            results.append((name, compare_parquet(a / name, b / name, rel_tol)))
        elif name == "audit.duckdb":
            results += [
                (f"audit.duckdb:{t}", d) for t, d in compare_catalogs(a / name, b / name, rel_tol)
            ]
        else:
            results.append((name, compare_text(a / name, b / name, a, b)))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a", type=Path)
    parser.add_argument("b", type=Path)
    parser.add_argument("--rel-tol", type=float, default=1e-9)
    args = parser.parse_args()
    results = compare(args.a, args.b, args.rel_tol)
    for name, differs in results:
        print(f"{'same' if differs is None else 'DIFFERS'}  {name}  {differs or ''}")
    different = [name for name, differs in results if differs is not None]
    print(f"{len(results) - len(different)} same, {len(different)} differ")
    sys.exit(1 if different else 0)


if __name__ == "__main__":
    main()
