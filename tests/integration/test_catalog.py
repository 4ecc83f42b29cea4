"""The regulator's catalog (OUTDIR/audit.duckdb): its tables, views over the dataset,
the run's record, checks and traceability, the game's macros, and a file the DuckDB 1.x
command-line client opens. Real DuckDB files over real Parquet, no mocks."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import polars as pl
import pytest

from auditor.contract import TABLES
from auditor.input.shoe_options import shoe_options
from auditor.output.sandboxed_query import open_catalog, query
from auditor.output.traceability import matrix, parse_index, problems, shipped_sections
from auditor.output.views import INPUT_VIEWS
from auditor.packs.model import load_all
from auditor.pipeline import all_checks, run_audit, run_validation
from auditor.replay.derive import replay
from auditor.settlement.correct import commission_cents
from auditor.simulator.simulate import simulate
from tests.support.paths import REPO, SAMPLE, regulations
from tests.support.witness import comparison

TABLES_OF_THE_RUN = ("findings", "quarantine", "row_counts", "runs", "checks", "traceability")
JOIN_VIEWS = ("shoe_rules", "findings_located", "input_files", "rule_packs")
MACROS = ("card_value", "point_count", "is_natural", "player_draws", "banker_draws", "vig")
COMMAND = ("auditor", "audit", "sample_data", "--out", "out")


@pytest.fixture(scope="module")
def sample_out(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("catalog") / "out"
    run_audit(SAMPLE, out, command=list(COMMAND))
    return out


@pytest.fixture
def con(sample_out: Path):
    connection = duckdb.connect(str(sample_out / "audit.duckdb"), read_only=True)
    yield connection
    connection.close()


def names(con, sql: str) -> set[str]:
    return {row[0] for row in con.execute(sql).fetchall()}


def test_the_catalog_holds_every_part(con) -> None:
    tables = names(con, "SELECT table_name FROM duckdb_tables()")
    views = names(con, "SELECT view_name FROM duckdb_views() WHERE NOT internal")
    macros = names(
        con, "SELECT function_name FROM duckdb_functions() WHERE function_type = 'macro'"
    )
    assert set(TABLES_OF_THE_RUN) <= tables
    assert set(INPUT_VIEWS) | set(JOIN_VIEWS) <= views
    assert set(MACROS) <= macros
    # Views, not copies: no input table is stored in the file.
    assert not set(INPUT_VIEWS) & tables


def test_the_outputs_are_the_run_frames(con, sample_out: Path) -> None:
    for table, file in (
        ("findings", "findings.parquet"),
        ("quarantine", "quarantine.parquet"),
        ("row_counts", "row_counts.parquet"),
    ):
        stored = con.sql(f"SELECT * FROM {table}").pl()
        assert stored.equals(pl.read_parquet(sample_out / file)), table


def test_input_views_read_the_dataset_in_place(con) -> None:
    for table in INPUT_VIEWS:
        stored = con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        path = SAMPLE / f"{table}.parquet"
        expected = pl.scan_parquet(path).select(pl.len()).collect().item() if path.exists() else 0
        assert stored == expected, table
        # (`DESCRIBE tables` would list the catalog's tables: SHOW TABLES.)
        columns = [d[0] for d in con.execute(f"SELECT * FROM {table} LIMIT 0").description]
        assert set(TABLES[table]) <= set(columns), table
    sql = con.execute("SELECT sql FROM duckdb_views() WHERE view_name = 'rounds'").fetchone()[0]
    assert str(SAMPLE.resolve() / "rounds.parquet") in sql  # an absolute path


def test_a_finding_joins_to_its_round_wagers_shoe_and_table_row(con) -> None:
    joined = con.sql(
        """
        SELECT f.rule, f.round_id, r.dealer_id, s.shoe_id, t.property_id, t.ruleset,
               count(w.wager_id) AS wagers
        FROM findings f
        JOIN rounds r USING (round_id)
        JOIN shoes s ON s.shoe_id = r.shoe_id
        JOIN shoe_rules t ON t.shoe_id = s.shoe_id
        LEFT JOIN wagers w ON w.round_id = r.round_id
        GROUP BY ALL
        """
    ).pl()
    with_round = con.execute(
        "SELECT count(DISTINCT (rule, round_id)) FROM findings WHERE round_id IS NOT NULL"
    ).fetchone()[0]
    assert joined.height == with_round > 0
    assert joined["property_id"].null_count() == 0 and joined["ruleset"].null_count() == 0
    assert (joined["wagers"] > 0).any()


def test_findings_located_puts_back_table_and_shoe(con) -> None:
    located = con.sql("SELECT * FROM findings_located").pl()
    assert located.height == con.execute("SELECT count(*) FROM findings").fetchone()[0]
    assert located["table_id"].null_count() == 0
    assert located["property_id"].null_count() == 0
    rounds = located.filter(pl.col("round_id").is_not_null())
    assert rounds["shoe_id"].null_count() == 0 and rounds["dealer_id"].null_count() == 0
    wagers = located.filter(pl.col("wager_id").is_not_null())
    assert wagers["seat"].null_count() == 0


def test_shoe_rules_picks_the_tables_row_in_force(con) -> None:
    # The sample changes one table's options mid-day: each shoe takes the latest row
    # that took effect at or before it opened, as the engine's shoe_options does.
    sql = con.sql("SELECT shoe_id, house_money_rollover_percent FROM shoe_rules").pl()
    validated = run_validation(SAMPLE)
    engine = shoe_options(validated.audited["shoes"], validated.audited["tables"]).collect()
    expected = engine.select("shoe_id", "house_money_rollover_percent")
    assert sql.sort("shoe_id").equals(expected.sort("shoe_id"), null_equal=True)


def test_runs_records_the_run(con, sample_out: Path) -> None:
    run = con.sql("SELECT * FROM runs").pl()
    assert run.height == 1
    row = run.row(0, named=True)
    assert row["command"] == list(COMMAND)
    assert row["command_line"] == " ".join(COMMAND)
    assert row["started_at"] <= row["ended_at"] <= datetime.now(UTC)
    assert row["dataset"] == str(SAMPLE.resolve())
    assert row["outdir"] == str(sample_out.resolve())
    counts = pl.read_parquet(sample_out / "row_counts.parquet")
    assert row["rows_in"] == counts["rows_in"].sum()
    assert row["rows_in"] == row["rows_audited"] + row["rows_quarantined"]
    assert row["findings"] == pl.read_parquet(sample_out / "findings.parquet").height
    inputs = con.sql("SELECT * FROM input_files").pl()
    assert sorted(inputs["table"]) == sorted(
        t for t in INPUT_VIEWS if (SAMPLE / f"{t}.parquet").exists()
    )
    for item in inputs.iter_rows(named=True):
        data = Path(item["path"]).read_bytes()
        assert item["sha256"] == hashlib.sha256(data).hexdigest()
        assert item["bytes"] == len(data)
    packs = con.sql("SELECT * FROM rule_packs").pl()
    assert sorted(packs["ruleset"]) == sorted(load_all())
    for item in packs.iter_rows(named=True):
        text = (REPO / "rules" / f"{item['ruleset']}.yaml").read_bytes()
        assert item["sha256"] == hashlib.sha256(text).hexdigest()


def test_checks_table_documents_every_check(con) -> None:
    stored = con.sql("SELECT * FROM checks ORDER BY code").pl()
    checks = all_checks()
    assert stored["code"].to_list() == [c.code for c in checks]
    assert stored["family"].to_list() == [c.code[:3] for c in checks]
    for column in ("name", "title", "severity", "citation", "what", "why"):
        assert stored[column].null_count() == 0, column


# ---- traceability -------------------------------------------------------------------


def test_shipped_sections_match_index_md() -> None:
    path = regulations() / "INDEX.md"
    index = parse_index(path.read_text(encoding="utf-8"))
    # Each pack's sections in INDEX's order; the packs by id.
    assert shipped_sections() == sorted(index, key=lambda s: s.ruleset), (
        "INDEX.md changed: run `python -m auditor.output.traceability PATH/TO/INDEX.md`"
    )


def test_traceability_is_complete() -> None:
    # Every code exists, every check audits a section, every section the logs can audit
    # has a check or a stated reason; 'not from logs' sections take no check.
    assert problems(all_checks()) == []


def test_traceability_problems_are_found() -> None:
    checks = all_checks()
    fewer = [c for c in checks if c.code != "DRW003"]
    assert any("DRW003" in p for p in problems(fewer))  # a code no check has


def test_traceability_in_the_catalog(con) -> None:
    stored = con.sql("SELECT * FROM traceability").pl()
    assert stored.equals(matrix())
    assert stored.height == len(shipped_sections()) > 300
    codes = names(con, "SELECT DISTINCT code FROM traceability_checks")
    assert codes == {c.code for c in all_checks()}
    unexplained = con.execute(
        """SELECT count(*) FROM traceability
           WHERE from_logs AND len(codes) = 0 AND coalesce(reason, '') = ''"""
    ).fetchone()[0]
    assert unexplained == 0
    kept = con.execute(
        "SELECT reason FROM traceability WHERE citation = 'ma-baccarat §2(c)'"
    ).fetchone()
    assert kept == ("equipment",)  # INDEX's reason for a section the logs cannot show


def test_rules_by_section_prints_the_matrix() -> None:
    from click.testing import CliRunner

    from auditor.cli import main

    result = CliRunner().invoke(main, ["rules", "--by-section"], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "§11(c)(2)(iii)" in result.output and "DRW003" in result.output
    assert "not from logs" in result.output and ".10E(3)(j)" in result.output


# ---- the macros agree with the engine ------------------------------------------------


@pytest.fixture(scope="module")
def simulated(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("sim")
    simulate(root / "data", 4000, seed=41, fault_rate=0.2)
    run_audit(root / "data", root / "out")
    return root / "data", root / "out"


def test_macros_replay_every_round_as_the_engine(simulated) -> None:
    data, out = simulated
    packs = load_all()
    validated = run_validation(data)
    audited = validated.audited
    engine = (
        replay(audited["rounds"], shoe_options(audited["shoes"], audited["tables"]), packs)
        .filter(pl.col("player_count") >= 2, pl.col("banker_count") >= 2)
        .select(
            "round_id",
            "player_two",
            "banker_two",
            "player_final",
            "banker_final",
            "player_natural",
            "banker_natural",
            "player_must_draw",
            "player_must_stand",
            "banker_draws",
        )
        .collect()
    )
    with duckdb.connect(str(out / "audit.duckdb"), read_only=True) as con:
        sql = con.sql(
            """
            SELECT r.round_id,
              point_count(r.player_cards[1:2]) AS player_two,
              point_count(r.banker_cards[1:2]) AS banker_two,
              point_count(r.player_cards) AS player_final,
              point_count(r.banker_cards) AS banker_final,
              is_natural(o.ruleset, point_count(r.player_cards[1:2])) AS player_natural,
              is_natural(o.ruleset, point_count(r.banker_cards[1:2])) AS banker_natural,
              player_draws(o.ruleset, point_count(r.player_cards[1:2])) AS player_rule,
              banker_draws(o.ruleset, point_count(r.banker_cards[1:2]),
                           card_value(r.player_cards[3])) AS banker_rule
            FROM rounds r JOIN shoe_rules o USING (shoe_id)
            WHERE len(r.player_cards) >= 2 AND len(r.banker_cards) >= 2
            """
        ).pl()
    both = engine.join(sql, on="round_id", how="inner", suffix="_sql")
    assert both.height == engine.height == sql.height > 3000
    for column in ("player_two", "banker_two", "player_final", "banker_final"):
        assert (both[column] == both[f"{column}_sql"]).all(), column
    for column in ("player_natural", "banker_natural"):
        assert (both[column] == both[f"{column}_sql"]).all(), column
    # The engine's decision table folds the Naturals in; the macros leave that to
    # is_natural, as their documentation says.
    plain = both.filter(~pl.col("player_natural") & ~pl.col("banker_natural"))
    assert plain.height > 1000
    assert (plain["player_rule"].fill_null(False) == plain["player_must_draw"]).all()
    assert (
        plain["player_rule"].is_null() == (~plain["player_must_draw"] & ~plain["player_must_stand"])
    ).all()
    assert (plain["banker_rule"] == plain["banker_draws"]).all()
    # Both outcomes of every decision occur, so agreement is not vacuous.
    assert plain["banker_rule"].n_unique() == 2 and plain["player_rule"].n_unique() == 3


def test_vig_agrees_with_the_engine_commission() -> None:
    packs = load_all()
    steps = {
        p: s for pack in packs.values() for p, s in pack.commission.rounding.step_cents.items()
    }
    cents = [*range(0, 3000), 9999, 10_001, 123_456, 99_999_999]
    grid = pl.DataFrame(
        [(c, p, r) for c in cents for p in sorted(steps) for r in (False, True)],
        schema={"won": pl.Int64, "percent": pl.Int64, "rounding": pl.Boolean},
        orient="row",
    )
    engine = grid.with_columns(
        commission_cents(
            pl.col("won"),
            pl.col("percent"),
            pl.col("rounding"),
            pl.col("percent").replace_strict(steps, return_dtype=pl.Int64),
        ).alias("engine_c")
    )
    from auditor.output.macros import macro_statements

    with duckdb.connect() as con:
        for statement in macro_statements(packs):
            con.execute(statement)
        con.register("grid", engine.to_arrow())
        got = con.sql(
            "SELECT engine_c, vig(percent, won * 0.01, rounding) AS vig_exact FROM grid"
        ).pl()
    expected = got["engine_c"].cast(pl.Decimal(18, 2)) / 100
    assert (got["vig_exact"] == expected).all()
    single = {
        r: p.commission.percents.values[0]
        for r, p in packs.items()
        if len(p.commission.percents.values) == 1
    }
    with duckdb.connect() as con:
        for statement in macro_statements(packs):
            con.execute(statement)
        for ruleset, percent in single.items():
            by_name = con.execute(
                "SELECT vig($r, 101.01, false), vig($p, 101.01, false)",
                {"r": ruleset, "p": percent},
            ).fetchone()
            assert by_name[0] == by_name[1]


def test_vig_matches_the_logged_commission_of_every_banker_win(simulated) -> None:
    # Every Banker win the audit found nothing wrong with was charged the engine's
    # commission: vig() must give it too.
    _data, out = simulated
    with duckdb.connect(str(out / "audit.duckdb"), read_only=True) as con:
        wrong = con.execute(
            """
            SELECT count(*) FILTER (WHERE w.commission <> vig(o.commission_percent, w.payout,
                                                              o.commission_rounding)),
                   count(*)
            FROM wagers w JOIN rounds r USING (round_id) JOIN shoe_rules o USING (shoe_id)
            WHERE w.bet = 'banker' AND w.result = 'win' AND NOT o.ez_baccarat
              AND w.wager_id NOT IN (SELECT wager_id FROM findings
                                     WHERE wager_id IS NOT NULL)
            """
        ).fetchone()
    assert wrong[1] > 500 and wrong[0] == 0


# ---- layouts, atomicity and the DuckDB 1.x command-line client ----------------------


def test_hive_partitions_naive_timestamps_and_absent_tables(write_dataset, tmp_path) -> None:
    data = write_dataset()  # conftest's base rows: tables, shoes, rounds, wagers only
    tables = pl.read_parquet(data / "tables.parquet")
    # Naive timestamps are read as UTC (CONTRACT): the view says so too.
    effective = tables["effective_from"][0]
    tables.with_columns(pl.col("effective_from").dt.replace_time_zone(None)).write_parquet(
        data / "tables.parquet"
    )
    partition = data / "rounds" / "gaming_date=2026-11-24"
    partition.mkdir(parents=True)
    rounds = pl.read_parquet(data / "rounds.parquet").drop("banker_bid")  # nullable
    rounds.write_parquet(partition / "part-0.parquet")
    (data / "rounds.parquet").unlink()
    out = tmp_path / "out"
    run_audit(data, out)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    cwd = Path.cwd()
    os.chdir(elsewhere)  # absolute paths: the views do not depend on the reader's folder
    try:
        with duckdb.connect(str(out / "audit.duckdb"), read_only=True) as con:
            got = con.execute(
                "SELECT count(*), CAST(min(gaming_date) AS VARCHAR), count(banker_bid), "
                "typeof(any_value(banker_bid)) FROM rounds"
            ).fetchone()
            # The hive partition is a column; the missing nullable column reads as NULL.
            assert got == (2, "2026-11-24", 0, "DECIMAL(18,2)")
            assert con.execute("SELECT effective_from FROM tables").fetchone() == (effective,)
            for table in ("commission_collections", "royal9_seats"):
                assert con.execute(f"SELECT count(*) FROM {table}").fetchone() == (0,)
            located = con.execute(
                "SELECT count(*) FROM findings_located WHERE table_id IS NULL"
            ).fetchone()
            assert located == (0,)
        # The sandbox of `auditor query` admits the partition's folder.
        catalog = open_catalog(out)
        try:
            (result,) = query(
                catalog, "SELECT count(*) AS n FROM rounds WHERE gaming_date IS NOT NULL"
            )
            assert result.to_pylist() == [{"n": 2}]
        finally:
            catalog.close()
    finally:
        os.chdir(cwd)


def test_catalog_is_built_aside_and_opens_read_only_twice(sample_out: Path) -> None:
    assert not [p.name for p in sample_out.iterdir() if p.name.endswith((".tmp", ".wal"))]
    first = duckdb.connect(str(sample_out / "audit.duckdb"), read_only=True)
    second = duckdb.connect(str(sample_out / "audit.duckdb"), read_only=True)
    try:
        assert first.execute("SELECT count(*) FROM findings").fetchone()[0] > 0
        assert second.execute("SELECT count(*) FROM runs").fetchone() == (1,)
    finally:
        first.close()
        second.close()


def duckdb_cli() -> str:
    """The DuckDB command-line client a regulator is likely to have: pip `duckdb-cli`
    (1.x), installed with the test extra."""
    found = shutil.which("duckdb") or shutil.which("duckdb", path=str(Path(sys.executable).parent))
    assert found, "the DuckDB CLI is missing: pip install '.[test]' (duckdb-cli)"
    return found


@pytest.mark.e2e
def test_the_duckdb_1x_cli_reads_the_catalog(sample_out: Path) -> None:
    cli = duckdb_cli()
    version = subprocess.run([cli, "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.startswith("v1."), version.stdout  # a client older than the writer
    sql = """
        SELECT f.rule, count(*) AS n, count(DISTINCT r.dealer_id) AS dealers
        FROM findings f JOIN rounds r USING (round_id) JOIN shoe_rules o ON o.shoe_id = r.shoe_id
        WHERE point_count(r.player_cards) >= 0
        GROUP BY f.rule ORDER BY f.rule;
        SELECT count(*) FROM traceability_checks;
        SELECT vig(5, 1.00, true), banker_draws('ma-baccarat', 3, 8);
    """
    result = subprocess.run(
        [cli, "-readonly", "-csv", str(sample_out / "audit.duckdb"), "-c", sql],
        capture_output=True,
        text=True,
        cwd=sample_out.parent,
    )
    assert result.returncode == 0, result.stderr
    with duckdb.connect(str(sample_out / "audit.duckdb"), read_only=True) as con:
        rules = con.execute(
            "SELECT DISTINCT rule FROM findings WHERE round_id IS NOT NULL ORDER BY rule"
        ).fetchall()
    for (rule,) in rules:
        assert f"\n{rule}," in result.stdout
    assert "0.25,false" in result.stdout


@pytest.mark.e2e
def test_the_duckdb_1x_cli_runs_every_witness_as_the_findings_say(simulated) -> None:
    """The proofs run where a regulator runs them: on a faulted night of every ruleset,
    the 1.x client's `witness_findings` is every finding, to the cent. (DuckDB 1.x binds
    `->>` looser than IS NULL and casts a CASE's other branch too; written for 2.0 alone,
    nine witnesses failed there.)"""
    _, out = simulated
    result = subprocess.run(
        [duckdb_cli(), "-readonly", "-csv", str(out / "audit.duckdb"), "-c", comparison() + ";"],
        capture_output=True,
        text=True,
        cwd=out.parent,
    )
    assert result.returncode == 0, result.stderr
    differing = result.stdout.strip().splitlines()[1:]  # below the header: none
    assert differing == [], "\n".join(differing[:10])
    with duckdb.connect(str(out / "audit.duckdb"), read_only=True) as con:
        codes = con.execute("SELECT count(DISTINCT rule) FROM findings").fetchone()[0]
    assert codes >= 20  # the night's faults reach the witnesses that failed there


@pytest.mark.e2e
def test_the_1x_cli_refuses_duckdb_2_default_files(tmp_path: Path) -> None:
    # Why the catalog pins its storage version: without it the same client refuses it.
    default = tmp_path / "default.duckdb"
    with duckdb.connect(str(default)) as con:
        con.execute("CREATE TABLE t AS SELECT 1 AS a")
    result = subprocess.run(
        [duckdb_cli(), "-readonly", str(default), "-c", "SELECT * FROM t"],
        capture_output=True,
        text=True,
    )
    assert result.returncode != 0 and "version" in result.stderr.lower()
