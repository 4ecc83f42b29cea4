"""The library: `auditor.audit(dataset, out)` from Python is the audit the command line
runs (the same findings, byte for byte), with the same memory policy, and the example of
docs/python.md runs as written."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import auditor
from auditor.defaults import DEFAULT_MEMORY_LIMIT, parse_size
from auditor.input.partition import PARTITION_ROUNDS, rounds_within
from auditor.simulator.simulate import simulate
from tests.support.cli import AUDITOR
from tests.support.paths import REPO


@pytest.fixture(scope="module")
def night(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("night")
    simulate(root / "data", 2000, seed=23, fault_rate=0.05)
    return root / "data"


@pytest.mark.e2e
def test_audit_from_python_writes_the_findings_the_command_line_writes(
    night: Path, tmp_path: Path
) -> None:
    from_python = auditor.audit(night, tmp_path / "python")
    done = subprocess.run(
        [AUDITOR, "audit", str(night), "--out", str(tmp_path / "cli"), "--quiet"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == auditor.ExitStatus.FOUND, done.stderr
    assert from_python.findings.height > 0
    written = (tmp_path / "python" / "findings.parquet").read_bytes()
    assert written == (tmp_path / "cli" / "findings.parquet").read_bytes()


@pytest.fixture
def partition_sizes(monkeypatch: pytest.MonkeyPatch) -> list[int | None]:
    """The partition size each audit is run with, the audit itself left out."""
    import auditor.pipeline

    given: list[int | None] = []

    def run_audit(
        dataset: Path, out: Path, progress: object, partition_rounds: int | None, **_: object
    ) -> None:
        given.append(partition_rounds)

    monkeypatch.setattr(auditor.pipeline, "run_audit", run_audit)
    return given


@pytest.mark.parametrize("limit", ["1GB", "512MB", DEFAULT_MEMORY_LIMIT])
def test_the_memory_limit_sizes_the_partitions_as_the_command_line_does(
    night: Path, tmp_path: Path, partition_sizes: list[int | None], limit: str
) -> None:
    from click.testing import CliRunner

    from auditor.cli import main

    auditor.audit(night, tmp_path / "a", options=auditor.AuditOptions(memory_limit=limit))
    CliRunner().invoke(
        main,
        ["audit", str(night), "--out", str(tmp_path / "b"), "--memory-limit", limit, "--quiet"],
    )
    assert partition_sizes == [rounds_within(parse_size(limit))] * 2


def test_audit_from_python_follows_the_default_memory_limit(
    night: Path, tmp_path: Path, partition_sizes: list[int | None]
) -> None:
    auditor.audit(night, tmp_path / "out")
    assert partition_sizes == [rounds_within(parse_size(DEFAULT_MEMORY_LIMIT))]
    assert partition_sizes[0] != PARTITION_ROUNDS  # not the fixed size of earlier callers


def test_partition_rounds_wins_over_the_memory_limit() -> None:
    options = auditor.AuditOptions(memory_limit="8GB", partition_rounds=30_000)
    assert options.partition_size() == 30_000


@pytest.mark.parametrize(
    "fields",
    [
        {"memory_limit": "lots"},
        {"partition_rounds": 0},
        {"replace_builtin": True},
        {"engine": "spark"},
        {"scheduler": "tcp://127.0.0.1:8786"},
    ],
)
def test_options_that_cannot_be_used_are_refused_at_once(fields: dict[str, object]) -> None:
    with pytest.raises((ValueError, auditor.AuditorError)):
        auditor.AuditOptions(**fields)  # type: ignore[arg-type]


def test_options_are_frozen() -> None:
    options = auditor.AuditOptions()
    with pytest.raises(AttributeError):
        options.memory_limit = "1GB"  # type: ignore[misc]


def test_the_entry_point_is_the_function_and_the_pipeline_its_own_module() -> None:
    import auditor.pipeline
    from auditor.api import audit

    assert auditor.audit is audit
    assert not hasattr(auditor.audit, "run_audit")
    assert auditor.pipeline.run_audit.__module__ == "auditor.pipeline"


def test_the_public_names_are_importable_and_listed() -> None:
    for name in auditor.__all__:
        assert getattr(auditor, name) is not None
    assert callable(auditor.validate) and callable(auditor.load_packs)
    with pytest.raises(AttributeError):
        auditor.no_such_name  # noqa: B018


@pytest.mark.e2e
def test_import_auditor_imports_no_pipeline() -> None:
    probe = "import sys, auditor; auditor.__all__; print('polars' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.stdout.strip() == "False", done.stderr


def test_the_docs_example_runs(
    night: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = (REPO / "docs" / "python.md").read_text(encoding="utf-8")
    (example,) = re.findall(r"^```python\n(.*?)^```", page, re.MULTILINE | re.DOTALL)
    (tmp_path / "exports").mkdir()
    (tmp_path / "exports" / "2026-11-24").symlink_to(night, target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    exec(compile(example, "docs/python.md", "exec"), {})
    assert (tmp_path / "audits" / "2026-11-24" / "findings.parquet").is_file()
    assert (tmp_path / "audits" / "2026-11-24-strict" / "findings.parquet").is_file()
