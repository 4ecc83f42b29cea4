"""What every layer of the suite shares: the hypothesis profiles, the fixtures any test
may ask for (a hand-built dataset, an FTP server, a browser), what keeps the fast tier
fast (a process started unmarked fails), and how the suite is spread over pytest-xdist's
workers (the groups and the order below)."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from pyftpdlib.authorizers import DummyAuthorizer
from pyftpdlib.handlers import FTPHandler
from pyftpdlib.servers import ThreadedFTPServer

from tests.support.archives import Archived, across_nights, period_nights
from tests.support.browser import chromium_executable
from tests.support.datasets import DatasetWriter, dataset_writer
from tests.support.paths import SAMPLE

# A bounded number of examples per property in CI; `HYPOTHESIS_PROFILE=hostile` many more.
settings.register_profile(
    "ci", max_examples=40, deadline=None, suppress_health_check=list(HealthCheck)
)
settings.register_profile(
    "hostile", max_examples=1000, deadline=None, suppress_health_check=list(HealthCheck)
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def write_dataset(tmp_path: Path) -> DatasetWriter:
    """Write a dataset folder; `frames` replaces tables, `rows` edits the base rows."""
    return dataset_writer(tmp_path)


@pytest.fixture
def ftp_dataset():
    """sample_data served read-only by an FTP server on 127.0.0.1: a dataset on another
    file system (fsspec's ftp://), which every process reaches as it would a remote one."""
    authorizer = DummyAuthorizer()
    authorizer.add_anonymous(str(SAMPLE))
    handler = type("Handler", (FTPHandler,), {"authorizer": authorizer})
    server = ThreadedFTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"timeout": 0.1}, daemon=True)
    thread.start()
    try:
        yield f"ftp://127.0.0.1:{server.socket.getsockname()[1]}/"
    finally:
        server.close_all()
        thread.join()


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium driven by playwright, one per test module."""
    executable = chromium_executable()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        if os.environ.get("CI"):
            raise
        pytest.skip("playwright is not installed (pip install '.[test]')")
    with sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        yield launched
        launched.close()


@pytest.fixture(scope="session")
def period_archive(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The period report's archive of five nights (tests/support/archives.py), read by the
    report's tests in process and in the browser, never written."""
    return period_nights(tmp_path_factory.mktemp("period"))


@pytest.fixture(scope="session")
def across_archive(tmp_path_factory: pytest.TempPathFactory) -> Archived:
    """The archive across five nights (tests/support/archives.py), read by the reports
    across nights in process and in the browser, never written."""
    return across_nights(tmp_path_factory.mktemp("across"))


# ---- the fast tier ------------------------------------------------------------------------------
#
# `pytest -m "not e2e"` runs in minutes because its tests run in this process: each start of
# the auditor, Python or DuckDB as a process of its own costs a second of imports before it
# does anything. A test that needs one (a kill, a signal, a terminal, the installed script)
# is end to end and marked so where it stands; one that starts such a process unmarked, or
# forks a terminal to run one at, fails here, saying so, before the process starts.
OWN_PROGRAMS = ("auditor", "duckdb", "python", "python3", Path(sys.executable).name)
_running_unmarked: list[pytest.Item] = []  # the test under way, when not marked e2e


def started_program(args: Any) -> str:
    """The name of the program a `subprocess.Popen(args)` starts."""
    if isinstance(args, str | bytes):
        first = args.split()[0] if args.split() else ""
    elif isinstance(args, os.PathLike):
        first = args
    else:
        first = next(iter(args), "")
    return Path(os.fsdecode(first)).name if first else ""


def _unmarked_refusal(doing: str) -> AssertionError:
    return AssertionError(
        f"{_running_unmarked[-1].nodeid} {doing}: mark the test `@pytest.mark.e2e` (the fast "
        "tier runs in process)"
    )


def _refusing_own_programs(start: Callable[..., None]) -> Callable[..., None]:
    def checked(self: subprocess.Popen, args: Any, *more: Any, **options: Any) -> None:
        if _running_unmarked and started_program(args) in OWN_PROGRAMS:
            raise _unmarked_refusal(f"starts {started_program(args)} as a process of its own")
        start(self, args, *more, **options)

    return checked


def _refusing_terminals(fork: Callable[[], tuple[int, int]]) -> Callable[[], tuple[int, int]]:
    # A pseudo-terminal is forked to run a program at it, one exec away: refused unmarked.
    def checked() -> tuple[int, int]:
        if _running_unmarked:
            raise _unmarked_refusal("forks a terminal to run a program at it")
        return fork()

    return checked


def pytest_configure(config: pytest.Config) -> None:
    subprocess.Popen.__init__ = _refusing_own_programs(subprocess.Popen.__init__)
    pty.fork = _refusing_terminals(pty.fork)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    unmarked = item.get_closest_marker("e2e") is None
    if unmarked:
        _running_unmarked.append(item)
    try:
        yield
    finally:
        if unmarked:
            _running_unmarked.remove(item)


# ---- spreading the suite over the workers ------------------------------------------------------
#
# pyproject runs the suite with `--dist loadgroup`: pytest-xdist gives every test of one
# `xdist_group` to one worker. The groups are made here, never written in a test file:
#
# - a test file is a group of its own, so that its module fixtures are built once, as
#   `--dist loadfile` would have it (left without a group, loadgroup spreads a file's tests
#   one by one over the workers, and each worker builds the module fixtures they ask for);
# - files that share a session fixture of the suite's own (the archive's month, the
#   planted month, the surveilled nights: a minute of audits each) are one group, so that
#   the fixture is built once a run and not once a worker.
#
# The groups that take a minute or more start first (`--no-loadscope-reorder` keeps this
# order, where xdist would otherwise start the groups with the most tests first): a long
# group started last would leave the other worker idle at the end.
LONG_GROUPS = (
    "tests/integration/test_witness_differential.py",  # every witness on whole nights
    "planted_month",
    "tests/integration/test_surveillance.py",
    "archive_month",
    "tests/integration/test_reference_audit.py",
    "tests/integration/test_hostile_input.py",
    "tests/e2e/test_dask_engine.py",
    "tests/integration/test_simulated_audit.py",
    "tests/integration/test_rule_cases.py",
)


def shared_session_fixtures(item: pytest.Item) -> set[str]:
    """The session fixtures of the suite's own conftest files that `item` uses, directly
    or through other fixtures (pytest's and plugins' own session fixtures left out)."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return set()
    return {
        name
        for name, definitions in info.name2fixturedefs.items()
        if any(d.scope == "session" and d.baseid.startswith("tests") for d in definitions)
    }


def group_names(items: list[pytest.Item]) -> dict[str, str]:
    """Each test file's group: the file itself, or the session fixtures its group shares
    (files sharing any fixture are one group, however they chain)."""
    uses: dict[str, set[str]] = {}
    for item in items:
        uses.setdefault(item.nodeid.split("::")[0], set()).update(shared_session_fixtures(item))
    groups: list[tuple[set[str], set[str]]] = []  # (files, fixtures)
    for file, fixtures in uses.items():
        joined = [g for g in groups if g[1] & fixtures]
        files, shared = {file}, set(fixtures)
        for group in joined:
            groups.remove(group)
            files |= group[0]
            shared |= group[1]
        groups.append((files, shared))
    return {
        file: "+".join(sorted(shared)) if shared else file
        for files, shared in groups
        for file in files
    }


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's worker reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    names = group_names(items)
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(names[item.nodeid.split("::")[0]]))

    def started(item: pytest.Item) -> int:
        group = names[item.nodeid.split("::")[0]]
        return LONG_GROUPS.index(group) if group in LONG_GROUPS else len(LONG_GROUPS)

    items.sort(key=started)  # stable: each file's own order is kept
