"""Run cases: every case of the files as one dataset through the whole audit, and each
case's verdict on its own share of the findings and the quarantine.

One dataset for many cases costs one validation and one pass of the checks instead of
one per case (`batch.py` keeps the cases apart). Where the audit refuses the dataset
as a whole (a case's rows it cannot read at all), or a finding names no case's table,
the cases are halved and each half run again, down to the case alone: such a case then
fails with the audit's own words, and the others keep their verdicts.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from auditor.casework.batch import (
    case_prefix,
    split_findings,
    split_quarantine,
    unprefixed,
    write_batch,
)
from auditor.casework.build import Rows, case_rows
from auditor.casework.files import Case, CaseFile, CaseFilesRefused, load_case_files
from auditor.casework.verdict import case_failures
from auditor.errors import AuditorError
from auditor.packs.loaded import LoadedPacks
from auditor.packs.model import RulePack
from auditor.pipeline import find, run_validation


@dataclass(frozen=True)
class CaseAudit:
    """A case's share of the audit: its quarantine and findings, or why there is none."""

    quarantine: pl.DataFrame
    findings: pl.DataFrame
    refused: str | None = None


@dataclass(frozen=True)
class CaseResult:
    case: Case
    failures: tuple[str, ...]

    @property
    def passed(self) -> bool:
        return not self.failures


def load_files(paths: Iterable[Path], packs: LoadedPacks) -> list[CaseFile]:
    """The case files at `paths`, read and checked (`load_case_files`)."""
    from auditor.check_docs import check_docs

    return load_case_files(paths, {c.code for c in check_docs()}, packs.rulesets())


def load_cases(paths: Iterable[Path], packs: LoadedPacks) -> list[Case]:
    """The cases of the files at `paths`, each built once to prove it can be: refused
    (CaseFilesRefused, exit 2) with every problem by file and line."""
    cases = [case for found in load_files(paths, packs) for case in found.cases]
    problems = []
    for case in cases:
        try:
            case_rows(case.spec, pack_of(case, packs))
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            where = case.where or f"{case.file}:{case.line}"
            problems.append(f"{where}: {case.name}: cannot be dealt: {error}")
    if problems:
        raise CaseFilesRefused(problems)
    return cases


def pack_of(case: Case, packs: Mapping[str, RulePack]) -> RulePack:
    """The pack a case's table names: its ruleset's first version."""
    return packs[case.spec["ruleset"]]


def run_cases(cases: Sequence[Case], packs: LoadedPacks) -> list[CaseResult]:
    """Each case's verdict, in the order given, from one audit of them all."""
    with tempfile.TemporaryDirectory(prefix="auditor-cases-") as folder:
        audits = audit_cases(cases, packs, Path(folder))
    return [verdict(case, audit) for case, audit in zip(cases, audits, strict=True)]


def verdict(case: Case, audit: CaseAudit) -> CaseResult:
    if audit.refused is not None:
        return CaseResult(case, (f"the audit refused the case's dataset: {audit.refused}",))
    failures = case_failures(case.code, case.name, case.spec, audit.quarantine, audit.findings)
    return CaseResult(case, tuple(failures))


def audit_cases(cases: Sequence[Case], packs: LoadedPacks, folder: Path) -> list[CaseAudit]:
    """Each case's share of one audit of all of them (halved where that cannot be had)."""
    rows = [case_rows(case.spec, pack_of(case, packs)) for case in cases]
    try:
        audits = audit_rows(rows, packs, folder / f"dataset{len(list(folder.iterdir()))}")
    except AuditorError as error:
        if len(cases) == 1:
            return [CaseAudit(pl.DataFrame(), pl.DataFrame(), str(error))]
        audits = None
    if audits is not None:
        return audits
    half = len(cases) // 2
    return [*audit_cases(cases[:half], packs, folder), *audit_cases(cases[half:], packs, folder)]


def audit_rows(rows: Sequence[Rows], packs: LoadedPacks, root: Path) -> list[CaseAudit] | None:
    """The audit of the cases' rows as one dataset, split by case; None where a finding
    cannot be told to one case (more than one case in the dataset)."""
    batch = write_batch(rows, root)
    validated = run_validation(root, packs=packs)
    findings = find(validated)
    if len(rows) == 1:  # every finding is the one case's, whatever table it names
        only = unprefixed(findings, case_prefix(0))
        return [CaseAudit(split_quarantine(batch, validated.quarantine, 1)[0], only)]
    by_case = split_findings(findings, len(rows))
    if by_case is None:
        return None
    quarantines = split_quarantine(batch, validated.quarantine, len(rows))
    return [CaseAudit(q, f) for q, f in zip(quarantines, by_case, strict=True)]
