"""Witness benchmark: the time of every check's witness (`auditor/witness/sql/CODE.sql`)
over a large night, beside the time of the audit that made its findings.

Usage:
    python bench/bench_witness.py [--rounds 2000000] [--work /tmp/auditor-bench-witness]
                                  [--seed 7] [--no-compare] [--codes CODE ...]

Deals (once, cached in --work) a faulted night of --rounds rounds with `auditor simulate`
(--faults 0.05 --shoe-faults 0.3), audits it with `auditor audit` as a user runs it, then
runs each witness alone over the catalog (`SELECT count(*) FROM (witness)`, on DuckDB's
default threads) and the whole `witness_findings` view, and compares each witness's rows
with its check's findings (`--no-compare` leaves the comparison out: it runs each witness
twice more, and on 2,000,000 rounds the differential test's 300,000 hold the witnesses to
the engine). A figure, not a target: it says whether SQL could carry the
audit itself. It asserts nothing.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path

import duckdb

from auditor import witness

AUDITOR = str(Path(sys.executable).with_name("auditor"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2_000_000)
    parser.add_argument("--work", type=Path, default=Path("/tmp/auditor-bench-witness"))
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--no-compare", action="store_true")
    parser.add_argument("--codes", nargs="+", help="these witnesses only (default: every one)")
    args = parser.parse_args()
    dealt = args.work / f"night-{args.rounds}-{args.seed}"
    faults = ["--faults", "0.05", "--shoe-faults", "0.3", "--seed", str(args.seed)]
    if not (dealt / "_simulation.json").is_file():
        shutil.rmtree(dealt, ignore_errors=True)
        dealt.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [AUDITOR, "simulate", "--out", str(dealt), "--rounds", str(args.rounds), *faults],
            check=True,
            capture_output=True,
        )
    out = args.work / f"out-{args.rounds}-{args.seed}"
    started = time.perf_counter()
    subprocess.run(
        [AUDITOR, "audit", str(dealt), "--out", str(out), "--exit-zero", "--quiet"],
        check=True,
        capture_output=True,
    )
    audit_seconds = time.perf_counter() - started
    print(f"{args.rounds:,} rounds: auditor audit {audit_seconds:.1f} s (every check)", flush=True)
    # DuckDB spills a large witness's joins beside the database unless told otherwise: into
    # the output set, which the next audit into it would then refuse.
    spill = args.work / "duckdb-spill"
    con = duckdb.connect(
        str(out / "audit.duckdb"), read_only=True, config={"temp_directory": str(spill)}
    )
    total = 0.0
    columns = ", ".join(witness.COLUMNS)
    for code in args.codes or witness.codes():
        statement = witness.statement(code)
        started = time.perf_counter()
        rows = count(con, f"SELECT count(*) FROM ({statement})")
        seconds = time.perf_counter() - started
        total += seconds
        logged = count(con, "SELECT count(*) FROM findings WHERE rule = ?", [code])
        compared = f"{logged:>8,} findings"
        if not args.no_compare:
            found = f"SELECT {columns} FROM findings WHERE rule = '{code}'"
            witnessed = f"SELECT {columns} FROM ({statement})"
            differ = count(
                con,
                f"SELECT count(*) FROM (({found} EXCEPT ALL {witnessed}) "
                f"UNION ALL ({witnessed} EXCEPT ALL {found}))",
            )
            compared += f", {differ} rows differ"
        print(f"  {code}  {seconds:7.2f} s  {rows:>8,} rows  {compared}", flush=True)
    if args.codes:  # some witnesses: the union of every one is not theirs
        print(f"these witnesses, one at a time: {total:.1f} s; the audit {audit_seconds:.1f} s")
        return
    started = time.perf_counter()
    rows = count(con, "SELECT count(*) FROM witness_findings")
    union_seconds = time.perf_counter() - started
    print(
        f"every witness, one at a time: {total:.1f} s; the witness_findings view at once: "
        f"{union_seconds:.1f} s ({rows:,} rows), against the audit's {audit_seconds:.1f} s "
        f"for every check of {len(witness.codes())} witnessed and the rest"
    )


def count(
    con: duckdb.DuckDBPyConnection, statement: str, parameters: list[str] | None = None
) -> int:
    """The one number a `SELECT count(*)` statement returns."""
    row = con.execute(statement, parameters or []).fetchone()
    assert row is not None
    return int(row[0])


if __name__ == "__main__":
    main()
