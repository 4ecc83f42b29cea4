"""Ctrl-C held back for the few steps that must not stop halfway: a clean-up that an
interrupt would leave half done (a staging folder half removed) is finished first."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
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
