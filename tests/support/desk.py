"""What the review desk's tests share: an archive of simulated nights, a users file, a
logged-in client (in process), and a real server on 127.0.0.1 on a free port."""

from __future__ import annotations

import re
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from auditor.archive.store import add_run
from auditor.desk.users import add_user
from auditor.pipeline import run_audit
from tests.support.cli import cli

PASSWORD = "correct horse battery staple"
USERS = {"alice": "reviewer", "bob": "reviewer", "rita": "regulator", "adam": "admin"}
CSRF = re.compile(r'name="csrf" value="([^"]+)"')


@dataclass(frozen=True)
class Desked:
    root: Path
    archive: Path
    users: Path
    nights: list[Path]  # every simulated night, oldest first
    archived: int  # how many of them are in the archive at the start


def build(root: Path, nights: int = 3, archived: int = 2, rounds: int = 300) -> Desked:
    """`nights` simulated nights with faults, the first `archived` audited into an archive;
    a users file with a user of each role."""
    sim, archive = root / "sim", root / "archive"
    dealt = cli("simulate", "--out", sim, "--nights", nights, "--rounds", rounds,
                "--seed", 5, "--faults", 0.05)  # fmt: skip
    assert dealt.exit_code == 0, dealt.output
    days = sorted(p for p in sim.iterdir() if p.is_dir())
    for night in days[:archived]:
        add_night(archive, night, root / "out" / night.name)
    users = root / "users.json"
    for name, role in USERS.items():
        add_user(users, name, role, PASSWORD)
    return Desked(root, archive, users, days, archived)


def add_night(archive: Path, night: Path, out: Path) -> None:
    run_audit(night, out, archive=archive)
    add_run(archive, out)


def csrf_of(html: str) -> str:
    found = CSRF.search(html)
    assert found, html[:500]
    return found[1]


def log_in(client, name: str, password: str = PASSWORD):
    """Log `client` in as `name`; returns the login's response (a redirect when it worked)."""
    form = client.get("/login")
    return client.post(
        "/login",
        data={"csrf": csrf_of(form.text), "name": name, "password": password, "next": "/"},
        follow_redirects=False,
    )


def session_csrf(client) -> str:
    return csrf_of(client.get("/queue").text)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def running(app) -> Iterator[str]:
    """`app` served by uvicorn on 127.0.0.1 in a thread; yields its base URL."""
    import uvicorn

    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=20)
