"""The review desk attacked: every page and POST without a session, POSTs without their
session's CSRF token, a regulator's review, forged and expired cookies, path traversal
and SQL injection through every parameter, the security headers; then a real server on
127.0.0.1 under 200 concurrent requests while two reviewers write (nothing lost, the
chain intact), and `auditor serve` itself (the address printed, Ctrl-C, the refusals)."""

from __future__ import annotations

import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import duckdb
import httpx2 as httpx
import pytest
from starlette.testclient import TestClient

from auditor.archive.ledger import read_reviews
from auditor.desk.app import create_app
from tests.support.cli import AUDITOR
from tests.support.desk import (
    PASSWORD,
    Desked,
    build,
    csrf_of,
    free_port,
    log_in,
    running,
    session_csrf,
)

PAGES = ["/", "/queue", "/queue?status=any&page=2", "/investigate",
         "/investigate?kind=dealer&id=D1",
         "/investigate/night?kind=dealer&id=D1&day=2026-11-24", "/period",
         "/period?from=2026-11-24&to=2026-11-25", "/alerts", "/sql",
         "/findings/0123456789abcdef0123"]  # fmt: skip
POSTS = ["/reviews", "/sql", "/sql/download", "/logout"]
INJECTIONS = ["' OR 1=1 --", "x'); DROP TABLE findings; --", "../../../../etc/passwd",
              "%00", "<script>alert(1)</script>", "1 UNION SELECT * FROM reviews"]  # fmt: skip


@pytest.fixture(scope="module")
def desked(tmp_path_factory) -> Desked:
    return build(tmp_path_factory.mktemp("attacks"), nights=2, archived=2, rounds=250)


@pytest.fixture(scope="module")
def app(desked: Desked):
    return create_app(desked.archive, desked.users)


@pytest.fixture(scope="module")
def rita(app) -> TestClient:
    """A regulator's session, logged in once for the module's read-only requests: each log
    in verifies an Argon2 hash, 70 ms by design."""
    return client_as(app, "rita")


def client_as(app, name: str | None) -> TestClient:
    client = TestClient(app)
    if name is not None:
        assert log_in(client, name).status_code == 303
    return client


def ledger_length(desked: Desked) -> int:
    return len(read_reviews(desked.archive))


def a_finding(desked: Desked) -> str:
    with duckdb.connect(str(desked.archive / "archive.duckdb"), read_only=True) as con:
        return con.execute("SELECT min(finding_id) FROM findings_current").fetchone()[0]


# ---- without a session -------------------------------------------------------------------


@pytest.mark.parametrize("path", PAGES)
def test_every_page_without_a_session_goes_to_the_login(app, path: str) -> None:
    answer = TestClient(app).get(path, follow_redirects=False)
    assert answer.status_code == 303 and answer.headers["location"].startswith("/login?next=")


@pytest.mark.parametrize("path", POSTS)
def test_every_post_without_a_session_is_refused_and_writes_nothing(app, desked, path) -> None:
    before = ledger_length(desked)
    data = {"finding_id": a_finding(desked), "status": "dismissed", "note": "x", "q": "SELECT 1",
            "format": "csv", "csrf": "anything"}  # fmt: skip
    answer = TestClient(app).post(path, data=data, follow_redirects=False)
    assert answer.status_code == 403
    assert ledger_length(desked) == before


def test_the_login_page_and_static_files_answer_without_a_session(app) -> None:
    client = TestClient(app)
    assert client.get("/login").status_code == 200
    assert client.get("/static/report.css").status_code == 200
    assert client.get("/static/desk.js").headers["content-type"].startswith("text/javascript")


# ---- CSRF, roles, cookies --------------------------------------------------------------------


def test_a_post_without_its_sessions_token_is_refused(app, desked: Desked) -> None:
    alice, bob = client_as(app, "alice"), client_as(app, "bob")
    theirs = session_csrf(bob)
    before = ledger_length(desked)
    review = {"finding_id": a_finding(desked), "status": "dismissed", "note": "forged"}
    assert alice.post("/reviews", data=review).status_code == 403
    assert alice.post("/reviews", data={**review, "csrf": theirs}).status_code == 403
    assert alice.post("/reviews", data={**review, "csrf": ""}).status_code == 403
    assert alice.post("/logout", data={"csrf": theirs}).status_code == 403
    assert ledger_length(desked) == before
    mine = alice.post("/reviews", data={**review, "csrf": session_csrf(alice), "note": "mine"})
    assert mine.status_code == 200 and ledger_length(desked) == before + 1


@pytest.mark.parametrize("name", ["rita", "adam"])
def test_a_regulator_or_admin_posting_a_review_is_refused(app, desked: Desked, name) -> None:
    client = client_as(app, name)
    before = ledger_length(desked)
    answer = client.post(
        "/reviews",
        data={"csrf": session_csrf(client), "finding_id": a_finding(desked),
              "status": "dismissed", "note": "not mine to record"},
    )  # fmt: skip
    assert answer.status_code == 403 and ledger_length(desked) == before


# Headers a browser sends with a form posted from a page of another site (or one that hides
# its origin), and from the desk's own page (the test client's host is `testserver`).
FOREIGN_PAGES = [{"origin": "https://evil.example"}, {"origin": "null"},
                 {"origin": "http://testserver.evil.example"},
                 {"origin": "http://testserver:8080"}, {"origin": "https://testserver:80"},
                 {"origin": "http://testserver/x"}, {"origin": "not an origin"},
                 {"sec-fetch-site": "cross-site"}, {"sec-fetch-site": "same-site"},
                 {"origin": "null", "sec-fetch-site": "cross-site"},
                 {"origin": "https://evil.example", "sec-fetch-site": "same-origin"}]  # fmt: skip
OWN_PAGES = [{"origin": "http://testserver"}, {"origin": "HTTP://TestServer:80"},
             {"origin": "http://testserver", "sec-fetch-site": "same-origin"},
             {"sec-fetch-site": "same-origin"}, {"origin": "null", "sec-fetch-site": "same-origin"},
             {}]  # fmt: skip


@dataclass(frozen=True)
class Reviewed:
    client: TestClient
    post: httpx.Response


def review_from(app, desked: Desked, headers: dict[str, str]) -> Reviewed:
    """A reviewer's review, with her session's token, posted with `headers` (the note
    names them: the same review twice would be no new review)."""
    alice = client_as(app, "alice")
    review = {"csrf": session_csrf(alice), "finding_id": a_finding(desked),
              "status": "dismissed", "note": f"posted with {headers}"}  # fmt: skip
    return Reviewed(alice, alice.post("/reviews", data=review, headers=headers))


@pytest.mark.parametrize("headers", FOREIGN_PAGES)
def test_a_post_from_another_sites_page_is_refused_with_its_session_and_token(
    app, desked: Desked, headers: dict[str, str]
) -> None:
    before = ledger_length(desked)
    answer = review_from(app, desked, headers).post
    assert answer.status_code == 403 and "not sent from the desk" in answer.text
    assert answer.headers["x-frame-options"] == "DENY"  # the refusal has the headers too
    assert ledger_length(desked) == before
    # The login too, with its own valid token.
    client = TestClient(app)
    token = csrf_of(client.get("/login").text)
    login = {"csrf": token, "name": "alice", "password": PASSWORD, "next": "/"}
    refused = client.post("/login", data=login, headers=headers, follow_redirects=False)
    assert refused.status_code == 403 and "desk_session" not in refused.cookies


@pytest.mark.parametrize("headers", OWN_PAGES)
def test_a_post_from_the_desks_own_page_or_no_page_is_recorded(
    app, desked: Desked, headers: dict[str, str]
) -> None:
    before = ledger_length(desked)
    reviewed = review_from(app, desked, headers)
    assert reviewed.post.status_code == 200
    assert ledger_length(desked) == before + 1
    # Reading is never refused by its origin: a link from another site opens the desk.
    linked = {"origin": "https://evil.example", "sec-fetch-site": "cross-site"}
    assert reviewed.client.get("/queue", headers=linked).status_code == 200


def test_a_forged_cookie_is_no_session(app) -> None:
    real = log_in(TestClient(app), "alice").cookies["desk_session"]
    payload, _, signature = real.rpartition(".")
    for forged in ("alice", real + "x", f"{payload}.{signature[::-1]}", "e30.abc.def"):
        client = TestClient(app, cookies={"desk_session": forged})
        assert client.get("/queue", follow_redirects=False).status_code == 303
    client = TestClient(app, cookies={"desk_session": real})
    assert client.get("/queue", follow_redirects=False).status_code == 200


def test_an_expired_session_is_no_session(desked: Desked) -> None:
    short = create_app(desked.archive, desked.users, session_seconds=1)
    client = client_as(short, "alice")
    assert client.get("/queue", follow_redirects=False).status_code == 200
    time.sleep(2.1)
    assert client.get("/queue", follow_redirects=False).status_code == 303


def test_after_login_the_desk_goes_only_to_its_own_paths(app) -> None:
    for target, expected in (("//evil.example/x", "/"), ("https://evil.example", "/"),
                             ("/\\evil.example", "/"), ("/queue?x=1", "/queue?x=1")):  # fmt: skip
        client = TestClient(app)
        form = client.get("/login")
        answer = client.post(
            "/login",
            data={"csrf": csrf_of(form.text), "name": "rita", "password": PASSWORD,
                  "next": target},
            follow_redirects=False,
        )  # fmt: skip
        assert answer.headers["location"] == expected


# ---- traversal and injection ------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    ["/findings/..%2F..%2F..%2Fetc%2Fpasswd", "/findings/../../etc/passwd",
     "/static/..%2F..%2Fusers.json", "/static/../reviews.jsonl", "/static/users.json",
     "/runs/x/set/findings.parquet", "/archive.duckdb", "/reviews.jsonl"],
)  # fmt: skip
def test_no_url_reaches_a_file(rita: TestClient, path: str) -> None:
    answer = rita.get(path)
    assert answer.status_code in (404, 405)
    assert "root:" not in answer.text and "argon2" not in answer.text


@pytest.mark.parametrize("value", INJECTIONS)
@pytest.mark.parametrize(
    "name", ["night", "property", "table", "dealer", "patron", "rule", "severity", "status",
             "money", "sort", "page"],
)  # fmt: skip
def test_queue_parameters_are_values_never_sql(rita: TestClient, name: str, value: str) -> None:
    answer = rita.get("/queue", params={"status": "any", name: value})
    assert answer.status_code == 200
    assert "<script>alert(1)</script>" not in answer.text
    if name in ("property", "table", "dealer", "patron", "rule", "severity"):
        assert "0 findings in force match" in answer.text


@pytest.mark.parametrize("value", INJECTIONS)
def test_investigation_and_period_parameters_are_values_never_sql(
    rita: TestClient, value: str
) -> None:
    for kind in ("patron", "dealer", "table", "round"):
        answer = rita.get("/investigate", params={"kind": kind, "id": value})
        assert answer.status_code == 200 and "0 findings in force" in answer.text
        assert "<script>alert(1)</script>" not in answer.text
    night = rita.get("/investigate/night", params={"kind": "round", "id": value})
    assert night.status_code == 404
    for params in ({"from": value, "to": value}, {"kind": value, "id": "x"}):
        assert rita.get("/period", params=params).status_code == 200
        assert rita.get("/alerts", params=params).status_code == 200


def test_batch_filters_are_values_never_sql(app, desked: Desked) -> None:
    client = client_as(app, "alice")
    before = ledger_length(desked)
    answer = client.post(
        "/reviews",
        data={"csrf": session_csrf(client), "all_matching": "1", "filter_rule": "' OR 1=1 --",
              "filter_status": "any", "matching": "0", "status": "dismissed", "note": "x"},
    )  # fmt: skip
    assert answer.status_code in (200, 400)  # an empty batch writes nothing
    assert ledger_length(desked) == before


# ---- headers ------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/login", "/queue", "/nowhere", "/static/desk.css"])
def test_every_response_carries_the_security_headers(app, path: str) -> None:
    answer = TestClient(app).get(path, follow_redirects=False)
    policy = answer.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "unsafe-inline'; img" in policy
    assert "script-src 'self';" in policy  # no inline script, no eval
    assert "frame-ancestors 'none'" in policy and "default-src 'none'" in policy
    assert answer.headers["x-frame-options"] == "DENY"
    assert answer.headers["referrer-policy"] == "same-origin"
    assert answer.headers["x-content-type-options"] == "nosniff"


# ---- a real server: 200 requests while two reviewers write --------------------------------------


@pytest.mark.e2e
def test_a_real_server_refuses_a_login_posted_from_another_site(app) -> None:
    with running(app) as base, httpx.Client(base_url=base) as client:

        def log_in_from(origin: str) -> httpx.Response:
            token = csrf_of(client.get("/login").text)
            form = {"csrf": token, "name": "rita", "password": PASSWORD, "next": "/"}
            return client.post("/login", data=form, headers={"origin": origin})

        assert log_in_from("http://evil.example").status_code == 403
        # The Host header uvicorn sees is the address itself.
        assert log_in_from(base).status_code == 303


@pytest.mark.e2e
def test_200_concurrent_requests_while_two_reviewers_write(app, desked: Desked) -> None:
    with running(app) as base:
        readers = []
        for name in ("rita", "adam"):
            reader = httpx.Client(base_url=base, follow_redirects=False, timeout=60)
            assert log_in(reader, name).status_code == 303
            readers.append(reader)
        writers = {}
        for name in ("alice", "bob"):
            writer = httpx.Client(base_url=base, follow_redirects=False, timeout=60)
            assert log_in(writer, name).status_code == 303
            writers[name] = (writer, session_csrf(writer))
        with duckdb.connect(str(desked.archive / "archive.duckdb"), read_only=True) as con:
            ids = [r[0] for r in con.execute("SELECT finding_id FROM findings_current").fetchall()]
        before = ledger_length(desked)
        rounds = 8

        def write(name: str) -> list[int]:
            writer, csrf = writers[name]
            return [
                writer.post(
                    "/reviews",
                    data={
                        "csrf": csrf,
                        "finding_id": ids[i % len(ids)],
                        "status": "explained",
                        "note": f"{name} {i}",
                    },
                ).status_code
                for i in range(rounds)
            ]

        def read(i: int) -> int:
            paths = [
                "/",
                "/queue",
                "/queue?status=any&sort=newest",
                f"/findings/{ids[i % len(ids)]}",
            ]
            return readers[i % 2].get(paths[i % len(paths)]).status_code

        with ThreadPoolExecutor(max_workers=32) as pool:
            written = [pool.submit(write, name) for name in writers]
            answers = list(pool.map(read, range(200)))
            codes = [c for future in written for c in future.result()]
        assert answers.count(200) == 200, sorted(set(answers))
        assert codes == [303] * (2 * rounds)
        records = read_reviews(desked.archive)[before:]
        assert sorted(r["note"] for r in records) == sorted(
            f"{name} {i}" for name in writers for i in range(rounds)
        )
        assert {r["by"] for r in records} == {"alice", "bob"}
    verified = subprocess.run(
        [AUDITOR, "review", str(desked.archive), "--verify"], capture_output=True, text=True
    )
    assert verified.returncode == 0, verified.stderr


# ---- auditor serve ----------------------------------------------------------------------


@pytest.mark.e2e
def test_serve_prints_its_address_answers_and_stops_on_ctrl_c(desked: Desked) -> None:
    port = free_port()
    server = subprocess.Popen(
        [AUDITOR, "serve", str(desked.archive), "--users", str(desked.users), "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = server.stdout.readline()
        assert f"http://127.0.0.1:{port}/" in line
        answer = httpx.get(f"http://127.0.0.1:{port}/queue", follow_redirects=False, timeout=30)
        assert answer.status_code == 303
        server.send_signal(signal.SIGINT)
        assert server.wait(timeout=30) == 130
        assert "stopped" in server.stderr.read()
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


@pytest.mark.e2e
@pytest.mark.parametrize(
    "options",
    [["--host", "0.0.0.0"], ["--host", "192.0.2.1"], ["--tls-cert", "missing.pem"],
     ["--users", "no-such-users.json"]],
)  # fmt: skip
def test_serve_refuses_an_open_address_without_tls_and_bad_files(desked, options, tmp_path):
    base = [AUDITOR, "serve", str(desked.archive), "--port", str(free_port())]
    if "--users" not in options:
        base += ["--users", str(desked.users)]
    refused = subprocess.run([*base, *options], capture_output=True, text=True, timeout=60,
                             cwd=tmp_path)  # fmt: skip
    assert refused.returncode == 2, refused.stderr
    assert refused.stdout == ""


@pytest.mark.e2e
def test_serve_refuses_a_folder_that_is_not_an_archive(desked: Desked, tmp_path: Path) -> None:
    refused = subprocess.run(
        [AUDITOR, "serve", str(tmp_path), "--users", str(desked.users), "--port", "0"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert refused.returncode == 2 and refused.stdout == ""


@pytest.mark.e2e
def test_serve_over_tls_answers_https_with_secure_cookies(desked: Desked, tmp_path: Path) -> None:
    """The address another machine would reach: served over TLS with a certificate a
    client checks, and the cookies marked Secure so they never cross plain HTTP."""
    import ssl

    import trustme

    authority = trustme.CA()
    certificate = authority.issue_cert("127.0.0.1")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    certificate.cert_chain_pems[0].write_to_path(str(cert))
    certificate.private_key_pem.write_to_path(str(key))
    port = free_port()
    server = subprocess.Popen(
        [AUDITOR, "serve", str(desked.archive), "--users", str(desked.users), "--port",
         str(port), "--tls-cert", str(cert), "--tls-key", str(key)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert f"https://127.0.0.1:{port}/" in server.stdout.readline()
        trusted = ssl.create_default_context()
        authority.configure_trust(trusted)
        login = httpx.get(f"https://127.0.0.1:{port}/login", verify=trusted, timeout=30)
        assert login.status_code == 200
        cookies = login.headers.get_list("set-cookie")
        assert cookies and all("secure" in c.lower() for c in cookies), cookies
        # Plain HTTP on the TLS port is no conversation, and an unknown authority is refused.
        with pytest.raises(httpx.HTTPError):
            httpx.get(f"http://127.0.0.1:{port}/login", timeout=30)
        with pytest.raises(httpx.HTTPError):
            httpx.get(f"https://127.0.0.1:{port}/login", timeout=30)
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=30)
