"""The progress bar of the long commands (audit, validate, simulate): on stderr, and only
when stderr is a terminal; and the rows it counts to."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from rich.progress import (
    BarColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from auditor.commands.terminal import stderr


class _CountColumn(ProgressColumn):
    """What is counted and how far: "12,500/2,000,000 rounds" (rich's own column has
    neither the separators nor the word)."""

    def __init__(self, unit: str) -> None:
        super().__init__()
        self.unit = unit

    def render(self, task: Task) -> Text:
        return Text(count_text(task.completed, task.total, self.unit), style="progress.download")


class _RateColumn(ProgressColumn):
    """Steps per second in the bar's unit, once rich has seen enough of them to say."""

    def __init__(self, unit: str) -> None:
        super().__init__()
        self.unit = unit

    def render(self, task: Task) -> Text:
        rate = f"{task.speed:,.0f} {self.unit}/s" if task.speed else ""
        return Text(rate, style="progress.data.speed")


def count_text(completed: float, total: float | None, unit: str) -> str:
    """ "1,234/5,678 rows", or "1,234 rows" while the total is unknown."""
    done = f"{int(completed):,}"
    return f"{done}/{int(total):,} {unit}" if total is not None else f"{done} {unit}"


def shows_progress(quiet: bool = False) -> bool:
    """Whether a progress bar is drawn: a caller need not count its steps otherwise."""
    return not quiet and stderr.is_terminal


@contextmanager
def progress_bar(
    description: str, total: int | None, quiet: bool = False, unit: str = "rows"
) -> Iterator[Callable[..., None]]:
    """A bar of `total` steps, each one of `unit` (rows, rounds, files), named in the
    counter; yields `advance(n, stage=None)`, where a stage renames the bar."""
    progress = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        _CountColumn(unit),
        _RateColumn(unit),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=stderr,
        transient=True,
        disable=not shows_progress(quiet),
    )
    with progress:
        task = progress.add_task(description, total=total)

        def advance(n: int, stage: str | None = None) -> None:
            progress.update(task, advance=n, description=_stage_name(description, stage))

        yield advance


def _stage_name(description: str, stage: str | None) -> str:
    from auditor.input.validate import STAGES

    if stage is None:
        return description
    return STAGES.get(stage, f"validating {stage}")


def rows_in(dataset_path: Path, *counted_twice: str, quiet: bool = False) -> int | None:
    """The rows of every table, and those of `counted_twice` once more (the audit's
    progress counts the rounds again as it audits them); one look at the footers, taken
    only for a bar that is drawn (ten thousand files' footers take a second)."""
    from auditor.input.load import open_dataset

    if not shows_progress(quiet):
        return None
    dataset = open_dataset(dataset_path)
    rows = {table: sum(s.rows for s in sources) for table, sources in dataset.files.items()}
    return sum(rows.values()) + sum(rows.get(table, 0) for table in counted_twice)
