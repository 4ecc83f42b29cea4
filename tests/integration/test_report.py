"""Reports for people: the nightly report every audit writes, each finding's evidence with
the regulation's own words, investigation reports, and the summary for the terminal."""

from __future__ import annotations

import json
import re
import shutil
from datetime import UTC, date, datetime
from decimal import Decimal
from importlib.resources import files
from pathlib import Path

import polars as pl
import pytest
import yaml
from click.testing import CliRunner

from auditor.cli import main
from auditor.input.load import open_dataset
from auditor.output.catalog import RunInfo
from auditor.output.files import AuditOutputs, write_outputs
from auditor.output.outdir import MANIFEST_FILE, sha256_of
from auditor.output.traceability import shipped_sections
from auditor.packs.loaded import builtin_packs
from auditor.packs.model import load_all, load_pack
from auditor.packs.regulation_files import section_texts
from auditor.pipeline import all_checks, run_audit
from auditor.report import sections
from auditor.report.decided import replayed
from auditor.report.evidence import draw_steps, reconcile
from auditor.report.investigate import Subject, render_investigation
from auditor.report.nightly import FIRST_FINDINGS, render_nightly, write_nightly
from tests.support.paths import SAMPLE, regulations

HOSTILE_PATRON = "<script>alert(1)</script>"


@pytest.fixture(scope="module")
def night(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("night") / "out"
    run_audit(SAMPLE, out)
    return out


def hostile_night(root: Path, clean_rounds: set[str]) -> tuple[Path, str]:
    """The sample with patron `<script>alert(1)</script>` on a wager overpaid by $1,000, in
    a round the audit found nothing wrong with."""
    data = root / "data"
    shutil.copytree(SAMPLE, data)
    wagers = pl.read_parquet(data / "wagers.parquet")
    chosen = wagers.filter(
        (pl.col("bet") == "player")
        & (pl.col("result") == "win")
        & pl.col("round_id").is_in(sorted(clean_rounds))
    ).row(0, named=True)["wager_id"]
    wagers.with_columns(
        pl.when(pl.col("wager_id") == chosen)
        .then(pl.lit(HOSTILE_PATRON))
        .otherwise("patron_id")
        .alias("patron_id"),
        pl.when(pl.col("wager_id") == chosen)
        .then(pl.col("payout") + Decimal("1000.00"))
        .otherwise("payout")
        .alias("payout"),
    ).write_parquet(data / "wagers.parquet")
    out = root / "out"
    run_audit(data, out)
    return out, chosen


@pytest.fixture(scope="module")
def hostile(tmp_path_factory, night) -> tuple[Path, str]:
    rounds = pl.read_parquet(SAMPLE / "rounds.parquet")["round_id"]
    found = pl.read_parquet(night / "findings.parquet")["round_id"].drop_nulls()
    return hostile_night(tmp_path_factory.mktemp("hostile"), set(rounds) - set(found))


# ---- the regulation texts ---------------------------------------------------------------


def test_shipped_section_texts_match_the_regulations():
    folder = regulations("ma-baccarat.md")
    packs = builtin_packs()
    assert sections.build(folder, packs) == {r: section_texts(p) for r, p in packs.items()}, (
        "the packs' texts files are stale: python -m auditor.report.sections PATH/regulations"
    )


def test_every_index_section_has_its_words():
    for section in shipped_sections():
        found = sections.section_text(f"{section.ruleset} {section.ref}")
        assert found is not None, section
        # INDEX writes ranges ".04C(1)–(3)" and details "§13(i) Table 2": the item above.
        ref = re.split(r"\(\d\)–|\s", section.ref)[0]
        assert found.key == f"{section.ruleset} {ref}", (section, found.key)
        assert found.text and found.heading


def test_every_citation_of_the_packs_has_its_words():
    cites = set()

    def walk(node, ruleset):
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "cite" and isinstance(value, str):
                    cites.add(f"{ruleset} {value}")
                else:
                    walk(value, ruleset)
        elif isinstance(node, list | tuple):
            for value in node:
                walk(value, ruleset)

    for ruleset in load_all():
        pack = yaml.safe_load((files("auditor.rules") / f"{ruleset}.yaml").read_text())
        walk(pack, ruleset)
    assert len(cites) > 100
    for cite in sorted(cites):
        found = sections.section_text(cite)
        assert found is not None and cite.startswith(found.key), cite


@pytest.mark.parametrize(
    ("citation", "key", "words"),
    [
        ("ma-baccarat §11(c)(2)(iii) Table 1", "ma-baccarat §11(c)(2)(iii)", "4 | 2 – 7"),
        # Maryland's long hand: "(i)" after "(h)" is the letter, Player's third card 8.
        ("md-mini-baccarat .10E(3)(i)", "md-mini-baccarat .10E(3)(i)", "is 8 and"),
        ("md-mini-baccarat .10E(3)(h)", "md-mini-baccarat .10E(3)(h)", "is 7 and"),
        ("ma-chemin-de-fer §6(b)", "ma-chemin-de-fer §6(b)", "Banco Suivi"),
        ("ma-baccarat §9(e)(1)a", "ma-baccarat §9(e)(1)a", "House Money payout"),
        ("ma-baccarat §1", "ma-baccarat §1", "Definitions"),
        ("md-mini-baccarat .12C-.12D(1)", "md-mini-baccarat .12C", "5 percent"),
    ],
)
def test_a_citation_finds_the_longest_section_it_falls_under(citation, key, words):
    found = sections.section_text(citation)
    assert found is not None and found.key == key
    assert words in "\n".join((found.heading, *found.text))
    assert sections.section_text("ma-baccarat §11(c)(2)(iii)").lead_in[-1].startswith("(2) If")


def test_a_citation_of_no_known_text_finds_none():
    assert sections.section_text("nv-baccarat §1(a)") is None
    assert sections.section_text("ma-baccarat §99(a)") is None


# ---- evidence -----------------------------------------------------------------------------


def test_the_drawing_rules_are_shown_as_the_replay_decided_them():
    pack = load_pack("ma-baccarat")
    round_ = {
        "round_id": "R1",
        "shoe_id": "S1",
        "ruleset": "ma-baccarat",
        "ez_baccarat": False,
        "player_cards": ["2S", "3H", "4D"],
        "banker_cards": ["KD", "5C"],
        "player_total": 9,
        "banker_total": 5,
        "outcome": "player",
        "kind": "regular",
    }
    decided = replayed(pl.DataFrame([round_]), {"ma-baccarat": pack})
    steps = draw_steps(round_, decided["R1"])
    texts = [s.text for s in steps]
    assert "Player 5: the rules say draw; the Player drew 4D" in texts
    assert (
        "Banker 5, Player's third card 4: §11(c)(2)(iii) Table 1 says draw; the Banker stood"
        in texts
    )
    wrong = [s for s in steps if s.ok is False]
    assert len(wrong) == 1 and wrong[0].cite == "ma-baccarat §11(c)(2)(iii) Table 1"


def test_a_shoe_is_reconciled_around_its_first_mismatch():
    shoe = {"card_sequence": ["5S", "AH", "2C", "3D", "4H", "9S", "KC"], "burn_card": "5S"}
    shoe["burn_count"] = 1
    rounds = pl.DataFrame(
        {
            "round_id": ["R1"],
            "round_no": [1],
            "player_cards": [["2C", "9S"]],  # dealt 2C 3D 9S 4H; the reader saw 4H 9S
            "banker_cards": [["3D", "4H"]],
            "discarded_after": [None],
        },
        schema_overrides={"discarded_after": pl.List(pl.String)},
    )
    lines, note = reconcile(shoe, rounds)
    assert note == "First card out of place: card 5 of the sequence."
    bad = [line.position for line in lines if line.mismatch]
    assert bad == [5, 6]
    assert lines[0].where == "burn card" and lines[-1].where == "still in the shoe"


# ---- the nightly report ----------------------------------------------------------------------


def test_every_audit_writes_the_report_into_its_manifest(night):
    manifest = json.loads((night / MANIFEST_FILE).read_text())
    pages = sorted(p.relative_to(night).as_posix() for p in (night / "report").glob("*.html"))
    assert pages and {"report.html", *pages} <= set(manifest["files"])
    for name in ("report.html", *pages):
        assert sha256_of(night / name) == manifest["files"][name]["sha256"]


def test_the_report_is_the_same_bytes_from_the_same_run(night):
    first, second = render_nightly(night), render_nightly(night)
    assert first == second
    # ...and what the audit wrote from its staging folder is what the OUTDIR gives.
    for name, text in first.items():
        assert (night / name).read_text(encoding="utf-8") == text, name


def test_the_report_is_self_contained(night):
    for page in [night / "report.html", *sorted((night / "report").glob("*.html"))]:
        html = page.read_text(encoding="utf-8")
        assert "<script" not in html.lower()
        assert not re.search(r"\b(src|srcset|action)\s*=", html)
        assert not re.search(r"@import|url\((?!#)", html)
        links = re.findall(r'href="([^"]*)"', html)
        assert all(h.startswith(("#", "report/", "../report.html", "data:")) for h in links), {
            h for h in links if not h.startswith(("#", "report/", "../report.html", "data:"))
        }
        # Only the SVG and XLink namespace names are URLs, and they are never fetched.
        urls = set(re.findall(r"https?://[^\s\"'<>)]+", html))
        assert urls <= {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}, urls


def test_the_report_tells_a_manager_what_matters(night):
    html = (night / "report.html").read_text(encoding="utf-8")
    findings = pl.read_parquet(night / "findings.parquet")
    over = findings.filter(pl.col("impact") > 0)["impact"].sum()
    under = -findings.filter(pl.col("impact") < 0)["impact"].sum()
    assert f"overpaid ${over:,.2f}" in html and f"underpaid ${under:,.2f}" in html
    assert f"{findings.height:,}" in html and "✓ add up" in html
    for check in all_checks():
        if check.code in findings["rule"].to_list():
            assert check.title.replace("'", "&#39;").replace('"', "&#34;") in html, check.code
    assert html.count("<svg") == 4  # per table, per rule, money by dealer, over the day
    assert "Table 1 says" in html or "Table 3 says" in html or "says draw" in html
    # The findings to look at first, each with its evidence folded under it.
    assert html.count('<section class="evidence') == FIRST_FINDINGS
    assert html.count('<details class="evidence"') == FIRST_FINDINGS


def test_summary_names_each_rules_title_and_the_money(night):
    text = (night / "summary.txt").read_text(encoding="utf-8")
    assert "Wager settled win, lose or push against the cards" in text
    assert re.search(r"Money at stake: \$[\d,]+\.\d\d \(overpaid \$[\d,.]+, underpaid", text)


def test_a_large_night_stays_small(tmp_path):
    """Three hundred copies of the sample's findings: the first page keeps its size."""
    base = tmp_path / "base"
    results = run_audit(SAMPLE, base)
    copies = [
        results.findings.with_columns(pl.col("finding_id") + pl.lit(f"-{i}")) for i in range(300)
    ]
    many = AuditOutputs(pl.concat(copies), results.quarantine, results.counts)
    run = RunInfo(open_dataset(SAMPLE), all_checks(), ("test",), results_started())
    out = write_outputs(tmp_path / "big", many, run, extra=write_nightly)
    html = (out / "report.html").read_text(encoding="utf-8")
    assert len(html.encode()) < 5_000_000
    assert f"… and {many.findings.height - FIRST_FINDINGS:,} more findings" in html
    for page in (out / "report").glob("*.html"):
        assert page.stat().st_size < 5_000_000, page.name
        assert "more findings" in page.read_text(encoding="utf-8")


def results_started() -> datetime:
    return datetime(2026, 11, 25, 6, 0, tzinfo=UTC)


# ---- investigation reports --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "subject"),
    [("patron", "PT013400"), ("dealer", "D0102"), ("table", "T-MA-BAC-01"), ("round", "R0000008")],
)
def test_an_investigation_report_holds_the_subject(night, kind, subject):
    html = render_investigation(night, Subject(kind, subject))
    assert f"Investigation: {kind}" in html and subject in html
    for heading in ("Money", "Timeline", "Findings", "Rounds", "Wagers", "Quarantined rows"):
        assert f">{heading}</h2>" in html
    assert '<section class="evidence' in html
    # A timeline over the subject's rounds; one round has none to draw, and says so.
    assert ("<svg" in html) == (kind != "round")
    assert ("A timeline needs more than one round." in html) == (kind == "round")


def test_the_dates_narrow_an_investigation(night, tmp_path):
    whole = render_investigation(night, Subject("table", "T-MA-BAC-01"))
    later = ["--from", "2030-01-01", "--out", str(tmp_path / "none.html")]
    none = CliRunner().invoke(main, ["report", str(night), "--table", "T-MA-BAC-01", *later])
    assert none.exit_code == 2 and "nothing of it between 2030-01-01" in none.output
    day = render_investigation(night, Subject("table", "T-MA-BAC-01", date(2026, 11, 24), None))
    assert day.count("<tr") == whole.count("<tr")  # the sample is one gaming day


def test_an_unknown_subject_is_exit_2_not_an_empty_page(night, tmp_path):
    result = CliRunner().invoke(
        main, ["report", str(night), "--dealer", "NOBODY", "--out", str(tmp_path / "x.html")]
    )
    assert result.exit_code == 2
    assert "no dealer 'NOBODY' in this run" in result.output
    assert not (tmp_path / "x.html").exists()
    both = CliRunner().invoke(main, ["report", str(night), "--dealer", "a", "--table", "b"])
    assert both.exit_code == 2 and "exactly one of" in both.output


def test_pdf_without_chromium_is_a_clear_exit_2(night, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no browser on this PATH
    result = CliRunner().invoke(
        main,
        ["report", str(night), "--round", "R0000008", "--pdf", "--out", str(tmp_path / "r.pdf")],
    )
    assert result.exit_code == 2
    assert "headless Chromium" in result.output and "apt-get install chromium" in result.output


# ---- hostile ids ---------------------------------------------------------------------------------


def test_a_hostile_patron_id_is_text_in_both_reports(hostile, tmp_path):
    out, wager = hostile
    findings = pl.read_parquet(out / "findings.parquet").filter(pl.col("wager_id") == wager)
    assert findings["rule"].to_list() == ["PAY002"] and findings["impact"].item() == 1000
    escaped = "&lt;script&gt;alert(1)&lt;/script&gt;"
    nightly = (out / "report.html").read_text(encoding="utf-8")
    assert escaped in nightly and HOSTILE_PATRON not in nightly
    target = tmp_path / "patron.html"
    result = CliRunner().invoke(
        main, ["report", str(out), "--patron", HOSTILE_PATRON, "--out", str(target)]
    )
    assert result.exit_code == 0, result.output
    page = target.read_text(encoding="utf-8")
    assert escaped in page and HOSTILE_PATRON not in page
    assert "+$1,000.00" in page


def test_a_moved_dataset_leaves_a_report_of_the_findings_alone(tmp_path):
    data = tmp_path / "data"
    shutil.copytree(SAMPLE, data)
    out = tmp_path / "out"
    run_audit(data, out)
    data.rename(tmp_path / "elsewhere")
    pages = render_nightly(out)
    html = pages["report.html"]
    assert "could not be read through the catalog" in html
    assert f"{pl.read_parquet(out / 'findings.parquet').height:,}" in html
    result = CliRunner().invoke(
        main, ["report", str(out), "--round", "R0000008", "--out", str(tmp_path / "r.html")]
    )
    assert result.exit_code == 2 and "no longer as audited" in result.output
