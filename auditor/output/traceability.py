"""The traceability matrix: every section of the regulations the packs encode, whether
the logs can audit it, and the checks that do.

Each pack names two files beside it (`regulation.sections`, `regulation.traceability`:
`auditor.packs.regulation`), because the regulations folder does not ship:
- the sections file is INDEX.md's section rows for the pack's ruleset, copied
  mechanically (`python -m auditor.tools.generate` rewrites the
  built-in packs'; a test proves they match INDEX.md wherever that file is at hand);
- the traceability file is kept by hand: per section, the check codes that audit it, or
  the reason none does yet. A section the logs cannot show keeps INDEX's reason and
  takes no code.

`problems(checks)` is the strict reading a test enforces: every code exists, every check
traces to a section, every section the logs can audit has a check or a stated reason.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass

import polars as pl

from auditor.check_docs import check_docs
from auditor.findings.check import Check
from auditor.packs.cited_sections import citing_checks
from auditor.packs.kept import per_packs
from auditor.packs.loaded import builtin_packs
from auditor.packs.model import RulePack
from auditor.packs.regulation_files import section_rows, traced_rows

VERDICTS = ("auditable", "partly", "not from logs")
FROM_LOGS = ("auditable", "partly")

# "## 1. ID — Title (...)": the ruleset id is the second word.
_RULESET_HEADING = re.compile(r"^## \d+\. (?P<ruleset>[a-z-]+) ")
_CODE = re.compile(r"^[A-Z]{3}\d{3}$")


@dataclass(frozen=True)
class Section:
    """One row of INDEX.md: a section of one ruleset's regulation and its verdict."""

    ruleset: str
    ref: str
    requires: str
    verdict: str
    evidence: str  # INDEX's "log evidence / why not"


@dataclass(frozen=True)
class Traced:
    """What the hand-kept file says of a section: check codes, or why there are none."""

    codes: tuple[str, ...] = ()
    reason: str | None = None


def parse_index(text: str) -> list[Section]:
    """The section rows of INDEX.md, in its order: a numbered ruleset heading starts a
    ruleset's table; any other heading ends it."""
    sections: list[Section] = []
    ruleset: str | None = None
    for line in text.splitlines():
        if line.startswith("## "):
            found = _RULESET_HEADING.match(line)
            ruleset = found["ruleset"] if found else None
            continue
        if ruleset is None or not line.startswith("| "):
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 4 or cells[2] not in VERDICTS:
            continue  # the header and its rule line
        ref, requires, verdict, evidence = cells
        sections.append(Section(ruleset, ref, requires, verdict, evidence))
    return sections


def _packs(packs: Mapping[str, RulePack] | None) -> Mapping[str, RulePack]:
    return builtin_packs() if packs is None else packs


def shipped_sections(packs: Mapping[str, RulePack] | None = None) -> list[Section]:
    """The sections of the regulations `packs` encode (the built-in ones by default), in
    the packs' order."""
    return [
        Section(ruleset=ruleset, **row)
        for ruleset, pack in _packs(packs).items()
        for row in section_rows(pack)
    ]


def sections_json(sections: Iterable[Section]) -> str:
    # One section a line: a change to INDEX.md shows as a readable diff.
    rows = [
        json.dumps({k: v for k, v in asdict(s).items() if k != "ruleset"}, ensure_ascii=False)
        for s in sections
    ]
    return "[\n" + ",\n".join(rows) + "\n]\n"


def traced(packs: Mapping[str, RulePack] | None = None) -> dict[tuple[str, str], Traced]:
    """The hand-kept files of `packs`: (ruleset, ref) -> codes or reason."""
    found: dict[tuple[str, str], Traced] = {}
    for ruleset, pack in _packs(packs).items():
        for ref, entry in traced_rows(pack).items():
            if isinstance(entry, str):
                found[(ruleset, ref)] = Traced(reason=entry)
            elif isinstance(entry, list):
                found[(ruleset, ref)] = Traced(codes=tuple(entry))
            elif isinstance(entry, dict) and set(entry) <= {"codes", "reason"}:
                found[(ruleset, ref)] = Traced(tuple(entry.get("codes") or ()), entry.get("reason"))
            else:
                # Rows are read only from the file the pack's regulation names.
                assert pack.regulation is not None
                raise ValueError(
                    f"{pack.regulation.traceability}: {ruleset} {ref}: expected a list of "
                    f"check codes, a reason, or {{codes, reason}}; got {entry!r}"
                )
    return found


def problems(checks: Sequence[Check], packs: Mapping[str, RulePack] | None = None) -> list[str]:
    """Everything wrong with the matrix, strictly: an empty list when it is complete."""
    sections = shipped_sections(packs)
    keys = {(s.ruleset, s.ref): s for s in sections}
    mapped = traced(packs)
    known = {c.code for c in checks}
    found: list[str] = []
    for key, entry in mapped.items():
        name = " ".join(key)
        if key not in keys:
            found.append(f"{name}: not a section of its regulation (INDEX.md)")
            continue
        unknown = [c for c in entry.codes if c not in known or not _CODE.match(c)]
        if unknown:
            found.append(f"{name}: unknown check codes {unknown}")
        if keys[key].verdict not in FROM_LOGS and entry.codes:
            found.append(f"{name}: INDEX says 'not from logs' yet checks are traced to it")
        if not entry.codes and not (entry.reason or "").strip():
            found.append(f"{name}: neither check codes nor a reason")
    for section in sections:
        if section.verdict in FROM_LOGS and (section.ruleset, section.ref) not in mapped:
            found.append(
                f"{section.ruleset} {section.ref}: {section.verdict} from the logs, "
                "but no check and no reason"
            )
    traced_codes = {code for entry in mapped.values() for code in entry.codes}
    found += [f"{code}: audits no section" for code in sorted(known - traced_codes)]
    return found


MATRIX_SCHEMA = {
    "ruleset": pl.String(),
    "section": pl.String(),
    "citation": pl.String(),
    "requires": pl.String(),
    "verdict": pl.String(),
    "from_logs": pl.Boolean(),
    "codes": pl.List(pl.String()),
    "reason": pl.String(),
    "evidence": pl.String(),
}


def matrix(packs: Mapping[str, RulePack] | None = None) -> pl.DataFrame:
    """The traceability matrix of `packs` (`build_matrix`), built once per set of packs:
    every audit's catalog holds it."""
    return _kept_matrix(packs)


def build_matrix(packs: Mapping[str, RulePack] | None = None) -> pl.DataFrame:
    """One row per section of the packs' regulations: verdict, the check codes that audit
    it and, where no check does, the reason (INDEX's for sections the logs cannot show).
    A check audits the sections its findings cite (`packs.cited_sections`) and those the
    hand-kept file traces to it: a check is never missing from a section it cites."""
    mapped = traced(packs)
    citing = citing_checks(_packs(packs), ((c.code, c.rules) for c in check_docs()))
    rows = []
    for s in shipped_sections(packs):
        entry = mapped.get((s.ruleset, s.ref), Traced())
        codes = set(entry.codes) | citing.get((s.ruleset, s.ref), set())
        from_logs = s.verdict in FROM_LOGS
        reason = entry.reason if from_logs else (entry.reason or s.evidence)
        rows.append(
            {
                "ruleset": s.ruleset,
                "section": s.ref,
                "citation": f"{s.ruleset} {s.ref}",
                "requires": s.requires,
                "verdict": s.verdict,
                "from_logs": from_logs,
                "codes": sorted(codes),
                "reason": reason,
                "evidence": s.evidence,
            }
        )
    return pl.DataFrame(rows, schema=MATRIX_SCHEMA)


_kept_matrix = per_packs(build_matrix)
