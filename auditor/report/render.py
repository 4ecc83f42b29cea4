"""The jinja2 environment of the reports: templates shipped in the package, autoescaped
everywhere, and the filters that turn money, counts, times and ids into text.

Nothing that came from the data is marked safe: ids, messages and the regulation texts
are escaped by jinja2 like any value; only the charts' SVG (checked by `charts.svg`) and
the CSS shipped with the templates go in as they are.
"""

from __future__ import annotations

import functools
from datetime import datetime
from decimal import Decimal
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined

MINUS = "−"  # a real minus sign: "−$12.00" does not wrap or read as a dash
ID_WIDTH = 120  # ids longer than this (hostile input has megabyte ids) are shortened


def money(value: Any, signed: bool = False) -> str:
    """$1,234.50; −$12.00; "—" for no amount."""
    if value is None:
        return "—"
    amount = Decimal(value) if not isinstance(value, Decimal) else value
    sign = MINUS if amount < 0 else ("+" if signed and amount > 0 else "")
    return f"{sign}${abs(amount):,.2f}"


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
    )
    return env


def render(template: str, **context: Any) -> str:
    return environment().get_template(template).render(**context)
