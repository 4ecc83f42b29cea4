"""Who is asking: the desk's logins, sessions, CSRF tokens and lockout.

A session lives on the server (its id, user, CSRF token and end); the browser holds only
its id, signed with a key made when the server starts (itsdangerous), in an HttpOnly,
SameSite=Strict cookie (Secure over TLS). So a forged id fails its signature, an expired
or logged-out one names no session, and a restart logs everyone out: the key and the
sessions never touch the disk.

Every form carries its session's CSRF token; the login form, before any session, a token
of its own held in a short-lived signed cookie (double submit). Five failed logins of one
name within the lockout window lock that name for the window, whatever password comes
next; the name need not exist, so a lock tells nothing of who is a user.
"""

from __future__ import annotations

import hmac
import math
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from itsdangerous import BadSignature, SignatureExpired, URLSafeTimedSerializer

from auditor.desk.users import User

SESSION_COOKIE = "desk_session"
LOGIN_COOKIE = "desk_login"
SESSION_SECONDS = 8 * 3600  # a working morning, and some
LOGIN_FORM_SECONDS = 15 * 60
MAX_FAILURES = 5
LOCK_SECONDS = 15 * 60
# What each role may do beside reading the pages.
MAY_REVIEW = frozenset({"reviewer"})
MAY_QUERY = frozenset({"regulator", "admin"})


@dataclass
class Session:
    id: str
    name: str
    role: str
    csrf: str
    ends: float

    @property
    def may_review(self) -> bool:
        return self.role in MAY_REVIEW

    @property
    def may_query(self) -> bool:
        return self.role in MAY_QUERY


@dataclass
class _Failures:
    moments: list[float] = field(default_factory=list)
    locked_until: float = 0.0


class Sessions:
    """The sessions of one running server, and the failed logins it has seen."""

    def __init__(
        self,
        *,
        seconds: float = SESSION_SECONDS,
        lock_seconds: float = LOCK_SECONDS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.seconds = seconds
        self.lock_seconds = lock_seconds
        self.clock = clock
        self._signer = URLSafeTimedSerializer(secrets.token_bytes(32), salt="auditor-desk")
        self._sessions: dict[str, Session] = {}
        self._failures: dict[str, _Failures] = {}
        self._lock = threading.Lock()

    # ---- sessions ---------------------------------------------------------------------

    def start(self, user: User) -> tuple[Session, str]:
        """A new session for `user`, and the cookie's signed value."""
        session = Session(
            secrets.token_urlsafe(32),
            user.name,
            user.role,
            secrets.token_urlsafe(32),
            self.clock() + self.seconds,
        )
        with self._lock:
            self._sessions[session.id] = session
            self._forget_ended()
        return session, self._signer.dumps(session.id)

    def find(self, cookie: str | None) -> Session | None:
        """The live session the cookie names, or None (missing, forged, expired, ended)."""
        if not cookie:
            return None
        try:
            # The signer counts whole seconds; the session's own end below is exact.
            session_id = self._signer.loads(cookie, max_age=math.ceil(self.seconds))
        except (BadSignature, SignatureExpired):
            return None
        with self._lock:
            session = self._sessions.get(session_id) if isinstance(session_id, str) else None
            if session is not None and session.ends <= self.clock():
                del self._sessions[session.id]
                return None
        return session

    def end(self, session: Session) -> None:
        with self._lock:
            self._sessions.pop(session.id, None)

    def _forget_ended(self) -> None:
        now = self.clock()
        for ended in [s for s in self._sessions.values() if s.ends <= now]:
            del self._sessions[ended.id]

    # ---- the login form's token ---------------------------------------------------------

    def login_token(self) -> tuple[str, str]:
        """A token for the login form and the signed cookie that must come back with it."""
        token = secrets.token_urlsafe(32)
        return token, self._signer.dumps({"login": token})

    def login_token_ok(self, cookie: str | None, token: str | None) -> bool:
        if not cookie or not token:
            return False
        try:
            held = self._signer.loads(cookie, max_age=LOGIN_FORM_SECONDS)
        except (BadSignature, SignatureExpired):
            return False
        return isinstance(held, dict) and same(held.get("login"), token)

    # ---- lockout ----------------------------------------------------------------------

    def locked(self, name: str) -> bool:
        with self._lock:
            failures = self._failures.get(name)
            return failures is not None and failures.locked_until > self.clock()

    def failed(self, name: str) -> None:
        now = self.clock()
        with self._lock:
            failures = self._failures.setdefault(name, _Failures())
            failures.moments = [m for m in failures.moments if m > now - self.lock_seconds]
            failures.moments.append(now)
            if len(failures.moments) >= MAX_FAILURES:
                failures.locked_until = now + self.lock_seconds
                failures.moments = []

    def succeeded(self, name: str) -> None:
        with self._lock:
            self._failures.pop(name, None)


def same(held: object, given: object) -> bool:
    """Whether two tokens are equal, in a time that does not tell how much of them is."""
    return (
        isinstance(held, str)
        and isinstance(given, str)
        and hmac.compare_digest(held.encode(), given.encode())
    )
