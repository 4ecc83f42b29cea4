"""Audit benchmark: replay and whole-audit throughput and peak memory, with their floors.

Usage:
    python bench/bench_audit.py [--rounds 10000000] [--work /tmp/auditor-bench]

Builds (once, cached in --work) a simulated dataset of --rounds rounds: one simulated
million-round dataset copied into partition files with fresh ids, so a 10-million-round
dataset takes minutes rather than the simulator's hour. Then it runs each measurement
in its own process, so that each peak RSS is that configuration's alone:

- floor: a bare polars read of the round cards with point counts only;
- replay: the auditor's replay and round checks over the same rounds;
- python: a plain row-by-row Python replay on a sample (rounds per second);
- audit: the whole `auditor audit` (validate, replay, settle, procedures, write).

It prints figures; it asserts nothing. The host is noisy: repeat and compare medians.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import polars as pl

BASE_ROUNDS = 1_000_000
PYTHON_SAMPLE = 200_000
VALUE = {"A": 1, "T": 0, "J": 0, "Q": 0, "K": 0}


def build_dataset(work: Path, rounds: int) -> Path:
    from auditor.simulate import simulate

    copies = max(1, rounds // BASE_ROUNDS)
    data = work / f"rounds-{copies * BASE_ROUNDS}"
    if (data / "done").exists():
        return data
    base = work / "base"
    if not (base / "rounds.parquet").exists():
        print(f"simulating {BASE_ROUNDS:,} rounds into {base} ...", flush=True)
        simulate(base, rounds=BASE_ROUNDS, seed=1)
    id_columns = ("table_id", "shoe_id", "round_id", "wager_id", "collection_id")
    for table in ("tables", "shoes", "rounds", "wagers", "commission_collections", "royal9_seats"):
        frame = pl.read_parquet(base / f"{table}.parquet")
        folder = data / table
        folder.mkdir(parents=True, exist_ok=True)
        for copy in range(copies):
            prefixed = frame.with_columns(
                pl.concat_str(pl.lit(f"c{copy}-"), pl.col(c)).alias(c)
                for c in id_columns
                if c in frame.columns
            )
            prefixed.write_parquet(folder / f"part-{copy:03d}.parquet", row_group_size=250_000)
    (data / "done").touch()
    return data


def measure_floor(data: Path) -> dict:
    def points(column: str) -> pl.Expr:
        rank = pl.element().str.head(1)
        value = (
            pl.when(rank.is_in(["T", "J", "Q", "K"]))
            .then(0)
            .when(rank == "A")
            .then(1)
            .otherwise(rank.cast(pl.Int32, strict=False))
        )
        return pl.col(column).list.eval(value).list.sum() % 10

    frame = (
        pl.scan_parquet(data / "rounds" / "*.parquet")
        .select(points("player_cards").alias("p"), points("banker_cards").alias("b"))
        .select(pl.len(), pl.col("p").sum(), pl.col("b").sum())
        .collect()
    )
    return {"rounds": frame.item(0, 0)}


def measure_replay(data: Path) -> dict:
    from auditor.load import open_dataset, scan_table
    from auditor.options import shoe_options
    from auditor.replay import replay, round_findings
    from auditor.rulepack import load_all

    dataset = open_dataset(data)
    options = shoe_options(scan_table(dataset, "shoes"), scan_table(dataset, "tables"))
    packs = load_all()
    findings = round_findings(replay(scan_table(dataset, "rounds"), options, packs), packs)
    found = findings.collect()
    return {"rounds": sum(s.rows for s in dataset.files["rounds"]), "findings": found.height}


def measure_python(data: Path) -> dict:
    """Row-by-row replay in plain Python: card values, counts, draws by Table 1, outcome."""
    rounds = pl.read_parquet(
        sorted((data / "rounds").glob("*.parquet"))[0],
        columns=["player_cards", "banker_cards", "player_total", "banker_total", "outcome"],
        n_rows=PYTHON_SAMPLE,
    )
    # The clock includes turning columns into Python rows: a row-by-row replay pays for it.
    started = time.perf_counter()
    problems = 0
    for player, banker, ptotal, btotal, outcome in rounds.iter_rows():
        p = [VALUE.get(c[0]) if c[0] in VALUE else int(c[0]) for c in player]
        b = [VALUE.get(c[0]) if c[0] in VALUE else int(c[0]) for c in banker]
        p2, b2 = (p[0] + p[1]) % 10, (b[0] + b[1]) % 10
        natural = p2 >= 8 or b2 >= 8
        player_draws = not natural and p2 <= 5
        if natural:
            banker_draws = False
        elif not player_draws:
            banker_draws = b2 <= 5
        else:
            t = p[2] if len(p) > 2 else 0
            banker_draws = b2 <= 2 or (b2 == 3 and t != 8) or (b2 == 4 and 2 <= t <= 7)
            banker_draws = banker_draws or (b2 == 5 and 4 <= t <= 7) or (b2 == 6 and t in (6, 7))
        pf, bf = sum(p) % 10, sum(b) % 10
        expected = "player" if pf > bf else "banker" if bf > pf else "tie"
        problems += (len(p) == 3) != player_draws
        problems += (len(b) == 3) != banker_draws
        problems += (pf != ptotal) + (bf != btotal) + (expected != outcome)
    elapsed = time.perf_counter() - started
    return {"rounds": rounds.height, "loop_seconds": elapsed, "problems": problems}


def measure_audit(data: Path) -> dict:
    from auditor.audit import run_audit

    out = data.parent / "audit-out"
    results = run_audit(data, out)
    return {
        "rounds": int(results.counts.filter(pl.col("table") == "rounds")["rows_in"].item()),
        "wagers": int(results.counts.filter(pl.col("table") == "wagers")["rows_in"].item()),
        "findings": results.findings.height,
    }


MEASURES = {
    "floor": measure_floor,
    "replay": measure_replay,
    "python": measure_python,
    "audit": measure_audit,
}


def run_child(name: str, data: Path) -> dict:
    started = time.perf_counter()
    output = subprocess.run(
        [sys.executable, __file__, "--measure", name, "--data", str(data)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    result = json.loads(output.strip().splitlines()[-1])
    result["wall_seconds"] = time.perf_counter() - started
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10_000_000)
    parser.add_argument("--work", type=Path, default=Path("/tmp/auditor-bench"))
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument(
        "--only",
        nargs="+",
        choices=sorted(MEASURES),
        default=["floor", "replay", "python", "audit"],
    )
    parser.add_argument("--measure", choices=sorted(MEASURES))
    parser.add_argument("--data", type=Path)
    args = parser.parse_args()
    if args.measure:
        started = time.perf_counter()
        result = MEASURES[args.measure](args.data)
        result["seconds"] = time.perf_counter() - started
        result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(json.dumps(result))
        return
    data = build_dataset(args.work, args.rounds)
    print(f"dataset: {data}")
    by: dict[str, dict] = {}
    for _ in range(args.repeat):  # interleaved, so that host noise hits every configuration
        for name in args.only:
            try:
                r = by[name] = run_child(name, data)
            except subprocess.CalledProcessError as failed:
                print(f"{name:<7} failed: {failed.returncode} {failed.stderr[-500:]}", flush=True)
                continue
            rate = r["rounds"] / (r.get("loop_seconds") or r["seconds"])
            extra = f", {r['wagers'] / r['seconds']:,.0f} wagers/s" if "wagers" in r else ""
            print(
                f"{name:<7} {r['rounds']:>11,} rounds  {r['seconds']:7.2f} s  "
                f"{rate:>12,.0f} rounds/s{extra}  peak {r['peak_rss_mb']:,.0f} MB",
                flush=True,
            )
    if {"floor", "replay"} <= by.keys():
        ratio = by["replay"]["seconds"] / by["floor"]["seconds"]
        print(f"replay / floor time: {ratio:.2f} (target <= 2)")
    if {"replay", "python"} <= by.keys():
        vector_rate = by["replay"]["rounds"] / by["replay"]["seconds"]
        python_rate = by["python"]["rounds"] / by["python"]["loop_seconds"]
        print(f"replay / row-by-row speed: {vector_rate / python_rate:.1f}x (target >= 10)")


if __name__ == "__main__":
    main()
