"""Every report as a person takes it in at a glance, each kind of page opened in headless
Chromium: its header names the gaming days and the properties it covers (and any folder
by its absolute path), overpaid and underpaid money are two colours anyone tells apart,
colour-blind readers too, and neither is a severity's colour, every chart's text lies
inside its chart, and the period report's charts fill a wide window two to a row.

The pages: the sample night's nightly report, a table page and an investigation of each
kind; over an archive of three simulated nights, the investigation across nights of a
patron, a dealer and a table, and the period report.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import polars as pl
import pytest

from auditor.archive.store import add_run
from auditor.pipeline import run_audit
from tests.support.cli import cli
from tests.support.paths import SAMPLE

SAMPLE_DAY = "2026-11-24"
SAMPLE_PROPERTIES = "MA-PROP-1, MA-PROP-2 and MD-PROP-1"
FIRST, NIGHTS = "2026-11-01", 3
LAST = "2026-11-03"
WIDE, NARROW = {"width": 1280, "height": 900}, {"width": 800, "height": 900}
ONE_NIGHT = ("nightly", "table page", "patron", "dealer", "table", "round")
ACROSS = ("across patron", "across dealer", "across table")
EVERY_KIND = (*ONE_NIGHT, *ACROSS, "period")


def invoke(*args: object) -> str:
    result = cli(*args)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("look")
    out = root / "sample-out"
    run_audit(SAMPLE, out)
    found = {"nightly": out / "report.html", "table page": out / "report" / "table-001.html"}
    subjects = {"patron": "PT032323", "dealer": "D0102", "table": "T-MA-BAC-01",
                "round": "R0000020"}  # fmt: skip
    for kind, subject in subjects.items():
        found[kind] = root / f"{kind}.html"
        invoke("report", out, f"--{kind}", subject, "--out", found[kind])
    sim, archive = root / "sim", root / "archive"
    invoke("simulate", "--out", sim, "--from", FIRST, "--nights", NIGHTS, "--rounds", 300,
           "--seed", 11, "--faults", 0.02)  # fmt: skip
    for night in sorted(p for p in sim.iterdir() if p.is_dir()):
        run_audit(night, root / "out" / night.name, report=False)
        add_run(archive, root / "out" / night.name)
    located = pl.concat(pl.read_parquet(p) for p in (root / "out").glob("*/located.parquet"))
    with_money = located.filter(pl.col("impact") != 0)  # each page then shows money
    for kind in ("patron", "dealer", "table"):
        column = with_money[f"{kind}_id"].drop_nulls()
        found[f"across {kind}"] = root / f"across-{kind}.html"
        invoke("report", archive, f"--{kind}", column.mode().sort()[0],
               "--out", found[f"across {kind}"])  # fmt: skip
    found["period"] = root / "period.html"
    invoke("report", archive, "--period", f"{FIRST}..{LAST}", "--out", found["period"])
    found["archive"] = archive
    return found


def header(page: Path) -> str:
    """The page's header as text."""
    html = page.read_text("utf-8")
    block = re.search(r'<header class="page">(.*?)</header>', html, re.S)
    assert block, page
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", block.group(1)))


# ---- headers ------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ONE_NIGHT)
def test_a_nights_pages_name_its_gaming_day_and_properties(pages, kind):
    said = header(pages[kind])
    assert f"Gaming day {SAMPLE_DAY} (noon to noon UTC)" in said, said
    if kind == "nightly":
        assert f"properties {SAMPLE_PROPERTIES}" in said, said
    else:  # one table, its dealer, patron or round: that table's property
        assert re.search(r"· property M[AD]-PROP-\d", said), said


@pytest.mark.parametrize("kind", ACROSS)
def test_pages_across_nights_name_their_nights_and_properties(pages, kind):
    said = header(pages[kind])
    assert re.search(r"\b2026-11-0[1-3]\b", said), said
    assert re.search(r"· propert(y|ies) M[AD]-PROP-\d", said), said


def test_the_period_report_names_its_properties(pages):
    said = header(pages["period"])
    assert f"Gaming days {FIRST} to {LAST} (noon to noon UTC)" in said, said
    assert f"properties {SAMPLE_PROPERTIES}" in said, said


def test_folders_in_headers_are_absolute(pages, tmp_path, monkeypatch):
    archive = pages["archive"]
    monkeypatch.chdir(archive.parent)
    across = tmp_path / "across.html"
    dealer = re.search(r"dealer (\S+)", header(pages["across dealer"])).group(1)
    invoke("report", archive.name, "--dealer", dealer, "--out", across)
    said = header(across)
    assert f"Archive {archive.resolve()} " in said, said
    monkeypatch.chdir(pages["nightly"].parent.parent)
    one = tmp_path / "one.html"
    invoke("report", pages["nightly"].parent.name, "--round", "R0000020", "--out", one)
    assert f"Output folder {pages['nightly'].parent.resolve()} " in header(one)


# ---- colours ------------------------------------------------------------------------------

# Machado, Oliveira and Fernandes (2009), severity 1, on linear RGB.
COLOUR_BLIND = {
    "protanopia": ((0.152286, 1.052583, -0.204868), (0.114503, 0.786281, 0.099216),
                   (-0.003882, -0.048116, 1.051998)),
    "deuteranopia": ((0.367322, 0.860646, -0.227968), (0.280085, 0.672501, 0.047413),
                     (-0.011820, 0.042940, 0.968881)),
    "tritanopia": ((1.255528, -0.076749, -0.178779), (-0.078411, 0.930809, 0.147602),
                   (0.004733, 0.691367, 0.303900)),
}  # fmt: skip
APART = 20.0  # CIEDE2000: 2.3 is a just noticeable difference; 20 is told apart at once
SIDES_APART = 30.0  # overpaid and underpaid, with full colour vision
AA = 4.5  # WCAG AA contrast for normal text


def _rgb(css: str) -> tuple[float, float, float]:
    red, green, blue = (float(v) for v in re.findall(r"[\d.]+", css)[:3])
    return red, green, blue


def _linear(channel: float) -> float:
    c = channel / 255
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def _gamma(linear: float) -> float:
    c = min(1.0, max(0.0, linear))
    return 255 * (12.92 * c if c <= 0.0031308 else 1.055 * c ** (1 / 2.4) - 0.055)


def _luminance(rgb) -> float:
    r, g, b = (_linear(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(one, other) -> float:
    light, dark = sorted((_luminance(one), _luminance(other)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def as_seen(rgb, vision: str):
    if vision not in COLOUR_BLIND:
        return rgb
    linear = [_linear(c) for c in rgb]
    return tuple(_gamma(sum(m * c for m, c in zip(row, linear, strict=True)))
                 for row in COLOUR_BLIND[vision])  # fmt: skip


def lab(rgb) -> tuple[float, float, float]:
    r, g, b = (_linear(c) for c in rgb)
    x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883

    def f(t: float) -> float:
        return t ** (1 / 3) if t > 216 / 24389 else (24389 / 27 * t + 16) / 116

    return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))


def ciede2000(one, other) -> float:
    """The CIEDE2000 colour difference of two sRGB colours (Sharma, Wu, Dalal 2005)."""
    (l1, a1, b1), (l2, a2, b2) = lab(one), lab(other)
    mean_c = (math.hypot(a1, b1) + math.hypot(a2, b2)) / 2
    g = 0.5 * (1 - math.sqrt(mean_c**7 / (mean_c**7 + 25**7)))
    a1, a2 = (1 + g) * a1, (1 + g) * a2
    c1, c2 = math.hypot(a1, b1), math.hypot(a2, b2)
    h1, h2 = math.degrees(math.atan2(b1, a1)) % 360, math.degrees(math.atan2(b2, a2)) % 360
    dh = 0.0 if c1 * c2 == 0 else (h2 - h1 + 180) % 360 - 180
    d_hue = 2 * math.sqrt(c1 * c2) * math.sin(math.radians(dh / 2))
    mean_l, mean_c = (l1 + l2) / 2, (c1 + c2) / 2
    if c1 * c2 == 0:
        mean_h = h1 + h2
    elif abs(h1 - h2) <= 180:
        mean_h = (h1 + h2) / 2
    else:
        mean_h = (h1 + h2 + 360) / 2 if h1 + h2 < 360 else (h1 + h2 - 360) / 2
    t = (1 - 0.17 * math.cos(math.radians(mean_h - 30)) + 0.24 * math.cos(math.radians(2 * mean_h))
         + 0.32 * math.cos(math.radians(3 * mean_h + 6))
         - 0.20 * math.cos(math.radians(4 * mean_h - 63)))  # fmt: skip
    rotation = 30 * math.exp(-(((mean_h - 275) / 25) ** 2))
    rc = 2 * math.sqrt(mean_c**7 / (mean_c**7 + 25**7))
    sl = 1 + 0.015 * (mean_l - 50) ** 2 / math.sqrt(20 + (mean_l - 50) ** 2)
    sc, sh = 1 + 0.045 * mean_c, 1 + 0.015 * mean_c * t
    rt = -math.sin(math.radians(2 * rotation)) * rc
    dl, dc = (l2 - l1) / sl, (c2 - c1) / sc
    return math.sqrt(dl**2 + dc**2 + (d_hue / sh) ** 2 + rt * dc * (d_hue / sh))


# Each amount marked overpaid or underpaid: its side, its text, its colour and the page's
# background behind it; and each severity badge: its background and its text colour.
COLOURS = r"""() => ({
  money: [...document.querySelectorAll('.over, .under')]
    .filter(e => /\$/.test(e.textContent))
    .map(e => [e.classList.contains('over') ? 'over' : 'under', e.textContent.trim(),
               getComputedStyle(e).color]),
  badges: Object.fromEntries(['high', 'medium', 'low'].map(s => {
    const badge = document.querySelector('.sev-' + s);
    return [s, badge && [getComputedStyle(badge).backgroundColor, getComputedStyle(badge).color]];
  })),
})"""
WHITE = (255.0, 255.0, 255.0)


def _colours(browser, page_file: Path) -> dict:
    page = browser.new_page(viewport=WIDE)
    page.goto(page_file.as_uri(), wait_until="load")
    seen = page.evaluate(COLOURS)
    page.close()
    return seen


def test_overpaid_and_underpaid_are_told_apart_and_from_the_severities(browser, pages):
    seen = _colours(browser, pages["nightly"])
    sides = {side: {c for s, _, c in seen["money"] if s == side} for side in ("over", "under")}
    assert all(len(colours) == 1 for colours in sides.values()), sides
    over, under = (_rgb(next(iter(sides[s]))) for s in ("over", "under"))
    for vision in ("full colour vision", *COLOUR_BLIND):
        apart = ciede2000(as_seen(over, vision), as_seen(under, vision))
        assert apart >= (SIDES_APART if vision not in COLOUR_BLIND else APART), (vision, apart)
    for side in (over, under):
        assert contrast(side, WHITE) >= AA, side
    for severity, (background, text) in seen["badges"].items():
        assert contrast(_rgb(background), _rgb(text)) >= AA, (severity, background, text)
        for side in (over, under):
            assert ciede2000(side, _rgb(background)) >= APART, (severity, background, side)


@pytest.mark.parametrize("kind", ["table page", "patron", "dealer", "table", *ACROSS, "period"])
def test_every_page_gives_each_side_the_nightly_reports_colour(browser, pages, kind):
    nightly = _colours(browser, pages["nightly"])["money"]
    colour = {side: c for side, _, c in nightly}
    money = _colours(browser, pages[kind])["money"]
    assert money, kind
    for side, text, shown in money:
        assert re.search(r"[1-9]", text), (kind, text)  # never an amount of nothing
        assert shown == colour[side], (kind, side, text, shown)


# ---- charts -------------------------------------------------------------------------------

# Each chart's texts whose box is not inside the chart's own box (half a pixel spared).
TEXT_OUTSIDE = """() => [...document.querySelectorAll('svg')].flatMap((svg, index) => {
  const box = svg.getBoundingClientRect();
  return [...svg.querySelectorAll('text')]
    .map(text => [text.textContent, text.getBoundingClientRect()])
    .filter(([_, r]) => r.width > 0 && (r.left < box.left - 0.5 || r.right > box.right + 0.5
            || r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5))
    .map(([text, r]) => [index, text, Math.round(r.left - box.left),
                         Math.round(box.right - r.right)]);
})"""


@pytest.mark.parametrize("kind", [k for k in EVERY_KIND if k not in ("table page", "round")])
def test_every_chart_text_lies_inside_its_chart(browser, pages, kind):
    page = browser.new_page(viewport=WIDE)
    page.goto(pages[kind].as_uri(), wait_until="load")
    charts = page.locator("svg").count()
    outside = page.evaluate(TEXT_OUTSIDE)
    page.close()
    assert charts, kind
    assert outside == [], outside


CHART_BOXES = """() => [...document.querySelectorAll('.charts > .chart')].map(chart => {
  const r = chart.getBoundingClientRect();
  return [r.left, r.right];
})"""


def _chart_boxes(browser, page_file: Path, window: dict, media: str = "screen") -> list:
    page = browser.new_page(viewport=window)
    page.emulate_media(media=media)
    page.goto(page_file.as_uri(), wait_until="load")
    boxes = page.evaluate(CHART_BOXES)
    page.close()
    return boxes


def test_the_period_reports_charts_use_a_wide_windows_width(browser, pages):
    boxes = _chart_boxes(browser, pages["period"], WIDE)
    assert len(boxes) >= 4, boxes
    middle = WIDE["width"] / 2
    assert any(right <= middle for _, right in boxes), boxes
    assert any(left >= middle for left, _ in boxes), boxes


@pytest.mark.parametrize("media", ["screen", "print"])
def test_the_period_reports_charts_are_one_to_a_row_when_narrow_or_printed(browser, pages, media):
    window = NARROW if media == "screen" else WIDE
    boxes = _chart_boxes(browser, pages["period"], window, media)
    assert len({round(left) for left, _ in boxes}) == 1, boxes
