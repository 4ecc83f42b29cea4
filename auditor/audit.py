"""The audit pipeline: load -> validate -> replay -> settle -> procedures -> findings -> outputs.

Each stage is a function of frames; this module only wires them together.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from auditor.findings import combine
from auditor.load import open_dataset
from auditor.options import shoe_options
from auditor.outputs import AuditOutputs, write_outputs
from auditor.procedures import procedure_findings
from auditor.replay import replay, round_findings
from auditor.rulepack import load_all
from auditor.settle import wager_findings
from auditor.validate import ProgressCallback, ValidatedDataset, validate


def run_validation(
    dataset_path: Path, progress: ProgressCallback | None = None
) -> ValidatedDataset:
    return validate(open_dataset(dataset_path), progress)


def find(validated: ValidatedDataset) -> pl.DataFrame:
    """Every finding of the audited rows, in the stable order of `findings.combine`."""
    packs = load_all()
    audited = validated.audited
    options = shoe_options(audited["shoes"], audited["tables"])
    replayed = replay(audited["rounds"], options, packs)
    stages = [
        round_findings(replayed, packs),
        *wager_findings(audited["wagers"], replayed, options, packs, audited["royal9_seats"]),
        procedure_findings(audited, replayed, options, packs),
    ]
    # One collect for all stages lets polars compute the shared replay once.
    return combine(pl.collect_all(stages))


def run_audit(
    dataset_path: Path, out: Path, progress: ProgressCallback | None = None
) -> AuditOutputs:
    validated = run_validation(dataset_path, progress)
    results = AuditOutputs(find(validated), validated.quarantine, validated.counts)
    write_outputs(out, results)
    return results
