"""YAML read with SafeLoader semantics while keeping where every value came from.

``yaml.compose`` keeps each node's start mark; we build plain Python values from the nodes
ourselves and remember the node behind each path, so any later error (schema, a bad token
inside a ``detect`` string) can be reported as FILE:LINE:COL.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import yaml

from rampart_otel.errors import PolicyError

Path = tuple[str | int, ...]
Position = tuple[int, int]  # 1-based line, column

MAX_NODES = 100_000
MAX_DEPTH = 64
_BREAKS = "\r\n\x85\u2028\u2029"
_DOUBLE_QUOTED_ESCAPES = {
    "0": "\0",
    "a": "\x07",
    "b": "\x08",
    "t": "\t",
    "\t": "\t",
    "n": "\n",
    "v": "\x0b",
    "f": "\x0c",
    "r": "\r",
    "e": "\x1b",
    " ": " ",
    '"': '"',
    "/": "/",
    "\\": "\\",
    "N": "\x85",
    "_": "\xa0",
    "L": "\u2028",
    "P": "\u2029",
}
_MERGE_TAG = "tag:yaml.org,2002:merge"
_COLLECTION_TAGS = ("tag:yaml.org,2002:map", "tag:yaml.org,2002:seq")
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}


def boolean_hint(node: yaml.Node | None, value: object) -> str:
    """``: YAML reads no as false; quote it ('no')`` for a plain word YAML 1.1 took for a
    boolean (on, off, yes, no) where a string was meant; else nothing."""
    if isinstance(value, bool) and isinstance(node, yaml.ScalarNode) and node.style is None:
        return f": YAML reads {node.value} as {str(value).lower()}; quote it ({node.value!r})"
    return ""


def mark_position(mark: yaml.Mark | None) -> Position | None:
    return None if mark is None else (mark.line + 1, mark.column + 1)


def index_position(text: str, index: int) -> Position:
    """1-based line and column of a character index, counting line breaks as YAML does."""
    line, column, i = 1, 1, 0
    while i < min(index, len(text)):
        if text[i] in _BREAKS:
            i += 2 if text.startswith("\r\n", i) else 1
            line, column = line + 1, 1
        else:
            i += 1
            column += 1
    return line, column


@dataclass
class Document:
    """A composed YAML document as Python values, plus the nodes behind each path."""

    text: str
    source: str
    root: yaml.Node | None
    value: Any = None
    nodes: dict[Path, yaml.Node] = field(default_factory=dict)
    key_nodes: dict[Path, yaml.Node] = field(default_factory=dict)

    def error(self, message: str, node: yaml.Node | None) -> PolicyError:
        position = mark_position(node.start_mark) if node is not None else None
        line, column = position if position else (None, None)
        return PolicyError(self.source, line, column, message)

    def nearest(self, path: Path, *, key: bool = False) -> yaml.Node | None:
        """The node of ``path``, or of its longest prefix we know (the key node if asked)."""
        if key and path in self.key_nodes:
            return self.key_nodes[path]
        for end in range(len(path), -1, -1):
            node = self.nodes.get(path[:end])
            if node is not None:
                return node
        return self.root


def compose(text: str, source: str) -> Document:
    """Compose one YAML document with SafeLoader; YAML errors become located PolicyErrors."""
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = mark_position(mark) or (None, None)
        problem = exc.problem or "invalid YAML"
        if exc.context:
            problem += f" ({exc.context})"
        raise PolicyError(source, line, column, f"not valid YAML: {problem}") from None
    except yaml.YAMLError as exc:  # ReaderError: a character YAML does not allow
        position = getattr(exc, "position", None)
        line, column = index_position(text, position) if position is not None else (None, None)
        reason = getattr(exc, "reason", None) or "unreadable"
        raise PolicyError(source, line, column, f"not valid YAML: {reason}") from None
    except RecursionError:
        raise PolicyError(source, 1, 1, "not valid YAML: nested too deeply") from None
    document = Document(text, source, root)
    if root is not None:
        document.value = _Builder(document).build(root, ())
    return document


class _Builder:
    """Node tree -> Python values with SafeLoader's scalar constructors, recording paths."""

    def __init__(self, document: Document) -> None:
        self.document = document
        self.loader = yaml.SafeLoader("")
        self.count = 0

    def build(self, node: yaml.Node, path: Path) -> Any:
        self.count += 1
        if self.count > MAX_NODES or len(path) > MAX_DEPTH:
            raise self.document.error("the document is too large or nested too deeply", node)
        self.document.nodes[path] = node
        if isinstance(node, yaml.CollectionNode) and node.tag not in _COLLECTION_TAGS:
            raise self.document.error(f"not valid YAML here: unsupported tag {node.tag!r}", node)
        if isinstance(node, yaml.MappingNode):
            result: dict[str, Any] = {}
            first_seen: dict[str, yaml.Node] = {}
            for key_node, value_node in node.value:
                if key_node.tag == _MERGE_TAG:
                    raise self.document.error(
                        "merge keys ('<<') are not supported: write each key out", key_node
                    )
                key = self.scalar(key_node) if isinstance(key_node, yaml.ScalarNode) else None
                if not isinstance(key, str):
                    message = "mapping keys must be strings" + boolean_hint(key_node, key)
                    raise self.document.error(message, key_node)
                if key in first_seen:
                    first = first_seen[key].start_mark.line + 1
                    raise self.document.error(
                        f"duplicate key {key!r} (first at line {first})", key_node
                    )
                first_seen[key] = key_node
                self.document.key_nodes[(*path, key)] = key_node
                result[key] = self.build(value_node, (*path, key))
            return result
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, (*path, i)) for i, item in enumerate(node.value)]
        return self.scalar(node)

    def scalar(self, node: yaml.Node) -> Any:
        try:
            return self.loader.construct_object(node, deep=True)
        except yaml.YAMLError as exc:
            problem = getattr(exc, "problem", None) or str(exc)
            raise self.document.error(f"not valid YAML: {problem}", node) from None


def scalar_locator(text: str, node: yaml.ScalarNode) -> Any:
    """A function from an index into the scalar's value to its 1-based (line, column) in ``text``.

    Exact for plain and block scalars and for quoted ones with escapes: folding and
    escapes only change whitespace or collapse an escape into one character, so the
    value's non-blank characters line up one to one with the source's.
    """
    value: str = node.value
    units = [(char, pos) for char, pos in _source_units(text, node) if char and not char.isspace()]
    targets = [i for i, char in enumerate(value) if not char.isspace()]
    mapped = dict(zip(targets, (pos for _, pos in units), strict=False))
    start = mark_position(node.start_mark) or (1, 1)

    def locate(index: int) -> Position:
        if index in mapped:
            return mapped[index]
        before = [i for i in mapped if i < index]
        if not before:
            return start
        anchor = max(before)
        line, column = mapped[anchor]
        return line, column + (index - anchor)

    return locate


def _source_units(text: str, node: yaml.ScalarNode) -> Iterator[tuple[str, Position]]:
    """(produced character, position) for each source unit of a scalar, in order."""
    chars = _positions(text, node.start_mark, node.end_mark.index)
    style = node.style
    if style in ("|", ">"):
        for char, _ in chars:  # the header line: indicators and an optional comment
            if char in _BREAKS:
                break
        yield from chars
        return
    if style == "'":
        next(chars, None)  # opening quote
        for char, pos in chars:
            if char == "'":
                following = next(chars, None)
                if following is None or following[0] != "'":
                    return  # closing quote
                yield "'", pos
            else:
                yield char, pos
        return
    if style == '"':
        next(chars, None)
        for char, pos in chars:
            if char == '"':
                return
            if char != "\\":
                yield char, pos
                continue
            escaped = next(chars, None)
            if escaped is None:
                return
            code = escaped[0]
            if code in _HEX_ESCAPES:
                digits = "".join(next(chars, ("", pos))[0] for _ in range(_HEX_ESCAPES[code]))
                try:
                    yield chr(int(digits, 16)), pos
                except ValueError:
                    yield "?", pos
            elif code in _BREAKS:
                continue  # an escaped line break produces nothing
            else:
                yield _DOUBLE_QUOTED_ESCAPES.get(code, code), pos
        return
    yield from chars  # plain


def _positions(text: str, mark: yaml.Mark, end: int) -> Iterator[tuple[str, Position]]:
    index, line, column = mark.index, mark.line + 1, mark.column + 1
    while index < min(end, len(text)):
        char = text[index]
        yield char, (line, column)
        if char in _BREAKS:
            if text.startswith("\r\n", index):
                index += 1
            line, column = line + 1, 1
        else:
            column += 1
        index += 1
