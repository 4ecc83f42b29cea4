"""Report benchmark: what the nightly HTML report adds to `auditor audit`, and its size.

Usage:
    python bench/bench_report.py [--rounds 10000000] [--faults 0.01] [--work DIR] [--repeat N]

Builds (once, cached in --work) a simulated dataset of --rounds rounds with injected
faults, so that the night has findings to report: one simulated million-round night
(`auditor simulate --faults`) copied into partition files with fresh ids, as
bench_audit.py does, so ten million rounds take minutes rather than the simulator's hour.
Then, each in its own process:

- audit: the whole `auditor audit`, report included;
- noreport: the same audit without the report;
- report: the nightly report alone, built again from the audit's OUTDIR (its catalog).

It prints the times, the report's size (report.html and the per-table pages beside it)
and the targets (the report adds under 10 s, report.html under 5 MB). It asserts nothing;
the host is noisy, so --repeat N interleaves the runs and the summary uses medians.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_audit import build_dataset


def measure(name: str, data: Path, out: Path) -> dict:
    started = time.perf_counter()
    if name == "report":
        from auditor.report.nightly import write_nightly

        with tempfile.TemporaryDirectory(dir=out.parent) as folder:
            # The catalog of the finished run, copied beside the pages as the audit has it.
            target = Path(folder)
            (target / "audit.duckdb").symlink_to(out / "audit.duckdb")
            names = write_nightly(target)
            seconds = time.perf_counter() - started
            return {"seconds": seconds, **_sizes(target, names)}
    import auditor.pipeline

    # The report's own time inside the audit, timed where the pipeline calls it: the
    # difference of two whole audits drowns in the host's noise.
    inside: list[float] = []
    write_nightly = auditor.pipeline.write_nightly

    def timed(folder: Path) -> list[str]:
        begun = time.perf_counter()
        names = write_nightly(folder)
        inside.append(time.perf_counter() - begun)
        return names

    auditor.pipeline.write_nightly = timed
    results = auditor.pipeline.run_audit(data, out, report=name == "audit")
    seconds = time.perf_counter() - started
    result = {"seconds": seconds, "findings": results.findings.height}
    if name == "audit":
        result |= _sizes(out, ["report.html", *_pages(out)]) | {"inside": inside[0]}
    return result


def _pages(out: Path) -> list[str]:
    return sorted(str(p.relative_to(out)) for p in (out / "report").glob("*.html"))


def _sizes(folder: Path, names: list[str]) -> dict:
    sizes = {name: (folder / name).stat().st_size for name in names}
    return {
        "report_html_bytes": sizes.get("report.html", 0),
        "pages": len(sizes) - 1,
        "all_pages_bytes": sum(sizes.values()),
        "largest_page_bytes": max(sizes.values(), default=0),
    }


def run_child(name: str, data: Path, out: Path) -> dict:
    command = [sys.executable, __file__, "--measure", name, "--data", str(data), "--out", str(out)]
    started = time.perf_counter()
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["wall_seconds"] = time.perf_counter() - started
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10_000_000)
    parser.add_argument("--faults", type=float, default=0.01)
    parser.add_argument("--work", type=Path, default=Path("/tmp/auditor-bench-report"))
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--measure", choices=("audit", "noreport", "report"))
    parser.add_argument("--data", type=Path)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, args.data, args.out)))
        return
    data = build_dataset(args.work, args.rounds, args.faults)
    print(f"dataset: {data}", flush=True)
    runs: dict[str, list[dict]] = {"audit": [], "noreport": [], "report": []}
    for _ in range(args.repeat):
        for name in ("noreport", "audit", "report"):
            out = args.work / ("out-noreport" if name == "noreport" else "out")
            r = run_child(name, data, out)
            runs[name].append(r)
            extra = (
                f"  report.html {r['report_html_bytes'] / 1e6:.2f} MB, {r['pages']} pages "
                f"beside it, {r['all_pages_bytes'] / 1e6:.1f} MB in all"
                if "report_html_bytes" in r
                else ""
            )
            print(f"{name:<9} {r['seconds']:7.2f} s{extra}", flush=True)
    inside = statistics.median(r["inside"] for r in runs["audit"])
    audit = statistics.median(r["seconds"] for r in runs["audit"])
    bare = statistics.median(r["seconds"] for r in runs["noreport"])
    build = statistics.median(r["seconds"] for r in runs["report"])
    size = runs["audit"][-1]["report_html_bytes"] / 1e6
    print(f"findings: {runs['audit'][-1]['findings']:,}")
    print(
        f"report build alone: {build:.1f} s; audit with report {audit:.1f} s, without {bare:.1f} s"
    )
    print(f"the report adds {inside:.1f} s inside the audit (target < 10 s); the two whole")
    print(f"  audits differ by {audit - bare:.1f} s, host noise included")
    print(f"report.html: {size:.2f} MB (target < 5 MB)")


if __name__ == "__main__":
    main()
