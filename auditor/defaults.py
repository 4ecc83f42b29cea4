"""The command line's defaults and the one size parser, apart from the pipeline: a
command that only prints (`--help`, `--version`, `rules`) must not pay for importing
polars, pandera and scipy to learn a default."""

from __future__ import annotations

import math

from auditor.errors import InputError

DEFAULT_MEMORY_LIMIT = "2GB"
# The false-discovery rate the surveillance alerts are held to: among a night's alerts,
# the expected share raised on fair play is at most this.
ALERT_FDR = 0.01
_UNITS = {"": 1, "B": 1, "KB": 2**10, "MB": 2**20, "GB": 2**30, "TB": 2**40}
# Far above any machine's memory, and within the 64-bit sizes DuckDB and the partition
# arithmetic hold: "1e400GB" is a typing error, not a limit.
LARGEST_SIZE = 2**60


def parse_size(text: str) -> int:
    """Bytes from "2GB", "1500MB", "512 MiB" or a plain number of bytes."""
    cleaned = text.strip().upper().replace("IB", "B").replace(" ", "")
    number = cleaned.rstrip("KMGTB")
    unit = cleaned[len(number) :]
    try:
        value = float(number)
    except ValueError:
        value = -1.0
    if unit not in _UNITS or not math.isfinite(value) or value <= 0:
        raise InputError(f"memory limit {text!r}: expected a size such as 2GB or 1500MB")
    size = value * _UNITS[unit]
    if size > LARGEST_SIZE:
        raise InputError(f"memory limit {text!r}: larger than any machine's (at most 1024PB)")
    return int(size)
