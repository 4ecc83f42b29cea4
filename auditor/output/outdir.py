"""The output folder: which folders a run may write into, and how a run's whole output set
replaces the previous one at once.

A run writes every output into a staging folder beside OUTDIR and ends with a manifest
naming each file with its size and SHA-256. The staging folder then takes OUTDIR's place
in one step: an atomic exchange of the two folders (Linux `renameat2`, RENAME_EXCHANGE)
where the file system offers it, otherwise two renames with the previous set kept aside
until the new one is in place. A reader, or a re-run, only ever finds one complete set in
OUTDIR; a run killed at any moment leaves the previous set there (or, in the gap between
the two renames of the fallback, aside, from where the next run puts it back).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from auditor.errors import InputError
from auditor.output.lock import holding

MANIFEST_FILE = "manifest.json"
TOOL = "auditor"
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


class OutdirError(InputError):
    """OUTDIR cannot take a run's outputs; nothing was written or removed."""


@contextmanager
def claim(out: Path, dataset: Path | None = None) -> Iterator[Path]:
    """OUTDIR resolved, checked and locked for the block: the folder a run then writes
    its set into. The overlap with the dataset is refused before anything is created (the
    lock file beside OUTDIR, a missing parent), so that a refused OUTDIR inside the
    dataset leaves no trace there."""
    target = resolved(out)
    if dataset is not None:
        refuse_overlap(target, Path(dataset).expanduser().resolve())
    with holding(target):
        yield prepare(target, dataset)


def prepare(out: Path, dataset: Path | None = None) -> Path:
    """The folder the outputs go into, checked: missing, empty, or holding a previous run's
    outputs (its manifest), never the dataset, a folder inside it or a folder holding it.
    Both paths are resolved first (every `..` and every symlink of every parent), so that
    no spelling of a path reaches the dataset. A symlinked OUTDIR is followed to its
    target, where the outputs then switch in. Leftovers of a killed run are cleared: call
    it while holding the folder's lock (`claim`), so that they are never a live run's."""
    out = resolved(out)
    if dataset is not None:
        refuse_overlap(out, Path(dataset).expanduser().resolve())
    _restore_aside(out)
    _clear_staging(out)
    if out.exists() and not out.is_dir():
        raise OutdirError(f"{out}: not a folder")
    if out.is_dir() and any(out.iterdir()):
        if not is_output_set(out):
            raise foreign_files(out)
        if unnamed := files_not_named(out):
            raise unnamed_files(out, unnamed)
    return out


def resolved(path: Path | str) -> Path:
    """`path` absolute, with every symlink and `..` resolved as the system would follow
    them; an output folder must have a parent and a name of its own."""
    path = Path(path).expanduser().resolve()
    if path == Path(path.anchor):
        raise OutdirError(f"{path}: the root folder cannot be an output folder")
    return path


def refuse_overlap(out: Path, data: Path) -> None:
    """Refuse an OUTDIR that is the dataset, lies inside it or holds it. Paths are
    compared resolved, then folders by identity (device and inode), which also sees
    through bind mounts and hard-linked folders that no path comparison can."""
    if out == data or data in out.parents or out in data.parents:
        raise _overlap(out, data)
    identity = _identity(data)
    if identity is not None and any(_identity(p) == identity for p in (out, *out.parents)):
        raise _overlap(out, data)
    held = _identity(out)
    if held is not None and any(_identity(p) == held for p in data.parents):
        raise _overlap(out, data)
    for link, reached in linked_inputs(data):
        if reached == out or out in reached.parents or reached in out.parents:
            raise OutdirError(
                f"{out}: the dataset's {link} is a link to {reached}, which the output "
                "folder would replace or lie inside; choose a folder apart from the "
                "dataset's files"
            )


def linked_inputs(data: Path) -> Iterator[tuple[Path, Path]]:
    """Each link under the dataset folder (a file or a folder of a table), with where it
    resolves to: an input that is a link lives outside the folder, where no comparison
    of the folder's own path can see it."""
    for folder, folders, files in os.walk(data):
        for name in (*folders, *files):
            entry = Path(folder, name)
            if entry.is_symlink():
                yield entry, entry.resolve()


def _overlap(out: Path, data: Path) -> OutdirError:
    return OutdirError(
        f"{out}: the output folder would hold the dataset {data}, or lie inside it; "
        "choose a folder apart from the dataset"
    )


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        status = path.stat()
    except OSError:
        return None
    return (status.st_dev, status.st_ino)


def foreign_files(location: object) -> OutdirError:
    """The refusal of an OUTDIR that holds files of something else than an audit."""
    return OutdirError(
        f"{location}: holds files that are not an audit's outputs (no {MANIFEST_FILE}); "
        "choose an empty or new folder, or a previous run's output folder"
    )


def files_not_named(folder: Path) -> list[str]:
    """The files (and links) in the output set `folder` that its manifest does not name,
    by their path in the set. Replacing the set removes them: files a run did not write
    (a planted manifest over a dataset, a dataset's file linked there) are not its to
    remove."""
    try:
        named = json.loads((folder / MANIFEST_FILE).read_bytes()).get("files")
    except (OSError, ValueError, AttributeError):
        named = None
    if not isinstance(named, dict):
        named = {}
    present = []
    for parent, folders, files in os.walk(folder):
        links = [name for name in folders if Path(parent, name).is_symlink()]
        for name in (*files, *links):
            present.append(Path(parent, name).relative_to(folder).as_posix())
    return sorted(name for name in present if name != MANIFEST_FILE and name not in named)


def unnamed_files(location: object, names: list[str]) -> OutdirError:
    """The refusal of an output set holding files its manifest does not name."""
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3:,} more" if len(names) > 3 else "")
    return OutdirError(
        f"{location}: holds files its {MANIFEST_FILE} does not name ({shown}); a run "
        "replaces only an audit's own outputs: move them away or choose another folder"
    )


def is_output_set(folder: Path) -> bool:
    try:
        return is_manifest((folder / MANIFEST_FILE).read_bytes())
    except OSError:
        return False


def is_manifest(data: bytes) -> bool:
    """Whether `data` is the manifest of an output set this tool wrote."""
    try:
        manifest = json.loads(data)
    except ValueError:
        return False
    return isinstance(manifest, dict) and manifest.get("tool") == TOOL


def staging_folder(out: Path) -> Path:
    """A new folder beside OUTDIR (the same file system, so that it can switch in), with a
    folder's usual permissions rather than a temporary folder's private ones."""
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.run-"))
    mask = os.umask(0o022)
    os.umask(mask)
    staging.chmod(0o777 & ~mask)
    return staging


def write_manifest(folder: Path, files: Iterable[str], run: dict) -> None:
    """Last of a set: each file's size and SHA-256, so that a reader can tell a complete
    set and which run wrote it."""
    entries = {}
    for name in files:
        path = folder / name
        entries[name] = {"bytes": path.stat().st_size, "sha256": sha256_of(path)}
    manifest = {"tool": TOOL, **run, "files": entries}
    (folder / MANIFEST_FILE).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")


def sha256_of(path: Path) -> str:
    """The file's SHA-256, once its bytes are on disk (fsync): the set is switched in
    only after all of it is."""
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while chunk := stream.read(1 << 20):
            digest.update(chunk)
        os.fsync(stream.fileno())
    return digest.hexdigest()


def switch_in(staging: Path, out: Path) -> None:
    """Put the complete set in `staging` in OUTDIR's place, and drop the previous set."""
    fsync_folder(staging)
    if not out.exists():
        os.rename(staging, out)
    elif _exchange(staging, out):
        shutil.rmtree(staging)  # now the previous set
    else:
        aside = out.with_name(f".{out.name}.previous")
        _remove_entry(aside)
        os.rename(out, aside)
        os.rename(staging, out)
        shutil.rmtree(aside)
    fsync_folder(out.parent)


def _exchange(a: Path, b: Path) -> bool:
    """Swap two folders in one step; False where the system or file system cannot."""
    libc_name = ctypes.util.find_library("c")
    if libc_name is None:
        return False
    libc = ctypes.CDLL(libc_name, use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is None:
        return False
    done = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if done == 0:
        return True
    if ctypes.get_errno() in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(ctypes.get_errno(), f"cannot switch {a} into {b}")


def _restore_aside(out: Path) -> None:
    """A run killed between the fallback's two renames left the previous set aside."""
    aside = out.with_name(f".{out.name}.previous")
    # Only a real folder: a symlink planted there must not become OUTDIR.
    if not out.exists() and not aside.is_symlink() and is_output_set(aside):
        os.rename(aside, out)


def _remove_entry(path: Path) -> None:
    """Remove what is at `path` without following it: a symlink planted there goes, not
    what it points at."""
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)


def _clear_staging(out: Path) -> None:
    if out.parent.is_dir():
        for leftover in out.parent.glob(f".{out.name}.run-*"):
            shutil.rmtree(leftover, ignore_errors=True)


def fsync_folder(folder: Path) -> None:
    """The folder's entries on disk (a rename in it survives a power cut); nothing where
    it cannot be opened."""
    try:
        handle = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(handle)
    finally:
        os.close(handle)
