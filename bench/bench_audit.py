"""Audit benchmark: replay and whole-audit throughput and peak memory, with their floors.

Usage:
    python bench/bench_audit.py [--rounds 10000000] [--work /tmp/auditor-bench]
                                [--repeat N] [--baseline REV]

Builds (once, cached in --work) a simulated dataset of --rounds rounds: one simulated
million-round dataset copied into partition files with fresh ids, so a 10-million-round
dataset takes minutes rather than the simulator's hour. Then it runs each measurement
in its own process, so that each peak RSS is that configuration's alone:

- floor: a bare polars read of the round cards with point counts only;
- replay: the auditor's replay and round checks over the same rounds;
- python: a plain row-by-row Python replay on a sample (rounds per second);
- audit: the whole `auditor audit` (validate, replay, settle, procedures, write);
- noproc: the same without the procedures stage, to show what the shoe checks add;
- cli: the command `auditor audit DATA --out OUT` with its defaults, as a user runs it
  (interpreter start and imports included), peak RSS that of the command.

It prints figures; it asserts nothing. The host is noisy: with --repeat N the runs are
interleaved and the summary lines use each configuration's median run.

With --baseline REV every measurement but the floor also runs with the auditor at git
revision REV, installed in a virtual environment of its own (`baseline.py`, kept in
--work), on the same data, right after the current code's: each line is labelled
`current` or the revision, and the summary gives both medians and their ratio.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import polars as pl

try:
    from auditor.input.partition import PARTITION_ROUNDS
except ImportError:  # a --baseline revision laid out otherwise: its `cli` measure only
    PARTITION_ROUNDS = 1_500_000

BASE_ROUNDS = 1_000_000
PYTHON_SAMPLE = 200_000


# Every id a copy must not share with the others: the tables, shoes, rounds and wagers,
# and the people, so that each copy's dealers and patrons are people of their own (a
# patron shared by ten copies would play the same hands ten times, and surveillance
# would rightly call that luck too good to be true).
ID_COLUMNS = (
    "table_id", "shoe_id", "round_id", "wager_id", "collection_id", "dealer_id", "patron_id",
)  # fmt: skip
TABLES = ("tables", "shoes", "rounds", "wagers", "commission_collections", "royal9_seats")
# Written into each dataset's `done` marker: a dataset built by an older builder is rebuilt.
BUILDER_VERSION = "3"


def build_dataset(work: Path, rounds: int, faults: float = 0.0) -> Path:
    """A dataset of `rounds` rounds (whole copies of a simulated base of at most a million
    rounds, with `faults` the simulator's fault rate), cached in `work`."""
    from auditor.simulator.simulate import simulate

    base_rounds = min(rounds, BASE_ROUNDS)
    copies = max(1, rounds // base_rounds)
    suffix = f"-faults-{faults}" if faults else ""
    data = work / f"rounds-{copies * base_rounds}{suffix}"
    done = data / "done"
    if done.exists() and done.read_text() == BUILDER_VERSION:
        return data
    shutil.rmtree(data, ignore_errors=True)
    base = work / (f"base-{base_rounds}{suffix}" if suffix or base_rounds < BASE_ROUNDS else "base")
    if not (base / "rounds.parquet").exists():
        print(f"simulating {base_rounds:,} rounds into {base} ...", flush=True)
        simulate(base, rounds=base_rounds, seed=1, fault_rate=faults)
    for table in TABLES:
        frame = pl.read_parquet(base / f"{table}.parquet")
        folder = data / table
        folder.mkdir(parents=True, exist_ok=True)
        for copy in range(copies):
            prefixed = frame.with_columns(
                pl.concat_str(pl.lit(f"c{copy}-"), pl.col(c)).alias(c)
                for c in ID_COLUMNS
                if c in frame.columns
            )
            prefixed.write_parquet(folder / f"part-{copy:03d}.parquet", row_group_size=250_000)
    done.write_text(BUILDER_VERSION)
    return data


def measure_floor(data: Path, partition_rounds: int) -> dict:
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


def measure_replay(data: Path, partition_rounds: int) -> dict:
    from auditor.input.load import open_dataset
    from auditor.input.scan import scan_table
    from auditor.input.shoe_options import shoe_options
    from auditor.packs.model import load_all
    from auditor.replay.checks import round_findings
    from auditor.replay.derive import replay

    # Setup, outside the clock as the row-by-row replay's is: the rule packs, the files'
    # schemas. Inside: reading the rounds and the options, the replay and its checks.
    dataset = open_dataset(data)
    packs = load_all()
    started = time.perf_counter()
    options = shoe_options(scan_table(dataset, "shoes"), scan_table(dataset, "tables"))
    findings = round_findings(replay(scan_table(dataset, "rounds"), options, packs), packs)
    found = findings.collect()
    return {
        "rounds": sum(s.rows for s in dataset.files["rounds"]),
        "findings": found.height,
        "seconds": time.perf_counter() - started,
    }


def measure_python(data: Path, partition_rounds: int) -> dict:
    """The replay's work, row by row in plain Python, on a sample of rounds.

    The same work as the vectorized replay and its round checks, driven by the same
    rule packs: the shoe's ruleset and EZ option, card values, counts, naturals, the
    Player's and the Banker's draw decisions, the EZ events the ruleset announces, the
    outcome, and the comparison of each with what was logged; each discrepancy kept
    with the ids that name it, as the vectorized checks write their findings.
    """
    from auditor.packs.model import load_all

    packs = load_all()
    rules = {ruleset: _python_rules(pack) for ruleset, pack in packs.items()}
    first = sorted((data / "rounds").glob("*.parquet"))[0]
    rounds = pl.read_parquet(
        first,
        columns=[
            "round_id", "shoe_id", "table_id", "kind", "player_cards", "banker_cards",
            "player_total", "banker_total", "outcome", "ez_event",
        ],
        n_rows=PYTHON_SAMPLE,
    )  # fmt: skip
    shoe_files = sorted((data / "shoes").glob("*.parquet"))[0]
    table_files = sorted((data / "tables").glob("*.parquet"))[0]
    shoes = pl.read_parquet(shoe_files, columns=["shoe_id", "table_id"])
    tables = pl.read_parquet(table_files, columns=["table_id", "ruleset", "ez_baccarat"])
    # One options row per table in the benchmark's data: the shoe's options by dicts.
    table_options = {t: (r, ez) for t, r, ez in tables.iter_rows()}
    shoe_options = {shoe: table_options[table] for shoe, table in shoes.iter_rows()}
    # The clock includes turning columns into Python rows: a row-by-row replay pays for it.
    started = time.perf_counter()
    found: list[tuple[str, str, str, str]] = []
    for row in rounds.iter_rows():
        round_id, shoe, table, kind, player, banker, ptotal, btotal, outcome, ez_event = row
        ruleset, ez_table = shoe_options[shoe]
        values, naturals, player_rule, banker_table, events, announces = rules[ruleset]
        p = [values[c[0]] for c in player]
        b = [values[c[0]] for c in banker]
        p2, b2 = (p[0] + p[1]) % 10, (b[0] + b[1]) % 10
        natural = p2 in naturals or b2 in naturals
        player_action = "stand" if natural else player_rule[p2]
        third = p[2] if len(p) > 2 else None
        banker_draws = not natural and banker_table[(b2, third)]
        pf, bf = sum(p) % 10, sum(b) % 10
        finals = {"player": (pf, len(p)), "banker": (bf, len(b))}
        expected_event = None
        for name, (hand, total, cards, other, below) in events.items():
            occurred = finals[hand] == (total, cards) and finals[other][0] < below
            if ez_table and name in announces and occurred:
                expected_event = name
        expected = "player" if pf > bf else "banker" if bf > pf else "tie"
        if kind == "void":
            continue
        broken = (
            ("DRW001", len(p) == 3 and player_action == "stand"),
            ("DRW002", len(p) == 2 and player_action == "draw"),
            ("DRW003", len(b) == 3 and not banker_draws),
            ("DRW004", len(b) == 2 and banker_draws),
            ("TOT001", pf != ptotal),
            ("TOT002", bf != btotal),
            ("TOT003", expected != outcome),
            ("TOT004", expected_event != ez_event),
        )
        found += [(table, shoe, round_id, code) for code, wrong in broken if wrong]
    elapsed = time.perf_counter() - started
    return {"rounds": rounds.height, "loop_seconds": elapsed, "findings": len(found)}


def _python_rules(pack) -> tuple:
    """A pack's rules as plain dicts and sets for the row-by-row replay."""
    values = {rank: cited.value for rank, cited in pack.card_values.items()}
    naturals = set(pack.naturals.value)
    player_rule = {total: cited.value for total, cited in pack.player_draw.items()}
    banker_table = {
        (two, third): pack.banker_decision(two, third).draws
        for two in range(10)
        for third in (None, *range(10))
        if two not in naturals
    }
    other = {"player": "banker", "banker": "player"}
    events = {
        name: (e.hand, e.total, e.cards, other[e.hand], e.other_hand_below)
        for name, e in pack.ez.events.items()
    }
    return values, naturals, player_rule, banker_table, events, set(pack.ez.announce)


def measure_audit(data: Path, partition_rounds: int) -> dict:
    from auditor.pipeline import run_audit

    out = data.parent / "audit-out"
    results = run_audit(data, out, partition_rounds=partition_rounds)
    return {
        "rounds": int(results.counts.filter(pl.col("table") == "rounds")["rows_in"].item()),
        "wagers": int(results.counts.filter(pl.col("table") == "wagers")["rows_in"].item()),
        "findings": results.findings.height,
    }


def measure_audit_without_procedures(data: Path, partition_rounds: int) -> dict:
    """The whole audit less stage 5 (procedures): what the shoe checks add is the
    difference with `audit`."""
    from auditor.output.files import AuditOutputs, write_outputs
    from auditor.pipeline import find, run_validation

    validated = run_validation(data)
    findings = find(validated, partition_rounds=partition_rounds, with_procedures=False)
    results = AuditOutputs(findings, validated.quarantine, validated.counts)
    write_outputs(data.parent / "audit-out-noproc", results)
    return {
        "rounds": int(results.counts.filter(pl.col("table") == "rounds")["rows_in"].item()),
        "wagers": int(results.counts.filter(pl.col("table") == "wagers")["rows_in"].item()),
        "findings": findings.height,
    }


def measure_cli(data: Path, partition_rounds: int) -> dict:
    """The whole command, as a user runs it: any revision's command line takes this."""
    out = data.parent / "audit-out-cli"
    shutil.rmtree(out, ignore_errors=True)
    auditor = Path(sys.executable).with_name("auditor")
    started = time.perf_counter()
    done = subprocess.run(
        [str(auditor), "audit", str(data), "--out", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - started
    if done.returncode not in (0, 1):  # 1: findings were written
        raise SystemExit(f"auditor audit failed ({done.returncode}): {done.stderr[-2000:]}")
    rounds = pl.scan_parquet(data / "rounds" / "*.parquet").select(pl.len()).collect().item()
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "rounds": rounds,
        "seconds": seconds,
        "peak_rss_mb": usage.ru_maxrss / 1024,
        "cpu_seconds": usage.ru_utime + usage.ru_stime,
    }


MEASURES = {
    "floor": measure_floor,
    "replay": measure_replay,
    "python": measure_python,
    "audit": measure_audit,
    "noproc": measure_audit_without_procedures,
    "cli": measure_cli,
}


def run_child(name: str, data: Path, partition_rounds: int, python: str = sys.executable) -> dict:
    started = time.perf_counter()
    command = [python, __file__, "--measure", name, "--data", str(data)]
    output = subprocess.run(
        [*command, "--partition-rounds", str(partition_rounds)],
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
        default=["floor", "replay", "python", "audit", "noproc"],
    )
    parser.add_argument(
        "--baseline", metavar="REV", help="also run each measurement with the auditor at REV"
    )
    parser.add_argument("--measure", choices=sorted(MEASURES))
    parser.add_argument("--data", type=Path)
    parser.add_argument("--partition-rounds", type=int, default=PARTITION_ROUNDS)
    args = parser.parse_args()
    if args.measure:
        started = time.perf_counter()
        result = MEASURES[args.measure](args.data, args.partition_rounds)
        result.setdefault("seconds", time.perf_counter() - started)
        usage = resource.getrusage(resource.RUSAGE_SELF)
        result.setdefault("peak_rss_mb", usage.ru_maxrss / 1024)
        # CPU seconds (every thread's, and the command's for `cli`): less swayed than wall
        # time by the other jobs of a shared host.
        result.setdefault("cpu_seconds", usage.ru_utime + usage.ru_stime)
        print(json.dumps(result))
        return
    data = build_dataset(args.work, args.rounds)
    print(f"dataset: {data}")
    codes = [("current", sys.executable)]
    if args.baseline:
        from baseline import installed

        codes.append((args.baseline, str(installed(args.baseline, args.work))))
    runs: dict[tuple[str, str], list[dict]] = {}
    for _ in range(args.repeat):  # interleaved, so that host noise hits every configuration
        for name in args.only:
            # The floor reads no auditor code: it is measured once, with this interpreter.
            for label, python in codes[:1] if name == "floor" else codes:
                try:
                    r = run_child(name, data, args.partition_rounds, python)
                    runs.setdefault((name, label), []).append(r)
                except subprocess.CalledProcessError as failed:
                    print(
                        f"{name:<7} {label:<8} failed: {failed.returncode} {failed.stderr[-500:]}"
                    )
                    continue
                rate = r["rounds"] / (r.get("loop_seconds") or r["seconds"])
                extra = f", {r['wagers'] / r['seconds']:,.0f} wagers/s" if "wagers" in r else ""
                cpu = f"  cpu {r['cpu_seconds']:.1f} s" if "cpu_seconds" in r else ""
                print(
                    f"{name:<7} {label:<8} {r['rounds']:>11,} rounds  {r['seconds']:7.2f} s  "
                    f"{rate:>12,.0f} rounds/s{extra}  peak {r['peak_rss_mb']:,.0f} MB{cpu}",
                    flush=True,
                )
    if args.repeat > 1:
        print(f"medians of {args.repeat} runs:")
    floor = runs.get(("floor", "current"))
    for label, _ in codes:
        by = {name: _median_run(rs) for (name, code), rs in runs.items() if code == label}
        if floor:
            by["floor"] = _median_run(floor)
        print(f"-- {label}")
        _summary(by, runs, label)
    if args.baseline:
        _comparison(runs, args.baseline)


def _summary(by: dict[str, dict], runs: dict[tuple[str, str], list[dict]], label: str) -> None:
    """The targets' lines for one code's median runs."""
    if {"floor", "replay"} <= by.keys():
        ratio = by["replay"]["seconds"] / by["floor"]["seconds"]
        print(f"replay / floor time: {ratio:.2f} (target <= 2)")
    if {"replay", "python"} <= by.keys():
        vector_rate = by["replay"]["rounds"] / by["replay"]["seconds"]
        python_rate = by["python"]["rounds"] / by["python"]["loop_seconds"]
        print(f"replay / row-by-row speed: {vector_rate / python_rate:.1f}x (target >= 10)")
    for audit in ("audit", "cli"):
        if audit not in by:
            continue
        seconds, peak = by[audit]["seconds"], by[audit]["peak_rss_mb"]
        print(f"whole {audit}: {seconds:.1f} s, peak {peak:,.0f} MB (target < 60 s, < 2,048 MB)")
        if "floor" in by:
            ratio = seconds / by["floor"]["seconds"]
            print(f"whole {audit} / floor time: {ratio:.1f} (target <= 12)")
    if {"audit", "noproc"} <= by.keys():
        growth = by["audit"]["seconds"] / by["noproc"]["seconds"] - 1
        print(f"procedures stage adds {growth:.0%} to the audit (target < 33%)")
        # Each audit beside the run without procedures made right after it.
        pairs = zip(runs[("audit", label)], runs[("noproc", label)], strict=False)
        each = sorted(a["seconds"] / n["seconds"] - 1 for a, n in pairs)
        if len(each) > 1:
            print(f"  run by run: {each[0]:.0%} to {each[-1]:.0%}")


def _comparison(runs: dict[tuple[str, str], list[dict]], baseline: str) -> None:
    """Each measurement's median wall and CPU seconds beside the baseline's, with their
    ratios and the range of the run-by-run wall ratios (each current run against the
    baseline run made right after it)."""
    print(f"-- current against {baseline} (a ratio below 1: the current code is faster)")
    heading = ("run", "current s", "base s", "ratio", "run by run", "cpu s", "base", "ratio")
    print("{:<7} {:>10} {:>8} {:>6} {:>11} {:>8} {:>8} {:>6}  peak MB".format(*heading))
    for name in dict.fromkeys(name for name, _ in runs):
        mine, theirs = runs.get((name, "current")), runs.get((name, baseline))
        if not mine or not theirs:
            continue
        key = "loop_seconds" if "loop_seconds" in mine[0] else "seconds"
        a, b = _median_run(mine)[key], _median_run(theirs)[key]
        each = sorted(m[key] / t[key] for m, t in zip(mine, theirs, strict=False))
        ranged = f"{each[0]:.2f}-{each[-1]:.2f}"
        ca, cb = (sorted(r["cpu_seconds"] for r in rs)[(len(rs) - 1) // 2] for rs in (mine, theirs))
        peaks = " / ".join(f"{_median_run(rs)['peak_rss_mb']:,.0f}" for rs in (mine, theirs))
        print(
            f"{name:<7} {a:>10.2f} {b:>8.2f} {a / b:>6.2f} {ranged:>11} "
            f"{ca:>8.1f} {cb:>8.1f} {ca / cb:>6.2f}  {peaks}"
        )


def _median_run(results: list[dict]) -> dict:
    """The run with the median time (the lower middle one of an even number)."""
    ordered = sorted(results, key=lambda r: r.get("loop_seconds") or r["seconds"])
    return ordered[(len(ordered) - 1) // 2]


if __name__ == "__main__":
    main()
