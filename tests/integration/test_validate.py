"""Validation: bad rows go to the quarantine with their reason, unusable input exits 2."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from pathlib import Path

import duckdb
import polars as pl
import pytest
from auditor.schemas import MODELS
from click.testing import CliRunner

from auditor.cli import main
from auditor.contract import TABLES
from auditor.errors import InputError, RulesetError
from auditor.input import cross_rows as cross_rows_module
from auditor.input.load import open_dataset, wider_integer_columns
from auditor.input.validate import validate
from auditor.pipeline import run_validation
from tests.support.datasets import base_rows, contract_frame
from tests.support.paths import SAMPLE


def quarantine_of(validated, table: str) -> pl.DataFrame:
    return validated.quarantine.filter(pl.col("table") == table)


def assert_counts_add_up(validated) -> None:
    counts = validated.counts
    assert (counts["rows_in"] == counts["rows_audited"] + counts["rows_quarantined"]).all()
    for table, _, audited, _ in counts.iter_rows():
        assert validated.audited[table].collect().height == audited


def test_clean_dataset_has_no_quarantine(write_dataset):
    validated = run_validation(write_dataset())
    assert validated.quarantine.height == 0
    counts = {r[0]: r[1:] for r in validated.counts.iter_rows()}
    assert counts["rounds"] == (2, 2, 0)
    assert counts["wagers"] == (3, 3, 0)
    assert_counts_add_up(validated)


def test_audited_rows_have_contract_types(write_dataset):
    validated = run_validation(write_dataset())
    wagers = validated.audited["wagers"].collect()
    assert wagers.schema["amount"] == pl.Decimal(18, 2)
    assert wagers.filter(pl.col("wager_id") == "W2")["amount"].item() == Decimal("10.10")


def test_each_model_declares_the_contract_columns_types_and_nulls():
    # The models annotate the contract's parameterised types (money, timestamps, cards)
    # apart from the values the contract compares with: the two must stay one.
    for table, model in MODELS.items():
        columns = model.to_schema().columns.items()
        declared = {name: (column.dtype.type, column.nullable) for name, column in columns}
        assert declared == TABLES[table], table


def test_card_1S_is_quarantined_with_its_wagers(write_dataset):
    rows = base_rows()
    rows["rounds"][0]["player_cards"] = ["1S", "KS"]
    validated = run_validation(write_dataset(rows))
    bad = quarantine_of(validated, "rounds")
    assert bad.select("row_key", "column", "check", "value").rows() == [
        ("R1", "player_cards", "card_format", "1S")
    ]
    assert "rank A23456789TJQK" in bad["reason"].item()
    wagers = quarantine_of(validated, "wagers")
    assert sorted(wagers["row_key"]) == ["W1", "W2"]
    assert set(wagers["check"]) == {"parent_quarantined"}
    assert_counts_add_up(validated)


def test_four_card_hand_is_quarantined(write_dataset):
    rows = base_rows()
    rows["rounds"][1]["banker_cards"] = ["KD", "7C", "2H", "3H"]
    validated = run_validation(write_dataset(rows))
    bad = quarantine_of(validated, "rounds")
    assert bad.select("row_key", "column", "check").rows() == [
        ("R2", "banker_cards", "two_or_three_cards")
    ]
    assert "§10(c)" in bad["reason"].item()
    assert quarantine_of(validated, "wagers")["row_key"].to_list() == ["W3"]


def test_the_hand_size_reason_cites_the_rounds_own_ruleset(write_dataset):
    rows = base_rows()
    rows["tables"][0].update(ruleset="md-mini-baccarat", seats=7)
    rows["rounds"][1]["banker_cards"] = ["KD", "7C", "2H", "3H"]
    for round_row in rows["rounds"]:
        round_row["curator_seat"] = None
    bad = quarantine_of(run_validation(write_dataset(rows)), "rounds")
    assert bad["check"].to_list() == ["two_or_three_cards"]
    assert "md-mini-baccarat .09C" in bad["reason"].item()
    assert "ma-baccarat" not in bad["reason"].item()


def test_short_hands_are_accepted_only_in_a_void_round(write_dataset):
    rows = base_rows()
    rows["rounds"][0].update(
        kind="void", outcome="void", player_cards=["KS"], banker_cards=[], player_total=0
    )
    rows["rounds"][0]["banker_total"] = 0
    rows["rounds"][1]["player_cards"] = ["KS"]
    validated = run_validation(write_dataset(rows))
    bad = quarantine_of(validated, "rounds")
    assert bad.select("row_key", "column", "check").rows() == [
        ("R2", "player_cards", "two_or_three_cards")
    ]
    assert_counts_add_up(validated)


def test_a_void_round_still_holds_at_most_three_cards_a_hand(write_dataset):
    rows = base_rows()
    rows["rounds"][0].update(
        kind="void", outcome="void", banker_cards=["KD", "7C", "2H", "3H"], banker_total=2
    )
    validated = run_validation(write_dataset(rows))
    bad = quarantine_of(validated, "rounds")
    assert bad.select("row_key", "column", "check").rows() == [
        ("R1", "banker_cards", "two_or_three_cards")
    ]


def test_duplicate_round_id_quarantines_both_rows_and_their_wagers(write_dataset):
    rows = base_rows()
    rows["rounds"][1]["round_id"] = "R1"
    validated = run_validation(write_dataset(rows))
    bad = quarantine_of(validated, "rounds")
    assert bad.height == 2
    assert set(bad["check"]) == {"unique"}
    assert "2 rows share this id" in bad["reason"][0]
    # R2 was renamed R1, so all three wagers now point at an ambiguous round.
    assert quarantine_of(validated, "wagers").height == 3
    counts = {r[0]: r[1:] for r in validated.counts.iter_rows()}
    assert counts["rounds"] == (2, 0, 2)
    assert_counts_add_up(validated)


def test_wager_pointing_to_no_round(write_dataset):
    rows = base_rows()
    rows["wagers"][2]["round_id"] = "R404"
    validated = run_validation(write_dataset(rows))
    bad = quarantine_of(validated, "wagers")
    assert bad.select("row_key", "check", "value").rows() == [("W3", "foreign_key", "R404")]
    assert "not found in rounds.round_id" in bad["reason"].item()
    assert_counts_add_up(validated)


def test_value_checks_name_the_column(write_dataset):
    rows = base_rows()
    rows["wagers"][0]["amount"] = Decimal("-5.00")
    rows["wagers"][1]["bet"] = "super_six"
    rows["rounds"][0]["player_total"] = 12
    validated = run_validation(write_dataset(rows))
    found = set(validated.quarantine.select("row_key", "column").rows())
    assert {("W1", "amount"), ("W2", "bet"), ("R1", "player_total")} <= found
    assert_counts_add_up(validated)


def test_integer_too_wide_for_contract_type_is_quarantined(write_dataset):
    rows = base_rows()
    wagers = contract_frame("wagers", rows["wagers"]).with_columns(
        pl.Series("seat", [1, 300, 2], dtype=pl.Int64)
    )
    validated = run_validation(write_dataset(rows, frames={"wagers": wagers}))
    bad = quarantine_of(validated, "wagers")
    assert bad.select("row_key", "column", "check", "value").rows() == [
        ("W2", "seat", "fits_type", "300")
    ]


@pytest.mark.parametrize(
    ("dtype", "checked"),
    [(pl.Int8, False), (pl.Int16, True), (pl.Int64, True), (pl.UInt8, True)],
)
def test_overflow_is_checked_only_where_the_file_type_is_wider(write_dataset, dtype, checked):
    rows = base_rows()
    wagers = contract_frame("wagers", rows["wagers"]).with_columns(pl.col("seat").cast(dtype))
    dataset = open_dataset(write_dataset(rows, frames={"wagers": wagers}))
    assert wider_integer_columns(dataset.files["wagers"][0]) == (["seat"] if checked else [])


def test_duplicate_id_across_files_of_a_table(write_dataset):
    root = write_dataset()
    wagers = pl.read_parquet(root / "wagers.parquet")
    (root / "wagers.parquet").unlink()
    (root / "wagers").mkdir()
    wagers.write_parquet(root / "wagers" / "part-0.parquet")
    wagers.head(1).write_parquet(root / "wagers" / "part-1.parquet")
    bad = quarantine_of(run_validation(root), "wagers")
    assert bad.select("file", "row", "row_key", "check").rows() == [
        ("wagers/part-0.parquet", 0, "W1", "unique"),
        ("wagers/part-1.parquet", 0, "W1", "unique"),
    ]


def _all_alike(key_hash):
    return lambda columns: key_hash(columns) * 0


def _absent_like_present(key_hash):
    def hashed(columns):
        if len(columns) > 1:
            return key_hash(columns)
        value = pl.col(columns[0]).cast(pl.String)
        return pl.when(value == "R404").then(pl.lit("R1")).otherwise(value).hash()

    return hashed


@pytest.mark.parametrize("weak_hash", [_all_alike, _absent_like_present])
def test_cross_row_checks_do_not_depend_on_hashes_being_distinct(
    write_dataset, monkeypatch, weak_hash
):
    rows = base_rows()
    rows["rounds"].append({**rows["rounds"][1]})  # R2 twice
    rows["wagers"][0]["round_id"] = "R404"
    rows["wagers"][1]["wager_id"] = None
    rows["wagers"].append({**rows["wagers"][2], "round_id": None})
    root = write_dataset(rows)
    expected = run_validation(root)
    assert set(expected.quarantine["check"]) >= {"unique", "foreign_key", "not_nullable"}
    # Ids that hash alike must still be told apart by the ids themselves.
    monkeypatch.setattr(cross_rows_module, "_key_hash", weak_hash(cross_rows_module._key_hash))
    colliding = run_validation(root)
    assert colliding.quarantine.equals(expected.quarantine)
    assert colliding.counts.equals(expected.counts)
    # And in buckets: room for a few ids at a time.
    assert cross_rows_module.buckets_for(open_dataset(root), 60) > 3
    bucketed = validate(open_dataset(root), id_budget_bytes=60)
    assert bucketed.quarantine.equals(expected.quarantine)


def test_any_integer_width_and_naive_timestamps_are_accepted(write_dataset):
    rows = base_rows()
    rounds = contract_frame("rounds", rows["rounds"]).with_columns(
        pl.col("round_no").cast(pl.Int64),
        pl.col("player_total").cast(pl.UInt8),
        pl.col("dealt_at").dt.replace_time_zone(None),
    )
    validated = run_validation(write_dataset(rows, frames={"rounds": rounds}))
    assert validated.quarantine.height == 0
    audited = validated.audited["rounds"].collect()
    assert audited.schema["dealt_at"] == pl.Datetime("us", "UTC")
    assert audited.schema["round_no"] == pl.Int32


def test_hive_partitioned_folder_is_read(write_dataset, tmp_path):
    root = write_dataset()
    wagers = pl.read_parquet(root / "wagers.parquet")
    (root / "wagers.parquet").unlink()
    for day, part in (("2026-11-24", wagers.head(2)), ("2026-11-25", wagers.tail(1))):
        folder = root / "wagers" / f"gaming_date={day}"
        folder.mkdir(parents=True)
        part.write_parquet(folder / "part-0.parquet")
    validated = run_validation(root)
    assert validated.audited["wagers"].collect().height == 3
    assert validated.quarantine.height == 0


@pytest.mark.parametrize(
    ("column", "dtype", "expected"),
    [
        ("amount", pl.Float64, "float money"),
        ("amount", pl.Int64, "integer money"),
        ("payout", pl.Float32, "float money"),
    ],
)
def test_wrong_money_type_exits_2_naming_file_and_column(write_dataset, column, dtype, expected):
    rows = base_rows()
    wagers = contract_frame("wagers", rows["wagers"]).with_columns(
        (pl.col(column).cast(pl.Float64) * (100 if dtype == pl.Int64 else 1)).cast(dtype)
    )
    root = write_dataset(rows, frames={"wagers": wagers})
    with pytest.raises(InputError) as caught:
        run_validation(root)
    message = str(caught.value)
    assert "wagers.parquet" in message
    assert f"'{column}'" in message
    assert expected in message
    assert "decimal(18,2)" in message


def test_string_total_exits_2(write_dataset):
    rows = base_rows()
    rounds = contract_frame("rounds", rows["rounds"]).with_columns(
        pl.col("player_total").cast(pl.String)
    )
    with pytest.raises(InputError, match=r"rounds.parquet: column 'player_total'.*int8"):
        run_validation(write_dataset(rows, frames={"rounds": rounds}))


def test_missing_required_column_exits_2(write_dataset):
    rows = base_rows()
    shoes = contract_frame("shoes", rows["shoes"]).drop("burn_card")
    with pytest.raises(InputError, match=r"shoes.parquet: required column 'burn_card' is missing"):
        run_validation(write_dataset(rows, frames={"shoes": shoes}))


def test_missing_required_table_exits_2(write_dataset):
    root = write_dataset()
    (root / "wagers.parquet").unlink()
    with pytest.raises(InputError, match="required table 'wagers' is missing"):
        run_validation(root)


def test_truncated_file_exits_2(write_dataset):
    root = write_dataset()
    path = root / "rounds.parquet"
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match=r"rounds.parquet: not a readable Parquet file"):
        run_validation(root)


@pytest.mark.parametrize("partition_rounds", [None, 100_000])
def test_damaged_pages_exit_2_naming_the_file_however_batches_are_sized(tmp_path, partition_rounds):
    """Its footer whole, its first pages garbage: the read that sizes a batch (given
    partitions, from a sample of the file) says what the batch's own read says."""
    from auditor.simulator.simulate import simulate

    root = tmp_path / "night"
    simulate(root, 300, seed=3)
    path = root / "rounds.parquet"
    data = bytearray(path.read_bytes())
    for place in range(8, min(len(data) // 2, 4_000)):
        data[place] = (data[place] * 7 + 13) % 256
    path.write_bytes(bytes(data))
    with pytest.raises(InputError, match=r"rounds.parquet: Parquet file could not be read"):
        run_validation(root, partition_rounds=partition_rounds)


def test_unknown_ruleset_exits_2(write_dataset):
    rows = base_rows()
    rows["tables"][0]["ruleset"] = "nj-punto-banco"
    with pytest.raises(RulesetError, match=r"tables.parquet: column 'ruleset', row 0.*nj-punto"):
        run_validation(write_dataset(rows))


def test_shoe_opened_before_any_options_row_is_quarantined(write_dataset):
    rows = base_rows()
    rows["shoes"][0]["opened_at"] = rows["tables"][0]["effective_from"].replace(year=2020)
    validated = run_validation(write_dataset(rows))
    assert quarantine_of(validated, "shoes")["check"].to_list() == ["options_in_force"]
    assert quarantine_of(validated, "rounds").height == 2
    assert quarantine_of(validated, "wagers").height == 3
    assert_counts_add_up(validated)


# ---- command line ----------------------------------------------------------------


def test_cli_audit_writes_outputs_and_counts(write_dataset, tmp_path: Path):
    rows = base_rows()
    rows["wagers"][2]["round_id"] = "R404"
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["audit", str(write_dataset(rows)), "--out", str(out)])
    assert result.exit_code in (0, 1), result.output
    for name in ("findings.parquet", "quarantine.parquet", "row_counts.parquet", "audit.duckdb"):
        assert (out / name).is_file()
    con = duckdb.connect(str(out / "audit.duckdb"), read_only=True)
    got = con.execute(
        "SELECT rows_in, rows_audited, rows_quarantined FROM row_counts WHERE \"table\"='wagers'"
    ).fetchone()
    assert got == (3, 2, 1)
    assert con.execute("SELECT count(*) FROM quarantine").fetchone() == (1,)
    con.close()
    assert "quarantined" in (out / "summary.txt").read_text()


def test_cli_bad_input_exits_2_with_one_message(write_dataset, tmp_path: Path):
    rows = base_rows()
    wagers = contract_frame("wagers", rows["wagers"]).with_columns(
        pl.col("amount").cast(pl.Float64)
    )
    root = write_dataset(rows, frames={"wagers": wagers})
    result = CliRunner().invoke(main, ["audit", str(root), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert "wagers.parquet" in result.output and "'amount'" in result.output


def test_cli_validate_exit_codes(write_dataset):
    assert CliRunner().invoke(main, ["validate", str(write_dataset())]).exit_code == 0
    rows = base_rows()
    rows["wagers"][0]["bet"] = "lucky6"
    result = CliRunner().invoke(main, ["validate", str(write_dataset(rows))])
    assert result.exit_code == 1
    assert "lucky6" in result.output


def test_cli_validate_keeps_to_the_audits_default_memory_limit(write_dataset, monkeypatch):
    """Without partitions, validation holds every id at once and reads a million rows a
    batch whatever their size: a night's shoes alone could pass any limit."""
    from auditor import pipeline
    from auditor.defaults import DEFAULT_MEMORY_LIMIT, parse_size
    from auditor.input.partition import rounds_within

    asked: list[int | None] = []
    validated = pipeline.run_validation

    def spied(dataset_path, progress=None, partition_rounds=None, **options):
        asked.append(partition_rounds)
        return validated(dataset_path, progress, partition_rounds, **options)

    monkeypatch.setattr(pipeline, "run_validation", spied)
    assert CliRunner().invoke(main, ["validate", str(write_dataset())]).exit_code == 0
    assert asked == [rounds_within(parse_size(DEFAULT_MEMORY_LIMIT))]


def test_cli_version():
    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0 and "auditor" in result.output


def test_cross_row_checks_in_buckets_quarantine_the_same_rows(tmp_path):
    """Held to a small budget, the id checks run in several buckets, one pass each, and
    quarantine exactly what one pass over all the ids does."""
    from auditor.simulator.simulate import simulate

    root = tmp_path / "night"
    simulate(root, 3_000, seed=2)
    rounds = pl.read_parquet(root / "rounds.parquet")
    wagers = pl.read_parquet(root / "wagers.parquet")
    # Repeated round ids, wagers repeated and pointing nowhere, a null parent id.
    rounds = pl.concat([rounds, rounds.slice(10, 25)])
    row = pl.int_range(pl.len())
    wagers = pl.concat([wagers, wagers.slice(100, 40)]).with_columns(
        pl.when(row % 97 == 5)
        .then(pl.concat_str(pl.col("round_id"), pl.lit("-gone")))
        .when(row == 7)
        .then(pl.lit(None, dtype=pl.String))
        .otherwise(pl.col("round_id"))
        .alias("round_id")
    )
    rounds.write_parquet(root / "rounds.parquet")
    wagers.write_parquet(root / "wagers.parquet")
    dataset = open_dataset(root)
    assert cross_rows_module.buckets_for(dataset, None) == 1
    assert cross_rows_module.buckets_for(dataset, 20_000) >= 5
    whole = validate(dataset).quarantine
    bucketed = validate(dataset, id_budget_bytes=20_000).quarantine
    assert {"unique", "foreign_key"} <= set(whole["check"])
    assert whole.filter(pl.col("table") == "rounds").height >= 50
    assert bucketed.equals(whole)


# ---- the engine pandera's checks run on --------------------------------------------------


def engine_affinity() -> str | None:
    return pl.Config.state(if_set=True).get("POLARS_ENGINE_AFFINITY")


def test_pandera_checks_each_batch_in_memory_and_leaves_the_engine_as_found(monkeypatch):
    before = engine_affinity()
    seen: list[str | None] = []
    checked = MODELS["rounds"].validate

    def spied(*args, **kwargs):
        seen.append(engine_affinity())
        return checked(*args, **kwargs)

    monkeypatch.setattr(MODELS["rounds"], "validate", spied)
    run_validation(SAMPLE)
    assert seen == ["in-memory"]
    assert engine_affinity() == before


def test_validations_on_several_threads_leave_the_engine_as_found():
    # The choice is process-wide: interleaved, one validation would restore what another set.
    before = engine_affinity()
    with ThreadPoolExecutor(max_workers=3) as pool:
        validated = list(pool.map(lambda _: run_validation(SAMPLE), range(6)))
    assert engine_affinity() == before
    assert all(v.quarantine.equals(validated[0].quarantine) for v in validated)


# ---- batches sized by memory -------------------------------------------------------------


def test_shoes_are_read_in_batches_of_the_budget_and_quarantined_as_in_one(tmp_path, monkeypatch):
    """A shoe's cards make its row some 6 KB in memory, a wager's 230 bytes: a batch of a
    million rows was 6 GB of shoes. The row checks read a table in batches of at most
    `batch_bytes`, and quarantine exactly what one batch of every row does."""
    from auditor.input import validate as validate_module
    from auditor.input.scan import memory_bytes
    from auditor.simulator.simulate import simulate

    root = tmp_path / "night"
    simulate(root, 3_000, seed=2)
    shoes = pl.read_parquet(root / "shoes.parquet")
    # 2,700 shoes (new ids, no rounds); a card that is none in every 500th.
    copies = pl.concat(
        [shoes.with_columns(pl.format("{}-{}", "shoe_id", pl.lit(n))) for n in range(50)]
    )
    row = pl.int_range(pl.len())
    copies = copies.with_columns(
        pl.when(row % 500 == 7)
        .then(pl.col("card_sequence").list.concat(pl.lit(["1S"])))
        .otherwise(pl.col("card_sequence"))
        .alias("card_sequence")
    )
    pl.concat([shoes, copies]).write_parquet(root / "shoes.parquet")
    held: list[int] = []
    checked = validate_module._pandera_failures

    def spied(source, batch):
        if source.table == "shoes":
            held.append(memory_bytes(batch))
        return checked(source, batch)

    monkeypatch.setattr(validate_module, "_pandera_failures", spied)
    dataset = open_dataset(root)
    budget = 8 * 2**20
    whole = validate(dataset).quarantine
    assert len(held) == 1 and held[0] > 1.5 * budget  # one batch of every shoe: 16 MB
    held.clear()
    batched = validate(dataset, batch_bytes=budget).quarantine
    assert len(held) >= 2
    assert max(held) <= budget * 1.1  # the size is a sample's estimate
    assert whole.filter(pl.col("table") == "shoes").height >= 6
    assert batched.equals(whole)
