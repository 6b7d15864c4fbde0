"""Perturbations that only hide or scramble evidence, for the metamorphic tests.

Each takes a run's spans and returns new spans (the input is never changed). None of them
adds evidence, so none may move a verdict to SAFE: obscuring what the trace shows can only
move a verdict towards UNDETERMINED.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

from rampart_otel.model import Scope, Span

UNKNOWN_REASON = "zz_unknown_reason"
_FINISH_KEY = re.compile(r"finish_?reasons?|stop_?reason|finishReason", re.IGNORECASE)
# Keys holding content: messages, inputs, outputs, arguments, results, query text, commands.
_CONTENT_KEY = re.compile(
    r"(?:^|[._])(messages?|prompts?|completions?|contents?|arguments|args|input|output|"
    r"result|results|response|text|choices?|parts|llm_request|llm_response|tool_call_args|"
    r"tool_response|body|value|statement|final_result|all_messages|tool_arguments|events|"
    r"command_args|command_line|command|toolCalls|toolCall\.args|toolCall\.result)(?:$|[._])",
    re.IGNORECASE,
)
# Attribute-key prefixes of each convention family, renamed one family at a time.
FAMILIES: dict[str, tuple[str, ...]] = {
    "gen_ai": ("gen_ai.",),
    "openinference": ("openinference.", "llm.", "input.", "output.", "tool.", "tool_call."),
    "openllmetry": ("traceloop.", "llm.", "gen_ai.prompt.", "gen_ai.completion."),
    "pydantic-ai": ("tool_arguments", "tool_response", "final_result", "pydantic_ai.", "events"),
    "mcp": ("mcp.",),
    "vercel-ai": ("ai.", "operation.name"),
    "google-adk": ("gcp.vertex.agent.",),
    "claude-code": ("claude_code.", "tool_name", "tool.", "decision", "command"),
}

Spans = list[Span]


def _scramble_json(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: (_unknown_like(v) if _FINISH_KEY.fullmatch(k) else _scramble_json(v))
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_scramble_json(v) for v in value]
    return value


def _unknown_like(value: Any) -> Any:
    if isinstance(value, list):
        return [UNKNOWN_REASON for _ in value]
    if isinstance(value, str) and value.startswith("["):
        return json.dumps([UNKNOWN_REASON])
    return UNKNOWN_REASON


def _scramble_value(key: str, value: Any) -> Any:
    if _FINISH_KEY.search(key.rsplit(".", 1)[-1]):
        return _unknown_like(value)
    if isinstance(value, str) and _FINISH_KEY.search(value) and value.lstrip()[:1] in "[{":
        try:
            decoded = json.loads(value)
        except ValueError:
            return value
        return json.dumps(_scramble_json(decoded))
    return value


def _map_attrs(span: Span, fn: Callable[[dict[str, Any]], dict[str, Any]]) -> Span:
    events = [replace(e, attributes=fn(dict(e.attributes))) for e in span.events]
    return replace(span, attributes=fn(dict(span.attributes)), events=events)


def unknown_finish_reasons(spans: Spans) -> Spans:
    """Every finish/stop reason, as an attribute or inside JSON text, made unknown."""

    def fn(attrs: dict[str, Any]) -> dict[str, Any]:
        return {k: _scramble_value(k, v) for k, v in attrs.items()}

    return [_map_attrs(span, fn) for span in spans]


def no_events(spans: Spans) -> Spans:
    return [replace(span, events=[]) for span in spans]


def no_content(spans: Spans) -> Spans:
    """Every content-bearing attribute dropped, on spans and on their events."""

    def fn(attrs: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in attrs.items() if not _CONTENT_KEY.search(k)}

    return [_map_attrs(span, fn) for span in spans]


# The name of a tool call a model asked for, in the flattened message forms
# (``gen_ai.completion.0.tool_calls.0.name``, ``...tool_call.function.name``).
_TOOL_CALL_NAME = re.compile(r"tool_calls?\.\d+\.(?:tool_call\.)?(?:function\.)?name$")


def no_tool_call_names(spans: Spans) -> Spans:
    """The names of the tool calls models asked for dropped (their ids and arguments kept)."""

    def fn(attrs: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in attrs.items() if not _TOOL_CALL_NAME.search(k)}

    return [_map_attrs(span, fn) for span in spans]


# Where a request went: the full URL (the host and path may remain in their own keys).
_URL_KEYS = frozenset({"http.url", "url.full"})


def no_urls(spans: Spans) -> Spans:
    """Every HTTP client span's full URL dropped."""

    def fn(attrs: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in attrs.items() if k not in _URL_KEYS}

    return [_map_attrs(span, fn) for span in spans]


# The role of one message in the flattened message forms (``llm.input_messages.1.message.role``,
# ``gen_ai.prompt.1.role``).
_MESSAGE_ROLE = re.compile(r"\.\d+\.(?:message\.)?role$")


def no_message_roles(spans: Spans) -> Spans:
    """The roles of the flattened messages dropped (their content kept)."""

    def fn(attrs: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in attrs.items() if not _MESSAGE_ROLE.search(k)}

    return [_map_attrs(span, fn) for span in spans]


# The flattened message lists, keyed by index (``llm.input_messages.1.message.role``).
_MESSAGE_LIST = re.compile(
    r"^(llm\.input_messages|llm\.output_messages|gen_ai\.prompt|gen_ai\.completion|llm\.prompts)"
    r"\.(\d+)\."
)


def no_middle_message(spans: Spans) -> Spans:
    """The second of three or more messages of each flattened list dropped whole (a lost
    message the later indices still show)."""

    def fn(attrs: dict[str, Any]) -> dict[str, Any]:
        found = [m for m in map(_MESSAGE_LIST.match, attrs) if m]
        longer = {m.group(1) for m in found if int(m.group(2)) >= 2}
        return {
            k: v
            for k, v in attrs.items()
            if not ((m := _MESSAGE_LIST.match(k)) and m.group(1) in longer and m.group(2) == "1")
        }

    return [_map_attrs(span, fn) for span in spans]


def no_scope_names(spans: Spans) -> Spans:
    """Every span's instrumentation scope left unnamed (an OTLP request without ``scope``)."""
    return [replace(span, scope=Scope()) for span in spans]


def without_parent(spans: Spans, parent_id: str) -> Spans:
    """One span that has children dropped; its children are orphaned."""
    return [span for span in spans if span.span_id != parent_id]


def without_parents(spans: Spans) -> Spans:
    """Every span that has children dropped."""
    parents = {span.parent_span_id for span in spans if span.parent_span_id}
    return [span for span in spans if span.span_id not in parents]


def renamed_family(spans: Spans, prefixes: tuple[str, ...]) -> Spans:
    """One family's attribute keys renamed to keys no convention knows."""

    def fn(attrs: dict[str, Any]) -> dict[str, Any]:
        return {("zz_" + k if k.startswith(prefixes) else k): v for k, v in attrs.items()}

    return [_map_attrs(span, fn) for span in spans]


def perturbations(spans: Spans) -> Iterator[tuple[str, Spans]]:
    """(name, perturbed spans) for every perturbation of one run."""
    yield "unknown finish reasons", unknown_finish_reasons(spans)
    yield "no events", no_events(spans)
    yield "no content", no_content(spans)
    yield "no parent spans", without_parents(spans)
    yield "no tool call names", no_tool_call_names(spans)
    yield "no URLs", no_urls(spans)
    yield "no message roles", no_message_roles(spans)
    yield "no scope names", no_scope_names(spans)
    yield "no middle message", no_middle_message(spans)
    parents = sorted({span.parent_span_id for span in spans if span.parent_span_id})
    ids = {span.span_id for span in spans}
    for parent_id in parents:
        if parent_id in ids:
            yield f"span {parent_id} dropped", without_parent(spans, parent_id)
    for family, prefixes in FAMILIES.items():
        if any(k.startswith(prefixes) for span in spans for k in span.attributes):
            yield f"{family} keys renamed", renamed_family(spans, prefixes)
