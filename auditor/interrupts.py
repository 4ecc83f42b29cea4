"""Ctrl-C: noted as it arrives, whatever a library turns it into, so that the command
line exits 130; and held back for the few steps that must not stop halfway, a clean-up
that an interrupt would leave half done (a staging folder half removed)."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager


@contextmanager
def interrupts_deferred() -> Iterator[None]:
    """Run the block whole: a SIGINT that arrives meanwhile is handed to the handler that
    was in place once the block is over (by default, KeyboardInterrupt is raised then).
    Signals reach Python's main thread only: elsewhere the block runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    arrived: list[int] = []
    before = signal.signal(signal.SIGINT, lambda signum, _frame: arrived.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)
        if arrived and callable(before):
            before(signal.SIGINT, None)
        elif arrived and before == signal.SIG_DFL:
            raise KeyboardInterrupt


class InterruptNote:
    """Ctrl-C (SIGINT), noted when it arrives and then raised as Python does."""

    def __init__(self) -> None:
        self._before: Callable | int | None = None

    @property
    def noted(self) -> bool:
        return _noted.is_set()

    def arm(self) -> None:
        """Note each Ctrl-C from now on (signals reach the main thread only)."""
        _noted.clear()
        if threading.current_thread() is threading.main_thread():
            self._before = signal.signal(signal.SIGINT, self._on_signal)

    def disarm(self, ignore_later: bool) -> None:
        """The handler there was before, or none with `ignore_later`: the status is
        decided."""
        if self._before is not None:
            signal.signal(signal.SIGINT, signal.SIG_IGN if ignore_later else self._before)
            self._before = None

    def _on_signal(self, _signum: int, _frame: object) -> None:
        _noted.set()
        raise KeyboardInterrupt


_noted = threading.Event()


def interrupt_handled() -> None:
    """A Ctrl-C was answered in full (a prompt stopped its statement and goes on): it no
    longer decides the exit status."""
    _noted.clear()
