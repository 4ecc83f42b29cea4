"""`auditor watch LANDING --archive ARCHIVE`: the live audit (docs/live.md)."""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path

import click

from auditor.commands.shared_options import day_option, rules_options
from auditor.commands.terminal import fail, visible
from auditor.errors import AuditorError


def _close_at(_ctx, _param, value: str | None):
    if value is None:
        return None
    for layout in ("%H:%M", "%H:%M:%S"):
        try:
            return datetime.strptime(value, layout).time()
        except ValueError:
            continue
    raise click.BadParameter(f"{value!r} is not a time of day as HH:MM or HH:MM:SS")


def _zone(_ctx, _param, value: str | None):
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(value or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        raise click.BadParameter(f"{value!r} is not a time zone (e.g. America/New_York)") from None


@click.command()
@click.argument("landing", metavar="LANDING", type=click.Path(path_type=Path))
@click.option(
    "--archive",
    "archive_folder",
    required=True,
    type=click.Path(path_type=Path),
    help="The archive the live runs and the closing runs go into (created when missing).",
)
@click.option(
    "--settle",
    type=click.FloatRange(min=0),
    default=2.0,
    show_default=True,
    help="Seconds a file written in place must keep its size and time before it is read.",
)
@click.option(
    "--poll",
    type=click.FloatRange(min=0.01),
    default=0.5,
    show_default=True,
    help="Seconds between two looks at LANDING.",
)
@click.option(
    "--on-finding",
    metavar="CMD",
    help="A command run for each finding reported, its JSON on standard input (split as a "
    "shell would, run without one).",
)
@click.option(
    "--close-at",
    metavar="HH:MM[:SS]",
    callback=_close_at,
    help="Close each gaming day ended by this time of day in --zone.",
)
@click.option(
    "--zone",
    metavar="ZONE",
    callback=_zone,
    help="The property's time zone for --close-at (IANA name) [default: UTC].",
)
@day_option("--close", "close_day", "Close this gaming day (YYYY-MM-DD) now, then exit.")
@rules_options
def watch(
    landing: Path,
    archive_folder: Path,
    settle: float,
    poll: float,
    on_finding: str | None,
    close_at,
    zone,
    close_day: datetime | None,
    rules_dir: Path | None,
    replace_builtin: bool,
) -> None:
    """Audit the files of LANDING as the logging system writes them, and report each
    finding while the patron may still be at the table: one JSON line on stdout per
    finding (new, changed, withdrawn or found again), also handed to --on-finding and
    kept in ARCHIVE's live run for its gaming day. A file is read when complete: written
    under a name starting with `.` or ending in `.tmp` and renamed, or unchanged for
    --settle seconds. Each batch audits its gaming day so far with the nightly audit's
    checks; a check that reads a shoe whole waits for the shoe to close. At --close-at
    (or with --close DAY, then exit) the day is audited as `auditor audit` would and
    added to ARCHIVE as the day's run. Progress goes to stderr. Stops on SIGTERM once
    the batch under way is done (exit 0) or on Ctrl-C (exit 130); started again, it
    resumes from ARCHIVE.

    \b
    Exit status:
      0    stopped by SIGTERM, or --close done
      2    unusable folders or arguments, another watch on ARCHIVE, a day already closed
      130  interrupted (Ctrl-C)

    Examples:

    \b
      auditor watch /landing --archive /audits/archive --close-at 07:30 --zone America/New_York
      auditor watch /landing --archive /audits/archive --on-finding "page-floor --severity high"
      auditor watch /landing --archive /audits/archive --close 2026-11-24
    """
    from auditor.commands.shared_options import loaded_packs
    from auditor.live.watch import Watch, WatchOptions

    def say(text: str) -> None:
        click.echo(visible(text), err=True)

    try:
        options = WatchOptions(
            landing,
            archive_folder,
            settle=settle,
            poll=poll,
            on_finding=on_finding,
            close_at=close_at,
            zone=zone,
            packs=loaded_packs(rules_dir, replace_builtin),
            command=[Path(sys.argv[0]).name, *sys.argv[1:]],
        )
        watcher = Watch(options, say)
        if close_day is not None:
            watcher.close(close_day.date().isoformat())
        else:
            watcher.run()
    except AuditorError as error:
        fail(error)


def live_options(command):
    """`simulate --live LANDING --pace X`: the day written over time (`simulator.live`)."""
    command = click.option(
        "--pace",
        type=click.FloatRange(min=0, min_open=True),
        default=60.0,
        show_default=True,
        help="With --live: how many times faster than the tables deal the files are written.",
    )(command)
    return click.option(
        "--live",
        "live",
        metavar="LANDING",
        type=click.Path(path_type=Path, file_okay=False),
        help="Write one gaming day into LANDING over time, file by file as a logging system "
        "would, for `auditor watch` (instead of --out).",
    )(command)


def live_into(deal_live, rounds: int, seed: int, day, nights: int, rates: dict) -> bool:
    """Run `simulate --live` when asked (the options taken out of `rates`) with the
    simulator's `deal_live`, which only `auditor simulate` imports; whether it ran."""
    from auditor.commands.progress import shows_progress

    live, pace = rates.pop("live"), rates.pop("pace")
    if live is None:
        return False
    if nights > 1:
        raise click.UsageError("--live writes one gaming day: --nights goes without it")
    say = (lambda text: click.echo(text, err=True)) if shows_progress(False) else None
    try:
        summary = deal_live(live, rounds, seed, pace, gaming_day=day, say=say, **rates)
    except AuditorError as error:
        fail(error)
    click.echo(summary.text())
    return True
