"""Archives of many nights: consecutive gaming days, each its own dataset folder.

`simulate_nights()` deals `nights` gaming days from `start` (noon to noon UTC), each into
`OUT/YYYY-MM-DD/` by `simulate(..., gaming_day=day)`: every day has the same tables
(ids, properties, options), dealers and patrons, so that an archive can follow one of
them over weeks; shoe, round, wager and commission collection ids carry the date, so
they are unique across days; each day is dealt from random streams of the seed and its
date, and keeps its fault key in its folder. `OUT` holds the days' folders and the
archive's marker (`folder.MARKER`), and is claimed as a day's folder is (see `folder`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from auditor.simulator.folder import claim
from auditor.simulator.plants import Plant
from auditor.simulator.simulate import (
    BASE_US,
    SECOND,
    SimulationSummary,
    checked_arguments,
    counts_text,
    fault_lines,
    ruleset_lines,
    simulate,
)


@dataclass(frozen=True)
class ArchiveSummary:
    out: Path
    nights: list[SimulationSummary]

    @property
    def total_faults(self) -> int:
        return sum(night.total_faults for night in self.nights)

    def text(self) -> str:
        """One line per night and the totals, then the tables and the faults, for a person."""
        first, last = self.nights[0], self.nights[-1]
        rows: dict[str, int] = {}
        rounds: dict[str, int] = {}
        faults: dict[str, int] = {}
        for night in self.nights:
            for total, counts in ((rows, night.rows), (rounds, night.rounds_per_table)):
                for name, count in counts.items():
                    total[name] = total.get(name, 0) + count
            for kind, count in night.faults.items():
                faults[kind] = faults.get(kind, 0) + count
        nights = len(self.nights)
        days = f"{first.gaming_day}" + (f" to {last.gaming_day}" if nights > 1 else "")
        return "\n".join(
            [
                f"{nights} gaming day{'s' * (nights > 1)} (noon to noon UTC), {days}, "
                f"one folder each in {self.out}:",
                *(
                    f"  {night.gaming_day}  {counts_text(night.rows)}, "
                    f"{night.total_faults:,} faults"
                    for night in self.nights
                ),
                f"  {'in all':<10}  {counts_text(rows)}, {self.total_faults:,} faults",
                "The same tables every night (rounds of all the nights):",
                *ruleset_lines(first.rulesets, rounds)[1:],
                *fault_lines(faults, "each night's fault_key.parquet"),
            ]
        )


# The gaming day of a one-night run's fixed evening: an archive's first without a start.
DEFAULT_START = datetime.fromtimestamp(BASE_US // SECOND, UTC).date()


def night_days(start: date, nights: int) -> list[date]:
    return [start + timedelta(days=k) for k in range(nights)]


def simulate_nights(
    out: Path,
    rounds: int,
    seed: int,
    start: date | None,
    nights: int,
    fault_rate: float = 0.0,
    progress: Callable[[int], None] | None = None,
    shoe_fault_rate: float | None = None,
    plant: Plant | None = None,
) -> ArchiveSummary:
    """Deal `nights` gaming days of `rounds` rounds each from `start` (None: the one-night
    run's day, `DEFAULT_START`) into `out/YYYY-MM-DD/`.

    `out` must be missing, empty or hold a previous simulation's output, which is
    replaced; anything else is refused (`folder.FolderInUse`). `progress(n)` is called
    with the rounds produced since the last call, over all the nights. `plant` deals the
    same slow frauds into every night (`plants`).
    """
    if nights < 1:
        raise ValueError(f"nights must be >= 1, got {nights}")
    shoe_rate = checked_arguments(rounds, seed, fault_rate, shoe_fault_rate)
    start = DEFAULT_START if start is None else start
    out = Path(out)
    arguments = {"rounds": rounds, "seed": seed, "faults": fault_rate, "shoe_faults": shoe_rate}
    claim(out, arguments | {"start": start.isoformat(), "nights": nights})
    summaries = [
        simulate(
            out / day.isoformat(),
            rounds,
            seed,
            fault_rate,
            progress,
            shoe_fault_rate,
            gaming_day=day,
            plant=plant,
        )
        for day in night_days(start, nights)
    ]
    return ArchiveSummary(out, summaries)


def deal(
    out: Path,
    rounds: int,
    seed: int,
    start: date | None,
    nights: int,
    archive: bool,
    progress: Callable[[int], None] | None = None,
    fault_rate: float = 0.0,
    shoe_fault_rate: float | None = None,
) -> SimulationSummary | ArchiveSummary:
    """The command's dealing: one night into `out` itself, or an `archive` of nights."""
    if archive:
        return simulate_nights(
            out, rounds, seed, start, nights, fault_rate, progress, shoe_fault_rate
        )
    return simulate(out, rounds, seed, fault_rate, progress, shoe_fault_rate)
