"""auditor: compliance hand-history auditor for casino baccarat.

The audit runs as a pipeline of stages, each a module that maps frames to frames:
load -> validate -> replay -> settle -> procedures -> findings -> outputs.

From Python (docs/python.md)::

    import auditor

    outputs = auditor.audit("exports/2026-11-24", "audits/2026-11-24")
    outputs = auditor.audit(dataset, out, options=auditor.AuditOptions(memory_limit="4GB"))

The names below are imported when first used, so that `import auditor` stays light: a
command that needs no pipeline (`auditor rules`) never imports polars.
"""

from __future__ import annotations

import importlib
from importlib.metadata import PackageNotFoundError, version
from typing import Any

try:
    __version__ = version("auditor")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0"

# Each public name and the module that defines it (and its name there), by name only:
# the root package imports nothing of the floors above it (tests/unit/test_architecture.py).
_LAZY = {
    "audit": ("auditor.api", "audit"),
    "AuditOptions": ("auditor.api", "AuditOptions"),
    "validate": ("auditor.api", "validate"),
    "load_packs": ("auditor.packs.loaded", "load_packs"),
    "AuditorError": ("auditor.errors", "AuditorError"),
    "ExitStatus": ("auditor.errors", "ExitStatus"),
}

__all__ = [
    "AuditOptions",
    "AuditorError",
    "ExitStatus",
    "__version__",
    "audit",
    "load_packs",
    "validate",
]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'auditor' has no attribute {name!r}")
    module, attribute = _LAZY[name]
    loaded = importlib.import_module(module)
    value = getattr(loaded, attribute)
    globals()[name] = value  # once imported, an ordinary attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
