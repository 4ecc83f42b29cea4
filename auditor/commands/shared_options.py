"""Options several commands share: where a command writes (`--out`, `-o`), and the
spellings it had before, which keep working with a one-line note on stderr."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from datetime import date, datetime
from pathlib import Path
from typing import Any, TypeVar

import click

from auditor.defaults import ALERT_FDR

F = TypeVar("F", bound=Callable[..., Any])

OUT_FLAGS = ("--out", "-o")
NEW_SPELLING = "--out"


def out_option(help_text: str, *, metavar: str, required: bool = False, **attrs: Any):
    """`--out`/`-o`: the one spelling of where a command writes."""
    return click.option(
        *OUT_FLAGS, "out", metavar=metavar, required=required, help=help_text, **attrs
    )


def old_out_spelling(
    old: str, *, metavar: str, required: bool = False, positional: bool = False, **attrs: Any
) -> Callable[[F], F]:
    """Accept `old`, an earlier spelling of `--out` (an option, or with `positional` the
    command's last argument), as `--out`, with a note on stderr naming the spelling to
    use. Apply it below `out_option`: it hands the command one `out` value.

    Given both spellings, the command is refused (exit 2); with `required`, one of them
    must be given (click cannot require `--out` itself when another spelling may stand in).
    """
    hidden_name = "old_spelling_of_out"

    def decorate(command: F) -> F:
        @functools.wraps(command)
        def with_old_spelling(*args: Any, **kwargs: Any) -> Any:
            old_value = kwargs.pop(hidden_name)
            if old_value is not None:
                if kwargs.get("out") is not None:
                    raise click.UsageError(f"give {NEW_SPELLING} once ({old} is its old spelling)")
                click.echo(deprecation_note(old, metavar), err=True)
                kwargs["out"] = old_value
            if required and kwargs.get("out") is None:
                raise click.UsageError(f"Missing option '{NEW_SPELLING}' / '-o' ({metavar}).")
            return command(*args, **kwargs)

        if positional:
            # click 8.1 cannot hide an argument: its metavar says it is optional.
            declare = click.argument(hidden_name, required=False, metavar=f"[{old}]", **attrs)
        else:
            declare = click.option(old, hidden_name, hidden=True, **attrs)
        return declare(with_old_spelling)  # type: ignore[return-value]

    return decorate


def deprecation_note(old: str, metavar: str, new: str | None = None) -> str:
    """The one line an old spelling earns: which spelling to use instead (`--out` unless
    `new` names another)."""
    spelled = f"a positional {old}" if old.isupper() else old
    use = f"{new} {metavar}" if new else f"{NEW_SPELLING} {metavar} (or -o {metavar})"
    return f"warning: {spelled} is deprecated and will be removed: use {use}"


def nights_asked(
    first: datetime | None, start: datetime | None, last: datetime | None, nights: int | None
) -> tuple[date | None, int]:
    """`simulate`'s nights: the first day (None for one night in OUT itself) and how many,
    from --from and --to, or --from (or its old spelling --start) and --nights."""
    if start is not None:
        if first is not None:
            raise click.UsageError("give --from once (--start is its old spelling)")
        click.echo(deprecation_note("--start", "DATE", new="--from"), err=True)
        first = start
    if last is None:
        return (first and first.date()), nights or 1
    if first is None:
        raise click.UsageError("--to needs --from: the nights run from --from to --to")
    if nights is not None:
        raise click.UsageError("--to and --nights do not go together: give one of them")
    if last < first:
        raise click.BadParameter(
            f"{last.date()} is before --from {first.date()}", param_hint="'--to'"
        )
    return first.date(), (last - first).days + 1


def rules_options(command: F) -> F:
    """`--rules DIR` and `--replace-builtin`: rule packs of a folder beside the built-in
    ones; the command receives `rules_dir` and `replace_builtin` (see `loaded_packs`)."""
    command = click.option(
        "--replace-builtin",
        is_flag=True,
        help="Let a pack of --rules DIR replace the built-in pack of the same ruleset id "
        "(refused otherwise: the law audited under is not swapped silently).",
    )(command)
    return click.option(
        "--rules",
        "rules_dir",
        metavar="DIR",
        type=click.Path(path_type=Path),
        help="A folder of rule packs (*.yaml) loaded beside the built-in ones: a ruleset "
        "of its own, which the tables' ruleset column may name.",
    )(command)


def loaded_packs(rules_dir: Path | None, replace_builtin: bool):  # -> LoadedPacks
    """The packs a command runs under; imported here, when the command runs, so that
    `--help` loads none of them."""
    from auditor.packs.loaded import load_packs

    if replace_builtin and rules_dir is None:
        raise click.UsageError("--replace-builtin needs --rules DIR")
    return load_packs(rules_dir, replace_builtin)


def day_option(flag: str, dest: str, help_text: str, required: bool = False):
    """A gaming day or calendar day given as YYYY-MM-DD (`--from`, `--to`)."""
    return click.option(
        flag,
        dest,
        type=click.DateTime(["%Y-%m-%d"]),
        metavar="DATE",
        required=required,
        help=help_text,
    )


def alert_fdr_option(help_text: str):
    """`--alert-fdr`: the false-discovery rate surveillance holds its alerts to."""
    return click.option(
        "--alert-fdr",
        type=FiniteFloatRange(0, 1, min_open=True, max_open=True),
        default=ALERT_FDR,
        show_default=True,
        help=help_text,
    )


class FiniteFloatRange(click.FloatRange):
    """click's FloatRange, which lets NaN through (every comparison with it is false):
    a NaN or an infinity is refused as a bad parameter (exit 2) before any range check."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None):
        number = click.FLOAT.convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return super().convert(number, param, ctx)
