"""The audit against simulated data: clean data gives nothing, every injected fault is found."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from auditor.cli import main
from auditor.contract import TABLES
from auditor.findings.table import ID_COLUMNS
from auditor.pipeline import find, run_audit, run_validation
from auditor.simulator.simulate import simulate
from tests.support.paths import SAMPLE

# fault kind -> the check that must report it, on the round the key names
ROUND_FAULTS = {
    "player_draw_extra": "DRW001",
    "player_draw_missing": "DRW002",
    "banker_draw_extra": "DRW003",
    "banker_draw_missing": "DRW004",
    "wrong_player_total": "TOT001",
    "wrong_banker_total": "TOT002",
    "wrong_outcome": "TOT003",
    "played_out_void": "TOT003",
    "ez_event_missing": "TOT004",
    "ez_event_wrong": "TOT004",
}


def test_sample_data_validates_every_table_without_quarantine():
    validated = run_validation(SAMPLE)
    assert validated.quarantine.height == 0, validated.quarantine.head().to_dicts()
    counts = {row[0]: row[1:] for row in validated.counts.iter_rows()}
    assert set(counts) == set(TABLES)
    for table, (rows_in, audited, quarantined) in counts.items():
        assert rows_in > 0, f"sample_data has no {table} rows"
        assert (audited, quarantined) == (rows_in, 0)


def test_sample_data_audit_reports_its_faults(tmp_path):
    result = CliRunner().invoke(main, ["audit", str(SAMPLE), "--out", str(tmp_path)])
    assert result.exit_code == 1, result.output
    assert pl.read_parquet(tmp_path / "findings.parquet").height > 0
    zero = CliRunner().invoke(main, ["audit", str(SAMPLE), "--out", str(tmp_path), "--exit-zero"])
    assert zero.exit_code == 0


def test_findings_are_byte_identical_on_rerun(tmp_path):
    run_audit(SAMPLE, tmp_path / "a")
    run_audit(SAMPLE, tmp_path / "b")
    first = (tmp_path / "a" / "findings.parquet").read_bytes()
    assert first == (tmp_path / "b" / "findings.parquet").read_bytes()


def test_each_finding_names_only_its_entity():
    # CONTRACT: a wager (wager_id and its round_id), a round (round_id), a shoe (shoe_id
    # only), a table (table_id only).
    findings = find(run_validation(SAMPLE))
    named = findings.select(
        pl.concat_str(
            *(pl.when(pl.col(c).is_not_null()).then(pl.lit(c[0])) for c in ID_COLUMNS),
            ignore_nulls=True,
        ).alias("named")
    )["named"]
    assert set(named) == {"rw", "r", "s", "t"}
    assert set(findings.filter(pl.col("wager_id").is_not_null())["rule"]) > {"PAY001"}


@pytest.fixture(scope="module")
def clean_200k(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("clean")
    simulate(out, rounds=200_000, seed=20261125)
    return out


@pytest.mark.e2e
def test_clean_simulation_of_200k_rounds_validates_and_yields_no_finding(clean_200k):
    validated = run_validation(clean_200k)
    assert validated.quarantine.height == 0
    findings = find(validated)
    assert findings.height == 0, findings.group_by("rule").len().to_dicts()


@pytest.mark.parametrize("seed", [3, 4])
def test_every_injected_round_fault_is_found_on_its_round(tmp_path, seed):
    simulate(tmp_path, rounds=20_000, seed=seed, fault_rate=0.1)
    key = pl.read_parquet(tmp_path / "fault_key.parquet")
    findings = find(run_validation(tmp_path))
    injected = key.filter(pl.col("fault").is_in(list(ROUND_FAULTS))).with_columns(
        pl.col("fault").replace_strict(ROUND_FAULTS).alias("rule")
    )
    assert injected.height > 50
    replay_findings = findings.filter(pl.col("rule").is_in(list(set(ROUND_FAULTS.values()))))
    missed = injected.join(replay_findings, on=["round_id", "rule"], how="anti")
    assert missed.height == 0, missed.head(5).to_dicts()
    unexplained = replay_findings.join(injected, on=["round_id", "rule"], how="anti")
    assert unexplained.height == 0, unexplained.head(5).to_dicts()
    assert set(injected["fault"]) >= {"player_draw_extra", "banker_draw_missing", "wrong_outcome"}


def test_rules_command_lists_every_check():
    result = CliRunner().invoke(main, ["rules"])
    assert result.exit_code == 0 and "DRW003" in result.output
    one = CliRunner().invoke(main, ["rules", "drw003"])
    assert "Why is this bad?" in one.output and "BankerDrewOnStand" in one.output
    assert CliRunner().invoke(main, ["rules", "XYZ999"]).exit_code == 2


def test_every_finding_says_what_where_and_why(tmp_path):
    # A finding without its message, values or citation tells an investigator nothing.
    simulate(tmp_path, rounds=20_000, seed=7, fault_rate=0.06, shoe_fault_rate=0.4)
    findings = find(run_validation(tmp_path))
    assert findings.height > 500
    for column in ("rule", "severity", "citation", "expected", "logged", "message"):
        empty = findings.filter(pl.col(column).is_null() | (pl.col(column) == ""))
        assert empty.height == 0, (column, empty.head(3).to_dicts())
