"""The review desk in process (Starlette's TestClient): the users file and its commands,
logging in and out, the lockout, the roles, the queue's filters and paging, a finding's
page, reviews one at a time and in batches (each one ledger append, the logged-in name
as the reviewer), the nights, investigations, the period, the SQL console, and runs
added while the desk runs. Every behaviour both ways: what is allowed, what is refused."""

from __future__ import annotations

import io
import json
import os
import re
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest
from starlette.testclient import TestClient

from auditor.archive.ledger import read_reviews
from auditor.desk.app import create_app
from auditor.desk.auth import MAX_FAILURES
from auditor.desk.users import UsersError, read_users
from tests.support.cli import cli
from tests.support.desk import PASSWORD, Desked, add_night, build, csrf_of, log_in, session_csrf


@pytest.fixture(scope="module")
def desked(tmp_path_factory) -> Desked:
    return build(tmp_path_factory.mktemp("desk"))


@pytest.fixture(scope="module")
def app(desked: Desked):
    return create_app(desked.archive, desked.users)


def client_as(app, name: str | None) -> TestClient:
    client = TestClient(app)
    if name is not None:
        assert log_in(client, name).status_code == 303
    return client


def archive_rows(desked: Desked, sql: str, params: dict | None = None) -> list[tuple]:
    with duckdb.connect(str(desked.archive / "archive.duckdb"), read_only=True) as con:
        return con.execute(sql, params or {}).fetchall()


def queue_ids(html: str) -> list[str]:
    return re.findall(r'name="finding_id" value="([0-9a-f]+)"', html)


# ---- users ------------------------------------------------------------------------------


def test_users_are_added_listed_changed_and_removed(tmp_path: Path) -> None:
    users = tmp_path / "users.json"
    added = cli("users", "add", users, "jdoe", "--role", "reviewer", "--password-stdin",
                stdin="a long password\n")  # fmt: skip
    assert added.exit_code == 0, added.output
    assert os.stat(users).st_mode & 0o777 == 0o600
    assert read_users(users)["jdoe"].hash.startswith("$argon2id$")
    assert "a long password" not in users.read_text()
    assert cli("users", "list", users).output == "jdoe\treviewer\n"
    changed = cli("users", "passwd", users, "jdoe", "--password-stdin", stdin="another one!\n")
    assert changed.exit_code == 0
    assert cli("users", "remove", users, "jdoe").exit_code == 0
    assert cli("users", "list", users).output == ""


def test_users_refuses_bad_names_roles_passwords_and_duplicates(tmp_path: Path) -> None:
    users = tmp_path / "users.json"
    assert cli("users", "add", users, "x", "--role", "root", "--password-stdin",
               stdin="a long password\n").exit_code == 2  # fmt: skip
    short = cli(
        "users", "add", users, "jdoe", "--role", "reviewer", "--password-stdin", stdin="x\n"
    )
    assert short.exit_code == 2 and "at least" in short.output
    bad = cli("users", "add", users, "evil\nname", "--role", "reviewer", "--password-stdin",
              stdin="a long password\n")  # fmt: skip
    assert bad.exit_code == 2 and not users.exists()
    cli(
        "users",
        "add",
        users,
        "jdoe",
        "--role",
        "reviewer",
        "--password-stdin",
        stdin="a long password\n",
    )
    again = cli("users", "add", users, "jdoe", "--role", "admin", "--password-stdin",
                stdin="a long password\n")  # fmt: skip
    assert again.exit_code == 2 and read_users(users)["jdoe"].role == "reviewer"
    assert cli("users", "remove", users, "nobody").exit_code == 2


def test_a_users_file_others_may_write_or_a_link_is_refused(tmp_path: Path, desked: Desked) -> None:
    users = tmp_path / "users.json"
    users.write_bytes(desked.users.read_bytes())
    os.chmod(users, 0o620)
    with pytest.raises(UsersError, match="group or by everyone"):
        read_users(users)
    with pytest.raises(UsersError):
        create_app(desked.archive, users)
    assert cli("users", "list", users).exit_code == 2
    os.chmod(users, 0o600)
    link = tmp_path / "link.json"
    link.symlink_to(users)
    with pytest.raises(UsersError, match="link"):
        read_users(link)
    assert cli("users", "add", link, "eve", "--role", "admin", "--password-stdin",
               stdin="a long password\n").exit_code == 2  # fmt: skip
    assert "eve" not in read_users(users)


# ---- logging in ---------------------------------------------------------------------------


def test_a_login_starts_a_session_and_logout_ends_it(app) -> None:
    client = TestClient(app)
    answer = log_in(client, "alice")
    assert answer.status_code == 303
    cookie = answer.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Max-Age=" in cookie
    assert client.get("/queue").status_code == 200
    out = client.post("/logout", data={"csrf": session_csrf(client)}, follow_redirects=False)
    assert out.status_code == 303
    assert client.get("/queue", follow_redirects=False).status_code == 303


def test_a_wrong_password_or_unknown_name_is_refused(app) -> None:
    client = TestClient(app)
    assert log_in(client, "alice", "not the password").status_code == 401
    assert log_in(client, "nobody").status_code == 401
    assert client.get("/queue", follow_redirects=False).headers["location"].startswith("/login")


def test_five_failed_logins_lock_the_name_not_the_others(app) -> None:
    client = TestClient(app)
    for _ in range(MAX_FAILURES):
        assert log_in(client, "adam", "wrong password").status_code == 401
    assert log_in(client, "adam").status_code == 429  # the right password, locked all the same
    assert log_in(client, "rita").status_code == 303


def test_the_login_form_needs_its_token(app) -> None:
    client = TestClient(app)
    client.get("/login")
    refused = client.post("/login", data={"name": "alice", "password": PASSWORD})
    assert refused.status_code == 403


def test_a_user_removed_is_logged_out(tmp_path: Path, desked: Desked) -> None:
    users = tmp_path / "users.json"
    users.write_bytes(desked.users.read_bytes())
    os.chmod(users, 0o600)
    client = client_as(create_app(desked.archive, users), "bob")
    assert client.get("/queue").status_code == 200
    assert cli("users", "remove", users, "bob").exit_code == 0
    assert client.get("/queue", follow_redirects=False).status_code == 303


# ---- the pages -------------------------------------------------------------------------------


def test_the_queue_is_the_open_findings_costliest_first_and_paged(app, desked: Desked) -> None:
    client = client_as(app, "rita")
    page = client.get("/queue?status=any").text
    (total,) = archive_rows(desked, "SELECT count(*) FROM findings_current")[0]
    assert f"{total:,} finding" in page
    impacts = re.findall(r'<td class="num[^"]*">([^<]*)</td>\s*<td class="review">', page)
    amounts = [abs(float(a.replace("$", "").replace(",", "").replace("−", "-").replace("+", "")))
               for a in impacts if "$" in a]  # fmt: skip
    assert amounts == sorted(amounts, reverse=True) and amounts
    second = client.get("/queue?status=any&page=2").text
    assert 'rel="prev"' in second
    assert set(re.findall(r"/findings/([0-9a-f]+)", page)).isdisjoint(
        re.findall(r"/findings/([0-9a-f]+)", second)
    )


def test_the_queue_filters_by_rule_severity_night_and_money(app, desked: Desked) -> None:
    client = client_as(app, "rita")
    rule, count = archive_rows(
        desked, "SELECT rule, count(*) FROM findings_current GROUP BY rule ORDER BY 2 DESC LIMIT 1"
    )[0]
    page = client.get(f"/queue?status=any&rule={rule}").text
    assert f"{count:,} finding" in page
    night = str(archive_rows(desked, "SELECT max(gaming_day) FROM findings_current")[0][0])
    (on_night,) = archive_rows(
        desked, "SELECT count(*) FROM findings_current WHERE gaming_day = $d", {"d": night}
    )[0]
    assert f"{on_night:,} finding" in client.get(f"/queue?status=any&night={night}").text
    (costly,) = archive_rows(
        desked, "SELECT count(*) FROM findings_current WHERE abs(impact) >= 100"
    )[0]
    assert f"{costly:,} finding" in client.get("/queue?status=any&money=100").text
    assert "0 findings" in client.get("/queue?status=any&patron=nobody-at-all").text
    wrong = client.get("/queue?night=yesterday&money=lots&sort=random").text
    assert "is not a date" in wrong and "is not an amount" in wrong and "is not one of" in wrong


def test_the_nights_page_has_a_row_per_gaming_day(app, desked: Desked) -> None:
    page = client_as(app, "rita").get("/").text
    days = archive_rows(desked, "SELECT DISTINCT gaming_day FROM coverage_current")
    for (day,) in days:
        assert f"/queue?night={day}" in page


def test_a_finding_shows_its_evidence_history_and_reviews(app, desked: Desked) -> None:
    client = client_as(app, "rita")
    (finding,) = archive_rows(
        desked, "SELECT finding_id FROM findings_current WHERE round_id IS NOT NULL LIMIT 1"
    )[0]
    page = client.get(f"/findings/{finding}").text
    assert "Evidence:" in page and 'class="card' in page
    assert "History across runs" in page and "in force" in page
    assert "Your role (regulator) reads" in page and 'action="/reviews"' not in page
    assert client.get("/findings/0123456789abcdef0123").status_code == 404
    assert client.get("/findings/not-an-id").status_code == 404


def test_a_review_in_the_browser_names_the_logged_in_reviewer(app, desked: Desked) -> None:
    client = client_as(app, "alice")
    (finding,) = archive_rows(desked, "SELECT finding_id FROM findings_current LIMIT 1")[0]
    before = len(read_reviews(desked.archive))
    form = client.get(f"/findings/{finding}").text
    answer = client.post(
        "/reviews",
        data={"csrf": csrf_of(form), "finding_id": finding, "status": "explained",
              "note": "short pay corrected at the cage", "by": "someone else",
              "back": f"/findings/{finding}"},
    )  # fmt: skip
    assert answer.status_code == 200 and "Recorded 1 review" in answer.text
    records = read_reviews(desked.archive)
    assert len(records) == before + 1
    assert records[-1]["by"] == "alice" and records[-1]["finding_id"] == finding
    assert cli("review", desked.archive, "--verify").exit_code == 0


def test_a_review_without_a_note_or_with_a_bad_status_writes_nothing(app, desked: Desked) -> None:
    client = client_as(app, "alice")
    (finding,) = archive_rows(desked, "SELECT finding_id FROM findings_current LIMIT 1")[0]
    csrf = session_csrf(client)
    before = len(read_reviews(desked.archive))
    for data in (
        {"status": "explained", "note": "  "},
        {"status": "approved", "note": "fine"},
        {"status": "explained", "note": "fine", "finding_id": "0123456789abcdef0123"},
    ):
        answer = client.post("/reviews", data={"csrf": csrf, "finding_id": finding, **data})
        assert answer.status_code == 400
    assert len(read_reviews(desked.archive)) == before


def test_a_batch_of_ticked_findings_is_one_append(app, desked: Desked) -> None:
    client = client_as(app, "bob")
    page = client.get("/queue").text
    ticked = queue_ids(page)[:3]
    before = len(read_reviews(desked.archive))
    answer = client.post(
        "/reviews",
        data={"csrf": csrf_of(page), "finding_id": ticked, "status": "dismissed",
              "note": "dealer retrained", "back": "/queue"},
    )  # fmt: skip
    assert answer.status_code == 200 and "Recorded 3 reviews" in answer.text
    records = read_reviews(desked.archive)[before:]
    assert [r["finding_id"] for r in records] == ticked
    assert {r["by"] for r in records} == {"bob"} and len({r["at"] for r in records}) == 1


def test_all_matching_a_filter_is_reviewed_and_a_changed_count_is_refused(app, desked) -> None:
    client = client_as(app, "bob")
    rule = archive_rows(
        desked,
        "SELECT rule FROM findings_current GROUP BY rule HAVING count(*) > 1 "
        "ORDER BY count(*) LIMIT 1",
    )[0][0]
    page = client.get(f"/queue?rule={rule}").text
    total = int(re.search(r'name="matching" value="(\d+)"', page)[1])
    data = {"csrf": csrf_of(page), "all_matching": "1", "filter_rule": rule,
            "status": "escalated", "note": "surveillance to pull the tape",
            "back": "/queue"}  # fmt: skip
    stale = client.post("/reviews", data={**data, "matching": str(total + 1)})
    assert stale.status_code == 409
    before = len(read_reviews(desked.archive))
    done = client.post("/reviews", data={**data, "matching": str(total)})
    assert done.status_code == 200 and f"Recorded {total:,} review" in done.text
    assert len(read_reviews(desked.archive)) == before + total
    assert "0 findings" in client.get(f"/queue?rule={rule}").text


def test_investigations_are_paged_and_each_night_has_its_report(app, desked: Desked) -> None:
    client = client_as(app, "rita")
    dealer, count = archive_rows(
        desked,
        "SELECT dealer_id, count(*) FROM findings_current WHERE dealer_id IS NOT NULL "
        "GROUP BY 1 ORDER BY 2 DESC LIMIT 1",
    )[0]
    page = client.get(f"/investigate?kind=dealer&id={dealer}").text
    assert f"{count:,} finding" in page
    night = re.search(r'href="(/investigate/night\?[^"]+)"', page)[1].replace("&amp;", "&")
    report = client.get(night)
    assert report.status_code == 200 and "back to the investigation" in report.text
    assert client.get("/investigate?kind=croupier&id=x").status_code == 200  # the form again
    assert client.get("/investigate/night?kind=dealer&id=x").status_code == 400


def test_the_period_report_and_alerts(app, desked: Desked) -> None:
    client = client_as(app, "rita")
    first, last = archive_rows(
        desked, "SELECT min(gaming_day), max(gaming_day) FROM coverage_current"
    )[0]
    report = client.get(f"/period?from={first}&to={last}")
    assert report.status_code == 200 and "back to the periods" in report.text
    assert client.get(f"/period?from={last}&to={first}").status_code == 400
    assert client.get("/alerts").status_code == 200


# ---- the SQL console ---------------------------------------------------------------------


def test_the_regulator_queries_pages_and_downloads(app, desked: Desked) -> None:
    client = client_as(app, "rita")
    csrf = csrf_of(client.get("/sql").text)
    counted = "SELECT i FROM range(250) t(i) ORDER BY i"
    first = client.post("/sql", data={"csrf": csrf, "q": counted})
    assert first.status_code == 200 and "more after" in first.text and "<td>99</td>" in first.text
    third = client.post("/sql", data={"csrf": csrf, "q": counted, "page": "3"})
    assert "Rows 201 to 250." in third.text and "<td>249</td>" in third.text
    sql = "SELECT finding_id FROM findings_current ORDER BY finding_id"
    csv = client.post("/sql/download", data={"csrf": csrf, "q": sql, "format": "csv"})
    (total,) = archive_rows(desked, "SELECT count(*) FROM findings_current")[0]
    assert csv.status_code == 200 and csv.text.count("\n") == total + 1
    parquet = client.post("/sql/download", data={"csrf": csrf, "q": sql, "format": "parquet"})
    assert pq.read_table(io.BytesIO(parquet.content)).num_rows == total


def test_the_console_refuses_writes_files_and_other_roles(app, desked: Desked, tmp_path) -> None:
    client = client_as(app, "rita")
    csrf = csrf_of(client.get("/sql").text)
    for sql in (
        "COPY (SELECT 1) TO '/tmp/x.csv'",
        "ATTACH '/tmp/other.duckdb'",
        "SELECT * FROM read_text('/etc/passwd')",
        "SELECT 1; SELECT 2",
    ):
        refused = client.post("/sql", data={"csrf": csrf, "q": sql})
        assert refused.status_code == 400, sql
    reviewer = client_as(app, "alice")
    assert reviewer.get("/sql").status_code == 403
    posted = reviewer.post("/sql", data={"csrf": session_csrf(reviewer), "q": "SELECT 1"})
    assert posted.status_code == 403


# ---- live: a run added while the desk runs ----------------------------------------------


def test_a_run_added_while_serving_shows_without_a_restart(app, desked: Desked) -> None:
    client = client_as(app, "rita")
    new_night = desked.nights[desked.archived]
    assert f"night={new_night.name}" not in client.get("/").text
    add_night(desked.archive, new_night, desked.root / "out" / new_night.name)
    assert f"night={new_night.name}" in client.get("/").text
    assert new_night.name in client.get(f"/queue?night={new_night.name}").text


def test_the_users_file_is_never_world_readable(desked: Desked) -> None:
    assert os.stat(desked.users).st_mode & 0o077 == 0
    assert json.loads(desked.users.read_text())["users"]["alice"]["role"] == "reviewer"
