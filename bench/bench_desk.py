"""The review desk's queue at 100,000 findings in force: how long the first page takes,
through the whole application (login cookie, the queue's count and page, the template,
the security headers) with Starlette's in-process client, and the queue's SQL alone.

The queue answers from the desk's state in memory (`desk.snapshot`), which is built once
per change of the archive (a run added, a review recorded): the state is built here from
a synthetic night of findings and reviews, and the time to build it is printed too. The
catalog read that feeds it in a real archive is `bench_archive.py`'s "query over every
finding". Prints figures; asserts nothing.

    python bench/bench_desk.py [--findings 100000] [--reviews 10000] [--repeat 20]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
from starlette.testclient import TestClient

from auditor.archive.store import init_archive
from auditor.desk.app import create_app
from auditor.desk.queue import parse_filter, queue_page
from auditor.desk.snapshot import REVIEW_SCHEMA, Archived, LedgerHead, Stamp, State, _database
from auditor.desk.users import add_user

PASSWORD = "a bench password"
RULES = ("PAY001", "PAY002", "COM002", "WAG001", "SHO014", "TBL001", "DRW003")


def synthetic(findings: int, reviews: int) -> tuple[Archived, pa.Table]:
    first = date(2026, 11, 1)
    ids = [f"{i:020x}" for i in range(findings)]
    days = [first + timedelta(days=i % 30) for i in range(findings)]
    table = pa.table(
        {
            "finding_id": ids,
            "run_id": [f"{i % 30:032x}" for i in range(findings)],
            "gaming_day": pa.array(days, pa.date32()),
            "property_id": [f"P{i % 3}" for i in range(findings)],
            "table_id": [f"T{i % 120:03d}" for i in range(findings)],
            "shoe_id": [f"S{i // 80:06d}" for i in range(findings)],
            "round_id": [f"R{i:08d}" for i in range(findings)],
            "wager_id": [f"W{i:08d}" for i in range(findings)],
            "dealer_id": [f"D{i % 400:04d}" for i in range(findings)],
            "patron_id": [f"PT{i % 9000:05d}" for i in range(findings)],
            "rule": [RULES[i % len(RULES)] for i in range(findings)],
            "severity": [("high", "medium", "low")[i % 3] for i in range(findings)],
            "impact": pa.array(
                [Decimal((i * 7919) % 250000) / 100 - 1000 for i in range(findings)],
                pa.decimal128(18, 2),
            ),
            "message": [f"Banker wager {i} settled wrong" for i in range(findings)],
        }
    )
    coverage = pa.table(
        {
            "gaming_day": pa.array(sorted(set(days)), pa.date32()),
            "runs": [1] * len(set(days)),
            "tables": [120] * len(set(days)),
        }
    )
    alerts = pa.table({"gaming_day": pa.array([], pa.date32()), "alerts": pa.array([], pa.int64())})
    runs = pa.table({"run_id": pa.array([], pa.string())})
    records = pa.Table.from_pylist(
        [
            {"seq": s + 1, "finding_id": ids[s * (findings // max(reviews, 1))],
             "run_id": "0" * 32, "status": "explained", "note": "checked", "by": "bench",
             "at": "2026-11-25T09:14:03+00:00"}
            for s in range(reviews)
        ],
        schema=REVIEW_SCHEMA,
    )  # fmt: skip
    return Archived(Stamp(None), table, coverage, alerts, runs), records


class Fixed:
    """A snapshot that always hands the same state."""

    def __init__(self, state: State) -> None:
        self.state = state

    def current(self) -> State:
        return self.state


def timed(action, repeat: int) -> tuple[float, float]:
    spent = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        spent.append(time.perf_counter() - start)
    return statistics.median(spent) * 1000, max(spent) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--findings", type=int, default=100_000)
    parser.add_argument("--reviews", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    archived, records = synthetic(args.findings, args.reviews)
    start = time.perf_counter()
    con = _database(archived, records)
    built = time.perf_counter() - start
    state = State(archived, Stamp(None), con, LedgerHead(args.reviews, "0" * 64))
    print(f"{args.findings:,} findings in force, {args.reviews:,} review records")
    print(f"state built in memory: {built * 1000:.0f} ms (once per change of the archive)")
    for label, query in (
        ("first page, open, by money", {}),
        ("first page, every status, newest", {"status": "any", "sort": "newest"}),
        ("one dealer", {"dealer": "D0042", "status": "any"}),
        ("page 1,000", {"status": "any", "page": "1000"}),
    ):
        found = parse_filter(query)
        median, worst = timed(lambda f=found: queue_page(state.cursor(), f), args.repeat)
        print(f"queue SQL, {label}: median {median:.1f} ms, worst {worst:.1f} ms")
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        init_archive(root / "archive", key_path=root / "archive.key")
        add_user(root / "users.json", "bench", "regulator", PASSWORD)
        app = create_app(root / "archive", root / "users.json")
        app.app.state.desk.snapshot = Fixed(state)
        client = TestClient(app)
        form = client.get("/login").text
        token = form.split('name="csrf" value="', 1)[1].split('"', 1)[0]
        client.post("/login", data={"csrf": token, "name": "bench", "password": PASSWORD})
        for label, path in (
            ("GET /queue (first page)", "/queue"),
            ("GET /queue?status=any&sort=newest", "/queue?status=any&sort=newest"),
            ("GET / (nights)", "/"),
        ):
            assert client.get(path).status_code == 200
            median, worst = timed(lambda p=path: client.get(p), args.repeat)
            print(f"{label}: median {median:.1f} ms, worst {worst:.1f} ms")


if __name__ == "__main__":
    main()
