"""What a check cites, read from the packs: a check's documentation names the pack rules
it applies by key (``commission``, ``banker_draw``, ``procedures.burn``), and each pack
says which of its own sections those rules encode. A pack from outside is cited in its
own sections, with no word of the checks changed.

A key is a path through the loaded pack (``RulePack``): the file's section and key names
(``limits.cut``), or a lookup by key where the file writes a list (``permitted.royal9``,
``banker_draw``), joined by dots. The references under it are every ``cite`` it holds,
in the pack's order, each once; a key a pack leaves null (no such rule there) cites
nothing in that pack.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from auditor.packs.kept import per_packs
from auditor.packs.model import RulePack

_MISSING = object()


def _at(node: Any, parts: list[str], key: str) -> Iterator[Any]:
    """The parts of a pack that `key` names: a mapping without the entry (a bet, a
    paytable the pack does not have) names nothing, "*" names every entry; an attribute
    no pack has is a KeyError."""
    if not parts or node is None:
        if node is not None:
            yield node
        return
    part, rest = parts[0], parts[1:]
    if isinstance(node, Mapping):
        for value in node.values() if part == "*" else [node.get(part)]:
            yield from _at(value, rest, key)
        return
    value = getattr(node, part, _MISSING)
    if value is _MISSING:
        raise KeyError(f"{key!r} names no rule of a pack ({part!r} not found)")
    yield from _at(value, rest, key)


def _fields(node: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(node, BaseModel):
        for name in type(node).model_fields:
            yield name, getattr(node, name)


def _absent(node: Any) -> bool:
    """A rule the pack states it does not have: its switch null or false beside its cite
    (no EZ variant, no last-hand rule, no two batches, no cover-card placement)."""
    for switch in ("value", "two_batches", "min_from_back"):
        if isinstance(node, BaseModel) and switch in type(node).model_fields:
            value = getattr(node, switch)
            return value is None or value is False
    return False


def _cites(node: Any) -> Iterator[str]:
    if isinstance(node, Mapping):
        for value in node.values():
            if value is not None and not isinstance(value, str):
                yield from _cites(value)
    elif isinstance(node, (tuple, list)):
        for item in node:
            yield from _cites(item)
    elif not _absent(node):
        for name, value in _fields(node):
            if isinstance(value, str):
                if name == "cite" or name.endswith("_cite"):
                    yield value
            elif value is not None:
                yield from _cites(value)


def rule_refs(pack: RulePack, key: str) -> tuple[str, ...]:
    """The references of `pack` that encode the rule `key`, each once, in the pack's
    order; none where the pack has no such rule."""
    found = (
        ref
        for node in _at(pack, key.split("."), key)
        for ref in ([node] if isinstance(node, str) else _cites(node))
    )
    return tuple(dict.fromkeys(ref for ref in found if ref))


def _order(ref: str) -> tuple[tuple[int, int, str], ...]:
    """Sections in the regulation's order: numbers by value (§9 before §13)."""
    return tuple((0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.findall(r"\d+|\D+", ref))


_LAST = re.compile(r"^(?P<stem>.*)\((?P<label>[a-z]|\d+)\)$")


def _next(label: str) -> str:
    return str(int(label) + 1) if label.isdigit() else chr(ord(label) + 1)


def joined(refs: Sequence[str]) -> str:
    """References in order, a run of three or more consecutive items under one section
    written as a range ("§8(a)(1)-(7)")."""
    runs: list[list[str]] = []
    for ref in sorted(dict.fromkeys(refs), key=_order):
        last, this = _LAST.match(runs[-1][-1]) if runs else None, _LAST.match(ref)
        if last and this and last["stem"] == this["stem"] and _next(last["label"]) == this["label"]:
            runs[-1].append(ref)
        else:
            runs.append([ref])
    parts = []
    for run in runs:
        if len(run) < 3:
            parts += run
        else:
            last = _LAST.match(run[-1])
            assert last is not None  # a run grows only by references that match
            parts.append(f"{run[0]}-({last['label']})")
    return ", ".join(parts)


def cite_rules(subject: str, rules: Sequence[str], packs: Mapping[str, RulePack]) -> str:
    """The citation a reader sees: the subject in words, then each pack that has any of
    the rules with its references ("the vigorish (ruleset §13(c), §13(e); ...)")."""
    return _citer(packs)(subject, tuple(rules))


@per_packs
def _citer(packs: Mapping[str, RulePack]) -> Callable[[str, tuple[str, ...]], str]:
    """`cite_rules` under `packs`, each subject and rules worked out once: every audit's
    catalog cites every check, and its report cites each finding's."""
    return functools.cache(functools.partial(_cite, packs=packs))


def _cite(subject: str, rules: tuple[str, ...], packs: Mapping[str, RulePack]) -> str:
    parts = []
    for pack in packs.values():
        refs = dict.fromkeys(ref for key in rules for ref in rule_refs(pack, key))
        if refs:
            parts.append(pack.cite(joined(list(refs))))
    return f"{subject} ({'; '.join(parts)})" if parts else subject
