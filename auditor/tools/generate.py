"""`python -m auditor.tools.generate [--check] [--root DIR] [--regulations DIR]`: the one
way to rewrite the files the repository holds that are made from other files.

- `auditor/check_docs.json`: every check's documentation, from the pipeline's checks
  (`auditor rules` reads it instead of importing the pipeline);
- `auditor/odds/outcomes.json`: the exact enumerations of the built-in packs' shoes;
- `rules/regulations/RULESET.sections.json`: INDEX.md's section rows for each built-in
  pack's ruleset;
- `rules/regulations/RULESET.texts.json`: each regulation's section texts, quoted by
  the reports.

The last two are made from the regulations folder, which does not ship with the
repository: they are made where it is at hand (`--regulations`, by default
`../shared/regulations` beside the repository) and reported as skipped otherwise.

The files are written into the repository at `--root` (by default the current folder),
never beside the installed package: after `pip install .` that is site-packages, and a
file written there is lost on the next install and never reviewed. So the root must be
the auditor's repository, and the auditor that runs must be that repository's own (an
editable install, or an install of the same files): generated files made by another
version's code would be wrong in ways no diff shows. `--check` writes nothing and exits
1 when any file is not what its source makes (CI runs it).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path, PurePosixPath

from auditor.errors import ExitStatus

PACKAGE_FOLDERS = {"auditor": "auditor", "auditor.rules": "rules", "auditor.schemas": "schemas"}
SOURCE_SUFFIXES = (".py", ".yaml", ".json")


class GenerateError(Exception):
    """The generator cannot run as asked: the message says why."""


@dataclass(frozen=True)
class Generated:
    """One generated file: its place in the repository, and its text, or None where its
    source is not at hand (then `missing` says which)."""

    path: PurePosixPath
    text: str | None
    missing: str = ""


def check_docs_path() -> PurePosixPath:
    from auditor.check_docs import DOCS_FILE

    return PurePosixPath("auditor") / DOCS_FILE


def outcomes_path() -> PurePosixPath:
    from auditor.odds.shipped import DATA_FILE

    return PurePosixPath("auditor") / "odds" / DATA_FILE


def regulation_targets() -> list[tuple[str, PurePosixPath, bool]]:
    """Each built-in pack's regulation files in the repository: (ruleset, path, whether it
    is the sections file rather than the texts file)."""
    from auditor.packs.loaded import builtin_packs

    targets = []
    for ruleset, pack in builtin_packs().items():
        regulation = pack.regulation
        if regulation is None:
            continue
        for name in (regulation.sections, regulation.texts):
            if name is not None:
                # Named relative to the pack's own folder, rules/ in the repository.
                path = PurePosixPath("rules") / name
                targets.append((ruleset, path, name == regulation.sections))
    return targets


def generated_paths() -> set[PurePosixPath]:
    """Where every generated file lies in the repository, without making any."""
    return {check_docs_path(), outcomes_path(), *(p for _, p, _ in regulation_targets())}


def check_docs_file() -> Generated:
    from auditor.check_docs import docs_json
    from auditor.pipeline import all_checks

    return Generated(check_docs_path(), docs_json(all_checks()))


def outcomes_file() -> Generated:
    from auditor.odds.shipped import table
    from auditor.packs.model import load_all

    data = table(list(load_all().values()))
    return Generated(outcomes_path(), json.dumps(data, separators=(",", ":")) + "\n")


def regulation_files(regulations: Path | None) -> list[Generated]:
    """The built-in packs' sections and texts files, made from `regulations`."""
    from auditor.output.traceability import parse_index, sections_json
    from auditor.packs.loaded import builtin_packs
    from auditor.report.sections import build

    targets = regulation_targets()
    index = None if regulations is None else regulations / "INDEX.md"
    if regulations is None or index is None or not index.is_file():
        missing = f"the regulations folder with its INDEX.md ({regulations or 'not given'})"
        return [Generated(path, None, missing) for _, path, _ in targets]
    sections = parse_index(index.read_text(encoding="utf-8"))
    texts = build(regulations, builtin_packs())
    made = []
    for ruleset, path, is_sections in targets:
        if is_sections:
            text = sections_json(s for s in sections if s.ruleset == ruleset)
        else:
            text = json.dumps(texts[ruleset], indent=0, ensure_ascii=False) + "\n"
        made.append(Generated(path, text))
    return made


def generated_files(regulations: Path | None) -> list[Generated]:
    return [check_docs_file(), outcomes_file(), *regulation_files(regulations)]


def repository_root(root: Path) -> Path:
    """`root` when it is the auditor's repository, else GenerateError."""
    root = root.resolve()
    project = root / "pyproject.toml"
    if not project.is_file() or 'name = "auditor"' not in project.read_text(encoding="utf-8"):
        raise GenerateError(
            f"{root} is not the auditor's repository (no pyproject.toml of the project "
            "auditor): run the generator from the repository's root, or give --root"
        )
    return root


def refuse_other_code(root: Path) -> None:
    """GenerateError unless every source file of the running auditor is the repository's
    file of the same name, byte for byte."""
    differing = sorted(str(path) for path in _differing_sources(root))
    if differing:
        shown = ", ".join(differing[:5]) + (" ..." if len(differing) > 5 else "")
        raise GenerateError(
            f"the auditor that runs is not {root}'s own ({len(differing)} file(s) differ: "
            f"{shown}): install the repository (pip install -e .) and run again"
        )


def _differing_sources(root: Path) -> Iterator[PurePosixPath]:
    # A stale generated file is what --check reports, not a reason to refuse to run.
    generated = generated_paths()
    for package, folder in PACKAGE_FOLDERS.items():
        try:
            installed = files(package)
        except ModuleNotFoundError:
            raise GenerateError(
                f"{package} cannot be imported: the auditor imported is a source tree that "
                "was not installed (a plain `pip install .` run from its root imports the "
                "folder, not the install): install the repository (pip install -e .), or "
                "run from another folder with --root"
            ) from None
        for relative, digest in _digests(installed):
            if package == "auditor" and relative.parts[0] in ("rules", "schemas"):
                continue  # the mapped packages, compared as their own
            in_repository = root / folder / relative
            if PurePosixPath(folder) / relative in generated:
                continue
            if not in_repository.is_file() or _digest(in_repository.read_bytes()) != digest:
                yield PurePosixPath(folder) / relative


def _digests(
    node: Traversable, prefix: PurePosixPath | None = None
) -> Iterator[tuple[PurePosixPath, str]]:
    prefix = PurePosixPath() if prefix is None else prefix
    for child in node.iterdir():
        if child.name == "__pycache__":
            continue
        if child.is_dir():
            yield from _digests(child, prefix / child.name)
        elif child.name.endswith(SOURCE_SUFFIXES):
            yield prefix / child.name, _digest(child.read_bytes())


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write_in_repository(root: Path, relative: PurePosixPath, text: str) -> None:
    """Write `text` at `root/relative` whole or not at all: through a new file in the same
    folder renamed over the old, so a reader never sees half a file and a link planted
    at the target is replaced, not followed. A folder on the way that is a link is
    refused: it would carry the file out of the repository."""
    target = root.joinpath(*relative.parts)
    folder = root
    for part in relative.parts[:-1]:
        folder = folder / part
        if folder.is_symlink() or not folder.is_dir():
            raise GenerateError(f"{folder} is a link or not a folder: {relative} not written")
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=f".{target.name}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
            out.write(text)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def is_current(root: Path, made: Generated) -> bool:
    target = root.joinpath(*made.path.parts)
    if made.text is None:
        return True
    if target.is_symlink() or not target.is_file():
        return False
    return target.read_bytes() == made.text.encode("utf-8")


def run(root: Path, regulations: Path | None, check: bool) -> ExitStatus:
    root = repository_root(root)
    refuse_other_code(root)
    stale = []
    for made in generated_files(regulations):
        if made.text is None:
            print(f"skipped  {made.path}: needs {made.missing}")
        elif is_current(root, made):
            print(f"current  {made.path}")
        elif check:
            print(f"stale    {made.path}")
            stale.append(made.path)
        else:
            write_in_repository(root, made.path, made.text)
            print(f"written  {made.path}")
    if stale:
        print(
            f"{len(stale)} generated file(s) not what their sources make: run "
            "`python -m auditor.tools.generate` and commit them",
            file=sys.stderr,
        )
        return ExitStatus.FOUND
    return ExitStatus.OK


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m auditor.tools.generate",
        description="Rewrite the repository's generated files from their sources.",
    )
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if stale")
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="the repository")
    parser.add_argument(
        "--regulations",
        type=Path,
        default=None,
        help="the regulations folder (default: ../shared/regulations beside the root)",
    )
    args = parser.parse_args(argv)
    regulations = args.regulations
    if regulations is None:
        regulations = args.root.resolve().parent / "shared" / "regulations"
    try:
        return run(args.root, regulations, args.check)
    except GenerateError as refused:
        print(f"error: {refused}", file=sys.stderr)
        return ExitStatus.UNUSABLE


if __name__ == "__main__":
    sys.exit(main())
