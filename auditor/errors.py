"""One root exception with narrow subclasses; the CLI maps them to exit codes."""

from __future__ import annotations


class AuditorError(Exception):
    """Root of every error the auditor raises on purpose."""

    exit_code = 2


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
