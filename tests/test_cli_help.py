"""Every command answers -h and --help, and `python -m auditor` is the same command line."""

from __future__ import annotations

import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from auditor import __version__
from auditor.cli import main


def command_paths(group: click.Group = main, prefix: tuple[str, ...] = ()) -> list[tuple]:
    paths = [prefix]
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            paths += command_paths(command, (*prefix, name))
        else:
            paths.append((*prefix, name))
    return paths


@pytest.mark.parametrize("path", command_paths(), ids=lambda p: " ".join(p) or "auditor")
@pytest.mark.parametrize("flag", ["-h", "--help"])
def test_every_command_answers_help(path, flag):
    result = CliRunner().invoke(main, [*path, flag])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("Usage: ")


def test_python_m_auditor_is_the_command_line(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "auditor", "--version"],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,  # not the repository: `-m` imports from the working folder first
    )
    assert done.stdout.strip() == f"auditor, version {__version__}"
