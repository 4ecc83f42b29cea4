"""`auditor simulate`: nights dealt by the simulator into a dataset folder, one gaming
day or several, or one day written into a landing folder over time (`--live`)."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import click

from auditor.commands.progress import progress_bar
from auditor.commands.shared_options import (
    FiniteFloatRange,
    day_option,
    nights_asked,
    old_out_spelling,
    out_option,
)
from auditor.commands.terminal import fail
from auditor.commands.watch import live_into, live_options
from auditor.errors import AuditorError


@click.command()
@out_option(
    "Dataset folder to write: missing, empty or a previous simulation's.",
    metavar="OUT",
    type=click.Path(path_type=Path, file_okay=False),
)
@old_out_spelling("OUT", metavar="OUT", positional=True, type=click.Path(path_type=Path))
@click.option("--rounds", type=click.IntRange(min=1), required=True, help="Rounds a night.")
@click.option("--seed", type=click.IntRange(0), default=0, show_default=True, help="Random seed.")
@click.option(
    "--faults",
    "fault_rate",
    type=FiniteFloatRange(0.0, 1.0),
    default=0.0,
    show_default=True,
    help="Share of rounds (and shoes) that receive one injected fault.",
)
@click.option(
    "--shoe-faults",
    "shoe_fault_rate",
    type=FiniteFloatRange(0.0, 1.0),
    help="Share of shoes that receive one injected shoe fault (default: --faults).",
)
@day_option(
    "--from",
    "first",
    "First gaming day (noon to noon UTC): each night in a folder OUT/YYYY-MM-DD/ "
    "[default: one night in OUT itself; with --nights, from 2026-11-24].",
)
@day_option("--to", "last", "Last gaming day, inclusive (with --from; instead of --nights).")
@click.option("--start", type=click.DateTime(["%Y-%m-%d"]), hidden=True)  # --from's old name
@click.option(
    "--nights",
    type=click.IntRange(min=1),
    help="Consecutive gaming days: the same tables, dealers and patrons, ids unique across "
    "nights, each night dealt from the seed and its date [default: 1].",
)
@live_options
def simulate(
    out: Path, rounds: int, seed: int, first, last, start, nights: int | None, **rates
) -> None:
    """Deal ROUNDS rounds at tables of every ruleset and write a dataset to OUT (--out);
    with --from (and --to or --nights) or --nights, one dataset a night in
    OUT/YYYY-MM-DD/. OUT must be missing, empty or a previous simulation's (marked by its
    _simulation.json), which is replaced; anything else is refused with exit status 2
    and left as it is. Ends with a summary of what was written. OUT as a positional
    argument and --start (for --from) are the old spellings.

    Examples:

    \b
      auditor simulate --out night --rounds 2000 --faults 0.02
      auditor simulate -o nights --rounds 5000 --from 2026-11-01 --to 2026-11-30
      auditor simulate -o nights --rounds 5000 --from 2026-11-01 --nights 30
    """
    from auditor.findings.words import count_text
    from auditor.simulator.live import deal_live
    from auditor.simulator.nights import DEFAULT_START, deal

    day, nights = nights_asked(first, start, last, nights)
    if live_into(deal_live, rounds, seed, day, nights, rates):
        return
    if out is None:
        raise click.UsageError("Missing option '--out' / '-o' (OUT).")
    archive = day is not None or nights > 1
    label = f"dealing {count_text(nights, 'night', 'nights')}" if archive else "dealing"
    _check_last_night(day or DEFAULT_START, nights)
    try:
        with progress_bar(label, rounds * nights, unit="rounds") as advance:
            summary = deal(out, rounds, seed, day, nights, archive, advance, **rates)
    except AuditorError as error:
        fail(error)
    click.echo(summary.text())


def _check_last_night(first: date, nights: int) -> None:
    """The nights end by 9999-12-31, the last day a date can name."""
    try:
        first + timedelta(days=nights - 1)
    except OverflowError:
        raise click.BadParameter(
            f"{nights:,} nights from {first} run past 9999-12-31",
            param_hint="'--nights'",
        ) from None
