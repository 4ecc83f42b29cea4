"""The auditor as a library: `audit(dataset, out, options)` is what `auditor audit` runs,
with the same memory policy, so that a program gets the night the command line gets.

The command line only fills `AuditOptions` from its arguments; what stays with it is what
only a terminal needs (the progress bar, the summary, `--exit-zero`, URLs copied to a
local folder and back).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from auditor.defaults import ALERT_FDR, DEFAULT_MEMORY_LIMIT, parse_size

if TYPE_CHECKING:
    from auditor.input.validate import ValidatedDataset
    from auditor.output.files import AuditOutputs
    from auditor.packs.loaded import LoadedPacks

Engine = Literal["local", "dask"]


@dataclass(frozen=True)
class AuditOptions:
    """How a night is audited: `auditor audit`'s options, by the same names.

    `memory_limit` ("2GB", "512MB") sizes the partitions (whole tables audited together)
    so that the run stays within it, unless `partition_rounds` gives their size; `rules`
    is a folder of rule packs loaded beside the built-in ones (`replace_builtin` lets a
    pack replace a built-in one of its id); `alert_fdr` is the false-discovery rate of
    the surveillance alerts; `engine="dask"` audits the partitions on a Dask cluster, the
    one at `scheduler` (``tcp://HOST:PORT``) or a local one.
    """

    memory_limit: str = DEFAULT_MEMORY_LIMIT
    partition_rounds: int | None = None
    rules: Path | None = None
    replace_builtin: bool = False
    alert_fdr: float = ALERT_FDR
    engine: Engine = "local"
    scheduler: str | None = None

    def __post_init__(self) -> None:
        parse_size(self.memory_limit)  # an unreadable size is refused here, not mid-run
        if self.partition_rounds is not None and self.partition_rounds < 1:
            raise ValueError(f"partition_rounds must be at least 1, not {self.partition_rounds}")
        if self.replace_builtin and self.rules is None:
            raise ValueError("replace_builtin needs a rules folder")
        if self.engine not in ("local", "dask"):
            raise ValueError(f"engine must be 'local' or 'dask', not {self.engine!r}")
        if self.scheduler is not None and self.engine != "dask":
            raise ValueError("a scheduler needs engine='dask'")

    @property
    def memory_limit_bytes(self) -> int:
        return parse_size(self.memory_limit)

    def partition_size(self) -> int:
        """The rounds a partition holds: `partition_rounds`, or as many as the memory
        limit leaves room for."""
        from auditor.input.partition import rounds_within

        if self.partition_rounds is not None:
            return self.partition_rounds
        return rounds_within(self.memory_limit_bytes)

    def packs(self) -> LoadedPacks:
        """The rule packs the night is audited under."""
        from auditor.packs.loaded import load_packs

        return load_packs(self.rules, self.replace_builtin)


def audit(
    dataset: str | Path,
    out: str | Path,
    options: AuditOptions | None = None,
    *,
    progress: Callable[[str, int], None] | None = None,
    archive: Path | None = None,
    command: Sequence[str] | None = None,
    origin: str | None = None,
    packs: LoadedPacks | None = None,
) -> AuditOutputs:
    """Validate and audit the dataset folder `dataset` and write the output set into
    `out` (missing, empty or an earlier run's); the findings, quarantine, row accounting
    and alerts come back as frames. Raises an `auditor.errors.AuditorError` where
    `auditor audit` exits 2.

    `progress(stage, n)` is told of `n` more rows or rounds done in each stage;
    `archive`: the archive the run will be added to, whose earlier runs the nightly
    report compares the night with; `command` and `origin` (the URL the dataset was
    copied from) go into the catalog's record of the run; `packs`: packs already loaded
    (else `options.packs()`).
    """
    from auditor.pipeline import run_audit

    options = options or AuditOptions()
    run = run_audit
    if options.engine == "dask":
        from auditor.engines.cluster import dask_audit

        # A local cluster's workers read this machine's copy of a dataset at a URL; a
        # remote cluster's workers read the URL.
        where = origin if origin is not None and options.scheduler else dataset
        run = dask_audit(where, options.scheduler)
    return run(
        Path(dataset),
        Path(out),
        progress,
        options.partition_size(),
        command=command,
        alert_fdr=options.alert_fdr,
        origin=origin,
        archive=archive,
        packs=packs if packs is not None else options.packs(),
    )


def validate(dataset: str | Path, options: AuditOptions | None = None) -> ValidatedDataset:
    """Check the dataset folder against the contract without auditing it, as `auditor
    validate` does: `.counts` is the row accounting (rows in, audited, quarantined by
    table), `.quarantine` every row refused and why. Validation holds its ids within
    the options' memory limit."""
    from auditor.pipeline import run_validation

    options = options or AuditOptions()
    return run_validation(Path(dataset), None, options.partition_size(), options.packs())
