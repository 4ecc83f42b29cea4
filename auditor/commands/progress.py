"""The progress bar of the long commands (audit, validate, simulate): on stderr, and only
when stderr is a terminal."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from auditor.commands.terminal import stderr


class _RateColumn(ProgressColumn):
    """Rows (or rounds) per second, once rich has seen enough of them to say."""

    def render(self, task: Task) -> Text:
        return Text(f"{task.speed:,.0f}/s" if task.speed else "", style="progress.data.speed")


def shows_progress(quiet: bool = False) -> bool:
    """Whether a progress bar is drawn: a caller need not count its steps otherwise."""
    return not quiet and stderr.is_terminal


@contextmanager
def progress_bar(
    description: str, total: int | None, quiet: bool = False
) -> Iterator[Callable[..., None]]:
    """A bar of `total` steps; yields `advance(n, stage=None)`, where a stage renames it."""
    progress = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        _RateColumn(),
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
