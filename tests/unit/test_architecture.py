"""The house: the pipeline's packages stand on floors, no import runs back up a floor or
across between the two stages that run side by side, there is no import circle, no
module outside the simulator outgrows one sitting's reading, and no module outside the
packs names a ruleset, a jurisdiction or a citation style, or tests a string against one.
The tests' own house: no test module imports from another (what they share lives in
tests/support/ and the conftest files)."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import pytest

import auditor
from tests.support.paths import REPO

PACKAGE = Path(auditor.__file__).parent

# Lower floors first. A module may import from its own floor's package or from a lower
# floor; the simulator is a second product apart, standing on the contract alone.
FLOORS = (
    ("auditor", "auditor.contract", "auditor.errors", "auditor.codes"),
    # What the commands need without the pipeline (defaults, the checks' documentation),
    # the one money formatter and conversion to cents every stage uses, and the one way to
    # read a file of a folder someone else may have edited.
    # The witnesses, each check's proof in SQL, are files the catalog and `auditor rules`
    # read without the pipeline.
    (
        "auditor.defaults",
        "auditor.money",
        "auditor.check_docs",
        "auditor.regular_files",
        "auditor.witness",
    ),
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
    # The review desk (`auditor serve`) reads the archive and draws the reports' pages; it
    # stands beside the pipeline, which it never runs.
    ("auditor.pipeline", "auditor.desk"),
    # The distributed engine runs audit's partition function and hands run_audit its finder;
    # the live audit runs the pipeline on each batch and closes the day into the archive;
    # the case runner (`auditor rules test`) runs the pipeline over a pack's YAML cases.
    # The generator of the repository's generated files reads the pipeline's checks.
    ("auditor.engines", "auditor.live", "auditor.casework", "auditor.tools"),
    # The library's entry point: the audit as the command line runs it, on either engine.
    ("auditor.api",),
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
                ok = name == "auditor.commands.simulate"  # `auditor simulate` runs the simulator
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


README = REPO / "README.md"  # the repository's, not the package's
FLOOR_NUMBERS = {
    "¼": Fraction(1, 4),
    "½": Fraction(1, 2),
    "⅝": Fraction(5, 8),
    "¾": Fraction(3, 4),
}


def readme_floors() -> list[set[str]]:
    """The README's layout table as floors: each row's packages by its floor number, lower
    floors first (the rows off the floors, `apart` and `tests`, left out)."""
    text = README.read_text(encoding="utf-8")
    table = text.split("| floor | package | what lives there |", 1)[1].split("\n\n", 1)[0]
    floors: dict[Fraction, set[str]] = {}
    for row in table.splitlines()[2:]:
        number, packages = (cell.strip() for cell in row.strip("|").split("|")[:2])
        if number in ("apart", "tests"):
            continue
        whole = number.rstrip("".join(FLOOR_NUMBERS))
        value = Fraction(int(whole or 0)) + FLOOR_NUMBERS.get(number[-1], Fraction(0))
        names = re.findall(r"`([a-z_]+)(?:\.py|/)`", packages)
        floors.setdefault(value, set()).update(f"auditor.{name}" for name in names)
    return [floors[k] for k in sorted(floors)]


def test_the_readmes_layout_table_is_these_floors() -> None:
    """One house: the README's table of floors says what FLOORS enforces."""
    assert readme_floors() == [set(floor) - {"auditor"} for floor in FLOORS]


# ---- a ruleset is what its pack says ------------------------------------------------------

# No module outside the packs names a built-in ruleset, a jurisdiction or a citation
# style, nor tests a string against one: a difference between rulesets is a difference
# between two packs, and a fifth pack needs no code. Exempt, each with its reason:
RULESET_EXEMPT = {
    # The packs and the packs' own files are where rulesets are named.
    "auditor.packs": "the packs: where a ruleset is what its pack says",
    "auditor.rules": "the built-in packs themselves",
    # The simulator is a second product apart, standing on the contract alone: it may not
    # read the packs (it would then share the auditor's reading of the rules it exists to
    # test), and it deals nights for the four built-in rulesets by name, each with its
    # own game (who holds the shoe, the Bank's auction, the side wagers offered).
    "auditor.simulator": "a data generator that deals for concrete rulesets, apart from "
    "the packs it tests",
}
_TEST_METHODS = {
    "startswith", "endswith", "removeprefix", "removesuffix", "find", "rfind", "index",
    "rindex", "count", "split", "partition", "rpartition", "replace",
    "starts_with", "ends_with", "contains", "is_in", "strip_prefix", "strip_suffix",
    "match", "fullmatch", "search", "findall", "sub",
}  # fmt: skip


@dataclass(frozen=True)
class RulesetWords:
    """What only the packs may name: the built-in ids, their jurisdictions and the
    citation styles, all read from the packs."""

    ids: tuple[str, ...]
    jurisdictions: tuple[str, ...]
    styles: tuple[str, ...]

    def named(self, text: str) -> list[str]:
        """The ids and jurisdictions `text` names (as words)."""
        return [
            word
            for word in (*self.ids, *self.jurisdictions)
            if re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text, re.IGNORECASE)
        ]

    def tested(self, literal: str) -> bool:
        """A literal a string test on a ruleset would use: an id or part of one that ends
        at a dash ("md-"), a jurisdiction, or a citation style's name."""
        low = literal.lower()
        return bool(low) and (
            any(i in low or (i.startswith(low) and low.endswith("-")) for i in self.ids)
            or low in {w.lower() for w in (*self.jurisdictions, *self.styles)}
        )


def ruleset_words() -> RulesetWords:
    from auditor.packs.loaded import builtin_packs
    from auditor.packs.regulation import STYLES

    packs = builtin_packs()
    return RulesetWords(
        ids=tuple(packs),
        jurisdictions=tuple({p.regulation.jurisdiction for p in packs.values()}),
        styles=tuple(STYLES),
    )


def _literals(node: ast.AST) -> list[str]:
    """The string literals of an operand: a constant, or a tuple, list or set of them."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [s for item in node.elts for s in _literals(item)]
    return []


def string_tests(source: str, words: RulesetWords) -> list[str]:
    """Every place `source` tests a string against a ruleset word: a comparison (==, !=,
    in, not in, also of a slice), a string method or regex (startswith, contains, ...,
    re.match), or a match case; and every id or jurisdiction it names anywhere, its
    comments and texts included."""
    found = [
        f"line {n}: names {', '.join(named)}"
        for n, line in enumerate(source.splitlines(), 1)
        if (named := words.named(line))
    ]
    for node in ast.walk(ast.parse(source)):
        operands: list[ast.AST] = []
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in _TEST_METHODS:
                operands = [*node.args, node.func.value]
        elif isinstance(node, ast.MatchValue):
            operands = [node.value]
        hits = [s for operand in operands for s in _literals(operand) if words.tested(s)]
        if hits:
            found.append(f"line {node.lineno}: tests a string against {hits[0]!r}")
    return found


def _exempt(name: str) -> bool:
    return any(name == e or name.startswith(e + ".") for e in RULESET_EXEMPT)


def test_no_module_names_a_ruleset_or_tests_a_string_against_one() -> None:
    words = ruleset_words()
    assert len(words.ids) >= 4 and words.jurisdictions and words.styles
    wrong = {
        name: found
        for name, path in MODULES.items()
        if not _exempt(name) and (found := string_tests(path.read_text(encoding="utf-8"), words))
    }
    assert wrong == {}


@pytest.mark.parametrize(
    "planted",
    [
        'def style(r):\n    return r.startswith("md-")\n',
        'def style(r):\n    return r[:3] == "ma-"\n',
        'def pick(r):\n    return "ma-chemin-de-fer" in r\n',
        'def place(j):\n    return j == "maryland"\n',
        'def fmt(s):\n    return s in ("decimal", "x")\n',
        'def f(c):\n    return c.str.starts_with("md-")\n',
        'def f(r):\n    match r:\n        case "decimal":\n            return 1\n',
        "# the md-mini-baccarat text numbers its lines\nX = 1\n",
    ],
)
def test_the_ruleset_scanner_finds_a_planted_case(tmp_path: Path, planted: str) -> None:
    module = tmp_path / "planted.py"
    module.write_text(planted, encoding="utf-8")
    assert string_tests(module.read_text(encoding="utf-8"), ruleset_words())


def test_the_ruleset_scanner_leaves_other_strings_alone() -> None:
    clean = 'def f(bet, r):\n    return bet == "banker" and r.startswith("fr") and "§" in r\n'
    assert string_tests(clean, ruleset_words()) == []


# ---- the tests' own house ------------------------------------------------------------------

TESTS = REPO / "tests"


def imported_test_modules(source: str, module: str) -> list[str]:
    """The test modules (`test_*`) that `source`, the text of module `module` (dotted), imports
    from or imports: absolute or relative, a module or a name of it."""
    package = module.rsplit(".", 1)[0]
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{parent}.{base}" if base else parent
            # `from package import test_x` imports a module too.
            names = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        else:
            continue
        found += [n for n in names if n.rsplit(".", 1)[-1].startswith("test_")]
    return sorted(set(found))


def test_no_test_module_imports_from_another() -> None:
    """What tests share is in tests/support/ or a conftest.py: a test module reached into by
    another cannot be moved, split or renamed on its own, and its helpers are found by no one
    looking for them."""
    wrong = {}
    for path in sorted(TESTS.rglob("*.py")):
        module = ".".join(path.relative_to(REPO).with_suffix("").parts)
        if found := imported_test_modules(path.read_text(encoding="utf-8"), module):
            wrong[str(path.relative_to(REPO))] = found
    assert wrong == {}


@pytest.mark.parametrize(
    "planted",
    [
        "from tests.unit.test_money import X\n",
        "from .test_money import X\n",
        "from ..integration.test_query import Y\n",
        "from tests.unit import test_money\n",
        "from . import test_money\n",
        "import tests.e2e.test_live\n",
        "def f():\n    from tests.e2e.test_live import Z\n",
    ],
)
def test_the_test_import_scanner_finds_a_planted_import(planted: str) -> None:
    assert imported_test_modules(planted, "tests.unit.test_planted")


def test_the_test_import_scanner_leaves_support_and_conftest_imports_alone() -> None:
    clean = (
        "from tests.support.cli import cli\nfrom tests.support import paths\n"
        "from .conftest import x\nimport pytest\nfrom auditor.cli import main\n"
    )
    assert imported_test_modules(clean, "tests.unit.test_planted") == []
