"""Value helpers the convention readers share: attribute values decoded (JSON text,
arguments, results), strings and string lists read leniently, flattened ``prefix{i}.rest``
keys grouped, and the redaction markers instrumentations write in place of content.

Attribute values are the sender's: each helper takes any value and never raises on one.
"""

from __future__ import annotations

import json
from typing import Any

from rampart_otel.codecs.otlp_json import parse_json

# What instrumentations write in place of content they withhold: OpenInference's hide_*
# settings, Strands' redaction (``gen_ai_unredacted_attributes``).
REDACTED_MARKERS = frozenset({"__REDACTED__", "[REDACTED]"})


def redacted(value: Any) -> bool:
    """Whether an attribute holds a redaction marker instead of its content."""
    return isinstance(value, str) and value in REDACTED_MARKERS


def load_json(value: Any) -> Any:
    """A JSON-encoded attribute decoded, or the value itself when it is not JSON text."""
    if isinstance(value, str):
        text = value.strip()
        if text[:1] in ("{", "[", '"') or text in ("null", "true", "false"):
            try:
                return parse_json(text)
            except (ValueError, RecursionError):
                return value
    return value


def parse_arguments(value: Any) -> dict[str, Any] | str | None:
    """Tool arguments as a dict; JSON text is decoded, anything unparseable is kept raw."""
    if value is None:
        return None
    if isinstance(value, dict):
        return value
    if isinstance(value, (bytes, bytearray)):
        value = bytes(value).decode("utf-8", "replace")
    if isinstance(value, str):
        if not value.strip():
            return {}
        decoded = load_json(value)
        if isinstance(decoded, dict):
            return decoded
        if isinstance(decoded, str) and decoded is not value:  # double-encoded JSON
            return parse_arguments(decoded)
        return value
    return json.dumps(value, default=str)  # a list or scalar: kept, as its JSON text


def parse_result(value: Any) -> Any:
    """A tool result; JSON text is decoded to its value, anything else is kept as is."""
    return load_json(value)


def parse_stringified_result(value: Any) -> Any:
    """A result recorded as the JSON text of the returned value (``JSON.stringify``): a
    string returned is a JSON string literal, whose text is then read like any raw result."""
    decoded = load_json(value)
    if isinstance(decoded, str) and decoded != value:
        return load_json(decoded)
    return decoded


def as_str(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if value is None or isinstance(value, (dict, list, bytes)):
        return None
    return str(value)


def tool_definition(definition: Any) -> tuple[str, Any] | None:
    """A request's tool definition as (name, its parameters' schema, decoded): the
    OpenAI shape ``{"type": "function", "function": {"name", "parameters"}}``, its flat form
    ``{"name", "parameters"}``, or Anthropic's ``{"name", "input_schema"}``."""
    if not isinstance(definition, dict):
        return None
    function = definition.get("function")
    function = function if isinstance(function, dict) else definition
    name = as_str(function.get("name"))
    if not name:
        return None
    return name, load_json(function.get("parameters", function.get("input_schema")))


def as_str_list(value: Any) -> list[str]:
    """A string-array attribute, tolerating a single string or JSON-encoded array."""
    if isinstance(value, str):
        decoded = load_json(value)
        if isinstance(decoded, list):
            return [str(item) for item in decoded if item is not None]
        return [value]
    if isinstance(value, (list, tuple)):
        return [str(item) for item in value if item is not None]
    return []


def skipped_indices(groups: dict[int, Any]) -> list[int]:
    """The indices below the highest of ``indexed``'s groups that hold no key: items lost
    from a flattened list (a message whose keys were all dropped)."""
    if not groups:
        return []
    top = max(groups)
    if top >= len(groups) + 1000:  # a sender's stray index, not a list: name a few
        return [i for i in range(1000) if i not in groups][:3]
    return [i for i in range(top) if i not in groups]


def indexed(attributes: dict[str, Any], prefix: str) -> dict[int, dict[str, Any]]:
    """Flattened ``prefix{i}.rest`` keys grouped by ``i`` (OpenInference, OpenLLMetry).

    A key whose ``i`` is not a decimal number ``int`` reads is no index (keys are the
    sender's). Each key is parsed once per prefix and remembered (``_index_keys``).
    """
    groups: dict[int, dict[str, Any]] = {}
    known = _index_keys.get(prefix)
    if known is None:
        if len(_index_keys) >= _INDEX_PREFIXES_CACHED:
            _index_keys.clear()
        known = _index_keys[prefix] = {}
    seen = known.get
    for key, value in attributes.items():
        where = seen(key, _UNSEEN)
        if where is _UNSEEN:
            where = _index_key(key, prefix)
            if len(known) >= _INDEX_KEYS_CACHED:
                known.clear()  # keys are trace data: never let them grow memory unbounded
            known[key] = where
        if where is None:
            continue
        index, rest = where
        group = groups.get(index)
        if group is None:
            groups[index] = {rest: value}
        else:
            group[rest] = value
    return groups


def _index_key(key: str, prefix: str) -> tuple[int, str] | None:
    """``(i, rest)`` of a ``prefix{i}.rest`` key; None for any other key."""
    if not key.startswith(prefix):
        return None
    index, dot, rest = key[len(prefix) :].partition(".")
    if not dot or not index.isdecimal():
        return None
    try:
        return int(index), rest
    except ValueError:  # more digits than int() reads
        return None


# prefix → key → what ``indexed`` reads of it: spans repeat a few hundred flattened keys.
_index_keys: dict[str, dict[str, tuple[int, str] | None]] = {}
_INDEX_PREFIXES_CACHED = 64
_INDEX_KEYS_CACHED = 4096
_UNSEEN: Any = object()
