"""The review desk shows live findings as they come, both ways: a finding the watch
reports is in the queue at the next page (no restart), marked live, and leaves it when
withdrawn; a reviewer reviews it in the browser and, once the day is closed, the review
is on the closing run's finding of the same identity, and the ledger verifies; the
catalog's `findings_live` holds what the desk shows live, and a catalog written before it
still verifies."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import duckdb
import pytest
from starlette.testclient import TestClient

from auditor.archive.catalog import (
    BUILT_FOR,
    CATALOG_FILE,
    COMMENTS,
    INTERNAL,
    view_statements,
)
from auditor.archive.ledger import read_reviews
from auditor.archive.live_runs import LIVE_VIEWS, live_findings
from auditor.desk.app import create_app
from auditor.live.batch import changes
from auditor.live.watch import Watch, WatchOptions
from auditor.output.catalog_packs import STORAGE_VERSION
from auditor.output.macros import sql_literal
from tests.support.cli import AUDITOR
from tests.support.desk import Desked, build, csrf_of, log_in


def landing_of(desked: Desked, night: Path) -> tuple[Path, str]:
    """A simulated night as a landing folder, its play filed under its gaming day."""
    landing, day = desked.root / "landing", night.name
    for name in ("tables", "royal9_seats"):
        (landing / name).mkdir(parents=True)
        shutil.copy(night / f"{name}.parquet", landing / name / "0.parquet")
    for name in ("shoes", "rounds", "wagers", "commission_collections"):
        (landing / name / f"gaming_date={day}").mkdir(parents=True)
        shutil.copy(night / f"{name}.parquet", landing / name / f"gaming_date={day}" / "0.parquet")
    return landing, day


def watching(root: Path, archived: int) -> tuple[Desked, Watch, str]:
    desked = build(root, nights=archived + 2, archived=archived, rounds=250)
    landing, day = landing_of(desked, desked.nights[archived])
    watch = Watch(WatchOptions(landing, desked.archive, settle=0.0), lambda _: None)
    return desked, watch, day


def client_of(desked: Desked, name: str = "alice") -> TestClient:
    client = TestClient(create_app(desked.archive, desked.users))
    assert log_in(client, name).status_code == 303
    return client


def run(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run([AUDITOR, *map(str, args)], capture_output=True, text=True)


def queue_of(client: TestClient, day: str) -> str:
    return client.get(f"/queue?status=any&night={day}").text


def test_a_finding_reported_live_shows_in_the_queue_and_leaves_when_withdrawn(tmp_path):
    # No run archived yet: the archive is the watch's own, its first day being dealt.
    desked, watch, day = watching(tmp_path, archived=0)
    client = client_of(desked)
    assert "No finding matches this filter" in queue_of(client, day)
    watch.tick(close_due=False)
    live = live_findings(desked.archive)
    assert live.height > 3
    page = queue_of(client, day)  # the same desk, no restart
    assert f"{live.height:,} findings in force match" in page
    assert all(finding_id in page for finding_id in live["finding_id"])
    assert "live " in page and 'class="tag live"' in page
    shown = client.get(f"/findings/{live['finding_id'][0]}").text
    assert "found live at" in shown and "not yet closed" in shown
    # Rows logged later make one no finding at all: the watch withdraws it.
    gone = live["finding_id"][1]
    last = watch.store.reported(day)[gone]
    watch.report(day, changes([], {gone: last}))
    page = queue_of(client, day)
    assert gone not in page and live["finding_id"][0] in page
    assert f"{live.height - 1:,} findings in force match" in page
    assert client.get(f"/findings/{gone}").status_code == 404


@pytest.mark.e2e
def test_a_review_of_a_live_finding_is_on_the_closed_runs_finding(tmp_path):
    desked, watch, day = watching(tmp_path, archived=0)
    watch.tick(close_due=False)
    live = live_findings(desked.archive)
    finding, withdrawn = live["finding_id"][0], live["finding_id"][1]
    watch.report(day, changes([], {withdrawn: watch.store.reported(day)[withdrawn]}))
    client = client_of(desked)

    def review(finding_id: str):
        form = client.get(f"/queue?status=any&night={day}").text
        return client.post(
            "/reviews",
            data={"csrf": csrf_of(form), "finding_id": finding_id, "status": "explained",
                  "note": "pit boss paid the difference at the table",
                  "back": f"/findings/{finding_id}"},
        )  # fmt: skip

    answer = review(finding)
    assert answer.status_code == 200 and "Recorded 1 review" in answer.text
    (record,) = read_reviews(desked.archive)
    assert record["run_id"] == f"live-{day}" and record["by"] == "alice"
    assert record["identity"]["rule"] == live["rule"][0]
    # A withdrawn finding is no finding to review.
    refused = review(withdrawn)
    assert refused.status_code == 400 and "in no archived run" in refused.text
    assert len(read_reviews(desked.archive)) == 1
    run_id = watch.close(day)
    app = client.app
    while not hasattr(app, "state"):  # the Starlette app inside the desk's middlewares
        app = app.app
    state = app.state.desk.snapshot.current()  # the desk's own state, read anew
    row = (
        state.cursor()
        .execute(
            "SELECT run_id, status, found_live_at FROM queue WHERE finding_id = $id",
            {"id": finding},
        )
        .fetchone()
    )
    assert row == (run_id, "explained", None)
    assert 'class="tag live"' not in queue_of(client, day)
    assert run("review", desked.archive, "--verify").returncode == 0
    assert run("verify", desked.archive).returncode == 0
    status = run(
        "query", desked.archive, "--format", "json",
        f"SELECT status, last_run_id FROM finding_status WHERE finding_id = '{finding}'",
    )  # fmt: skip
    assert json.loads(status.stdout) == [{"status": "explained", "last_run_id": run_id}]


@pytest.mark.e2e
def test_findings_live_in_the_catalog_are_those_the_desk_shows_live(tmp_path):
    desked, watch, day = watching(tmp_path, archived=1)
    watch.tick(close_due=False)
    live = live_findings(desked.archive)
    asked = run("query", desked.archive, "--format", "json",
                "SELECT finding_id, run_id, gaming_day FROM findings_live")  # fmt: skip
    assert asked.returncode == 0, asked.stderr
    rows = json.loads(asked.stdout)
    assert {r["finding_id"] for r in rows} == set(live["finding_id"])
    assert {(r["run_id"], r["gaming_day"]) for r in rows} == {(f"live-{day}", day)}
    # A catalog written before the live runs were read verifies; its next reader writes it
    # anew with them. A live view redefined is named.
    _write_catalog_without_live_views(desked.archive)
    assert run("verify", desked.archive).returncode == 0
    assert run("query", desked.archive, "SELECT count(*) FROM findings_live").returncode == 0
    with duckdb.connect(str(desked.archive / CATALOG_FILE)) as con:
        con.execute("CREATE OR REPLACE VIEW findings_live AS SELECT 1 AS finding_id")
    named = run("verify", desked.archive)
    assert named.returncode == 1 and "view findings_live" in named.stdout + named.stderr
    watch.close(day)
    after = run("query", desked.archive, "--format", "json",
                "SELECT count(*) AS n FROM findings_live")  # fmt: skip
    assert json.loads(after.stdout) == [{"n": 0}]


def _write_catalog_without_live_views(archive: Path) -> None:
    catalog = archive / CATALOG_FILE
    catalog.unlink()
    con = duckdb.connect(":memory:")
    try:
        con.execute(
            f"ATTACH {sql_literal(str(catalog))} AS archive (STORAGE_VERSION '{STORAGE_VERSION}')"
        )
        con.execute("USE archive")
        con.execute(f"CREATE SCHEMA {INTERNAL}")
        for statement in view_statements(archive):
            name = statement.split()[2]
            if name not in LIVE_VIEWS:
                con.execute(statement)
                if name in COMMENTS:
                    con.execute(f"COMMENT ON VIEW {name} IS {sql_literal(COMMENTS[name])}")
        con.execute(f"CREATE TABLE {BUILT_FOR} AS SELECT $f AS folder", {"f": str(archive)})
        con.execute("USE memory")
        con.execute("DETACH archive")
    finally:
        con.close()
