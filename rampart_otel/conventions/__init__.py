"""Telemetry conventions → what an agent did, one module per convention family.

Each family module exposes small pure functions over one ``Span``. They share the two
report types below, which ``processors.normalize`` merges into ``ToolCall``s: a convention
only says what one span shows; deciding that two reports are the same call is normalize's job.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from rampart_otel.model import Span

# Convention labels, as they appear in ToolCall.conventions and SideEffect.convention.
GEN_AI = "gen_ai"
OPENINFERENCE = "openinference"
OPENLLMETRY = "openllmetry"
MCP = "mcp"

# Finish reasons meaning "the model asked for tools": GenAI semconv, OpenAI, Anthropic, Gemini.
TOOL_FINISH_REASONS = frozenset(
    {"tool_call", "tool_calls", "function_call", "tool_use", "function_calls"}
)


@dataclass(slots=True)
class ToolReport:
    """One convention's account of one tool call, as one span shows it."""

    name: str
    call_id: str | None
    arguments: dict[str, Any] | str | None
    arguments_captured: bool
    result: Any
    result_captured: bool
    executed: bool  # False: a model asked for it; True: the span ran it
    error: bool
    span: Span
    convention: str

    @classmethod
    def requested(
        cls, span: Span, convention: str, name: Any, call_id: Any, raw: Any, captured: bool
    ) -> ToolReport:
        """A call a model asked for; ``raw`` arguments are parsed only when captured."""
        return cls(
            name=as_str(name) or "",
            call_id=as_str(call_id) or None,
            arguments=parse_arguments(raw) if captured else None,
            arguments_captured=captured,
            result=None,
            result_captured=False,
            executed=False,
            error=False,
            span=span,
            convention=convention,
        )


@dataclass(slots=True)
class ModelOutput:
    """What one model-inference span says the model produced.

    ``readable`` means the trace lists the output's parts, so the tool calls the model asked
    for are all known (a readable output with no tool call asked for none). Text may still
    be missing when content capture is off (parts recorded without their content).
    """

    readable: bool
    text: str | None = None  # assistant text; None when not captured
    text_captured: bool = False
    requests: list[ToolReport] = field(default_factory=list)
    finish_reasons: list[str] = field(default_factory=list)
    convention: str = ""

    @property
    def asked_for_tools(self) -> bool:
        return any(reason.lower() in TOOL_FINISH_REASONS for reason in self.finish_reasons)


def load_json(value: Any) -> Any:
    """A JSON-encoded attribute decoded, or the value itself when it is not JSON text."""
    if isinstance(value, str):
        text = value.strip()
        if text[:1] in ("{", "[", '"') or text in ("null", "true", "false"):
            try:
                return json.loads(text)
            except ValueError:
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


def as_str(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if value is None or isinstance(value, (dict, list, bytes)):
        return None
    return str(value)


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


def indexed(attributes: dict[str, Any], prefix: str) -> dict[int, dict[str, Any]]:
    """Flattened ``prefix{i}.rest`` keys grouped by ``i`` (OpenInference, OpenLLMetry)."""
    groups: dict[int, dict[str, Any]] = {}
    start = len(prefix)
    for key, value in attributes.items():
        if not key.startswith(prefix):
            continue
        index, dot, rest = key[start:].partition(".")
        if not dot or not index.isdigit():
            continue
        groups.setdefault(int(index), {})[rest] = value
    return groups
