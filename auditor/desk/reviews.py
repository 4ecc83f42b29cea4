"""Reviews recorded in the browser: one finding's from its page, or a batch from the
queue (the findings ticked, or every finding the queue's filter matches), each batch one
`append_reviews` call: one append to the archive's chained ledger under its lock, all of
the batch or none, with the logged-in user's name as the reviewer (never a form's field).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from auditor.archive.ledger import LedgerError, ReviewInput, append_reviews
from auditor.archive.ledger_format import STATUSES
from auditor.desk.auth import Session
from auditor.desk.core import Desk, desk_of, safe_next
from auditor.desk.finding import is_finding_id
from auditor.desk.queue import matching_ids, parse_filter

NOTE_LIMIT = 4000
FILTER_PREFIX = "filter_"


class Refused(Exception):
    def __init__(self, status: int, message: str) -> None:
        self.status = status
        super().__init__(message)


def chosen_findings(desk: Desk, form: FormData) -> list[str]:
    """The findings a review form names: those ticked, or all its filter matches (as many
    as the page said, else refused: the queue changed since it was read)."""
    if form.get("all_matching") == "1":
        given = {
            key[len(FILTER_PREFIX) :]: value
            for key, value in form.multi_items()
            if key.startswith(FILTER_PREFIX) and isinstance(value, str)
        }
        found = parse_filter(given)
        if found.problems:
            raise Refused(400, "; ".join(found.problems))
        ids = matching_ids(desk.snapshot.current().cursor(), found)
        if str(len(ids)) != form.get("matching"):
            raise Refused(
                409,
                f"The filter now matches {len(ids):,} findings, not the {form.get('matching')} "
                "the page showed (a run added, or reviews recorded since): nothing recorded; "
                "look at the queue again.",
            )
        return ids
    ids = [v for v in form.getlist("finding_id") if isinstance(v, str)]
    if not ids:
        raise Refused(400, "No finding ticked: nothing recorded.")
    bad = [v for v in ids if not is_finding_id(v)]
    if bad:
        raise Refused(
            400, f"{len(bad)} of the findings named are not finding ids: nothing recorded."
        )
    return list(dict.fromkeys(ids))


def checked_review(form: FormData) -> tuple[str, str]:
    status, note = form.get("status"), form.get("note")
    if status not in STATUSES:
        raise Refused(400, f"A status is one of {', '.join(STATUSES)}: nothing recorded.")
    if not isinstance(note, str) or not note.strip():
        raise Refused(400, "A review needs a note saying how it was resolved: nothing recorded.")
    if len(note) > NOTE_LIMIT:
        raise Refused(400, f"A note holds at most {NOTE_LIMIT:,} characters: nothing recorded.")
    return str(status), note.strip()


def record(desk: Desk, session: Session, form: FormData) -> tuple[int, str]:
    status, note = checked_review(form)
    ids = chosen_findings(desk, form)
    said: list[str] = []
    batch = [ReviewInput(finding_id, status, note, session.name) for finding_id in ids]
    written = append_reviews(desk.archive, batch, notify=said.append)
    return len(written), status


async def reviews(request: Request, session: Session) -> Response:
    desk = desk_of(request)
    form: FormData = request.state.form
    try:
        count, status = await run_in_threadpool(record, desk, session, form)
    except Refused as refused:
        return desk.problem(session, refused.status, "Nothing recorded", str(refused))
    except LedgerError as error:
        problems = error.problems[:5]
        message = "; ".join(problems) if problems else str(error)
        return desk.problem(session, 400, "Nothing recorded", message)
    back = safe_next(form.get("back"))
    joiner = "&" if "?" in back else "?"
    return RedirectResponse(
        f"{back}{joiner}{urlencode({'said': f'{count}:{status}'})}", status_code=303
    )


def routes(guarded: Callable[..., Any]) -> list[Route]:
    return [Route("/reviews", guarded(reviews, need="review"), methods=["POST"])]
