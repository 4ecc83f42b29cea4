"""Investigations in the desk: a patron, dealer, table or round across nights, its
findings a page at a time, each night's full investigation report (the reports' own,
`report.across`) one night to a page instead of one endless page; and the period report
and the period alerts.

The subject's kind is one of four names, its id only ever a query parameter of our own
statements (and of the reports', which bind it too).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date
from decimal import Decimal
from typing import Any
from urllib.parse import urlencode

from markupsafe import Markup
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from auditor.archive.attached_runs import open_archive_catalog
from auditor.archive.catalog import RUNS, SET
from auditor.desk.auth import Session
from auditor.desk.core import desk_of
from auditor.desk.queue import PAGE_ROWS, parse_page
from auditor.desk.snapshot import State
from auditor.report.across import render_archive_investigation
from auditor.report.investigate import Subject, render_investigation
from auditor.report.period import render_period_report
from auditor.report.period.surveillance import period_section

COLUMN_OF = {"patron": "patron_id", "dealer": "dealer_id", "table": "table_id", "round": "round_id"}
ID_LIMIT = 200


def _rows(state: State, sql: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    result = state.cursor().execute(sql, params)
    names = [d[0] for d in result.description]
    return [dict(zip(names, row, strict=True)) for row in result.fetchall()]


def subject_rows(state: State, kind: str, subject_id: str, page: int) -> dict[str, Any]:
    column = COLUMN_OF[kind]
    params = {"id": subject_id}
    nights = _rows(
        state,
        f"""SELECT gaming_day, count(*) AS findings, coalesce(sum(at_stake), 0) AS at_stake,
               count(*) FILTER (WHERE status = 'open') AS open
        FROM queue WHERE {column} = $id GROUP BY gaming_day ORDER BY gaming_day DESC NULLS LAST""",
        params,
    )
    total = sum(n["findings"] for n in nights)
    pages = max(1, -(-total // PAGE_ROWS))
    page = min(page, pages)
    findings = _rows(
        state,
        f"""SELECT * FROM queue WHERE {column} = $id
        ORDER BY gaming_day DESC NULLS LAST, at_stake DESC NULLS LAST, finding_id
        LIMIT $limit OFFSET $offset""",
        {**params, "limit": PAGE_ROWS, "offset": (page - 1) * PAGE_ROWS},
    )
    for night in nights:
        night["at_stake"] = Decimal(night["at_stake"])
    return {"nights": nights, "findings": findings, "total": total, "page": page, "pages": pages}


def _subject(request: Request) -> tuple[str, str] | None:
    kind, subject_id = request.query_params.get("kind"), request.query_params.get("id")
    if kind in COLUMN_OF and isinstance(subject_id, str) and 0 < len(subject_id) <= ID_LIMIT:
        return kind, subject_id
    return None


async def investigate(request: Request, session: Session) -> Response:
    desk = desk_of(request)
    state = await run_in_threadpool(desk.snapshot.current)
    subject = _subject(request)
    shown = None
    if subject is not None:
        page = parse_page(request.query_params.get("page"))
        shown = await run_in_threadpool(subject_rows, state, *subject, page)
    return desk.html(
        "investigate.html",
        session,
        kinds=list(COLUMN_OF),
        kind=subject[0] if subject else request.query_params.get("kind", "dealer"),
        subject_id=subject[1] if subject else "",
        shown=shown,
        query=urlencode({"kind": subject[0], "id": subject[1]}) if subject else "",
        ledger=state.head,
        active="investigate",
    )


def _report_for(desk: Any, state: State, kind: str, subject_id: str, day: date | None) -> str:
    if kind == "round":
        found = _rows(
            state, "SELECT run_id FROM findings WHERE round_id = $id LIMIT 1", {"id": subject_id}
        )
        if not found:
            raise LookupError("no finding of this round is in force; its night's run reports it")
        run_set = desk.archive / RUNS / found[0]["run_id"] / SET
        return render_investigation(run_set, Subject("round", subject_id))
    return render_archive_investigation(desk.archive, Subject(kind, subject_id, day, day))


async def night_report(request: Request, session: Session) -> Response:
    """One night of the subject's investigation, as the report across nights draws it."""
    desk = desk_of(request)
    subject = _subject(request)
    day = _day(request.query_params.get("day"))
    if subject is None or (subject[0] != "round" and day is None):
        return desk.problem(session, 400, "Which night?", "Name a kind, an id and a day.")
    state = await run_in_threadpool(desk.snapshot.current)
    try:
        html = await run_in_threadpool(_report_for, desk, state, *subject, day)
    except LookupError as error:
        return desk.problem(session, 404, "Nothing to report", str(error))
    back = f"/investigate?{urlencode({'kind': subject[0], 'id': subject[1]})}"
    return HTMLResponse(with_desk_nav(html, back, "back to the investigation"))


def with_desk_nav(html: str, back: str, label: str) -> str:
    """A report's page with one line of the desk's above it (a way back)."""
    nav = Markup(
        '<nav class="report-nav"><a href="{}">← {}</a> · <a href="/queue">queue</a></nav>'
    ).format(back, label)
    found = re.search(r"<body[^>]*>", html)
    if found is None:
        return html
    return html[: found.end()] + str(nav) + html[found.end() :]


def _day(text: object) -> date | None:
    if not isinstance(text, str):
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        return None


def _span(state: State) -> tuple[date | None, date | None]:
    days = [d for d in state.archived.coverage.column("gaming_day").to_pylist() if d is not None]
    return (min(days), max(days)) if days else (None, None)


async def period(request: Request, session: Session) -> Response:
    desk = desk_of(request)
    state = await run_in_threadpool(desk.snapshot.current)
    start, end = _day(request.query_params.get("from")), _day(request.query_params.get("to"))
    first, last = _span(state)
    if start is None or end is None:
        return desk.html(
            "desk_period.html", session, first=first, last=last, ledger=state.head, active="period"
        )
    if start > end:
        return desk.problem(session, 400, "No such period", f"{start} is after {end}.")
    prop = request.query_params.get("property") or None
    html = await run_in_threadpool(render_period_report, desk.archive, start, end, prop)
    return HTMLResponse(with_desk_nav(html, "/period", "back to the periods"))


def alerts_of(archive: Any, start: date | None, end: date | None) -> dict[str, Any]:
    catalog = open_archive_catalog(archive, inputs=False)
    try:
        return period_section(catalog, start or date.min, end or date.max)
    finally:
        catalog.close()


async def alerts(request: Request, session: Session) -> Response:
    desk = desk_of(request)
    state = await run_in_threadpool(desk.snapshot.current)
    start, end = _day(request.query_params.get("from")), _day(request.query_params.get("to"))
    section = await run_in_threadpool(alerts_of, desk.archive, start, end)
    return desk.html(
        "alerts.html", session, sv=section, start=start, end=end, ledger=state.head, active="period"
    )


def routes(guarded: Callable[..., Any]) -> list[Route]:
    return [
        Route("/investigate", guarded(investigate), methods=["GET"]),
        Route("/investigate/night", guarded(night_report), methods=["GET"]),
        Route("/period", guarded(period), methods=["GET"]),
        Route("/alerts", guarded(alerts), methods=["GET"]),
    ]
