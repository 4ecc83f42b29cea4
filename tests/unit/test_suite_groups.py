"""The suite's spreading over pytest-xdist's workers holds (tests/conftest.py): a test file's
tests, or the files sharing one of the suite's session fixtures, run on one worker, so that
their module and session fixtures are built once. Nothing fails when the groups are lost,
the suite only takes longer (the shared months built once on each worker), hence this test.
"""

from __future__ import annotations

import os

import pytest

THIS_FILE = "tests/unit/test_suite_groups.py"


def test_this_files_group_reaches_the_worker(request: pytest.FixtureRequest) -> None:
    if "PYTEST_XDIST_WORKER" not in os.environ:
        pytest.skip("run without workers (-n 0): nothing is spread")
    assert getattr(request.config.option, "loadgroup", False), "the suite runs --dist loadgroup"
    # pytest-xdist's scheduler reads a test's group from its node id's `@GROUP` suffix.
    assert request.node.nodeid.endswith(f"@{THIS_FILE}"), request.node.nodeid
