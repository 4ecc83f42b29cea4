"""The period's surveillance in the reports across nights: the planted month of
`test_period_surveillance` (a patron whose Dragon Bonus wagers win at about twice the
game's chance), one night of it audited again without that patron's wagers.

The period report lists the period's alerts, the planted patron's among them, and says
how to surveil a period none covers; the patron's investigation across nights shows the
alert and, night by night, the side wagers won beyond their chances as bars with the
running sum as a line, read from the kept counts of the runs in force (the re-audited
night from its re-audit); a clean patron's shows no alert. Both pages open in headless
Chromium running and fetching nothing.
"""

from __future__ import annotations

import re
import shutil
from datetime import date
from pathlib import Path

import duckdb
import polars as pl
import pytest

from auditor.archive.periods import surveil
from auditor.archive.store import add_run
from auditor.pipeline import run_audit
from auditor.report.across import write_archive_investigation
from auditor.report.across.data import gather_archive
from auditor.report.investigate import subject_of
from auditor.report.period import render_period_report, write_period_report
from auditor.report.render import pvalue, statistic
from auditor.surveillance.patrons import FAMILY_OF
from tests.support.browser import not_blank, watched_page
from tests.support.planted import DEALER, END, PATRON, START, copy_of_planted

REAUDITED = date(2026, 11, 2)


@pytest.fixture(scope="module")
def month(planted_month: Path, tmp_path_factory) -> dict:
    root = copy_of_planted(planted_month, tmp_path_factory.mktemp("period-alerts"))
    archive = root / "archive"
    unsurveilled = render_period_report(archive, START, END)
    # The second night again, from logs without the planted patron's wagers: its counts
    # give way to the re-audit's, which has none of theirs.
    fixed = root / "fixed"
    shutil.copytree(root / "data" / REAUDITED.isoformat(), fixed)
    wagers = pl.read_parquet(fixed / "wagers.parquet")
    kept = wagers.filter(pl.col("patron_id").is_null() | (pl.col("patron_id") != PATRON))
    assert kept.height < wagers.height
    kept.write_parquet(fixed / "wagers.parquet")
    run_audit(fixed, root / "again", report=False)
    add_run(archive, root / "again")
    surveil(archive, START, END)
    return {"root": root, "archive": archive, "unsurveilled": unsurveilled}


def _query(archive: Path, sql: str, params: dict | None = None) -> list[tuple]:
    with duckdb.connect(str(archive / "archive.duckdb"), read_only=True) as con:
        return con.execute(sql, params or {}).fetchall()


def _section(html: str, anchor: str) -> str:
    start = html.index(f'<h2 id="{anchor}">')
    end = html.find("<h2 ", start + 1)
    return html[start : end if end > 0 else len(html)]


def _planted_alert(archive: Path) -> dict:
    columns = ("statistic", "observed", "expected", "p_value", "q_value")
    rows = _query(
        archive,
        f"SELECT {', '.join(columns)} FROM period_alerts WHERE level = 'patron' AND key = $p "
        "AND statistic = 'dragon_bonus_win_rate' AND period_from = $s AND period_to = $e",
        {"p": PATRON, "s": START, "e": END},
    )
    assert len(rows) == 1
    return dict(zip(columns, rows[0], strict=True))


# ---- the period report -----------------------------------------------------------------------


def test_the_period_report_lists_the_planted_alert(month):
    html = render_period_report(month["archive"], START, END)
    shown = _section(html, "surveillance")
    alert = _planted_alert(month["archive"])
    rows = [r for r in shown.split("<tr>") if f"patron {PATRON}" in r]
    row = next(r for r in rows if 'title="dragon_bonus_win_rate"' in r)
    assert "Dragon Bonus wagers won" in row
    for value in (statistic(alert["observed"], alert["statistic"]),
                  statistic(alert["expected"], alert["statistic"]),
                  pvalue(alert["p_value"]), pvalue(alert["q_value"])):  # fmt: skip
        assert f">{value}<" in row, value
    (tests,) = _query(
        month["archive"],
        "SELECT count(*) FROM period_surveillance WHERE period_from = $s AND surveil_run = 1",
        {"s": START},
    )[0]
    assert f"surveil run 1; {tests:,} tests, " in shown
    assert "auditor surveil" not in shown


def test_without_a_surveilled_period_the_report_says_how(month):
    shown = _section(month["unsurveilled"], "surveillance")
    assert f"<code>auditor surveil ARCHIVE --from {START} --to {END}</code>" in shown
    assert "period-alerts" not in shown


# ---- the patron's investigation --------------------------------------------------------------


def _side_wins_by_night(archive: Path) -> dict[date, float]:
    """Per night, the planted patron's side wagers won less expected, from the kept counts
    of the run in force."""
    runs = _query(archive, "SELECT DISTINCT gaming_day, run_id FROM coverage_current")
    excess = {}
    for day, run_id in runs:
        cells = pl.read_parquet(archive / "runs" / run_id / "set" / "cells_patrons.parquet")
        side = cells.filter((pl.col("patron_id") == PATRON) & pl.col("bet").is_in(list(FAMILY_OF)))
        if side["n"].sum():
            excess[day] = float(side["wins"].sum() - side["expected_wins"].sum())
    return dict(sorted(excess.items()))


def _numbers(path_data: str) -> list[tuple[float, float]]:
    values = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", path_data)]
    return list(zip(values[::2], values[1::2], strict=True))


def _group_path(svg: str, gid: str) -> str:
    found = re.search(rf'<g id="{gid}">\s*<path d="([^"]+)"', svg)
    assert found, gid
    return found.group(1)


def test_the_patrons_investigation_shows_the_alert_and_the_running_sum(month):
    archive = month["archive"]
    html = write_archive_investigation(
        archive, subject_of(patron=PATRON), target=month["root"] / "patron.html"
    ).read_text(encoding="utf-8")
    alerts = _section(html, "period-surveillance")
    row = next(r for r in alerts.split("<tr") if 'title="dragon_bonus_win_rate"' in r)
    assert '<span class="bad">alert</span>' in row
    assert pvalue(_planted_alert(archive)["q_value"]) in row
    # Night by night, the runs in force: the re-audited night has none of the patron's.
    expected = _side_wins_by_night(archive)
    assert REAUDITED not in expected and len(expected) >= 25
    found = gather_archive(archive, subject_of(patron=PATRON))
    wins = next(m for m in found.against.measures if m.name == "side-wins")
    assert [r["day"] for r in wins.rows] == list(expected)
    assert [r["excess"] for r in wins.rows] == pytest.approx(list(expected.values()))
    total = sum(expected.values())
    assert wins.rows[-1]["to_date"] == pytest.approx(total)
    assert total > 30  # about as many wins again as the game gives
    superseded = _query(
        archive,
        "SELECT run_id FROM superseded_runs WHERE days_superseded > 0",
    )
    assert len(superseded) == 1
    assert superseded[0][0] not in {r for runs in found.against.runs.values() for r in runs}
    # The chart: a bar per night, its height the night's excess, and the running sum.
    svg = re.search(r'<svg class="chart-svg".*?</svg>', _section(html, "against"), re.S)
    assert svg is not None
    drawn = svg.group(0)
    assert "Side wagers won, beyond their chances" in drawn
    nights = range(len(expected))
    bars = [_numbers(_group_path(drawn, f"against-side-wins-night-{i}")) for i in nights]
    assert f"against-side-wins-night-{len(expected)}" not in drawn
    heights = [max(y for _, y in b) - min(y for _, y in b) for b in bars]
    values = [abs(v) for v in expected.values()]
    scale = sum(heights) / sum(values)
    assert heights == pytest.approx([scale * v for v in values], abs=0.05)
    bases = [max(y for _, y in b) if v > 0 else min(y for _, y in b)
             for b, v in zip(bars, expected.values(), strict=True)]  # fmt: skip
    assert max(bases) - min(bases) < 0.05  # each bar stands on zero, up or down by its sign
    line = _numbers(_group_path(drawn, "against-side-wins-to-date"))
    assert len(line) == len(expected)
    running = [wins.rows[i]["to_date"] for i in range(len(line))]
    slope = (line[-1][1] - line[0][1]) / (running[-1] - running[0])
    assert slope < 0  # up the page as the sum grows
    assert [y for _, y in line] == pytest.approx(
        [line[0][1] + slope * (r - running[0]) for r in running], abs=0.05
    )
    assert "Money won, beyond the game" in html


def test_the_dealers_investigation_shows_the_hold_alert_and_the_money_by_night(month):
    archive = month["archive"]
    html = write_archive_investigation(
        archive, subject_of(dealer=DEALER), target=month["root"] / "dealer.html"
    ).read_text(encoding="utf-8")
    row = next(r for r in _section(html, "period-surveillance").split("<tr") if "hold" in r)
    assert '<span class="bad">alert</span>' in row
    # Night by night: the patrons' money won at the dealer's rounds beyond the game's,
    # from each run in force's counts per dealer; summed, the two points paid out.
    runs = _query(archive, "SELECT DISTINCT gaming_day, run_id FROM coverage_current")
    expected = {}
    for day, run_id in sorted(runs):
        cells = pl.read_parquet(archive / "runs" / run_id / "set" / "cells_dealers.parquet")
        mine = cells.filter(pl.col("dealer_id") == DEALER)
        expected[day] = float(mine["net"].sum() - mine["expected"].sum())
    found = gather_archive(archive, subject_of(dealer=DEALER))
    money = next(m for m in found.against.measures if m.name == "patrons-won")
    assert [r["day"] for r in money.rows] == list(expected)
    assert [r["excess"] for r in money.rows] == pytest.approx(list(expected.values()))
    assert money.rows[-1]["to_date"] > 3_000_000  # of some $270 million wagered
    against = _section(html, "against")
    assert "Patrons&#39; money won, beyond the game" in against
    assert "the money the patrons won at the dealer's rounds" in against


def test_a_clean_patron_shows_no_alert(month):
    archive = month["archive"]
    ((clean, tests),) = _query(
        archive,
        "SELECT key, count(*) AS n FROM period_surveillance WHERE level = 'patron' "
        "AND key <> $p GROUP BY key HAVING NOT bool_or(alert) ORDER BY n DESC, key LIMIT 1",
        {"p": PATRON},
    )
    html = write_archive_investigation(
        archive, subject_of(patron=clean), target=month["root"] / "clean.html"
    ).read_text(encoding="utf-8")
    shown = _section(html, "period-surveillance")
    assert f"No alert in {tests} tests naming this patron" in shown
    assert '<span class="bad">alert</span>' not in shown
    assert '<svg class="chart-svg"' in _section(html, "against")


# ---- in a browser ---------------------------------------------------------------------------


def _look(browser, page_file: Path, anchors: dict[str, str]) -> dict:
    page, seen = watched_page(browser, page_file.as_uri())
    for anchor, name in anchors.items():
        page.locator(f"#{anchor}").scroll_into_view_if_needed()
        page.evaluate(f"document.getElementById('{anchor}').scrollIntoView()")
        shot = page.screenshot(full_page=False)
        # Kept beside the page in the test's temporary folder, to be looked at after a failure.
        page_file.with_name(f"period-{name}.png").write_bytes(shot)
        seen[name] = shot
    seen["charts"] = page.locator("#against ~ .charts .chart svg").count()
    page.close()
    seen["url"] = page_file.as_uri()
    return seen


def test_both_pages_open_offline_with_no_error(browser, month):
    root = month["root"]
    report = write_period_report(month["archive"], START, END, None, root / "period.html")
    patron = write_archive_investigation(
        month["archive"], subject_of(patron=PATRON), target=root / "patron-page.html"
    )
    unsurveilled = root / "unsurveilled.html"
    unsurveilled.write_text(month["unsurveilled"], encoding="utf-8")
    for page_file, anchors in (
        (report, {"surveillance": "report-alerts"}),
        (unsurveilled, {"surveillance": "report-unsurveilled"}),
        (patron, {"against": "patron-chart", "period-surveillance": "patron-alerts"}),
    ):
        seen = _look(browser, page_file, anchors)
        assert [m for m in seen["console"] if m[0] in ("error", "warning")] == []
        assert seen["errors"] == []
        assert seen["requests"] == [seen["url"]]
        for name in anchors.values():
            assert not_blank(seen[name])
        if page_file == patron:
            assert seen["charts"] == 2
