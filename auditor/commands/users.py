"""`auditor users add|list|remove|passwd FILE ...`: who may log in to the review desk."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from auditor.commands.formats import emit_rows, format_option
from auditor.commands.terminal import fail, visible
from auditor.errors import AuditorError

ROLE_CHOICES = ("reviewer", "regulator", "admin")  # auditor.desk.users.ROLES, without its import


@click.group()
def users() -> None:
    """Manage the review desk's users file (`auditor serve --users FILE`): each user's
    name, role and Argon2 password hash. Reviewers record reviews, regulators read
    everything and use the SQL console, admins manage users here (the desk has no page
    for it). The file is written whole and switched in, mode 0600; one that is a link or
    writable by its group or everyone is refused.

    Exit status 0, or 2 for a bad name, role or password, an unknown or existing user,
    or a users file that cannot be trusted.

    Examples:

    \b
      auditor users add /etc/auditor/users.json jdoe --role reviewer
      auditor users list /etc/auditor/users.json
    """


def _password(password_stdin: bool, confirm: bool = True) -> str:
    if password_stdin:
        line = sys.stdin.readline()
        return line[:-1] if line.endswith("\n") else line
    return click.prompt("Password", hide_input=True, confirmation_prompt=confirm)


def _password_option(function):
    return click.option(
        "--password-stdin",
        is_flag=True,
        help="Read the password from the first line of standard input, not the terminal.",
    )(function)


@users.command("add")
@click.argument("users_file", metavar="FILE", type=click.Path(path_type=Path))
@click.argument("name")
@click.option(
    "--role", type=click.Choice(ROLE_CHOICES), required=True, help="What the user may do."
)
@_password_option
def add(users_file: Path, name: str, role: str, password_stdin: bool) -> None:
    """Add NAME with ROLE to FILE (made when missing); the password is asked on the
    terminal twice, or read from standard input with --password-stdin. NAME is what the
    ledger records as the reviewer.

    Examples:

    \b
      auditor users add users.json jdoe --role reviewer
      auditor users add users.json regulator1 --role regulator --password-stdin
    """
    from auditor.desk.users import add_user, check_name

    try:
        check_name(name)
        add_user(users_file, name, role, _password(password_stdin))
    except AuditorError as error:
        fail(error)
    click.echo(f"{visible(str(users_file))}: {name} added as {role}")


@users.command("list")
@click.argument("users_file", metavar="FILE", type=click.Path(path_type=Path))
@format_option()
def list_users(users_file: Path, fmt: str) -> None:
    """List FILE's users, one per line: name and role (csv: name,role with a header;
    json: a list of objects).

    Examples:

    \b
      auditor users list users.json
      auditor users list users.json --format json
    """
    from auditor.desk.users import read_users

    try:
        found = read_users(users_file)
    except AuditorError as error:
        fail(error)
    listed = sorted(found.values(), key=lambda u: u.name)
    if fmt != "table":
        emit_rows([{"name": u.name, "role": u.role} for u in listed], ["name", "role"], fmt)
        return
    for user in listed:
        click.echo(f"{user.name}\t{user.role}")


@users.command("remove")
@click.argument("users_file", metavar="FILE", type=click.Path(path_type=Path))
@click.argument("name")
def remove(users_file: Path, name: str) -> None:
    """Remove NAME from FILE: their next request to a running desk finds them logged out.

    Examples:

    \b
      auditor users remove users.json jdoe
    """
    from auditor.desk.users import remove_user

    try:
        remove_user(users_file, name)
    except AuditorError as error:
        fail(error)
    click.echo(f"{visible(str(users_file))}: {name} removed")


@users.command("passwd")
@click.argument("users_file", metavar="FILE", type=click.Path(path_type=Path))
@click.argument("name")
@_password_option
def passwd(users_file: Path, name: str, password_stdin: bool) -> None:
    """Set NAME's password in FILE (asked twice, or read with --password-stdin).

    Examples:

    \b
      auditor users passwd users.json jdoe
    """
    from auditor.desk.users import change_password

    try:
        change_password(users_file, name, _password(password_stdin))
    except AuditorError as error:
        fail(error)
    click.echo(f"{visible(str(users_file))}: password of {name} changed")
