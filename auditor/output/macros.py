"""The game as SQL macros in the catalog, generated from the rule packs.

A regulator replays a hand in SQL with the same rules the engine applies, because both
read the packs' game (`auditor.packs.game`): card values, naturals, the Player's rule and
the Banker's table are written here as literals taken from it, the commission's rounding
step from `RulePack`, never typed a second time.

- `card_value(card)`: a card's point value ('TS' is 0, 'AH' 1);
- `point_count(cards)`: a list of cards' Point Count, the last digit of the values' sum;
- `is_natural(ruleset, total)`: a two-card total that is a Natural;
- `player_draws(ruleset, player_total)`: the Player's rule on a two-card total: true
  (must draw), false (must stand, or a Natural), NULL where he may choose (Chemin de Fer 5);
- `banker_draws(ruleset, banker_total, player_third)`: the Banker's table on his two-card
  total and the value of the Player's third card (NULL when the Player stood); false on a
  Natural. Where the Player holds a Natural nobody draws: test `is_natural` first;
- `vig(ruleset_or_percent, amount, rounding)`: the commission on `amount` won, in exact
  cents: rounded up to the pack's step (25 cents at 5%, 20 at 4%) where `rounding`, else
  half up to the cent. Pass the table's `commission_percent`, or a ruleset with one percent;
- `moment_text(instant)`: a logged moment as the findings write it, in UTC to the second,
  to the microsecond where it holds a fraction ('2026-11-24 20:01:05 UTC');
- `usd_text(dollars)`, `usd_cents_text(cents)`: an amount as the findings write it
  ('$1,234.50', '-$0.25');
- `quarantine_id(id)`: an id as the quarantine's `row_key` names it: itself, or past the
  contract's bound (1,000 characters) its first 64 characters and its length, as every
  such row is quarantined; a witness leaves a quarantined row out by it;
- `rule_pack(ruleset)`: the ruleset's whole pack as JSON, its section texts left out
  (`rule_pack(ruleset)->>'$.procedures.void_ends_shoe.value'`): what a check's witness
  (`auditor.witness`) reads of a pack beyond the macros above.

Every literal goes through `duckdb.ConstantExpression`, so DuckDB quotes it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping

import duckdb

from auditor.packs.game import PLAYER_STOOD, THIRD_CARDS, Game, game
from auditor.packs.model import RulePack
from auditor.schemas import MAX_ID_CHARS, SHOWN_CHARS, SHOWN_PAST_BOUND


def sql_literal(value: object) -> str:
    """`value` as a SQL literal, quoted by DuckDB itself."""
    return str(duckdb.ConstantExpression(value))


def literal_path(path: str) -> str:
    """`path` as DuckDB's file readers take it literally: each glob character (`*`, `?`,
    `[`) bracketed, so that a folder named `out*` or `night [1]` is read, not matched."""
    return _GLOB_CHARACTER.sub(lambda found: f"[{found.group()}]", path)


def admitted_folders(folder: str) -> list[str]:
    """`folder` as DuckDB's allowed_directories must name it to admit `literal_path`'s
    spelling of its files (its check compares the path as written, before any glob is
    expanded): as it is and, when it holds glob characters, bracketed."""
    folder = folder.rstrip("/") + "/"
    return sorted({folder, literal_path(folder)})


_GLOB_CHARACTER = re.compile(r"[*?\[]")


def macro_statements(packs: Mapping[str, RulePack]) -> list[str]:
    """CREATE MACRO statements for the game, in dependency order."""
    played = game(packs)
    return [
        _card_value(played),
        "CREATE MACRO point_count(cards) AS "
        "CAST(list_sum(list_transform(cards, lambda c: card_value(c))) % 10 AS TINYINT)",
        _by_ruleset("is_natural(ruleset, total)", played, _natural),
        _by_ruleset("player_draws(ruleset, player_total)", played, _player_rule),
        _by_ruleset("banker_draws(ruleset, banker_total, player_third)", played, _banker_rule),
        _vig_percent(packs),
        *_vig_cents(packs),
        "CREATE MACRO vig(ruleset_or_percent, amount, rounding) AS "
        "vig_rounded(vig_percent(ruleset_or_percent), "
        "CAST(round(CAST(amount AS DECIMAL(18, 2)) * 100) AS BIGINT), rounding, "
        "vig_step(ruleset_or_percent, vig_percent(ruleset_or_percent)))",
        _rule_pack(packs),
        # `contract.SECOND_TEXT` and `MOMENT_TEXT` in DuckDB's spelling; UTC whatever the
        # reader's session time zone, which the command-line client sets to his own.
        "CREATE MACRO moment_text(instant) AS CASE WHEN microsecond(instant) % 1000000 = 0 "
        "THEN strftime(timezone('UTC', instant), '%Y-%m-%d %H:%M:%S UTC') "
        "ELSE strftime(timezone('UTC', instant), '%Y-%m-%d %H:%M:%S.%f UTC') END",
        # `money.usd` in DuckDB's spelling, over whole cents so that no amount passes a float.
        "CREATE MACRO usd_cents_text(cents) AS (CASE WHEN cents < 0 THEN '-$' ELSE '$' END) "
        "|| format('{:,}', abs(CAST(cents AS BIGINT)) // 100) || '.' "
        "|| lpad(CAST(abs(CAST(cents AS BIGINT)) % 100 AS VARCHAR), 2, '0')",
        "CREATE MACRO usd_text(dollars) AS "
        "usd_cents_text(CAST(round(CAST(dollars AS DECIMAL(18, 2)) * 100) AS BIGINT))",
        # `quarantine.shortened` in DuckDB's spelling, from its template.
        f"CREATE MACRO quarantine_id(id) AS CASE WHEN length(id) > {MAX_ID_CHARS} "
        f"THEN format({sql_literal(SHOWN_PAST_BOUND)}, left(id, {SHOWN_CHARS}), length(id)) "
        "ELSE id END",
    ]


def _rule_pack(packs: Mapping[str, RulePack]) -> str:
    """Each pack as the JSON of its parsed file: every rule as the engine reads it, so a
    witness reads a pack's value rather than typing it a second time."""
    cases = " ".join(
        f"WHEN ruleset = {sql_literal(ruleset)} THEN CAST({sql_literal(_pack_json(pack))} AS JSON)"
        for ruleset, pack in packs.items()
    )
    unknown = sql_literal("rule_pack: unknown ruleset ")
    return (
        # No ruleset (a shoe whose table has no options in force, a row the audit
        # quarantined) has no pack; a name no pack has is an error, never a silent NULL.
        f"CREATE MACRO rule_pack(ruleset) AS CASE WHEN ruleset IS NULL THEN NULL::JSON "
        f"{cases} ELSE error({unknown} || CAST(ruleset AS VARCHAR)) END"
    )


def _pack_json(pack: RulePack) -> str:
    # The sections' texts are the regulation's words, not rules, and the larger part.
    return json.dumps(pack.rules.model_dump(mode="json", exclude={"sections"}), sort_keys=True)


def _card_value(played: Game) -> str:
    # One macro without a ruleset argument, like the engine's one expression.
    cases = " ".join(
        f"WHEN {sql_literal(rank)} THEN {int(value)}"
        for rank, value in played.shared_values().items()
    )
    return f"CREATE MACRO card_value(card) AS CASE upper(left(card, 1)) {cases} END"


def _by_ruleset(signature: str, played: Game, rule: Callable[[Game, str], str]) -> str:
    """A macro that reads the game of its `ruleset` argument; an unknown ruleset is an
    error rather than a silent NULL."""
    cases = " ".join(f"WHEN {sql_literal(r)} THEN {rule(played, r)}" for r in played.rulesets)
    unknown = sql_literal(f"{signature.split('(')[0]}: unknown ruleset ")
    return (
        f"CREATE MACRO {signature} AS CASE ruleset {cases} "
        f"ELSE error({unknown} || coalesce(CAST(ruleset AS VARCHAR), 'NULL')) END"
    )


def _natural(played: Game, ruleset: str) -> str:
    return f"total IN ({', '.join(str(int(t)) for t in played.natural_totals(ruleset))})"


def _player_rule(played: Game, ruleset: str) -> str:
    words = {"draw": "true", "stand": "false", "either": "NULL"}
    row = [words[action] for action in played.player_actions(ruleset)]
    return f"[{', '.join(row)}][player_total + 1]"


def _banker_rule(played: Game, ruleset: str) -> str:
    """The Banker's table as one list, row by two-card total, column by the Player's
    third card (0-9, then `PLAYER_STOOD` where SQL says NULL): a list index instead of a
    join. A Natural's row stands throughout."""
    cells = ["true" if draws else "false" for row in played.banker_draws(ruleset) for draws in row]
    index = f"banker_total * {len(THIRD_CARDS)} + coalesce(player_third, {PLAYER_STOOD}) + 1"
    return f"[{', '.join(cells)}][{index}]"


def _vig_percent(packs: Mapping[str, RulePack]) -> str:
    """A number is the percent; a ruleset name, its pack's only percent."""
    cases = []
    for ruleset, pack in packs.items():
        percents = pack.commission.percents.values
        if len(percents) == 1:
            cases.append(f"WHEN {sql_literal(ruleset)} THEN {int(percents[0])}")
        else:
            message = (
                f"vig: {ruleset} allows {' or '.join(map(str, percents))} percent; "
                "pass the table's commission_percent"
            )
            cases.append(f"WHEN {sql_literal(ruleset)} THEN error({sql_literal(message)})")
    unknown = sql_literal("vig: neither a percent nor a ruleset: ")
    text = "CAST(x AS VARCHAR)"
    return (
        f"CREATE MACRO vig_percent(x) AS coalesce(TRY_CAST({text} AS INTEGER), "
        f"CASE {text} {' '.join(cases)} ELSE error({unknown} || coalesce({text}, 'NULL')) END)"
    )


def _vig_cents(packs: Mapping[str, RulePack]) -> list[str]:
    """The rounding step in cents, by the ruleset given (its own pack's step) or by the
    percent alone, where the packs loaded agree on it; then the commission with cents
    arithmetic as the engine's `commission_cents`: percent x cents is in hundredths of a
    cent."""
    by_percent: dict[int, set[int]] = {}
    by_ruleset = []
    for ruleset, pack in packs.items():
        steps = {int(p): int(s) for p, s in pack.commission.rounding.step_cents.items()}
        for percent, step in steps.items():
            by_percent.setdefault(percent, set()).add(step)
        refused = sql_literal(f"vig: {ruleset} rounds no commission at this percent: ")
        inner = " ".join(f"WHEN {p} THEN {s}" for p, s in sorted(steps.items()))
        by_ruleset.append(
            f"WHEN {sql_literal(ruleset)} THEN CASE percent {inner} "
            f"ELSE error({refused} || CAST(percent AS VARCHAR)) END"
        )
    cases = []
    for percent, percent_steps in sorted(by_percent.items()):
        if len(percent_steps) == 1:
            cases.append(f"WHEN {percent} THEN {percent_steps.pop()}")
        else:
            message = f"vig: the rule packs round {percent}% differently; pass the ruleset"
            cases.append(f"WHEN {percent} THEN error({sql_literal(message)})")
    missing = sql_literal("vig: no rule pack rounds commission at this percent: ")
    any_ruleset_step = (
        f"CASE percent {' '.join(cases)} ELSE error({missing} || CAST(percent AS VARCHAR)) END"
    )
    rounded = (
        "CAST(CAST(CASE WHEN rounding "
        "THEN (cents * percent + 100 * step - 1) // (100 * step) * step "
        "ELSE (cents * percent + 50) // 100 END AS DECIMAL(18, 0)) * 0.01 AS DECIMAL(18, 2))"
    )
    return [
        f"CREATE MACRO vig_rounded(percent, cents, rounding, step) AS {rounded}",
        "CREATE MACRO vig_step(x, percent) AS CASE CAST(x AS VARCHAR) "
        f"{' '.join(by_ruleset)} ELSE {any_ruleset_step} END",
        "CREATE MACRO vig_cents(percent, cents, rounding) AS "
        "vig_rounded(percent, cents, rounding, vig_step(NULL, percent))",
    ]
