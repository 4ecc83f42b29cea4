"""Another revision of the auditor, installed in a virtual environment of its own, for the
benchmarks' `--baseline REV`: the same measurements run with that install on the same data,
interleaved with the current code's, so that a shared host's noise hits both alike.

`installed(rev, work)` exports the revision with `git archive` (the repository this file
belongs to) into `work/baseline-SHA/src`, creates `work/baseline-SHA/venv` with the running
interpreter (`python -m venv`) and installs the export there with pip (its dependencies
from the package index, or pip's cache). The install is kept for the next run: a finished
one is marked by a `done` file.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent


def resolve(rev: str) -> str:
    """The full commit id of `rev` in this repository."""
    done = subprocess.run(
        ["git", "-C", str(REPOSITORY), "rev-parse", "--verify", f"{rev}^{{commit}}"],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"--baseline {rev}: not a revision of {REPOSITORY}")
    return done.stdout.strip()


def installed(rev: str, work: Path) -> Path:
    """The Python interpreter of a virtual environment holding the auditor at `rev`."""
    sha = resolve(rev)
    home = work / f"baseline-{sha[:12]}"
    python = home / "venv" / "bin" / "python"
    if (home / "done").exists():
        return python
    shutil.rmtree(home, ignore_errors=True)
    source = home / "src"
    source.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(REPOSITORY), "archive", "--format=tar", sha],
        capture_output=True,
        check=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(source, filter="data")
    print(f"installing {rev} ({sha[:12]}) into {home / 'venv'} ...", file=sys.stderr, flush=True)
    subprocess.run([sys.executable, "-m", "venv", str(home / "venv")], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", str(source)], check=True)
    (home / "done").write_text(sha)
    return python


def auditor_command(python: Path) -> str:
    """The `auditor` console script beside an interpreter."""
    return str(python.with_name("auditor"))
