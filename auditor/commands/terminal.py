"""What every command writes to the terminal with: the consoles and the one way to fail."""

from __future__ import annotations

import sys
from typing import NoReturn

import click
from rich.console import Console

from auditor.errors import AuditorError

stderr = Console(stderr=True)
stdout = Console()


def fail(error: AuditorError) -> NoReturn:
    """Print the error and exit with its status (2 for unusable input, ...)."""
    # click.echo, not rich: a path in the message must not be wrapped mid-name.
    click.echo(f"error: {error}", err=True)
    sys.exit(error.exit_code)
