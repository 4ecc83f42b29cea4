"""The desk served by uvicorn: on 127.0.0.1 unless told otherwise, and on another address
only over TLS (`--tls-cert`/`--tls-key`) or when plain HTTP is asked for by name
(`--insecure-http`): passwords and session cookies cross that network.

The socket is bound here, before uvicorn starts, so that a port in use is said as the
command's own error (exit 2), and the address printed is the one bound (port 0: a free
one). Ctrl-C stops uvicorn, which finishes the requests under way first.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from auditor.errors import AuditorError

LOOPBACK_NAMES = {"localhost"}


class ServeError(AuditorError):
    """The desk cannot be served as asked (exit 2)."""


@dataclass(frozen=True)
class Listen:
    host: str
    port: int
    tls_cert: Path | None = None
    tls_key: Path | None = None
    insecure_http: bool = False

    @property
    def tls(self) -> bool:
        return self.tls_cert is not None


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_listen(listen: Listen) -> None:
    if (listen.tls_cert is None) != (listen.tls_key is None):
        raise ServeError("give --tls-cert and --tls-key together")
    for path in (listen.tls_cert, listen.tls_key):
        if path is not None and not Path(path).is_file():
            raise ServeError(f"{path}: no such file")
    if not is_loopback(listen.host) and not listen.tls and not listen.insecure_http:
        raise ServeError(
            f"--host {listen.host} is reachable from other machines: serve it over TLS "
            "(--tls-cert FILE --tls-key FILE), or say --insecure-http to send passwords "
            "and session cookies over plain HTTP"
        )


def bound_socket(listen: Listen) -> socket.socket:
    family = socket.AF_INET6 if ":" in listen.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((listen.host, listen.port))
    except OSError as exc:
        sock.close()
        raise ServeError(
            f"{listen.host}:{listen.port}: cannot listen there ({exc.strerror})"
        ) from exc
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def address(listen: Listen, sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"{'https' if listen.tls else 'http'}://{shown}:{port}/"


def serve(
    archive: Path,
    users_file: Path,
    listen: Listen,
    say: Callable[[str], None],
) -> None:
    """Serve the desk until Ctrl-C (KeyboardInterrupt, once uvicorn has stopped)."""
    import uvicorn

    from auditor.desk.app import create_app

    check_listen(listen)
    app = create_app(archive, users_file, secure=listen.tls)
    sock = bound_socket(listen)
    config = uvicorn.Config(
        app,
        log_level="warning",
        lifespan="off",
        server_header=False,
        ssl_certfile=str(listen.tls_cert) if listen.tls_cert else None,
        ssl_keyfile=str(listen.tls_key) if listen.tls_key else None,
        timeout_graceful_shutdown=10,
    )
    server = uvicorn.Server(config)
    say(f"Review desk of {archive} at {address(listen, sock)} (Ctrl-C stops it)")
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
