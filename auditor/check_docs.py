"""Every check's documentation as data (`check_docs.json`), for the commands that only
print it: `auditor rules` answers without importing the pipeline (polars, pandera, scipy),
which would cost it seconds. The pipeline's own checks (`audit.all_checks`) are the
source; `tests/test_check_docs.py` keeps the file equal to them and rewrites it when
`AUDITOR_WRITE_CHECK_DOCS=1`."""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib.resources import files

DOCS_FILE = "check_docs.json"
FIELDS = ("code", "name", "title", "severity", "citation", "what", "why", "example")


@dataclass(frozen=True)
class CheckDoc:
    code: str
    name: str
    title: str
    severity: str
    citation: str
    what: str
    why: str
    example: str


def check_docs() -> list[CheckDoc]:
    """Every check's documentation, in code order."""
    entries = json.loads(files("auditor").joinpath(DOCS_FILE).read_text(encoding="utf-8"))
    return [CheckDoc(**{f: entry[f] for f in FIELDS}) for entry in entries]


def docs_json(checks: list) -> str:
    """The file's text for `checks` (anything with the fields of a CheckDoc)."""
    entries = [{f: getattr(check, f) for f in FIELDS} for check in checks]
    return json.dumps(entries, indent=1, ensure_ascii=False) + "\n"
