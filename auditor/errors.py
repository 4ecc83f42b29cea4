"""One root exception with narrow subclasses; the CLI maps them to exit codes."""

from __future__ import annotations

from enum import IntEnum


class ExitStatus(IntEnum):
    """Every exit status the command line gives, one name each (docs/commands.md)."""

    OK = 0
    # Findings written by `audit`, rows quarantined by `validate`, differences found by
    # `diff`, a changed set for `verify`: the answer a scheduler acts on.
    FOUND = 1
    UNUSABLE = 2  # the input, the output folder or the arguments cannot be used
    INTERNAL_ERROR = 3  # never 1, which a scheduler reads as "findings written"
    INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a command Ctrl-C ended
    READER_GONE = 141  # 128 + SIGPIPE, as a shell reports `yes | head`


class AuditorError(Exception):
    """Root of every error the auditor raises on purpose."""

    exit_code: ExitStatus = ExitStatus.UNUSABLE


class InputError(AuditorError):
    """The dataset cannot be used: a missing table, an unreadable file, a wrong column type.

    The message names the file, the column and what was expected, so that the person
    who exported the data can fix it without reading our code.
    """

    def __init__(self, message: str, *, path: str | None = None, column: str | None = None):
        self.path = path
        self.column = column
        super().__init__(message)


class RulesetError(InputError):
    """A table names a ruleset that has no rule pack."""


def summarize(messages: list[str], limit: int = 10) -> str:
    """Join messages, ending long lists with '... and N more' rather than flooding a terminal."""
    shown = messages[:limit]
    text = "\n".join(shown)
    if len(messages) > limit:
        text += f"\n... and {len(messages) - limit} more"
    return text
