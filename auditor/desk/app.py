"""The review desk as an ASGI application (Starlette): the archive's morning work in a
browser, behind a login.

Nothing answers without a session but the login page and the desk's own stylesheet and
script: a page asked for without one is sent to the login, a POST refused (403) before
its form is read. Every POST carries its session's CSRF token, and one from another
site's page is refused whatever it carries (`origin`). The pages are the
reports' templates (`render`), the reviews go to the archive's one chained ledger
(`archive.ledger.append_reviews`, under its lock), the SQL console runs in `auditor
query`'s sandbox and limits. Every response carries the security headers below.
"""

from __future__ import annotations

from pathlib import Path

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from auditor.defaults import DEFAULT_MEMORY_LIMIT
from auditor.desk.auth import LOGIN_COOKIE, SESSION_COOKIE, Session, Sessions
from auditor.desk.core import (
    SQL_TIMEOUT_SECONDS,
    Desk,
    desk_of,
    guarded,
    live_session,
    safe_next,
)
from auditor.desk.origin import SameOrigin
from auditor.desk.snapshot import Snapshot
from auditor.desk.users import User, authenticate, read_users
from auditor.desk.users_source import UsersSource

SECURITY_HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
        b"img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    ),
    (b"x-frame-options", b"DENY"),
    # The desk's own address only to itself, so that its forms carry their origin
    # (`origin`: under no-referrer a browser sends `Origin: null`).
    (b"referrer-policy", b"same-origin"),
    (b"x-content-type-options", b"nosniff"),
    (b"cache-control", b"no-store"),
    (b"cross-origin-opener-policy", b"same-origin"),
]


async def login_page(request: Request) -> Response:
    desk = desk_of(request)
    if live_session(request) is not None:
        return RedirectResponse("/", status_code=303)
    return _login_form(desk, safe_next(request.query_params.get("next")))


def _login_form(desk: Desk, target: str, problem: str | None = None, status: int = 200) -> Response:
    token, cookie = desk.sessions.login_token()
    response = desk.html(
        "login.html", None, token=token, next=target, problem=problem, http_status=status
    )
    desk.cookie(response, LOGIN_COOKIE, cookie, 15 * 60)
    return response


async def login(request: Request) -> Response:
    desk = desk_of(request)
    form = await request.form()
    target = safe_next(form.get("next"))
    csrf = form.get("csrf")  # a file, when a form sends one, is no token
    if not desk.sessions.login_token_ok(
        request.cookies.get(LOGIN_COOKIE), csrf if isinstance(csrf, str) else None
    ):
        return _login_form(desk, target, "The login form had expired; log in again.", 403)
    name, password = form.get("name"), form.get("password")
    if not isinstance(name, str) or not isinstance(password, str) or not name or len(name) > 64:
        return _login_form(desk, target, "Give a name and a password.", 400)
    if desk.sessions.locked(name):
        return _login_form(
            desk, target, "Too many failed logins for this name: wait and try again.", 429
        )
    user: User | None = await run_in_threadpool(
        authenticate, desk.users.current(), name, password[:1024]
    )
    if user is None:
        desk.sessions.failed(name)
        return _login_form(desk, target, "Wrong name or password.", 401)
    desk.sessions.succeeded(name)
    _, cookie = desk.sessions.start(user)
    response = RedirectResponse(target, status_code=303)
    desk.cookie(response, SESSION_COOKIE, cookie, int(desk.sessions.seconds))
    response.delete_cookie(LOGIN_COOKIE, path="/")
    return response


async def logout(request: Request, session: Session) -> Response:
    desk = desk_of(request)
    desk.sessions.end(session)
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response


class SecurityHeaders:
    """Every response's security headers, errors and redirects included."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                held = {name for name, _ in message.get("headers", [])}
                message["headers"] = [
                    *message.get("headers", []),
                    *[(n, v) for n, v in SECURITY_HEADERS if n not in held],
                ]
            await send(message)

        await self.app(scope, receive, with_headers)


def create_app(
    archive: Path,
    users_file: Path,
    *,
    secure: bool = False,
    session_seconds: float | None = None,
    sql_timeout: float = SQL_TIMEOUT_SECONDS,
    sql_memory_limit: str = DEFAULT_MEMORY_LIMIT,
) -> ASGIApp:
    """The desk over `archive`, its users read from `users_file` (checked now, and read
    again whenever it changes)."""
    from auditor.archive.store import open_archive
    from auditor.desk import investigate, pages, reviews, sql_console, static

    folder = open_archive(Path(archive)).resolve()
    read_users(users_file)  # refused now, not at the first login
    sessions = Sessions() if session_seconds is None else Sessions(seconds=session_seconds)
    desk = Desk(
        folder,
        UsersSource(Path(users_file)),
        sessions,
        Snapshot(folder),
        secure=secure,
        sql_timeout=sql_timeout,
        sql_memory_limit=sql_memory_limit,
    )
    routes = [
        Route("/login", login_page, methods=["GET"]),
        Route("/login", login, methods=["POST"]),
        Route("/logout", guarded(logout), methods=["POST"]),
        *static.routes(),
        *pages.routes(guarded),
        *reviews.routes(guarded),
        *investigate.routes(guarded),
        *sql_console.routes(guarded),
    ]
    app = Starlette(routes=routes)
    app.state.desk = desk

    async def not_found(request: Request, exc: Exception) -> Response:
        return HTMLResponse("<!DOCTYPE html><title>Not found</title><p>Not found.</p>", 404)

    async def not_allowed(request: Request, exc: Exception) -> Response:
        return HTMLResponse("<!DOCTYPE html><title>Not allowed</title><p>Not allowed.</p>", 405)

    app.add_exception_handler(404, not_found)
    app.add_exception_handler(405, not_allowed)
    return SecurityHeaders(SameOrigin(app))
