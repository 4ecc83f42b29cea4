"""Files a command writes with `--out FILE` never land in what another command owns.

An output set is the audit's (its manifest names every file, and a file written there
makes the set read as changed, or replaces one of its outputs); an archive is `auditor
archive`'s (its ledger, its catalog, its runs); an input dataset is evidence the tool only
reads. So a report, a query's result or a diff is refused, before any work, when its file
would lie in a folder holding the tool's manifest or archive marker, or in a dataset
named by the manifest of a set the command reads. The target is resolved first: a
symlinked parent, or a link at the target itself, is followed to where the bytes would go.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path

from auditor.archive.catalog import RUNS, SET
from auditor.archive.store import ARCHIVE_FILE
from auditor.errors import InputError
from auditor.input.remote import local_disk_path
from auditor.output.outdir import MANIFEST_FILE, is_manifest
from auditor.regular_files import read_regular

ARCHIVED_SETS = f"{RUNS}/*/{SET}"


class OwnedTarget(InputError):
    """`--out FILE` names a place inside an output set, an archive or an input dataset."""


def refuse_owned_target(target: Path, reads: Iterable[Path] = (), flag: str = "--out") -> None:
    """Refuse writing `target` when it lies in an output set, an archive, or a dataset that
    a set or archive in `reads` (the folders the command reads) was audited from."""
    place = Path(target).expanduser().resolve()
    owner = _owning_folder(place) or _owning_dataset(place, reads)
    if owner is not None:
        raise OwnedTarget(
            f"{flag} {target}: lies in {owner}, which only the command that writes it may "
            "change; write the file somewhere else",
            path=str(target),
        )


def _owning_folder(place: Path) -> str | None:
    """The output set or archive holding `place`, in words, or None."""
    for folder in place.parents:
        if _is_output_set(folder):
            return f"the output set {folder}"
        if (folder / ARCHIVE_FILE).is_file():
            return f"the archive {folder}"
    return None


def _owning_dataset(place: Path, reads: Iterable[Path]) -> str | None:
    """The input dataset (or input file) of a set in `reads` holding `place`, or None."""
    for dataset, files in _inputs_of(reads):
        if place in files or dataset in (place, *place.parents):
            return f"the input dataset {dataset}"
    return None


def _inputs_of(reads: Iterable[Path]) -> Iterator[tuple[Path, set[Path]]]:
    """Each local dataset named by the manifests of the sets in `reads` (an archive's
    too), resolved, with its input files, resolved."""
    for folder in reads:
        folder = Path(folder).expanduser()
        for set_folder in (folder, *sorted(folder.glob(ARCHIVED_SETS))):
            manifest = _manifest(set_folder)
            dataset = _local(manifest.get("dataset"))
            if dataset is None:
                continue
            entries = manifest.get("inputs") or []
            paths = (_local(e.get("path")) for e in entries if isinstance(e, dict))
            yield dataset, {p for p in paths if p is not None}


def _manifest(folder: Path) -> dict:
    try:
        data = json.loads(read_regular(folder / MANIFEST_FILE))
    except (OSError, ValueError, InputError):
        return {}
    if not isinstance(data, dict) or not isinstance(data.get("inputs", []), list):
        return {}
    return data


def _local(location: object) -> Path | None:
    if not isinstance(location, str) or not location:
        return None
    path = local_disk_path(location)
    return path.expanduser().resolve() if path is not None else None


def _is_output_set(folder: Path) -> bool:
    try:
        return is_manifest(read_regular(folder / MANIFEST_FILE))
    except (OSError, InputError):
        return False
