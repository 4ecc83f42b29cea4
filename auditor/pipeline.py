"""The audit pipeline: load -> validate -> replay -> settle -> procedures -> findings -> outputs.

Each stage is a function of frames; this module only wires them together.
"""

from __future__ import annotations

import functools
import tempfile
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

import polars as pl

from auditor import procedures, replay, settlement
from auditor.defaults import ALERT_FDR
from auditor.errors import AuditorError
from auditor.findings.check import Check, CheckSet, documented
from auditor.findings.table import combine
from auditor.input.cross_rows import IdBuckets
from auditor.input.load import open_dataset
from auditor.input.partition import (
    DEFAULT_PARTITION_ROUNDS,
    PARTITION_ROUNDS,
    ROUND_ROW,
    Partition,
    partition_bytes,
    partitions,
    restrict,
    wagers_of,
)
from auditor.input.router import ROUTE_PREFIX, Routing
from auditor.input.routing import batch_budget, partition_sources
from auditor.input.shoe_options import in_force, shoe_options
from auditor.input.validate import ProgressCallback, ValidatedDataset, validate
from auditor.output.catalog import RunInfo
from auditor.output.files import SURVEILLANCE_FILE, AuditOutputs, write_outputs
from auditor.output.leftovers import claimed_folder, sweep
from auditor.output.outdir import claim as claim_outdir
from auditor.packs.loaded import LoadedPacks, versions
from auditor.packs.model import RulePack
from auditor.report.nightly import write_nightly
from auditor.settlement.permit import BET_NOT_PERMITTED
from auditor.surveillance.cells import write_night_cells
from auditor.surveillance.gather import NightCells, partition_cells
from auditor.surveillance.night import survey
from auditor.surveillance.store import CellStore

# The run's working folder in the temporary folder; a killed run's is swept by the next.
SURVEY_PREFIX = "auditor-survey-"


class CheckingStage(Protocol):
    """What each checking stage's package exports (README, Layout): its checks, and its
    findings frames over a partition as `hold_partition` holds it."""

    @property
    def CHECK_SETS(self) -> tuple[CheckSet, ...]: ...

    def find(
        self,
        part: Mapping[str, pl.LazyFrame],
        replayed: pl.LazyFrame,
        options: pl.LazyFrame,
        packs: Mapping[str, RulePack],
    ) -> list[pl.LazyFrame]: ...


# In the order they run; stage 5 last, as `with_procedures=False` leaves it out.
CHECKING_STAGES: tuple[CheckingStage, ...] = (replay, settlement, procedures)


def all_check_sets() -> tuple[CheckSet, ...]:
    """The stages' own check sets, each emitted over one frame."""
    return tuple(check_set for stage in CHECKING_STAGES for check_set in stage.CHECK_SETS)


def all_checks() -> list[Check]:
    """Every check the pipeline runs, by code: the stages' own check sets."""
    return documented(all_check_sets())


def run_validation(
    dataset_path: Path,
    progress: ProgressCallback | None = None,
    partition_rounds: int | None = None,
    packs: LoadedPacks | None = None,
    id_buckets: IdBuckets | None = None,
    route: bool = False,
    route_folder: Path | None = None,
) -> ValidatedDataset:
    """Validation, holding no more ids at a time than three quarters of what a partition
    of `partition_rounds` rounds takes in memory (all at once if None): the row checks'
    batches and the quarantine are held beside them (at 30 million rounds the whole
    budget peaked at 2.0 GiB of a 2 GiB limit). `id_buckets` runs the id checks' buckets
    (in this process if None; an engine's workers, `auditor.engines`). `route`: a night
    not laid out table by table is routed into partitions of `partition_rounds` as it is
    read, into `route_folder` (a temporary folder if None), for `find` to read in this
    process. A batch of rows the row checks read holds a quarter of a partition's budget at
    most: a million shoes' cards are 6 GB."""
    budget = None if partition_rounds is None else partition_bytes(partition_rounds) * 3 // 4
    # What a batch being routed may hold: a routed batch is one validation read.
    batch_bytes = (
        None if partition_rounds is None else batch_budget(partition_bytes(partition_rounds))
    )
    routing = None
    if route and partition_rounds is not None:
        routing = Routing(partition_rounds, route_folder)
    dataset = open_dataset(dataset_path)
    return validate(dataset, progress, budget, packs, id_buckets, routing, batch_bytes)


def find(
    validated: ValidatedDataset,
    progress: ProgressCallback | None = None,
    partition_rounds: int = PARTITION_ROUNDS,
    with_procedures: bool = True,
    tally: Tally | None = None,
    route_dir: Path | None = None,
) -> pl.DataFrame:
    """Every finding of the audited rows, in the stable order of `findings.table.combine`.

    The audited rows are taken one partition (a group of whole tables) at a time; given
    `tally`, each partition's rows held and surveillance counts are added to it. The
    partitions are read from the files validation's read routed them into
    (`input.router`), if it did; else, where the layout calls for it, routed first
    (`input.routing`), to `route_dir` if given, else to a temporary folder.
    `with_procedures=False` leaves stage 5 out: the benchmark measures what it adds.
    The rows are audited under the packs they were validated against.
    """
    packs = validated.packs
    groups = partitions(validated.audited, partition_rounds)
    # An input not laid out table by table is routed into files per partition: by
    # validation's read if it routed these partitions, else first here.
    routed = validated.routed
    routed_in = routed.folder_for(groups, partition_rounds) if routed is not None else None
    found: list[pl.DataFrame] = []
    with partition_sources(
        validated.dataset,
        validated.audited,
        validated.quarantine,
        groups,
        route_dir,
        progress,
        budget_bytes=partition_bytes(partition_rounds),
        routed_in=routed_in,
    ) as source:
        for index, partition in enumerate(groups):
            audited, whole = source(index)
            result = find_in_partition(audited, partition, whole, packs, with_procedures)
            found += result.frames
            if tally is not None:
                tally.add(result)
            if progress:
                progress("audit", partition.rounds)
    return combine(found)


@dataclass(frozen=True)
class PartitionFindings:
    """One partition's findings frames (in stage order, not yet combined), the rows it
    held per table, for the row accounting, and its counts for surveillance."""

    frames: list[pl.DataFrame]
    rows: dict[str, int]
    cells: NightCells


class Tally:
    """What the partitions report besides their findings, added up over the night: the
    rows each table's partitions held, and surveillance's counts, written to `folder`
    as they come (a temporary folder, removed with the tally, if None)."""

    def __init__(self, folder: Path | None = None) -> None:
        self.rows: dict[str, int] = {}
        self._temporary = None
        if folder is None:
            self._temporary = tempfile.TemporaryDirectory(prefix="auditor-cells-")
            folder = Path(self._temporary.name)
        self.cells = CellStore(folder)

    def add(self, result: PartitionFindings) -> None:
        for name, held in result.rows.items():
            self.rows[name] = self.rows.get(name, 0) + held
        self.cells.add(result.cells)

    def night_cells(self) -> NightCells:
        """The night's counts summed in memory (for tests and small nights)."""
        return self.cells.night()


def find_in_partition(
    audited: Mapping[str, pl.LazyFrame],
    partition: Partition,
    whole: bool,
    packs: Mapping[str, RulePack],
    with_procedures: bool = True,
) -> PartitionFindings:
    """The findings of stages 3-5 over one partition, and the rows it held.

    A pure function of its arguments, so that a distributed engine can run it on a
    worker (`auditor.engines`) and a retried partition gives the same result.
    """
    part, replayed, options = hold_partition(audited, partition, whole, packs)
    # The frames are held in memory: counting them reads nothing again.
    heights = pl.collect_all([frame.select(pl.len()) for frame in part.values()])
    rows = {name: int(height.item()) for name, height in zip(part, heights, strict=True)}
    stages = CHECKING_STAGES if with_procedures else CHECKING_STAGES[:-1]
    found = [frame for stage in stages for frame in stage.find(part, replayed, options, packs)]
    frames = pl.collect_all(found, engine="streaming")
    # Surveillance counts the same held rows and replay here, so it reads nothing again.
    flagged = pl.concat([f.lazy().select("round_id") for f in frames], how="vertical")
    cells = partition_cells(
        part, replayed, options, flagged.drop_nulls(), packs, unoffered_wagers(frames)
    )
    return PartitionFindings(frames, rows, cells)


def survey_cells(
    validated: ValidatedDataset,
    findings: pl.DataFrame,
    folder: Path,
    partition_rounds: int = PARTITION_ROUNDS,
) -> CellStore:
    """Surveillance's counts of the validated rows without the rest of the audit (its
    benchmark, and tests of surveillance alone), in `folder`: `findings` says which
    rounds have one."""
    packs = validated.packs
    flagged = findings.lazy().select("round_id").drop_nulls()
    unoffered = unoffered_wagers([findings])
    store = CellStore(folder)
    for partition in partitions(validated.audited, partition_rounds):
        part, replayed, options = hold_partition(validated.audited, partition, False, packs)
        store.add(partition_cells(part, replayed, options, flagged, packs, unoffered))
    return store


def unoffered_wagers(frames: Sequence[pl.DataFrame]) -> pl.LazyFrame:
    """The wagers of a bet the ruleset or the table's options do not permit: surveillance
    leaves them out of the game's counts (`gather.partition_cells`)."""
    return pl.concat(
        [
            f.lazy().filter(pl.col("rule") == BET_NOT_PERMITTED).select("wager_id")
            for f in frames
            if {"rule", "wager_id"} <= set(f.columns)
        ]
        or [pl.LazyFrame(schema={"wager_id": pl.String()})],
        how="vertical",
    )


def hold_partition(
    audited: Mapping[str, pl.LazyFrame],
    partition: Partition,
    whole: bool,
    packs: Mapping[str, RulePack],
) -> tuple[dict[str, pl.LazyFrame], pl.LazyFrame, pl.LazyFrame]:
    """The partition's rows, read once and held in memory, its rounds replayed, and the
    options in force per shoe: every stage reads them, and left lazy each stage would
    read (and replay) the files again.

    The replayed rounds are numbered (`partition.ROUND_ROW`) and each wager carries its
    round's number: stages join wagers to rounds on that integer instead of the id.
    """
    part = restrict(audited, partition, whole)
    # The shoes too: several procedure checks read them, and their card sequences are
    # the largest lists of the dataset after the rounds' cards.
    others = [name for name in part if name != "rounds"]
    for name, frame in zip(others, pl.collect_all([part[n] for n in others]), strict=True):
        part[name] = frame.lazy()
    # A ruleset with later versions: each shoe under the one in force when it opened, each
    # table row under the one in force when it took effect.
    later = versions(packs)
    options = shoe_options(part["shoes"], part["tables"], later).collect().lazy()
    part["tables"] = in_force(part["tables"], "effective_from", later)
    round_columns = part["rounds"].collect_schema().names()
    replayed = (
        replay.replay(part["rounds"], options, packs)
        .collect(engine="streaming")
        .with_row_index(ROUND_ROW)
    )
    part["wagers"] = (
        wagers_of(audited["wagers"], replayed, whole).collect(engine="streaming").lazy()
    )
    part["rounds"] = replayed.lazy().select(round_columns)
    return part, replayed.lazy(), options


class Finder(Protocol):
    """What runs stages 3-5 over the validated rows: `find`, or an engine's equivalent,
    which must give the same frame and add every partition's result to `tally` (the
    engines live a floor above and are handed in, not imported)."""

    def __call__(
        self,
        validated: ValidatedDataset,
        progress: ProgressCallback | None,
        partition_rounds: int,
        *,
        tally: Tally,
    ) -> pl.DataFrame: ...


class RowAccountingError(AuditorError):
    """Rows in differ from rows audited plus rows quarantined: the run is not trusted."""


def check_row_accounting(validated: ValidatedDataset, audited_rows: Mapping[str, int]) -> None:
    """For every table, the rows in (counted from the Parquet footers) must equal the rows
    the audit's partitions held plus the rows quarantined: a row that neither reached a
    check nor the quarantine would be a silent gap in the audit."""
    wrong = []
    for table, rows_in, _, quarantined in validated.counts.iter_rows():
        held = audited_rows.get(table, 0)
        if held + quarantined != rows_in:
            wrong.append(
                f"table {table}: {rows_in:,} rows in the files, {held:,} audited and "
                f"{quarantined:,} quarantined"
            )
    if wrong:
        raise RowAccountingError("row accounting failed, no output written: " + "; ".join(wrong))


def run_audit(
    dataset_path: Path,
    out: Path,
    progress: ProgressCallback | None = None,
    partition_rounds: int | None = None,
    *,
    command: Sequence[str] | None = None,
    finder: Finder | None = None,
    report: bool = True,
    alert_fdr: float = ALERT_FDR,
    origin: str | None = None,
    archive: Path | None = None,
    packs: LoadedPacks | None = None,
    id_buckets: IdBuckets | None = None,
) -> AuditOutputs:
    """Audit the dataset and write the outputs, in partitions of `partition_rounds`
    rounds (by default as many as the default memory limit leaves room for: `api.audit`
    sizes them to its options' limit); `command` (the command line, when there
    is one) goes into the catalog's record of the run. `finder` runs stages 3-5, `find`
    (in this process) unless an engine (`auditor.engines`) gives another. `report=False`
    leaves the nightly HTML report out (the benchmark measures what it adds). Surveillance
    runs after the findings, over the audited rows, with its alerts held to `alert_fdr`.
    `origin`: the URL the dataset was copied from, when `dataset_path` is a local copy
    (the catalog names the dataset by it). `archive`: the archive the run will be added
    to, whose earlier runs the nightly report compares the night with (the run itself is
    added by the caller, once its set is in). `packs`: the rule packs to audit under (the
    built-in ones if None; `packs.loaded.load_packs` adds those of a folder). `id_buckets`:
    where validation's id checks run, in this process unless an engine gives another."""
    started_at = datetime.now(UTC)
    if partition_rounds is None:
        partition_rounds = DEFAULT_PARTITION_ROUNDS
    # OUTDIR is checked before any work and held until its set is in: a second run into
    # it is refused rather than clearing this one's staging folder.
    with claim_outdir(out, dataset_path) as out, ExitStack() as routing:
        # A killed run's working folders are left in the temporary folder: the next run's
        # removes those no live run claims (`output.leftovers`).
        scratch = Path(tempfile.gettempdir())
        # Run here, the partitions are routed (where the layout calls for it) by validation's
        # own read, into a claimed folder; an engine's workers read the dataset in place.
        routes = None
        if finder is None:
            sweep(scratch, ROUTE_PREFIX)
            routes = routing.enter_context(claimed_folder(scratch, ROUTE_PREFIX))
        validated = run_validation(
            dataset_path, progress, partition_rounds, packs, id_buckets, finder is None, routes
        )
        sweep(scratch, SURVEY_PREFIX)
        with claimed_folder(scratch, SURVEY_PREFIX) as work:
            tally = Tally(Path(work) / "cells")
            findings = (finder or find)(validated, progress, partition_rounds, tally=tally)
            routing.close()  # every partition read: its routed files go
            check_row_accounting(validated, tally.rows)
            # Statistics of the night beside the findings, never among them (CONTRACT): they
            # change neither findings.parquet nor the exit status.
            if progress:
                progress("surveillance", 0)
            budget = partition_bytes(partition_rounds)
            # The night's counts, summed, kept in the set: a period is tested from them.
            # Summed beside the tests, from the same counts: both are mostly polars and
            # Parquet, which run outside the interpreter's lock, so the two overlap.
            cells = Path(work) / "night-cells"
            with ThreadPoolExecutor(max_workers=1) as beside:
                summing = beside.submit(
                    write_night_cells, tally.cells, cells, validated.packs, budget
                )
                watched = survey(
                    tally.cells,
                    validated.audited,
                    findings,
                    Path(work) / "tests",
                    alert_fdr,
                    budget,
                    validated.packs,
                )
                summing.result()
            results = AuditOutputs(
                findings,
                validated.quarantine,
                validated.counts,
                watched.tests,
                watched.alerts,
                cells,
            )
            run = RunInfo(
                validated.dataset,
                all_checks(),
                tuple(command or ()),
                started_at,
                origin,
                validated.packs,
            )
            if progress:
                progress("outputs", 0)
            nightly = (
                functools.partial(write_nightly, archive=archive, packs=validated.packs)
                if report
                else None
            )
            written = write_outputs(out, results, run, extra=nightly, claimed=True)
        # The night's tests are not held in memory: the result reads OUTDIR's file, the working
        # copy being gone.
        return replace(
            results,
            surveillance=pl.scan_parquet(written / SURVEILLANCE_FILE, glob=False),
            cells=None,
        )
