"""The end-to-end tests: a real browser, a real Dask cluster, the built wheel and the
documentation's build, a month of nights, live days. Every test here is marked `e2e`
(`pytest -m "not e2e"` leaves them out); the months they share are built once a session."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.months import Month, build_month
from tests.support.planted import build_planted_month

HERE = Path(__file__).parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.is_relative_to(HERE):
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="session")
def archive_month(tmp_path_factory: pytest.TempPathFactory) -> Month:
    """Thirty small nights archived, three re-audited, reviews before and after: read by
    test_archive_nights.py and test_archive_queries.py, never written."""
    return build_month(tmp_path_factory.mktemp("month"))


@pytest.fixture(scope="session")
def planted_month(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The planted month's datasets, output sets and archive, never written: each module
    works on its own copy of the archive (`copy_of_planted`)."""
    return build_planted_month(tmp_path_factory.mktemp("planted-month"))
