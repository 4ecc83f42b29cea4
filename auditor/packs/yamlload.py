"""Pack YAML read within bounds, with the line of every key kept for error messages.

A pack may come from a folder anyone may have edited, so its text is read as a stream of
parser events and composed here, refusing what the safe loader would accept and then choke
on: an alias whose expansion grows past `MAX_NODES` (a billion-laughs file expands to
gigabytes), nesting deeper than `MAX_DEPTH` (the constructor recurses per level), more
than `MAX_NODES` values, a key given twice in one mapping (the safe loader keeps the last
silently: `odds: 25` then `odds: 2500`), a key that is not a plain value, and a value its
tag cannot build (a date such as 2027-13-45). Each refusal is a `PackYamlError` naming the
line and the key path. The file's size is bounded by whoever reads it (`MAX_PACK_BYTES`),
before any of it is parsed.

Events come from libyaml where PyYAML has it. Text libyaml refuses is read again by the
pure-Python parser, so that the error raised (and its message, which names the line) is
the one `yaml.safe_load` gives.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any, cast

import yaml

# The built-in packs are about 12 KB, 1,000 values and 7 levels deep: the bounds leave
# a pack of one's own ample room and stop a hostile one before it costs anything.
MAX_PACK_BYTES = 1024 * 1024
MAX_DEPTH = 32
MAX_NODES = 50_000

_FAST = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"


def _start(event: yaml.Event) -> yaml.Mark:
    """Where `event` starts. The C parser's marks are of its own class (yaml._yaml.Mark),
    which the stubs tell apart from yaml.Mark; they carry the same name, line and column,
    all that the nodes and errors built here read."""
    return cast(yaml.Mark, event.start_mark)


def _end(event: yaml.Event) -> yaml.Mark:
    return cast(yaml.Mark, event.end_mark)


class PackYamlError(yaml.MarkedYAMLError):
    """Pack text the loader refuses: `problem` at `key_path`, on line `line`."""

    def __init__(self, problem: str, mark: yaml.Mark | None, key_path: str = ""):
        super().__init__(problem=problem, problem_mark=mark)
        self.key_path = key_path
        self.line = 1 if mark is None else mark.line + 1

    def __str__(self) -> str:
        return f"line {self.line}: {self.key_path or '(top level)'}: {self.problem}"


@dataclass
class _Open:
    """A mapping or list being composed: its node, its data and where it sits."""

    node: yaml.MappingNode | yaml.SequenceNode
    data: dict[Any, Any] | list[Any]
    key_path: str
    anchor: str | None
    size: int = 1  # its values, aliases counted at their full expansion
    key: tuple[yaml.Node, Any] | None = None  # a mapping's key awaiting its value
    key_lines: dict[Hashable, int] = field(default_factory=dict)


@dataclass
class _Anchored:
    node: yaml.Node
    data: Any
    size: int


def safe_load(text: str) -> Any:
    """The data of pack text; PackYamlError (a yaml.YAMLError) for what is refused."""
    return load(text)[0]


def load(text: str) -> tuple[Any, yaml.Node | None]:
    """The data of pack text and its composed node (for the lines of keys), or None for
    an empty text."""
    try:
        return _Composer(text).compose(yaml.parse(text, Loader=_FAST))
    except PackYamlError:
        raise
    except yaml.YAMLError:
        return _Composer(text).compose(yaml.parse(text, Loader=yaml.SafeLoader))


class _Composer:
    """Builds the node tree and the data together from parser events, within bounds."""

    def __init__(self, text: str):
        self.scalars = yaml.SafeLoader("")  # a resolver and constructor for plain values
        self.anchors: dict[str, _Anchored] = {}
        self.stack: list[_Open] = []
        self.nodes = 0
        self.documents = 0
        self.root: tuple[yaml.Node, Any] | None = None

    def compose(self, events: Iterable[yaml.Event]) -> tuple[Any, yaml.Node | None]:
        for event in events:
            if isinstance(event, yaml.DocumentStartEvent):
                self._document(event)
            elif isinstance(event, yaml.ScalarEvent):
                self._scalar(event)
            elif isinstance(event, yaml.AliasEvent):
                self._alias(event)
            elif isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                self._open(event)
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                self._close()
        if self.root is None:
            return None, None
        node, data = self.root
        return data, node

    def _document(self, event: yaml.Event) -> None:
        self.documents += 1
        if self.documents > 1:
            raise PackYamlError(
                "a pack is one YAML document; a second one starts here", _start(event)
            )

    def _here(self) -> str:
        return self.stack[-1].key_path if self.stack else ""

    def _count(self, size: int, mark: yaml.Mark) -> None:
        self.nodes += size
        if self.nodes > MAX_NODES:
            raise PackYamlError(
                f"more than {MAX_NODES:,} values (aliases counted as what they repeat): "
                "not a rule pack",
                mark,
                self._child_path(),
            )

    def _scalar(self, event: yaml.ScalarEvent) -> None:
        tag = event.tag
        if tag is None or tag == "!":
            # The stubs leave BaseResolver.resolve unannotated.
            tag = self.scalars.resolve(yaml.ScalarNode, event.value, event.implicit)  # type: ignore[no-untyped-call]
        node = yaml.ScalarNode(tag, event.value, _start(event), _end(event), event.style)
        self._count(1, _start(event))
        try:
            data = self.scalars.construct_object(node)
        except yaml.YAMLError:
            raise
        except (ValueError, OverflowError) as exc:
            raise PackYamlError(
                f"{event.value!r} is not a valid {tag.rpartition(':')[2]} ({exc})",
                _start(event),
                self._child_path(),
            ) from None
        finally:
            self.scalars.constructed_objects.clear()
        self._finish(node, data, 1, event.anchor)

    def _alias(self, event: yaml.AliasEvent) -> None:
        anchored = None if event.anchor is None else self.anchors.get(event.anchor)
        if anchored is None:
            raise PackYamlError(
                f"alias *{event.anchor} names no anchor defined (and closed) before it",
                _start(event),
                self._child_path(),
            )
        self._count(anchored.size, _start(event))
        self._finish(anchored.node, anchored.data, anchored.size, None)

    def _open(self, event: yaml.CollectionStartEvent) -> None:
        mapping = isinstance(event, yaml.MappingStartEvent)
        kind = yaml.MappingNode if mapping else yaml.SequenceNode
        tag = event.tag
        if tag is None or tag == "!":
            # The stubs leave BaseResolver.resolve unannotated.
            tag = self.scalars.resolve(kind, None, event.implicit)  # type: ignore[no-untyped-call]
        if tag != (_MAP_TAG if mapping else _SEQ_TAG):
            raise PackYamlError(
                f"tag {tag} is not accepted in a pack", _start(event), self._child_path()
            )
        if len(self.stack) >= MAX_DEPTH:
            raise PackYamlError(
                f"nested more than {MAX_DEPTH} levels deep: not a rule pack",
                _start(event),
                self._child_path(),
            )
        self._count(1, _start(event))
        node = kind(tag, [], _start(event), None, event.flow_style)
        self.stack.append(_Open(node, {} if mapping else [], self._child_path(), event.anchor))

    def _close(self) -> None:
        done = self.stack.pop()
        self._finish(done.node, done.data, done.size, done.anchor)

    def _child_path(self) -> str:
        """The key path of the value about to be read."""
        if not self.stack:
            return ""
        parent = self.stack[-1]
        if isinstance(parent.data, list):
            return f"{parent.key_path}[{len(parent.data)}]"
        if parent.key is None:
            return parent.key_path
        key = parent.key[1]
        return f"{parent.key_path}.{key}" if parent.key_path else str(key)

    def _finish(self, node: yaml.Node, data: Any, size: int, anchor: str | None) -> None:
        if anchor is not None:
            self.anchors[anchor] = _Anchored(node, data, size)
        if not self.stack:
            self.root = (node, data)
            return
        parent = self.stack[-1]
        parent.size += size
        if isinstance(parent.data, list):
            parent.node.value.append(node)
            parent.data.append(data)
        elif parent.key is None:
            self._key(parent, node, data)
        else:
            key_node, key = parent.key
            parent.node.value.append((key_node, node))
            parent.data[key] = data
            parent.key = None

    def _key(self, parent: _Open, node: yaml.Node, key: Any) -> None:
        line = node.start_mark.line + 1
        if not isinstance(node, yaml.ScalarNode) or node.tag == "tag:yaml.org,2002:merge":
            raise PackYamlError(
                "a key must be a plain value (a word or a number)", node.start_mark, parent.key_path
            )
        where = f"{parent.key_path}.{key}" if parent.key_path else str(key)
        if key in parent.key_lines:
            raise PackYamlError(
                f"given twice, at lines {parent.key_lines[key]} and {line}: a mapping "
                "holds each key once",
                node.start_mark,
                where,
            )
        parent.key_lines[key] = line
        parent.key = (node, key)
