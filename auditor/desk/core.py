"""What every page of the desk stands on: the running desk (`Desk`), the request's
session, and `guarded`, which puts a page behind a session, its role and (for a POST) its
CSRF token."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from auditor.defaults import DEFAULT_MEMORY_LIMIT
from auditor.desk.auth import SESSION_COOKIE, Session, Sessions, same
from auditor.desk.render import page
from auditor.desk.snapshot import Snapshot
from auditor.desk.users_source import UsersSource
from auditor.errors import AuditorError

SQL_TIMEOUT_SECONDS = 60.0  # as `auditor query`'s --timeout
Handler = Callable[[Request, Session], Awaitable[Response]]


@dataclass
class Desk:
    """One running desk: its archive, users, sessions and settings."""

    archive: Path
    users: UsersSource
    sessions: Sessions
    snapshot: Snapshot
    secure: bool = False  # served over TLS: the cookies are Secure
    sql_timeout: float = SQL_TIMEOUT_SECONDS
    sql_memory_limit: str = DEFAULT_MEMORY_LIMIT
    extra: dict[str, Any] = field(default_factory=dict)

    def html(
        self,
        template: str,
        session: Session | None,
        *,
        http_status: int = 200,
        **context: Any,
    ) -> HTMLResponse:
        context.setdefault("messages", [])
        context.setdefault("ledger", None)
        context.setdefault("active", "")
        body = page(template, session=session, archive_name=self.archive.name, **context)
        return HTMLResponse(body, status_code=http_status)

    def problem(
        self, session: Session | None, status: int, title: str, message: str
    ) -> HTMLResponse:
        return self.html("error.html", session, http_status=status, title=title, message=message)

    def cookie(self, response: Response, name: str, value: str, max_age: int) -> None:
        response.set_cookie(
            name,
            value,
            max_age=max_age,
            httponly=True,
            samesite="strict",
            secure=self.secure,
            path="/",
        )


def desk_of(request: Request) -> Desk:
    return request.app.state.desk


def live_session(request: Request) -> Session | None:
    """The request's session, if its user is still in the users file with that role."""
    desk = desk_of(request)
    session = desk.sessions.find(request.cookies.get(SESSION_COOKIE))
    if session is None:
        return None
    user = desk.users.current().get(session.name)
    if user is None or user.role != session.role:
        desk.sessions.end(session)
        return None
    return session


def guarded(
    handler: Handler, *, need: str | None = None
) -> Callable[[Request], Awaitable[Response]]:
    """`handler` behind a session (and the role `need` names: "review" or "query"); a POST
    also behind its session's CSRF token, checked before anything else is done."""

    async def endpoint(request: Request) -> Response:
        desk = desk_of(request)
        session = live_session(request)
        if session is None:
            if request.method != "GET":
                return desk.problem(None, 403, "Log in first", "This needs a session; log in.")
            target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
            return RedirectResponse(f"/login?next={quote(target, safe='')}", status_code=303)
        if request.method == "POST":
            form = await request.form()
            if not same(session.csrf, form.get("csrf")):
                return desk.problem(
                    session,
                    403,
                    "Refused",
                    "The form's token is not this session's: reload the page.",
                )
            request.state.form = form
        if need == "review" and not session.may_review:
            return desk.problem(session, 403, "Refused", f"A {session.role} records no review.")
        if need == "query" and not session.may_query:
            return desk.problem(session, 403, "Refused", "The SQL console is the regulators'.")
        try:
            return await handler(request, session)
        except AuditorError as error:
            return desk.problem(session, 409, "The archive cannot be read", str(error))

    return endpoint


def safe_next(target: object) -> str:
    """Where to go after logging in: a path of this desk, never another site."""
    if (
        isinstance(target, str)
        and target.startswith("/")
        and not target.startswith("//")
        and "\\" not in target
        and all(ord(c) > 31 for c in target)
    ):
        return target
    return "/"
