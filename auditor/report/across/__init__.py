"""Investigation across nights: one patron, dealer or table over every night of an archive
(`auditor.archive`), for a case that spans more than one night: `across.data` reads it
from the archive and the runs' own catalogs, `across.page` draws the page.

A night is a gaming day, noon to noon UTC, as everywhere in the archive.
"""

from __future__ import annotations

import functools
from datetime import date
from pathlib import Path

from auditor.report.across.data import archive_subject, gather_archive
from auditor.report.across.page import page as draw_page  # `page` names the submodule
from auditor.report.investigate import Subject, default_name
from auditor.report.writing import Beside, write_report


def render_archive_investigation(
    archive: Path, subject: Subject, beside: Beside | None = None
) -> str:
    """The investigation across the archive's nights as one self-contained HTML page;
    `beside`: where the rounds and wagers it leaves off go (kept, not written, if None)."""
    if beside is None:
        beside = Beside(Path(default_name(subject, False, across_nights=True)).stem)
    return draw_page(gather_archive(archive, subject), beside)


def write_archive_investigation(
    archive: Path,
    subject: Subject,
    start: date | None = None,
    end: date | None = None,
    target: Path | None = None,
    pdf: bool = False,
) -> Path:
    """Write the investigation of `subject` (a patron, dealer or table, as `subject_of`
    gives it) over every night of `archive`, or the gaming days `start` to `end`
    (inclusive; the subject's own window when None): HTML, or PDF through Chromium, to
    `target` (default ./investigation-KIND-ID-across-nights.html or .pdf, see
    `default_name`), with the CSVs of the rounds and wagers the page leaves off beside
    it. An unknown subject, an archive that cannot be read or a target that cannot be
    written is an `AuditorError` (exit 2)."""
    subject = archive_subject(subject, start, end)
    build = functools.partial(render_archive_investigation, archive, subject)
    target = Path(target or default_name(subject, pdf, across_nights=True))
    return write_report(build, target, pdf)
