"""A pack's validation errors as the loader reports them: file, key path, what is wrong.

pydantic locates an error by a tuple (``('banker_draw', 3, 'cite')``) that does not say
whether an integer is a list index or a mapping key (chairs and margins are numbered),
and that carries the names pydantic gives the alternatives of a union. Walking the
location through the YAML data tells them apart, so that the path reads as the file
does: ``banker_draw[3].cite``, ``payouts.royal9.seat_combinations.chairs.2``.
"""

from __future__ import annotations

from typing import Any

import yaml
from pydantic import ValidationError
from pydantic_core import ErrorDetails

from auditor.errors import RulesetError, summarize
from auditor.packs.entries import EITHER_ERROR, NON_BLANK, PACK_ERROR, kind

DICT_KEY = "[key]"  # pydantic's marker for an error in a mapping's key rather than its value


class PackRefused(RulesetError):
    """Pack files refused, each problem a line "file:line: key path: what is wrong"."""

    def __init__(self, problems: list[str], *, path: str | None = None):
        self.problems = problems
        super().__init__(summarize(problems), path=path)


def validation_problems(
    file: str, error: ValidationError, data: Any, root: yaml.Node | None
) -> list[str]:
    """Every cause of a pack's validation error, each with its line in the file."""
    return [
        f"{file}:{line_of(root, _located(detail))}: {_describe(detail, data)}"
        for detail in _consequences_dropped(error.errors())
    ]


def _located(detail: ErrorDetails) -> tuple[str | int, ...]:
    """Where the error is: its location, and below it the key path a pack check names."""
    return (*detail["loc"], *detail.get("ctx", {}).get("at", ()))


def line_of(root: yaml.Node | None, loc: tuple[str | int, ...]) -> int:
    """The line of the deepest node of `loc` that the file has (1 for the top level);
    pydantic's names for a union's alternatives are stepped over."""
    node, line = root, 1
    for part in loc:
        if node is None or part == DICT_KEY:
            break
        if isinstance(node, yaml.MappingNode):
            found = [(k, v) for k, v in node.value if str(k.value) == str(part)]
            if found:
                key, node = found[0]
                line = key.start_mark.line + 1
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            if part >= len(node.value):
                break
            node = node.value[part]
            line = node.start_mark.line + 1
    return line


def _consequences_dropped(details: list[ErrorDetails]) -> list[ErrorDetails]:
    """Only the causes: pydantic also reports what follows from another error.

    A list whose only items are refused is "too short" as well; the value under an
    unknown mapping key is checked as well, though no model describes it.
    """
    locs = [detail["loc"] for detail in details]
    unknown_keys = [loc[:-1] for loc in locs if loc[-1:] == (DICT_KEY,)]

    def follows(detail: ErrorDetails) -> bool:
        loc = detail["loc"]
        if detail["type"] == "too_short":
            return any(_below(other, loc) for other in locs)
        return loc[-1:] != (DICT_KEY,) and any(_below(loc, key) for key in unknown_keys)

    return [detail for detail in details if not follows(detail)]


def _below(loc: tuple[str | int, ...], parent: tuple[str | int, ...]) -> bool:
    return len(loc) > len(parent) and loc[: len(parent)] == parent


def _describe(detail: ErrorDetails, data: Any) -> str:
    loc = detail["loc"]
    path = _path(loc, data, missing=detail["type"] == "missing")
    if detail["type"] == PACK_ERROR:
        path = _extend(path, detail.get("ctx", {}).get("at", ()))
    return f"{path or '(top level)'}: {_message(detail, key=bool(loc) and loc[-1] == DICT_KEY)}"


def _extend(path: str, parts: tuple[str | int, ...]) -> str:
    for part in parts:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path = f"{path}.{part}" if path else part
    return path


def _path(loc: tuple[str | int, ...], data: Any, *, missing: bool) -> str:
    path, node = "", data
    for i, part in enumerate(loc):
        if isinstance(node, list) and isinstance(part, int):
            path += f"[{part}]"
            node = node[part] if 0 <= part < len(node) else None
        elif isinstance(node, dict) and (part in node or (missing and i == len(loc) - 1)):
            path = f"{path}.{part}" if path else str(part)
            node = node.get(part)
        # Anything else is not in the file: the name of a union's alternative, or the
        # marker of a mapping key (whose key is already on the path).
    return path


def _found(value: Any) -> str:
    return "null" if value is None else f"{kind(value)} {value!r}"


def _choices(expected: str) -> str:
    """pydantic's "'a', 'b' or 'c'" as the loader has always written it: "a, b, c"."""
    return expected.replace(" or ", ", ").replace("'", "")


def _message(detail: ErrorDetails, *, key: bool) -> str:
    found, ctx, kind_of = detail["input"], detail.get("ctx", {}), detail["type"]
    if kind_of == "missing":
        return "missing key"
    if kind_of == EITHER_ERROR:
        return f"{detail['msg']}, found {_found(found)}"
    if kind_of == "literal_error":
        if key:
            return f"unknown key; expected one of {_choices(ctx['expected'])}"
        return f"{found!r} is not one of {_choices(ctx['expected'])}"
    if kind_of in ("int_type", "int_parsing", "int_from_float"):
        return f"expected an integer, found {_found(found)}"
    if kind_of in ("bool_type", "bool_parsing"):
        return f"expected true or false, found {kind(found)}"
    if kind_of == "string_type" or (
        kind_of == "string_pattern_mismatch" and ctx.get("pattern") == NON_BLANK
    ):
        return f"expected a non-empty string, found {_found(found)}"
    if kind_of == "greater_than_equal":
        return f"{found} is below the minimum {ctx['ge']}"
    if kind_of == "less_than_equal":
        return f"{found} is above the maximum {ctx['le']}"
    if kind_of == "too_short":
        what = "mapping" if ctx.get("field_type") == "Dictionary" else "list"
        return f"expected a non-empty {what}, found an empty one"
    if kind_of in ("list_type", "tuple_type"):
        return f"expected a list, found {kind(found)}"
    if kind_of in ("dict_type", "model_type"):
        return f"expected a mapping, found {kind(found)}"
    return detail["msg"]
