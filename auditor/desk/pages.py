"""The desk's reading pages: the nights, the queue and one finding."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from auditor.archive.ledger_format import STATUSES
from auditor.desk.auth import Session
from auditor.desk.core import desk_of
from auditor.desk.finding import finding_view, is_finding_id
from auditor.desk.queue import choices, parse_filter, queue_page
from auditor.desk.snapshot import State

NIGHTS_SQL = """
WITH per_night AS (
  SELECT gaming_day,
         count(*) FILTER (WHERE severity = 'high') AS high,
         count(*) FILTER (WHERE severity = 'medium') AS medium,
         count(*) FILTER (WHERE severity = 'low') AS low,
         coalesce(sum(at_stake), 0) AS at_stake,
         count(*) FILTER (WHERE status <> 'open') AS reviewed,
         count(*) FILTER (WHERE status = 'open') AS open
  FROM queue GROUP BY gaming_day
)
SELECT coalesce(c.gaming_day, n.gaming_day) AS gaming_day,
       coalesce(n.high, 0) AS high, coalesce(n.medium, 0) AS medium, coalesce(n.low, 0) AS low,
       coalesce(n.at_stake, 0) AS at_stake, coalesce(n.reviewed, 0) AS reviewed,
       coalesce(n.open, 0) AS open, coalesce(c.runs, 0) AS runs, coalesce(c.tables, 0) AS tables,
       coalesce(a.alerts, 0) AS alerts
FROM per_night n FULL JOIN coverage c USING (gaming_day)
LEFT JOIN alerts a ON a.gaming_day = coalesce(c.gaming_day, n.gaming_day)
ORDER BY gaming_day DESC NULLS LAST
"""


def nights_of(state: State) -> list[dict[str, Any]]:
    result = state.cursor().execute(NIGHTS_SQL)
    names = [d[0] for d in result.description]
    found = [dict(zip(names, row, strict=True)) for row in result.fetchall()]
    for night in found:
        night["at_stake"] = Decimal(night["at_stake"])
    return found


async def nights(request: Request, session: Session) -> Response:
    desk = desk_of(request)
    state = await run_in_threadpool(desk.snapshot.current)
    shown = await run_in_threadpool(nights_of, state)
    return desk.html("nights.html", session, nights=shown, ledger=state.head, active="nights")


async def queue(request: Request, session: Session) -> Response:
    desk = desk_of(request)
    state = await run_in_threadpool(desk.snapshot.current)
    found = parse_filter(request.query_params)

    def read() -> tuple[Any, dict[str, list[str]]]:
        cursor = state.cursor()
        return queue_page(cursor, found), choices(cursor)

    shown, offered = await run_in_threadpool(read)
    return desk.html(
        "queue.html",
        session,
        page=shown,
        filter=found,
        choices=offered,
        statuses=STATUSES,
        ledger=state.head,
        active="queue",
        messages=[m for m in [_said(request)] if m],
    )


def _said(request: Request) -> str:
    """What the last batch did, as the redirect after it says (a count and a status)."""
    said = request.query_params.get("said", "")
    count, _, status = said.partition(":")
    if count.isdigit() and status in STATUSES:
        return f"Recorded {int(count):,} review{'' if count == '1' else 's'} as {status}."
    return ""


async def finding(request: Request, session: Session) -> Response:
    desk = desk_of(request)
    finding_id = request.path_params["finding_id"]
    if not is_finding_id(finding_id):
        return desk.problem(session, 404, "No such finding", "A finding id is hexadecimal.")
    state = await run_in_threadpool(desk.snapshot.current)
    view = await run_in_threadpool(finding_view, desk.archive, state, finding_id)
    if view is None:
        return desk.problem(session, 404, "No such finding", "No archived run holds this finding.")
    return desk.html(
        "finding.html",
        session,
        finding=view.finding,
        in_force=view.in_force,
        status=view.status,
        title=view.title,
        ev=view.ev,
        anchor=view.anchor,
        evidence_note=view.evidence_note,
        reviews=view.reviews,
        history=view.history,
        statuses=STATUSES,
        ledger=state.head,
        active="queue",
        messages=[m for m in [_said(request)] if m],
    )


def routes(guarded: Callable[..., Any]) -> list[Route]:
    return [
        Route("/", guarded(nights), methods=["GET"]),
        Route("/queue", guarded(queue), methods=["GET"]),
        Route("/findings/{finding_id}", guarded(finding), methods=["GET"]),
    ]
