"""The repository's folders the tests read, found from this file (never a machine's
absolute path), and the inputs that live beside the repository rather than in it."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "sample_data"
RULES = REPO / "rules"  # the built-in packs, as a folder
DOCS = REPO / "docs"
TESTS = REPO / "tests"
CASES = TESTS / "cases"  # one CODE.yaml per check
FIXTURES = TESTS / "fixtures"
# The regulation texts and INDEX.md are not in the repository: README ("Tests that need
# more than a fresh clone") asks for them in shared/regulations/ beside its folder.
REGULATIONS = REPO.parent / "shared" / "regulations"


def regulations(needed: str = "INDEX.md") -> Path:
    """The regulation texts' folder, or the test skipped saying where they belong: `needed`
    is the file of it the test reads."""
    if not (REGULATIONS / needed).is_file():
        pytest.skip(
            f"the regulation texts are not beside the repository (no {REGULATIONS / needed}): "
            "README.md, 'Tests that need more than a fresh clone'"
        )
    return REGULATIONS
