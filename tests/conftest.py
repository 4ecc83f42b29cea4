"""Fixtures: a small hand-built dataset in exact contract types, and ways to break it."""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import polars as pl
import pytest
from pyftpdlib.authorizers import DummyAuthorizer
from pyftpdlib.handlers import FTPHandler
from pyftpdlib.servers import ThreadedFTPServer

from auditor.contract import TABLES

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"
T0 = datetime(2026, 11, 24, 18, 0, tzinfo=UTC)


def contract_frame(table: str, rows: list[dict]) -> pl.DataFrame:
    schema = {c: t for c, (t, _) in TABLES[table].items()}
    return pl.DataFrame([{c: r.get(c) for c in schema} for r in rows], schema=schema)


def base_rows() -> dict[str, list[dict]]:
    """One ma-baccarat table, one shoe, two rounds dealt by the rules, three wagers."""
    table = {
        "table_id": "T1",
        "property_id": "P1",
        "ruleset": "ma-baccarat",
        "effective_from": T0 - timedelta(days=30),
        "seats": 12,
        "decks": 8,
        "automated_shuffler": False,
        "ez_baccarat": False,
        "tie_pays": 8,
        "commission_percent": 5,
        "commission_rounding": True,
        "commission_collection": "at_payout",
        "dragon_bonus_paytable": None,
        "house_money": False,
        "house_money_rollover_percent": 100,
        "royal9_paytable": None,
        "free_hands": False,
    }
    shoe = {
        "shoe_id": "S1",
        "table_id": "T1",
        "opened_at": T0,
        "decks": 8,
        "card_sequence": None,
        "cut_index": 100,
        "cover_from_back": 16,
        "burn_card": "5S",
        "burn_count": 5,
    }
    round_common = {
        "shoe_id": "S1",
        "table_id": "T1",
        "kind": "regular",
        "ez_event": None,
        "cover_card_drawn": False,
        "discarded_after": None,
        "dealer_id": "D7",
        "curator_seat": 3,
        "banker_seat": None,
        "banker_bid": None,
    }
    rounds = [
        # Player natural 9 against Banker 5: no more cards (§11(a)).
        {
            **round_common,
            "round_id": "R1",
            "round_no": 1,
            "dealt_at": T0 + timedelta(minutes=1),
            "no_more_bets_at": T0 + timedelta(minutes=1) - timedelta(seconds=5),
            "player_cards": ["9H", "KS"],
            "banker_cards": ["2C", "3D"],
            "player_total": 9,
            "banker_total": 5,
            "outcome": "player",
        },
        # Player 5 draws a 4 (9); Banker 7 stands (§11(c)(2)(ii)).
        {
            **round_common,
            "round_id": "R2",
            "round_no": 2,
            "curator_seat": 4,
            "dealt_at": T0 + timedelta(minutes=2),
            "no_more_bets_at": T0 + timedelta(minutes=2) - timedelta(seconds=5),
            "player_cards": ["2S", "3H", "4D"],
            "banker_cards": ["KD", "7C"],
            "player_total": 9,
            "banker_total": 7,
            "outcome": "player",
        },
    ]
    wager_common = {"patron_id": "PAT1", "call": None, "rollover": None, "award": None}
    wagers = [
        {
            **wager_common,
            "wager_id": "W1",
            "round_id": "R1",
            "seat": 1,
            "bet": "banker",
            "amount": Decimal("37.50"),
            "placed_at": T0 + timedelta(seconds=30),
            "result": "lose",
            "payout": Decimal("0.00"),
            "commission": Decimal("0.00"),
        },
        {
            **wager_common,
            "wager_id": "W2",
            "round_id": "R1",
            "seat": 2,
            "bet": "player",
            "amount": Decimal("10.10"),
            "placed_at": T0 + timedelta(seconds=31),
            "result": "win",
            "payout": Decimal("10.10"),
            "commission": Decimal("0.00"),
        },
        {
            **wager_common,
            "wager_id": "W3",
            "round_id": "R2",
            "seat": 1,
            "bet": "tie",
            "amount": Decimal("25.00"),
            "placed_at": T0 + timedelta(minutes=1, seconds=30),
            "result": "lose",
            "payout": Decimal("0.00"),
            "commission": Decimal("0.00"),
        },
    ]
    return {"tables": [table], "shoes": [shoe], "rounds": rounds, "wagers": wagers}


DatasetWriter = Callable[..., Path]


@pytest.fixture
def write_dataset(tmp_path: Path) -> DatasetWriter:
    """Write a dataset folder; `frames` replaces tables, `rows` edits the base rows."""
    counter = iter(range(1000))

    def write(
        rows: dict[str, list[dict]] | None = None,
        frames: dict[str, pl.DataFrame] | None = None,
    ) -> Path:
        root = tmp_path / f"dataset{next(counter)}"
        root.mkdir()
        rows = rows if rows is not None else base_rows()
        frames = frames or {}
        for table, table_rows in rows.items():
            frame = frames.get(table, contract_frame(table, table_rows))
            frame.write_parquet(root / f"{table}.parquet")
        for table, frame in frames.items():
            if table not in rows:
                frame.write_parquet(root / f"{table}.parquet")
        return root

    return write


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


# The test files that take a minute or more, started first: the suite runs a file whole on
# one worker (pytest-xdist, --dist loadfile), and a long file started last would leave the
# other workers idle at the end. Within a file the order is unchanged.
LONG_FILES = (
    "test_period_surveillance.py",
    "test_surveillance.py",
    "test_archive_nights.py",
    "test_reference_audit.py",
    "test_hostile_input.py",
    "test_report_period_alerts.py",
    "test_archive_queries.py",
    "test_dask_engine.py",
    "test_simulated_audit.py",
    "test_rule_cases.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    def started(item: pytest.Item) -> int:
        name = item.path.name
        return LONG_FILES.index(name) if name in LONG_FILES else len(LONG_FILES)

    items.sort(key=started)  # stable: each file's own order is kept


# ---- the reports in a browser ------------------------------------------------------------------


def chromium_executable() -> str:
    """Debian's Chromium: the report tests must run in CI, and may skip elsewhere."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("CI must run the browser tests: install Debian's chromium (.ci/run)")
        pytest.skip("no chromium on PATH (apt-get install chromium)")
    return found


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


def watched_page(browser, url: str, width: int = 1280, height: int = 900):
    """A page opened at `url` with what it logs, requests, asks and throws recorded in
    `seen` (console, requests, dialogs, errors): a report must do none of it."""
    page = browser.new_page(viewport={"width": width, "height": height})
    seen: dict = {"console": [], "requests": [], "dialogs": [], "errors": []}
    page.on("console", lambda m: seen["console"].append((m.type, m.text)))
    page.on("request", lambda r: seen["requests"].append(r.url))
    page.on("dialog", lambda d: (seen["dialogs"].append(d.message), d.dismiss()))
    page.on("pageerror", lambda e: seen["errors"].append(str(e)))
    page.goto(url, wait_until="load")
    return page, seen
