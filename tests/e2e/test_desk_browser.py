"""The morning in a real browser (Debian's headless Chromium, driven by playwright) against
a real server on 127.0.0.1: log in, open the queue, filter it, open a finding, record a
review, batch-review every finding of a filter, log out. The ledger then verifies and
names the reviewer; no page logs an error or asks anything of another origin; each page
looked at is screenshotted and is not blank.

With DESK_SCREENSHOTS=FOLDER the screenshots are kept there too (docs/desk/ holds the
documentation's)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from auditor.archive.ledger import read_reviews
from auditor.desk.app import create_app
from tests.support.browser import WINDOW, not_blank, screenshot
from tests.support.cli import AUDITOR
from tests.support.desk import PASSWORD, Desked, build, running


@pytest.fixture(scope="module")
def desked(tmp_path_factory) -> Desked:
    return build(tmp_path_factory.mktemp("desk-browser"), nights=2, archived=2, rounds=300)


def keep(page, name: str, shots: dict[str, bytes]) -> None:
    shots[name] = screenshot(page)
    folder = os.environ.get("DESK_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        (Path(folder) / f"{name}.png").write_bytes(shots[name])


def test_the_morning_in_chromium(browser, desked: Desked) -> None:
    app = create_app(desked.archive, desked.users)
    shots: dict[str, bytes] = {}
    before = len(read_reviews(desked.archive))
    with running(app) as base:
        page = browser.new_page(viewport=WINDOW)
        seen: dict[str, list] = {"console": [], "errors": [], "elsewhere": []}
        page.on("console", lambda m: seen["console"].append((m.type, m.text)))
        page.on("pageerror", lambda e: seen["errors"].append(str(e)))
        page.on(
            "request",
            lambda r: None if r.url.startswith(base) else seen["elsewhere"].append(r.url),
        )
        page.goto(f"{base}/queue")
        assert "/login" in page.url  # nothing open without a login
        keep(page, "login", shots)
        page.fill("input[name=name]", "alice")
        page.fill("input[name=password]", PASSWORD)
        page.click("button[type=submit]")
        page.wait_for_url(f"{base}/queue")
        keep(page, "queue", shots)
        page.goto(f"{base}/")
        keep(page, "nights", shots)

        page.goto(f"{base}/queue")
        page.select_option("select[name=severity]", "medium")
        page.click("form.filters button[type=submit]")
        page.wait_for_url("**severity=medium**")
        rows = page.locator("table.queue tbody tr")
        assert rows.count() >= 1
        keep(page, "queue-filtered", shots)

        page.locator("table.queue tbody tr td.msg a").first.click()
        page.wait_for_url("**/findings/**")
        finding_id = page.url.rsplit("/", 1)[1]
        assert page.locator("details.evidence").count() == 1
        keep(page, "finding", shots)
        page.select_option("form.review-form select[name=status]", "explained")
        page.fill(
            "form.review-form textarea[name=note]", "short pay corrected at the cage, receipt 8812"
        )
        page.click("form.review-form button[type=submit]")
        page.wait_for_url("**said=**")
        assert page.get_by_text("Recorded 1 review as explained.").count() == 1
        keep(page, "finding-reviewed", shots)

        page.goto(f"{base}/queue")
        rule = page.locator("table.queue tbody tr td strong").first.inner_text()
        page.select_option("select[name=rule]", rule)
        page.click("form.filters button[type=submit]")
        page.wait_for_url("**rule=**")
        matching = int(page.locator("input[name=matching]").get_attribute("value"))
        page.check("input[name=all_matching]")
        page.select_option("form.batch select[name=status]", "dismissed")
        page.fill("form.batch textarea[name=note]", "low-value rounding, accepted by the manager")
        page.click("form.batch button[type=submit]")
        page.wait_for_url("**said=**")
        keep(page, "batch-reviewed", shots)
        assert page.locator("table.queue tbody td.msg").count() == 0  # none left open

        page.click("nav.desk-nav form button")
        page.wait_for_url("**/login")
        page.goto(f"{base}/queue")
        assert "/login" in page.url
        page.close()
    assert [m for m in seen["console"] if m[0] in ("error", "warning")] == []
    assert seen["errors"] == [] and seen["elsewhere"] == []
    assert all(not_blank(png) for png in shots.values()), [n for n, p in shots.items()]
    records = read_reviews(desked.archive)[before:]
    assert records[0]["finding_id"] == finding_id and records[0]["status"] == "explained"
    assert len(records) == 1 + matching
    assert {r["by"] for r in records} == {"alice"}
    verified = subprocess.run(
        [AUDITOR, "review", str(desked.archive), "--verify"], capture_output=True, text=True
    )
    assert verified.returncode == 0, verified.stderr
