"""The regulator's catalog, `OUTDIR/audit.duckdb`: findings, the hand histories and the
game in one read-only DuckDB file.

- tables `findings`, `quarantine`, `row_counts`, `surveillance` and `alerts` (the run's
  outputs; the alerts are statistics, not findings), `runs` (what ran on
  what: version, rule pack hashes, command line, times, row totals, every input file's
  SHA-256), `checks` and `traceability` (every regulation section, its verdict and the
  check codes that audit it), `banker_draw_rules` and `player_draw_rules` (the packs'
  drawing tables, cited);
- views over the dataset's own Parquet files, `tables`, `shoes`, `rounds`, `wagers`,
  `commission_collections`, `royal9_seats`: absolute paths, nothing copied
  (`auditor.output.views`);
- views for common joins: `shoe_rules` (each shoe with the Rules Submission options in
  force when it opened), `findings_located` (each finding with its table, shoe, property,
  ruleset, dealer and patron), `input_files`, `rule_packs`, `traceability_checks`;
- `witness_findings`: every check's witness (`auditor.witness`), the union of one SQL
  statement per check over the input views and macros, to compare with `findings`;
- the SQL macros of `auditor.output.macros`.

The file is written with storage version v1.4.0, which DuckDB 2.0 writes and the 1.x
command-line clients regulators have can read (2.0's default, 69, they refuse); it is
built under a temporary name and renamed into place, because a read-write holder would
block read-only openers.
"""

from __future__ import annotations

import os
import shlex
import shutil
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path

import duckdb
import polars as pl

from auditor import __version__
from auditor.contract import CONTRACT_VERSION, TIMESTAMP
from auditor.findings.check import FAMILIES, Check
from auditor.findings.table import FINDING_ID_SCHEME
from auditor.input.load import Dataset, SourceFile, sha256_files
from auditor.input.remote import file_system
from auditor.output.catalog_packs import (
    attached,
    create_table,
    packs_part,
    write_packs_part,
)
from auditor.output.macros import sql_literal
from auditor.output.views import unreadable_view_statements, view_statements
from auditor.packs.loaded import LoadedPacks, builtin_packs
from auditor.packs.model import RulePack


@dataclass(frozen=True)
class RunInfo:
    """What the catalog records of the run that made it."""

    dataset: Dataset
    checks: Sequence[Check]
    command: Sequence[str]
    started_at: datetime
    # The URL the dataset was read from when it is not local (`dataset.root` is then a
    # local copy): the catalog names the dataset and its files by it.
    origin: str | None = None
    packs: LoadedPacks | None = None  # the rule packs the run audited under (built-in: None)

    def rule_packs(self) -> LoadedPacks:
        return builtin_packs() if self.packs is None else self.packs

    def location(self, source: SourceFile | None = None) -> str:
        """Where the dataset (or one of its files) lives, as a reader would name it."""
        if self.origin is None:
            return self.location_of(source)
        base = self.origin.rstrip("/")
        return f"{base}/{source.name}" if source else base

    def location_of(self, source: SourceFile | None = None) -> str:
        """Where this run read the dataset (or one of its files): a local path."""
        if source is None:
            return str(self.dataset.root.resolve())
        return self._resolved_files.get(source.path) or str(source.path.resolve())

    @cached_property
    def _resolved_files(self) -> dict[Path, str]:
        # Each file is named three times (the run's record, the manifest, the views): a
        # dataset of ten thousand files would be resolved thirty thousand times.
        paths = [s.path for table in self.dataset.tables() for s in self.dataset.files[table]]
        return _resolved_paths(paths)


def _resolved_paths(paths: Sequence[Path]) -> dict[Path, str]:
    """Each path with its symlinks resolved, as `Path.resolve` gives it: a file that is no
    symlink is its resolved folder's, and each folder is resolved once."""
    folders: dict[Path, Path] = {}
    found = {}
    for path in paths:
        if path.is_symlink():
            found[path] = str(path.resolve())
            continue
        if path.parent not in folders:
            folders[path.parent] = path.parent.resolve()
        found[path] = str(folders[path.parent] / path.name)
    return found


def write_catalog(
    target: Path,
    outputs: Mapping[str, pl.DataFrame | Path],
    run: RunInfo | None = None,
    outdir: Path | None = None,
) -> None:
    """Build the catalog at `target`: `outputs` (name -> frame, or a Parquet file read
    streaming) as tables and, given the
    run, everything else. Without a run (a library caller with frames only) the file
    holds the outputs and the game's macros. `outdir`: the folder the catalog is switched
    into, when it is built in a staging folder."""
    tmp = target.with_name(f".{target.name}.tmp")
    for leftover in (tmp, tmp.with_name(tmp.name + ".wal")):
        leftover.unlink(missing_ok=True)
    packs = builtin_packs() if run is None else run.rule_packs()
    if run is not None:
        # Begun as a copy of what its packs alone decide, written once a process.
        shutil.copyfile(packs_part(packs), tmp)
    with attached(tmp) as con:
        tables = dict(outputs)
        if run is None:
            write_packs_part(con, packs, witnesses=False)
        else:
            # The folder the catalog ends up in, which may not be where it is built.
            tables["runs"] = runs_frame(run, outdir or target.parent, outputs)
            tables["checks"] = checks_frame(run.checks, packs)
        for name, frame in tables.items():
            create_table(con, name, frame)
        if run is not None:
            for statement in view_statements(run.dataset, run.location_of, gathered=True):
                con.execute(statement)
        _describe(con)
    os.replace(tmp, target)


def point_views_at_origin(target: Path, run: RunInfo) -> None:
    """Re-point the catalog from the dataset's local copy, which the run read (and its
    report's evidence too), to the URL it was copied from: the input views and the run's
    record of its files (`runs.dataset` names the URL already). The views are bound as
    they are made (their files' columns read), here through fsspec whatever the file
    system; a reader then needs access to the URL. Where DuckDB cannot read that file
    system (fsspec's ftp:// cannot give it a file's modification time), each input view
    keeps its columns and says so, with the URL, when it is queried."""
    assert run.origin is not None
    fs, _ = file_system(run.origin)
    with attached(target, new=False, filesystem=fs) as con:
        try:
            _replace_views(con, view_statements(run.dataset, run.location))
        except duckdb.Error as exc:
            reason = str(exc).splitlines()[0]
            _replace_views(con, unreadable_view_statements(run.origin, reason))
        con.execute(
            "UPDATE runs SET inputs = list_transform(inputs, lambda i: "
            'struct_pack("table" := i."table", name := i.name, path := $base || \'/\' || i.name, '
            "bytes := i.bytes, rows := i.rows, sha256 := i.sha256))",
            {"base": run.location()},
        )


def point_views_at_files(target: Path, run: RunInfo) -> None:
    """Re-point the catalog's input views from the copies of many small files the run
    read (`views.view_statements`, `gathered`) to the dataset's files themselves, before
    the copies go: what a reader of the catalog finds after the run."""
    con = duckdb.connect(str(target))
    try:
        _replace_views(con, view_statements(run.dataset, run.location_of))
    finally:
        con.close()


def _replace_views(con: duckdb.DuckDBPyConnection, statements: list[str]) -> None:
    for statement in statements:
        con.execute(statement.replace("CREATE VIEW", "CREATE OR REPLACE VIEW", 1))


# ---- runs, checks -------------------------------------------------------------------


def runs_frame(
    run: RunInfo, outdir: Path, outputs: Mapping[str, pl.DataFrame | Path]
) -> pl.DataFrame:
    """One row: this run, its inputs hashed and its rule packs hashed."""
    counts, findings = outputs["row_counts"], outputs["findings"]
    # Frames, as `files.write_outputs` gives them: only the surveillance comes as a file.
    assert isinstance(counts, pl.DataFrame) and isinstance(findings, pl.DataFrame)
    sources = [s for table in run.dataset.tables() for s in run.dataset.files[table]]
    digests = sha256_files([s.path for s in sources])
    packs = run.rule_packs()
    row = {
        "run_id": uuid.uuid4().hex,
        "tool": "auditor",
        "tool_version": __version__,
        "contract_version": CONTRACT_VERSION,
        "command": list(run.command),
        "command_line": shlex.join(run.command) if run.command else None,
        # The URL a copied dataset came from, for the reports built from here on; its
        # files' paths stay local until the reports have read them (`point_views_at_origin`).
        "dataset": run.location(),
        "outdir": str(outdir.resolve()),
        "started_at": run.started_at,
        "ended_at": datetime.now(UTC),
        "rows_in": int(counts["rows_in"].sum()),
        "rows_audited": int(counts["rows_audited"].sum()),
        "rows_quarantined": int(counts["rows_quarantined"].sum()),
        "findings": findings.height,
        "rule_packs": [
            {
                "ruleset": ruleset,
                "title": pack.title,
                "file": pack.file,
                "sha256": pack.digest,
            }
            for ruleset, pack in packs.items()
        ],
        "finding_id_scheme": FINDING_ID_SCHEME,
        "inputs": [
            {
                "table": s.table,
                "name": s.name,
                "path": run.location_of(s),
                "bytes": s.path.stat().st_size,
                "rows": s.rows,
                "sha256": digest,
            }
            for s, digest in zip(sources, digests, strict=True)
        ],
    }
    return pl.DataFrame([row], schema=RUNS_SCHEMA)


RUNS_SCHEMA = {
    "run_id": pl.String(),
    "tool": pl.String(),
    "tool_version": pl.String(),
    "contract_version": pl.Int32(),
    "command": pl.List(pl.String()),
    "command_line": pl.String(),
    "dataset": pl.String(),
    "outdir": pl.String(),
    "started_at": TIMESTAMP,
    "ended_at": TIMESTAMP,
    "rows_in": pl.Int64(),
    "rows_audited": pl.Int64(),
    "rows_quarantined": pl.Int64(),
    "findings": pl.Int64(),
    "rule_packs": pl.List(
        pl.Struct(
            {"ruleset": pl.String, "title": pl.String, "file": pl.String, "sha256": pl.String}
        )
    ),
    "inputs": pl.List(
        pl.Struct(
            {
                "table": pl.String,
                "name": pl.String,
                "path": pl.String,
                "bytes": pl.Int64,
                "rows": pl.Int64,
                "sha256": pl.String,
            }
        )
    ),
    # How this run's finding ids were made (`findings.table.FINDING_ID_SCHEME`).
    "finding_id_scheme": pl.Int32(),
}


def checks_frame(checks: Sequence[Check], packs: Mapping[str, RulePack]) -> pl.DataFrame:
    """The checks' documentation, each citing the sections of the run's packs."""
    return pl.DataFrame(
        [
            {
                "code": c.code,
                "name": c.name,
                "title": c.title,
                "severity": c.severity,
                "family": c.family,
                "family_title": FAMILIES.get(c.family),
                "citation": c.cites(packs),
                "what": c.what,
                "why": c.why,
                "example": c.example,
            }
            for c in checks
        ],
        schema={
            name: pl.String()
            for name in (
                "code",
                "name",
                "title",
                "severity",
                "family",
                "family_title",
                "citation",
                "what",
                "why",
                "example",
            )
        },
    )


# What each object holds, as DuckDB comments: `duckdb_tables()`, `duckdb_views()` and
# `duckdb_functions()` show them, and `auditor query`'s `.tables` lists them.
DESCRIPTIONS = {
    "findings": (
        "TABLE",
        "one row per discrepancy: rule, severity, citation, ids, expected, logged, impact",
    ),
    "quarantine": ("TABLE", "input rows that failed validation, with the reason; never audited"),
    "row_counts": ("TABLE", "per input table: rows_in = rows_audited + rows_quarantined"),
    "surveillance": (
        "TABLE",
        "every statistical test of the night: level, key, statistic, observed, expected, "
        "z, p_value, q_value (Benjamini-Hochberg), alert",
    ),
    "alerts": (
        "TABLE",
        "the surveillance tests past the night's false-discovery rate, with the rounds or "
        "wagers they cover; statistics, not findings",
    ),
    "runs": (
        "TABLE",
        "the run: version, command line, times, row totals, input and rule pack hashes",
    ),
    "checks": ("TABLE", "every check: code, name, title, severity, family, citation, what, why"),
    "traceability": (
        "TABLE",
        "every regulation section of INDEX.md: verdict, check codes or reason",
    ),
    "banker_draw_rules": ("TABLE", "the packs' Banker tables: two-card total x Player third card"),
    "player_draw_rules": ("TABLE", "the packs' Player rule by two-card total"),
    "tables": ("VIEW", "input: Rules Submission options per table, from effective_from"),
    "shoes": ("VIEW", "input: one row per dealing shoe"),
    "rounds": ("VIEW", "input: one row per round of play"),
    "wagers": ("VIEW", "input: one row per wager"),
    "commission_collections": ("VIEW", "input: marker commission collected"),
    "royal9_seats": ("VIEW", "input: Personal King-9 combinations per seat"),
    "shoe_rules": ("VIEW", "each shoe with the tables row in force when it opened"),
    "findings_located": ("VIEW", "findings with table, shoe, property, ruleset, dealer and patron"),
    "witness_findings": (
        "VIEW",
        "every check's witness, one SQL statement each over the input views and macros: "
        "the entities the checks flag, with expected, logged and impact",
    ),
    "input_files": ("VIEW", "the run's input files: path, size, rows, SHA-256"),
    "rule_packs": ("VIEW", "the run's rule packs: ruleset, file, SHA-256"),
    "traceability_checks": ("VIEW", "one row per (section, check code)"),
    "card_value": ("MACRO", "card_value(card): point value of a card, 'TS' 0, 'AH' 1"),
    "point_count": ("MACRO", "point_count(cards): last digit of the cards' values"),
    "is_natural": ("MACRO", "is_natural(ruleset, total): a two-card Natural"),
    "player_draws": (
        "MACRO",
        "player_draws(ruleset, player_total): true draw, false stand, NULL either",
    ),
    "banker_draws": (
        "MACRO",
        "banker_draws(ruleset, banker_total, player_third): the Banker's table; "
        "player_third NULL when the Player stood",
    ),
    "moment_text": ("MACRO", "moment_text(instant): a moment as findings write it, in UTC"),
    "quarantine_id": (
        "MACRO",
        "quarantine_id(id): an id as the quarantine's row_key names it (past 1,000 "
        "characters, its first 64 and its length)",
    ),
    "rule_pack": (
        "MACRO",
        "rule_pack(ruleset): the ruleset's rule pack as JSON, section texts left out",
    ),
    "vig": ("MACRO", "vig(ruleset_or_percent, amount, rounding): commission on amount won"),
    "vig_percent": ("MACRO", "vig_percent(ruleset_or_percent): the commission percent"),
    "vig_cents": ("MACRO", "vig_cents(percent, cents, rounding): commission in dollars from cents"),
    "vig_rounded": (
        "MACRO",
        "vig_rounded(percent, cents, rounding, step): commission in dollars on cents won, "
        "rounded up to a multiple of step cents with rounding, else half up to the cent",
    ),
    "vig_step": (
        "MACRO",
        "vig_step(ruleset_or_NULL, percent): the rounding step in cents the ruleset's pack "
        "sets at that percent (25 at 5%, 20 at 4% in the built-in packs); NULL: the step "
        "every pack agrees on",
    ),
}


def _describe(con: duckdb.DuckDBPyConnection) -> None:
    tables = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    views = {
        r[0]
        for r in con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()
    }
    for name, (kind, text) in DESCRIPTIONS.items():
        if (
            (kind == "TABLE" and name in tables)
            or (kind == "VIEW" and name in views)
            or kind == "MACRO"
        ):
            con.execute(f"COMMENT ON {kind} {name} IS {sql_literal(text)}")
