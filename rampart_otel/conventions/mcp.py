"""Model Context Protocol semantic conventions.

``mcp.method.name=tools/call`` spans run a tool (``gen_ai.tool.name``,
``gen_ai.tool.call.arguments`` / ``.result``); a tool failing inside MCP reports
``error.type`` on an otherwise successful JSON-RPC response. Every other method an MCP
*client* sends (``resources/read``, ``prompts/get``, ``initialize`` …) is a request to
another system: a side effect. Server-side spans record the peer handling a request, not
something this agent did, so they are never side effects.
"""

from __future__ import annotations

from typing import Any

from rampart_otel.conventions import (
    MCP,
    Convention,
    SpanReport,
    ToolReport,
    as_str,
    parse_arguments,
    parse_result,
)
from rampart_otel.model import Span

METHOD = "mcp.method.name"
TOOLS_CALL = "tools/call"
TARGET_KEYS = ("gen_ai.tool.name", "gen_ai.prompt.name", "mcp.resource.uri")
SIDE_EFFECT_KIND = "mcp_request"


def method(span: Span) -> str | None:
    value = span.attributes.get(METHOD)
    return value if isinstance(value, str) else None


def read(span: Span) -> SpanReport | None:
    if METHOD not in span.attributes:
        return None
    effect = side_effect(span)
    return SpanReport(
        MCP,
        execution=tool_execution(span),
        effects=[(effect[0], effect[1], MCP)] if effect is not None else [],
    )


def is_tool_span(span: Span) -> bool:
    return method(span) == TOOLS_CALL


def tool_execution(span: Span) -> ToolReport | None:
    if not is_tool_span(span):
        return None
    attrs = span.attributes
    arguments_raw = attrs.get("gen_ai.tool.call.arguments")
    result_raw = attrs.get("gen_ai.tool.call.result")
    name = as_str(attrs.get("gen_ai.tool.name"))
    if not name:
        name = span.name[len(TOOLS_CALL) :].strip() if span.name.startswith(TOOLS_CALL) else ""
    return ToolReport(
        name=name or span.name,
        call_id=as_str(attrs.get("gen_ai.tool.call.id")) or None,
        arguments=parse_arguments(arguments_raw),
        arguments_captured=arguments_raw is not None,
        result=parse_result(result_raw),
        result_captured=result_raw is not None,
        executed=True,
        error=span.status_code == "ERROR" or "error.type" in attrs,
        span=span,
        convention=MCP,
    )


def side_effect(span: Span) -> tuple[str, dict[str, Any]] | None:
    """``mcp_request`` [method, target] for client methods other than ``tools/call``."""
    name = method(span)
    if name is None or name == TOOLS_CALL or span.kind == "SERVER":
        return None
    attrs = span.attributes
    target = next((as_str(attrs[key]) for key in TARGET_KEYS if key in attrs), None)
    return SIDE_EFFECT_KIND, {"method": name, "target": target}


CONVENTION = Convention(MCP, read)
