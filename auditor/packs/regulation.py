"""The regulation a pack encodes, as the pack declares it (`regulation:`): its
jurisdiction, how it numbers its sections (the citation style), and the files beside the
pack that hold the section texts the reports quote and the traceability rows (the
sections of the regulation, whether the logs can audit each, and the checks that do);
`auditor.packs.regulation_files` reads those files.

A ruleset is what its pack says: no module outside the packs names a ruleset, a
jurisdiction or a citation style. The reports and the traceability matrix read these
from the packs loaded, so a fifth pack brings its own regulation with it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from pydantic import field_validator

from auditor.packs.entries import PackModel, Text, refuse


@dataclass(frozen=True)
class CitationStyle:
    """How a regulation numbers its sections, for reading its text into sections."""

    name: str
    example: str  # a reference written in this style
    prefix: str  # before a section's number: "§11", ".10"
    heading: re.Pattern[str]  # a section's heading line: its number, then its title
    outline: tuple[str, ...]  # the kinds of item labels, outermost first
    label: re.Pattern[str]  # an item label written without parentheses ("a." or "A.")
    label_kind: str  # the kind of such a label
    line_numbers: bool  # the text's lines carry the printed page's line numbers

    def section(self, number: str) -> str:
        """A section's reference: "§11" from "11", ".10" from "10"."""
        return f"{self.prefix}{int(number) if self.prefix == '§' else number}"


STYLES = {
    style.name: style
    for style in (
        CitationStyle(
            name="section",
            example="§11(c)(2)(iii), then a. items",
            prefix="§",
            heading=re.compile(r"^(\d{1,2})\.\s+(.*\S)"),
            outline=("lower", "digit", "roman", "item"),
            label=re.compile(r"^([a-z])\.\s+"),
            label_kind="item",
            line_numbers=False,
        ),
        CitationStyle(
            name="decimal",
            example=".10E(3)(a)(i)",
            prefix=".",
            heading=re.compile(r"^(\d{2})\.\s+(.*\S)"),
            outline=("upper", "digit", "lower", "roman"),
            label=re.compile(r"^([A-Z])\.\s+"),
            label_kind="upper",
            line_numbers=True,
        ),
    )
}


class RegulationSection(PackModel):
    """The regulation the pack encodes (its file is the pack's `source`)."""

    jurisdiction: Text
    # How the regulation numbers its sections: "section" (§11(c)(2)(iii), a. items) or
    # "decimal" (.10E(3)(a)(i)).
    citation_style: Text
    # Files beside the pack: the words of each section the reports quote, by reference
    # (JSON: {"§11(c)": "..."}); the regulation's sections with what each requires and
    # whether the logs can show it (JSON rows: ref, requires, verdict, evidence); and
    # the checks that audit each section, or why none does (YAML: ref -> codes or reason).
    texts: Text | None = None
    sections: Text | None = None
    traceability: Text | None = None

    @field_validator("texts", "sections", "traceability")
    @classmethod
    def _inside_the_pack_folder(cls, name: str | None) -> str | None:
        if name is None:
            return None
        parts = PurePosixPath(name).parts
        if name.startswith("/") or "\\" in name or ":" in name or ".." in parts:
            raise refuse(
                f"{name!r} is not a file in the pack's folder: name it relative to the pack, "
                "without '..', '\\' or a drive"
            )
        return name

    @field_validator("citation_style")
    @classmethod
    def _known_style(cls, name: str) -> str:
        if name not in STYLES:
            raise refuse(f"{name!r} is not a citation style; known: {', '.join(STYLES)}")
        return name

    @property
    def style(self) -> CitationStyle:
        return STYLES[self.citation_style]
