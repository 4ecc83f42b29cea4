"""`auditor query ARCHIVE`: the archive's catalog in the same sandbox as a run's."""

from __future__ import annotations

from pathlib import Path

from auditor.archive.catalog import CATALOG_FILE, current_catalog
from auditor.archive.check import changed_runs
from auditor.output.query import Catalog, QueryError, open_sandboxed


def open_archive_catalog(
    archive: Path, *, memory_limit: str | None = None, timeout: float | None = None
) -> Catalog:
    """The archive's catalog in the same sandbox as a run's (`output.query`): it admits the
    archive's folder alone. Each run's set is checked against its manifest's sizes first
    (`auditor verify ARCHIVE` hashes them); a changed archive is refused."""
    if not (Path(archive) / CATALOG_FILE).is_file():
        raise QueryError(f"{archive}: no catalog here; `auditor archive add` writes one")
    problems = changed_runs(Path(archive))
    if problems:
        raise QueryError(
            f"{archive}: the archive is not as written ({'; '.join(problems[:3])}); "
            f"`auditor verify {archive}` lists every difference"
        )
    path = current_catalog(Path(archive))
    return open_sandboxed(path, (None, []), memory_limit=memory_limit, timeout=timeout)
