"""`auditor.regular_files`: a file of a folder anyone may edit is read only when it is a
regular file, without hanging on a FIFO or reading a device without end."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from auditor.regular_files import NotRegularFile, read_regular, regular_file_problem


def test_a_regular_file_is_read(tmp_path: Path) -> None:
    (tmp_path / "record.json").write_bytes(b'{"a": 1}\n')
    assert read_regular(tmp_path / "record.json") == b'{"a": 1}\n'
    assert regular_file_problem(tmp_path / "record.json") is None


def test_a_fifo_is_refused_without_hanging(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "record.json")
    with pytest.raises(NotRegularFile, match="FIFO"):
        read_regular(tmp_path / "record.json")
    assert regular_file_problem(tmp_path / "record.json") == "a FIFO, not a regular file"


def test_a_link_to_a_device_is_refused(tmp_path: Path) -> None:
    (tmp_path / "record.json").symlink_to("/dev/zero")
    with pytest.raises(NotRegularFile, match="link"):
        read_regular(tmp_path / "record.json")


def test_a_file_past_its_bound_is_refused(tmp_path: Path) -> None:
    (tmp_path / "record.json").write_bytes(b"x" * 100)
    with pytest.raises(NotRegularFile, match="more than the 99"):
        read_regular(tmp_path / "record.json", limit=99)
    assert read_regular(tmp_path / "record.json", limit=100) == b"x" * 100


def test_a_missing_file_is_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_regular(tmp_path / "record.json")
    assert regular_file_problem(tmp_path / "record.json") == "missing"
