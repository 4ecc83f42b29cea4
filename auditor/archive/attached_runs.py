"""`auditor query ARCHIVE`: the archive's catalog in the same sandbox as a run's.

Where a run's dataset is still in place (every input file its manifest names is there,
of the size audited), that run's own catalog is attached read-only as `run_<RUN_ID>`, so
its input views read as they do in the run's catalog (`run_<RUN_ID>.rounds`, ...), and the
sandbox admits those files' folders, taken from the run's verified manifest as for a run.
Each input view is also one view across those runs with a `run_id` column (`all_rounds`,
`all_wagers`, ...: a dealer's rounds over every night still in place); not under the
input views' own names, which would shadow them inside the attached runs' joined views.
`run_inputs` lists every run with whether its inputs are reachable and under which name.
Only runs in place are attached: a year of runs whose datasets are gone costs nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb

from auditor.archive.catalog import RUNS, SET, current_catalog, is_run_id
from auditor.archive.integrity import changed_runs, manifest_problem
from auditor.archive.store import ArchiveError, open_archive
from auditor.input.remote import is_remote
from auditor.output.files import DUCKDB_FILE
from auditor.output.macros import sql_literal
from auditor.output.sandboxed_query import Catalog, QueryError, input_in_place, open_sandboxed
from auditor.output.verify import read_manifest
from auditor.output.views import INPUT_VIEWS

RUN_SCHEMA_PREFIX = "run_"
ACROSS_PREFIX = "all_"


@dataclass(frozen=True)
class RunInputs:
    run_id: str
    dataset: str | None
    inputs: tuple[tuple[str, int], ...]  # (path, bytes) of every input file the run read
    missing: int  # of those, how many are gone or changed (a URL counts as not here)

    @property
    def in_place(self) -> bool:
        return bool(self.inputs) and self.missing == 0

    @property
    def attached_as(self) -> str | None:
        return f"{RUN_SCHEMA_PREFIX}{self.run_id}" if self.in_place else None


def open_archive_catalog(
    archive: Path,
    *,
    memory_limit: str | None = None,
    timeout: float | None = None,
    inputs: bool = True,
) -> Catalog:
    """The archive's catalog in the same sandbox as a run's (`output.sandboxed_query`): it
    admits the archive's folder and the input folders of the runs whose datasets are in
    place. Each run's set is checked against its manifest's sizes first (`auditor verify ARCHIVE`
    hashes them); a changed archive is refused. `inputs=False`: the archive's own views
    alone, no run attached (the reports, which read the runs' sets)."""
    try:
        folder = open_archive(archive)
    except ArchiveError as error:
        raise QueryError(str(error)) from error
    if not any(p.is_dir() and is_run_id(p.name) for p in (folder / RUNS).iterdir()):
        raise QueryError(f"{archive}: no run archived yet; `auditor archive add` adds one")
    problems = changed_runs(folder)
    if problems:
        raise QueryError(
            f"{archive}: the archive is not as written ({'; '.join(problems[:3])}); "
            f"`auditor verify {archive}` lists every difference"
        )
    # Views only, over the runs' folders: a catalog lost or built elsewhere is written anew.
    path = current_catalog(folder)
    runs = runs_inputs(path.parent) if inputs else []
    admitted = [entry for run in runs if run.in_place for entry in run.inputs]
    return open_sandboxed(
        path,
        (None, admitted),
        memory_limit=memory_limit,
        timeout=timeout,
        prepare=(lambda con: _attach_runs(con, path.parent, runs)) if inputs else None,
    )


def runs_inputs(archive: Path) -> list[RunInputs]:
    """Every archived run's input files, as its verified manifest names them, and how many
    are no longer as audited."""
    runs = []
    for place in sorted((archive / RUNS).iterdir()):
        if not is_run_id(place.name):
            continue
        # Its input folders are admitted only from the manifest the run was added with.
        if (problem := manifest_problem(place)) is not None:
            raise QueryError(f"{archive}: run {place.name}: {problem}")
        manifest = read_manifest(place / SET)
        inputs = tuple(manifest.inputs)
        missing = sum(1 for p, size in inputs if is_remote(p) or not input_in_place(Path(p), size))
        runs.append(RunInputs(place.name, manifest.dataset, inputs, missing))
    return runs


def _attach_runs(con: duckdb.DuckDBPyConnection, archive: Path, runs: list[RunInputs]) -> None:
    for run in runs:
        if run.attached_as is None:
            continue
        catalog = archive / RUNS / run.run_id / SET / DUCKDB_FILE
        # The alias is `run_` and the run id, which `runs_inputs` admitted only as one.
        con.execute(f"ATTACH {sql_literal(str(catalog))} AS {run.attached_as} (READ_ONLY)")
    attached = [run for run in runs if run.attached_as is not None]
    for view in INPUT_VIEWS:
        con.execute(f"CREATE TEMP VIEW {ACROSS_PREFIX}{view} AS {_across_runs(view, attached)}")
    con.execute(
        "CREATE TEMP TABLE run_inputs (run_id VARCHAR, dataset VARCHAR, input_files "
        "BIGINT, missing_files BIGINT, in_place BOOLEAN, attached_as VARCHAR)"
    )
    con.executemany(
        "INSERT INTO run_inputs VALUES (?, ?, ?, ?, ?, ?)",
        [(r.run_id, r.dataset, len(r.inputs), r.missing, r.in_place, r.attached_as) for r in runs],
    )


def _across_runs(view: str, attached: list[RunInputs]) -> str:
    """One input view across the attached runs, each row with its run's id; with none
    attached, a view that says why it has no rows when it is read."""
    if not attached:
        message = sql_literal(
            f"{view}: no archived run's dataset is in place (see run_inputs); the archive "
            "keeps output sets, not datasets"
        )
        return f"SELECT CAST(NULL AS VARCHAR) AS run_id WHERE error({message})"
    return " UNION ALL BY NAME ".join(
        f"SELECT {sql_literal(run.run_id)} AS run_id, * FROM {run.attached_as}.main.{view}"
        for run in attached
    )
