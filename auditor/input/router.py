"""Routing inside validation's read: a night whose files are not laid out table by table
is written into files per partition from the batches validation's row checks decode, so
that the input is decoded once by validation and once more by each partition from its
own files, and not a third time by a routing pass of its own (`routing.route`).

The partitions are made before validation, from every row of the `tables` and `rounds`
files (`raw_groups`): the quarantine is not known yet. Rows that validation then
quarantines are routed with the rest and left out where each partition reads its files
(`routing.routed`), by the provenance they carry. The wagers follow their rounds by the
map of every round's key (`routing.round_keys`), made as the rounds' batches are read,
which come before the wagers'. Validation's ids are held meanwhile, so the map may take
only what they leave of a partition's budget (`MAP_SHARE`); where it would take more,
the wagers are routed once validation is done and its ids are let go, by the audited
rounds, in passes as `routing.route_wagers` routes them.

The audit reads the routed files where its partitions, made of the audited rows, are the
ones routed (`Routed.folder_for`); where the quarantine moved a table across a
partition's bound, the night is routed again as before (`routing.route`), so that the
partitions, and every output, are the same whichever way the files came.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

import numpy as np
import polars as pl

from auditor.input.load import Dataset
from auditor.input.partition import TABLE_KEYED, Partition, partition_bytes, partitions
from auditor.input.routing import (
    BYTES_PER_MAPPED_ROUND,
    Held,
    RoundMap,
    batch_budget,
    by_table,
    held_budget,
    needs_routing,
    partition_bits,
    partition_keys,
    round_keys,
    route_wagers,
)
from auditor.input.scan import scan_table

# The share of a partition's budget the map of rounds may take while validation reads,
# beside its ids (`pipeline.run_validation`), which give up what the map and the rows not
# yet written take (`Router.bytes_held`). A sixteenth: at 10 million rounds by time a
# quarter took the run to 2.07 GB under a 2 GB limit, where routing the wagers after
# validation peaked at 1.97 GB in the same time (101 s either way).
MAP_SHARE = 16
# The prefix of the temporary folder the routed files are written to when no folder is
# given (`pipeline.run_audit` gives a claimed one, which a later run sweeps if killed).
ROUTE_PREFIX = "auditor-route-"


@dataclass(frozen=True)
class Routing:
    """What validation's read routes a night into: partitions of `partition_rounds`
    rounds, in `folder` (a temporary one if None), the map of rounds holding at most
    `map_bytes` (what validation's ids leave of a partition's budget if None)."""

    partition_rounds: int
    folder: Path | None = None
    map_bytes: int | None = None


@dataclass(frozen=True)
class Routed:
    """Partitions routed during validation: made for `partition_rounds` rounds, their
    `groups`, and the folder of their files (a temporary one, removed with this
    object, when `holder` holds it)."""

    partition_rounds: int
    groups: tuple[Partition, ...]
    folder: Path
    holder: tempfile.TemporaryDirectory[str] | None = field(default=None, repr=False)

    def folder_for(self, groups: Sequence[Partition], partition_rounds: int) -> Path | None:
        """The folder of `groups`' files, if they are the partitions routed: made for as
        many rounds, of the same tables (counted with their quarantined rounds, the routed
        partitions hold other tables where the quarantine moves a table across a bound)."""
        same = [group.tables for group in groups] == [group.tables for group in self.groups]
        return self.folder if same and partition_rounds == self.partition_rounds else None


def raw_groups(dataset: Dataset, partition_rounds: int) -> list[Partition]:
    """`partition.partitions` of every row of the tables and rounds, quarantined or not."""
    known = pl.col("table_id").is_not_null()
    rows = {name: scan_table(dataset, name).filter(known) for name in ("tables", "rounds")}
    return partitions(rows, partition_rounds)


def router_for(dataset: Dataset, routing: Routing | None) -> AbstractContextManager[Router | None]:
    """A `Router` for `routing`'s partitions, or none if not asked for or if the night is
    laid out table by table (`routing.needs_routing`)."""
    if routing is None:
        return nullcontext()
    groups = raw_groups(dataset, routing.partition_rounds)
    if not needs_routing(dataset, groups):
        return nullcontext()
    return Router(dataset, groups, routing)


class Router:
    """Routes validation's batches (in contract types with provenance) into the files of
    `groups`; `finish` once validation knows the audited rounds. Left by an error, what
    it holds is dropped and its temporary folder removed."""

    def __init__(self, dataset: Dataset, groups: list[Partition], routing: Routing) -> None:
        self.dataset, self.groups = dataset, groups
        self.partition_rounds = routing.partition_rounds
        self.budget_bytes = partition_bytes(routing.partition_rounds)
        self.holder: tempfile.TemporaryDirectory[str] | None = None
        if routing.folder is None:
            self.holder = tempfile.TemporaryDirectory(prefix=ROUTE_PREFIX)
            self.folder = Path(self.holder.name)
        else:
            self.folder = Path(routing.folder)
        self.parts = partition_keys(groups)
        self.bits = partition_bits(self.parts)
        map_bytes = routing.map_bytes
        if map_bytes is None:
            map_bytes = self.budget_bytes // MAP_SHARE
        # One map of every round as the rounds are read, or the wagers routed afterwards.
        rounds = sum(group.rounds for group in groups)
        self.wagers_now = rounds * BYTES_PER_MAPPED_ROUND <= map_bytes
        self.held_limit = held_budget(batch_budget(self.budget_bytes))
        # What routing holds while validation reads: the map of rounds, if it is made,
        # and a table's rows not yet written.
        self.bytes_held = self.held_limit + (
            rounds * BYTES_PER_MAPPED_ROUND if self.wagers_now else 0
        )
        self._keys: list[np.ndarray] = []
        self._map: RoundMap | None = None
        self._table: str | None = None
        self._held: Held | None = None

    def __enter__(self) -> Router:
        return self

    def __exit__(
        self,
        error: type[BaseException] | None,
        value: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        held, self._held = self._held, None
        try:
            if held is not None:
                held.__exit__(error, value, trace)
        finally:
            if error is not None and self.holder is not None:
                self.holder.cleanup()

    def add(self, table: str, rows: pl.DataFrame) -> None:
        """A batch of `table`'s rows, tables one after another in the dataset's order."""
        if table == "rounds" and self.wagers_now:
            self._keys.append(round_keys(rows.lazy(), self.parts, self.bits))
        if table in TABLE_KEYED:
            keyed = by_table(self.parts)
        elif table == "wagers" and self.wagers_now:
            keyed = self._round_map()
        else:
            return
        if table != self._table:
            self._close()
            self._table = table
            self._held = Held(self.folder / table, self.held_limit)
        assert self._held is not None
        self._held.route(table, rows, keyed)

    def finish(
        self, audited_rounds: pl.LazyFrame, progress: Callable[[str, int], None] | None
    ) -> Routed:
        """The routed partitions, once every batch is added and validation's ids are let
        go: the files written, and the wagers routed by `audited_rounds` if the map of
        every round did not fit beside the ids."""
        self._close()
        self._map = None
        if not self.wagers_now:
            route_wagers(
                self.dataset, audited_rounds, self.groups, self.folder, progress, self.budget_bytes
            )
        elif progress:
            progress("routing", 0)
        holder, self.holder = self.holder, None  # the folder goes with what is returned
        return Routed(self.partition_rounds, tuple(self.groups), self.folder, holder)

    def _round_map(self) -> RoundMap:
        if self._map is None:
            keys = np.concatenate(self._keys) if self._keys else np.empty(0, dtype=np.uint64)
            self._keys = []
            self._map = RoundMap(keys, self.bits)
        return self._map

    def _close(self) -> None:
        """Write what the table being routed holds, and wait for its files."""
        held, self._held = self._held, None
        if held is not None:
            held.__exit__(None, None, None)
