"""The command line as the tests run it: in this process through click's runner (`cli`),
or as the installed `auditor` executable of this environment (`AUDITOR`)."""

from __future__ import annotations

import sys
from pathlib import Path

from click.testing import CliRunner, Result

from auditor.cli import main

# The console script beside this interpreter: the tests' own environment, whatever PATH says.
AUDITOR = str(Path(sys.executable).with_name("auditor"))


def cli(*args: object, stdin: str | None = None, terminal_width: int | None = None) -> Result:
    """`auditor ARGS` in process, each argument passed as its text (paths, dates and
    numbers as a shell would pass them); `stdin` is what the command reads."""
    return CliRunner().invoke(
        main, [str(a) for a in args], input=stdin, terminal_width=terminal_width
    )
