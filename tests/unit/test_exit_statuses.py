"""Every exit status the package gives is an `ExitStatus` by name: no module passes a bare
integer to an exit, so that the statuses docs/commands.md promises are the ones in one
enum, and a grep for a status finds every place that gives it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import auditor
from auditor.errors import AuditorError, ExitStatus

PACKAGE = Path(auditor.__file__).parent

# sys.exit, os._exit, exit, ctx.exit, and the exceptions that carry a status.
EXITS = {"exit", "_exit", "SystemExit", "Exit"}


def _called(node: ast.Call) -> str | None:
    if isinstance(node.func, ast.Name):
        return node.func.id
    if isinstance(node.func, ast.Attribute):
        return node.func.attr
    return None


def _is_literal_status(node: ast.AST) -> bool:
    """Whether the value given is an integer literal, or may be one (a branch of a
    conditional, an operand of `or`); a literal inside a test or a call is no status."""
    if isinstance(node, ast.Constant):
        return type(node.value) is int
    if isinstance(node, ast.IfExp):
        return _is_literal_status(node.body) or _is_literal_status(node.orelse)
    if isinstance(node, ast.BoolOp):
        return any(_is_literal_status(value) for value in node.values)
    return False


def bare_exit_statuses(source: str) -> list[str]:
    """Each exit given an integer literal (`sys.exit(2)`, `sys.exit(1 if x else 0)`,
    `exit_code = 2`), by line."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and _called(node) in EXITS:
            given = [*node.args, *(k.value for k in node.keywords)]
            if any(_is_literal_status(arg) for arg in given):
                found.append(f"line {node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = {t.id if isinstance(t, ast.Name) else getattr(t, "attr", "") for t in targets}
            if "exit_code" in names and node.value and _is_literal_status(node.value):
                found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: p.name)
def test_no_module_passes_a_bare_integer_to_an_exit(path: Path) -> None:
    assert bare_exit_statuses(path.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize(
    "planted",
    [
        "import sys\nsys.exit(2)",
        "import sys\nsys.exit(1 if found else 0)",
        "import os\nos._exit(130)",
        "raise SystemExit(3)",
        "ctx.exit(code=2)",
        "class E(Exception):\n    exit_code = 2",
    ],
)
def test_the_scanner_finds_a_planted_literal(planted: str) -> None:
    assert bare_exit_statuses(planted)


def test_the_scanner_leaves_named_statuses_alone() -> None:
    source = "import sys\nsys.exit(ExitStatus.FOUND if found else ExitStatus.OK)\nexit_code = x"
    assert bare_exit_statuses(source) == []


def test_the_statuses_are_those_the_docs_promise() -> None:
    assert [int(s) for s in ExitStatus] == [0, 1, 2, 3, 130, 141]
    assert AuditorError.exit_code is ExitStatus.UNUSABLE
