"""`auditor query`: SQL against the catalog, read-only and sandboxed; refusals exit 2."""

from __future__ import annotations

import ast
import io
import json
import shutil
from pathlib import Path

import duckdb
import polars as pl
import pytest
from click.testing import CliRunner

from auditor.cli import main
from auditor.output import sandboxed_query
from auditor.output.sandboxed_query import QueryError, open_catalog
from auditor.pipeline import run_audit
from tests.support.cli import cli
from tests.support.paths import SAMPLE


@pytest.fixture(scope="module")
def audited(tmp_path_factory) -> Path:
    """A copy of the sample audited into OUTDIR, so a test may move the dataset."""
    root = tmp_path_factory.mktemp("query")
    shutil.copytree(SAMPLE, root / "data")
    run_audit(root / "data", root / "out")
    return root


@pytest.fixture
def out(audited: Path) -> Path:
    return audited / "out"


def query(*args: str, stdin: str | None = None):
    return cli("query", *args, stdin=stdin, terminal_width=200)


def test_a_query_prints_a_table(out: Path) -> None:
    result = query(str(out), "SELECT rule, count(*) AS n FROM findings GROUP BY rule")
    assert result.exit_code == 0, result.output
    assert "rule" in result.output and "PAY002" in result.output


REFUSED = {
    "write": "CREATE TABLE notes AS SELECT 1 AS a",
    "insert": "INSERT INTO findings (rule) VALUES ('X')",
    "copy": "COPY (SELECT * FROM findings) TO '{out}/stolen.csv'",
    "passwd": "SELECT * FROM read_csv('/etc/passwd')",
    "glob": "SELECT * FROM glob('/etc/*')",
    "attach": "ATTACH '{out}/other.duckdb' AS other",
    "attach_memory": "ATTACH ':memory:' AS scratch",
    "install": "INSTALL httpfs",
    "load": "LOAD httpfs",
    "set": "SET enable_external_access = true",
    "pragma": "PRAGMA enable_profiling",
    "one_bad_of_two": "SELECT 1; DROP VIEW rounds",
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_the_sandbox_refuses(out: Path, name: str) -> None:
    before = sorted(p.name for p in out.iterdir())
    result = query(str(out), REFUSED[name].format(out=out))
    assert result.exit_code == 2, result.output
    assert result.output.startswith("error: ") and "refused" in result.output
    assert sorted(p.name for p in out.iterdir()) == before  # nothing written


def test_the_sandbox_holds_without_our_gate(out: Path) -> None:
    # Defence in depth: the connection itself, statement gate aside, is read-only,
    # kept to the dataset and OUTDIR, without extensions, and locked.
    catalog = open_catalog(out)
    con = catalog.con
    try:
        for sql in (
            "SELECT * FROM read_csv('/etc/passwd')",
            "COPY (SELECT 1) TO '/tmp/auditor-query-escape.csv'",
            "ATTACH '/tmp/auditor-query-escape.duckdb' AS x",
            "INSTALL httpfs",
            "LOAD httpfs",
            "CREATE TABLE t AS SELECT 1",
            "SET enable_external_access = true",
            "SET allowed_directories = ['/']",
            "RESET lock_configuration",
        ):
            with pytest.raises(duckdb.Error):
                con.execute(sql)
        assert not Path("/tmp/auditor-query-escape.csv").exists()
        assert con.execute("SELECT count(*) FROM rounds").fetchone()[0] > 0
    finally:
        catalog.close()


def test_formats_to_stdout_and_to_a_file(out: Path, tmp_path: Path) -> None:
    sql = "SELECT round_id, player_cards, banker_bid FROM rounds ORDER BY round_id LIMIT 3"
    csv = query(str(out), sql, "--format", "csv")
    assert csv.exit_code == 0, csv.output
    lines = csv.output.splitlines()
    assert lines[0] == "round_id,player_cards,banker_bid" and len(lines) == 4
    assert lines[1].startswith('R0000001,"[""')  # a list cell as JSON text
    js = query(str(out), sql, "--format", "json")
    rows = json.loads(js.output)
    assert [r["round_id"] for r in rows] == ["R0000001", "R0000002", "R0000003"]
    assert isinstance(rows[0]["player_cards"], list)
    target = tmp_path / "findings.parquet"
    pq = query(str(out), "SELECT * FROM findings", "--format", "parquet", "--out", str(target))
    assert pq.exit_code == 0, pq.output
    assert pl.read_parquet(target).equals(pl.read_parquet(out / "findings.parquet"))
    piped = CliRunner().invoke(main, ["query", str(out), "SELECT 42 AS a", "--format", "parquet"])
    assert pl.read_parquet(io.BytesIO(piped.stdout_bytes))["a"].to_list() == [42]


def test_format_needs_one_statement_and_output_needs_a_format(out: Path, tmp_path: Path) -> None:
    two = query(str(out), "SELECT 1; SELECT 2", "--format", "csv")
    assert two.exit_code == 2 and "one statement" in two.output
    # A file name that implies no format needs --format; nothing is written.
    unnamed = tmp_path / "x.txt"
    table = query(str(out), "SELECT 1", "--out", str(unnamed))
    assert table.exit_code == 2 and "--format" in table.output
    assert not unnamed.exists()


def test_errors_exit_2_with_one_message(out: Path, tmp_path: Path) -> None:
    bad = query(str(out), "SELECT * FROM no_such_table")
    assert bad.exit_code == 2 and "no_such_table" in bad.output
    syntax = query(str(out), "SELEC 1")
    assert syntax.exit_code == 2 and "syntax" in syntax.output.lower()
    none = query(str(tmp_path), "SELECT 1")
    assert none.exit_code == 2 and "auditor audit" in none.output


def test_the_prompt_reads_multi_line_statements_and_dot_commands(out: Path) -> None:
    script = "\n".join(
        [
            ".tables",
            ".schema findings",
            "SELECT count(*) AS rounds_played",
            "FROM rounds;",
            "DROP VIEW rounds;",
            "SELECT 'still here' AS after_error;",
            ".nonsense",
            ".quit",
            "SELECT 'after quit' AS unread;",
        ]
    )
    result = query(str(out), stdin=script)
    assert result.exit_code == 2, result.output  # the prompt went on, but DROP failed
    assert "findings_located" in result.output and "point_count" in result.output  # .tables
    assert "impact" in result.output and "DECIMAL(18,2)" in result.output  # .schema
    assert "rounds_played" in result.output and "2000" in result.output
    assert "error: refused: DROP" in result.output
    assert "still here" in result.output and "after quit" not in result.output
    assert "unknown command" in result.output


def test_a_moved_dataset_is_named_clearly(audited: Path, tmp_path: Path) -> None:
    moved = tmp_path / "moved"
    shutil.copytree(audited / "out", moved / "out")
    shutil.copytree(audited / "data", moved / "data")
    run_audit(moved / "data", moved / "out")
    shutil.move(moved / "data", tmp_path / "elsewhere")
    tables = query(str(moved / "out"), "SELECT count(*) AS n FROM findings")
    assert tables.exit_code == 0, tables.output  # the tables still answer
    assert "no longer as audited" in tables.output  # with a warning
    views = query(str(moved / "out"), "SELECT count(*) FROM rounds")
    assert views.exit_code == 2
    assert "no longer as audited" in views.output and "auditor audit" in views.output
    assert "IO Error" not in views.output


def test_no_sql_is_formatted_from_input() -> None:
    # Every call that hands DuckDB SQL in the query module passes a plain string or a
    # parsed statement: never an f-string, a concatenation or a .format().
    tree = ast.parse(Path(sandboxed_query.__file__).read_text(encoding="utf-8"))
    built = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("execute", "sql", "extract_statements")
            and node.args
        ):
            arg = node.args[0]
            if isinstance(arg, ast.JoinedStr | ast.BinOp) or (
                isinstance(arg, ast.Call)
                and isinstance(arg.func, ast.Attribute)
                and arg.func.attr == "format"
            ):
                built.append(ast.unparse(node))
    assert built == []


def test_statements_are_gated_before_any_runs(out: Path) -> None:
    catalog = open_catalog(out)
    try:
        with pytest.raises(QueryError, match="refused"):
            sandboxed_query.query(catalog, "SELECT 1; COPY (SELECT 2) TO 'x.csv'")
        assert [t.num_rows for t in sandboxed_query.query(catalog, "SELECT 1; SELECT 2")] == [1, 1]
    finally:
        catalog.close()
