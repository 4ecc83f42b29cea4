"""docs/queries.md, "Questions across nights (the archive)": every question's SQL runs
through `auditor query ARCHIVE ... --format csv` against the month's archive
(`archive_month`, tests/support/months.py) and prints exactly the answer the page shows.

After the simulator, the checks or the archive change, `AUDITOR_UPDATE_QUERY_DOCS=1
pytest tests/e2e/test_archive_queries.py` rewrites the answers; review the diff like any other.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from click.testing import CliRunner

from auditor.cli import main
from tests.support.months import Month
from tests.support.paths import DOCS

DOC = DOCS / "queries.md"
PART = "# Questions across nights (the archive)"
MARKER = "Answer on the test archive:"
ANSWER = re.compile(r"(Answer on the test archive:\n\n```csv\n)(.*?)(```)", re.DOTALL)
UPDATE = os.environ.get("AUDITOR_UPDATE_QUERY_DOCS") == "1"


def split_page(text: str) -> tuple[str, str]:
    """The page before the archive's part, and the part itself."""
    at = text.index("\n" + PART + "\n") + 1
    return text[:at], text[at:]


def questions(part: str) -> list[tuple[str, str, str]]:
    """(title, SQL, answer as printed) per '### ' question of the part."""
    found = []
    for section in re.split(r"^### ", part, flags=re.MULTILINE)[1:]:
        title = section.splitlines()[0].strip()
        sql = re.search(r"```sql\n(.*?)```", section, flags=re.DOTALL)
        answer = ANSWER.search(section)
        assert sql, f"{title}: no ```sql block"
        assert answer, f"{title}: no '{MARKER}' with a ```csv block"
        found.append((title, sql.group(1).strip(), answer.group(2)))
    return found


def ask(archive: Path, sql: str) -> str:
    result = CliRunner().invoke(main, ["query", str(archive), sql, "--format", "csv"])
    assert result.exit_code == 0, result.output
    return result.output


def test_the_archive_part_asks_at_least_eight_questions() -> None:
    _, part = split_page(DOC.read_text(encoding="utf-8"))
    assert len(questions(part)) >= 8


def test_the_archive_part_keeps_the_nights_questions_as_they_are_read() -> None:
    """tests/integration/test_queries_doc.py reads the page's '## ' sections and, after the
    last one's answer, every line that starts with '|': the archive's part, which follows
    it, has neither (its questions are '### ', its answers csv)."""
    _, part = split_page(DOC.read_text(encoding="utf-8"))
    lines = part.splitlines()
    assert not [line for line in lines if line.startswith(("|", "## "))]


def test_every_archive_query_gives_the_answer_shown(archive_month: Month) -> None:
    text = DOC.read_text(encoding="utf-8")
    head, part = split_page(text)
    wrong, answers = [], {}
    for title, sql, expected in questions(part):
        got = ask(archive_month.archive, sql)
        answers[title] = got
        if got != expected:
            wrong.append(title)
    if UPDATE:
        DOC.write_text(head + _rewritten(part, answers), encoding="utf-8")
        return
    assert wrong == [], (
        "these answers in docs/queries.md differ from the queries' results on the month's "
        "archive (AUDITOR_UPDATE_QUERY_DOCS=1 rewrites them): " + "; ".join(wrong)
    )


def test_every_answer_has_rows_and_no_run_id() -> None:
    """An empty answer shows nothing of the question; a run id differs on every build."""
    _, part = split_page(DOC.read_text(encoding="utf-8"))
    for title, _, answer in questions(part):
        assert len(answer.splitlines()) >= 2, f"{title}: no rows"
        assert not re.search(r"\b[0-9a-f]{32}\b", answer), f"{title}: shows a run id"


def _rewritten(part: str, answers: dict[str, str]) -> str:
    sections = re.split(r"^(?=### )", part, flags=re.MULTILINE)
    out = []
    for section in sections:
        if section.startswith("### "):
            answer = answers[section.splitlines()[0][4:].strip()]
            section = ANSWER.sub(lambda m, a=answer: m.group(1) + a + m.group(3), section)
        out.append(section)
    return "".join(out)
