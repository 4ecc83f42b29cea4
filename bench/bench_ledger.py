"""The review ledger's check on read (`archive.ledger_read`) at 100,000 records: the first
read, which checks every record and writes the checkpoint, and the reads after it, which
hash the checked prefix and check only what was appended since. Prints figures; asserts
nothing.

    python bench/bench_ledger.py [--records 100000] [--appended 100]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from auditor.archive.ledger_format import GENESIS, encoded_line, record_hash
from auditor.archive.ledger_read import CHECKPOINT_FILE, check_for_reading


def write_ledger(folder: Path, records: int, first_seq: int = 1, prev: str = GENESIS) -> str:
    lines = []
    for seq in range(first_seq, first_seq + records):
        record = {
            "seq": seq,
            "finding_id": f"{seq:020x}",
            "identity": {
                "rule": "PAY001",
                "table_id": None,
                "shoe_id": None,
                "round_id": f"R{seq:08d}",
                "wager_id": f"W{seq:08d}",
                "discriminator": None,
            },
            "run_id": "a" * 32,
            "status": "explained",
            "note": "short pay corrected at the cage, receipt 8812",
            "by": "J. Doe",
            "at": "2026-11-25T09:14:03.512044+00:00",
            "prev": prev,
        }
        record["hash"] = prev = record_hash(record)
        lines.append(encoded_line(record) + b"\n")
    with (folder / "reviews.jsonl").open("ab") as out:
        out.write(b"".join(lines))
    return prev


def timed(folder: Path) -> float:
    start = time.perf_counter()
    check_for_reading(folder)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--appended", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        last = write_ledger(folder, args.records)
        size = (folder / "reviews.jsonl").stat().st_size
        print(f"ledger: {args.records:,} records, {size / 1e6:.1f} MB")
        print(f"first read (every record, checkpoint written): {timed(folder):.2f} s")
        print(f"next read (checkpoint, nothing appended):      {timed(folder):.3f} s")
        write_ledger(folder, args.appended, args.records + 1, last)
        print(f"read after {args.appended} appended records:           {timed(folder):.3f} s")
        (folder / CHECKPOINT_FILE).unlink()
        print(f"read without the checkpoint:                   {timed(folder):.2f} s")


if __name__ == "__main__":
    main()
