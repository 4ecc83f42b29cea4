"""The period report over an archive: its figures are the archive's own (checked against
SQL over the catalog and against the runs' files), a re-audit's superseded findings are
not counted, the property filter holds, an empty period renders, and a bad period or
property is an exit-2 error. (The page in headless Chromium, running and fetching nothing,
and printed: tests/e2e/test_period_report_browser.py, on the same archive.)

The archive (`period_archive`, tests/support/archives.py): five simulated nights with
faults, the third audited again from logs with one overpaid or underpaid wager taken out,
one table of the fifth night moved to a property whose id is hostile markup, and a few
reviews (one of them of the superseded finding).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import time
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import polars as pl
import pytest

from auditor.archive.catalog import rebuild_catalog
from auditor.errors import AuditorError
from auditor.output.sandboxed_query import QueryError
from auditor.report.period import (
    PeriodReportError,
    default_name,
    figures,
    gather_period,
    parse_period,
    render_period_report,
    write_period_report,
)
from auditor.report.period import data as period_data
from auditor.report.render import short, statistic
from tests.support.archives import (
    FIRST,
    HOSTILE_PROPERTY,
    LAST,
    REAUDITED,
    SCOPE_SQL,
    sql_rows,
)


@pytest.fixture(scope="module")
def whole(period_archive) -> dict:
    return gather_period(period_archive["folder"], FIRST, LAST)


def test_the_figures_are_the_catalogs(period_archive, whole):
    folder = period_archive["folder"]
    per_day = dict(sql_rows(folder, SCOPE_SQL.format(what="gaming_day, count(*)") + " GROUP BY 1"))
    assert {r["start"]: r["findings"] for r in whole["over_time"]["rows"]} == per_day
    per_rule = dict(sql_rows(folder, SCOPE_SQL.format(what="rule, count(*)") + " GROUP BY 1"))
    assert {r["label"]: r["findings"] for r in whole["by_rule"].rows} == per_rule
    over, under = sql_rows(
        folder,
        SCOPE_SQL.format(
            what="sum(impact) FILTER (WHERE impact > 0), -sum(impact) FILTER (WHERE impact < 0)"
        ),
    )[0]
    glance = whole["glance"]
    assert (glance["over"], glance["under"]) == (over or Decimal(0), under or Decimal(0))
    severity = dict(sql_rows(folder, SCOPE_SQL.format(what="severity, count(*)") + " GROUP BY 1"))
    assert dict(glance["severity"]) == {s: severity.get(s, 0) for s in ("high", "medium", "low")}
    assert glance["findings"] == sum(per_day.values())
    assert (glance["nights"], glance["days"], glance["runs"], glance["reaudits"]) == (5, 5, 6, 1)
    assert glance["runs_in_force"] == 5 and glance["superseded_runs"] == 1
    per_dealer = dict(
        sql_rows(folder, SCOPE_SQL.format(what="dealer_id, count(*)") + " GROUP BY 1 ORDER BY 1")
    )
    per_dealer.pop(None, None)
    shown = {r["label"]: r["findings"] for r in whole["by_dealer"].rows}
    assert sum(shown.values()) + whole["by_dealer"].more_findings == sum(per_dealer.values())
    assert all(per_dealer[d] == n for d, n in shown.items())


def test_superseded_findings_are_not_counted(period_archive, whole):
    gone = period_archive["gone"]
    folder = period_archive["folder"]
    everything = sql_rows(
        folder,
        "SELECT count(*) FROM findings_every_run WHERE gaming_day BETWEEN DATE '2026-11-01' "
        "AND DATE '2026-11-05'",
    )[0][0]
    assert whole["glance"]["findings"] < everything
    ids = {f["finding_id"] for f in whole["open"]["rows"]}
    assert gone["finding_id"] not in ids
    dropped = sql_rows(
        folder,
        "SELECT count(DISTINCT finding_id) FROM findings_every_run "
        f"WHERE gaming_day = DATE '{REAUDITED}' "
        "AND finding_id NOT IN (SELECT finding_id FROM findings_current)",
    )[0][0]
    assert whole["superseded_findings"] == dropped >= 1
    night = next(r for r in whole["over_time"]["rows"] if r["start"] == REAUDITED)
    in_force = sql_rows(
        folder,
        f"SELECT count(*) FROM findings_current WHERE gaming_day = DATE '{REAUDITED}'",
    )[0][0]
    assert night["findings"] == in_force
    page = render_period_report(folder, FIRST, LAST)
    assert gone["finding_id"][:20] not in page


def test_reviews_count_the_periods_findings_in_force(period_archive, whole):
    reviews = whole["reviews"]
    by_status = {s: n for s, n, _ in reviews["by_status"]}
    total = whole["glance"]["findings"]
    assert by_status["explained"] == 2 and by_status["escalated"] == 1
    assert by_status["corrected"] == 0  # the corrected finding was superseded
    assert by_status["open"] == total - 3
    people = {p["by"]: p for p in reviews["people"]}
    assert people["J. Doe"]["explained"] == 2 and people["A. Smith"]["escalated"] == 1
    assert reviews["records"] == 3
    # The same statuses and first nights as the catalog's finding_status view.
    catalog = dict(
        sql_rows(
            period_archive["folder"],
            "SELECT finding_id, status || ' ' || first_night FROM finding_status "
            f"WHERE finding_id IN ({SCOPE_SQL.format(what='finding_id')})",
        )
    )
    still = whole["open"]
    assert {f["finding_id"]: f"{f['status']} {f['first_night']}" for f in still["rows"]} == {
        i: text for i, text in catalog.items() if text.split()[0] in ("open", "escalated")
    }
    assert still["total"] == total - 2 and still["escalated"] == 1
    ages = [(f["first_night"], f["age"]) for f in still["rows"]]
    assert all(age == (LAST - first).days for first, age in ages)
    assert sum(n for _, n in still["buckets"]) == still["total"]


def _in_force_statuses(folder: Path, statuses: str) -> str:
    return (
        f"FROM finding_status WHERE in_force AND status IN ({statuses}) "
        f"AND finding_id IN ({SCOPE_SQL.format(what='finding_id')})"
    )


def test_still_open_is_the_catalogs_open_count(period_archive, whole):
    folder = period_archive["folder"]
    status_open = sql_rows(folder, "SELECT count(*) " + _in_force_statuses(folder, "'open'"))[0][0]
    escalated = sql_rows(folder, "SELECT count(*) " + _in_force_statuses(folder, "'escalated'"))
    assert escalated[0][0] == whole["open"]["escalated"] == 1  # the escalated are not open
    assert whole["open"]["status_open"] == status_open
    assert whole["open"]["total"] == status_open + 1
    page = render_period_report(folder, FIRST, LAST)
    tile = re.search(r'Still open</div><div class="value">([0-9,]+)</div>', page)
    assert tile is not None and int(tile[1].replace(",", "")) == status_open
    assert "besides 1 escalated" in page


def _open_ids_on_page(page: str) -> list[str]:
    table = page[page.index('<table class="open">') :]
    table = table[: table.index("</table>")]
    rows = re.findall(r"<tr>(.*?)</tr>", table[table.index("<tbody>") :], flags=re.S)
    return [re.findall(r'<td class="id">([^<]*)</td>', row)[-1] for row in rows]


def test_open_findings_by_money_at_stake_within_an_age_band(period_archive):
    folder = period_archive["folder"]
    listed = sql_rows(
        folder,
        "SELECT finding_id, impact, first_night "
        + _in_force_statuses(folder, "'open', 'escalated'"),
    )

    def band(first: date) -> int:
        return sum((LAST - first).days > high for high, _ in figures.AGE_BUCKETS)

    expected = sorted(
        listed,
        key=lambda f: (-band(f[2]), f[1] is None, -abs(f[1] or 0), f[0]),
    )
    by_first_night = sorted(listed, key=lambda f: (f[2], f[0]))
    assert expected != by_first_night  # the fixture buries a large sum under older findings
    shown = _open_ids_on_page(render_period_report(folder, FIRST, LAST))
    assert shown == [short(f[0]) for f in expected][: len(shown)] and len(shown) > 2


def test_open_findings_keep_the_oldest_age_band_first():
    days = [date(2026, 10, 1), date(2026, 11, 4), date(2026, 11, 4), date(2026, 11, 4)]
    found = pl.DataFrame(
        {
            "finding_id": ["old-small", "new-none", "new-large", "new-small"],
            "status": ["open", "open", "escalated", "open"],
            "severity": ["low"] * 4,
            "first_night": days,
            "gaming_day": days,
            "impact": [Decimal("5.00"), None, Decimal("-37714.00"), Decimal("12.00")],
        },
        schema_overrides={"impact": pl.Decimal(18, 2)},
    )
    still = figures.open_by_age(found, LAST)
    assert [f["finding_id"] for f in still["rows"]] == [
        "old-small", "new-large", "new-small", "new-none",
    ]  # fmt: skip
    assert (still["total"], still["status_open"], still["escalated"]) == (4, 3, 1)


def test_the_header_names_the_archive_by_its_absolute_path(period_archive, monkeypatch):
    folder = period_archive["folder"]
    monkeypatch.chdir(folder.parent)
    page = render_period_report(Path(folder.name), FIRST, LAST)
    assert f"Archive {folder.resolve()}</p>" in page
    assert f"Archive {folder.name}</p>" not in page


def test_a_single_week_or_night_is_written_out_not_charted(period_archive, whole):
    folder = period_archive["folder"]
    monday = date(2026, 11, 2)
    several = render_period_report(folder, FIRST, LAST)
    assert 'id="hold-week-' in several and "<h3>Week by week</h3>" in several
    assert 'id="per-night-' in several and "Every table together" not in several
    week = gather_period(folder, monday, LAST)
    page = render_period_report(folder, monday, LAST)
    assert 'id="hold-week-' not in page and "<h3>Week by week</h3>" not in page
    hold = week["holds"]["one_week"]
    assert hold["week"] == monday
    kept = statistic(hold["hold"], "hold")
    assert f"Every table together, one week from {monday}: hold {kept}" in page
    assert 'id="per-night-' in page  # four nights are still a series
    night = render_period_report(folder, monday, monday)
    assert 'id="per-night-' not in night and 'id="money-per-night-' not in night
    assert 'id="per-rule-' in night  # ranked bars are no series


def test_repeats_are_the_rules_found_on_enough_nights(whole, monkeypatch):
    # Five nights rarely give one rule three nights at a dealer: count from two here.
    findings = pl.DataFrame(
        [
            {"dealer_id": d, "table_id": t, "rule": r, "gaming_day": FIRST + timedelta(days=n),
             "impact": None}
            for d, t, r, n in [("D1", "T1", "PAY001", 0), ("D1", "T1", "PAY001", 1),
                               ("D1", "T2", "PAY001", 1), ("D2", "T2", "TOT001", 0)]
        ],
        schema_overrides={"impact": pl.Decimal(18, 2)},
    )  # fmt: skip
    monkeypatch.setattr(figures, "REPEAT_NIGHTS", 2)
    rows, more = figures.repeats(findings)
    assert more == 0
    assert [(r["kind"], r["who"], r["rule"], r["nights"], r["findings"]) for r in rows] == [
        ("dealer", "D1", "PAY001", 2, 3),
        ("table", "T1", "PAY001", 2, 2),
    ]
    assert whole["repeat_nights"] == 3


def test_hold_is_the_runs_in_force_weighted_by_the_money_wagered(period_archive, whole):
    folder = period_archive["folder"]
    in_force = sql_rows(
        folder,
        "SELECT DISTINCT run_id FROM coverage_current WHERE gaming_day BETWEEN "
        "DATE '2026-11-01' AND DATE '2026-11-05'",
    )
    stake = re.compile(r"of \$([0-9,]+\.[0-9]+) wagered")
    wagered: dict[str, float] = {}
    kept: dict[str, float] = {}
    for (run_id,) in in_force:
        tests = pl.read_parquet(folder / "runs" / run_id / "set" / "surveillance.parquet")
        table_holds = (pl.col("level") == "table") & (pl.col("statistic") == "hold")
        for t in tests.filter(table_holds).iter_rows(named=True):
            money = float(stake.search(t["detail"])[1].replace(",", ""))
            wagered[t["key"]] = wagered.get(t["key"], 0.0) + money
            kept[t["key"]] = kept.get(t["key"], 0.0) + t["observed"] * money
    shown = {h["table_id"]: h for h in whole["holds"]["tables"]}
    assert set(shown) == set(wagered)
    for table, h in shown.items():
        assert h["wagered"] == pytest.approx(wagered[table], abs=0.01)
        assert h["hold"] == pytest.approx(kept[table] / wagered[table], rel=1e-9)
        assert h["weeks"] == 2  # Sunday 1 November, then the week from Monday 2 November
    assert [w["week"] for w in whole["holds"]["weeks"]][:2] == [FIRST, date(2026, 11, 2)]
    assert whole["holds"]["unread"] == 0


def test_the_property_filter(period_archive):
    folder = period_archive["folder"]
    one = gather_period(folder, FIRST, LAST, "MD-PROP-1")
    expected = sql_rows(
        folder,
        SCOPE_SQL.format(what="count(*)") + " AND property_id = 'MD-PROP-1'",
    )[0][0]
    assert one["glance"]["findings"] == expected
    assert {r["label"] for r in one["by_property"].rows} <= {"MD-PROP-1"}
    assert all(t["property_id"] == "MD-PROP-1" for t in one["holds"]["tables"])
    hostile = gather_period(folder, FIRST, LAST, HOSTILE_PROPERTY)
    assert hostile["glance"]["nights"] == 1 and hostile["glance"]["tables"] == 1


def test_the_page_shows_the_figures(period_archive, whole):
    page = render_period_report(period_archive["folder"], FIRST, LAST)
    glance = whole["glance"]
    assert f"{glance['findings']:,}" in page
    assert f"${glance['over'] + glance['under']:,.2f}" in page
    assert "Content-Security-Policy" in page and "<script" not in page and "<img" not in page
    assert "on 3 nights or more" in page
    # The same archive gives the same bytes.
    assert render_period_report(period_archive["folder"], FIRST, LAST) == page


def test_a_hostile_property_id_shows_as_text(period_archive):
    page = render_period_report(period_archive["folder"], FIRST, LAST, HOSTILE_PROPERTY)
    assert "<script" not in page and "\u202e" not in page
    assert "property &lt;script&gt;alert(1)&lt;/script&gt;\\u202e" in page


def test_an_empty_period_says_so(period_archive, tmp_path):
    target = write_period_report(
        period_archive["folder"], date(2027, 1, 1), date(2027, 1, 31), None,
        tmp_path / "empty.html", False,
    )  # fmt: skip
    page = target.read_text()
    assert "No nights in this period" in page
    assert f"It covers the gaming days {FIRST} to {LAST}" in page


def test_nights_without_findings_render(period_archive, monkeypatch):
    fixed = period_data.fix_scope

    def without_findings(catalog, period):
        fixed(catalog, period)
        catalog.con.execute("DELETE FROM period_findings")

    monkeypatch.setattr(period_data, "fix_scope", without_findings)
    page = render_period_report(period_archive["folder"], FIRST, LAST)
    assert "No findings in this period: only the hold is charted." in page
    assert page.count('class="chart"') == 1


@pytest.mark.parametrize(
    "start, end, prop, said",
    [
        (LAST, FIRST, None, "is after TO"),
        (FIRST, LAST, "NO-SUCH-PROP", "no property 'NO-SUCH-PROP' in the archive"),
    ],
)
def test_a_bad_period_or_property_is_an_exit_2_error(
    period_archive, tmp_path, start, end, prop, said
):
    target = tmp_path / "report.html"
    with pytest.raises(PeriodReportError, match=re.escape(said)) as raised:
        write_period_report(period_archive["folder"], start, end, prop, target, False)
    assert raised.value.exit_code == 2 and not target.exists()


def test_periods_names_and_places(tmp_path, monkeypatch, period_archive):
    assert parse_period("2026-11-01..2026-11-05") == (FIRST, LAST)
    for bad in ("2026-11-01", "2026-11-05..2026-11-01", "2026-13-01..2026-11-05"):
        with pytest.raises(PeriodReportError):
            parse_period(bad)
    assert default_name(FIRST, LAST, None, False) == "period-2026-11-01-2026-11-05.html"
    assert default_name(FIRST, LAST, "../A B", True) == "period-2026-11-01-2026-11-05-A_B.pdf"
    with pytest.raises(QueryError):
        write_period_report(tmp_path / "nothing", FIRST, LAST, None, tmp_path / "x.html", False)
    with pytest.raises(AuditorError, match="no folder"):
        write_period_report(period_archive["folder"], FIRST, LAST, None, tmp_path / "no" / "x.html")
    monkeypatch.chdir(tmp_path)
    written = write_period_report(period_archive["folder"], FIRST, LAST, "MD-PROP-1")
    assert written == Path("period-2026-11-01-2026-11-05-MD-PROP-1.html") and written.is_file()


# ---- a year --------------------------------------------------------------------------------------


def _year_archive(template: Path, folder: Path, nights: int, copies: int) -> None:
    """A year made of the template's runs in force: each night one of them with its gaming
    day moved, its tables, dealers and findings copied `copies` times under new ids; every
    36th night audited again. Only the newest runs carry their catalog (the rules' titles)."""
    in_force = sql_rows(template, "SELECT DISTINCT run_id FROM coverage_current ORDER BY 1")
    sources = [run_id for (run_id,) in in_force]
    (folder / "runs").mkdir(parents=True)
    shutil.copy(template / "archive.json", folder / "archive.json")
    (folder / "reviews.jsonl").touch()
    for n in range(nights):
        day = date(2026, 1, 1) + timedelta(days=n)
        source = template / "runs" / sources[n % len(sources)] / "set"
        for again in range(1 + (n % 36 == 5)):
            run_id = hashlib.sha256(f"{day}/{again}".encode()).hexdigest()[:32]
            place = folder / "runs" / run_id / "set"
            place.mkdir(parents=True)
            frames = _copied_night(source, day, f"{n:03d}{again}", copies)
            for name, frame in frames.items():
                frame.write_parquet(place / f"{name}.parquet")
            if n >= nights - 3:
                shutil.copy(source / "audit.duckdb", place / "audit.duckdb")
            files = {p.name: {"bytes": p.stat().st_size} for p in place.iterdir()}
            (place / "manifest.json").write_text(json.dumps({"tool": "auditor", "files": files}))
            started = datetime.combine(day + timedelta(days=1 + again), datetime.min.time(), UTC)
            record = {
                "run_id": run_id,
                "started_at": started.isoformat(),
                "gaming_days": [day.isoformat()],
                "tables": sorted(frames["coverage"]["table_id"].unique()),
                "properties": sorted(frames["coverage"]["property_id"].unique()),
                "findings": frames["findings"].height,
            }
            (place.parent / "run.json").write_text(json.dumps(record))
    rebuild_catalog(folder)


NIGHT_FILES = (
    "findings", "located", "coverage", "surveillance", "alerts", "quarantine", "row_counts",
)  # fmt: skip


def _copied_night(source: Path, day: date, tag: str, copies: int) -> dict[str, pl.DataFrame]:
    read = {name: pl.read_parquet(source / f"{name}.parquet") for name in NIGHT_FILES}

    def copied(name: str, ids: tuple[str, ...], frame: pl.DataFrame | None = None):
        frame = read[name] if frame is None else frame
        return pl.concat(
            frame.with_columns(pl.col(c) + f"-{k:02d}" for c in ids) for k in range(copies)
        )

    on_the_day = pl.lit(day).alias("gaming_day")
    tests = read["surveillance"]
    per_table = tests.filter(pl.col("level") == "table")
    return {
        "findings": copied("findings", ("table_id",)).with_columns(pl.col("finding_id") + tag),
        "located": copied("located", ("table_id", "dealer_id")).with_columns(
            pl.col("finding_id") + tag, on_the_day
        ),
        "coverage": copied("coverage", ("table_id",)).with_columns(on_the_day),
        "surveillance": pl.concat(
            [
                tests.filter(pl.col("level") != "table"),
                copied("surveillance", ("key", "table_id"), per_table),
            ]
        ),
        **{name: read[name] for name in ("alerts", "quarantine", "row_counts")},
    }


@pytest.mark.skipif(
    not os.environ.get("AUDITOR_YEAR_ARCHIVE"),
    reason="a year's archive (365 nights, 120 tables; about a minute): set AUDITOR_YEAR_ARCHIVE=1",
)
def test_a_year_renders_in_time_and_size(period_archive, tmp_path):
    year = tmp_path / "year"
    _year_archive(period_archive["folder"], year, nights=365, copies=10)
    began = time.perf_counter()
    target = write_period_report(year, date(2026, 1, 1), date(2026, 12, 31), None,
                                 tmp_path / "year.html")  # fmt: skip
    took = time.perf_counter() - began
    size = target.stat().st_size
    print(f"a year: {took:.1f} s, {size:,} bytes")
    assert took < 30 and size < 5_000_000
    assert "Week by week" in target.read_text()


def test_a_count_chart_ticks_only_whole_findings() -> None:
    """Two findings and one: the axis reads 0, 1, 2, never 0.25 or 1.5 of a finding."""
    import re

    from auditor.report.period import charts as period_charts

    drawn = period_charts.ranked_bars(
        "per-rule", "Findings per rule", ["PAY002", "COM001"], {"high": [2, 1]}, "findings",
        {"high": "#b22222"},
    )  # fmt: skip
    ticks = re.findall(r">(\d+(?:\.\d+)?)<", str(drawn))
    assert ticks and all("." not in tick for tick in ticks), ticks


def test_a_money_chart_names_only_the_sides_it_draws() -> None:
    from datetime import date
    from decimal import Decimal

    from auditor.report.across import page as across_page
    from auditor.report.period import charts as period_charts

    days = [date(2026, 11, 1), date(2026, 11, 2)]
    # The period chart's title names both sides; its legend only the side drawn.
    overpaid_only = str(period_charts.money_per_night("m", days, [10.0, 5.0], [0.0, 0.0]))
    both = str(period_charts.money_per_night("m", days, [10.0, 5.0], [1.0, 0.0]))
    assert overpaid_only.count("underpaid") == 1 and both.count("underpaid") == 2
    nights = [{"day": d, "over": Decimal("12.50"), "under": Decimal(0)} for d in days]
    across = str(across_page._money_chart(nights))
    assert "overpaid" in across and "underpaid" not in across
    nights[1]["under"] = Decimal("3.00")
    assert "underpaid" in str(across_page._money_chart(nights))
