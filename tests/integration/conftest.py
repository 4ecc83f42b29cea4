"""The integration tests' shared fixtures: what several files read, built once a session."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.planted import surveilled_nights


@pytest.fixture(scope="session")
def surveilled_archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three planted nights audited, archived and surveilled once at a lenient rate: read
    by test_archive_record.py and test_period_runs.py, each test on its own copy."""
    return surveilled_nights(tmp_path_factory.mktemp("surveilled"))
