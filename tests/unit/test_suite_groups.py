"""The suite's spreading over pytest-xdist's workers holds (tests/conftest.py): a test file's
tests, or the files sharing one of the suite's session fixtures, run on one worker, so that
their module and session fixtures are built once. Nothing fails when the groups are lost,
the suite only takes longer (the shared months built once on each worker), hence this test.
"""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys

import pytest

from tests.support.cli import AUDITOR

THIS_FILE = "tests/unit/test_suite_groups.py"


def test_this_files_group_reaches_the_worker(request: pytest.FixtureRequest) -> None:
    if "PYTEST_XDIST_WORKER" not in os.environ:
        pytest.skip("run without workers (-n 0): nothing is spread")
    assert getattr(request.config.option, "loadgroup", False), "the suite runs --dist loadgroup"
    # pytest-xdist's scheduler reads a test's group from its node id's `@GROUP` suffix.
    assert request.node.nodeid.endswith(f"@{THIS_FILE}"), request.node.nodeid


def test_a_process_of_the_auditor_started_unmarked_fails_before_it_starts(tmp_path) -> None:
    """The fast tier stays in process: this test is not marked e2e, so starting the
    auditor, Python or DuckDB fails it (tests/conftest.py) and nothing runs."""
    marker = tmp_path / "ran"
    for program in (AUDITOR, sys.executable):
        with pytest.raises(AssertionError, match=re.escape("mark the test `@pytest.mark.e2e`")):
            subprocess.run([program, "-c", f"open({str(marker)!r}, 'w')"], check=False)
    assert not marker.exists()
    # Any other program starts, as the product's own `--on-finding` commands do.
    assert subprocess.run(["true"], check=False).returncode == 0


def test_a_terminal_forked_unmarked_fails_before_it_forks() -> None:
    with pytest.raises(AssertionError, match="forks a terminal"):
        pid, _ = pty.fork()
        if pid == 0:  # without the guard, the child: gone at once, not back into pytest
            os._exit(0)


@pytest.mark.e2e
def test_a_terminal_forked_by_a_marked_test_runs_its_program() -> None:
    pid, fd = pty.fork()
    if pid == 0:  # the child: never returns into pytest
        os._exit(7)
    status = os.waitpid(pid, 0)[1]
    os.close(fd)  # after the child is done: closing the terminal first would hang it up
    assert os.waitstatus_to_exitcode(status) == 7


@pytest.mark.e2e
def test_a_process_started_by_a_marked_test_runs(tmp_path) -> None:
    marker = tmp_path / "ran"
    subprocess.run([sys.executable, "-c", f"open({str(marker)!r}, 'w')"], check=True)
    assert marker.exists()
