"""The reports across nights in headless Chromium: the last night's nightly report of an
archive and a dealer's investigation across its nights open running and fetching nothing,
draw something and show their findings. The archive is the one
tests/integration/test_report_across.py reads (`across_archive`, tests/support/archives.py),
built once for both."""

from __future__ import annotations

import pytest

from auditor.report.across import write_archive_investigation
from auditor.report.investigate import subject_of
from tests.support.browser import not_blank, opened


@pytest.mark.parametrize("which", ["nightly", "dealer"])
def test_both_pages_open_offline_with_no_error(browser, across_archive, tmp_path, which):
    if which == "nightly":
        page = across_archive.outs[-1] / "report.html"
    else:
        page = write_archive_investigation(
            across_archive.archive,
            subject_of(dealer=across_archive.dealer),
            target=tmp_path / "d.html",
        )
    seen = opened(browser, page)
    (tmp_path / f"{which}.png").write_bytes(seen["screenshot"])
    assert [m for m in seen["console"] if m[0] in ("error", "warning")] == []
    assert seen["errors"] == [] and seen["dialogs"] == []
    assert seen["requests"] == [seen["url"]]
    assert not_blank(seen["screenshot"])
    assert seen["findings_rows"] > 0
