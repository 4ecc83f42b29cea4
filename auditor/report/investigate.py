"""Investigation reports: one patron, dealer, table or round of a run, for a case file.

`auditor report OUTDIR --patron ID` (or `--dealer`, `--table`, `--round`, optionally
`--from DATE --to DATE`) reads the run's catalog, so it works on any past run's OUTDIR
while the dataset is where the audit read it: every round and wager of the subject,
their findings with the same evidence as the nightly report, the money the patrons won
and lost, the money at stake, a timeline, and the quarantined rows that touch the
subject. `--pdf` prints the page through headless Chromium for the case file.

The subject's id comes from the command line: it is only ever a query parameter, and in
the page it is escaped like any other value.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal

import polars as pl

from auditor.output.sandboxed_query import Catalog
from auditor.packs.loaded import builtin_packs
from auditor.packs.model import RulePack
from auditor.report import data, evidence
from auditor.report.render import render
from auditor.report.scope import run_scope, subject_scope
from auditor.report.writing import (
    ROUND_LISTING,
    WAGER_LISTING,
    Beside,
    Listing,
    ReportError,
    listing,
    write_report,
)

SUBJECTS = ("patron", "dealer", "table", "round")
ROUNDS_SHOWN, WAGERS_SHOWN, FINDINGS_SHOWN, EVIDENCE_SHOWN = 1000, 2000, 2000, 200
QUARANTINE_SHOWN = 1000
TESTS_SHOWN = 200
TIMELINE_POINTS = 2000
MONEY_WON = "money_won"  # the surveillance statistic of a patron's money won
# A printed report unfolds each finding's evidence, about a page each: paper gets the
# first ones, and `--round ID` prints any other.
EVIDENCE_PRINTED = 25

__all__ = ["ReportError", "Subject", "gather", "render_investigation", "write_investigation"]


@dataclass(frozen=True)
class Subject:
    kind: str  # one of SUBJECTS
    id: str
    start: date | None = None
    end: date | None = None  # inclusive

    def describe(self) -> str:
        window = ""
        if self.start or self.end:
            window = f" from {self.start or 'the start'} to {self.end or 'the end'}"
        return f"{self.kind} {self.id!r}{window}"


def subject_of(
    patron: str | None = None,
    dealer: str | None = None,
    table: str | None = None,
    round_id: str | None = None,
    start: date | datetime | None = None,
    end: date | datetime | None = None,
) -> Subject:
    """The subject of `auditor report`'s options: exactly one id, and a sound window."""
    named = zip(SUBJECTS, (patron, dealer, table, round_id), strict=True)
    given = [(kind, id_) for kind, id_ in named if id_ is not None]
    if len(given) != 1:
        raise ReportError("give exactly one of --patron, --dealer, --table, --round")
    first = start.date() if isinstance(start, datetime) else start
    last = end.date() if isinstance(end, datetime) else end
    if first and last and first > last:
        raise ReportError(f"--from {first} is after --to {last}")
    return Subject(given[0][0], given[0][1], first, last)


# ---- the subject's rows, as SQL of our own with the id as a parameter --------------------

_ROUNDS_WHERE = {
    "patron": "round_id IN (SELECT round_id FROM wagers WHERE patron_id = $id)",
    "dealer": "dealer_id = $id",
    "table": "table_id = $id",
    "round": "round_id = $id",
}


def _window(subject: Subject, column: str) -> tuple[str, dict[str, Any]]:
    clauses, params = [], {}
    if subject.start is not None:
        clauses.append(f"{column} >= $start")
        params["start"] = datetime.combine(subject.start, time(), UTC)
    if subject.end is not None:
        clauses.append(f"{column} < $end")
        params["end"] = datetime.combine(subject.end + timedelta(days=1), time(), UTC)
    return "".join(f" AND {c}" for c in clauses), params


def gather(catalog: Catalog, subject: Subject) -> dict[str, Any]:
    """Everything the page shows, read from the catalog: each view read once, narrowly,
    and the rows joined here (the views' own joins span the whole night)."""
    window, times = _window(subject, "dealt_at")
    rounds = data.rounds_where(
        catalog, f"{_ROUNDS_WHERE[subject.kind]}{window}", {"id": subject.id, **times}
    ).sort("dealt_at", "table_id", "round_no", "round_id", nulls_last=True)
    round_ids = rounds["round_id"].to_list()
    if subject.kind == "patron":
        wagers = data.frame(
            catalog,
            f"SELECT {', '.join(data.WAGER_COLUMNS)} FROM wagers WHERE patron_id = $id",
            {"id": subject.id},
        )
    else:
        wagers = data.wagers_of_rounds(catalog, round_ids)
    placed = rounds.select("round_id", "dealt_at", "table_id", "round_no", "dealer_id")
    # A patron's wager whose round is not in the window (or not in the logs) is left out
    # when a window is asked for; without one, every wager of the patron is shown.
    how: Literal["inner", "left"] = "inner" if (subject.start or subject.end) else "left"
    wagers = (
        wagers.unique("wager_id", keep="first", maintain_order=True)
        .join(placed, on="round_id", how=how)
        .sort("dealt_at", "round_id", "seat", "wager_id", nulls_last=True)
    )
    wager_ids = wagers["wager_id"].to_list()
    shoe_window, shoe_times = _window(subject, "opened_at")
    shoe_ids = (
        data.frame(
            catalog,
            f"SELECT shoe_id FROM shoes WHERE table_id = $id{shoe_window}",
            {"id": subject.id, **shoe_times},
        )["shoe_id"].to_list()
        if subject.kind == "table"
        else []
    )
    ids = {"wagers": wager_ids, "rounds": round_ids, "shoes": shoe_ids, "id": subject.id}
    where = {
        "patron": "f.wager_id IN (SELECT unnest($wagers::VARCHAR[])) OR (f.wager_id IS NULL "
        "AND f.round_id IN (SELECT unnest($rounds::VARCHAR[])))",
        "dealer": "f.round_id IN (SELECT unnest($rounds::VARCHAR[]))",
        "round": "f.round_id IN (SELECT unnest($rounds::VARCHAR[]))",
        "table": "f.round_id IN (SELECT unnest($rounds::VARCHAR[])) OR (f.round_id IS NULL AND "
        "(f.table_id = $id OR f.shoe_id IN (SELECT unnest($shoes::VARCHAR[]))))",
    }[subject.kind]
    findings = data.located(catalog, where, ids)
    quarantine = data.frame(
        catalog,
        f"""SELECT {data.quoted(data.QUARANTINE_COLUMNS, "q")} FROM quarantine q WHERE
          (q."table" = 'wagers' AND q.row_key IN (SELECT unnest($wagers::VARCHAR[])))
          OR (q."table" = 'rounds' AND q.row_key IN (SELECT unnest($rounds::VARCHAR[])))
          OR (q."table" = 'shoes' AND q.row_key IN (SELECT unnest($shoes::VARCHAR[])))
          OR ($kind = 'patron' AND q."table" = 'commission_collections' AND q.row_key IN
              (SELECT collection_id FROM commission_collections WHERE patron_id = $id))
          OR ($kind = 'table' AND q."table" = 'tables' AND starts_with(q.row_key, $id || '/'))
        ORDER BY q."table", q.file, q."row", q."column" """,
        {**ids, "kind": subject.kind},
    )
    return {"rounds": rounds, "wagers": wagers, "findings": findings, "quarantine": quarantine}


def _check_known(catalog: Catalog, subject: Subject, found: dict[str, Any]) -> None:
    windowed = subject.start is not None or subject.end is not None
    if found["rounds"].height or found["wagers"].height:
        return
    # A table's own findings and quarantined rows carry no time: alone, they answer a
    # question without dates, not one about days the subject was not seen.
    if not windowed and (found["findings"].height or found["quarantine"].height):
        return
    column = {"patron": "patron_id", "dealer": "dealer_id", "table": "table_id"}
    view = "wagers" if subject.kind == "patron" else "rounds"
    key = column.get(subject.kind, "round_id")
    anywhere = data.frame(
        catalog, f"SELECT count(*) AS n FROM {view} WHERE {key} = $id", {"id": subject.id}
    ).item()
    if anywhere and windowed:
        raise ReportError(
            f"the run holds {subject.kind} {subject.id!r}, but nothing of it between "
            f"{subject.start or 'the start'} and {subject.end or 'the end'}; widen --from/--to"
        )
    raise ReportError(
        f"no {subject.kind} {subject.id!r} in this run: no {view} row has {key} = "
        f"{subject.id!r} (ids are matched exactly; `auditor query OUTDIR` lists them)"
    )


# ---- the page ----------------------------------------------------------------------------


def render_investigation(
    outdir: Path,
    subject: Subject,
    packs: Mapping[str, RulePack] | None = None,
    beside: Beside | None = None,
) -> str:
    """The investigation report as one self-contained HTML page; `packs`: those the run
    audited under (the built-in ones if None: `--rules DIR` as the audit had it);
    `beside`: where the rounds and wagers it leaves off go (kept, not written, if None)."""
    if beside is None:
        beside = Beside(Path(default_name(subject, False)).stem)
    catalog = data.open_report_catalog(outdir)
    try:
        found = gather(catalog, subject)
        _check_known(catalog, subject, found)
        scope = subject_scope(
            run_scope(catalog, outdir),
            subject.id if subject.kind == "table" else None,
            found["rounds"],
            found["findings"],
        )
        packs = builtin_packs() if packs is None else packs
        return _page(catalog, subject, found, packs, {"scope": scope, "outdir": outdir}, beside)
    finally:
        catalog.close()


def _page(
    catalog: Catalog,
    subject: Subject,
    found: dict[str, Any],
    packs: Mapping[str, RulePack],
    where: dict[str, Any],
    beside: Beside,
) -> str:
    """The page; `where`: the subject's scope and the output folder it was read from."""
    run = data.run_record(catalog)
    checks = data.checks(catalog)
    rounds, wagers, quarantine = found["rounds"], found["wagers"], found["quarantine"]
    titles = {code: c["title"] for code, c in checks.items()}
    findings = found["findings"].with_columns(
        pl.col("rule").replace_strict(titles, default="").alias("title")
    )
    ordered = data.by_priority(findings)
    listed = ordered.head(FINDINGS_SHOWN)
    shown = listed.head(EVIDENCE_PRINTED if beside.printed else EVIDENCE_SHOWN)
    round_ids = shown["round_id"].drop_nulls().unique()
    ids = data.ids_of(round_ids)
    neighbours = data.located(catalog, data.among("f.round_id", "ids", ids), {"ids": ids})
    sources, _ = evidence.load_sources(catalog, shown, neighbours, checks, packs)
    quarantined = {
        t: set(quarantine.filter(pl.col("table") == t)["row_key"].to_list())
        for t in ("rounds", "wagers")
    }
    wagers = wagers.with_columns(
        data.patron_net().alias("net"),
        pl.col("wager_id").is_in(sorted(quarantined["wagers"])).alias("quarantined"),
    )
    per_round = findings.group_by("round_id").agg(pl.col("rule").unique().sort())
    codes = {r: rules for r, rules in per_round.iter_rows() if r is not None}
    watched = _watched(catalog, subject, rounds, wagers)
    timeline, single = _timeline(subject, rounds, wagers, findings)
    listings = _listings(subject, rounds, wagers, findings, quarantined["rounds"], beside)
    return render(
        "investigation.html",
        run=run,
        subject=subject,
        scope=where["scope"],
        # Absolute: the page is read away from the folder it was written in.
        outdir=str(Path(where["outdir"]).resolve()),
        printed=beside.printed,
        listings=listings,
        money=_money(wagers, findings, watched),
        severity=[(s, findings.filter(pl.col("severity") == s).height) for s in data.SEVERITIES],
        timeline=timeline,
        single=single,
        rounds=list(listings["rounds"].shown.head(ROUNDS_SHOWN).iter_rows(named=True)),
        rounds_total=listings["rounds"].shown.height,
        round_codes=codes,
        quarantined_rounds=quarantined["rounds"],
        wagers=list(listings["wagers"].shown.head(WAGERS_SHOWN).iter_rows(named=True)),
        wagers_total=listings["wagers"].shown.height,
        findings=list(listed.iter_rows(named=True)),
        findings_total=findings.height,
        evidence_of={
            f["finding_id"]: (evidence.build(f, sources), evidence.anchor(f["finding_id"]))
            for f in shown.iter_rows(named=True)
        },
        quarantine=list(quarantine.head(QUARANTINE_SHOWN).iter_rows(named=True)),
        quarantine_total=quarantine.height,
        watched=watched,
    )


def _listings(
    subject: Subject,
    rounds: pl.DataFrame,
    wagers: pl.DataFrame,
    findings: pl.DataFrame,
    quarantined_rounds: set[str],
    beside: Beside,
) -> dict[str, Listing]:
    """The rounds and wagers on the page, those a finding names (a round's report shows
    its one round whole), and every one of them in a CSV beside the report."""
    rules = findings.group_by("round_id").agg(pl.col("rule").unique().sort().str.join(" "))
    per_wager = findings.group_by("wager_id").agg(pl.col("rule").unique().sort().str.join(" "))
    rounds = rounds.with_columns(
        pl.col("round_id").is_in(sorted(quarantined_rounds)).alias("quarantined")
    ).join(rules.rename({"rule": "findings"}), on="round_id", how="left")
    wagers = wagers.join(per_wager.rename({"rule": "findings"}), on="wager_id", how="left")
    if subject.kind == "round":
        return {"rounds": Listing(rounds, rounds.height), "wagers": Listing(wagers, wagers.height)}
    return {
        "rounds": listing(beside, "rounds", rounds, ROUND_LISTING),
        "wagers": listing(beside, "wagers", wagers, WAGER_LISTING),
    }


def _watched(
    catalog: Catalog, subject: Subject, rounds: pl.DataFrame, wagers: pl.DataFrame
) -> dict[str, Any] | None:
    """The night's surveillance tests of the subject (for a table, its own and its shoes'
    alerts; for a round, the alerts on its table, shoe, dealer and patrons); None for a
    catalog written before surveillance."""
    if data.surveillance_summary(catalog) is None:
        return None
    params: dict[str, Any] = {"id": subject.id}
    where = {
        "patron": "level = 'patron' AND key = $id",
        "dealer": "level = 'dealer' AND key = $id",
        "table": "(level = 'table' AND key = $id) OR (level = 'shoe' AND table_id = $id AND alert)",
    }.get(subject.kind)
    if where is None:  # a round
        first = rounds.row(0, named=True) if rounds.height else {}
        params = {
            "table": first.get("table_id"),
            "shoe": first.get("shoe_id"),
            "dealer": first.get("dealer_id"),
            "patrons": data.ids_of(wagers["patron_id"].drop_nulls().unique().sort()),
        }
        where = (
            "alert AND ((level = 'table' AND key = $table) OR (level = 'shoe' AND key = $shoe)"
            " OR (level = 'dealer' AND key = $dealer) OR (level = 'patron' AND key IN "
            "(SELECT unnest($patrons::VARCHAR[]))))"
        )
    tests = data.surveillance_tests(catalog, where, params)
    return {
        "tests": list(tests.head(TESTS_SHOWN).iter_rows(named=True)),
        "more": max(0, tests.height - TESTS_SHOWN),
        "alerts": int(tests["alert"].sum()),
        "round": subject.kind == "round",
    }


def _money(
    wagers: pl.DataFrame, findings: pl.DataFrame, watched: dict[str, Any] | None
) -> dict[str, Any]:
    audited = wagers.filter(~pl.col("quarantined"))
    stake = pl.col("amount") + pl.col("rollover").fill_null(0)
    impact = pl.col("impact")
    row = audited.select(
        pl.len().alias("wagers"),
        stake.sum().alias("staked"),
        pl.col("net").filter(pl.col("result") == "win").sum().alias("won"),
        (-pl.col("net").filter(pl.col("result") == "lose").sum()).alias("lost"),
        pl.col("commission").sum().alias("commission"),
        pl.col("net").sum().alias("net"),
    ).row(0, named=True)
    at_stake = findings.select(
        impact.filter(impact > 0).sum().alias("over"),
        (-impact.filter(impact < 0).sum()).alias("under"),
    ).row(0, named=True)
    zero = Decimal(0)
    net: Decimal = zero if row["net"] is None else row["net"]
    money = {
        **{k: (v if v is not None else zero) for k, v in row.items()},
        "quarantined": wagers.height - audited.height,
        "over": at_stake["over"] or zero,
        "under": at_stake["under"] or zero,
    }
    return {**money, **_unpriced(net, watched)}


def _unpriced(net: Decimal, watched: dict[str, Any] | None) -> dict[str, Any]:
    """Surveillance's money won beside the patron's net as logged, and what lies between
    them (the wagers surveillance cannot price); none when the two agree or there is no
    such test."""
    tests = (watched or {}).get("tests", [])
    won = [t["observed"] for t in tests if t["statistic"] == MONEY_WON and t["level"] == "patron"]
    if len(won) != 1 or won[0] is None or won[0] != won[0]:
        return {"surveillance": None, "unpriced": None}
    # Surveillance sums in floating point: to the cent, as its own detail writes it.
    tested = Decimal(f"{won[0]:.2f}")
    if tested == net:
        return {"surveillance": None, "unpriced": None}
    return {"surveillance": tested, "unpriced": net - tested}


def _timeline(
    subject: Subject, rounds: pl.DataFrame, wagers: pl.DataFrame, findings: pl.DataFrame
) -> tuple[Any, dict[str, Any] | None]:
    """The running net result as a chart, or for a single round (nothing to draw over
    time) that round's result in words: (chart, None) or (None, the round)."""
    timed = (
        wagers.filter(pl.col("dealt_at").is_not_null() & ~pl.col("quarantined"))
        .group_by("round_id")
        .agg(pl.col("dealt_at").first(), pl.col("net").sum())
        .sort("dealt_at", "round_id")
        .with_columns(pl.col("net").cum_sum().alias("running"))
    )
    if timed.height == 0:
        return None, None
    flagged = timed.filter(pl.col("round_id").is_in(findings["round_id"].drop_nulls().implode()))
    if timed.height == 1:
        return None, {**timed.row(0, named=True), "flagged": flagged.height > 0}
    from auditor.report import charts  # matplotlib, only when a chart is drawn

    step = max(1, timed.height // TIMELINE_POINTS)
    line = timed.gather_every(step) if step > 1 else timed
    whose = "the patron's" if subject.kind == "patron" else "the patrons'"
    chart = charts.timeline(
        "timeline",
        f"Running net result, {whose} side (money won less money lost)",
        [_naive(t) for t in line["dealt_at"].to_list()],
        [float(v) for v in line["running"].to_list()],
        [_naive(t) for t in flagged["dealt_at"].head(500).to_list()],
        [float(v) for v in flagged["running"].head(500).to_list()],
        "dollars",
    )
    return chart, None


def _naive(moment: datetime) -> datetime:
    # matplotlib draws the UTC clock time; the axis says UTC.
    return moment.astimezone(UTC).replace(tzinfo=None)


# ---- writing and printing ------------------------------------------------------------------


def default_name(subject: Subject, pdf: bool, across_nights: bool = False) -> str:
    """A file name from the subject: only safe characters of the id, never a path. One
    night's report and one across an archive's nights (and its window) are named apart,
    for neither may replace the other unasked."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", subject.id).strip("._")[:60] or "subject"
    tail = ""
    if across_nights:
        tail = "-across-nights"
        if subject.start or subject.end:
            tail += f"-{subject.start or 'first'}-{subject.end or 'last'}"
    return f"investigation-{subject.kind}-{safe}{tail}.{'pdf' if pdf else 'html'}"


def write_investigation(
    outdir: Path,
    subject: Subject,
    target: Path | None = None,
    pdf: bool = False,
    packs: Mapping[str, RulePack] | None = None,
) -> Path:
    """Write the report (HTML, or PDF through Chromium) and the CSVs of the rows it leaves
    off beside it, and return where it went; a target that cannot be written is a
    `ReportError`, found before the report is built."""
    target = Path(target) if target is not None else Path(default_name(subject, pdf))
    return write_report(
        lambda beside: render_investigation(outdir, subject, packs, beside), target, pdf
    )
