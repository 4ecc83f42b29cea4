r"""The jinja2 environment of the reports: templates shipped in the package, autoescaped
everywhere, and the filters that turn money, counts, times and ids into text.

Nothing that came from the data is marked safe: ids, messages and the regulation texts
are escaped by jinja2 like any value; only the charts' SVG (checked by `charts.svg`) and
the CSS shipped with the templates go in as they are.

HTML escaping leaves control and formatting characters alone, and those can still forge a
line: a right-to-left override turns "evil\u202eexe.txt" into "eviltxt.exe", an ANSI
escape rewrites a terminal that prints the page. So every value a template writes passes
`visible` first (the environment's `finalize`), which spells such characters out as
Python escapes (`\x1b`, `\u202e`): the reader sees that the id holds them.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from datetime import datetime
from decimal import Decimal
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from auditor.money import usd_text
from auditor.report.scope import days_text, properties_text, scope_text

MINUS = "−"  # a real minus sign: "−$12.00" does not wrap or read as a dash
ID_WIDTH = 120  # ids longer than this (hostile input has megabyte ids) are shortened


# Controls, formatting characters (the bidirectional overrides, isolates and marks, zero
# widths, tags), line and paragraph separators, and lone surrogates (which cannot even be
# written as UTF-8). Newline and tab lay out long texts and stay.
HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})
KEPT_CONTROLS = frozenset("\n\t")


def escape_of(code: int) -> str:
    r"""The Python escape of a code point: \x1b, \u202e, \U000e0041."""
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


class _SpellingTable(dict[int, str | int]):
    """A `str.translate` table filled on first sight of each character: its escape when
    it is hidden, itself otherwise."""

    def __missing__(self, code: int) -> str | int:
        character = chr(code)
        hidden = unicodedata.category(character) in HIDDEN_CATEGORIES
        spelled = escape_of(code) if hidden and character not in KEPT_CONTROLS else code
        self[code] = spelled
        return spelled


_SPELLING = _SpellingTable()


def visible(text: str) -> str:
    r"""`text` with every hidden character spelled out: "evil\u202eexe" reads as written,
    and ESC shows as \x1b."""
    # isprintable() is False for anything hidden and true for nearly every value: the
    # pages hold tens of thousands of them, and most never reach the table.
    return text if text.isprintable() else text.translate(_SPELLING)


def finalize(value: Any) -> Any:
    """Every value a template writes, as the page shows it: text with its hidden
    characters spelled out, and markup of our own (macros, checked charts) as it is."""
    if isinstance(value, str) and not isinstance(value, Markup):
        return visible(value)
    return value


def money(value: Any, signed: bool = False) -> str:
    """$1,234.50; -$12.00; "—" for no amount: `auditor.money`, as the messages write it."""
    return usd_text(value, signed)


# Money and clock times as the checks and surveillance write them into their texts:
# "$43719.00", "$-6,250.00"; "2026-11-24 18:33:48.137000 UTC" (every timestamp of the
# hand-history contract is UTC; texts of earlier runs wrote no zone).
_DOLLARS = re.compile(r"(-?)\$(-?)(\d[\d,]*\.\d\d)(?!\d)")
_NAIVE_TIME = re.compile(
    r"\b(\d{4}-\d\d-\d\d)[ T](\d\d:\d\d)(:\d\d)?(?:\.(\d{1,6}))?(?: UTC\b|(?![\d.:+]|Z\b))"
)


def _dollars(found: re.Match[str]) -> str:
    negative = bool(found.group(1) or found.group(2))
    amount = Decimal(found.group(3).replace(",", ""))
    return usd_text(-amount if negative else amount)


def _utc_time(found: re.Match[str]) -> str:
    day, minutes, seconds, fraction = found.groups()
    # A fraction of a second stays when it is not nought: a wager 0.3 s late is late.
    milliseconds = (fraction or "").ljust(3, "0")[:3]
    exact = f".{milliseconds}" if milliseconds.strip("0") else ""
    return f"{day} {minutes}{seconds or ':00'}{exact} UTC"


def text(value: Any) -> str:
    """A finding's or a statistic's text with its money and times written as everywhere
    else on the page: "$43,719.00", "-$6,250.00", "2026-11-24 18:33:48.137 UTC"."""
    if value is None:
        return "—"
    written = _DOLLARS.sub(_dollars, str(value))
    return _NAIVE_TIME.sub(_utc_time, written)


# Inline markup of the checks' documentation: `code`, *emphasis* and _emphasis_.
_INLINE = re.compile(
    r"`([^`]+)`|\*([^*\s](?:[^*]*[^*\s])?)\*|(?<!\w)_([^_\s](?:[^_]*[^_\s])?)_(?!\w)"
)


def doc(value: Any) -> Markup:
    """A check's documentation as HTML: `code` as <code>, *words* as <em>, everything
    else escaped (the texts are ours, but nothing in them is trusted as markup)."""
    source = text(value)
    out, last = [], 0
    for found in _INLINE.finditer(source):
        out.append(Markup.escape(visible(source[last : found.start()])))
        code, *emphasis = found.groups()
        if code is not None:
            out.append(Markup("<code>{}</code>").format(visible(code)))
        else:
            words = next(e for e in emphasis if e is not None)
            out.append(Markup("<em>{}</em>").format(visible(words)))
        last = found.end()
    out.append(Markup.escape(visible(source[last:])))
    return Markup("").join(out)


def count(value: Any) -> str:
    return "—" if value is None else f"{int(value):,}"


def when(value: Any) -> str:
    """A timestamp in UTC to the second, as the logs are read."""
    if value is None:
        return "—"
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S UTC")
    return str(value)


def short(value: Any, width: int = ID_WIDTH) -> str:
    if value is None:
        return "—"
    text = str(value)
    if len(text) <= width:
        return text
    return f"{text[: width - 1]}… ({len(text):,} characters)"


def hexshort(value: Any) -> str:
    """A SHA-256 or finding id, first 12 hex digits (the full one is in the catalog)."""
    return "—" if value is None else str(value)[:12]


# How each surveillance statistic's observed and expected values read (`surveillance.schema`).
PERCENT_STATISTICS = ("hold",)
MONEY_STATISTICS = ("money_won",)
PLAIN_STATISTICS = ("outcomes_chi2", "findings_per_1000_rounds")


# Each surveillance statistic in words (`surveillance.round_tests`, `.patrons`, `.holds`); the
# catalog's name stays in the page as the cell's title, for `auditor query`.
STATISTIC_NAMES = {
    "player_rate": "Player wins",
    "banker_rate": "Banker wins",
    "tie_rate": "ties",
    "natural_rate": "Naturals",
    "pair_rate": "pairs",
    "outcomes_chi2": "outcomes against the odds (chi-square)",
    "findings_per_1000_rounds": "findings per 1,000 rounds",
    "money_won": "money won",
    "hold": "hold",
}
WAGER_FAMILIES = {
    "tie": "Tie",
    "dragon_bonus": "Dragon Bonus",
    "dragon7": "Dragon 7",
    "panda8": "Panda 8",
    "house_money": "House Money",
    "royal9": "Royal 9",
}


def statistic_name(name: Any) -> str:
    """A statistic's name for a person: "Dragon Bonus wagers won" for
    dragon_bonus_win_rate."""
    if name is None:
        return "—"
    key = str(name)
    if key in STATISTIC_NAMES:
        return STATISTIC_NAMES[key]
    family = key.removesuffix("_win_rate")
    if family != key:
        return f"{WAGER_FAMILIES.get(family, family.replace('_', ' '))} wagers won"
    return key.replace("_", " ")


def statistic(value: Any, name: str) -> str:
    """A statistic's value in its unit: a rate or a hold as a percentage, money in
    dollars, a chi-square or a rate per 1,000 rounds as a number."""
    if value is None or value != value:  # None or NaN
        return "—"
    if name in MONEY_STATISTICS:
        return money(Decimal(str(round(value, 2))))
    if name in PLAIN_STATISTICS:
        return f"{value:,.2f}"
    return f"{100 * value:.3f}%".replace("-", MINUS)


def pvalue(value: Any) -> str:
    """A p-value or q-value: three significant digits, small ones in scientific form."""
    if value is None or value != value:
        return "—"
    return f"{value:.3g}" if value >= 1e-3 else f"{value:.2e}"


def signed(value: Any, digits: int = 2) -> str:
    if value is None or value != value:
        return "—"
    return f"{value:+.{digits}f}".replace("-", MINUS)


@functools.cache
def environment() -> Environment:
    env = Environment(
        loader=PackageLoader("auditor.report", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        finalize=finalize,
    )
    env.filters.update(
        money=money,
        count=count,
        when=when,
        short=short,
        hexshort=hexshort,
        statistic=statistic,
        pvalue=pvalue,
        signed=signed,
        text=text,
        doc=doc,
        statistic_name=statistic_name,
        scope_text=scope_text,
        days_text=days_text,
        properties_text=properties_text,
    )
    return env


def render(template: str, **context: Any) -> str:
    return environment().get_template(template).render(**context)
