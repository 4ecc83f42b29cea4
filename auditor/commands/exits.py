"""The command line's exit statuses for what the commands themselves do not answer: an
unexpected error is exit 3 (never 1, "findings written"), Ctrl-C is 130 whatever a
library turned it into, a closed pipe is 141."""

from __future__ import annotations

import os
import sys
from typing import NoReturn

import click

from auditor.commands.terminal import crash, fail
from auditor.errors import AuditorError, ExitStatus
from auditor.interrupts import InterruptNote


class Commands(click.Group):
    """The commands, with one answer to what none of them expected: exit 3 and the
    traceback in a file, never exit 1, which a scheduler reads as "findings written";
    and one answer to Ctrl-C, whatever a library turned it into: exit 130."""

    def main(self, *args, **kwargs):
        if not kwargs.get("standalone_mode", True):
            return super().main(*args, **kwargs)
        # Noted as it arrives: DuckDB turns the KeyboardInterrupt it raises into an error of
        # its own ("Query interrupted"), a clean-up may raise another while it unwinds,
        # and click's own handling of one says "Aborted!" with exit 1.
        _interrupt.arm()
        try:
            try:
                super().main(*args, **kwargs)
                status: int | str | None = ExitStatus.OK
            except SystemExit as done:
                status = done.code
        except KeyboardInterrupt:
            status = ExitStatus.INTERRUPTED
        if _interrupt.noted and status != ExitStatus.INTERRUPTED:
            status = ExitStatus.INTERRUPTED
            click.echo("interrupted", err=True)
        # Run as the process (click reads its arguments from sys.argv), the status is
        # decided: a Ctrl-C while the interpreter shuts down would end it by the signal
        # instead. Called with arguments (a test, a program), the caller's handler is back.
        as_process = not args and kwargs.get("args") is None
        _interrupt.disarm(ignore_later=as_process)
        if status == ExitStatus.INTERRUPTED and as_process:
            # Stopped halfway, a library's native threads may still be at work, and the
            # interpreter's shutdown can meet one mid-call and abort (SIGABRT, "PyThreadState_Get:
            # the GIL is released"). Every clean-up has run as the stack unwound: end here.
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(ExitStatus.INTERRUPTED)
        raise SystemExit(status)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except KeyboardInterrupt:
            _interrupted()
        except BrokenPipeError:
            _reader_gone()
        except (SystemExit, GeneratorExit):
            raise  # an exit's own status stands
        except BaseException as error:  # every unexpected error, by design
            # polars' PanicException derives from BaseException, not Exception: a panic,
            # like any defect, is exit 3; whatever a Ctrl-C was turned into is 130.
            if _interrupt.noted:
                _interrupted()
            if isinstance(error, AuditorError):
                fail(error)
            crash(error)


_interrupt = InterruptNote()


def _interrupted() -> NoReturn:
    click.echo("interrupted", err=True)
    sys.exit(ExitStatus.INTERRUPTED)


def _reader_gone() -> NoReturn:
    """The reader of a pipe stopped reading (`auditor rules --format csv | head`): stop
    quietly, with the status a shell gives a command that SIGPIPE ended. Whatever is
    still buffered goes nowhere, so that exiting does not fail on the closed pipe too."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    sys.exit(ExitStatus.READER_GONE)
