"""The YAML cases of `tests/cases/` (one CODE.yaml per check), read once under the
built-in packs: what the case tests and the witnesses' differential test run."""

from __future__ import annotations

from auditor.casework.files import case_file_paths
from auditor.casework.runner import load_files
from auditor.packs.loaded import builtin_packs
from tests.support.paths import CASES

PACKS = builtin_packs()
FILES = load_files(case_file_paths(CASES), PACKS)
ALL_CASES = [case for found in FILES for case in found.cases]
