"""`auditor odds`: the exact odds of every wager a ruleset permits, as a table, csv or
json. Its help's examples name a pack that ships, found when the help is built: no
module outside the packs names a ruleset."""

from __future__ import annotations

from pathlib import Path

import click

from auditor.commands.formats import emit, emit_rows, format_option, json_text
from auditor.commands.shared_options import loaded_packs, rules_options
from auditor.commands.terminal import fail, stdout
from auditor.errors import AuditorError

WAGER_COLUMNS = [
    "ruleset",
    "decks",
    "bet",
    "variant",
    "pays",
    "win",
    "push",
    "lose",
    "expected_value",
    "house_edge",
    "cite",
    "note",
]
FIGURES = ("win", "push", "lose", "expected_value", "house_edge")


class ShippedPackExamples(click.Command):
    """A command whose help names shipped packs: `{commission_pack}` and
    `{commission_percent}` in its help become, when the help is built, the first built-in
    pack that offers more than one commission percent (else the first pack) and its
    least percent."""

    def format_help_text(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        written = self.help
        self.help = (written or "").format(**shipped_example())
        try:
            super().format_help_text(ctx, formatter)
        finally:
            self.help = written


def shipped_example() -> dict[str, str]:
    from auditor.packs.loaded import builtin_packs

    packs = list(builtin_packs().values())
    offering = [p for p in packs if len(p.commission.percents.values) > 1] or packs
    pack = offering[0]
    return {
        "commission_pack": pack.ruleset,
        "commission_percent": str(min(pack.commission.percents.values)),
    }


@click.command(cls=ShippedPackExamples)
@click.option("--decks", type=int, required=True, help="Decks in the shoe (1 to 24).")
@click.option(
    "--ruleset", "rulesets", multiple=True, help="A ruleset (repeatable; default: every pack)."
)
@click.option(
    "--table-options",
    "option_words",
    multiple=True,
    help="key=value pairs, e.g. 'tie_pays=9 commission_percent=4 dragon_bonus_paytable=B'.",
)
@format_option()
@click.argument("more_options", nargs=-1)
@rules_options
def odds(
    decks: int,
    rulesets: tuple[str, ...],
    option_words: tuple[str, ...],
    fmt: str,
    more_options: tuple[str, ...],
    rules_dir: Path | None,
    replace_builtin: bool,
) -> None:
    """Exact probabilities and house edges of every wager the ruleset permits.

    Full enumeration of a fresh shoe of --decks decks under the rule packs' draw tables
    and paytables. Table options (after --table-options, or as further KEY=VALUE
    arguments) fix what the table offers; left out, every permitted choice is shown.
    A --ruleset is the id of a pack loaded (`auditor rules --rules DIR` lists them).
    --format csv writes a row a ruleset's wager, its figures as 9-place decimals;
    json writes the outcomes and wagers with each figure as an exact fraction
    ("p/q") beside its decimal.

    Examples:

    \b
      auditor odds --decks 8
      auditor odds --decks 6 --ruleset {commission_pack} commission_percent={commission_percent}
      auditor odds --decks 8 --rules /packs/freedonia --ruleset fr-baccarat --format json
    """
    from auditor.odds.report import odds_report, render, to_json
    from auditor.odds.table_options import parse_table_options

    try:
        options = parse_table_options((*option_words, *more_options))
        packs = loaded_packs(rules_dir, replace_builtin)
        reports = odds_report(rulesets, decks, options, packs)
    except AuditorError as error:
        fail(error)
    data = to_json(reports, options)
    if fmt == "json":
        emit(json_text(data))
        return
    if fmt == "csv":
        emit_rows(wager_rows(data), WAGER_COLUMNS, "csv")
        return
    for ruleset_report in reports:
        for part in render(ruleset_report):
            if not stdout.is_terminal and hasattr(part, "box"):
                part.box = None  # piped, plain columns, as every table of the auditor's
            stdout.print(part, highlight=False)


def wager_rows(data: dict) -> list[dict]:
    """A row a ruleset's wager, each figure as the decimal the table shows (a house edge
    as a fraction of the stake, not a percent)."""
    return [
        {
            "ruleset": ruleset["ruleset"],
            "decks": ruleset["decks"],
            **{c: wager[c] for c in ("bet", "variant", "pays", "cite", "note")},
            **{f: wager[f] and wager[f]["decimal"] for f in FIGURES},
        }
        for ruleset in data["rulesets"]
        for wager in ruleset["wagers"]
    ]
