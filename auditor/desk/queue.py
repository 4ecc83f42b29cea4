"""The queue: the findings in force, filtered, sorted and paged, read from the desk's
state in memory (`snapshot`).

Every value a person gives is a bound parameter; a filter's column and a sort's order
come from the names below, never from the request. A value that cannot be what its filter
holds (a night that is not a date, money that is not an amount) is said back on the page
and the filter left out, so a mistyped filter never hides the queue silently.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import Any
from urllib.parse import urlencode

import duckdb

from auditor.archive.ledger_format import STATUSES

PAGE_ROWS = 50
MAX_PAGE = 1_000_000
SEVERITIES = ("high", "medium", "low")
# Text filters: the query parameter, and the column it must equal.
EQUAL_FILTERS = {
    "property": "property_id",
    "table": "table_id",
    "dealer": "dealer_id",
    "patron": "patron_id",
    "rule": "rule",
    "severity": "severity",
}
# "open" is the queue's own meaning: not yet reviewed, or last marked open.
STATUS_CHOICES = ("open", "any", *[s for s in STATUSES if s != "open"])
SORTS = {
    "money": "at_stake DESC NULLS LAST, gaming_day DESC NULLS LAST, finding_id",
    "newest": "gaming_day DESC NULLS LAST, at_stake DESC NULLS LAST, finding_id",
    "severity": (
        "CASE severity WHEN 'high' THEN 0 WHEN 'medium' THEN 1 WHEN 'low' THEN 2 ELSE 3 END, "
        "at_stake DESC NULLS LAST, finding_id"
    ),
    "rule": "rule, at_stake DESC NULLS LAST, finding_id",
    "oldest": "gaming_day NULLS LAST, at_stake DESC NULLS LAST, finding_id",
}
SHOWN_COLUMNS = """finding_id, run_id, gaming_day, property_id, table_id, shoe_id,
  round_id, wager_id, dealer_id, patron_id, rule, severity, impact, message, status, note,
  reviewed_by, reviewed_at, found_live_at"""
FILTER_NAMES = ("night", *EQUAL_FILTERS, "status", "money", "sort")


@dataclass
class Filter:
    values: dict[str, str] = field(default_factory=dict)  # as given, for the form and links
    night: date | None = None
    equal: dict[str, str] = field(default_factory=dict)
    status: str = "open"
    money: Decimal | None = None
    sort: str = "money"
    page: int = 1
    problems: list[str] = field(default_factory=list)

    def where(self) -> tuple[str, dict[str, Any]]:
        clauses = ["true"]
        params: dict[str, Any] = {}
        if self.night is not None:
            clauses.append("gaming_day = $night")
            params["night"] = self.night
        for name, value in self.equal.items():
            clauses.append(f"{EQUAL_FILTERS[name]} = ${name}")
            params[name] = value
        if self.status != "any":
            clauses.append("status = $status")
            params["status"] = self.status
        if self.money is not None:
            clauses.append("at_stake >= $money")
            params["money"] = self.money
        return " AND ".join(clauses), params

    def query_string(self, **changed: object) -> str:
        """The filter as a URL's query (this page's, with `changed` values)."""
        values = {k: v for k, v in self.values.items() if v}
        values.update({k: str(v) for k, v in changed.items() if v is not None})
        return urlencode(values)


def parse_filter(given: Any) -> Filter:
    """The filter of a request's query parameters (or a form's fields)."""
    found = Filter()
    for name in FILTER_NAMES:
        value = given.get(name)
        if isinstance(value, str) and value.strip():
            found.values[name] = value.strip()[:200]
    values = found.values
    if "night" in values:
        try:
            found.night = date.fromisoformat(values["night"])
        except ValueError:
            found.problems.append(f"night {values['night']!r} is not a date (YYYY-MM-DD)")
    for name in EQUAL_FILTERS:
        if name in values:
            found.equal[name] = values[name]
    status = values.get("status", "open")
    if status in STATUS_CHOICES:
        found.status = status
    else:
        found.problems.append(f"status {status!r} is not one of {', '.join(STATUS_CHOICES)}")
    if "money" in values:
        found.money = parse_money(values["money"])
        if found.money is None:
            found.problems.append(f"money {values['money']!r} is not an amount such as 250.00")
    sort = values.get("sort", "money")
    if sort in SORTS:
        found.sort = sort
    else:
        found.problems.append(f"sort {sort!r} is not one of {', '.join(SORTS)}")
    found.page = parse_page(given.get("page"))
    return found


def parse_money(text: str) -> Decimal | None:
    try:
        amount = Decimal(text.replace(",", "").replace("$", "").strip())
    except InvalidOperation:
        return None
    if not amount.is_finite() or amount < 0 or amount > Decimal("1e12"):
        return None
    return amount.quantize(Decimal("0.01"))


def parse_page(value: object) -> int:
    if isinstance(value, str) and value.isascii() and value.isdigit():
        return max(1, min(int(value), MAX_PAGE))
    return 1


@dataclass(frozen=True)
class Page:
    rows: list[dict[str, Any]]
    total: int
    at_stake: Decimal
    page: int
    pages: int


def queue_page(con: duckdb.DuckDBPyConnection, found: Filter) -> Page:
    where, params = found.where()
    counted = con.execute(
        f"SELECT count(*), coalesce(sum(at_stake), 0) FROM queue WHERE {where}", params
    ).fetchone()
    assert counted is not None  # aggregates without GROUP BY are always one row
    total, at_stake = counted
    pages = max(1, -(-total // PAGE_ROWS))
    page = min(found.page, pages)
    rows = con.execute(
        f"SELECT {SHOWN_COLUMNS} FROM queue WHERE {where} ORDER BY {SORTS[found.sort]} "
        "LIMIT $limit OFFSET $offset",
        {**params, "limit": PAGE_ROWS, "offset": (page - 1) * PAGE_ROWS},
    )
    names = [d[0] for d in rows.description]
    shown = [dict(zip(names, row, strict=True)) for row in rows.fetchall()]
    return Page(shown, total, Decimal(at_stake), page, pages)


def matching_ids(con: duckdb.DuckDBPyConnection, found: Filter) -> list[str]:
    """Every finding id the filter matches, in the queue's order (a batch review of all)."""
    where, params = found.where()
    rows = con.execute(
        f"SELECT finding_id FROM queue WHERE {where} ORDER BY {SORTS[found.sort]}", params
    ).fetchall()
    return [r[0] for r in rows]


def choices(con: duckdb.DuckDBPyConnection) -> dict[str, list[str]]:
    """The values the form offers to pick from (the rest are typed)."""

    def distinct(column: str) -> list[str]:
        rows = con.execute(
            f"SELECT DISTINCT CAST({column} AS VARCHAR) FROM findings "
            f"WHERE {column} IS NOT NULL ORDER BY 1 DESC"
        ).fetchall()
        return [r[0] for r in rows]

    return {
        "nights": distinct("gaming_day"),
        "rules": sorted(distinct("rule")),
        "properties": sorted(distinct("property_id")),
        "severities": list(SEVERITIES),
        "statuses": list(STATUS_CHOICES),
        "sorts": list(SORTS),
    }
