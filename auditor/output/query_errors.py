"""The errors of `auditor query` (`auditor.output.sandboxed_query`), apart so that the writing of
its results (`auditor.output.results`) can raise them too."""

from __future__ import annotations

from auditor.errors import AuditorError, ExitStatus


class QueryError(AuditorError):
    """A statement refused by the sandbox, or one that failed; exit status 2."""


class QueryInterrupted(QueryError):
    """A statement stopped by Ctrl-C; exit status 130, as a shell reports SIGINT."""

    exit_code = ExitStatus.INTERRUPTED
