"""The simulator's output folders: which it may write into, and how it marks its own.

Every folder the simulator writes holds a marker, `_simulation.json`: what wrote it and
with which arguments (its `written_by` is "auditor simulate"). The marker is written
first, before any data, so that a run that stopped part way is still recognised. The
leading `_` is the job marker's convention (`_SUCCESS`): Hive, Spark, Arrow and the
audit's own loader pass over it.

A folder is a previous simulation's output when it holds that marker and nothing else
but the files a simulation writes: the contract tables' `NAME.parquet` and
`fault_key.parquet`, and, for an archive of nights, `YYYY-MM-DD` folders that are
themselves previous simulations. The simulator writes into a folder only when it is
missing, empty or a previous simulation's output, which it then removes file by file;
anything else (a dataset, a copy of the sample, a stray note, a symlink) is refused with
one message and left as it was.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from auditor.contract import TABLES
from auditor.errors import AuditorError

MARKER = "_simulation.json"
WRITTEN_BY = "auditor simulate"
DATA_FILES = frozenset({*(f"{table}.parquet" for table in TABLES), "fault_key.parquet"})
NIGHT_FOLDER = re.compile(r"\d{4}-\d{2}-\d{2}")


class FolderInUse(AuditorError):
    """The output folder holds something that no simulation wrote."""


def claim(out: Path, arguments: dict[str, object]) -> None:
    """Make `out` an empty folder that holds only a new marker recording `arguments`.

    Refused (FolderInUse, exit 2) when `out` is not a folder, or holds anything but a
    previous simulation's output; that output is removed.
    """
    if os.path.lexists(out) and not out.is_dir():
        raise FolderInUse(f"{out}: is not a folder; the simulator writes a dataset folder")
    if out.is_dir():
        if problem := _foreign(out):
            raise FolderInUse(
                f"{out}: {problem}; the simulator writes only into a missing or empty "
                "folder, or one holding nothing but a previous simulation's output (marked "
                f"by its {MARKER}), and overwrites nothing else: choose another folder, or "
                "empty this one"
            )
        _remove_contents(out)
    out.mkdir(parents=True, exist_ok=True)
    marker = {"written_by": WRITTEN_BY, **arguments}
    (out / MARKER).write_text(json.dumps(marker, indent=2, sort_keys=True) + "\n", "utf-8")


def _foreign(folder: Path, within: str = "") -> str | None:
    """What in `folder` keeps it from being replaced, in words; None when nothing does.
    `within`: the folder's path from the one claimed, for a night's folder."""
    names = sorted(os.listdir(folder))
    if not names:
        return None
    if MARKER not in names or not _is_marker(folder / MARKER):
        more = f" and {len(names) - 1:,} more" if len(names) > 1 else ""
        return f"holds '{within}{names[0]}'{more} but no {MARKER} of a simulation"
    for name in names:
        path = folder / name
        if name in DATA_FILES or name == MARKER:
            if path.is_file() and not path.is_symlink():
                continue
        elif NIGHT_FOLDER.fullmatch(name) and path.is_dir() and not path.is_symlink():
            if problem := _foreign(path, f"{within}{name}/"):
                return problem
            continue
        return f"holds '{within}{name}', which no simulation wrote"
    return None


def _is_marker(path: Path) -> bool:
    if path.is_symlink() or not path.is_file():
        return False
    try:
        marker = json.loads(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    return isinstance(marker, dict) and marker.get("written_by") == WRITTEN_BY


def _remove_contents(folder: Path) -> None:
    """Remove a previous simulation's files (checked by `_foreign` just before), its
    marker last: a removal that stops part way leaves a folder still recognised."""
    for name in sorted(os.listdir(folder), key=lambda name: (name == MARKER, name)):
        path = folder / name
        if path.is_dir() and not path.is_symlink():
            _remove_contents(path)
            path.rmdir()
        else:
            path.unlink()
