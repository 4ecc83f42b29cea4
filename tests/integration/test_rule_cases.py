"""YAML pass and fail cases per check (`tests/cases/CODE.yaml`), run through the real
pipeline on real Parquet by the runner `auditor rules test` runs (`auditor.casework`).
The case format is documented in docs/packs.md ("Test it").

Every case is a table of its own in one dataset, audited once and judged on its own
findings and quarantine: the 414 cases take one pipeline, 2-3 s of the file's time,
where one pipeline per case took 170 s (`pytest -n 0 tests/integration/test_rule_cases.py`: 170 s
before, 18 s after, most of it the tests of the runner itself).
"""

from __future__ import annotations

import functools
from pathlib import Path

import polars as pl
import pytest

from auditor.casework.batch import split_findings
from auditor.casework.files import Case
from auditor.casework.runner import CaseAudit, CaseResult, audit_cases, run_cases
from auditor.casework.verdict import WORDING_KEYS, case_failures, case_problems
from auditor.pipeline import all_checks
from tests.support.cases import ALL_CASES, FILES, PACKS

CODES = {check.code for check in all_checks()}


@functools.cache
def results() -> dict[str, CaseResult]:
    """Every case's verdict, from one audit of them all (run at the first case's test)."""
    return {result.case.label: result for result in run_cases(ALL_CASES, PACKS)}


@pytest.mark.parametrize("case", ALL_CASES, ids=[f"{c.code}_{c.name}" for c in ALL_CASES])
def test_rule_case(case: Case) -> None:
    result = results()[case.label]
    assert result.passed, "\n".join(result.failures)


def test_every_check_is_documented_and_has_pass_and_fail_cases():
    cases_by_code: dict[str, list[str]] = {}
    for case in ALL_CASES:
        cases_by_code.setdefault(case.code, []).append(case.name)
    for check in all_checks():
        for field in ("title", "citation", "what", "why", "example"):
            assert getattr(check, field).strip(), f"{check.code} has no {field}"
        names = cases_by_code.get(check.code, [])
        assert any(n.startswith("pass_") for n in names), f"{check.code}: no pass case"
        assert any(n.startswith("fail_") for n in names), f"{check.code}: no fail case"
    assert set(cases_by_code) <= CODES, "cases for unknown codes"


def test_every_check_pins_the_wording_of_a_finding():
    """A change of a finding's words is then a visible change to a case file."""
    pinned = {
        case.code
        for case in ALL_CASES
        if case.name.startswith("fail_") and all(key in case.spec for key in WORDING_KEYS)
    }
    missing = sorted(CODES - pinned)
    assert not missing, (
        f"no fail case states the message, expected and logged of a finding of {missing}"
    )


def test_every_check_has_its_edge_cases_or_says_why_none():
    for found in FILES:
        names = [case.name for case in found.cases]
        edges = [n for n in names if n.startswith(("pass_at_the_edge_", "fail_just_past_"))]
        if found.no_edge is not None:
            assert found.no_edge.strip(), f"{found.path.name}: no_edge needs its reason"
            assert not edges, f"{found.path.name} has edge cases and says it has no edge"
            continue
        assert any(n.startswith("pass_at_the_edge_") for n in names), found.path.name
        assert any(n.startswith("fail_just_past_") for n in names), found.path.name


# ---- one dataset for many cases: a case among others is judged as alone ----------------

# Cases of checks that read across rows of a table (the shoe passed from round to round,
# a table's next shoe, a marker collected before it, the chairs of a table, the options
# row in force), and cases that name a table, shoe or round in their words.
ACROSS_ROWS = ("PRC003", "PRC009", "SHO003", "SHO004", "TBL001", "TBL004", "COM004")


def test_a_case_among_others_yields_what_it_yields_alone(tmp_path: Path) -> None:
    first_fails = {c.code: c for c in reversed(ALL_CASES) if c.name.startswith("fail_")}
    chosen = [first_fails[code] for code in ACROSS_ROWS]
    together = audit_cases(chosen, PACKS, tmp_path)
    for case, among in zip(chosen, together, strict=True):
        (alone,) = audit_cases([case], PACKS, tmp_path)
        assert _seen(among) == _seen(alone), case.label


def _seen(audit: CaseAudit) -> tuple[list[dict], list[dict]]:
    return audit.findings.drop("finding_id").to_dicts(), audit.quarantine.drop("row").to_dicts()


def test_words_that_name_a_table_read_as_in_the_cases_own_dataset() -> None:
    named = [c for c in ALL_CASES if "message" in c.spec and "table T1" in str(c.spec["message"])]
    assert named, "a case pins a message naming its table"
    for case in named:
        assert results()[case.label].passed, case.label


def test_a_finding_no_case_owns_is_not_split() -> None:
    owned = pl.DataFrame(
        {"table_id": [None], "shoe_id": [None], "round_id": ["k00001:R1"], "wager_id": [None]}
    )
    (first, second) = split_findings(owned, 2)  # type: ignore[misc]
    assert first.height == 0 and second["round_id"].to_list() == ["R1"]
    assert split_findings(owned.with_columns(round_id=pl.lit("R1")), 2) is None
    assert split_findings(owned.with_columns(round_id=pl.lit("k00007:R1")), 2) is None
    # One finding of a case past the batch's among others of its cases: not split either.
    among_others = pl.concat([owned, owned.with_columns(round_id=pl.lit("k00007:R1"))])
    assert split_findings(among_others, 2) is None


def test_a_dataset_the_audit_refuses_fails_only_its_own_case(tmp_path: Path) -> None:
    """A table naming a ruleset no pack gives refuses the whole dataset: the cases are
    halved until that case is alone, and the others keep their verdicts."""
    clean = [c for c in ALL_CASES if c.code == "COM001"][:3]
    refused = Case("COM001.yaml", "COM001", "pass_refused", {**CLEAN_PASS, "table": {
        "ruleset": "no-such-ruleset"}}, 1)  # fmt: skip
    audits = audit_cases([*clean, refused], PACKS, tmp_path)
    assert [a.refused for a in audits[:3]] == [None] * 3
    assert "no-such-ruleset" in (audits[3].refused or "")


# ---- the meta-test's own test: dirtied cases must fail it ------------------------------

# A clean Banker win (Banker 8 against Player 2) with its commission, and the same round
# with its winner announced wrongly.
CLEAN_PASS = {
    "ruleset": "ma-baccarat",
    "round": {"player_cards": ["KS", "2H"], "banker_cards": ["4C", "4D"]},
    "wagers": [{"bet": "banker", "amount": "20.00", "result": "win", "payout": "20.00",
                "commission": "1.00"}],
}  # fmt: skip
WRONG_WINNER = {**CLEAN_PASS, "round": {**CLEAN_PASS["round"], "outcome": "player"}}
# The commission left uncharged (COM001), and the same round also announced wrongly.
UNCHARGED = {**CLEAN_PASS, "wagers": [{**CLEAN_PASS["wagers"][0], "commission": "0.00"}]}
UNCHARGED_AND_WRONG_WINNER = {**UNCHARGED, "round": WRONG_WINNER["round"]}


def audit_case(case: dict, tmp_path: Path) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The quarantine and every finding of the case's own dataset, through the runner."""
    (audit,) = audit_cases([Case("COM001.yaml", "COM001", "case", case, 1)], PACKS, tmp_path)
    assert audit.refused is None, audit.refused
    return audit.quarantine, audit.findings


def assert_case(
    code: str, name: str, case: dict, quarantine: pl.DataFrame, findings: pl.DataFrame
) -> None:
    """The meta-test's verdict on one case's audit, as the runner gives it."""
    problems = case_problems(code, name, case, CODES)
    assert not problems, f"{code} {name}: {problems}"
    failures = case_failures(code, name, case, quarantine, findings)
    assert not failures, "\n".join(failures)


def test_the_clean_cases_of_the_test_of_the_test_are_clean(tmp_path):
    assert_case("COM001", "pass_clean", CLEAN_PASS, *audit_case(CLEAN_PASS, tmp_path))
    assert_case("COM001", "fail_uncharged", UNCHARGED, *audit_case(UNCHARGED, tmp_path))


def test_a_dirtied_pass_case_fails_the_meta_test(tmp_path):
    audited = audit_case(WRONG_WINNER, tmp_path)
    assert set(audited[1]["rule"]) == {"TOT003"}  # no finding of the case's own code
    with pytest.raises(AssertionError, match="is not clean"):
        assert_case("COM001", "pass_clean", WRONG_WINNER, *audited)


def test_a_pass_case_that_quarantines_a_row_fails_the_meta_test(tmp_path):
    four_cards = {**CLEAN_PASS, "round": {**CLEAN_PASS["round"], "player_cards": list("ABCD")}}
    audited = audit_case(four_cards, tmp_path)
    assert audited[0].height
    assert audited[0]["row_key"].to_list()[0] == "R1"  # the case's own id, as written
    with pytest.raises(AssertionError, match="quarantines"):
        assert_case("COM001", "pass_clean", four_cards, *audited)


def test_a_dirtied_fail_case_fails_the_meta_test(tmp_path):
    audited = audit_case(UNCHARGED_AND_WRONG_WINNER, tmp_path)
    assert set(audited[1]["rule"]) == {"COM001", "TOT003"}
    with pytest.raises(AssertionError, match=r"must yield \['COM001'\]"):
        assert_case("COM001", "fail_uncharged", UNCHARGED_AND_WRONG_WINNER, *audited)
    # Said, with its reason, the other code is allowed; not said, a missing one fails.
    said = {**UNCHARGED_AND_WRONG_WINNER, "also": {"TOT003": "the winner is announced wrongly"}}
    assert_case("COM001", "fail_uncharged", said, *audited)
    with pytest.raises(AssertionError, match="must yield"):
        assert_case("COM001", "fail_uncharged", {**UNCHARGED, "also": said["also"]},
                    *audit_case(UNCHARGED, tmp_path))  # fmt: skip


@pytest.mark.parametrize(
    ("name", "extra", "problem"),
    [
        ("fail_x", {"also": {"TOT003": ""}}, "needs a one-line reason"),
        ("fail_x", {"also": ["TOT003"]}, "maps each entry to its reason"),
        ("fail_x", {"also": {"COM001": "its own code"}}, "not another check's code"),
        ("fail_x", {"quarantines": {"rounds R1": None}}, "needs a one-line reason"),
        ("pass_x", {"also": {"TOT003": "a reason"}}, "a pass case takes no 'also'"),
        ("pass_x", {"alsoo": {"TOT003": "a reason"}}, "unknown key 'alsoo'"),
        ("clean_x", {}, "named pass_* or fail_*"),
        ("pass_x", {"message": "a message"}, "a pass case takes no 'message'"),
        ("fail_x", {"logged": ["$0.00"]}, "'logged' of a single finding is a string"),
        ("fail_x", {"count": 2, "expected": "$2.00"}, "a list of 2 strings"),
        ("fail_x", {"count": 2, "expected": ["$2.00"]}, "a list of 2 strings"),
        ("fail_x", {"count": 0}, "'count' is a whole number"),
    ],
)
def test_a_case_written_wrongly_fails_the_meta_test(name: str, extra: dict, problem: str):
    case = {**UNCHARGED, **extra}
    assert any(problem in p for p in case_problems("COM001", name, case, CODES))
    with pytest.raises(AssertionError, match="COM001"):
        assert_case("COM001", name, case, pl.DataFrame(), pl.DataFrame())


def test_a_case_written_rightly_has_no_problem():
    assert case_problems("COM001", "fail_x", UNCHARGED, CODES) == []


# What the audit reports for UNCHARGED's COM001 finding.
UNCHARGED_WORDS = {
    "message": "Banker wager of $20.00 won; commission 5% of $20.00 rounds up to $1.00, "
    "none was charged",
    "expected": "$1.00",
    "logged": "$0.00",
}


def test_a_fail_case_pinning_other_words_fails_the_meta_test_with_both(tmp_path):
    audited = audit_case(UNCHARGED, tmp_path)
    assert_case("COM001", "fail_uncharged", {**UNCHARGED, **UNCHARGED_WORDS}, *audited)
    reworded = {**UNCHARGED, **UNCHARGED_WORDS, "expected": "$1.25"}
    with pytest.raises(AssertionError) as failure:
        assert_case("COM001", "fail_uncharged", reworded, *audited)
    assert "finding 1's expected (- pinned, + reported)" in str(failure.value)
    assert "- $1.25" in str(failure.value) and "+ $1.00" in str(failure.value)
