"""An mkdocs hook: the checks reference, one page per check code, generated at build time.

Each page comes from the check's own documentation (`auditor.check_docs.check_docs()`,
what `auditor rules CODE` prints), the regulation sections it audits (the traceability
matrix, `auditor rules CODE --by-section`) and its YAML cases (`tests/cases/CODE.yaml`,
which `tests/integration/test_rule_cases.py` runs through the whole pipeline). Nothing generated is
written into the repository; `checks/index.md` lists every code.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import yaml
from mkdocs.structure.files import File, Files

from auditor import witness
from auditor.check_docs import CheckDoc, check_docs
from auditor.output.traceability import shipped_sections, traced

SECTION = "checks"  # the folder of the generated pages, and the nav entry they replace
NAV_TITLE = "Checks reference"
FAMILIES = {
    "COM": "Commission",
    "DRW": "Draws",
    "PAY": "Payouts",
    "PRC": "Procedures",
    "SHO": "The shoe",
    "TBL": "Table options",
    "TOT": "Totals and announcements",
    "WAG": "Wager permissibility",
}
_CASE_START = re.compile(r"^  ((?:pass|fail)_\w+):", re.MULTILINE)


def _repository(config) -> Path:
    return Path(config.config_file_path).resolve().parent


def _case_texts(path: Path) -> dict[str, str]:
    """Each case of a case file as written there (its comments kept), by name."""
    raw = path.read_text(encoding="utf-8")
    starts = list(_CASE_START.finditer(raw))
    texts = {}
    for i, match in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(raw)
        texts[match.group(1)] = raw[match.start() : end].rstrip() + "\n"
    return texts


def _cases(folder: Path, code: str) -> tuple[dict, dict[str, str]]:
    path = folder / f"{code}.yaml"
    if not path.is_file():
        return {}, {}
    return yaml.safe_load(path.read_text(encoding="utf-8")), _case_texts(path)


def _words(name: str) -> str:
    words = name.split("_", 1)[1].replace("_", " ")
    return words[:1].upper() + words[1:]


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _case_block(name: str, case: dict, text: str | None, code: str) -> str:
    lines = [f'??? example "{_words(name)} (`{name}`)"']
    if name.startswith("fail_"):
        expected = f"{case.get('count', 1)} {code} finding" + (
            "s" if case.get("count", 1) != 1 else ""
        )
        details = [
            f"{key} `{case[key]}`" for key in ("severity", "citation", "impact") if key in case
        ]
        also = case.get("also") or {}
        lines.append(
            f"    Yields {expected}" + (f" ({', '.join(details)})" if details else "") + "."
        )
        for other, why in also.items():
            lines.append(f"    Also {other}: {_cell(why)}.")
    else:
        lines.append("    Yields no finding of any code and quarantines no row.")
    for row, why in (case.get("quarantines") or {}).items():
        lines.append(f"    Quarantines `{row}`: {_cell(why)}.")
    body = text if text is not None else yaml.safe_dump({name: case}, sort_keys=False)
    lines += ["", "    ```yaml"] + [f"    {line}" if line else "" for line in body.splitlines()]
    lines.append("    ```")
    return "\n".join(lines) + "\n"


def _sections_of(code: str, sections, mapping) -> list[str]:
    rows = []
    for section in sections:
        entry = mapping.get((section.ruleset, section.ref))
        if entry is None or code not in entry.codes:
            continue
        part = f" Not the rest: {_cell(entry.reason)}" if entry.reason else ""
        rows.append(
            f"| {section.ruleset} | {_cell(section.ref)} | {_cell(section.requires)}{part} |"
        )
    return rows


def _page(doc: CheckDoc, spec: dict, texts: dict[str, str], sections: list[str]) -> str:
    cases = spec.get("cases") or {}
    out = [
        f"# {doc.code} {doc.name}",
        "",
        f"**{_cell(doc.title)}**",
        "",
        "| | |",
        "|---|---|",
        f"| Code | `{doc.code}` ({FAMILIES.get(doc.code[:3], doc.code[:3])}) |",
        f"| Severity | {doc.severity} |",
        f"| Citation | {_cell(doc.citation)} |",
        f"| Pack rules | {', '.join(f'`{key}`' for key in doc.rules)} |",
        f"| Final while the day is dealt | {doc.final} "
        "([live audit](../live.md#which-checks-are-final-when)) |",
        "",
        "## What it checks",
        "",
        doc.what,
        "",
        "## Why it matters",
        "",
        doc.why,
        "",
        "## Example",
        "",
        doc.example,
        "",
        f"`auditor rules {doc.code}` prints this documentation; "
        f"`auditor rules {doc.code} --by-section` the sections below.",
        "",
        "## Sections of the regulations it audits",
        "",
    ]
    if sections:
        out += ["| ruleset | section | what it requires |", "|---|---|---|", *sections, ""]
    else:
        out += ["None in the traceability matrix.", ""]
    out += _witness_section(doc.code)
    out += [
        "## Cases",
        "",
        f"`tests/cases/{doc.code}.yaml` holds the cases the test suite runs through the whole "
        "pipeline on real Parquet (`tests/integration/test_rule_cases.py`). A case that must "
        "pass is a clean round: no finding of any code. A case that must fail breaks this "
        "check's rule alone. What a case leaves out is correct by the rules.",
        "",
    ]
    if spec.get("no_edge"):
        out += [f"No edge cases: {_cell(spec['no_edge'])}.", ""]
    for title, prefix in (("Cases that must fail", "fail_"), ("Cases that must pass", "pass_")):
        names = [n for n in cases if n.startswith(prefix)]
        out += [f"### {title} ({len(names)})", ""]
        if not names:
            out += ["None.", ""]
        for name in names:
            out.append(_case_block(name, cases[name], texts.get(name), doc.code))
    return "\n".join(out)


def _witness_section(code: str) -> list[str]:
    """The check's witness (`auditor/witness/sql/CODE.sql`), or that it has none yet."""
    text = witness.text(code)
    out = ["## Its proof in SQL", ""]
    if text is None:
        return [*out, "No witness yet: its findings are proven by the engine alone.", ""]
    return [
        *out,
        "The check's witness: one statement over the catalog that returns exactly the "
        f"findings {code} makes ([Proving a finding](../proving.md)). "
        f"`auditor rules {code} --sql` prints it; `auditor explain OUTDIR FINDING_ID` runs "
        "it narrowed to one finding.",
        "",
        "```sql",
        text.rstrip(),
        "```",
        "",
    ]


def _index(docs: list[CheckDoc], counts: dict[str, tuple[int, int]]) -> str:
    out = [
        "# Checks reference",
        "",
        "Every check the audit runs, one page each: what it checks, why it matters, an "
        "example, its severity and citation, the regulation sections it audits and the cases "
        "that must pass and fail. These pages are generated from the checks' own "
        "documentation (`auditor rules CODE`) and from `tests/cases/CODE.yaml` each time the "
        "documentation is built. A finding's `rule` column holds the code.",
        "",
        "Severity is `high` (money or the outcome is affected), `medium` (an announcement or "
        "record is wrong) or `low` (a reading of an ambiguous text).",
        "",
    ]
    by_family: dict[str, list[CheckDoc]] = defaultdict(list)
    for doc in docs:
        by_family[doc.code[:3]].append(doc)
    for family in sorted(by_family):
        out += [
            f"## {family}: {FAMILIES.get(family, family)}",
            "",
            "| code | title | severity | cases (fail / pass) |",
            "|---|---|---|---|",
        ]
        for doc in by_family[family]:
            fail, ok = counts[doc.code]
            out.append(
                f"| [{doc.code}]({doc.code}.md) | {_cell(doc.title)} | {doc.severity} "
                f"| {fail} / {ok} |"
            )
        out.append("")
    return "\n".join(out)


def on_config(config):
    """Fill the checks' nav entry with one page per code; point snippets at the repository."""
    docs = check_docs()
    pages = [{doc.code: f"{SECTION}/{doc.code}.md"} for doc in docs]
    for i, entry in enumerate(config.nav or []):
        if isinstance(entry, dict) and NAV_TITLE in entry:
            config.nav[i] = {NAV_TITLE: [f"{SECTION}/index.md", *pages]}
    snippets = config.mdx_configs.get("pymdownx.snippets")
    if snippets is not None:
        snippets["base_path"] = [str(_repository(config))]
    return config


def on_files(files: Files, config) -> Files:
    folder = _repository(config) / "tests" / "cases"
    sections, mapping = shipped_sections(), traced()
    docs = check_docs()
    counts = {}
    for doc in docs:
        spec, texts = _cases(folder, doc.code)
        cases = spec.get("cases") or {}
        counts[doc.code] = (
            sum(n.startswith("fail_") for n in cases),
            sum(n.startswith("pass_") for n in cases),
        )
        content = _page(doc, spec, texts, _sections_of(doc.code, sections, mapping))
        files.append(File.generated(config, f"{SECTION}/{doc.code}.md", content=content))
    files.append(File.generated(config, f"{SECTION}/index.md", content=_index(docs, counts)))
    return files
