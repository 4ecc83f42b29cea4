"""Reports across nights, from an archive of runs: the nightly report of a run that goes
into an archive says which findings earlier nights found too and lists those still open
or escalated; the investigation of a dealer, patron or table spans every night, with the
archive's counts, the reviews, and the hand histories of the nights still in place."""

from __future__ import annotations

import re
import shutil
from datetime import date, timedelta
from decimal import Decimal

import polars as pl
import pytest

from auditor.errors import AuditorError
from auditor.report.across import render_archive_investigation, write_archive_investigation
from auditor.report.investigate import ReportError, subject_of
from auditor.report.nightly import render_nightly
from auditor.report.writing import Beside
from tests.support.archives import (
    ACROSS_NIGHTS,
    FIRST_NIGHT,
    archive_query,
)


def section(html: str, anchor: str) -> str:
    """The page from the heading `anchor` to the next h2."""
    start = html.index(f'<h2 id="{anchor}">')
    end = html.find("<h2 ", start + 1)
    return html[start : end if end > 0 else len(html)]


def rows_by_night(html: str, marker: str) -> dict[str, int]:
    """Rows of a table whose first cell is a night, followed by `marker`, per night."""
    found: dict[str, int] = {}
    for day in re.findall(rf'<tr><td class="day">(\d{{4}}-\d\d-\d\d)</td>{marker}', html):
        found[day] = found.get(day, 0) + 1
    return found


# ---- the nightly report ----------------------------------------------------------------------


def test_the_last_nights_report_marks_the_repeated_finding(across_archive):
    html = (across_archive.outs[-1] / "report.html").read_text(encoding="utf-8")
    assert 'href="#earlier"' in html
    first = section(html, "first")
    row = first[first.index("has 8 seats in its options from 2026-10-01 12:00") :]
    row = row[: row.index("</tr>")]
    assert "seen on 4 nights" in row and "since 2026-11-01, last 2026-11-04" in row
    assert "explained" in row and "systems ticket 4411" in row and "M. Okafor" in row
    tonight = pl.read_parquet(across_archive.outs[-1] / "findings.parquet").height
    assert f"{tonight - 1:,} new</div>" in html and "1 seen on earlier nights too" in html
    # Every other finding of the night is new.
    assert first.count("tag-new") == min(tonight, 100) - 1


def test_the_last_nights_report_counts_earlier_findings_still_open(across_archive):
    """Counted by rule and age, not listed one by one (an archive of months holds
    hundreds); the escalated ones are listed, with their review."""
    html = (across_archive.outs[-1] / "report.html").read_text(encoding="utf-8")
    earlier = section(html, "earlier")
    assert across_archive.escalated[:12] in earlier
    assert "tag-escalated" in earlier
    assert "Paid a push as a win &lt;b&gt;twice&lt;/b&gt;" in earlier  # the note, as text
    tonight = pl.read_parquet(across_archive.outs[-1] / "findings.parquet")["finding_id"].to_list()
    by_rule = archive_query(
        across_archive.archive,
        "SELECT rule, count(*) FROM finding_status "
        "WHERE status IN ('open', 'escalated') AND in_force AND gaming_day < $last "
        "AND NOT list_contains($tonight, finding_id) GROUP BY rule",
        {"last": FIRST_NIGHT + timedelta(days=ACROSS_NIGHTS - 1), "tonight": tonight},
    )
    still_open = sum(n for _, n in by_rule)
    assert f"{still_open:,} earlier still open" in html
    counts = earlier[earlier.index('class="earlier-by-age"') :]
    counts = counts[: counts.index("</table>")]
    totals = {}
    for row in re.findall(r"<tr><td><strong>.*?</tr>", counts, flags=re.S):
        rule = re.search(r"<strong>(\w+)</strong>", row).group(1)
        cells = re.findall(r'<td class="num[^"]*">([^<]*)</td>', row)
        totals[rule] = int(cells[-2].replace(",", ""))  # the "all" column, before at stake
    assert totals == dict(by_rule)
    # Only the escalated are listed one by one, the oldest first.
    shown = earlier.count('<tr><td class="day">')
    assert shown == 1
    firsts = re.findall(r'<tr><td class="day">(\d{4}-\d\d-\d\d)</td>', earlier)
    assert firsts == sorted(firsts)
    assert "auditor report ARCHIVE --from FROM --to TO" in earlier


def test_the_report_reads_only_earlier_runs(across_archive):
    """Written before its run was added, and built again after: the same page."""
    written = (across_archive.outs[-1] / "report.html").read_text(encoding="utf-8")
    again = render_nightly(across_archive.outs[-1], archive=across_archive.archive)["report.html"]
    assert again == written


def test_without_an_archive_the_report_is_as_it_was(across_archive):
    pages = render_nightly(across_archive.outs[-1])
    for text in pages.values():
        assert 'id="earlier"' not in text and "<th>earlier nights</th>" not in text
        assert 'class="tag tag-' not in text


def test_an_archive_that_cannot_be_read_is_said_not_guessed(across_archive, tmp_path):
    broken = tmp_path / "archive"
    shutil.copytree(across_archive.archive, broken)
    run_set = next((broken / "runs").glob("*/set"))
    (run_set / "summary.txt").write_text("edited", encoding="utf-8")
    html = render_nightly(across_archive.outs[-1], archive=broken)["report.html"]
    assert "could not be read, so tonight's findings are not compared" in html
    assert "not as written" in html and 'class="tag tag-new"' not in html


def test_the_first_night_of_an_archive_has_every_finding_new(across_archive):
    html = (across_archive.outs[0] / "report.html").read_text(encoding="utf-8")
    assert "This is the first run of the archive" in html
    found = pl.read_parquet(across_archive.outs[0] / "findings.parquet").height
    assert f"{found:,} new</div>" in html and "the archive's first run" in html
    assert section(html, "first").count("tag-new") == found


# ---- the investigation across nights ----------------------------------------------------------


def test_a_dealer_across_nights_has_each_nights_findings(across_archive, tmp_path):
    target = write_archive_investigation(
        across_archive.archive,
        subject_of(dealer=across_archive.dealer),
        target=tmp_path / "dealer.html",
    )
    html = target.read_text(encoding="utf-8")
    expected = dict(
        archive_query(
            across_archive.archive,
            "SELECT strftime(gaming_day, '%Y-%m-%d'), count(*) FROM findings_current "
            "WHERE dealer_id = $d GROUP BY 1",
            {"d": across_archive.dealer},
        )
    )
    assert len(expected) >= 2
    listed = rows_by_night(section(html, "findings"), '<td><span class="sev')
    assert listed == expected
    nights = section(html, "nights")
    for day, n in expected.items():
        row = nights[nights.index(f'<td class="day">{day}</td>') :]
        assert f'<td class="num">{n}</td><td><span class="sev' in row[: row.index("</tr>")]
    assert "tag-escalated" in html and "Paid a push as a win &lt;b&gt;twice" in html
    assert section(html, "reviews").count('<tr><td class="num">') == 1
    # The page names both files a dealer's nights are read from.
    assert "<code>cells_rounds.parquet</code>" in html
    assert "<code>cells_dealers.parquet</code>" in html


def per_night(rows: pl.DataFrame) -> dict[str, int]:
    counted = rows.group_by("gaming_day").len().iter_rows()
    return {day.isoformat(): n for day, n in counted}


def test_a_dealers_rounds_come_from_each_nights_dataset(across_archive):
    beside = Beside("dealer")
    subject = subject_of(dealer=across_archive.dealer)
    html = render_archive_investigation(across_archive.archive, subject, beside)
    dealt = {}
    for night in across_archive.nights:
        rounds = pl.read_parquet(night / "rounds.parquet")
        n = rounds.filter(pl.col("dealer_id") == across_archive.dealer).height
        if n:
            dealt[night.name] = n
    assert len(dealt) >= 2
    # Every round in the CSV beside the page; on the page, those a finding names.
    listed = beside.files["dealer.rounds.csv"]
    assert per_night(listed) == dealt
    flagged = listed.filter(pl.col("findings").is_not_null())
    assert 0 < flagged.height < listed.height
    assert rows_by_night(section(html, "rounds"), "<td>2026-") == per_night(flagged)
    assert f"{listed.height} rounds in all, {flagged.height} of them" in section(html, "rounds")
    assert "dataset no longer in place" not in html


def test_a_patron_back_on_several_nights(across_archive):
    beside = Beside("patron")
    subject = subject_of(patron=across_archive.patron)
    html = render_archive_investigation(across_archive.archive, subject, beside)
    played = {}
    for night in across_archive.nights:
        wagers = pl.read_parquet(night / "wagers.parquet")
        n = wagers.filter(pl.col("patron_id") == across_archive.patron).height
        if n:
            played[night.name] = n
    assert len(played) == 3
    listed = beside.files["patron.wagers.csv"]
    assert per_night(listed) == played
    flagged = per_night(listed.filter(pl.col("findings").is_not_null()))
    assert rows_by_night(section(html, "wagers"), "<td>2026-") == flagged


def test_a_night_whose_dataset_moved_still_renders(across_archive):
    days = sorted(
        d.isoformat()
        for (d,) in archive_query(
            across_archive.archive,
            "SELECT DISTINCT gaming_day FROM findings_current WHERE dealer_id = $d",
            {"d": across_archive.dealer},
        )
    )
    moved = across_archive.nights[[n.name for n in across_archive.nights].index(days[0])]
    away = moved.with_name(moved.name + "-moved")
    moved.rename(away)
    try:
        html = render_archive_investigation(
            across_archive.archive, subject_of(dealer=across_archive.dealer)
        )
    finally:
        away.rename(moved)
    nights = section(html, "nights")
    row = nights[nights.index(f'<td class="day">{days[0]}</td>') :]
    assert "dataset no longer in place" in row[: row.index("</tr>")]
    assert f"No rounds or wagers for 1 night</span> ({days[0]})" in nights
    assert days[0] in rows_by_night(section(html, "findings"), '<td><span class="sev')
    assert days[0] not in rows_by_night(section(html, "rounds"), "<td>2026-")
    assert days[1] in rows_by_night(section(html, "rounds"), "<td>2026-")


def test_one_night_charts_that_night_alone(across_archive):
    ((table, day),) = archive_query(
        across_archive.archive,
        "SELECT located_table_id, gaming_day FROM findings_current WHERE impact <> 0 "
        "ORDER BY gaming_day, located_table_id LIMIT 1",
    )
    html = render_archive_investigation(
        across_archive.archive, subject_of(table=table, start=day, end=day)
    )
    chart = html[html.index("<svg") : html.index("</svg>")]
    labels = set(re.findall(r">\s*([^<>]*\d{4}[^<>]*)\s*<", chart))
    assert labels == {day.isoformat()}, labels
    assert f"Gaming day {day.isoformat()}" in html


def test_an_unknown_subject_is_a_clear_exit_2(across_archive, tmp_path):
    target = tmp_path / "nobody.html"
    with pytest.raises(ReportError, match="no dealer 'NOBODY' in the archive") as raised:
        write_archive_investigation(
            across_archive.archive, subject_of(dealer="NOBODY"), target=target
        )
    assert raised.value.exit_code == 2 and not target.exists()
    with pytest.raises(ReportError, match=r"nothing of dealer .* between 2030-01-01"):
        write_archive_investigation(
            across_archive.archive,
            subject_of(dealer=across_archive.dealer),
            date(2030, 1, 1),
            None,
            target,
        )
    with pytest.raises(ReportError, match="a round belongs to one night"):
        write_archive_investigation(
            across_archive.archive, subject_of(round_id="R1"), target=target
        )
    with pytest.raises(AuditorError, match="not an archive") as raised:
        write_archive_investigation(across_archive.outs[0], subject_of(dealer="D1"), target=target)
    assert raised.value.exit_code == 2


def test_the_same_archive_gives_the_same_page(across_archive):
    subject = subject_of(dealer=across_archive.dealer)
    first = render_archive_investigation(across_archive.archive, subject)
    assert render_archive_investigation(across_archive.archive, subject) == first


def test_chart_ticks_never_read_minus_zero():
    from auditor.report.across.page import _signed_count, _signed_dollars
    from auditor.report.charts import dollars_tick

    assert [_signed_count(v, None) for v in (-0.2, 0.0, 0.4, -1.0, 3.0)] == [
        "0", "0", "0", "−1", "+3",
    ]  # fmt: skip
    assert [_signed_dollars(v, None) for v in (-0.004, -0.3, 0.0, 1500.0)] == [
        "$0", "−$0.30", "$0", "+$1,500",
    ]  # fmt: skip
    assert dollars_tick(-12.5, signed=False) == "-$12.50"


def test_one_night_draws_no_running_total_of_a_single_point():
    from auditor.report.across.page import _money_chart

    night = {"day": FIRST_NIGHT, "over": Decimal("10.00"), "under": Decimal("5.00")}
    later = {"day": FIRST_NIGHT + timedelta(days=1), "over": Decimal("1.00"), "under": Decimal(0)}
    assert "to date" not in str(_money_chart([night]))
    assert "Money at stake to date" in str(_money_chart([night, later]))
