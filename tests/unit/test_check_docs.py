"""The checks' documentation shipped as data equals the pipeline's own checks."""

from __future__ import annotations

import subprocess
import sys

import pytest

from auditor.check_docs import DOCS_FILE, check_docs, docs_json
from auditor.pipeline import all_checks


def test_the_shipped_documentation_is_the_pipelines():
    expected = docs_json(all_checks())
    assert docs_json(check_docs()) == expected, (
        f"{DOCS_FILE} is stale: run `python -m auditor.tools.generate`"
    )


@pytest.mark.e2e
def test_rules_imports_none_of_the_pipeline(tmp_path):
    """`auditor rules` prints text: it must not pay for polars, pandera or scipy."""
    program = (
        "import sys; from auditor.cli import main\n"
        "try:\n    main(['rules', 'DRW001'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in ('polars', 'pandera', 'scipy', 'matplotlib') "
        "if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", program],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,  # not the repository: `-c` imports from the working folder first
    )
    assert done.stdout.strip().splitlines()[-1] == "[]"
