"""docs/queries.md: every question's SQL runs against the catalog of an audit of
sample_data/ and gives exactly the answer the page shows.

After the sample data or the checks change, `AUDITOR_UPDATE_QUERY_DOCS=1 pytest
tests/integration/test_queries_doc.py` rewrites the answers; review the diff like any other.
"""

from __future__ import annotations

import json
import os
import re
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from auditor.output.sandboxed_query import open_catalog, query
from auditor.pipeline import run_audit
from tests.support.paths import REPO, SAMPLE

DOC = REPO / "docs" / "queries.md"
MARKER = "Result on sample_data:"
UPDATE = os.environ.get("AUDITOR_UPDATE_QUERY_DOCS") == "1"


def questions(text: str) -> list[tuple[str, str, list[str]]]:
    """(title, SQL, expected table lines) per '## ' section."""
    found = []
    for section in re.split(r"^## ", text, flags=re.MULTILINE)[1:]:
        title = section.splitlines()[0].strip()
        sql = re.search(r"```sql\n(.*?)```", section, flags=re.DOTALL)
        assert sql, f"{title}: no ```sql block"
        assert MARKER in section, f"{title}: no '{MARKER}'"
        after = section.split(MARKER, 1)[1].strip().splitlines()
        table = [line for line in after if line.startswith("|")]
        found.append((title, sql.group(1).strip(), table))
    return found


def cell(value: object) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | dict):
        text = json.dumps(value, default=str, ensure_ascii=False)
    elif isinstance(value, datetime | timedelta | Decimal | float | int):
        text = str(value)
    else:
        text = str(value)
    return text.replace("|", "\\|")


def render(result) -> list[str]:
    lines = ["| " + " | ".join(result.column_names) + " |"]
    lines.append("|" + "---|" * len(result.column_names))
    for row in result.to_pylist():
        lines.append("| " + " | ".join(cell(row[c]) for c in result.column_names) + " |")
    return lines


@pytest.fixture(scope="module")
def audited(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("queries") / "out"
    run_audit(SAMPLE, out)
    return out


@pytest.fixture(scope="module")
def catalog(audited):
    opened = open_catalog(audited)
    yield opened
    opened.close()


def test_the_page_asks_at_least_twelve_questions() -> None:
    assert len(questions(DOC.read_text(encoding="utf-8"))) >= 12


def test_every_query_gives_the_answer_shown(catalog) -> None:
    text = DOC.read_text(encoding="utf-8")
    wrong = []
    answers = {}
    for title, sql, expected in questions(text):
        (result,) = query(catalog, sql)  # one statement each, through the sandbox
        got = render(result)
        answers[title] = got
        if got != expected:
            wrong.append(title)
    if UPDATE:
        DOC.write_text(_rewritten(text, answers), encoding="utf-8")
        return
    assert wrong == [], (
        "these answers in docs/queries.md differ from the queries' results on sample_data "
        "(AUDITOR_UPDATE_QUERY_DOCS=1 rewrites them): " + "; ".join(wrong)
    )


def _rewritten(text: str, answers: dict[str, list[str]]) -> str:
    head, *sections = re.split(r"^## ", text, flags=re.MULTILINE)
    out = [head]
    for section in sections:
        title = section.splitlines()[0].strip()
        before, after = section.split(MARKER, 1)
        rest = after.lstrip("\n").splitlines()
        while rest and rest[0].startswith("|"):
            rest.pop(0)
        tail = "\n".join(rest).strip("\n")
        body = before + MARKER + "\n\n" + "\n".join(answers[title]) + "\n"
        out.append(body + ("\n" + tail + "\n\n" if tail else "\n"))
    return "## ".join(out).rstrip("\n") + "\n"


_HOLD_ROW = re.compile(
    r'<tr><td class="id">(?P<table>[^<]+)</td>.*?<td>(?P<kept>kept|lost) \$(?P<amount>[\d,.]+) '
    r"of \$(?P<staked>[\d,.]+) wagered on (?P<wagers>[\d,]+) wagers",
    re.DOTALL,
)


def _dollars(text: str) -> Decimal:
    return Decimal(text.replace(",", ""))


def test_the_nightly_pages_hold_by_table_is_the_first_questions_to_the_cent(
    audited, catalog
) -> None:
    # The sample holds what a table's hold leaves out: a Free Hand's wagers, void rounds'.
    (kinds,) = query(
        catalog,
        "SELECT list(DISTINCT r.kind ORDER BY r.kind) AS kinds FROM wagers w "
        "JOIN rounds r USING (round_id)",
    )
    assert {"free", "void"} <= set(kinds.to_pylist()[0]["kinds"])
    _, sql, _ = questions(DOC.read_text(encoding="utf-8"))[0]
    (result,) = query(catalog, sql)
    expected = {
        row["table_id"]: (row["house_result"], row["staked"], row["wagers"])
        for row in result.to_pylist()
    }
    html = (audited / "report.html").read_text(encoding="utf-8")
    section = html[html.index('<h2 id="hold">') :]
    section = section[: section.index("<h2 ", 5)]
    shown = {}
    for row in section.split("</tr>"):
        found = _HOLD_ROW.search(row)
        if found:
            sign = 1 if found["kept"] == "kept" else -1
            shown[found["table"]] = (
                sign * _dollars(found["amount"]),
                _dollars(found["staked"]),
                int(found["wagers"].replace(",", "")),
            )
    assert shown == expected
