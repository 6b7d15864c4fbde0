"""Model Context Protocol: its semantic conventions (which the ``mcp`` 2.x SDK writes itself)
and OpenLLMetry's MCP instrumentation.

Semconv: ``mcp.method.name=tools/call`` spans run a tool (``gen_ai.tool.name``,
``gen_ai.tool.call.arguments`` / ``.result``). The SDK writes one on each side, the client's
``MCP send tools/call <name>`` and the server's ``tools/call <name>`` nested in it through the
request's ``_meta``: one call, merged by normalize as an enclosed execution; a tool failing
inside MCP shows only on the server span (``error.type``). Every other method an MCP
*client* sends (``resources/read``, ``prompts/get``, ``initialize`` …) is a request to another
system: a side effect. Server-side spans record the peer handling a request, and the requests
a server sends its client (sampling, elicitation, roots) are the peer asking: neither is
something this agent did.

OpenLLMetry's instrumentation (its own scope) puts the method in the span name instead. The
client's ``<tool>.tool`` span wraps ``tools/call`` (input ``{"tool_name", "arguments"}``,
output ``{"result": <first content block>}`` plus ``"is_error"``); ``<method>.mcp`` wraps any
other request (its JSON in ``traceloop.entity.input``), a side effect like the semconv one;
``ResponseStreamWriter`` wraps every message written to the stream, on both sides, so it is
transport. The server's spans hang under the client's writer span of the request, inside the
``.tool`` span, so its HTTP or SQL is attributed to that call. The server's writer span
holds the whole response (``mcp.response.value``): a tool result of several content blocks
there means the client's ``{"result": ...}`` is incomplete, which is said, not hidden.
"""

from __future__ import annotations

from typing import Any

from rampart_otel.conventions.envelopes import traceloop_mcp_result
from rampart_otel.conventions.helpers import as_str, load_json, parse_arguments, parse_result
from rampart_otel.conventions.interface import Convention, Gate, SpanReport, ToolReport
from rampart_otel.conventions.labels import MCP
from rampart_otel.model import Span, SpanKind
from rampart_otel.vocabulary import MCP_REQUEST

METHOD = "mcp.method.name"
TOOLS_CALL = "tools/call"
TARGET_KEYS = ("gen_ai.tool.name", "gen_ai.prompt.name", "mcp.resource.uri")
SIDE_EFFECT_KIND = MCP_REQUEST
CLIENT_SPAN_PREFIX = "MCP send "  # the mcp SDK's client spans: "MCP send tools/call <name>"
# Requests an MCP server sends its client: the peer asking, not the agent acting.
SERVER_REQUESTS = ("sampling/", "elicitation/", "roots/")

OPENLLMETRY_SCOPE = "opentelemetry.instrumentation.mcp"
REQUEST_ID = "mcp.request.id"
RESPONSE_VALUE = "mcp.response.value"
SPAN_KIND = "traceloop.span.kind"
ENTITY_NAME = "traceloop.entity.name"
ENTITY_INPUT = "traceloop.entity.input"
ENTITY_OUTPUT = "traceloop.entity.output"
REQUEST_SUFFIX = ".mcp"
TOOL_INPUT_KEYS = frozenset({"tool_name", "arguments"})
CALL_TOOL_RESULT_KEYS = frozenset({"content", "structuredContent", "isError", "meta", "_meta"})


def method(span: Span) -> str | None:
    value = span.attributes.get(METHOD)
    return value if isinstance(value, str) else None


def read(span: Span) -> SpanReport | None:
    if METHOD in span.attributes:
        effect = side_effect(span)
        return SpanReport(
            MCP,
            execution=tool_execution(span),
            effects=[(effect[0], effect[1], MCP, {})] if effect is not None else [],
        )
    if is_openllmetry_span(span):
        return read_openllmetry(span)
    return None


def is_tool_span(span: Span) -> bool:
    return method(span) == TOOLS_CALL


def tool_execution(span: Span) -> ToolReport | None:
    if not is_tool_span(span):
        return None
    attrs = span.attributes
    arguments_raw = attrs.get("gen_ai.tool.call.arguments")
    result_raw = attrs.get("gen_ai.tool.call.result")
    name = as_str(attrs.get("gen_ai.tool.name")) or _target_in_name(span, TOOLS_CALL)
    return ToolReport.execution(
        span,
        MCP,
        name or span.name,
        attrs.get("gen_ai.tool.call.id"),
        arguments=parse_arguments(arguments_raw),
        arguments_captured=arguments_raw is not None,
        result=parse_result(result_raw),
        result_captured=result_raw is not None,
        failed="error.type" in attrs,
    )


def side_effect(span: Span) -> tuple[str, dict[str, Any]] | None:
    """``mcp_request`` [method, target] for client methods other than ``tools/call``."""
    name = method(span)
    if name is None or name == TOOLS_CALL or span.kind == SpanKind.SERVER:
        return None
    if name.startswith(SERVER_REQUESTS):
        return None
    attrs = span.attributes
    target = next((as_str(attrs[key]) for key in TARGET_KEYS if key in attrs), None)
    return SIDE_EFFECT_KIND, {"method": name, "target": target or _target_in_name(span, name)}


def _target_in_name(span: Span, name: str) -> str | None:
    """``<method> <target>`` (semconv span name), with the SDK's ``MCP send `` prefix or not."""
    rest = span.name.removeprefix(CLIENT_SPAN_PREFIX)
    if rest.startswith(name + " "):
        return rest[len(name) + 1 :].strip() or None
    return None


# --- OpenLLMetry's MCP instrumentation ----------------------------------------------------


def is_openllmetry_span(span: Span) -> bool:
    """A span of OpenLLMetry's MCP instrumentation: its scope, or its writer-span keys."""
    scope = span.scope.name
    if scope == OPENLLMETRY_SCOPE or scope.startswith(OPENLLMETRY_SCOPE + "."):
        return True
    return REQUEST_ID in span.attributes or RESPONSE_VALUE in span.attributes


def read_openllmetry(span: Span) -> SpanReport:
    """``<tool>.tool`` runs a tool, ``<method>.mcp`` is a request; the rest is neutral
    (``ResponseStreamWriter`` transport, FastMCP's session and server wrapper spans)."""
    attrs = span.attributes
    kind = attrs.get(SPAN_KIND)
    if kind == "tool":
        return SpanReport(MCP, execution=openllmetry_tool_execution(span))
    if kind is None and span.name.endswith(REQUEST_SUFFIX):
        name = span.name[: -len(REQUEST_SUFFIX)]
        if name and name != TOOLS_CALL and not name.startswith(SERVER_REQUESTS):
            details = {"method": name, "target": _request_target(span)}
            return SpanReport(MCP, effects=[(SIDE_EFFECT_KIND, details, MCP, {})])
    if kind is None and RESPONSE_VALUE in attrs:
        blocks = _result_blocks(attrs[RESPONSE_VALUE])
        if blocks > 1:
            # The client's tool span keeps the first block only: its result is incomplete.
            note = (
                f"a tool result of {blocks} content blocks in {RESPONSE_VALUE}, of which "
                "OpenLLMetry's tool span keeps only the first"
            )
            return SpanReport(MCP, not_understood=[note])
    return SpanReport(MCP)


def openllmetry_tool_execution(span: Span) -> ToolReport:
    attrs = span.attributes
    arguments_raw = attrs.get(ENTITY_INPUT)
    result_raw = attrs.get(ENTITY_OUTPUT)
    result, tool_error = traceloop_mcp_result(result_raw)
    return ToolReport.execution(
        span,
        MCP,
        as_str(attrs.get(ENTITY_NAME)) or span.name.removesuffix(".tool"),
        None,  # MCP's tools/call carries no id of the model's
        arguments=_tool_input(arguments_raw),
        arguments_captured=arguments_raw is not None,
        result=result,
        result_captured=result_raw is not None,
        failed=tool_error or "error.type" in attrs,
    )


def _tool_input(raw: Any) -> dict[str, Any] | str | None:
    """``{"tool_name": ..., "arguments": {...}}`` → the arguments (none sent: ``{}``)."""
    value = load_json(raw)
    if isinstance(value, dict) and "tool_name" in value and set(value) <= TOOL_INPUT_KEYS:
        arguments = value.get("arguments")
        return parse_arguments(arguments) if arguments is not None else {}
    return parse_arguments(raw)


def _result_blocks(raw: Any) -> int:
    """How many content blocks a server's ``CallToolResult`` response holds (0: not one)."""
    if not isinstance(raw, str) or '"content"' not in raw:
        return 0
    value = load_json(raw)
    if not isinstance(value, dict) or not set(value) <= CALL_TOOL_RESULT_KEYS:
        return 0
    content = value.get("content")
    return len(content) if isinstance(content, list) else 0


def _request_target(span: Span) -> str | None:
    """The resource URI or the prompt's name in a request's params (content capture on)."""
    raw = span.attributes.get(ENTITY_INPUT)
    if not isinstance(raw, str) or ('"uri"' not in raw and '"name"' not in raw):
        return None
    request = load_json(raw)
    params = request.get("params") if isinstance(request, dict) else None
    if not isinstance(params, dict):
        return None
    return as_str(params.get("uri")) or as_str(params.get("name")) or None


CONVENTION = Convention(
    MCP,
    read,
    content_keys=(RESPONSE_VALUE,),
    read_gate=Gate(keys=(METHOD, REQUEST_ID, RESPONSE_VALUE), scopes=(OPENLLMETRY_SCOPE,)),
)


def runs_elsewhere(span: Span) -> bool:
    """A client's tool call: the tool runs in the MCP server's process, not in this one.

    The semconv client span (not the server's, kind SERVER) or OpenLLMetry's client
    ``<tool>.tool`` span; what the tool does shows only in the server's own spans.
    """
    if is_tool_span(span):
        return span.kind != SpanKind.SERVER
    return is_openllmetry_span(span) and span.attributes.get(SPAN_KIND) == "tool"
