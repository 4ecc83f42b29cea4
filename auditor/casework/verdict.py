"""The verdict on a case: what is wrong with it as written (`case_problems`), and what
its audit's findings and quarantine get wrong (`case_failures`), each in words a person
reads without the runner's code: the expected and the reported side by side."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from decimal import Decimal
from difflib import ndiff

import polars as pl

# The keys a case may hold; anything else is a typo that would otherwise be ignored.
CASE_KEYS = {
    "ruleset", "table", "tables_rows", "shoe", "shoes_rows", "sequence_ends", "round",
    "rounds", "wagers", "commission_collections", "royal9_seats",
    "count", "citation", "severity", "impact", "also", "quarantines",
    "message", "expected", "logged",
}  # fmt: skip
# A finding's words a fail case may pin, exactly as the audit reports them.
WORDING_KEYS = ("message", "expected", "logged")


def case_problems(code: str, name: str, case: dict, codes: Collection[str]) -> list[str]:
    """What is wrong with a case as written (not with its audit); `codes`: every check's."""
    problems = [f"unknown key {key!r}" for key in sorted(set(case) - CASE_KEYS, key=str)]
    if not name.startswith(("pass_", "fail_")):
        problems.append("a case is named pass_* or fail_*")
    if name.startswith("pass_"):
        problems += [f"a pass case takes no {key!r}"
                     for key in ("also", "quarantines", "count", *WORDING_KEYS)
                     if key in case]  # fmt: skip
    count = case.get("count", 1)
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        problems.append("'count' is a whole number of findings, 1 or more")
        count = 1
    for key in WORDING_KEYS:
        if key not in case or name.startswith("pass_"):
            continue
        pinned = case[key]
        if count == 1 and not isinstance(pinned, str):
            problems.append(f"{key!r} of a single finding is a string")
        if count != 1 and not (
            isinstance(pinned, list)
            and len(pinned) == count
            and all(isinstance(words, str) for words in pinned)
        ):
            problems.append(f"{key!r} of {count} findings is a list of {count} strings")
    for key, known in (("also", set(codes) - {code}), ("quarantines", None)):
        given = case.get(key, {})
        if not isinstance(given, dict):
            problems.append(f"{key!r} maps each entry to its reason")
            continue
        for entry, reason in given.items():
            if known is not None and entry not in known:
                problems.append(f"{key}: {entry!r} is not another check's code")
            if not isinstance(reason, str) or not reason.strip():
                problems.append(f"{key}: {entry!r} needs a one-line reason")
    return problems


def case_failures(
    code: str, name: str, case: dict, quarantine: pl.DataFrame, findings: pl.DataFrame
) -> list[str]:
    """What the case's audit (its quarantine and all its findings) gets wrong, each an
    entry of one or more lines; none: the case passes."""
    quarantined = Counter(f"{r['table']} {r['row_key']}" for r in quarantine.iter_rows(named=True))
    found = [(f["rule"], f["message"]) for f in findings.iter_rows(named=True)]
    if name.startswith("pass_"):
        failures = []
        if quarantined:
            failures.append(f"pass case {code} {name} quarantines:\n" + _rows(quarantine))
        if found:
            failures.append(f"pass case {code} {name} is not clean:\n" + _found(found))
        return failures
    failures = []
    wanted = set(case.get("quarantines", {}))
    if set(quarantined) != wanted:
        failures.append(
            f"fail case {code} {name} quarantines (- expected, + quarantined):\n"
            + _diff(sorted(wanted), sorted(quarantined))
        )
    expected = {code, *case.get("also", {})}
    if {rule for rule, _ in found} != expected:
        failures.append(
            f"fail case {code} {name} must yield {sorted(expected)}, yields "
            f"{sorted({rule for rule, _ in found})}:\n" + _found(found)
        )
    own = findings.filter(pl.col("rule") == code)
    if own.height != case.get("count", 1):
        failures.append(
            f"fail case {code} {name}: {own.height} findings of {code}, "
            f"expected {case.get('count', 1)}"
        )
        return failures
    failures += _fields_failures(code, name, case, own)
    mismatches = wording_mismatches(case, own)
    if mismatches:
        failures.append(f"fail case {code} {name}:\n" + "\n".join(mismatches))
    return failures


def _fields_failures(code: str, name: str, case: dict, own: pl.DataFrame) -> list[str]:
    failures = []
    for number, finding in enumerate(own.iter_rows(named=True), 1):
        wanted = {key: case[key] for key in ("citation", "severity") if key in case}
        if "impact" in case:
            wanted["impact"] = Decimal(str(case["impact"]))
        for key, value in wanted.items():
            if finding[key] != value:
                failures.append(
                    f"fail case {code} {name}: finding {number}'s {key} "
                    f"(- expected, + reported):\n" + _diff([str(value)], [str(finding[key])])
                )
        if not (finding["citation"] or "").startswith(case["ruleset"] + " "):
            failures.append(
                f"fail case {code} {name}: finding {number} cites {finding['citation']!r}, "
                f"not the case's ruleset {case['ruleset']}"
            )
        if not finding["message"] or finding["expected"] == finding["logged"]:
            failures.append(
                f"fail case {code} {name}: finding {number} has no message, or expects "
                f"what was logged ({finding['expected']!r})"
            )
    return failures


def pinned_wording(case: dict, key: str) -> list[str] | None:
    """The words a case pins for `key`, one per finding, or None where it pins none."""
    if key not in case:
        return None
    pinned = case[key]
    return [pinned] if isinstance(pinned, str) else list(pinned)


def wording_mismatches(case: dict, own: pl.DataFrame) -> list[str]:
    """Each pinned word the audit's findings do not report exactly, as a diff of the two."""
    mismatches = []
    for key in WORDING_KEYS:
        pinned = pinned_wording(case, key)
        if pinned is None:
            continue
        for number, (words, reported) in enumerate(zip(pinned, own[key], strict=True), 1):
            if words != reported:
                diff = _diff([words], [reported])
                mismatches.append(f"  finding {number}'s {key} (- pinned, + reported):\n{diff}")
    return mismatches


def _diff(expected: list[str], reported: list[str]) -> str:
    # ndiff's hint lines ("?   ^") end in a newline of their own.
    return "\n".join(f"    {line.rstrip()}" for line in ndiff(expected, reported))


def _found(found: list[tuple[str, str]]) -> str:
    return "\n".join(f"    {rule}: {message}" for rule, message in found) or "    (none)"


def _rows(quarantine: pl.DataFrame) -> str:
    return "\n".join(
        f"    {r['table']} {r['row_key']}: {r['reason']}" for r in quarantine.iter_rows(named=True)
    )
