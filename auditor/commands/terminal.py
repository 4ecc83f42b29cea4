"""What every command writes to the terminal with: the consoles and the one way to fail."""

from __future__ import annotations

import os
import re
import sys
import tempfile
import traceback
from typing import Any, NoReturn

import click
from rich.console import Console
from rich.table import Table

from auditor.errors import AuditorError, ExitStatus


class _Console(Console):
    def on_broken_pipe(self) -> None:
        # rich would exit 1, which says "findings" here: the command line stops with the
        # status of a closed pipe instead (`auditor.cli`).
        raise BrokenPipeError


# Wide enough that no table of the auditor's reaches it: a cell is never folded, a line
# never cut.
NOT_A_TERMINAL_WIDTH = 100_000

stderr = _Console(stderr=True)
# Piped or redirected, nothing is wrapped or cut to fit 80 columns: `auditor rules | grep`
# must see whole names and citations. A terminal keeps its own width.
stdout = _Console() if sys.stdout.isatty() else _Console(width=NOT_A_TERMINAL_WIDTH, soft_wrap=True)


def text_table(**options: Any) -> Table:
    """A table for stdout: with its borders on a terminal; piped or redirected, plain
    columns (no box characters for `grep`, `cut` or a spreadsheet to trip on)."""
    if not stdout.is_terminal:
        options.setdefault("box", None)
    return Table(**options)


# What a terminal obeys or reorders rather than shows: C0 and C1 controls and DEL (ANSI
# escapes, bells, carriage returns), the bidirectional marks, embeddings, overrides and
# isolates (a name that reads differently from what it holds), and the line and
# paragraph separators.
_OTHER_UNSEEN = "\\x0b-\\x1f\\x7f-\\x9f\\u061c\\u200e\\u200f\\u2028-\\u202e\\u2066-\\u2069"
_UNSEEN = re.compile(f"[\\x00-\\x0a{_OTHER_UNSEEN}]")
_UNSEEN_EXCEPT_LINES = re.compile(f"[\\x00-\\x08{_OTHER_UNSEEN}]")  # keeps \t and \n


def visible(text: str, *, lines: bool = False) -> str:
    """`text` with every control or bidirectional character written as its escape
    (ESC as `\\x1b`, U+202E as `\\u202e`), so that data printed to a terminal can
    neither drive it nor disguise itself. With `lines`, newlines and tabs stay as they
    are (a multi-line message); without, they are escaped too (a table cell, one line)."""
    unseen = _UNSEEN_EXCEPT_LINES if lines else _UNSEEN
    return unseen.sub(_escape, text)


_NAMED_ESCAPES = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED_ESCAPES:
        return _NAMED_ESCAPES[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def fail(error: AuditorError) -> NoReturn:
    """Print the error and exit with its status (2 for unusable input, ...)."""
    # click.echo, not rich: a path in the message must not be wrapped mid-name. A
    # message may quote the data (a value DuckDB could not convert): escaped.
    click.echo(f"error: {visible(str(error), lines=True)}", err=True)
    sys.exit(error.exit_code)


def crash(error: BaseException) -> NoReturn:
    """An error no command expected: one line on stderr, the traceback in a file of its
    own, exit 3 (not 1, which says "findings written"). A run's OUTDIR is as it was: the
    set is written into a staging folder that a failed run removes."""
    try:
        path = _write_details(error)
        summary = visible(f"{type(error).__name__}: {error}".splitlines()[0][:300])
        click.echo(f"internal error: {summary}; details in {path}", err=True)
    except Exception:
        # Out of memory, or a full disk, again while reporting it: the status must still
        # say "internal error", never 1 ("findings written").
        os.write(2, f"internal error: {type(error).__name__}\n".encode())
    sys.exit(ExitStatus.INTERNAL_ERROR)


def _write_details(error: BaseException) -> str:
    """The command and the traceback in a file of its own; its path."""
    handle, path = tempfile.mkstemp(prefix="auditor-internal-error-", suffix=".txt")
    with os.fdopen(handle, "w", encoding="utf-8") as details:
        details.write(f"auditor {' '.join(sys.argv[1:])}\n\n")
        traceback.print_exception(error, file=details)
    return path
