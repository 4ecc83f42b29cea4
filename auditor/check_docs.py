"""Every check's documentation as data (`check_docs.json`), for the commands that only
print it: `auditor rules` answers without importing the pipeline (polars, pandera, scipy),
which would cost it seconds. The pipeline's own checks (`pipeline.all_checks`) are the
source; `python -m auditor.tools.generate` writes the file from them, and
`tests/unit/test_check_docs.py` and CI (`--check`) hold it equal to them.

A check names the pack rules it applies (`rules`, by key) and what they are in words
(`subject`); its `citation` here is rendered from the built-in packs. Under other packs
(`--rules DIR`) the command renders it again from those (`auditor.packs.cited`)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib.resources import files

DOCS_FILE = "check_docs.json"
FIELDS = (
    "code", "name", "title", "severity", "subject", "rules", "citation", "what", "why", "example",
    "final",
)  # fmt: skip


@dataclass(frozen=True)
class CheckDoc:
    code: str
    name: str
    title: str
    severity: str
    subject: str
    rules: tuple[str, ...]
    citation: str  # under the built-in packs
    what: str
    why: str
    example: str
    final: str  # when its finding is final while the day is dealt (`auditor watch`)


def check_docs() -> list[CheckDoc]:
    """Every check's documentation, in code order."""
    entries = json.loads(files("auditor").joinpath(DOCS_FILE).read_text(encoding="utf-8"))
    return [
        CheckDoc(**{f: entry[f] for f in FIELDS} | {"rules": tuple(entry["rules"])})
        for entry in entries
    ]


def docs_json(checks: list) -> str:
    """The file's text for `checks` (anything with the fields of a CheckDoc)."""
    entries = [
        {f: list(getattr(check, f)) if f == "rules" else getattr(check, f) for f in FIELDS}
        for check in checks
    ]
    return json.dumps(entries, indent=1, ensure_ascii=False) + "\n"
