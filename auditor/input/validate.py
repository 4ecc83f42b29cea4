"""Stage 2, validate: sort every input row into audited or quarantined.

Row checks run through the pandera models batch by batch, so memory stays bounded
by the batch, not the file. Cross-row checks (unique ids, foreign keys, the options
row in force when a shoe opened) are polars queries over the key columns only; where
one bucket holds every id, the id checks take their ids from the row checks' batches,
so that each column is read from disk once.
A quarantined row takes the rows that depend on it along (a shoe's rounds, a
round's wagers), each with the reason. Nothing is dropped silently: for every
table, rows in = rows audited + rows quarantined.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field

import pandera.polars as pa
import polars as pl

from auditor.contract import TABLES
from auditor.errors import RulesetError
from auditor.input.cross_rows import (
    BatchIds,
    IdBuckets,
    buckets_for,
    collect_streaming,
    cross_row_checks,
    key_columns,
    start_id_checks,
)
from auditor.input.gather import gather_small_files
from auditor.input.load import (
    FILE_COLUMN,
    ROW_COLUMN,
    Dataset,
    SourceFile,
    normalize_exprs,
    wider_integer_columns,
)
from auditor.input.quarantine import (
    ROW_KEY,
    concat_quarantine,
    empty_quarantine,
    quarantine_rows,
    shortened_text,
    sorted_quarantine,
)
from auditor.input.ranges import out_of_range
from auditor.input.router import Routed, Router, Routing, router_for
from auditor.input.scan import batch_rows_within, raw_scan, run_batches, scan_table, table_runs
from auditor.packs.loaded import LoadedPacks, builtin_packs
from auditor.packs.model import RulePack
from auditor.schemas import MAX_ID_CHARS, MODELS, VALID_CARDS, bounded_text_columns

COUNTS_SCHEMA = {
    "table": pl.String(),
    "rows_in": pl.Int64(),
    "rows_audited": pl.Int64(),
    "rows_quarantined": pl.Int64(),
}

CHECK_REASONS = {
    "card_format": "not a card: rank A23456789TJQK followed by suit SHDC",
    # `_cite_hand_rules` names each round's own ruleset and section where it can.
    "two_or_three_cards": "a hand holds 2 or 3 cards, a void round's at most 3 "
    "(never more than one additional card per hand)",
    "not_nullable": "required value is missing",
    "str_matches": "does not match the contract's format",
    "isin": "not one of the contract's values",
    "greater_than_or_equal_to": "below the contract's minimum",
    "less_than_or_equal_to": "above the contract's maximum",
    "in_range": "outside the contract's range",
}

# (what is being done, how many rows or rounds it just finished): a table's name while
# validating, then "routing", "audit" (rounds), "surveillance", "outputs" (`STAGES`).
ProgressCallback = Callable[[str, int], None]
STAGES = {
    "routing": "routing rows into partitions",
    "audit": "auditing rounds",
    "surveillance": "surveillance",
    "outputs": "writing outputs",
}


@dataclass(frozen=True)
class ValidatedDataset:
    """Audited rows per table (lazy), the quarantine and the row accounting, and the
    packs the rows were checked against, which the later stages audit them under."""

    dataset: Dataset
    audited: dict[str, pl.LazyFrame]
    quarantine: pl.DataFrame
    counts: pl.DataFrame
    packs: LoadedPacks = field(default_factory=builtin_packs)
    # The partitions validation's read routed into files of their own, if it did.
    routed: Routed | None = None


def validate(
    dataset: Dataset,
    progress: ProgressCallback | None = None,
    id_budget_bytes: int | None = None,
    packs: LoadedPacks | None = None,
    id_buckets: IdBuckets | None = None,
    routing: Routing | None = None,
    batch_bytes: int | None = None,
) -> ValidatedDataset:
    """The dataset validated: the audited rows (lazy), the quarantine and the row counts.
    The cross-row checks hold about `id_budget_bytes` of ids at a time (all if None).
    `id_buckets` runs the id checks' buckets (in this process if None; an engine's workers
    otherwise, while this process checks the rows). A table in many small files is read
    from a copy in one file (`gather`), which the result's dataset holds: read the
    audited rows while the result is held. Given `routing`, a night not laid out table by
    table is routed into its partitions' files as it is read (`router`): the result's
    `routed`, whose temporary folder (if it made one) lasts as long as the result. A batch
    of rows holds about `batch_bytes` at most (`BATCH_ROWS` rows if None)."""
    # Read several times over from here on, the small files are read once.
    packs = builtin_packs() if packs is None else packs
    dataset = gather_small_files(dataset)
    _reject_unknown_rulesets(dataset, packs)
    with router_for(dataset, routing) as router:
        if router is not None and id_budget_bytes is not None and id_buckets is None:
            # The router's map and unwritten rows are held beside the ids, in one budget:
            # at 10 million rounds by time they took the run to 2.2 GB under a 2 GB limit.
            id_budget_bytes = max(id_budget_bytes // 4, id_budget_bytes - router.bytes_held)
        # Where one bucket holds every id, the row checks' batches feed the id checks,
        # which then read no id column again; buckets (and an engine's workers) read
        # their own.
        batch_ids = None
        if id_buckets is None and buckets_for(dataset, id_budget_bytes) == 1:
            batch_ids, id_checks = BatchIds(dataset), None
        else:
            id_checks = start_id_checks(dataset, id_budget_bytes, id_buckets)
        row_level = _row_checks(dataset, progress, batch_ids, router, batch_bytes)
        row_level = _cite_hand_rules(dataset, row_level, packs)
        cross = cross_row_checks(dataset, row_level, id_checks=id_checks, batch_ids=batch_ids)
        batch_ids = None  # its ids let go before any wagers are routed
        quarantine = _dependents(dataset, concat_quarantine([row_level, cross]))
        quarantine = sorted_quarantine(quarantine)
        audited = {t: audited_scan(dataset, t, quarantine) for t in TABLES}
        counts = _row_counts(dataset, quarantine)
        routed = router.finish(audited["rounds"], progress) if router is not None else None
    return ValidatedDataset(dataset, audited, quarantine, counts, packs, routed)


def _cite_hand_rules(
    dataset: Dataset, row_level: pl.DataFrame, packs: Mapping[str, RulePack]
) -> pl.DataFrame:
    """The hand-size reason with the section of the round's own ruleset (its pack's
    `limits.cards_per_hand` cite), read from its table's options; rows whose table is
    unknown keep the reason without a section."""
    is_hand = (pl.col("table") == "rounds") & pl.col("check").str.starts_with("two_or_three")
    hands = row_level.filter(is_hand)
    if hands.height == 0:
        return row_level
    sections = pl.DataFrame(
        {
            "ruleset": list(packs),
            "_section": [p.cite(p.limits.cards_per_hand.cite) for p in packs.values()],
        }
    )
    rulesets = scan_table(dataset, "tables").group_by("table_id").agg(pl.col("ruleset").first())
    located = (
        scan_table(dataset, "rounds")
        .select(
            pl.col(FILE_COLUMN).alias("file"),
            pl.col(ROW_COLUMN).cast(pl.Int64).alias("row"),
            "table_id",
        )
        .join(hands.lazy().select("file", "row").unique(), on=["file", "row"], how="semi")
        .join(rulesets, on="table_id", how="left")
        .join(sections.lazy(), on="ruleset", how="left")
        .select("file", "row", "_section")
        .collect()
    )
    cited = hands.join(located, on=["file", "row"], how="left").with_columns(
        pl.when(pl.col("_section").is_not_null())
        .then(
            pl.col("reason").str.replace(
                "(never more", pl.format("({}: never more", pl.col("_section")), literal=True
            )
        )
        .otherwise(pl.col("reason"))
        .alias("reason")
    )
    return pl.concat([row_level.filter(~is_hand), cited.drop("_section")], how="vertical")


def _reject_unknown_rulesets(dataset: Dataset, packs: LoadedPacks) -> None:
    # An unknown ruleset is not a bad row but a dataset the auditor has no rules for.
    by_name = {source.name: source for source in dataset.files["tables"]}
    for run in table_runs(dataset, "tables"):
        bad = (
            raw_scan(run)
            .select(FILE_COLUMN, ROW_COLUMN, "ruleset")
            .filter(~pl.col("ruleset").is_in(sorted(packs.rulesets())))
            .head(1)
            .collect()
        )
        if bad.height:
            name, row, value = bad.row(0)
            raise RulesetError(
                f"{name}: column 'ruleset', row {row}: unknown ruleset "
                f"{shortened_text(value)!r}; "
                f"the rule packs loaded are {packs.described()} (a pack of its own is given "
                "with --rules DIR)",
                path=str(by_name[name].path),
                column="ruleset",
            )


@dataclass(frozen=True)
class _Batch:
    source: SourceFile  # the batch's first file: all of its files share this one's schema
    rows: pl.DataFrame  # in contract types, with provenance
    overflows: pl.DataFrame  # quarantine rows of integers that do not fit the contract type
    too_long: pl.DataFrame  # quarantine rows of ids longer than any real one


def _row_checks(
    dataset: Dataset,
    progress: ProgressCallback | None,
    batch_ids: BatchIds | None,
    router: Router | None,
    batch_bytes: int | None,
) -> pl.DataFrame:
    found = []
    for batch in _read_ahead(_batches(dataset, batch_ids, router, batch_bytes)):
        failures = _pandera_failures(batch.source, batch.rows)
        if batch.overflows.height:
            # An overflowing integer reads as null; report the overflow, not a missing value.
            failures = failures.join(
                batch.overflows.select("file", "row", "column"),
                on=["file", "row", "column"],
                how="anti",
            )
        found += [batch.overflows, batch.too_long, failures]
        if progress:
            progress(batch.source.table, batch.rows.height)
    return concat_quarantine(found)


def decoded_batches(
    dataset: Dataset, batch_bytes: int | None
) -> Iterator[tuple[SourceFile, pl.DataFrame, pl.DataFrame]]:
    """Every table's rows as validation reads them, in batches of about `batch_bytes`:
    each batch's first file, its rows as read, and the same in contract types with
    provenance. Small files of one schema share a batch: each row keeps its own `_file`
    and `_row`, and every check reads the schema, never the file."""
    for table in dataset.tables():
        for run in table_runs(dataset, table):
            source = run.first
            normalize = [FILE_COLUMN, ROW_COLUMN, *normalize_exprs(source)]
            for raw in run_batches(run, batch_rows_within(source, batch_bytes)):
                yield source, raw, raw.select(normalize)


def _batches(
    dataset: Dataset, batch_ids: BatchIds | None, router: Router | None, batch_bytes: int | None
) -> Iterator[_Batch]:
    # Each batch is given to the id checks and the router here, in the reading thread,
    # while the batch before is checked.
    for source, raw, rows in decoded_batches(dataset, batch_bytes):
        if batch_ids is not None:
            batch_ids.add(source.table, rows)
        if router is not None:
            router.add(source.table, rows)
        overflows = concat_quarantine([_overflows(source, raw), out_of_range(source.table, raw)])
        yield _Batch(source, rows, overflows, _too_long(source, raw, rows))


def _read_ahead(batches: Iterator[_Batch]) -> Iterator[_Batch]:
    """The batches, each read while the one before is checked.

    pandera's checks run one after another and mostly on one core; reading (decoding
    Parquet) in a second thread meanwhile keeps both cores busy, for one batch more
    in memory. polars releases the GIL while it works.
    """
    with ThreadPoolExecutor(max_workers=1) as reader:
        ahead = reader.submit(next, batches, None)
        while (batch := ahead.result()) is not None:
            ahead = reader.submit(next, batches, None)
            yield batch


def _overflows(source: SourceFile, raw: pl.DataFrame) -> pl.DataFrame:
    frames = []
    for column in wider_integer_columns(source):
        dtype = TABLES[source.table][column][0]
        lost = raw.filter(
            pl.col(column).is_not_null() & pl.col(column).cast(dtype, strict=False).is_null()
        )
        if lost.height:
            frames.append(
                quarantine_rows(
                    source.table,
                    lost,
                    column=column,
                    check="fits_type",
                    value=pl.col(column).cast(pl.String),
                    reason=f"value does not fit the contract type {dtype}",
                )
            )
    return concat_quarantine(frames)


def _too_long(source: SourceFile, raw: pl.DataFrame, rows: pl.DataFrame) -> pl.DataFrame:
    """Quarantine rows of ids past `MAX_ID_CHARS`, measured in the file's own column
    (`rows` holds a dictionary-encoded one already shortened, `load._dictionary_text`)."""
    frames = []
    for column in bounded_text_columns(source.table):
        if column not in raw.columns:
            continue
        long = rows.filter(_longer_than_bound(raw.get_column(column)))
        if long.height:
            frames.append(
                quarantine_rows(
                    source.table,
                    long,
                    column=column,
                    check="max_length",
                    value=pl.col(column),
                    reason=f"longer than {MAX_ID_CHARS:,} characters, the contract's bound "
                    "for an id or a name (real ones are short)",
                )
            )
    return concat_quarantine(frames)


def _longer_than_bound(text: pl.Series) -> pl.Series:
    if isinstance(text.dtype, (pl.Categorical, pl.Enum)):
        return text.cat.len_chars() > MAX_ID_CHARS  # counted once per distinct value
    # Bytes are never fewer than characters and cost nothing to count: only the values
    # past the bound in bytes have their characters counted.
    past = text.str.len_bytes() > MAX_ID_CHARS
    if not past.any():
        return past
    return past & (text.str.len_chars() > MAX_ID_CHARS)


# pandera collects each check alone (some seventy a table); polars' default, streaming, takes
# ten times the in-memory engine's 13 us to start: half of pandera's time on a small night.
# The choice is process-wide: the lock keeps two validations from undoing each other's; the
# reading thread meanwhile names its file reads' engine, its other queries a batch's worth.
_ENGINE_CHOICE = threading.Lock()


@contextmanager
def _in_memory_engine() -> Iterator[None]:
    with _ENGINE_CHOICE, pl.Config(engine_affinity="in-memory"):
        yield


def _pandera_failures(source: SourceFile, batch: pl.DataFrame) -> pl.DataFrame:
    model = MODELS[source.table]
    try:
        with _in_memory_engine():
            model.validate(batch, lazy=True)
        return empty_quarantine()
    except pa.errors.SchemaErrors as errors:
        cases = errors.failure_cases
    cases = cases.filter(pl.col("index").is_not_null())
    cases = _name_bad_cards(batch, cases)
    rows = batch.with_row_index("index").join(
        cases.select(
            pl.col("index").cast(pl.UInt32),
            pl.col("column"),
            pl.col("check"),
            pl.col("failure_case").alias("value"),
        ),
        on="index",
        how="inner",
    )
    return quarantine_rows(
        source.table,
        rows,
        column=pl.col("column"),
        check=pl.col("check"),
        value=pl.col("value"),
        reason=_reason_expr(),
    )


def _name_bad_cards(batch: pl.DataFrame, cases: pl.DataFrame) -> pl.DataFrame:
    """For a list of cards, show the cards that are wrong rather than the whole list."""
    is_card_check = pl.col("check") == "card_format"
    fixed = [cases.filter(~is_card_check)]
    for column in cases.filter(is_card_check).get_column("column").unique().sort():
        bad_cards = batch.select(
            pl.int_range(pl.len(), dtype=pl.Int64).alias("index"),
            pl.col(column)
            .list.eval(pl.element().filter(~pl.element().is_in(VALID_CARDS)))
            .list.join(" ")
            .alias("bad_cards"),
        )
        mine = cases.filter(is_card_check & (pl.col("column") == column))
        fixed.append(
            mine.with_columns(pl.col("index").cast(pl.Int64))
            .join(bad_cards, on="index", how="left")
            .with_columns(pl.col("bad_cards").alias("failure_case"))
            .drop("bad_cards")
            .cast(mine.schema)
        )
    return pl.concat(fixed, how="vertical")


def _reason_expr() -> pl.Expr:
    check_name = pl.col("check").str.extract(r"^([a-z_]+)", 1)
    reason = pl.lit("failed check")
    for name, text in CHECK_REASONS.items():
        reason = pl.when(check_name == name).then(pl.lit(text)).otherwise(reason)
    return pl.concat_str(reason, pl.lit(" ("), pl.col("check"), pl.lit(")"))


# ---- dependants ------------------------------------------------------------------

# child table, its column, parent table, parent key: a child of a quarantined parent
# cannot be audited (no options, no cards, no round to settle against).
DEPENDENCIES = (
    ("shoes", "table_id", "tables", "table_id"),
    ("rounds", "shoe_id", "shoes", "shoe_id"),
    ("wagers", "round_id", "rounds", "round_id"),
    ("commission_collections", "shoe_id", "shoes", "shoe_id"),
    ("royal9_seats", "table_id", "tables", "table_id"),
)


def _dependents(dataset: Dataset, quarantine: pl.DataFrame) -> pl.DataFrame:
    found = [quarantine]
    for child, column, parent, parent_key in DEPENDENCIES:
        if child not in dataset.files:
            continue
        bad_parents = _quarantined_keys(dataset, parent, parent_key, concat_quarantine(found))
        if bad_parents.height == 0:
            continue
        rows = collect_streaming(
            key_columns(dataset, child, *ROW_KEY[child], column).join(
                bad_parents.lazy().rename({parent_key: column}), on=column, how="inner"
            )
        )
        found.append(
            quarantine_rows(
                child,
                rows,
                column=column,
                check="parent_quarantined",
                value=pl.col(column),
                reason=f"its {parent[:-1]} {column} is quarantined",
            )
        )
    return concat_quarantine(found)


def _quarantined_keys(
    dataset: Dataset, table: str, key: str, quarantine: pl.DataFrame
) -> pl.DataFrame:
    bad = quarantine.filter(pl.col("table") == table).select(
        pl.col("file").alias(FILE_COLUMN), pl.col("row").alias(ROW_COLUMN)
    )
    if bad.height == 0:
        return pl.DataFrame(schema={key: pl.String()})
    return collect_streaming(
        key_columns(dataset, table, key)
        .join(bad.lazy().unique(), on=[FILE_COLUMN, ROW_COLUMN], how="inner")
        .select(key)
        .unique()
    )


# ---- results ---------------------------------------------------------------------


def audited_scan(dataset: Dataset, table: str, quarantine: pl.DataFrame) -> pl.LazyFrame:
    """The table's rows less those in `quarantine` (by its `table`, `file` and `row`): the
    audited rows, rebuilt the same way wherever the quarantine's keys are sent."""
    bad = (
        quarantine.filter(pl.col("table") == table)
        .select(pl.col("file").alias(FILE_COLUMN), pl.col("row").alias(ROW_COLUMN))
        .unique()
    )
    rows = scan_table(dataset, table)
    if bad.height == 0:
        return rows
    return rows.join(bad.lazy(), on=[FILE_COLUMN, ROW_COLUMN], how="anti")


def _row_counts(dataset: Dataset, quarantine: pl.DataFrame) -> pl.DataFrame:
    records = []
    for table in TABLES:
        rows_in = sum(s.rows for s in dataset.files.get(table, ()))
        quarantined = (
            quarantine.filter(pl.col("table") == table).select("file", "row").unique().height
        )
        records.append((table, rows_in, rows_in - quarantined, quarantined))
    return pl.DataFrame(records, schema=COUNTS_SCHEMA, orient="row")
