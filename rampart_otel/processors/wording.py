"""The words of coverage reasons and findings: spans, calls and side effects named safely.

Every reason names what it is about (a span by name and id, a call by name and id) through
these helpers, with trace text passed through ``safe_text`` and lists cut after ``NAMED``.
"""

from __future__ import annotations

from rampart_otel.channels import SIDE_EFFECT_PREFIX
from rampart_otel.conventions import ModelOutput, finish_reasons, redaction_hint
from rampart_otel.conventions.finish_reasons import ToolRequest
from rampart_otel.conventions.fix_hints import (
    ClientInstrumentation,
    clients_in_use,
    clients_of,
    content_settings,
)
from rampart_otel.conventions.registry import unread_content
from rampart_otel.model import (
    MCP_SERVER,
    ScopeEvidence,
    ScopeState,
    SideEffect,
    Span,
    StatusCode,
    StitchReason,
    ToolCall,
    ToolScope,
)
from rampart_otel.render import safe_text

NAMED = 3  # spans named in one reason before "and N more"
# Why content is missing, when no span holds any in a form we do not read.
NOT_RECORDED = (
    "not recorded in the trace: content capture off, or not recorded by this instrumentation"
)
REDACTED = "content was redacted by the instrumentation"
# Words of the keys that hold what a reason is about, so it names the redaction it means.
ANSWER_KEYS = ("output", "choice", "completion", "response")
ARGUMENT_KEYS = ("argument", "input", "args", "tool.message")
RESULT_KEYS = ("result", "output", "choice", "response")
INPUT_KEYS = ("input", "prompt", "user", "context")


def why_missing(spans: list[Span], prefer: tuple[str, ...] = ()) -> str:
    """Why content is missing: redacted by the instrumentation (named, keys with ``prefer``
    words first), present in a form not understood (named), else not recorded."""
    for words in (prefer, ()) if prefer else ((),):
        for span in spans:
            marker = redaction_hint(span, words)
            if marker is not None and (not words or any(w in marker for w in words)):
                return f"{REDACTED}: {marker} on {span_label(span)}"
    for span in spans:
        if span.cut_keys:
            return f"{cut_by_zipkin(span.cut_keys)} on {span_label(span)}"
    for span in spans:
        hint = unread_content(span)
        if hint is not None:
            return (
                f"content is present in {hint} on {span_label(span)} but in a form not understood"
            )
    return NOT_RECORDED  # the setting that records it is the channel's fix hint


def finish_reasons_in_words(output: ModelOutput) -> str:
    """What an unread output's finish reasons say, in words: asked, or could not tell."""
    if not output.finish_reasons:
        return "recorded no finish reason"
    reasons = ", ".join(repr(safe_text(r, 40)) for r in output.finish_reasons[:3])
    kind = output.tool_request
    if kind is ToolRequest.TOOLS:
        return f"asked for tools (finish reason {reasons})"
    if not all(finish_reasons.known(r) for r in output.finish_reasons):
        return f"finished with {reasons}, a finish reason not understood"
    return f"finished with {reasons}, which does not say whether it asked for tools"


def error_ending(agent_spans: list[Span]) -> str:
    """How the run ended, when an agent span says it failed."""
    for span in agent_spans:
        if span.status_code == StatusCode.ERROR:
            message = f" {safe_text(span.status_message, 80)!r}" if span.status_message else ""
            return (
                f"; the run ended with an error: agent span {span_label(span)} has status "
                f"ERROR{message}"
            )
    return ""


def span_label(span: Span) -> str:
    return f"{safe_text(span.name, 60)!r} (span {span.span_id})"


def span_names(spans: list[Span]) -> str:
    named = ", ".join(span_label(span) for span in spans[:NAMED])
    return named + (f" and {len(spans) - NAMED} more" if len(spans) > NAMED else "")


def call_names(calls: list[ToolCall]) -> str:
    named = ", ".join(
        safe_text(call.name, 40) + (f" ({safe_text(call.call_id, 40)})" if call.call_id else "")
        for call in calls[:NAMED]
    )
    return named + (f" and {len(calls) - NAMED} more" if len(calls) > NAMED else "")


def effect_label(effect: SideEffect) -> str:
    values = [value for value in effect.details.values() if isinstance(value, (str, int))]
    summary = " ".join(safe_text(value, 80) for value in values[:2]) or "no details"
    return f"{summary} (span {effect.span_id})"


def counted(items: list, noun: str) -> str:
    return f"{len(items)} {noun}" + ("" if len(items) == 1 else "s")


def scope_gaps(kind: str, scopes: list[ToolScope]) -> str:
    """Why ``side_effects.<kind>`` is unproven: the tool calls whose scope was not watched,
    each with the way to close the gap."""
    silent = [s for s in scopes if s.state is ScopeState.SILENT]
    remote = [s for s in scopes if s.state is ScopeState.OUT_OF_PROCESS]
    server = [s for s in remote if s.remote == MCP_SERVER]
    child = [s for s in remote if s.remote != MCP_SERVER]
    parts: list[str] = []
    if silent:
        one = len(silent) == 1
        parts.append(
            f"{_scope_calls(silent)} recorded no I/O span and "
            + ("declares" if one else "declare")
            + f" nothing, so a {kind} call "
            + ("it" if one else "they")
            + " made would not show: instrument the client "
            + ("it uses" if one else "they use")
            + ", or declare "
            + ("the tool" if one else "the tools")
            + " (tools: in the policy, or rampart_otel.declare in the agent)"
        )
    if server:
        parts.append(
            f"{_scope_calls(server)} ran on an MCP server whose spans are not in the trace: "
            "propagate the trace context to the server (MCP _meta traceparent) and export its "
            "spans to the same place, or declare the tools"
        )
    if child:
        parts.append(
            f"{_scope_calls(child)} started a child process whose own spans are not in the "
            f"trace, so a {kind} call the child made would not show"
        )
    return "; ".join(parts)


def _scope_calls(scopes: list[ToolScope]) -> str:
    named = ", ".join(
        f"{safe_text(scope.tool, 40)!r}"
        + (f" (span {scope.span_id})" if scope.span_id else " (no execution span)")
        for scope in scopes[:NAMED]
    )
    more = f" and {len(scopes) - NAMED} more" if len(scopes) > NAMED else ""
    noun = "tool call" if len(scopes) == 1 else "tool calls"
    return f"{noun} {named}{more}"


_EVIDENCE_WORDS = {
    ScopeEvidence.SUBTREE: "under its execution span",
    ScopeEvidence.TIME_WINDOW: "in its time window (context lost: a fragment of the same service)",
    ScopeEvidence.POLICY: "by the policy's tools:",
    ScopeEvidence.SPAN: "on its span (rampart_otel.declare)",
    ScopeEvidence.PSEUDO_TOOL: "as the framework's built-in pseudo-tool",
}


def scope_in_words(scope: ToolScope) -> str:
    """One tool call's scope, for ``inspect``: what it shows of the call's side effects."""
    if scope.state is ScopeState.RECORDED:
        where = _EVIDENCE_WORDS.get(scope.evidence or ScopeEvidence.SUBTREE, "")
        return f"I/O recorded: {counted(list(scope.io_span_ids), 'span')} {where}"
    if scope.state is ScopeState.DECLARED:
        return "declared " + _EVIDENCE_WORDS.get(scope.evidence or ScopeEvidence.POLICY, "")
    if scope.state is ScopeState.OUT_OF_PROCESS:
        if scope.remote == MCP_SERVER:
            return "out of process: ran on an MCP server whose spans are not in the trace"
        return "out of process: started a child process whose own spans are not in the trace"
    declared = (
        f" (its process declares {', '.join(scope.exempt_kinds)})" if scope.exempt_kinds else ""
    )
    return f"silent: no I/O span in its scope and nothing declared{declared}"


def stitch_in_words(how: StitchReason, via: str) -> str:
    """How a trace was joined to a run, for ``inspect``."""
    if how is StitchReason.CONTINUATION:
        return f"continuation: its model input history extends the run's calls ({via})"
    return "fragment inside the run's time window, same process (its trace context was lost)"


def unseen_calls(kind: str) -> str:
    """Why a kind seen is not proven absent elsewhere when the calls cannot be read."""
    return (
        "the run records no tool execution span and not every model output was read, so "
        f"tool calls the trace cannot show may have run where no {kind} span was recorded"
    )


def declared_scopes(scopes: list[ToolScope]) -> str:
    """The tool calls whose silence a declaration explains, and who declared them."""
    by_source: dict[str, list[ToolScope]] = {}
    for scope in scopes:
        where = _EVIDENCE_WORDS.get(scope.evidence or ScopeEvidence.POLICY, "")
        by_source.setdefault(where, []).append(scope)
    return "; ".join(
        f"{_scope_calls(found)} declared {where}" for where, found in by_source.items()
    )


def scope_lost(form: str, family: str) -> str:
    """A span whose trace form dropped its instrumentation scope, where the scope decides
    how the span is read (kept short: findings show 80 characters of a note)."""
    return f"no scope in the {form}; it reads otherwise as {family}"


def cut_by_zipkin(keys: tuple[str, ...]) -> str:
    """Attributes a Zipkin exporter may have cut short at its tag limit."""
    shown = ", ".join(safe_text(k, 40) for k in keys[:2]) + (" ..." if len(keys) > 2 else "")
    return f"Zipkin tags cut at a length limit? {shown}"


# --- how to close a gap ----------------------------------------------------------------------

FIX = "to close it: "  # the reason that carries a channel's hint starts so
CONTENT_CHANNELS = ("input", "response", "tool_calls.arguments", "tool_calls.results")
ANY_CONTENT_SETTING = (
    "turn on message content capture in the instrumentation that recorded the model spans "
    "(docs/coverage.md lists each one's setting)"
)
TOOL_SPANS = (
    "wrap each tool execution in a span (OpenInference's @tracer.tool, or the SDK's "
    "tracer.start_as_current_span(name)) inside an agent span around the loop"
)
DECLARE = "or declare the tools (tools: in the policy, or rampart_otel.declare in the agent)"
REMOTE_FIX = (
    "propagate the trace context to the MCP server or child process that ran the tool (MCP "
    "_meta traceparent, the TRACEPARENT environment variable) and export its spans to the "
    f"same place, {DECLARE}"
)
TRACE_FIX = (
    "export the whole run: keep the trace context across threads and tasks (the framework's "
    "instrumentation, or contextvars copied into the worker), flush the TracerProvider "
    "before the process exits so no span is dropped, and raise the SDK's limits where it "
    "dropped attributes or events (OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT, "
    "OTEL_SPAN_EVENT_COUNT_LIMIT, OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT)"
)

IDS_FIX = (
    "have the exporter write valid ids: OTLP needs a 16-byte trace id and an 8-byte span id, "
    "neither all zero, and a parent span id that is empty or 8 bytes (all zeros come from a "
    "no-op or unconfigured tracer, or from a span built by hand)"
)

UNREAD_FIX = (
    "the trace records it in a form this version does not read (the reason names where): "
    "upgrade rampart-otel, or have the instrumentation write the standard attributes "
    "(gen_ai.input.messages and gen_ai.output.messages as JSON arrays of messages)"
)


def fix_hint(key: str, scope_names: set[str], cause: str = "client") -> str | None:
    """How to close the gap of channel ``key``, from the instrumentations whose scope
    names are in the run; None for a channel no instrumentation records. ``cause`` of a
    side-effect gap: ``client`` (a call could go unrecorded), ``remote`` (a tool ran out of
    process); of any gap: ``trace`` (the trace itself is incomplete: a finding capped it),
    ``unread`` (the trace holds what is needed in a form not understood), ``ids`` (spans
    were refused for breaking the OTLP id rule)."""
    if cause == "trace":
        return TRACE_FIX
    if cause == "ids":
        return IDS_FIX
    if cause == "unread":
        return UNREAD_FIX
    if key.startswith(SIDE_EFFECT_PREFIX):
        if cause == "remote":
            return REMOTE_FIX
        return _client_hint(key[len(SIDE_EFFECT_PREFIX) :], scope_names)
    if key in CONTENT_CHANNELS:
        return _content_hint(scope_names)
    if key == "tool_calls":
        return f"{TOOL_SPANS}; and {_content_hint(scope_names)}"
    return None


def _content_hint(scope_names: set[str]) -> str:
    settings = content_settings(scope_names)
    if not settings:
        return ANY_CONTENT_SETTING
    return "turn content capture on: " + "; ".join(
        f"{row.instrumentation}: {row.setting}" for row in settings
    )


def _client_hint(kind: str, scope_names: set[str]) -> str:
    clients = clients_of(kind)
    if not clients:
        return f"instrument the client that makes {safe_text(kind, 40)} calls, {DECLARE}"
    used = clients_in_use(kind, scope_names)
    if used:
        seen = ", ".join(client.scope for client in used)
        others = [client for client in clients if client not in used]
        names = ", ".join(client.package for client in others[:4]) or "its package"
        return (
            f"the {kind} spans in the trace come from {seen}, so the call that did not show "
            f"went through another client: instrument it too ({names}), {DECLARE}"
        )
    return f"{_install(clients[0], clients[1:4])}, {DECLARE}"


def _install(first: ClientInstrumentation, others: list[ClientInstrumentation]) -> str:
    if not first.scope:  # no instrumentation package: the agent's own spans
        return f"record {first.call}"
    more = ", ".join(_short(first.package, other.package) for other in others)
    alternatives = f" (or {more})" if more else ""
    return f"install {first.package}{alternatives} and call {first.call}"


def _short(first: str, other: str) -> str:
    """``other`` as its suffix when both are OpenTelemetry contrib packages: -requests for
    opentelemetry-instrumentation-requests after opentelemetry-instrumentation-httpx."""
    prefix = "opentelemetry-instrumentation-"
    both = first.startswith(prefix) and other.startswith(prefix)
    return "-" + other[len(prefix) :] if both else other
