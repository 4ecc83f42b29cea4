"""A request that changes something must come from the desk's own pages.

The session cookie is SameSite=Strict and every POST carries its session's CSRF token
(`core.guarded`); this is a third wall, which needs neither: a browser names the page a
form was sent from (`Origin`, or at least `Sec-Fetch-Site`), and a POST from a page of
another site, or from a page that hides its origin (`Origin: null`, a sandboxed frame or
a `data:` URL) unless the browser says it is the desk's own (`Sec-Fetch-Site:
same-origin`), is refused before its form is read. The desk's pages send their origin
with their forms (`Referrer-Policy: same-origin`: under `no-referrer` a browser sends
`Origin: null` even to the page's own site). A client that names neither header (a
script with `curl`) still needs a session and its token.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
DEFAULT_PORTS = {"http": "80", "https": "443"}
# `Sec-Fetch-Site` values of a request the desk's own pages made, or the user typed.
OWN_FETCH_SITES = frozenset({b"same-origin", b"none"})
REFUSED_PAGE = (
    b"<!DOCTYPE html><title>Refused</title>"
    b"<p>Refused: this form was not sent from the desk's own pages.</p>"
)


def host_of(origin: str) -> tuple[str, str] | None:
    """The scheme and `host[:port]` an `Origin` header names, the port left out where it
    is the scheme's default and the host in lower case; None for `null` or anything that
    is no origin."""
    try:
        parts = urlsplit(origin)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname or parts.path not in ("", "/"):
        return None
    host = parts.hostname.lower()
    if ":" in host:  # IPv6, bracketed as the Host header writes it
        host = f"[{host}]"
    if port is not None and str(port) != DEFAULT_PORTS[parts.scheme]:
        host = f"{host}:{port}"
    return parts.scheme, host


def from_own_pages(headers: dict[bytes, bytes]) -> bool:
    """Whether a request with these headers came from the desk's own pages, or from a
    client that names no page at all."""
    origin = headers.get(b"origin")
    site = headers.get(b"sec-fetch-site")
    if origin == b"null" and site == b"same-origin":
        # A page whose referrer policy hides its origin: the browser itself says where
        # the form came from (no page's script can set `Sec-Fetch-Site`).
        return True
    if origin is not None:
        named = host_of(origin.decode("latin-1"))
        if named is None:
            return False
        scheme, host = named
        # The Host header under the origin's scheme: behind a TLS proxy the request
        # arrives as http, from the browser's https page.
        own = headers.get(b"host", b"").decode("latin-1").strip().lower()
        default = f":{DEFAULT_PORTS[scheme]}"
        return host == (own[: -len(default)] if own.endswith(default) else own)
    return site is None or site in OWN_FETCH_SITES


class SameOrigin:
    """Refuses (403) every request but GET, HEAD and OPTIONS whose `Origin` or
    `Sec-Fetch-Site` says it came from another site's page."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in SAFE_METHODS:
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers", []))
        if from_own_pages(headers):
            await self.app(scope, receive, send)
            return
        await send(
            {
                "type": "http.response.start",
                "status": 403,
                "headers": [(b"content-type", b"text/html; charset=utf-8")],
            }
        )
        await send({"type": "http.response.body", "body": REFUSED_PAGE})
