"""Case files: `CODE.yaml` beside a pack (in its `cases/` folder), read and checked
before anything is audited. A file that is not YAML, names no known check, or holds a
case written wrongly is refused with every problem on a line of its own, each naming
the file and the line (exit 2): a broken file is not a failed case."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from auditor.casework.verdict import case_problems
from auditor.errors import AuditorError
from auditor.regular_files import NotRegularFile, read_regular

CASE_SUFFIX = ".yaml"
# A case file holds a check's cases: a few hundred lines, far below this.
MAX_CASE_FILE_BYTES = 4 * 2**20
FILE_KEYS = {"check", "cases", "no_edge"}


class CaseFilesRefused(AuditorError):
    """Case files that cannot be run: every problem, each `file:line: problem`."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("\n".join(problems))


@dataclass(frozen=True)
class Case:
    """One named case of a file: its check's code and the case as written."""

    file: str  # the file's name, CODE.yaml
    code: str
    name: str
    spec: dict[str, Any]
    line: int
    where: str = ""  # `path:line`, as a problem of the case names it (`file:line` if "")

    @property
    def label(self) -> str:
        """How a result names the case: `CODE.yaml::name`."""
        return f"{self.file}::{self.name}"


@dataclass(frozen=True)
class CaseFile:
    path: Path
    check: str
    no_edge: str | None
    cases: tuple[Case, ...]


def case_file_paths(folder: Path) -> list[Path]:
    """The `*.yaml` files of a `cases/` folder, sorted; refused if there is none."""
    if not folder.is_dir():
        raise CaseFilesRefused([f"{folder}: no such folder of cases"])
    found = sorted(p for p in folder.iterdir() if p.name.endswith(CASE_SUFFIX))
    if not found:
        raise CaseFilesRefused([f"{folder}: holds no case file (CODE{CASE_SUFFIX})"])
    return found


def load_case_files(
    paths: Iterable[Path], codes: Collection[str], rulesets: Collection[str]
) -> list[CaseFile]:
    """Every file read and checked; refused (CaseFilesRefused) with all their problems.
    `codes`: the checks' codes; `rulesets`: the ids a case's `ruleset` may name."""
    loaded, problems = [], []
    for path in paths:
        found, file_problems = _case_file(path, codes, rulesets)
        problems += file_problems
        if found is not None:
            loaded.append(found)
    if problems:
        raise CaseFilesRefused(problems)
    return loaded


def _case_file(
    path: Path, codes: Collection[str], rulesets: Collection[str]
) -> tuple[CaseFile | None, list[str]]:
    try:
        text = read_regular(path, MAX_CASE_FILE_BYTES).decode("utf-8")
    except (NotRegularFile, OSError, UnicodeDecodeError) as error:
        return None, [f"{path}:1: cannot be read as a case file ({error})"]
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        return None, [f"{path}:{line}: not valid YAML: {getattr(error, 'problem', error)}"]
    lines = _key_lines(root)
    where = f"{path}:{{}}"
    if not isinstance(data, dict):
        return None, [f"{path}:1: a case file is a mapping of check, cases and no_edge"]
    problems = [
        f"{where.format(lines.get((key,), 1))}: unknown key {key!r}; a case file holds "
        f"{', '.join(sorted(FILE_KEYS))}"
        for key in data
        if key not in FILE_KEYS
    ]
    check = data.get("check")
    check_line = where.format(lines.get(("check",), 1))
    if check not in codes:
        problems.append(
            f"{check_line}: check {check!r} is no check's code; `auditor rules` lists them"
        )
    elif path.stem != check:
        problems.append(f"{check_line}: the cases of {check} are in {check}{CASE_SUFFIX}")
    cases = data.get("cases")
    if not isinstance(cases, dict) or not cases:
        problems.append(
            f"{where.format(lines.get(('cases',), 1))}: 'cases' maps each case's name to the case"
        )
        return None, problems
    found = []
    for name, spec in cases.items():
        line = lines.get(("cases", name), 1)
        at = f"{path}:{line}: {name}"
        if not isinstance(spec, dict):
            problems.append(f"{at}: a case is a mapping")
            continue
        problems += [f"{at}: {p}" for p in case_problems(str(check), str(name), spec, codes)]
        if spec.get("ruleset") not in rulesets:
            problems.append(
                f"{at}: ruleset {spec.get('ruleset')!r} is no loaded pack's id; "
                f"known: {', '.join(sorted(rulesets))}"
            )
        if "round" not in spec and not spec.get("rounds"):
            problems.append(f"{at}: a case holds one 'round' or a list of 'rounds'")
        found.append(Case(path.name, str(check), str(name), spec, line, f"{path}:{line}"))
    no_edge = data.get("no_edge")
    return CaseFile(path, str(check), no_edge, tuple(found)), problems


def _key_lines(node: yaml.Node | None, prefix: tuple = (), levels: int = 2) -> dict[tuple, int]:
    """The line of each key of the top `levels` levels, by key path."""
    if not isinstance(node, yaml.MappingNode) or levels == 0:
        return {}
    lines: dict[tuple, int] = {}
    for key, value in node.value:
        path = (*prefix, key.value)
        lines[path] = key.start_mark.line + 1
        lines.update(_key_lines(value, path, levels - 1))
    return lines
