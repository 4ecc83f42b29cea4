"""The regulations' own words, by section, for the evidence of a finding.

The regulation texts are not shipped with the package; their section texts are, each
in the file its pack names (`regulation.texts`, `auditor.packs.regulation`): one entry
per numbered item of the regulation, keyed by its reference ("§11(c)(2)(iii)"), each
holding that item's own text (a section's entry holds its heading). A finding's citation
without its detail ("ID §11(c)(2)(iii)") finds its words among the packs loaded.
`python -m auditor.tools.generate` rewrites the built-in packs' files from the
texts (each pack's `source`); a test proves they match wherever the
texts are at hand.

The texts are PDF extractions in markdown: list markers and indentation are unreliable,
some styles' lines carry the page's line numbers, and the lettering restarts inside
items. So an item's place comes from its label, not its indentation: a label that
continues the sequence of an open item ((h) after (g), (2) after (1)) is that item's
sibling; a label that starts a sequence ((a), (1), (i), a.) opens a child of the
innermost item; anything else goes where its kind sits in the style's outline (the
pack's `citation_style`). "(i)" after "(h)" is a letter, elsewhere a roman numeral: a
long-hand Banker rule lettered (a)-(j) needs both.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from auditor.packs.kept import per_packs
from auditor.packs.loaded import builtin_packs
from auditor.packs.model import RulePack
from auditor.packs.regulation import CitationStyle
from auditor.packs.regulation_files import regulation_texts

_PAREN = re.compile(r"^\(([a-z]+|\d+)\)\s*")
_LINE_NUMBER = re.compile(r"^\d{1,2}(?:\s+|$)")
_ROMANS = ("i", "ii", "iii", "iv", "v", "vi", "vii", "viii", "ix", "x", "xi", "xii")


@dataclass(frozen=True)
class SectionText:
    """What a citation's evidence quotes: the section heading, the lead-in of each item
    above the cited one, then the cited item and everything under it."""

    citation: str  # as the finding gives it
    key: str  # the longest section of the text the citation falls under
    heading: str
    lead_in: tuple[str, ...]
    text: tuple[str, ...]


# ---- parsing ----------------------------------------------------------------------------


def _clean(line: str, line_numbers: bool) -> tuple[str, bool]:
    """A line without markdown, list markers and the page's line numbers (where the
    style's text carries them); and whether it stands on its own (a table's row or
    title) rather than running on."""
    line = line.strip()
    line = re.sub(r"^#+\s*", "", line)
    line = re.sub(r"^-\s+", "", line)
    if line_numbers:
        line = _LINE_NUMBER.sub("", line, count=1)
        line = re.sub(r"^-\s+", "", line)
    line = line.replace("**", "").replace("<b>", "").replace("</b>", "").replace("\\$", "$")
    row = False
    if line.startswith("|") and line.endswith("|"):
        cells = [c.strip() for c in line.strip("|").split("|")]
        if all(set(c) <= set("-: ") for c in cells):
            return "", False  # a markdown table's rule line
        line, row = " | ".join(c for c in cells if c), True
    elif "\t" in line:
        line, row = " | ".join(c.strip() for c in line.split("\t") if c.strip()), True
    line = re.sub(r"\s+", " ", line).strip()
    if re.fullmatch(r"[·•]*", line):
        return "", False  # a stray bullet of the extraction
    return line, row or bool(re.match(r"^(Table|TABLE) \d", line))


def _successor(kind: str, label: str) -> str:
    if kind == "digit":
        return str(int(label) + 1)
    if kind == "roman":
        i = _ROMANS.index(label) if label in _ROMANS else -1
        return _ROMANS[i + 1] if 0 <= i < len(_ROMANS) - 1 else ""
    return chr(ord(label) + 1)


def _kinds_of(token: str, paren: bool, style: CitationStyle) -> tuple[str, ...]:
    """The kinds a label may be: "(i)" is a letter or a roman numeral."""
    if not paren:
        return (style.label_kind,)
    if token.isdigit():
        return ("digit",)
    kinds = []
    if len(token) == 1:
        kinds.append("lower")
    if token in _ROMANS:
        kinds.append("roman")
    return tuple(kinds) or ("lower",)


_FIRST = {"digit": "1", "roman": "i", "lower": "a", "item": "a", "upper": "A"}


def _place(
    stack: list[tuple[str, str]],
    token: str,
    paren: bool,
    style: CitationStyle,
    opens_list: bool,
) -> list[tuple[str, str]]:
    """Where a label goes: the stack of (kind, label) it leaves, innermost last.
    `opens_list`: the innermost item ends with a colon, so a label that starts a sequence
    is its child even where it could continue an outer one ("(h) ... is 7 and:" "(i)")."""
    kinds = _kinds_of(token, paren, style)
    outline = style.outline
    if opens_list and stack:
        for kind in kinds:
            if _FIRST[kind] == token and kind != stack[-1][0]:
                return [*stack, (kind, token)]
    # A sibling of an open item: the label continues that item's sequence.
    for depth in range(len(stack) - 1, -1, -1):
        kind, label = stack[depth]
        if kind in kinds and _successor(kind, label) == token:
            return [*stack[:depth], (kind, token)]
    # The first label of a sequence opens a child of the innermost item.
    for kind in kinds:
        if _FIRST[kind] == token:
            return [*stack, (kind, token)]
    # Otherwise (a sequence that skips, as "a." followed by "(ii)"): under the nearest
    # open item whose kind sits above this one in the outline.
    kind = kinds[-1]
    rank = outline.index(kind) if kind in outline else len(outline)
    depth = len(stack)
    while depth > 0 and stack[depth - 1][0] in outline:
        if outline.index(stack[depth - 1][0]) < rank:
            break
        depth -= 1
    return [*stack[:depth], (kind, token)]


def _key(section: str, stack: list[tuple[str, str]], style: CitationStyle) -> str:
    ref = style.section(section)
    for kind, label in stack:
        ref += label if kind == style.label_kind else f"({label})"
    return ref


def parse_regulation(text: str, style: CitationStyle) -> dict[str, str]:
    """Every numbered item of one regulation's text, written in `style`: reference -> its
    own words, in order."""
    heading = style.heading
    texts: dict[str, list[tuple[str, bool]]] = {}
    section: str | None = None
    stack: list[tuple[str, str]] = []
    current: str | None = None
    for raw in text.splitlines():
        line, row = _clean(raw, style.line_numbers)
        if not line:
            continue
        found = heading.match(line)
        if found and not _PAREN.match(line):
            section, stack = found[1], []
            current = _key(section, stack, style)
            texts.setdefault(current, []).append((f"{found[1]}. {found[2]}".rstrip("."), True))
            continue
        if section is None:
            continue  # the title and authority lines before the first section
        label = _PAREN.match(line)
        token, paren = (label[1], True) if label else (None, False)
        if token is None:
            other = style.label.match(line)
            token = other[1] if other else None
        if token is not None:
            opens_list = current is not None and texts[current][-1][0].endswith(":")
            stack = _place(stack, token, paren, style, opens_list)
            current = _key(section, stack, style)
            texts.setdefault(current, []).append((line, row))
        elif current is not None:
            texts[current].append((line, row))
    return {key: "\n".join(_joined(lines)) for key, lines in texts.items()}


def _joined(lines: list[tuple[str, bool]]) -> Iterator[str]:
    """Wrapped lines joined back into sentences: a line that does not end a sentence, a
    table row or a title runs on into the next."""
    buffer = ""
    for line, row in lines:
        if row:
            if buffer:
                yield buffer
            yield line
            buffer = ""
            continue
        buffer = f"{buffer} {line}" if buffer else line
        if re.search(r"[.:;!?\"”]$|\band$|\bor$", line):
            yield buffer
            buffer = ""
    if buffer:
        yield buffer


def build(folder: Path, packs: Mapping[str, RulePack] | None = None) -> dict[str, dict[str, str]]:
    """The section texts of each pack's regulation (its `source` in `folder`), by pack:
    the packs that name a texts file (the built-in ones by default)."""
    packs = builtin_packs() if packs is None else packs
    return {
        ruleset: parse_regulation(
            (folder / pack.source).read_text(encoding="utf-8"), pack.regulation.style
        )
        for ruleset, pack in packs.items()
        if pack.regulation is not None and pack.regulation.texts is not None
    }


# ---- lookup -----------------------------------------------------------------------------


def shipped_texts() -> dict[str, str]:
    """The section texts of the built-in packs, keyed as citations are ("ID ref")."""
    return regulation_texts(builtin_packs())


def pack_texts(packs: Mapping[str, RulePack]) -> dict[str, str]:
    """The section texts of `packs`: each pack's texts file and the `sections` it
    writes itself, keyed as citations are."""
    return regulation_texts(packs)


def cited_section(citation: str, packs: Mapping[str, RulePack]) -> SectionText | None:
    """`section_text` of `citation` in `packs`' texts: each citation looked up once per
    set of packs (a night's findings cite a few dozen sections, each many times)."""
    return _lookup(packs)(citation)


@per_packs
def _lookup(packs: Mapping[str, RulePack]) -> Callable[[str], SectionText | None]:
    # Bounded: the desk renders the findings of archives it did not write, whose
    # citations are whatever their catalogs hold.
    return functools.lru_cache(maxsize=4096)(
        functools.partial(section_text, texts=pack_texts(packs))
    )


def _is_prefix(key: str, citation: str) -> bool:
    if not citation.startswith(key):
        return False
    rest = citation[len(key) :]
    # §1 is not a prefix of §11(c); (c)(2) is one of (c)(2)(iii), (1) of (1)a, .10 of .10E.
    return rest == "" or not rest[0].isdigit()


def section_text(citation: str, texts: dict[str, str] | None = None) -> SectionText | None:
    """The words of the longest section the citation falls under ("ID §11(c)(2)(iii)
    Table 1" -> §11(c)(2)(iii) with its Table 1), None when the citation names no
    section of the texts (the built-in packs' by default)."""
    texts = shipped_texts() if texts is None else texts
    citation = citation.strip()
    best = max(
        (k for k in _candidates(citation, texts) if _is_prefix(k, citation)), key=len, default=None
    )
    if best is None:
        return None
    if citation[len(best) : len(best) + 1] in ("-", "–") and len(_ancestors(best)) > 1:
        best = _ancestors(best)[-1]  # a range, "(1)–(3)": the item that holds them
    top = next(iter(_ancestors(best)), best)  # the section itself
    lead = [
        texts[k].split("\n", 1)[0]
        for k in _ancestors(best)
        if k != top and k in texts and k != best
    ]
    below = [texts[k] for k in texts if k == best or _is_descendant(k, best)]
    return SectionText(
        citation=citation,
        key=best,
        heading=texts.get(top, "").split("\n", 1)[0],
        lead_in=tuple(lead),
        text=tuple(line for block in below for line in block.split("\n")),
    )


def _candidates(citation: str, texts: dict[str, str]) -> list[str]:
    # The keys of the citation's ruleset; a dict scan of ~800 keys is cheap.
    ruleset = citation.split(" ", 1)[0]
    return [k for k in texts if k.startswith(ruleset + " ")]


def _ancestors(key: str) -> list[str]:
    """The keys above `key`, outermost first: "r §11(c)(2)" -> "r §11", "r §11(c)"."""
    ruleset, _, ref = key.partition(" ")
    # The section's number ("§11", ".10"), then each label: "(c)", "E", "a".
    parts = re.findall(r"^[^A-Za-z(]+|\([a-z0-9]+\)|[A-Za-z]", ref)
    return [f"{ruleset} {''.join(parts[:n])}" for n in range(1, len(parts))]


def _is_descendant(key: str, ancestor: str) -> bool:
    return key != ancestor and key.startswith(ancestor) and _is_prefix(ancestor, key)
