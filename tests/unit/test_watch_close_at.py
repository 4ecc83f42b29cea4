"""`auditor watch --close-at`: a time of day to the minute or to the second, nothing else."""

from __future__ import annotations

from datetime import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from auditor.cli import main


def _close_at(value: str) -> time:
    from auditor.commands.watch import _close_at as parse

    return parse(None, None, value)


@pytest.mark.parametrize(
    ("written", "read"),
    [("07:30", time(7, 30)), ("07:30:05", time(7, 30, 5)), ("23:59:59", time(23, 59, 59))],
)
def test_a_close_time_is_read_to_the_minute_or_the_second(written: str, read: time) -> None:
    assert _close_at(written) == read


@pytest.mark.parametrize("written", ["7.30", "24:00", "07:30:60", "07:30:05.5", "noon", ""])
def test_anything_else_is_refused_before_the_watch_starts(written: str, tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main, ["watch", str(tmp_path), "--archive", str(tmp_path / "a"), "--close-at", written]
    )
    assert result.exit_code == 2, result.output
    assert "HH:MM or HH:MM:SS" in result.output
    assert not (tmp_path / "a").exists()
