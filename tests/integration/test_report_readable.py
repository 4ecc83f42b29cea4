"""The reports read as one product: money in one format, times with their zone, check
texts as HTML, statistics in words, errors in one colour and nothing at zero coloured;
each shoe finding's evidence about its own cards; a chart never stretched over years for
one round, and saying what it leaves out."""

from __future__ import annotations

import re
from collections import OrderedDict
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from auditor.check_docs import check_docs
from auditor.packs.model import load_all
from auditor.pipeline import run_audit
from auditor.report import charts, data, evidence, render
from auditor.report.chart_fit import ROUNDS, _move_plots_in, _wrap_titles, fit
from auditor.report.charts import time_span
from auditor.report.investigate import Subject, render_investigation
from auditor.report.nightly import CHART_BARS, FIRST_FINDINGS, render_nightly
from tests.support.paths import REPO, SAMPLE

NAIVE_TIME = re.compile(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d(?::\d\d)?(?:\.\d+)?(?![\d:.]| ?UTC)")


@pytest.fixture(scope="module")
def night(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("readable") / "out"
    run_audit(SAMPLE, out)
    return out


def visible_text(html: str) -> str:
    """The words of a page, without its tags, styles and attribute values."""
    html = re.sub(r"<style>.*?</style>|<svg.*?</svg>", " ", html, flags=re.S)
    return re.sub(r"<[^>]+>", " ", html)


# ---- one money format, one time format ------------------------------------------------------


@pytest.mark.parametrize(
    ("written", "read"),
    [
        ("won $-6,250.00 on 51 wagers", "won -$6,250.00 on 51 wagers"),
        ("logged $43719.00 (underpaid $5.00)", "logged $43,719.00 (underpaid $5.00)"),
        ("net -$1,234.50", "net -$1,234.50"),
        ("placed at 2026-11-24 18:33:48.137000,", "placed at 2026-11-24 18:33:48.137 UTC,"),
        ("by 2026-11-24 18:33:42.000000", "by 2026-11-24 18:33:42 UTC"),
        ("options from 2026-11-24 12:01", "options from 2026-11-24 12:01:00 UTC"),
        ("dealt 2026-11-24 18:13:59 UTC", "dealt 2026-11-24 18:13:59 UTC"),
        ("placed at 2026-11-24 18:33:48.137000 UTC,", "placed at 2026-11-24 18:33:48.137 UTC,"),
        ("at 2026-11-24 18:33:48 UTC.", "at 2026-11-24 18:33:48 UTC."),
        ("from 2026-11-24 12:01 UTC (9 seats)", "from 2026-11-24 12:01:00 UTC (9 seats)"),
        ("no money, no time: seat 3, 5.246 s", "no money, no time: seat 3, 5.246 s"),
        ("a dealer $x$ and T$5", "a dealer $x$ and T$5"),
    ],
)
def test_texts_write_money_and_times_as_the_pages_do(written, read):
    assert render.text(written) == read


def test_check_docs_render_as_html_not_markdown():
    html = str(render.doc("Not `commission_percent` of *the* amount <b>&</b> snake_case_name"))
    assert html == (
        "Not <code>commission_percent</code> of <em>the</em> amount "
        "&lt;b&gt;&amp;&lt;/b&gt; snake_case_name"
    )
    # Markup inside backticks is escaped like the rest; a lone backtick stays text.
    assert str(render.doc("`<script>` and ` alone")) == "<code>&lt;script&gt;</code> and ` alone"
    for check in check_docs():
        for words in (check.what, check.why, check.citation):
            assert "`" not in str(render.doc(words)), check.code


def test_statistics_are_named_in_words():
    assert render.statistic_name("dragon_bonus_win_rate") == "Dragon Bonus wagers won"
    assert render.statistic_name("findings_per_1000_rounds") == "findings per 1,000 rounds"
    assert render.statistic_name("something_new") == "something new"


# ---- evidence about its own finding -----------------------------------------------------------


def shoe_evidence(night: Path) -> list[evidence.Evidence]:
    catalog = data.open_report_catalog(night)
    try:
        found = data.located(catalog, patrons=False)
        shoe = found.filter(pl.col("rule").str.starts_with("SHO"))
        checks = data.checks(catalog)
        sources, _ = evidence.load_sources(catalog, shoe, found, checks, load_all())
        return [evidence.build(f, sources) for f in shoe.iter_rows(named=True)]
    finally:
        catalog.close()


def named_cards(ev: evidence.Evidence) -> set[tuple[str, str | None]]:
    """What a shoe finding names, as (how, what) pairs a reconciliation line must show."""
    f = ev.finding
    if f["rule"] == "SHO011":
        position = re.search(r"card (\d+) of the card_sequence", f["message"])
        return {("position", position.group(1)), ("logged", f["logged"])}
    if f["rule"] == "SHO014":
        return {("logged", c) for c in f["logged"].split(": ", 1)[1].split()}
    if f["rule"] == "SHO009":
        return {("logged", f["logged"].split()[0])}
    if f["rule"] in ("SHO005", "SHO006"):
        return {("where", "burn card")}
    return set()


def test_each_shoe_findings_evidence_shows_the_cards_it_names(night):
    built = shoe_evidence(night)
    checked = 0
    for ev in built:
        wanted = named_cards(ev)
        if not wanted or ev.reconciliation is None:
            continue
        shown = {("position", str(line.position)) for line in ev.reconciliation}
        shown |= {("logged", line.logged) for line in ev.reconciliation}
        shown |= {("where", line.where) for line in ev.reconciliation}
        assert wanted <= shown, (ev.finding["rule"], ev.finding["message"], wanted - shown)
        checked += 1
    assert checked >= 20


def test_a_discard_finding_is_not_shown_another_findings_mismatch(night):
    """Round 20 discarded three cards; the shoe's first card out of place is card 45, in
    round 8 (a SHO011 of its own): the SHO014's evidence shows round 20's discards."""
    ev = next(e for e in shoe_evidence(night) if e.finding["round_id"] == "R0000020")
    assert ev.finding["rule"] == "SHO014"
    positions = [line.position for line in ev.reconciliation]
    assert 45 not in positions
    discards = [line for line in ev.reconciliation if line.where == "round 20, discarded card"]
    assert [line.logged for line in discards] == ["6D", "TH", "5S"]
    assert not any(line.mismatch for line in ev.reconciliation)
    assert "discarded" in ev.reconciliation_note


def test_a_finding_about_the_decks_shows_the_shoe_and_no_cards(night):
    decks = [e for e in shoe_evidence(night) if e.finding["rule"] == "SHO001"]
    assert decks and all(e.shoe is not None and e.reconciliation is None for e in decks)


def test_without_a_focus_the_first_mismatch_is_shown():
    shoe = {"card_sequence": ["5S", "AH", "2C", "3D", "4H", "9S"], "burn_card": "5S"}
    shoe["burn_count"] = 1
    rounds = pl.DataFrame(
        {"round_id": ["R1"], "round_no": [1], "player_cards": [["2C", "9S"]],
         "banker_cards": [["3D", "4H"]], "discarded_after": [None]},
        schema_overrides={"discarded_after": pl.List(pl.String)},
    )  # fmt: skip
    _, note = evidence.reconcile(shoe, rounds)
    assert note == "First card out of place: card 5 of the sequence."
    lines, note = evidence.reconcile(shoe, rounds, evidence.Focus(card="9S", what="every 9S"))
    assert [line.position for line in lines] == [5, 6] and note.startswith("Every 9S")


# ---- the pages --------------------------------------------------------------------------------


def test_the_nightly_report_is_a_summary_with_its_evidence_folded(night):
    html = render_nightly(night)["report.html"]
    first = html[html.index('id="first"') : html.index('id="surveillance"')]
    assert first.count('<details class="evidence"') == FIRST_FINDINGS
    assert '<details class="evidence" id="f-' in first and " open>" not in first
    # The checks' texts as HTML: inline code, no markdown left.
    rules = html[html.index('id="rules"') :]
    assert "<code>" in rules and "`" not in visible_text(rules)


def test_no_zero_and_no_underpaid_money_is_coloured_good(night):
    pages = render_nightly(night)
    for name, html in pages.items():
        assert 'class="under"' not in html and 'class="num under"' not in html, name
        for cell in re.findall(r'<td class="num at-stake">([^<]*)</td>', html):
            assert cell not in ("$0.00", "+$0.00", "—"), (name, cell)
        for span in re.findall(r'<span class="at-stake">([^<]*)</span>', html):
            assert "$0.00" not in span, (name, span)
    css = (REPO / "auditor/report/templates/report.css").read_text()
    assert re.search(r"\.over, \.under, \.at-stake \{ color: var\(--high\); \}", css)


def test_money_and_times_read_alike_on_every_page(night):
    pages = dict(render_nightly(night))
    for kind, subject in (("patron", "PT032323"), ("round", "R0000020"), ("table", "T-MA-BAC-01")):
        pages[kind] = render_investigation(night, Subject(kind, subject))
    for name, html in pages.items():
        words = visible_text(html)
        assert "$-" not in words, name
        assert not re.search(r"\$\d{4,}\.\d\d", words), name  # thousands always grouped
        naive = [m.group(0) for m in NAIVE_TIME.finditer(words)]
        assert naive == [], (name, naive[:3])
        assert "_win_rate<" not in html and ">money_won<" not in html, name


def test_the_charts_say_what_they_leave_out(night):
    html = render_nightly(night)["report.html"]
    rules = pl.read_parquet(night / "findings.parquet")["rule"].n_unique()
    assert rules > CHART_BARS
    assert f"Findings per rule: top {CHART_BARS} of {rules} rules" in html
    assert "Findings per table<" in html  # twelve tables: none left out, nothing said


def test_one_round_has_no_timeline_and_says_why(night):
    html = render_investigation(night, Subject("round", "R0000020"))
    timeline = html[html.index('id="timeline"') : html.index('id="findings"')]
    assert "<svg" not in timeline and "One round, dealt 2026-11-24 18:13:59 UTC" in timeline
    # Its single finding's evidence is open: it is what the page is for.
    assert '<details class="evidence" id="f-' in html and " open>" in html


def test_a_timeline_spans_minutes_around_one_moment_and_no_more_than_its_times():
    moment = datetime(2026, 11, 24, 18, 13, 59, tzinfo=UTC)
    first, last = time_span(moment, moment)
    assert last - first == timedelta(minutes=10)
    first, last = time_span(moment, moment + timedelta(hours=2))
    assert timedelta(hours=2) < last - first < timedelta(hours=2, minutes=10)


def test_a_chart_with_a_hidden_plot_still_moves_its_labels_inside():
    # A hidden plot draws nothing and has no box; the shown one's label is mended all the same.
    figure = Figure(figsize=(3, 2))
    shown = figure.add_axes((0.0, 0.1, 0.9, 0.8))
    shown.set_ylabel("a label left of the edge")
    figure.add_axes((0.5, 0.5, 0.1, 0.1)).set_visible(False)
    fit(figure)
    assert shown.get_position().x0 > 0


def test_the_patrons_money_says_why_surveillance_differs(night):
    html = render_investigation(night, Subject("patron", "PT032323"))
    assert "-$6,260.00" in html
    # Left out: a Royal 9 progressive line's -$10.00, and -$10.00 on a bet the table
    # does not offer (WAG001): no play of the game, as in a table's hold.
    assert "surveillance's money won is -$6,240.00" in html
    assert "-$20.00 on wagers it cannot price or that are no play of the game (Royal 9" in html
    surveillance = html[html.index('id="surveillance"') :]
    assert "won -$6,240.00 on 50 wagers" in surveillance
    assert 'title="money_won">money won<' in surveillance


def test_a_patron_whose_figures_agree_has_no_such_note(night):
    wagers = pl.read_parquet(SAMPLE / "wagers.parquet")
    no_royal9 = wagers.group_by("patron_id").agg((pl.col("bet") == "royal9").any().alias("r9"))
    tested = pl.read_parquet(night / "surveillance.parquet").filter(
        pl.col("statistic") == "money_won"
    )["key"]
    patron = no_royal9.filter(~pl.col("r9") & pl.col("patron_id").is_in(tested.implode()))
    html = render_investigation(night, Subject("patron", patron["patron_id"].sort()[0]))
    assert "it cannot price" not in html


def fit_drawing_first(figure: Figure) -> None:
    """`fit` as matplotlib's own layout would have it: the figure drawn before each measure."""
    renderer = FigureCanvasAgg(figure).get_renderer()
    for _ in range(ROUNDS):
        figure.draw_without_rendering()
        if not (_wrap_titles(figure, renderer) or _move_plots_in(figure, renderer)):
            return


def crowded_charts() -> list[str]:
    """Charts whose words need mending: a title that wraps, labels past the left edge, a
    legend above, money either side, a day's timeline."""
    long_title = "Findings per dealer with money at stake, top 12 of 21 dealers " * 2
    labels = ["D" + "9" * 27, "a dealer", "T-ROULETTE-LIKE-NAME-ON-PURPOSE-LONG"]
    moments = [datetime(2026, 11, 24, 18, minute) for minute in (3, 20, 47)]
    money = ([1250.5, 0.0, 99999.0], [0.0, 40.25, 7.0])
    hours = [f"{hour:02d}" for hour in range(24)]
    return [
        charts.stacked_bars("s", long_title, labels, {"high": [3, 0, 12], "low": [1, 7, 0]}, "n"),
        charts.signed_bars("m", "Money by table", labels, *money),
        charts.hourly_bars("h", long_title, hours, {"high": list(range(24))}),
        charts.timeline("t", "Running", moments, [0, -25.5, 1250], moments[1:], [-25.5, 1250], "$"),
    ]


def test_measuring_a_chart_lays_it_out_as_drawing_it_would(monkeypatch):
    # `fit` measures without drawing first; the charts must come out as if it drew. Each
    # set is drawn anew, not answered from the charts remembered.
    monkeypatch.setattr(charts, "_REMEMBERED", OrderedDict())
    measured = crowded_charts()
    monkeypatch.setattr(charts, "_REMEMBERED", OrderedDict())
    monkeypatch.setattr(charts, "fit", fit_drawing_first)
    assert measured == crowded_charts()
