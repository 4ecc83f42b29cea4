"""Deterministic generator of contract datasets, optionally with injected faults.

`simulate()` plays a fixed set of tables of all four rulesets shoe by shoe and writes
one Parquet file per contract table (a row group per chunk, so memory stays bounded at
millions of rounds) plus `fault_key.parquet`, one row per injected fault. The same
arguments give byte-identical files: all randomness comes from `numpy.default_rng(seed)`
and all times from a fixed base timestamp.

Without a gaming day, the night is the fixed evening of 2026-11-24, dealt at the floor's
usual pace however long that takes, with plain ids. With one (`gaming_day`, as `nights`
deals an archive), the tables are the same but every shoe and round falls within that
day, noon to noon UTC, the ids carry its date and the dealing its own random streams.

Dealing and settlement live in `settle`, fault injection in `faults`, the output folder's
checks and marker in `folder`, archives of many nights in `nights`.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, ClassVar, TypedDict, TypeVar

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from auditor.contract import MONEY, TABLES
from auditor.simulator.faults import (
    FAMILIES,
    MONEY_FAULTS,
    TABLE_FAULTS,
    Fault,
    RoundContext,
    applicable,
    inject,
)
from auditor.simulator.folder import claim
from auditor.simulator.plants import Plant, past_post, seat_planted
from auditor.simulator.settle import (
    BURN_VALUES,
    CARD_CODES,
    CARD_NAMES,
    CHEMIN,
    FACES,
    MA_BACCARAT,
    MA_TABLE2,
    MARYLAND,
    MIDI,
    NINE,
    RANK_OF,
    ROYAL9_STAKE,
    SUIT_OF,
    Round,
    TableOptions,
    Wager,
    royal9_combo,
    usd,
)

T = TypeVar("T")

SECOND = 1_000_000  # timestamps are epoch microseconds
MINUTE = 60 * SECOND
BASE_US = int(datetime(2026, 11, 24, 18, 0, tzinfo=UTC).timestamp()) * SECOND
OPTIONS_FROM_US = BASE_US - 6 * 60 * MINUTE  # first `tables` rows, before any shoe
HOUR = 60 * MINUTE
CLOSING = 10 * MINUTE  # a gaming day's last shoe closes this long before noon

# Intervals drawn for the clock: "no more bets" after the previous round and the deal
# (milliseconds), the burn and first bets of a shoe and the shuffle after it (seconds).
BETTING_MS = (15_000, 45_000)
DEALING_MS = (2_000, 8_000)
OPENING_S = (60, 150)
SHUFFLE_S = (240, 600)
ROUND_LONGEST = (BETTING_MS[1] + DEALING_MS[1]) * 1000
SHOE_LONGEST = (OPENING_S[1] + SHUFFLE_S[1]) * SECOND

PLANT_STREAM = 0x504C414E  # the planted moves' streams apart from the night's
ROUND_CHUNK = 50_000  # rows per Parquet row group
SHOE_CHUNK = 500  # shoes carry a full card_sequence each
PROGRESS_STEP = 1_000

READER_RATE = 0.9  # shoes with a card-reading shoe (card_sequence logged)
OCCUPANCY = 0.55  # chance a seat is taken for a shoe
PLAY_RATE = 0.5  # chance an occupied seat wagers in a round
FREE_RATE = 0.03  # Free Hands at midi tables that allow them
SIMULATED_RATE = 0.005  # irregularity: a simulated round (§15(c)(2), §15(d))
DISCARD_RATE = 0.005  # irregularity: two cards to the discard (§15(c)(1))
CURATOR_VOLUNTARY_PASS = 0.02
# Midi places no cover card (INDEX: §9(d) never says where): some shoes have it so near the
# back that the last hand runs out of cards and is void (§13(e)).
MIDI_COVER_NEAR_BACK = 0.25
BANK_VOLUNTARY_PASS = 0.08

MAIN_LADDER = (1, 1, 1, 2, 2, 3, 4, 5, 5, 10, 10, 20, 25, 50, 100)  # x table minimum
ODD_AMOUNTS = (3750, 1010, 1235, 6250, 11250, 2750, 8725, 500)
SIDE_AMOUNTS = (500, 1000, 1000, 1250, 2500, 2500, 5000, 10000)
BID_LADDER = (1, 1, 2, 2, 4, 5, 10, 20)  # x the Chemin de Fer table's smallest bid


class Rand:
    """Uniforms drawn from numpy in blocks: a numpy call per draw would dominate the run."""

    BLOCK = 1 << 16

    def __init__(self, gen: np.random.Generator):
        self.gen = gen
        self._buf: list[float] = []
        self._i = 0

    def u(self) -> float:
        if self._i >= len(self._buf):
            self._buf, self._i = self.gen.random(self.BLOCK).tolist(), 0
        self._i += 1
        return self._buf[self._i - 1]

    def below(self, n: int) -> int:
        return int(self.u() * n)

    def between(self, lo: int, hi: int) -> int:
        return lo + int(self.u() * (hi - lo + 1))

    def pick(self, items: Sequence[T]) -> T:
        return items[int(self.u() * len(items))]

    def shuffled(self, items: Sequence[T]) -> list[T]:
        out = list(items)
        for i in range(len(out) - 1, 0, -1):
            j = self.below(i + 1)
            out[i], out[j] = out[j], out[i]
        return out


class OptionChange(TypedDict, total=False):
    """The options a table's second `tables` row sets anew; the others stay as they were."""

    tie_pays: int
    commission_rounding: bool
    dragon_bonus_paytable: str | None
    house_money: bool
    house_money_rollover_percent: int


@dataclass(frozen=True)
class TableSpec:
    table_id: str
    property_id: str
    weight: int  # share of the rounds
    min_bet: int  # cents; at Chemin de Fer the smallest bid
    options: TableOptions
    change: OptionChange | None = None  # options of a second, later `tables` row


@dataclass(frozen=True)
class Schedule:
    """When one dataset is dealt, and how its ids read.

    The default is the fixed evening of a one-night run, at the usual pace however long
    it lasts. A gaming day (noon to noon UTC) opens its tables the same six hours after
    noon, closes them by `closes`, before the next noon, and tags every id with its date.
    """

    options_from: int  # the tables' first rows, before any shoe
    opens: int  # the first table opens; the others a few minutes apart
    closes: int | None = None  # every shoe closed by then (None: no bound)
    day_end: int | None = None
    tag: str = ""  # in every shoe, round, wager and commission collection id

    @classmethod
    def gaming_day(cls, day: date) -> Schedule:
        noon = int(datetime(day.year, day.month, day.day, 12, tzinfo=UTC).timestamp()) * SECOND
        end = noon + 24 * HOUR
        return cls(noon, noon + 6 * HOUR, end - CLOSING, end, f"{day:%Y%m%d}-")


EVENING = Schedule(OPTIONS_FROM_US, BASE_US)


@dataclass(frozen=True)
class SimulationSummary:
    out: Path
    rows: dict[str, int]  # rows written per file (contract tables and fault_key)
    rounds_per_table: dict[str, int]
    faults: dict[str, int]  # injected faults per kind
    rulesets: dict[str, str] = field(default_factory=dict)  # table_id -> ruleset
    gaming_day: date | None = None

    @property
    def total_faults(self) -> int:
        return sum(self.faults.values())

    def text(self) -> str:
        """What was written, for a person: rows, tables per ruleset and faults."""
        day = f" (gaming day {self.gaming_day})" if self.gaming_day else ""
        return "\n".join(
            [
                f"{counts_text(self.rows)}{day}, written to {self.out}",
                *ruleset_lines(self.rulesets, self.rounds_per_table),
                *fault_lines(self.faults, f"{self.out / 'fault_key.parquet'}"),
            ]
        )


def counts_text(rows: dict[str, int]) -> str:
    return (
        f"{rows['rounds']:,} rounds in {rows['shoes']:,} shoes, {rows['wagers']:,} wagers, "
        f"{rows['commission_collections']:,} commission collections"
    )


def ruleset_lines(rulesets: dict[str, str], rounds_per_table: dict[str, int]) -> list[str]:
    """One line per ruleset: its tables and their rounds."""
    tables: dict[str, list[str]] = {}
    for table_id, ruleset in rulesets.items():
        tables.setdefault(ruleset, []).append(table_id)
    lines = [f"{len(rulesets)} tables:"]
    width = max(map(len, tables), default=0)
    for ruleset, ids in tables.items():
        rounds = sum(rounds_per_table.get(t, 0) for t in ids)
        lines.append(f"  {ruleset:<{width}}  {len(ids)} tables  {rounds:>12,} rounds")
    return lines


def fault_lines(faults: dict[str, int], key: str) -> list[str]:
    """The injected faults: their number, where they are keyed, and each kind's count."""
    total = sum(faults.values())
    if not total:
        return ["faults injected: none"]
    lines = [f"faults injected: {total:,} of {len(faults)} kinds, keyed in {key}"]
    for kind, count in sorted(faults.items()):  # a few kinds to a line
        item = f"{kind} {count:,}"
        if len(lines) > 1 and len(lines[-1]) + len(item) < 86:
            lines[-1] += f", {item}"
        else:
            lines.append(f"  {item}")
    return lines


def table_specs(rs: Rand) -> list[TableSpec]:
    """The casino floor: every ruleset, option and paytable at least once."""
    o = TableOptions
    return [
        TableSpec("T-MA-BAC-01", "MA-PROP-1", 10, 10_000,
                  o(MA_BACCARAT, 14, 8, dragon_bonus_paytable="A", house_money=True,
                    royal9_paytable="1", royal9_combos=MA_TABLE2)),
        TableSpec("T-MA-BAC-02", "MA-PROP-1", 8, 5_000,
                  o(MA_BACCARAT, 12, 6, ez_baccarat=True, tie_pays=9,
                    commission_rounding=False, dragon_bonus_paytable="B"),
                  change={"house_money": True, "house_money_rollover_percent": 50}),
        TableSpec("T-MA-BAC-03", "MA-PROP-2", 8, 10_000,
                  o(MA_BACCARAT, 10, 8, commission_collection="marker",
                    dragon_bonus_paytable="C", house_money=True,
                    house_money_rollover_percent=50, royal9_paytable="2",
                    royal9_combos=MA_TABLE2)),
        TableSpec("T-MA-MID-01", "MA-PROP-1", 9, 2_500,
                  o(MIDI, 7, 8, dragon_bonus_paytable="A", house_money=True,
                    royal9_paytable="midi", free_hands=True,
                    royal9_combos=_midi_king9_combos(rs, 7))),
        TableSpec("T-MA-MID-02", "MA-PROP-2", 8, 2_500,
                  o(MIDI, 6, 6, ez_baccarat=True, house_money=True,
                    house_money_rollover_percent=50, royal9_paytable="midi",
                    royal9_combos=_midi_king9_combos(rs, 6))),
        TableSpec("T-MA-MID-03", "MA-PROP-2", 7, 2_500,
                  o(MIDI, 9, 7, commission_rounding=False, commission_collection="marker",
                    dragon_bonus_paytable="C", free_hands=True),
                  change={"dragon_bonus_paytable": "A"}),
        TableSpec("T-MD-MIN-01", "MD-PROP-1", 10, 1_000,
                  o(MARYLAND, 9, 8, dragon_bonus_paytable="A"),
                  change={"tie_pays": 9, "commission_rounding": False}),
        TableSpec("T-MD-MIN-02", "MD-PROP-1", 9, 500,
                  o(MARYLAND, 7, 6, automated_shuffler=True, ez_baccarat=True, tie_pays=9,
                    dragon_bonus_paytable="B")),
        TableSpec("T-MD-MIN-03", "MD-PROP-1", 7, 1_000,
                  o(MARYLAND, 8, 6, commission_rounding=False,
                    commission_collection="marker")),
        TableSpec("T-MA-CDF-01", "MA-PROP-1", 8, 50_000, o(CHEMIN, 9, 6)),
        TableSpec("T-MA-CDF-02", "MA-PROP-2", 7, 100_000, o(CHEMIN, 12, 8, commission_percent=4)),
        TableSpec("T-MA-CDF-03", "MA-PROP-2", 6, 50_000,
                  o(CHEMIN, 10, 6, commission_percent=4, commission_rounding=False)),
    ]  # fmt: skip


def _midi_king9_combos(rs: Rand, seats: int) -> dict[int, frozenset[tuple[int, int]]]:
    """midi §12(i): one non-suited King-9 per seat, unique at the table."""
    combos = [(CARD_CODES["K" + a], CARD_CODES["9" + b]) for a in "SHDC" for b in "SHDC" if a != b]
    return {seat: frozenset([combo]) for seat, combo in enumerate(rs.shuffled(combos)[:seats], 1)}


# -- Parquet output --------------------------------------------------------------------

FAULT_KEY_COLUMNS: dict[str, tuple[pl.DataType, bool]] = {
    "fault": (pl.String(), False),
    "family": (pl.String(), False),
    "table_id": (pl.String(), False),
    "shoe_id": (pl.String(), True),  # null for a table fault
    "round_id": (pl.String(), True),
    "wager_id": (pl.String(), True),
    "detail": (pl.String(), False),
    "impact": (MONEY, True),
}
_CARD_VALUES = pa.array(CARD_NAMES, pa.string())
_SIMPLE_TYPES: dict[type[pl.DataType], pa.DataType] = {
    pl.String: pa.string(),
    pl.Int8: pa.int8(),
    pl.Int16: pa.int16(),
    pl.Int32: pa.int32(),
    pl.Boolean: pa.bool_(),
}


def arrow_type(dtype: pl.DataType) -> pa.DataType:
    if isinstance(dtype, pl.Decimal):
        return pa.decimal128(dtype.precision, dtype.scale)
    if isinstance(dtype, pl.Datetime):
        return pa.timestamp(dtype.time_unit, dtype.time_zone)
    if isinstance(dtype, pl.List):
        return pa.list_(pa.string())
    return _SIMPLE_TYPES[dtype.base_type()]


def money_array(cents: Sequence[int | None], dtype: pl.Decimal) -> pa.Array:
    """decimal128 built from int cents through its buffers: exact, and no Decimal objects."""
    n = len(cents)
    valid = np.fromiter((c is not None for c in cents), dtype=bool, count=n)
    values = np.fromiter((c or 0 for c in cents), dtype=np.int64, count=n)
    words = np.empty((n, 2), dtype=np.int64)  # little-endian 128-bit two's complement
    words[:, 0], words[:, 1] = values, values >> 63
    validity = None if valid.all() else pa.py_buffer(np.packbits(valid, bitorder="little").data)
    return pa.Array.from_buffers(arrow_type(dtype), n, [validity, pa.py_buffer(words.data)])


def cards_array(rows: Sequence[Sequence[int] | None]) -> pa.Array:
    """list<string> from lists of card codes (None: a null list)."""
    lengths = np.fromiter((0 if r is None else len(r) for r in rows), np.int32, len(rows))
    offsets = np.zeros(len(rows) + 1, np.int32)
    np.cumsum(lengths, out=offsets[1:])
    flat = np.fromiter(
        itertools.chain.from_iterable(r for r in rows if r is not None), np.int32, offsets[-1]
    )
    values = _CARD_VALUES.take(pa.array(flat, pa.int32()))
    nulls = np.fromiter((r is None for r in rows), bool, len(rows))
    mask = pa.array(nulls, pa.bool_()) if nulls.any() else None
    return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), values, mask=mask)


def to_arrow(values: Sequence[Any], dtype: pl.DataType) -> pa.Array:
    """One column of a file's rows, whose cells `dtype` describes: int cents for money,
    lists of card codes for cards."""
    if isinstance(dtype, pl.Decimal):
        return money_array(values, dtype)
    if isinstance(dtype, pl.List):
        return cards_array(values)
    return pa.array(values, arrow_type(dtype))


class Sink:
    """Rows of one file, written as one Parquet row group per `chunk` rows."""

    def __init__(self, path: Path, columns: dict[str, tuple[pl.DataType, bool]], chunk: int):
        self.dtypes = [dtype for dtype, _ in columns.values()]
        self.schema = pa.schema(
            [pa.field(name, arrow_type(dt), nullable) for name, (dt, nullable) in columns.items()]
        )
        self.writer = pq.ParquetWriter(path, self.schema, compression="zstd")
        self.chunk, self.count = chunk, 0
        self.rows: list[tuple[Any, ...]] = []

    def add(self, row: tuple[Any, ...]) -> None:
        self.rows.append(row)
        if len(self.rows) >= self.chunk:
            self.flush()

    def flush(self) -> None:
        if not self.rows:
            return
        columns = zip(*self.rows, strict=True)
        arrays = [to_arrow(col, dt) for col, dt in zip(columns, self.dtypes, strict=True)]
        table = pa.Table.from_arrays(arrays, schema=self.schema)
        self.writer.write_table(table, row_group_size=len(self.rows))
        self.count += len(self.rows)
        self.rows = []

    def close(self) -> int:
        self.flush()
        self.writer.close()
        return self.count


class Outputs:
    """The open sinks, the id counters and the progress callback of one run."""

    CHUNKS: ClassVar[dict[str, int]] = {"shoes": SHOE_CHUNK, "wagers": 3 * ROUND_CHUNK}

    def __init__(self, out: Path, progress: Callable[[int], None] | None, tag: str = ""):
        self.sinks = {
            name: Sink(out / f"{name}.parquet", cols, self.CHUNKS.get(name, ROUND_CHUNK))
            for name, cols in [*TABLES.items(), ("fault_key", FAULT_KEY_COLUMNS)]
        }
        self.counters = dict.fromkeys(("S", "R", "W", "CC"), 0)
        self.tag = tag
        self.faults: dict[str, int] = {}
        self.progress, self.pending = progress, 0

    def next_id(self, prefix: str, width: int) -> str:
        self.counters[prefix] += 1
        return f"{prefix}{self.tag}{self.counters[prefix]:0{width}d}"

    def add(self, table: str, row: tuple) -> None:
        self.sinks[table].add(row)

    def fault(
        self,
        kind: str,
        table_id: str,
        shoe_id: str | None,
        round_id: str | None,
        wager_id: str | None,
        detail: str,
        impact: int | None = None,
    ) -> None:
        impact = impact if kind in MONEY_FAULTS else None
        row = (kind, FAMILIES[kind], table_id, shoe_id, round_id, wager_id, detail, impact)
        self.add("fault_key", row)
        self.faults[kind] = self.faults.get(kind, 0) + 1

    def tick(self) -> None:
        self.pending += 1
        if self.pending >= PROGRESS_STEP:
            self.flush_progress()

    def flush_progress(self) -> None:
        if self.progress is not None and self.pending:
            self.progress(self.pending)
        self.pending = 0

    def close(self) -> dict[str, int]:
        self.flush_progress()
        return {name: sink.close() for name, sink in self.sinks.items()}

    def abort(self) -> None:
        """Release the files of a failed run (they are left partial, never half-valid)."""
        for sink in self.sinks.values():
            sink.writer.close()


# -- one table -------------------------------------------------------------------------


class Shoe:
    """A dealing shoe in play: the cards after the cut and where dealing has reached."""

    def __init__(self, shoe_id: str, opts: TableOptions, opened_at: int, fault: str | None):
        self.shoe_id, self.opts, self.opened_at, self.fault = shoe_id, opts, opened_at, fault
        self.seq: list[int] = []
        self.decks = self.cut = self.cfb = self.burn_count = self.p = self.cover_pos = 0
        self.round_no = 0
        self.reader = True
        self.cover_seen = False
        self.counts = [0] * 52  # copies of each card dealt to hands so far
        self.seats: list[tuple[int, str | None]] = []
        self.dealer = ""
        self.owed: dict[tuple[int, str | None], list[int]] = {}  # marker: [cents, wagers]


@dataclass
class Bank:
    """A Chemin de Fer Bank: its Banker, bid, last stake and who may call Suivi."""

    seat: int
    patron: str | None
    bid: int
    prev_amount: int | None = None
    suivi_seat: int | None = None


class TableRun:
    """Plays one table's share of the rounds, shoe after shoe."""

    def __init__(
        self,
        spec: TableSpec,
        index: int,
        budget: int,
        rs: Rand,
        out: Outputs,
        fault_rate: float,
        shoe_fault_rate: float,
        schedule: Schedule = EVENING,
        plant: Plant | None = None,
        plant_gen: np.random.Generator | None = None,
    ):
        self.plant, self.plant_gen = plant, plant_gen
        self.spec, self.index, self.budget, self.rs, self.out = spec, index, budget, rs, out
        self.fault_rate = fault_rate
        self.shoe_fault_rate = shoe_fault_rate
        self.schedule = schedule
        self.options = spec.options
        self.option_rows: list[tuple[int, TableOptions]] = [(schedule.options_from, spec.options)]
        # An options row that breaks a limit and the row that restores the table's own,
        # both before any shoe opens: a table fault, governing no shoe.
        self.faulty_rows: list[tuple[int, TableOptions]] = []
        self.clock = schedule.opens + index * 7 * MINUTE  # tables open a few minutes apart
        self.room = self.need = 1  # the pace of the shoe in play: intervals x room / need
        self.produced = 0
        self.dealers = [f"D{index + 1:02d}{k:02d}" for k in range(1, 6)]
        self.curator: int | None = None
        self.curator_lost = False  # §14(a)(1): the curator must pass before the next round
        # The seat that lost the last regular round may not deal the next one, not even
        # through the dealer or a new shoe in between (INDEX Ambiguity 9).
        self.barred: int | None = None
        self.kept_curator: int | None = None
        # The Royal 9 combinations dealt to both hands of one round at this table: the only
        # hands whose award depends on a chair past the table's seats (Midi's "Other
        # Personal King-9 vs. Identical King-9").
        self.dealt_combos: set[tuple[int, int]] = set()
        self.bank: Bank | None = None
        self.bank_lost = self.bank_voluntary = False
        self.replaced_bank: Bank | None = None

    def run(self) -> None:
        self.maybe_table_fault()
        while self.produced < self.budget:
            self.maybe_change_options()
            self.play_shoe()
        if self.spec.change and len(self.option_rows) == 1:
            # The run ended before the change: the row still exists, for later shoes.
            changed = replace(self.options, **self.spec.change)
            later = self.clock + 24 * HOUR
            if self.schedule.day_end is not None:  # within the gaming day, after its shoes
                later = min(later, self.schedule.day_end - MINUTE)
            self.option_rows.append((later, changed))

    def maybe_table_fault(self) -> None:
        # A dataset has a dozen tables: four times the shoes' rate shows each table fault.
        if not self.shoe_fault_rate or self.rs.u() >= 4 * self.shoe_fault_rate:
            return
        o = self.options
        kinds = {
            "table_seats_out_of_range": o.ruleset != CHEMIN,
            "royal9_table_seats": o.ruleset == MIDI and o.royal9_paytable is not None,
            "collection_not_allowed": o.chemin,
        }
        # The one Royal 9 Midi table always takes the fault only it can show.
        applicable = [k for k in TABLE_FAULTS if kinds[k]]
        kind = applicable[-1] if kinds["royal9_table_seats"] else self.rs.pick(applicable)
        if kind == "table_seats_out_of_range":
            faulty = replace(o, seats=9 if o.ruleset == MA_BACCARAT else 10)
            detail = f"options row with {faulty.seats} seats"
        elif kind == "royal9_table_seats":
            faulty = replace(o, seats=8)
            detail = "Royal 9 options row with 8 seats"
        else:
            faulty = replace(o, commission_collection="marker")
            detail = "options row collecting commission by marker"
        first = self.schedule.options_from
        self.faulty_rows = [(first + MINUTE, faulty), (first + 2 * MINUTE, o)]
        self.out.fault(kind, self.spec.table_id, None, None, None, detail)

    def maybe_post_a_suited_combination(self) -> None:
        """A suited Royal 9 combination posted at a chair past the table's seats, where Midi
        posts non-suited ones only: no player sits there, and the table never dealt it to
        both hands of a round, so that no award depends on it."""
        if not self.shoe_fault_rate or self.rs.u() >= 4 * self.shoe_fault_rate:
            return
        posted = {c for combos in self.spec.options.royal9_combos.values() for c in combos}
        suited = [
            (face, nine)
            for face in range(52)
            for nine in range(52)
            if RANK_OF[face] in FACES and RANK_OF[nine] == NINE and SUIT_OF[face] == SUIT_OF[nine]
        ]
        fresh = [c for c in suited if c not in posted and c not in self.dealt_combos]
        if not fresh:
            return
        face, nine = self.rs.pick(fresh)
        combo, chair = CARD_NAMES[face] + CARD_NAMES[nine], self.options.seats + 1
        self.out.add("royal9_seats", (self.spec.table_id, chair, combo))
        detail = f"suited {combo} posted at chair {chair}"
        self.out.fault("royal9_chair_suited", self.spec.table_id, None, None, None, detail)

    def maybe_change_options(self) -> None:
        half_played = self.produced > 0 and self.produced >= self.budget // 2
        if self.spec.change and len(self.option_rows) == 1 and half_played:
            self.options = replace(self.options, **self.spec.change)
            # Between the last round of the previous shoe and the opening of the next.
            self.option_rows.append((self.clock - self.paced(MINUTE), self.options))

    # -- shoes -------------------------------------------------------------------------

    def play_shoe(self) -> None:
        fault = self.shoe_fault()
        shoe = self.open_shoe(fault)
        limit = 2 if fault == "extra_hand_after_cover" else 1
        hands_after = -1  # hands completed after the round in which the cover card came out
        while self.produced < self.budget and shoe.p < len(shoe.seq):
            rd = self.play_round(shoe, self.next_kind(shoe))
            if rd.kind == "void":  # the cards ran out: the shoe ends (§15(e) and twins)
                break
            if not rd.cover:
                continue
            hands_after += 1
            if hands_after == 2 and fault == "extra_hand_after_cover":
                self.out.fault(
                    "extra_hand_after_cover", self.spec.table_id, shoe.shoe_id, rd.round_id,
                    None, f"round {rd.round_no} is a second hand after the cover card",
                )  # fmt: skip
            # Chemin de Fer has no last-hand rule (INDEX Ambiguity 5): hands are dealt until
            # one cannot be completed, which is void (§11(k)).
            if not self.options.chemin and hands_after >= limit:
                break
        self.play_end_fault(shoe)
        self.close_shoe(shoe)

    def shoe_fault(self) -> str | None:
        if not self.shoe_fault_rate or self.rs.u() >= self.shoe_fault_rate:
            return None
        o = self.options
        kinds = ["burn_count_wrong", "cut_too_shallow"]
        if o.ruleset != MIDI:  # midi places no cover card rule
            kinds.append("cover_card_too_close")
        if not o.automated_shuffler:  # batches must stay equal, a second rule
            kinds.append("decks_out_of_range")
        if o.commission_collection == "marker":
            kinds.append("marker_uncollected")
        else:
            kinds.append("collection_without_marker")
        if not o.chemin:  # Chemin de Fer voids need not be for want of cards (Ambiguity 7)
            kinds += ["extra_hand_after_cover", "void_with_cards_left", "played_out_void"]
        return self.rs.pick(kinds)

    def set_pace(self) -> None:
        """A gaming day's table deals its rounds before the day closes: when the rounds
        left, each as long as the draws allow, and one more shoe's opening and shuffle
        would run past the close, this shoe's intervals shrink in proportion. As rounds
        take less than the longest, the pace eases again later in the day; and as each
        shoe takes at most its share of the time left, the last closes by the close."""
        closes = self.schedule.closes
        if closes is not None:
            left = self.budget - self.produced
            self.room, self.need = closes - self.clock, SHOE_LONGEST + left * ROUND_LONGEST

    def paced(self, interval: int) -> int:
        """An interval of the clock (microseconds) at the pace of the shoe in play."""
        return interval if self.room >= self.need else interval * self.room // self.need

    def open_shoe(self, fault: str | None) -> Shoe:
        o, rs = self.options, self.rs
        self.set_pace()
        shoe = Shoe(self.out.next_id("S", 6), o, self.clock, fault)
        shoe.decks = self.faulty_decks(o) if fault == "decks_out_of_range" else o.decks
        n = 52 * shoe.decks
        stack = np.tile(np.arange(52, dtype=np.int16), shoe.decks)[rs.gen.permutation(n)].tolist()
        margin = 10 if o.ruleset == MARYLAND else 52  # .05B(4) vs §5(d)
        if fault == "cut_too_shallow":
            shallow = rs.between(max(1, margin // 5), margin - 1)
            shoe.cut = shallow if rs.u() < 0.5 else n - shallow
        else:
            shoe.cut = rs.between(margin, n - margin)
        # §5(e): the cards in front of the cut card go to the back.
        shoe.seq = stack[shoe.cut :] + stack[: shoe.cut]
        if fault == "cover_card_too_close":
            shoe.cfb = rs.between(6, 13)
        elif o.ruleset == MIDI and rs.u() < MIDI_COVER_NEAR_BACK:
            shoe.cfb = rs.between(1, 9)
        else:
            shoe.cfb = rs.between(14, 80)
        shoe.cover_pos = n - shoe.cfb
        value = BURN_VALUES[shoe.seq[0]]
        shoe.burn_count = value
        if fault == "burn_count_wrong":
            step = rs.between(1, 3)
            shoe.burn_count = value + step if value - step < 0 or rs.u() < 0.5 else value - step
        shoe.p = 1 + shoe.burn_count
        shoe.reader = rs.u() < READER_RATE
        shoe.seats = self.seat_patrons(o)
        shoe.dealer = rs.pick(self.dealers)
        if self.plant is not None:  # after the draws: the clean night's stream is kept
            seat_planted(self.plant, self.spec.table_id, shoe.seats, self.plant_gen)
            if self.plant.deals(self.spec.table_id):
                shoe.dealer = self.plant.dealer or shoe.dealer
        self.clock += self.paced(rs.between(*OPENING_S) * SECOND)  # burn and first bets
        self.record_shoe_fault(shoe, value)
        self.start_holders(shoe)
        return shoe

    def faulty_decks(self, o: TableOptions) -> int:
        if o.royal9_paytable:  # fine for the game, not for Royal 9 (8; midi 6 or 8)
            return 7
        if o.ruleset in (MA_BACCARAT, MARYLAND):
            return self.rs.pick((5, 9))
        return 5

    def record_shoe_fault(self, shoe: Shoe, burn_value: int) -> None:
        details = {
            "burn_count_wrong": f"burn card {CARD_NAMES[shoe.seq[0]]} burns {burn_value}, "
            f"{shoe.burn_count} burned",
            "cut_too_shallow": f"cut at {shoe.cut} of {len(shoe.seq)} cards",
            "cover_card_too_close": f"cover card {shoe.cfb} cards from the back",
            "decks_out_of_range": f"{shoe.decks} decks in the shoe",
        }
        if shoe.fault in details:
            self.out.fault(
                shoe.fault, self.spec.table_id, shoe.shoe_id, None, None, details[shoe.fault]
            )

    def seat_patrons(self, o: TableOptions) -> list[tuple[int, str | None]]:
        rs = self.rs
        seats = [s for s in range(1, o.seats + 1) if rs.u() < OCCUPANCY]
        while len(seats) < (3 if o.chemin else 1):
            seat = rs.between(1, o.seats)
            seats = sorted({*seats, seat})
        patrons: list[tuple[int, str | None]] = []
        seen: set[str] = set()
        for seat in seats:
            patron = None if rs.u() < 0.1 else f"PT{self.index + 1:02d}{rs.below(4000):04d}"
            patron = None if patron in seen else patron
            if patron is not None:
                seen.add(patron)
            patrons.append((seat, patron))
        return patrons

    def close_shoe(self, shoe: Shoe) -> None:
        row = (
            shoe.shoe_id, self.spec.table_id, shoe.opened_at, shoe.decks,
            shoe.seq if shoe.reader else None, shoe.cut, shoe.cfb,
            CARD_NAMES[shoe.seq[0]], shoe.burn_count,
        )  # fmt: skip
        self.out.add("shoes", row)
        self.collect_markers(shoe)
        self.clock += self.paced(self.rs.between(*SHUFFLE_S) * SECOND)  # shuffle, next shoe

    def collect_markers(self, shoe: Shoe) -> None:
        """§13(d)(2)(i): marked commission collected before the next shoe opens."""
        if shoe.fault == "collection_without_marker":
            self.collect_without_marker(shoe)
        if not shoe.owed:
            return
        at = self.clock + self.paced(self.rs.between(20, 120) * SECOND)
        keys = sorted(shoe.owed, key=lambda k: (k[0], k[1] or ""))
        faulty = self.rs.pick(keys) if shoe.fault == "marker_uncollected" else None
        for key in keys:
            owed, count = shoe.owed[key]
            amount = owed
            if key == faulty:
                # Short by more than per-wager rounding could explain (INDEX Ambiguity 19).
                amount = owed // 2 if owed // 2 > 25 * count + 100 else 0
                seat, patron = key
                self.out.fault(
                    "marker_uncollected", self.spec.table_id, shoe.shoe_id, None, None,
                    f"seat {seat} patron {patron}: collected {usd(amount)} of {usd(owed)} owed",
                    owed - amount,
                )  # fmt: skip
            if amount:
                row = (
                    self.out.next_id("CC", 6),
                    self.spec.table_id,
                    shoe.shoe_id,
                    *key,
                    at,
                    amount,
                )
                self.out.add("commission_collections", row)

    def collect_without_marker(self, shoe: Shoe) -> None:
        """A marker collection logged at a table that collects commission at payout."""
        seat, patron = self.rs.pick(shoe.seats)
        amount = 25 * (1 + self.rs.below(40))
        at = self.clock + self.paced(self.rs.between(20, 120) * SECOND)
        row = (
            self.out.next_id("CC", 6),
            self.spec.table_id,
            shoe.shoe_id,
            seat,
            patron,
            at,
            amount,
        )
        self.out.add("commission_collections", row)
        self.out.fault(
            "collection_without_marker", self.spec.table_id, shoe.shoe_id, None, None,
            f"seat {seat} patron {patron}: {usd(amount)} collected at an at_payout table",
        )  # fmt: skip

    # -- rounds ------------------------------------------------------------------------

    def next_kind(self, shoe: Shoe) -> str:
        if self.options.free_hands and self.rs.u() < FREE_RATE:
            return "free"
        # Irregularities only well before the cover card and while no pass is due,
        # so the last-hand and passing rules never meet a simulated round.
        quiet = (
            shoe.round_no > 0
            and shoe.p + 20 < shoe.cover_pos
            and not (self.curator_lost or self.bank_lost or self.bank_voluntary)
        )
        return "simulated" if quiet and self.rs.u() < SIMULATED_RATE else "regular"

    def play_end_fault(self, shoe: Shoe) -> None:
        """After the shoe's last hand, a round logged void that was not short of cards: dealt
        out in full, or stopped after two cards with cards left (seen only with a reader)."""
        room = len(shoe.seq) - shoe.p >= 8 and self.produced < self.budget
        # With a reader, a played-out void also leaves cards (SHO013): one rule per fault.
        if shoe.fault == "played_out_void" and room and not shoe.reader:
            self.play_round(shoe, "regular", end_fault="played_out_void")
        if shoe.fault == "void_with_cards_left" and room and shoe.reader:
            self.play_round(shoe, "regular", end_fault="void_with_cards_left")

    def void_fault(self, rd: Round, kind: str) -> Fault:
        if kind == "void_with_cards_left":
            rd.void(2)
            return Fault(kind, "round logged void after its first two cards; cards remained")
        rd.kind, rd.outcome, rd.ez_event = "void", "void", None
        for w in rd.wagers:  # settled as the void it is logged as: every wager returned
            w.result, w.payout, w.commission, w.rollover = "push", 0, 0, None
        return Fault(kind, f"round played out (Player {rd.player_total}, Banker "
                     f"{rd.banker_total}) and logged void")  # fmt: skip

    def play_round(self, shoe: Shoe, kind: str, end_fault: str | None = None) -> Round:
        rs = self.rs
        rd = Round(shoe.opts, kind, shoe.seq, shoe.p, rs.u() < 0.5)
        rd.round_id = self.out.next_id("R", 7)
        shoe.round_no += 1
        rd.round_no = shoe.round_no
        rd.nmb = no_more_bets = self.clock + self.paced(rs.between(*BETTING_MS) * 1000)
        rd.dealt = self.clock = no_more_bets + self.paced(rs.between(*DEALING_MS) * 1000)
        rd.dealer = shoe.dealer
        self.assign_holders(rd, shoe)
        if kind == "regular":
            rd.wagers = self.make_wagers(rd, shoe)
        rd.play()
        if self.plant is not None and self.plant_gen is not None and end_fault is None:
            past_post(self.plant, self.spec.table_id, rd, self.plant_gen)
        if end_fault is not None:
            fault: Fault | None = self.void_fault(rd, end_fault)
        else:
            fault = self.maybe_inject(rd, shoe) if self.fault_rate else None
        self.finish_round(rd, shoe, fault)
        return rd

    def maybe_inject(self, rd: Round, shoe: Shoe) -> Fault | None:
        # Free and simulated rounds are rare: they take faults at a higher rate, so that a
        # small dataset shows theirs too.
        rate = self.fault_rate if rd.kind == "regular" else min(1.0, 10 * self.fault_rate)
        # A fault that replays the round needs a full six cards: with fewer left, the
        # replayed round could run out and turn void, and its fault would not be seen.
        short = len(shoe.seq) - rd.start < 6
        if rd.kind == "void" or short or self.rs.u() >= rate:
            return None
        ctx = RoundContext(
            rs=self.rs,
            reader=shoe.reader,
            decks=shoe.decks,
            hand_counts=shoe.counts,
            seats=shoe.seats,
            placed_at=lambda: self.placement(rd),
        )
        if self.kept_curator is not None:
            ctx.keep_curator = lambda: self.keep_curator(rd)
        if self.bank is not None:
            ctx.first_of_bank = rd.banker_bid is not None
            ctx.prev_bank_amount = self.bank.prev_amount
            ctx.suivi_seat = self.bank.suivi_seat
            if self.replaced_bank is not None and rd.kind == "regular":
                ctx.keep_bank = lambda: self.keep_bank(rd, shoe)
        kinds = applicable(rd, ctx)
        return inject(self.rs.pick(kinds), rd, ctx) if kinds else None

    def finish_round(self, rd: Round, shoe: Shoe, fault: Fault | None) -> None:
        shoe.p += rd.used
        # The cover card sits in front of card index cover_pos: it has come out once
        # that card has been dealt (or is next, at the start of a round).
        shoe.cover_seen = shoe.cover_seen or shoe.p > shoe.cover_pos
        rd.cover = shoe.cover_seen
        if rd.kind == "regular" and shoe.p + 20 < shoe.cover_pos and self.rs.u() < DISCARD_RATE:
            taken = 2
            if fault is None and self.fault_rate and self.rs.u() < min(1.0, 10 * self.fault_rate):
                taken = self.discards_not_allowed(shoe.seq[shoe.p])
                fault = Fault("discards_too_many", f"{taken} cards discarded after an irregularity")
            rd.discarded = shoe.seq[shoe.p : shoe.p + taken]
            shoe.p += taken
        for card in itertools.chain(rd.pc, rd.bc):
            shoe.counts[card] += 1
        if len(rd.pc) >= 2 and len(rd.bc) >= 2:
            player, banker = royal9_combo(rd.pc[:2]), royal9_combo(rd.bc[:2])
            if player is not None and banker is not None and player[0] == banker[0]:
                self.dealt_combos.add(player[0])
        self.update_holders(rd)
        self.write_round(rd, shoe, fault)
        self.produced += 1
        self.out.tick()

    def discards_not_allowed(self, first: int) -> int:
        """A number of discards the procedure does not take: never two, and at Chemin de
        Fer never one plus the disclosed card's value (a ten-value card: 0, 1 or 10)."""
        value = BURN_VALUES[first]  # ace 1, faces and tens 10
        allowed = {2, 1 + value} | ({1, 2, 11} if value == 10 else set())
        if not self.options.chemin:
            allowed = {2}
        return next(n for n in range(3, 9) if n not in allowed)

    def write_round(self, rd: Round, shoe: Shoe, fault: Fault | None) -> None:
        tid = self.spec.table_id
        self.out.add("rounds", (
            rd.round_id, shoe.shoe_id, tid, rd.round_no, rd.dealt, rd.nmb, rd.kind,
            rd.pc, rd.bc, rd.player_total, rd.banker_total, rd.outcome, rd.ez_event,
            rd.cover, rd.discarded, rd.dealer, rd.curator, rd.banker_seat, rd.banker_bid,
        ))  # fmt: skip
        marker = shoe.opts.commission_collection == "marker"
        for w in rd.wagers:
            w.wager_id = self.out.next_id("W", 8)
            self.out.add("wagers", (
                w.wager_id, rd.round_id, w.seat, w.patron, w.bet, w.call, w.amount,
                w.rollover, w.placed_at, w.result, w.payout, w.commission, w.award,
            ))  # fmt: skip
            if marker and w.commission:
                owed = shoe.owed.setdefault((w.seat, w.patron), [0, 0])
                owed[0] += w.commission
                owed[1] += 1
        if fault is not None:
            wager_id = fault.wager.wager_id if fault.wager is not None else None
            self.out.fault(
                fault.kind, tid, shoe.shoe_id, rd.round_id, wager_id, fault.detail, fault.impact
            )

    # -- curator and Bank --------------------------------------------------------------

    def start_holders(self, shoe: Shoe) -> None:
        """A new shoe starts a new selection (INDEX Ambiguity 8): ma-baccarat §7(b) offers
        it to the seats anew, Chemin de Fer §4(b) auctions the Bank; the holder who lost
        the last round of the shoe before may take it again."""
        o = self.options
        if o.ruleset == MA_BACCARAT:
            self.barred = None
            self.curator = self.offer_shoe(shoe, None)
            self.curator_lost, self.kept_curator = False, None
        elif o.chemin:
            self.bank = self.new_bank(shoe, None, None)
            self.bank_lost = self.bank_voluntary = False
            self.replaced_bank = None

    def offer_shoe(self, shoe: Shoe, exclude: int | None) -> int | None:
        seats = [s for s, _ in shoe.seats if s not in (exclude, self.barred)]
        if not seats or self.rs.u() < 0.12:
            return None  # the dealer deals (§7(d))
        return self.rs.pick(seats)

    def new_bank(self, shoe: Shoe, exclude: int | None, last: int | None) -> Bank:
        seat, patron = self.rs.pick([sp for sp in shoe.seats if sp[0] != exclude])
        if last is None:  # §4(b), §10(b): the highest offer
            bid = self.spec.min_bet * self.rs.pick(BID_LADDER)
            bid += self.rs.pick((0, 0, 0, 0, 2500, 3750))
        else:  # §10(c): voluntary pass, once to twice the last wager
            bid = _whole_dollars_between(self.rs, last, 2 * last)
        return Bank(seat, patron, bid)

    def assign_holders(self, rd: Round, shoe: Shoe) -> None:
        o = self.options
        self.kept_curator = None
        self.replaced_bank = None
        if o.ruleset == MA_BACCARAT:
            if self.curator_lost:
                self.kept_curator = self.curator
                self.curator = self.offer_shoe(shoe, self.curator)
                self.curator_lost = False
            elif self.rs.u() < CURATOR_VOLUNTARY_PASS:
                self.curator = self.offer_shoe(shoe, self.curator)
            rd.curator = self.curator
        elif o.chemin:
            assert self.bank is not None
            if self.bank_lost or self.bank_voluntary:
                old = self.bank
                last = old.prev_amount if self.bank_voluntary else None
                self.bank = self.new_bank(shoe, old.seat, last)
                self.replaced_bank = old if self.bank_lost else None
                self.bank_lost = self.bank_voluntary = False
            rd.banker_seat = self.bank.seat
            first = self.bank.prev_amount is None and rd.kind == "regular"
            rd.banker_bid = self.bank.bid if first else None

    def update_holders(self, rd: Round) -> None:
        if rd.kind != "regular":
            return  # only regular rounds force a pass (INDEX Ambiguity 8)
        outcome = rd.facts.outcome  # the Banker's Hand as dealt, whatever was announced
        if self.options.ruleset == MA_BACCARAT:
            self.curator_lost = outcome == "player" and rd.curator is not None
            self.barred = rd.curator if self.curator_lost else None
        elif self.options.chemin:
            bank = self.bank
            assert bank is not None
            bank.prev_amount = next(w.amount for w in rd.wagers if w.bet == "banker")
            if outcome != "tie":  # a standoff does not count for Suivi (§6(b))
                # Only a call of the whole Bank "equaled" its wager (INDEX Ambiguity 3).
                full = next(
                    (
                        w
                        for w in rd.wagers
                        if w.call in ("suivi", "banco") and w.amount == bank.prev_amount
                    ),
                    None,
                )
                bank.suivi_seat = full.seat if full is not None and outcome == "banker" else None
            if outcome == "player":
                self.bank_lost = True
            else:
                self.bank_voluntary = self.rs.u() < BANK_VOLUNTARY_PASS

    def keep_curator(self, rd: Round) -> None:
        self.curator = rd.curator = self.kept_curator

    def keep_bank(self, rd: Round, shoe: Shoe) -> None:
        assert self.replaced_bank is not None
        self.bank, self.replaced_bank = self.replaced_bank, None
        rd.banker_seat, rd.banker_bid = self.bank.seat, None
        rd.wagers = self.chemin_wagers(rd, shoe)
        rd.play()

    # -- wagers ------------------------------------------------------------------------

    def placed_at(self, rd: Round) -> int | None:
        if self.rs.u() < 0.02:
            return None  # not every system logs placement times
        return self.placement(rd)

    def placement(self, rd: Round) -> int:
        """When a stake was placed: before "no more bets", which a round being wagered on
        (or given a fault's wager) has logged; only a fault of its own unlogs it."""
        assert rd.nmb is not None
        return rd.nmb - self.paced(self.rs.between(500, 90_000) * 1000)

    def make_wagers(self, rd: Round, shoe: Shoe) -> list[Wager]:
        if shoe.opts.chemin:
            return self.chemin_wagers(rd, shoe)
        wagers: list[Wager] = []
        for seat, patron in shoe.seats:
            if self.rs.u() < PLAY_RATE:
                wagers += self.seat_wagers(rd, shoe.opts, seat, patron)
        if not wagers:
            seat, patron = self.rs.pick(shoe.seats)
            wagers.append(self.wager(rd, seat, patron, "banker", self.main_amount()))
        return wagers

    def wager(self, rd: Round, seat: int, patron: str | None, bet: str, amount: int) -> Wager:
        return Wager(seat, patron, bet, amount, self.placed_at(rd), self.rs.u())

    def seat_wagers(self, rd: Round, o: TableOptions, seat: int, patron: str | None) -> list[Wager]:
        rs = self.rs
        bets = []
        r = rs.u()
        if r < 0.9:
            bets.append(("banker" if r < 0.5 else "player", self.main_amount()))
        side = [("tie", 0.08)]
        if o.dragon_bonus_paytable:
            side += [("dragon_bonus_banker", 0.07), ("dragon_bonus_player", 0.06)]
        if o.ez_baccarat:
            side.append(("dragon7", 0.07))
            if o.ruleset != MARYLAND:
                side.append(("panda8", 0.05))
        if o.house_money:
            side.append(("house_money", 0.12))
        for bet, rate in side:
            if rs.u() < rate:
                bets.append((bet, rs.pick(SIDE_AMOUNTS)))
        if o.royal9_paytable and rs.u() < 0.15:
            bets.append(("royal9", ROYAL9_STAKE))
        if not bets:
            bets.append(("player", self.main_amount()))
        return [self.wager(rd, seat, patron, bet, amount) for bet, amount in bets]

    def main_amount(self) -> int:
        rs, low = self.rs, self.spec.min_bet
        r = rs.u()
        if r < 0.85:
            return low * rs.pick(MAIN_LADDER)
        if r < 0.95:
            return 100 * rs.between(low // 100, 10 * low // 100)
        if r < 0.98:
            return rs.pick(ODD_AMOUNTS)
        return 100 * rs.between(low // 100, 5 * low // 100) + rs.pick((10, 25, 35, 50, 75))

    def chemin_wagers(self, rd: Round, shoe: Shoe) -> list[Wager]:
        """§5(b) Banker's stake, then Suivi, else Banco, else partial wagers (§6)."""
        bank, rs = self.bank, self.rs
        assert bank is not None
        stake = self.bank_stake(bank)
        wagers = [self.wager(rd, bank.seat, bank.patron, "banker", stake)]
        others = [sp for sp in shoe.seats if sp[0] != bank.seat]
        entitled = [sp for sp in others if sp[0] == bank.suivi_seat]
        callers = [sp for sp in others if sp[0] != bank.suivi_seat]
        if entitled and rs.u() < 0.6:
            wagers.append(self._against(rd, entitled[0], stake, "suivi"))
        elif callers and rs.u() < 0.3:
            wagers.append(self._against(rd, rs.pick(callers), stake, "banco"))
        else:
            wagers += self.partials(rd, others, stake)
        return wagers

    def _against(self, rd: Round, sp: tuple[int, str | None], amount: int, call: str) -> Wager:
        w = self.wager(rd, sp[0], sp[1], "player", amount)
        w.call = call
        return w

    def partials(self, rd: Round, others: list, stake: int) -> list[Wager]:
        rs = self.rs
        chosen = rs.shuffled(others)[: 1 + rs.below(min(4, len(others)))]
        full = len(chosen) > 1 and rs.u() < 0.35  # the Bank fully covered
        target = stake if full else stake * rs.between(20, 95) // 100
        weights = [0.2 + rs.u() for _ in chosen]
        total = sum(weights)
        out = []
        for sp, weight in zip(chosen, weights, strict=True):
            amount = int(target * weight / total) // 100 * 100  # whole dollars, never above
            if amount > 0:
                out.append(self._against(rd, sp, amount, "partial"))
        if not out:
            out.append(self._against(rd, chosen[0], max(1, target // 2), "partial"))
        return sorted(out, key=lambda w: w.seat)

    def bank_stake(self, bank: Bank) -> int:
        rs = self.rs
        if bank.prev_amount is None:  # at least the bid
            extra = 0 if rs.u() < 0.7 else bank.bid * rs.between(1, 50) // 100 // 100 * 100
            return bank.bid + extra
        prev = bank.prev_amount
        if rs.u() < 0.6 or prev > 5_000_000:
            return prev
        return _whole_dollars_between(rs, prev, 2 * prev)


def _whole_dollars_between(rs: Rand, low: int, high: int) -> int:
    lo, hi = -(-low // 100), high // 100
    return 100 * rs.between(lo, hi) if lo <= hi else low


def split_budget(rounds: int, weights: Sequence[int]) -> list[int]:
    """Largest-remainder split of `rounds` by weight (ties go to the earlier table)."""
    total = sum(weights)
    shares = [rounds * w // total for w in weights]
    rest = sorted(range(len(weights)), key=lambda i: (-(rounds * weights[i] % total), i))
    for i in rest[: rounds - sum(shares)]:
        shares[i] += 1
    return shares


def _table_row(spec: TableSpec, effective_from: int, o: TableOptions) -> tuple:
    return (
        spec.table_id, spec.property_id, o.ruleset, effective_from, o.seats, o.decks,
        o.automated_shuffler, o.ez_baccarat, o.tie_pays, o.commission_percent,
        o.commission_rounding, o.commission_collection, o.dragon_bonus_paytable,
        o.house_money, o.house_money_rollover_percent, o.royal9_paytable, o.free_hands,
    )  # fmt: skip


def _play_tables(
    specs: list[TableSpec],
    streams: Sequence[np.random.Generator],
    budgets: list[int],
    outputs: Outputs,
    fault_rate: float,
    shoe_fault_rate: float,
    schedule: Schedule,
    plant: Plant | None = None,
    plant_streams: Sequence[np.random.Generator] = (),
) -> list[TableRun]:
    runs = []
    for index, (spec, gen, budget) in enumerate(zip(specs, streams, budgets, strict=True)):
        rs = Rand(gen)
        planted = plant_streams[index] if plant is not None else None
        run = TableRun(
            spec, index, budget, rs, outputs, fault_rate, shoe_fault_rate, schedule, plant, planted
        )
        run.run()
        runs.append(run)
    for run in runs:
        for effective_from, opts in sorted(run.option_rows + run.faulty_rows, key=lambda r: r[0]):
            outputs.add("tables", _table_row(run.spec, effective_from, opts))
    for run in runs:
        spec = run.spec
        # midi has no default combinations; ma-baccarat defaults to its Table 2.
        if spec.options.ruleset == MIDI and spec.options.royal9_paytable:
            for seat, combos in sorted(spec.options.royal9_combos.items()):
                for face, nine in sorted(combos):
                    combo = CARD_NAMES[face] + CARD_NAMES[nine]
                    outputs.add("royal9_seats", (spec.table_id, seat, combo))
            run.maybe_post_a_suited_combination()
    return runs


def checked_arguments(
    rounds: int, seed: int, fault_rate: float, shoe_fault_rate: float | None
) -> float:
    """ValueError for an argument out of range; the shoes' fault rate, resolved."""
    if rounds < 0:
        raise ValueError(f"rounds must be >= 0, got {rounds}")
    if seed < 0:
        raise ValueError(f"seed must be >= 0, got {seed}")
    if not 0.0 <= fault_rate <= 1.0:
        raise ValueError(f"fault_rate must lie in [0, 1], got {fault_rate}")
    shoe_fault_rate = fault_rate if shoe_fault_rate is None else shoe_fault_rate
    if not 0.0 <= shoe_fault_rate <= 1.0:
        raise ValueError(f"shoe_fault_rate must lie in [0, 1], got {shoe_fault_rate}")
    return shoe_fault_rate


def simulate(
    out: Path,
    rounds: int,
    seed: int,
    fault_rate: float = 0.0,
    progress: Callable[[int], None] | None = None,
    shoe_fault_rate: float | None = None,
    gaming_day: date | None = None,
    plant: Plant | None = None,
) -> SimulationSummary:
    """Write a dataset of `rounds` rounds into the folder `out` (created if missing).

    `out` must be missing, empty or hold a previous simulation's output, which is
    replaced; anything else is refused (`folder.FolderInUse`, see `folder`).
    Files: the six contract tables, `fault_key.parquet` and the marker
    `_simulation.json` (the arguments, written first). With `fault_rate` > 0 each
    round, and each shoe, independently receives at most one fault with that probability;
    `shoe_fault_rate` sets the shoes' probability apart (a shoe spans some sixty rounds, so
    a small dataset needs a higher one to show a handful of each shoe fault).
    `progress(n)` is called with the number of rounds produced since the last call.

    With `gaming_day`, the night is that day's (see `Schedule`): the same tables as without
    it, for the same seed, but dealt from random streams of the seed and the date, so
    that a day is dealt the same, with the same arguments, in any archive that holds it.

    `plant` deals slow frauds into the night (`plants`), from random streams of their own.
    """
    shoe_fault_rate = checked_arguments(rounds, seed, fault_rate, shoe_fault_rate)
    out = Path(out)
    day = None if gaming_day is None else gaming_day.isoformat()
    arguments: dict[str, object] = {
        "rounds": rounds,
        "seed": seed,
        "faults": fault_rate,
        "gaming_day": day,
    }
    planted: dict[str, object] = {} if plant is None else {"plant": asdict(plant)}
    claim(out, arguments | {"shoe_faults": shoe_fault_rate} | planted)
    root = np.random.default_rng(seed)
    specs = table_specs(Rand(root))
    # One stream per table: a table's data does not shift when another table changes.
    if gaming_day is None:
        schedule, streams = EVENING, root.spawn(len(specs))
    else:
        schedule = Schedule.gaming_day(gaming_day)
        days = np.random.SeedSequence([seed, gaming_day.toordinal()])
        streams = [np.random.default_rng(child) for child in days.spawn(len(specs))]
    budgets = split_budget(rounds, [s.weight for s in specs])
    outputs = Outputs(out, progress, schedule.tag)
    plant_streams = []
    if plant is not None:
        ordinal = 0 if gaming_day is None else gaming_day.toordinal()
        planting = np.random.SeedSequence([seed, ordinal, PLANT_STREAM])
        plant_streams = [np.random.default_rng(child) for child in planting.spawn(len(specs))]
    try:
        runs = _play_tables(
            specs, streams, budgets, outputs, fault_rate, shoe_fault_rate, schedule, plant,
            plant_streams,
        )  # fmt: skip
    except BaseException:
        outputs.abort()
        raise
    rows = outputs.close()
    return SimulationSummary(
        out=out,
        rows=rows,
        rounds_per_table={run.spec.table_id: run.produced for run in runs},
        faults=dict(sorted(outputs.faults.items())),
        rulesets={spec.table_id: spec.options.ruleset for spec in specs},
        gaming_day=gaming_day,
    )
