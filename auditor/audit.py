"""The audit pipeline: load -> validate -> replay -> settle -> procedures -> findings -> outputs.

Each stage is a function of frames; this module only wires them together.
"""

from __future__ import annotations

from pathlib import Path

from auditor.findings import combine
from auditor.load import open_dataset
from auditor.outputs import AuditOutputs, write_outputs
from auditor.validate import ProgressCallback, ValidatedDataset, validate


def run_validation(
    dataset_path: Path, progress: ProgressCallback | None = None
) -> ValidatedDataset:
    return validate(open_dataset(dataset_path), progress)


def run_audit(
    dataset_path: Path, out: Path, progress: ProgressCallback | None = None
) -> AuditOutputs:
    validated = run_validation(dataset_path, progress)
    findings = combine([])
    results = AuditOutputs(findings, validated.quarantine, validated.counts)
    write_outputs(out, results)
    return results
