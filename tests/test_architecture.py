"""The house: the pipeline's packages stand on floors, no import runs back up a floor or
across between the two stages that run side by side, there is no import circle, and no
module outside the simulator outgrows one sitting's reading."""

from __future__ import annotations

import ast
import re
from fractions import Fraction
from pathlib import Path

import pytest

import auditor

PACKAGE = Path(auditor.__file__).parent

# Lower floors first. A module may import from its own floor's package or from a lower
# floor; the simulator is a second product apart, standing on the contract alone.
FLOORS = (
    ("auditor", "auditor.contract", "auditor.errors", "auditor.codes"),
    # What the commands need without the pipeline (defaults, the checks' documentation)
    # and the one money formatter every stage writes with.
    ("auditor.defaults", "auditor.money", "auditor.check_docs"),
    # The pandera models read the contract; installed, they live in auditor.schemas.
    ("auditor.schemas", "auditor.packs"),
    ("auditor.findings",),
    ("auditor.input",),
    ("auditor.replay",),
    ("auditor.settlement", "auditor.procedures", "auditor.odds"),
    # Surveillance prices the night with the odds; the outputs write its tests.
    ("auditor.surveillance",),
    ("auditor.output",),
    # The archive keeps the outputs' sets across nights; the reports read its catalog.
    ("auditor.archive",),
    # The reports read the catalog the outputs write (so they stand just above them, not
    # beside them: packages side by side never import each other); the pipeline calls
    # the nightly one.
    ("auditor.report",),
    ("auditor.audit",),
    # The distributed engine runs audit's partition function and hands run_audit its finder.
    ("auditor.engines",),
    # Commands kept apart from the command line's module, which adds them.
    ("auditor.commands",),
    ("auditor.cli",),
    ("auditor.__main__",),
)
APART = {"auditor.simulator": FLOORS[0]}
MAX_LINES = 500


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports_of(name: str) -> set[str]:
    """The package's modules that `name` imports, at the top or inside a function."""
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # `from auditor.pkg import module` imports the module; otherwise the package.
            targets = [
                f"{node.module}.{alias.name}"
                if f"{node.module}.{alias.name}" in MODULES
                else node.module
                for alias in node.names
            ]
        else:
            continue
        found |= {t for t in targets if t in MODULES and t != name}
    return found


GRAPH = {name: imports_of(name) for name in MODULES}


def home(name: str) -> str:
    """The floor entry (or apart package) a module belongs to: the longest prefix."""
    entries = [e for floor in FLOORS for e in floor] + list(APART)
    matches = [e for e in entries if name == e or name.startswith(e + ".")]
    assert matches, f"{name} stands on no floor: add it to FLOORS"
    return max(matches, key=len)


def floor_of(entry: str) -> int:
    return next(i for i, floor in enumerate(FLOORS) if entry in floor)


def test_every_module_stands_on_a_floor() -> None:
    for name in MODULES:
        home(name)


def test_no_import_runs_back_up_or_across() -> None:
    wrong = []
    for name, targets in GRAPH.items():
        mine = home(name)
        for target in targets:
            theirs = home(target)
            if mine in APART:
                ok = theirs == mine or theirs in APART[mine]
            elif theirs in APART:
                ok = mine == "auditor.cli"  # the command line runs the simulator
            else:
                ok = theirs == mine or floor_of(theirs) < floor_of(mine)
            if not ok:
                wrong.append(f"{name} -> {target}")
    assert wrong == []


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every import circle found by a depth-first walk (each reported once)."""
    found, state, path = [], {}, []

    def visit(node: str) -> None:
        state[node] = "open"
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                found.append([*path[path.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt)
        path.pop()
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return found


def test_no_import_circle() -> None:
    assert cycles(GRAPH) == []


def test_the_cycle_finder_finds_a_circle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [["a", "b", "c", "a"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize("name", [n for n in MODULES if not n.startswith("auditor.simulator")])
def test_no_module_outgrows_a_sitting(name: str) -> None:
    lines = MODULES[name].read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_LINES, f"{name}: {lines} lines"


README = Path(__file__).resolve().parents[1] / "README.md"  # the repository's, not the package's
FLOOR_NUMBERS = {"¼": Fraction(1, 4), "½": Fraction(1, 2), "¾": Fraction(3, 4)}


def readme_floors() -> list[set[str]]:
    """The README's layout table as floors: each row's packages by its floor number, lower
    floors first (`apart` rows left out)."""
    text = README.read_text(encoding="utf-8")
    table = text.split("| floor | package | what lives there |", 1)[1].split("\n\n", 1)[0]
    floors: dict[Fraction, set[str]] = {}
    for row in table.splitlines()[2:]:
        number, packages = (cell.strip() for cell in row.strip("|").split("|")[:2])
        if number == "apart":
            continue
        whole = number.rstrip("".join(FLOOR_NUMBERS))
        value = Fraction(int(whole or 0)) + FLOOR_NUMBERS.get(number[-1], Fraction(0))
        names = re.findall(r"`([a-z_]+)(?:\.py|/)`", packages)
        floors.setdefault(value, set()).update(f"auditor.{name}" for name in names)
    return [floors[k] for k in sorted(floors)]


def test_the_readmes_layout_table_is_these_floors() -> None:
    """One house: the README's table of floors says what FLOORS enforces."""
    assert readme_floors() == [set(floor) - {"auditor"} for floor in FLOORS]
