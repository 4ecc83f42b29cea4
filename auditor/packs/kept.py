"""What is built from a set of rule packs, kept while the packs are: the traceability
matrix, the checks' citations and the regulation's texts are the same for every night
audited under the same packs, and `auditor watch`, a re-audit or a test session audits
night after night in one process."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import TypeVar

from auditor.packs.model import RulePack

Packs = Mapping[str, RulePack]
# A set of packs by the identity of each (a loaded pack is never changed), or None for the
# built-in ones where a caller passes none.
_Key = tuple[tuple[str, int], ...] | None
# Sets of packs kept per function: a process that loads packs from many folders in turn
# keeps only the last few.
MOST_KEPT = 8
T = TypeVar("T")
P = TypeVar("P", bound=Packs | None)


def per_packs(build: Callable[[P], T]) -> Callable[[P], T]:
    """`build(packs)` once per set of packs: the result is kept with the packs themselves,
    so that an id in the key is never another pack's. Callers must not change it."""
    kept: dict[_Key, tuple[dict[str, RulePack], T]] = {}

    @functools.wraps(build)
    def once(packs: P) -> T:
        held: dict[str, RulePack] = {} if packs is None else dict(packs)
        key = None if packs is None else tuple((name, id(pack)) for name, pack in held.items())
        entry = kept.get(key)
        if entry is None:
            if len(kept) >= MOST_KEPT:
                kept.clear()
            entry = kept[key] = (held, build(packs))
        return entry[1]

    return once
