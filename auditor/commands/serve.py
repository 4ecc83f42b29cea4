"""`auditor serve ARCHIVE --users FILE`: the review desk, a web application over an archive."""

from __future__ import annotations

from pathlib import Path

import click

from auditor.commands.terminal import fail, visible
from auditor.errors import AuditorError


@click.command()
@click.argument("archive_folder", metavar="ARCHIVE", type=click.Path(path_type=Path))
@click.option(
    "--users",
    "users_file",
    type=click.Path(path_type=Path),
    required=True,
    help="The users file (`auditor users add`): who may log in, with which role.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port", default=8765, show_default=True, type=click.IntRange(0, 65535), help="Port."
)
@click.option("--tls-cert", type=click.Path(path_type=Path), help="TLS certificate (PEM).")
@click.option("--tls-key", type=click.Path(path_type=Path), help="TLS private key (PEM).")
@click.option(
    "--insecure-http",
    is_flag=True,
    help="Serve plain HTTP on an address other machines reach (passwords in the clear).",
)
def serve(
    archive_folder: Path,
    users_file: Path,
    host: str,
    port: int,
    tls_cert: Path | None,
    tls_key: Path | None,
    insecure_http: bool,
) -> None:
    """Serve the review desk over ARCHIVE: the nights, the queue of open findings, each
    finding with its evidence and history, reviews recorded into the archive's ledger
    (one at a time or in batches), investigations across nights, the period report and
    alerts, and a read-only SQL console. Every page needs a login (--users FILE).
    Listens on 127.0.0.1 unless --host says otherwise; another address needs
    --tls-cert and --tls-key, or --insecure-http. Prints the address; Ctrl-C stops it.

    Exit status 130 once stopped by Ctrl-C; 2 for a folder that is not an archive, a
    users file that cannot be trusted, an address that cannot be listened on, or one
    other machines reach without TLS or --insecure-http.

    Examples:

    \b
      auditor serve /audits/archive --users /etc/auditor/users.json
      auditor serve archive --users users.json --host 0.0.0.0 --tls-cert c.pem --tls-key k.pem
    """
    from auditor.desk.server import Listen
    from auditor.desk.server import serve as serve_desk

    listen = Listen(host, port, tls_cert, tls_key, insecure_http)
    try:
        serve_desk(archive_folder, users_file, listen, lambda line: click.echo(visible(line)))
    except AuditorError as error:
        fail(error)
    except KeyboardInterrupt:
        click.echo("the review desk stopped", err=True)
        raise
