"""The building blocks of the pack models: strict mappings, cited entries and their scalars.

A pack is read strictly on purpose. Scalars are pydantic's strict types, so ``true``
where a number belongs or ``"5"`` where an integer belongs is refused rather than
coerced; every mapping refuses keys it does not declare; every rule carries its
``cite``. The loader turns a ``ValidationError`` into a ``RulesetError`` naming the
file and the key path (``auditor.packs.problems``).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Annotated, Any, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    StringConstraints,
    model_validator,
)
from pydantic.fields import FieldInfo
from pydantic.json_schema import JsonDict
from pydantic_core import PydanticCustomError

T = TypeVar("T")

# The error type of the checks written here; `at` (in the error's context) holds the key
# path below the validated value, since a validator cannot set pydantic's location itself.
PACK_ERROR = "pack"
# The error type of a value that is none of a union's alternatives (``face`` or a number).
EITHER_ERROR = "either"
NON_BLANK = r"\S"


def kind(value: object) -> str:
    """How an error names what it found, in YAML's words for null."""
    return "null" if value is None else type(value).__name__


def first_repeat(values: Iterable[Hashable]) -> int | None:
    """The index of the first value that was seen before, None if there is none."""
    seen: set[Hashable] = set()
    for i, value in enumerate(values):
        if value in seen:
            return i
        seen.add(value)
    return None


def refuse(message: str, *at: str | int) -> PydanticCustomError:
    """A pack error at `at` below the value being validated (str: a key, int: a list index).

    The message is passed as the template with a context, so pydantic formats only
    ``{at}`` and leaves any other braces in it alone.
    """
    return PydanticCustomError(PACK_ERROR, message, {"at": at})


# The packs' table form holds a pack's counts and whole-dollar amounts as Int32 (and
# cents as Int64): a larger number is refused on load rather than overflowing an audit.
MAX_PACK_INT = 2**31 - 1
# The decks a shoe may hold: the exact odds sum the weights of a round's six cards in
# int64, which holds them up to 27 decks; a few spare keep every partial sum inside it.
MAX_DECKS = 24

Text = Annotated[StrictStr, StringConstraints(pattern=NON_BLANK)]
NonEmpty = Annotated[tuple[T, ...], Field(min_length=1)]
Count = Annotated[StrictInt, Field(ge=1, le=MAX_PACK_INT)]
NonNegative = Annotated[StrictInt, Field(ge=0, le=MAX_PACK_INT)]
Decks = Annotated[StrictInt, Field(ge=1, le=MAX_DECKS)]


def between(low: int, high: int) -> FieldInfo:
    """The bounds of an integer, written `Annotated[StrictInt, between(0, 9)]`: a call
    in the metadata, where a type checker allows one, not in place of the type."""
    bounds: FieldInfo = Field(ge=low, le=high)
    return bounds


def word_or_number(word: str) -> Discriminator:
    """Picks the alternative of a ``word`` (tagged "word") or an integer (tagged
    "number") union by the input, so an out-of-range number is reported as that alone
    rather than beside "is not 'face'"::

        Annotated[
            Annotated[Literal["face"], Tag("word")]
            | Annotated[StrictInt, between(0, 9), Tag("number")],
            word_or_number("face"),
        ]
    """

    def which(value: Any) -> str | None:
        if value == word:
            return "word"
        return "number" if isinstance(value, int) and not isinstance(value, bool) else None

    return Discriminator(
        which,
        custom_error_type=EITHER_ERROR,
        custom_error_message=f"expected {word!r} or an integer",
    )


def keys_named(*keys: object, every: bool = False) -> dict[str, Any]:
    """JSON Schema for the keys of a mapping (`every`: all of them required).

    An editor reads YAML's numeric keys as JSON's strings, hence ``str``.
    """
    names = [str(key) for key in keys]
    return {"propertyNames": {"enum": names}, **({"required": names} if every else {})}


# JSON Schema for the keys of a mapping keyed by numbers (chairs, percents).
NUMBERED_KEYS: JsonDict = {"propertyNames": {"pattern": "^[0-9]+$"}}


class PackModel(BaseModel):
    """A mapping of a pack: read-only, every key declared, none unknown."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _declared_keys_only(cls, data: Any) -> Any:
        # Checked before the fields, and alone: a misspelt key is the likelier cause of
        # a "missing" one, so it is reported as itself.
        if isinstance(data, cls):
            return data
        if not isinstance(data, dict):
            raise refuse(f"expected a mapping, found {kind(data)}")
        keys = sorted(cls.model_fields, key=lambda name: name in Entry.model_fields)
        for key in data:
            if key not in cls.model_fields:
                raise refuse(f"unknown key; expected one of {', '.join(keys)}", str(key))
        return data


class Entry(PackModel):
    """A rule: its data keys beside the reference it encodes and an optional note."""

    cite: Text
    note: Text | None = None


class Reference(Entry):
    """A rule that is only its reference, such as the announcement of the totals."""


class Flag(Entry):
    """A rule that applies or not: ``value`` true or false."""

    value: StrictBool


class Range(Entry):
    """Inclusive bounds; ``null`` where the text states no bound."""

    min: NonNegative | None
    max: NonNegative | None

    @model_validator(mode="after")
    def _ordered(self) -> Range:
        if self.min is not None and self.max is not None and self.min > self.max:
            raise refuse(f"min {self.min} is above max {self.max}")
        return self

    def contains(self, value: int) -> bool:
        return (self.min is None or value >= self.min) and (self.max is None or value <= self.max)


class DeckRange(Range):
    """Inclusive bounds on a shoe's decks, each within what the engine deals (1-24)."""

    min: Decks | None
    max: Decks | None
