"""The words of coverage reasons and findings: spans, calls and side effects named safely.

The processors decide with codes and typed payloads (``reasons``: a ``Decision`` of
``Why``s, each with a ``channels.ReasonCode``) and findings with typed details
(``model.IntegrityFinding.detail``); ``worded_coverage`` and ``worded_findings`` here render
them, the only place a coverage reason's English is written (``MEANINGS``: what each code
means, for the docs). No processor imports this module (an import-linter contract).
Every reason names what it is about (a span by name and id, a call by name and id) through
these helpers, with trace text passed through ``safe_text`` and lists cut after ``NAMED``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from functools import lru_cache
from typing import Any, NamedTuple, TypeVar

from rampart_otel.channels import (
    DECLARATION_KEY,
    SIDE_EFFECT_PREFIX,
    ChannelCoverage,
    Coverage,
    Reason,
    ReasonCode,
    observability_level,
)
from rampart_otel.conventions import ModelOutput, finish_reasons
from rampart_otel.conventions.finish_reasons import ToolRequest
from rampart_otel.conventions.fix_hints import (
    ClientInstrumentation,
    clients_in_use,
    clients_of,
    content_settings,
)
from rampart_otel.conventions.notes import ANSWER_KEYS, cut_by_zipkin, missing_content
from rampart_otel.model import (
    HTTP_KIND,
    MCP_SERVER,
    NESTED_AGENT,
    REMOTE_AGENT,
    UNKNOWN_DESTINATION,
    ConflictingCopies,
    FindingKind,
    HistoryCalls,
    IntegrityFinding,
    LostRoot,
    NotUnderstoodSpans,
    PlaceState,
    RefusedSpans,
    ScopeEvidence,
    ScopeState,
    SideEffect,
    Span,
    SpansOf,
    SplitRun,
    StatusCode,
    StitchReason,
    ToolCall,
    ToolScope,
    UndecodableSpans,
)
from rampart_otel.places import place
from rampart_otel.reasons import (
    AnswerTools,
    AnswerUnread,
    AskedTools,
    Captured,
    Decision,
    Finding,
    FinishReasons,
    Fix,
    Kind,
    KindEffects,
    ModelCount,
    NoData,
    Notes,
    Output,
    OutputsRead,
    ScopeGaps,
    Scopes,
    Service,
    Texts,
    Why,
    Withheld,
)
from rampart_otel.render import safe_text
from rampart_otel.scoring_plan import CONTENT_CHANNELS
from rampart_otel.watch_contract import SCOPE as WATCH_SCOPE

NAMED = 3  # spans named in one reason before "and N more"
# Why content is missing, when no span holds any in a form we do not read.
NOT_RECORDED = (
    "not recorded in the trace: content capture off, or not recorded by this instrumentation"
)
REDACTED = "content was redacted by the instrumentation"
# Words of the keys that hold what a reason is about, so it names the redaction it means
# (the answer's: ``notes.ANSWER_KEYS``).
ARGUMENT_KEYS = ("argument", "input", "args", "tool.message")
RESULT_KEYS = ("result", "output", "choice", "response")
INPUT_KEYS = ("input", "prompt", "user", "context")


def why_missing(spans: list[Span], prefer: tuple[str, ...] = ()) -> str:
    """Why content is missing: redacted by the instrumentation (named, keys with ``prefer``
    words first), present in a form not understood (named), else not recorded."""
    found = missing_content(spans, prefer)
    if found is None:
        return NOT_RECORDED  # the setting that records it is the channel's fix hint
    how, span, detail = found
    if how == "redacted":
        return f"{REDACTED}: {detail} on {span_label(span)}"
    if how == "cut":
        return f"{cut_by_zipkin(detail)} on {span_label(span)}"
    return f"content is present in {detail} on {span_label(span)} but in a form not understood"


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


def scope_gaps(kind: str, scopes: Sequence[ToolScope]) -> str:
    """Why ``side_effects.<kind>`` is unproven: the tool calls whose place for the kind was
    not watched, each with the way to close the gap."""
    around = _around_kind(scopes, kind)
    if around is not None:
        return kind.join(around)
    return _scope_gaps(kind, scopes)


# Where ``_around_kind`` has ``_scope_gaps`` write the kind, to cut its words there: a text
# no reason holds (``safe_text`` drops controls; span ids are checked).
_KIND_SLOT = "\x00kind\x00"
# Scopes (the tuple a run's kinds share, ``places._Gaps``) → (the scopes, the kinds their
# places tell apart, their words cut where the kind goes): by identity, each entry holding
# its scopes so that no other tuple can take their id while it is kept.
_AROUND: dict[int, tuple[Sequence[ToolScope], frozenset[str], list[str] | None]] = {}
_AROUND_KEPT = 256


def _around_kind(scopes: Sequence[ToolScope], kind: str) -> list[str] | None:
    """``_scope_gaps(kind, scopes)`` cut where the kind goes, when its words depend on the
    kind only there: no scope recorded, attested or is exempt for ``kind`` (nor was handed
    a destination, for HTTP), so each place is what it is for any such kind. A run's
    unproven kinds share their scopes (``places._Gaps``): worded once for all of them."""
    if type(scopes) is not tuple:
        return None
    found = _AROUND.get(id(scopes))
    if found is None or found[0] is not scopes:
        marked = {k for s in scopes for k in (*s.kinds, *s.attested, *s.exempt_kinds)}
        if any(s.unmet for s in scopes):
            marked.add(HTTP_KIND)
        around = None
        if not any(_KIND_SLOT in (s.span_id or "") for s in scopes):
            around = _scope_gaps(_KIND_SLOT, scopes).split(_KIND_SLOT)
        if len(_AROUND) >= _AROUND_KEPT:
            _AROUND.clear()
        found = _AROUND[id(scopes)] = (scopes, frozenset(marked), around)
    return None if kind in found[1] else found[2]


def _scope_gaps(kind: str, scopes: Sequence[ToolScope]) -> str:
    # One pass, each place read once (a run's scope gaps are worded for every kind).
    silent: list[ToolScope] = []
    other_kinds: list[ToolScope] = []
    unmet: list[ToolScope] = []  # a destination handed to a call is a claim of HTTP only
    server: list[ToolScope] = []
    agent: list[ToolScope] = []
    nested: list[ToolScope] = []
    child: list[ToolScope] = []
    http = kind == HTTP_KIND
    for s in scopes:
        state = place(s, kind)
        if state is PlaceState.SILENT:
            (other_kinds if s.kinds else silent).append(s)
        elif state is PlaceState.OUT_OF_PROCESS:
            remote = s.remote
            if remote == MCP_SERVER:
                server.append(s)
            elif remote == REMOTE_AGENT:
                agent.append(s)
            elif remote == NESTED_AGENT:
                nested.append(s)
            else:
                child.append(s)
        if http and s.unmet and state in (PlaceState.UNMET, PlaceState.SILENT):
            unmet.append(s)
    parts: list[str] = []
    if silent:
        one = len(silent) == 1
        what = (
            "no I/O span of an instrumented client (a connection or file write shows no other kind)"
            if any(scope.io_span_ids for scope in silent)
            else "no I/O span"
        )
        parts.append(
            f"{_scope_calls(silent)} recorded {what} and "
            + ("declares" if one else "declare")
            + f" nothing, so a {kind} call "
            + ("it" if one else "they")
            + " made would not show: instrument the client "
            + ("it uses" if one else "they use")
            + ", or declare "
            + ("the tool" if one else "the tools")
            + " (tools: in the policy, or rampart_otel.declare in the agent)"
        )
    if other_kinds:
        one = len(other_kinds) == 1
        seen = sorted({k for s in other_kinds for k in s.kinds})
        parts.append(
            f"{_scope_calls(other_kinds)} recorded {', '.join(seen)} but no {kind} span: "
            f"evidence of one kind says nothing of another, so a {kind} call "
            + ("it" if one else "they")
            + " made through a client that is not instrumented would not show"
        )
    known = [s for s in unmet if any(d != UNKNOWN_DESTINATION for d in s.unmet)]
    unknown = [s for s in unmet if UNKNOWN_DESTINATION in s.unmet]
    if known:
        claims = [(s, d) for s in known for d in s.unmet if d != UNKNOWN_DESTINATION][:NAMED]
        named = "; ".join(
            f"{safe_text(s.tool, 40)!r} was handed {safe_text(d.host, 80)!r} "
            f"(argument {safe_text(d.argument, 40)!r})"
            for s, d in claims
        )
        parts.append(
            f"{named}, and no request recorded under the call went there: it may have gone "
            "through a client that is not instrumented"
        )
    if unknown:
        parts.append(
            f"{_scope_calls(unknown)} recorded {kind} spans but not its arguments, so whether "
            "it was handed a destination its recorded requests did not reach cannot be checked"
        )
    if server:
        parts.append(
            f"{_scope_calls(server)} ran on an MCP server whose spans are not in the trace: "
            "propagate the trace context to the server (MCP _meta traceparent) and export its "
            "spans to the same place, or declare the tools"
        )
    if agent:
        parts.append(
            f"{_scope_calls(agent)} handed the task to a remote agent "
            f"({_remote_targets(agent)}) whose spans "
            f"are not in the trace, so a {kind} call that agent made would not show: "
            "propagate the trace context to it (the A2A server's ASGI instrumentation does) "
            "and export its spans to the same place"
        )
    if nested:
        parts.append(
            f"{_scope_calls(nested)} ran another agent as the tool, and that agent's run "
            f"is not in the trace, so a {kind} call that agent made would not show"
        )
    if child:
        parts.append(
            f"{_scope_calls(child)} started a child process whose own spans are not in the "
            f"trace, so a {kind} call the child made would not show"
        )
    return "; ".join(parts)


def _remote_targets(scopes: list[ToolScope]) -> str:
    return ", ".join(
        repr(safe_text(s.remote_target or "an unnamed agent", 80)) for s in scopes[:NAMED]
    )


def _scope_calls(scopes: list[ToolScope]) -> str:
    named = ", ".join([_scope_call(scope.tool, scope.span_id) for scope in scopes[:NAMED]])
    more = f" and {len(scopes) - NAMED} more" if len(scopes) > NAMED else ""
    noun = "tool call" if len(scopes) == 1 else "tool calls"
    return f"{noun} {named}{more}"


def _scope_call(tool: str, span_id: str | None) -> str:
    """One tool call named (a run's calls are named once for each kind they leave unproven)."""
    where = f" (span {span_id})" if span_id else " (no execution span)"
    return _tool_name(tool) + where


@lru_cache(maxsize=1024)
def _tool_name(tool: str) -> str:
    """A tool's name as the reasons quote it (an agent's runs name the same few tools)."""
    return repr(safe_text(tool, 40))


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
        kinds = f" ({', '.join(scope.kinds)})" if scope.kinds else ""
        text = f"I/O recorded: {counted(list(scope.io_span_ids), 'span')}{kinds} {where}"
        hosts = ", ".join(
            repr(safe_text(d.host, 60)) for d in scope.unmet[:NAMED] if d != UNKNOWN_DESTINATION
        )
        if hosts:
            text += f"; handed {hosts} in its arguments, which no request of it reached"
        if UNKNOWN_DESTINATION in scope.unmet:
            text += "; its arguments were not captured: the destinations it was handed are unknown"
        return text
    if scope.state is ScopeState.DECLARED:
        return "declared " + _EVIDENCE_WORDS.get(scope.evidence or ScopeEvidence.POLICY, "")
    if scope.state is ScopeState.DELEGATED:
        return "delegated: the framework ran another agent as this tool; its calls are listed"
    if scope.state is ScopeState.OUT_OF_PROCESS:
        if scope.remote == MCP_SERVER:
            return "out of process: ran on an MCP server whose spans are not in the trace"
        if scope.remote == REMOTE_AGENT:
            target = safe_text(scope.remote_target or "an unnamed agent", 80)
            return (
                f"out of process: handed to the remote agent {target!r}, whose spans are not "
                "in the trace"
            )
        if scope.remote == NESTED_AGENT:
            return (
                "out of process: the framework ran another agent as this tool, and that "
                "agent's run is not in the trace"
            )
        return "out of process: started a child process whose own spans are not in the trace"
    declared = (
        f" (its process declares {', '.join(scope.exempt_kinds)})" if scope.exempt_kinds else ""
    )
    if scope.io_span_ids:  # the watcher's connections or file writes: no other kind shows
        return (
            f"silent: only {counted(list(scope.io_span_ids), 'connection or file-write span')}"
            f" in its scope (no other kind shows there) and nothing declared{declared}"
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


def asked_unrun(kind: str, turns: list[Span]) -> str:
    """Why a kind seen is not proven absent elsewhere when a model turn asked for tools that
    no execution span shows."""
    return (
        f"model span {span_names(turns)} asked for tools (or may have, and the model was "
        f"called again after it) and no tool execution span follows it, so a tool the trace "
        f"does not show (traced in another "
        f"trace or service, or not at all) may have run where no {kind} span was recorded"
    )


def no_calls_recorded(kind: str) -> str:
    """Why a kind seen is not proven absent when neither a tool nor a model call is recorded."""
    return (
        "the run records no tool execution span and no model call, so which tools ran is "
        f"unknown: tool calls the trace cannot show may have run where no {kind} span was "
        "recorded"
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


# --- how to close a gap ----------------------------------------------------------------------

FIX = "to close it: "  # the reason that carries a channel's hint starts so
ANY_CONTENT_SETTING = (
    "turn on message content capture in the instrumentation that recorded the model spans "
    "(docs/coverage.md lists each one's setting)"
)
TOOL_SPANS = (
    "wrap each tool execution in a span (OpenInference's @tracer.tool, or the SDK's "
    "tracer.start_as_current_span(name)) inside an agent span around the loop"
)
MODEL_SPANS = (
    "record each model call as a span with its input messages: instrument the model client "
    "the agent calls (the SDK's or framework's model-call instrumentation), not only the "
    "agent's entry point"
)
DECLARE = "or declare the tools (tools: in the policy, or rampart_otel.declare in the agent)"
REMOTE_FIX = (
    "propagate the trace context to the MCP server or child process that ran the tool (MCP "
    "_meta traceparent, the TRACEPARENT environment variable) and export its spans to the "
    f"same place, {DECLARE}"
)
REMOTE_AGENT_FIX = (
    "propagate the trace context to the remote agent the tool handed its task to (the A2A "
    "server's ASGI instrumentation does: OpenTelemetry's ASGI or Starlette instrumentation "
    "on the agent's server) and export its spans to the same place, so its own tool calls "
    "and side effects are in the run"
)
NESTED_AGENT_FIX = (
    "trace the agent the tool runs in the same process and trace as its caller (keep the "
    "trace context when the framework runs it: the same TracerProvider, no new root span), "
    "or propagate the context to it where it runs elsewhere, so its own tool calls and side "
    "effects are in the run"
)
TRACE_FIX = (
    "export the whole run: keep the trace context across threads and tasks (the framework's "
    "instrumentation, or contextvars copied into the worker), flush the TracerProvider "
    "before the process exits so no span is dropped, and raise the SDK's limits where it "
    "dropped attributes or events (OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT, "
    "OTEL_SPAN_EVENT_COUNT_LIMIT, OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT)"
)

REPEATED_FIX = (
    "have the instrumentation (or whatever rewrites the spans on their way: a processor, a "
    "proxy) write each attribute key once per span or event, as OTLP requires"
)

IDS_FIX = (
    "have the exporter write valid ids: OTLP needs a 16-byte trace id and an 8-byte span id, "
    "neither all zero, and a parent span id that is empty or 8 bytes (all zeros come from a "
    "no-op or unconfigured tracer, or from a span built by hand)"
)

UNDECODABLE_FIX = (
    "find what wrote the span the decoder could not read (the reason names why; the input "
    "errors of score, or the collector's partial-success answer and log, name the record): "
    "OTLP protobuf needs valid UTF-8 in every string, values nested less than 100 deep, and "
    "no field cut short, a JSON Lines line must be whole JSON; an exporter, proxy or copy "
    "that alters or truncates the data breaks it"
)

CONFLICT_FIX = (
    "find out who sent the other copy (the reason names both senders): a span's ids travel "
    "in the traceparent header of every request it makes, so any party that request reaches "
    "can send a copy; give each client of a shared collector its own tenant (docs/security.md)"
)

UNREAD_FIX = (
    "the trace records it in a form this version does not read (the reason names where): "
    "upgrade rampart-otel, or have the instrumentation write the standard attributes "
    "(gen_ai.input.messages and gen_ai.output.messages as JSON arrays of messages)"
)


def fix_hint(key: str, scope_names: AbstractSet[str], cause: str = "client") -> str | None:
    """How to close the gap of channel ``key``, from the instrumentations whose scope
    names are in the run; None for a channel no instrumentation records. ``cause`` of a
    side-effect gap: ``client`` (a call could go unrecorded), ``calls`` (which tools ran is
    not recorded), ``remote`` (a tool ran out of process); of an input gap: ``models`` (no
    model call was recorded as a span; ``models+content``: nor the agent's input content);
    of any gap: ``trace`` (the trace
    itself is incomplete: a finding capped it), ``unread`` (the trace holds what is needed
    in a form not understood), ``ids`` (spans were refused for breaking the OTLP id rule),
    ``undecodable`` (spans could not be decoded), ``repeated`` (spans recorded a key twice),
    ``conflict`` (a span was sent twice, the copies disagreeing).
    Computed once per distinct (key, scope names, cause): runs of one agent share them."""
    return _fix_hint(key, frozenset(scope_names), cause)


@lru_cache(maxsize=1024)
def _fix_hint(key: str, scope_names: frozenset[str], cause: str) -> str | None:
    if cause == "trace":
        return TRACE_FIX
    if cause == "remote_agent":
        return REMOTE_AGENT_FIX
    if cause == "nested_agent":
        return NESTED_AGENT_FIX
    if cause == "ids":
        return IDS_FIX
    if cause == "repeated":
        return REPEATED_FIX
    if cause == "conflict":
        return CONFLICT_FIX
    if cause == "undecodable":
        return UNDECODABLE_FIX
    if cause == "unread":
        return UNREAD_FIX
    if cause == "models":
        return MODEL_SPANS
    if cause == "models+content":
        if not content_settings(scope_names):
            return f"{MODEL_SPANS}, with message content capture on"
        return f"{MODEL_SPANS}; and {_content_hint(scope_names)}"
    if cause == "calls" or key == "tool_calls":  # record which tools ran
        return f"{TOOL_SPANS}; and {_content_hint(scope_names)}"
    if key.startswith(SIDE_EFFECT_PREFIX):
        if cause == "remote":
            return REMOTE_FIX
        return _client_hint(key[len(SIDE_EFFECT_PREFIX) :], scope_names)
    if key in CONTENT_CHANNELS:
        return _content_hint(scope_names)
    return None


def _content_hint(scope_names: frozenset[str]) -> str:
    settings = content_settings(scope_names)
    if not settings:
        return ANY_CONTENT_SETTING
    return "turn content capture on: " + "; ".join(
        f"{row.instrumentation}: {row.setting}" for row in settings
    )


def _client_hint(kind: str, scope_names: frozenset[str]) -> str:
    clients = clients_of(kind)
    if not clients:
        return f"instrument the client that makes {safe_text(kind, 40)} calls, {DECLARE}"
    used = clients_in_use(kind, scope_names)
    if used and all(client.scope == WATCH_SCOPE for client in used):
        return (
            "the watcher is on (rampart_otel.watch): the call went where it cannot see "
            "(rampart.watch.blind on its spans, docs/watch.md: a child process's own I/O, a "
            f"native library, a connection opened earlier); trace that place too, {DECLARE}"
        )
    used = [client for client in used if client.scope != WATCH_SCOPE]
    if used:
        seen = ", ".join(client.scope for client in used)
        others = [client for client in clients if client not in used]
        names = ", ".join(client.package for client in others[:4]) or "its package"
        # What the instrumentation in use leaves out comes first: the likelier cause.
        caveats = "".join(f"{client.caveat}; or " for client in used if client.caveat)
        joint = f": {caveats}" if caveats else ", so "
        return (
            f"the {kind} spans in the trace come from {seen}{joint}the call that did not "
            f"show went through another client: instrument it too ({names}), {DECLARE}"
        )
    first = clients[0]
    caveat = f" ({first.caveat})" if first.caveat else ""
    return f"{_install(first, clients[1:4])}{caveat}, {DECLARE}"


def _install(first: ClientInstrumentation, others: list[ClientInstrumentation]) -> str:
    if not first.scope:  # no instrumentation package: the agent's own spans
        return f"record {first.call}"
    if first.scope == WATCH_SCOPE:  # rampart-otel's own watcher: nothing to install
        return f"turn the watcher on: {first.call}"
    more = ", ".join(_short(first.package, other.package) for other in others)
    alternatives = f" (or {more})" if more else ""
    return f"install {first.package}{alternatives} and call {first.call}"


def _short(first: str, other: str) -> str:
    """``other`` as its suffix when both are OpenTelemetry contrib packages: -requests for
    opentelemetry-instrumentation-requests after opentelemetry-instrumentation-httpx."""
    prefix = "opentelemetry-instrumentation-"
    both = first.startswith(prefix) and other.startswith(prefix)
    return "-" + other[len(prefix) :] if both else other


# --- integrity findings (the reason of each channel one caps: ``finding.<kind>``) -----------


def finding_message(finding: IntegrityFinding) -> str:
    """A finding in words, from its detail (a finding read back from a store keeps the
    words it was stored with)."""
    detail = finding.detail
    if isinstance(detail, SplitRun):
        return split_run(detail.trace_id, list(detail.tops), list(detail.missing))
    if isinstance(detail, LostRoot):
        return lost_root(detail.top)
    if isinstance(detail, RefusedSpans):
        return refused_spans(list(detail.spans), list(detail.rules))
    if isinstance(detail, UndecodableSpans):
        return undecodable_spans(list(detail.spans), list(detail.whys))
    if isinstance(detail, NotUnderstoodSpans):
        return not_understood([(span, list(notes)) for span, notes in detail.found])
    if isinstance(detail, HistoryCalls):
        return continuation(list(detail.calls))
    if isinstance(detail, ConflictingCopies):
        return conflicting_copies(list(detail.pairs))
    if isinstance(detail, SpansOf):
        spans = list(detail.spans)
        if finding.kind is FindingKind.PARENT_CYCLE:
            return parent_cycle(spans)
        if finding.kind is FindingKind.FRAGMENT:
            return fragment(spans)
        return lost_data(finding.kind, spans)
    return finding.message


def sent_by(span: Span) -> str:
    """Where one copy of a span came from: the collector client that sent it, the file
    and line it was read from, or the caller that handed it over."""
    if span.sender:
        return safe_text(span.sender, 120)
    if span.source:
        return safe_text(span.source, 200)
    return "the caller"


def conflicting_copies(pairs: list[tuple[Span, Span]]) -> str:
    """Spans sent twice whose copies disagree (``model.conflicting``): each span, and who
    sent each copy."""
    shown = "; ".join(
        f"{span_label(first)} from {sent_by(first)}, and a copy of it that differs from "
        f"{sent_by(other)}"
        for first, other in pairs[:NAMED]
    )
    more = f" and {len(pairs) - NAMED} more" if len(pairs) > NAMED else ""
    return (
        f"conflicting copies of a span: {shown}{more}; which copy was recorded is not known,"
        " so what the span shows counts for neither"
    )


def worded_findings(findings: list[IntegrityFinding]) -> list[IntegrityFinding]:
    """The findings with their words (new objects; the processors' are left as they are)."""
    return [
        finding
        if finding.message and finding.detail is None
        else dataclasses.replace(finding, message=finding_message(finding))
        for finding in findings
    ]


def split_run(trace_id: str, tops: list[Span], missing: list[str]) -> str:
    """A trace that falls apart into trees ``tops``; ``missing``: the parents not in it."""
    if missing:
        more = f" and {len(missing) - NAMED} more" if len(missing) > NAMED else ""
        lost = f"missing parent span(s): {', '.join(missing[:NAMED])}{more}"
    else:
        lost = "more than one root span"
    return (
        f"spans are missing from inside the run: trace {trace_id} falls apart into "
        f"{len(tops)} trees ({span_names(tops)}); {lost}"
    )


def lost_root(top: Span) -> str:
    return (
        f"spans are missing from the run: the parent {top.parent_span_id} of "
        f"its top span {span_label(top)} is not in the trace, and the span's "
        "flags say that parent was in the same process (not an upstream caller)"
    )


def refused_spans(spans: list[Span], rules: list[str]) -> str:
    """Spans refused for their ids (``codecs/otlp_ids``); ``rules``: the rules they broke."""
    return (
        f"{counted(spans, 'span')} of the run refused for breaking the OTLP id rule, "
        f"content not read: {'; '.join(rules)} (an id of all zeroes or of another length is"
        " invalid)"
    )


def undecodable_spans(spans: list[Span], whys: list[str]) -> str:
    """Spans present in the trace that could not be decoded on their own (``codecs/
    otlp_salvage``): only their ids are in the run; ``whys``: the decoder's reasons."""
    ids = ", ".join(span.span_id for span in spans[:NAMED])
    if len(spans) > NAMED:
        ids += f" and {len(spans) - NAMED} more"
    return (
        f"{counted(spans, 'span')} of the run could not be decoded, content not read: "
        f"{'; '.join(safe_text(why, 100) for why in whys)} "
        f"(span{'' if len(spans) == 1 else 's'} {ids})"
    )


def parent_cycle(cycles: list[Span]) -> str:
    return f"span parent links form a cycle at {span_names(cycles)}"


def lost_data(kind: FindingKind, spans: list[Span]) -> str:
    """Spans never ended (``unended_span``), data the SDK's limits dropped from them, or
    keys they recorded twice with different values (``repeated_keys``)."""
    if kind is FindingKind.UNENDED_SPAN:
        return f"{counted(spans, 'span')} never ended: {span_names(spans)}"
    if kind is FindingKind.REPEATED_KEYS:
        keys = list(dict.fromkeys(key for span in spans for key in span.repeated_keys))
        shown = ", ".join(safe_text(key, 60) for key in keys[:NAMED])
        more = f" and {len(keys) - NAMED} more" if len(keys) > NAMED else ""
        return (
            f"attribute key(s) {shown}{more} recorded twice with different values on "
            f"{span_names(spans)}: the last value was read, which one holds is not known"
        )
    if kind is FindingKind.DROPPED_ATTRIBUTES:
        total = sum(
            s.dropped_attributes_count + sum(e.dropped_attributes_count for e in s.events)
            for s in spans
        )
        return f"{total} attribute(s) dropped by the SDK's limits on {span_names(spans)}"
    total = sum(span.dropped_events_count for span in spans)
    return f"{total} event(s) dropped by the SDK's limits on {span_names(spans)}"


def not_understood(found: list[tuple[Span, list[str]]]) -> str:
    """Spans, or content on them, no convention understood: (span, notes) each."""
    shown = "; ".join(
        f"{', '.join(safe_text(note, 80) for note in notes[:2])} on {span_label(span)}"
        for span, notes in found[:NAMED]
    )
    more = len(found) - NAMED
    return f"not understood: {shown}" + (f" and {more} more span(s)" if more > 0 else "")


def fragment(spans: list[Span]) -> str:
    return (
        "a fragment, not an agent run: no agent, model-inference or tool span among "
        f"its {counted(spans, 'span')} (work done outside any traced run, or a "
        "piece of a run whose trace context was lost)"
    )


def continuation(calls: list[ToolCall]) -> str:
    return (
        f"a continuation, not a whole conversation: the model input history holds "
        f"{counted(calls, 'tool call')} no span of this run made "
        f"({call_names(calls)}); the earlier part was recorded elsewhere, so its "
        "calls and side effects are not all here (read from history as evidence). "
        "Trace the loop as one run (an agent span around it), or score the traces "
        "together so they are stitched"
    )


# --- coverage decisions in words -------------------------------------------------------------


def worded(decision: Decision, deferred: bool = False) -> ChannelCoverage:
    """A channel's coverage: ``decision``'s state with each reason worded and coded; the
    hint is the ``fix`` reason's (or, where only content in a form not read is missing,
    the upgrade hint). ``deferred``: worded when first read (``ChannelCoverage.deferred``),
    for a reading whose outputs show no coverage: only what a check reads is worded."""
    if deferred:
        return ChannelCoverage.deferred(
            decision.state, decision.source, decision.codes, lambda: _reasons_and_hint(decision)
        )
    codes: list[Reason] = []
    reasons, hint = _reasons_and_hint(decision, codes)
    return ChannelCoverage(decision.state, reasons, decision.source, hint, codes)


def _reasons_and_hint(
    decision: Decision, codes: list[Reason] | None = None
) -> tuple[list[str], str | None]:
    """Each reason's words, and the hint; each reason's code appended to ``codes`` when
    given (``Decision.codes``, made in the same pass over the reasons)."""
    hint = UNREAD_FIX if decision.unread_only else None
    reasons: list[str] = []
    for why in decision.whys:
        if codes is not None:
            codes.append(why.reason())
        code, data = why.code, why.data
        if code is _FIX_CODE and type(data) is Fix:
            seen = _FIXES_SEEN.get(id(data))  # the payload's identity: no hash of it
            if seen is None or seen[0] is not data:
                seen = _fix_seen(data)
            text, hint = seen[1], seen[2]
        else:  # reason_text, inline: a channel's reasons are worded in this loop
            kind, words = _WORDS[code]
            if not isinstance(data, kind):
                raise _payload_error(why)
            text = words(why, data)
        reasons.append(text)
    return reasons, hint


_FIX_CODE = ReasonCode.FIX  # read per reason: a module name, not an enum's attribute
# A fix reason's words by its payload's identity (``places`` shares one payload per way to
# close a gap), each entry holding the payload so that no other takes its id while kept.
_FIXES_SEEN: dict[int, tuple[Fix, str, str]] = {}
_FIXES_KEPT = 1024


def _fix_seen(data: Fix) -> tuple[Fix, str, str]:
    """``_fix_words(data)``, kept by ``data``'s identity (``_FIXES_SEEN``, bounded)."""
    if len(_FIXES_SEEN) >= _FIXES_KEPT:
        _FIXES_SEEN.clear()
    found = _FIXES_SEEN[id(data)] = (data, *_fix_words(data))
    return found


@lru_cache(maxsize=1024)
def _fix_words(data: Fix) -> tuple[str, str]:
    """A ``fix`` reason's words and the hint they give: the same for every run whose gap
    is closed the same way (``places`` shares the reason itself)."""
    text = reason_text(Why(ReasonCode.FIX, data=data))
    return text, text[len(FIX) :]


def worded_coverage(decisions: Mapping[str, Decision], deferred: bool = False) -> Coverage:
    """Every channel's coverage in words, from the processors' decisions (``deferred``:
    worded when first read, as ``worded``)."""
    channels = {key: worded(decision, deferred) for key, decision in decisions.items()}
    return Coverage(channels, observability_level(channels))


def reason_text(why: Why) -> str:
    """One reason in words; a reason built with a payload its code's words do not read
    is an error here, not a wrong sentence (``_typed``)."""
    kind, words = _WORDS[why.code]
    data = why.data
    if not isinstance(data, kind):
        raise _payload_error(why)
    return words(why, data)


def _payload_error(why: Why) -> TypeError:
    return TypeError(f"reason {why.code.value} carries {type(why.data).__name__}")


P = TypeVar("P")


class _Words(NamedTuple):
    """A code's words (``_typed``): the payload type they read, and the words."""

    kind: type[Any]
    words: Callable[[Why, Any], str]


def _typed(kind: type[P], words: Callable[[Why, P], str]) -> _Words:
    """``words`` for reasons whose payload is a ``kind``: the type checker reads each
    payload field ``words`` names (a field renamed in ``reasons`` fails it), and
    ``reason_text`` checks the payload is a ``kind`` before it calls them."""
    return _Words(kind, words)


def _more(spans: tuple[Span, ...]) -> str:
    return f" (and {len(spans) - 1} more such model span(s))" if len(spans) > 1 else ""


def _agent_note(why: Why, data: Withheld) -> str:
    span = why.spans[0]
    if not data.withheld:
        return f"the caller's input was read on agent span {span_label(span)}"
    where = ", ".join(safe_text(w, 80) for w in data.withheld[:2])
    return (
        f"agent span {span_label(span)} recorded the caller's input without its content ({where})"
    )


def _agent_only(why: Why, data: Withheld) -> str:
    return (
        f"{_agent_note(why, data)}, and the run has no model-inference span whose input "
        "messages would show every user message"
    )


def _ambiguous_id(why: Why, data: Texts) -> str:
    """``data.texts``: the call id, then the tools that claim it (``ToolCall.ambiguous_id``)."""
    call_id, *tools = data.texts
    named = ", ".join(repr(safe_text(tool, 40)) for tool in tools[:NAMED])
    return (
        f"calls of {named} claim one call id {safe_text(call_id, 40)!r} in one model turn: "
        "which request each answers the trace cannot tell; both are kept: "
        + span_names(list(why.spans))
    )


def _input_read(why: Why, data: Texts) -> str:
    return (
        f"the input messages of every model call ({len(why.spans)}) were read: "
        f"{counted(list(data.texts), 'distinct user message')}"
    )


def _input_not_understood(why: Why, data: Notes) -> str:
    notes = ", ".join(safe_text(note, 80) for note in data.notes[:2])
    more = f" (and {counted(list(why.spans[1:]), 'more span')})" if len(why.spans) > 1 else ""
    return f"input messages in a form not understood ({notes}) on {span_label(why.spans[0])}{more}"


def _input_withheld(why: Why, data: Withheld) -> str:
    where = ", ".join(safe_text(w, 80) for w in data.withheld[:2])
    return (
        f"{counted(list(why.spans), 'model span')} recorded the user's messages "
        f"without their content ({where} on {span_label(why.spans[0])})"
    )


def _input_not_recorded(why: Why, _: NoData) -> str:
    spans = list(why.spans)
    return (
        f"{counted(spans, 'model span')} recorded no input messages "
        f"({why_missing(spans, INPUT_KEYS)}): {span_names(spans)}"
    )


def _answer_asked_tools(why: Why, data: AskedTools) -> str:
    names = ", ".join(safe_text(r.name, 40) for r in data.requests[:NAMED])
    return (
        "no final answer in the trace: the last model span "
        f"{span_label(why.spans[0])} asked for tools ({names}) and no model span followed "
        f"it{error_ending(list(data.agent_spans))}"
    )


def _answer_not_read(why: Why, data: AnswerUnread) -> str:
    last = why.spans[0]
    reason = why_missing([last, *data.agent_spans], ANSWER_KEYS)
    return (
        f"{counted(list(data.models), 'model span')} in the run but the answer's text was not "
        f"read: the last one, {span_label(last)}, recorded no output text we read ({reason})"
    )


def _execution_spans(why: Why, data: AnswerTools) -> str:
    reason = f"{counted(list(why.spans), 'tool execution span')} in the run"
    answer = list(data.answer_tools)
    if answer:
        reason += (
            f" (and {counted(answer, 'span')} of the agent's answer tool "
            f"{span_names(answer)}, which is no tool call)"
        )
    return reason


def _asked_without_execution(why: Why, data: Output) -> str:
    return (
        f"model span {span_label(why.spans[0])} "
        f"{finish_reasons_in_words(data.output)}, its output was not read and no "
        "tool execution span follows it: a tool run without an execution span cannot be read"
    )


def _outputs_read(_: Why, data: OutputsRead) -> str:
    models, through = data.models, data.through
    captured = (
        f"every model call was captured ({models} model spans, {through} of them "
        "read through another span of the same call)"
        if through
        else f"every model span ({models}) was captured"
    )
    return f"the output of {captured}: every tool the model asked for is listed"


def _asked_unread(why: Why, data: FinishReasons) -> str:
    return (
        f"model span {span_label(why.spans[0])} finished with "
        f"{safe_text(data.finish_reasons[0], 40)!r} but its output was not read: the tools "
        f"it asked for cannot be read{_more(why.spans)}"
    )


def _no_output_read(why: Why, _: NoData) -> str:
    spans = list(why.spans)
    return (
        f"{counted(spans, 'model span')} in the run but no output was read "
        f"({why_missing(spans, ANSWER_KEYS)}) and there is no tool execution span"
    )


def _silent_outputs(why: Why, data: ModelCount) -> str:
    return (
        f"{len(why.spans)} of {data.models} model spans recorded neither their output "
        f"nor a finish reason ({span_names(list(why.spans))}): tools they may have asked for "
        "cannot be read"
    )


def _finish_unclear(why: Why, data: Output) -> str:
    return (
        f"model span {span_label(why.spans[0])} {finish_reasons_in_words(data.output)} "
        f"and its output was not read{_more(why.spans)}"
    )


def _no_tools_asked(why: Why, data: FinishReasons) -> str:
    reasons = ", ".join(data.finish_reasons)
    return (
        f"the output of {counted(list(why.spans), 'model span')} was not captured, but each "
        f"finish reason ({safe_text(reasons, 60)}) says it asked for no tool"
    )


def _noun(what: str) -> str:
    return "tool call" if what == "arguments" else "executed tool call"


def _captured_none(why: Why, data: Captured) -> str:
    keys = ARGUMENT_KEYS if data.what == "arguments" else RESULT_KEYS
    calls = list(data.missing)
    return (
        f"{data.what} not captured on any of the {counted(calls, _noun(data.what))} "
        f"({why_missing(list(why.spans), keys)}): {call_names(calls)}"
    )


def _captured_some(_: Why, data: Captured) -> str:
    return (
        f"{data.what} captured on {data.seen} of {data.relevant} {_noun(data.what)}s; "
        f"not on {call_names(list(data.missing))}"
    )


def _captured(_: Why, data: Captured) -> str:
    return f"{data.what} captured on every {_noun(data.what)} seen ({data.relevant})"


def _none_seen(_: Why, data: Captured) -> str:
    state = data.state.value if data.state is not None else "unknown"
    return f"no {_noun(data.what)} seen and tool_calls is {state}"


def _effects_seen(_: Why, data: KindEffects) -> str:
    found = list(data.effects)
    shown = "; ".join(effect_label(effect) for effect in found[:NAMED])
    more = f" and {len(found) - NAMED} more" if len(found) > NAMED else ""
    return f"{counted(found, data.kind + ' side effect')} in the run: {shown}{more}"


def _transport_only(why: Why, data: Kind) -> str:
    kind = data.kind
    return (
        f"the only {kind} spans ({len(why.spans)}) are inside model-inference spans, the "
        "model's own transport: they show the model client's library is instrumented, "
        f"not that the agent's own {kind} calls would be recorded; no "
        f"{SIDE_EFFECT_PREFIX + kind} coverage declared"
    )


def _declared_by(_: Why, data: Service) -> str:
    return (
        f"declared by service {safe_text(data.service, 60)!r} in its resource "
        f"attribute {DECLARATION_KEY}"
    )


def _every_tool_declared(_: Why, data: Scopes) -> str:
    return (
        f"every tool call the run executed is declared ({declared_scopes(list(data.scopes))}) "
        "and the run records no side-effect span: what is left is the agent's own code"
    )


def _fix(_: Why, data: Fix) -> str:
    hint = fix_hint(data.key, data.scope_names, data.cause)
    return FIX + (hint or "")


def _finding(_: Why, data: Finding) -> str:
    return finding_message(data.finding)


_WORDS: dict[ReasonCode, _Words] = {
    ReasonCode.INPUT_READ: _typed(Texts, _input_read),
    ReasonCode.INPUT_READ_SOME: _typed(
        ModelCount,
        lambda why, data: f"input messages read on {len(why.spans)} of {data.models} model calls",
    ),
    ReasonCode.INPUT_AGENT_ONLY_READ: _typed(Withheld, _agent_only),
    ReasonCode.INPUT_AGENT_ONLY_WITHHELD: _typed(Withheld, _agent_only),
    ReasonCode.INPUT_NO_MODEL_SPAN: _typed(
        NoData,
        lambda _, __: (
            "no model-inference span in the run, and no span's record of the user's input was read"
        ),
    ),
    ReasonCode.INPUT_AGENT_READ: _typed(Withheld, _agent_note),
    ReasonCode.INPUT_AGENT_WITHHELD: _typed(Withheld, _agent_note),
    ReasonCode.INPUT_NOT_UNDERSTOOD: _typed(Notes, _input_not_understood),
    ReasonCode.INPUT_WITHHELD: _typed(Withheld, _input_withheld),
    ReasonCode.INPUT_NOT_RECORDED: _typed(NoData, _input_not_recorded),
    ReasonCode.RESPONSE_AGENT_OUTPUT: _typed(
        NoData,
        lambda why, _: (
            f"the final answer was captured: output of agent span {span_label(why.spans[0])}"
        ),
    ),
    ReasonCode.RESPONSE_MODEL_TEXT: _typed(
        NoData,
        lambda why, _: (
            f"the final answer was captured: text of the last model span {span_label(why.spans[0])}"
        ),
    ),
    ReasonCode.RESPONSE_ENDED_ASKING_TOOLS: _typed(AskedTools, _answer_asked_tools),
    ReasonCode.RESPONSE_NOT_READ: _typed(AnswerUnread, _answer_not_read),
    ReasonCode.RESPONSE_AGENT_NO_OUTPUT: _typed(
        NoData,
        lambda why, _: (
            f"agent span {span_label(why.spans[0])} recorded no output and the "
            "run has no model-inference span"
        ),
    ),
    ReasonCode.RESPONSE_NO_SPAN: _typed(
        NoData,
        lambda _, __: "no agent or model-inference span in the run: the answer is not recorded",
    ),
    ReasonCode.TOOL_CALLS_EXECUTION_SPANS: _typed(AnswerTools, _execution_spans),
    ReasonCode.TOOL_CALLS_ASKED_WITHOUT_EXECUTION: _typed(Output, _asked_without_execution),
    ReasonCode.TOOL_CALLS_READ_FROM_EXECUTIONS: _typed(
        NoData,
        lambda why, _: (
            f"the output of {counted(list(why.spans), 'model span')} was not read; the calls "
            "are read from the tool execution spans"
        ),
    ),
    ReasonCode.TOOL_CALLS_NO_SPAN: _typed(
        NoData, lambda _, __: "no model-inference or tool execution span in the run"
    ),
    ReasonCode.TOOL_CALLS_AGENT_CONVERSATION: _typed(
        NoData,
        lambda why, _: (
            "no model-inference or tool execution span: the calls are read from the "
            f"conversation agent span {span_label(why.spans[0])} recorded, captured whole "
            "(every message read)"
        ),
    ),
    ReasonCode.TOOL_CALLS_OUTPUTS_READ: _typed(OutputsRead, _outputs_read),
    ReasonCode.TOOL_CALLS_ASKED_UNREAD: _typed(FinishReasons, _asked_unread),
    ReasonCode.TOOL_CALLS_NO_OUTPUT_READ: _typed(NoData, _no_output_read),
    ReasonCode.TOOL_CALLS_SILENT_OUTPUTS: _typed(ModelCount, _silent_outputs),
    ReasonCode.TOOL_CALLS_FINISH_UNCLEAR: _typed(Output, _finish_unclear),
    ReasonCode.TOOL_CALLS_NO_TOOLS_ASKED: _typed(FinishReasons, _no_tools_asked),
    ReasonCode.TOOL_CALLS_RAN_ELSEWHERE: _typed(
        Scopes,
        lambda _, data: (
            f"the model was sent a result for {_scope_calls(list(data.scopes))}, which no span "
            "of the run executed: it ran where the trace does not show (another trace or "
            "service, or untraced), so the calls it made there, if any, are not read"
        ),
    ),
    ReasonCode.TOOL_CALLS_REMOTE_AGENT: _typed(
        Scopes,
        lambda _, data: (
            f"{_scope_calls(list(data.scopes))} handed the task to a remote agent "
            f"({_remote_targets(list(data.scopes))}) whose spans are not in the trace: the "
            "tools that agent called are not read"
        ),
    ),
    ReasonCode.TOOL_CALLS_NESTED_AGENT: _typed(
        Scopes,
        lambda _, data: (
            f"{_scope_calls(list(data.scopes))} ran another agent as the tool (the "
            "framework's agent-as-tool), and that agent's run is not in the trace (no agent "
            "or model span under the call): the tools it called are not read"
        ),
    ),
    ReasonCode.TOOL_CALLS_AMBIGUOUS_ID: _typed(Texts, _ambiguous_id),
    ReasonCode.CALLS_TOOL_CALLS_UNOBSERVED: _typed(
        Captured,
        lambda _, data: f"tool_calls is unobserved, so calls and their {data.what} may be missing",
    ),
    ReasonCode.CALLS_NONE_SEEN: _typed(Captured, _none_seen),
    ReasonCode.CALLS_CAPTURED: _typed(Captured, _captured),
    ReasonCode.CALLS_CAPTURED_NONE: _typed(Captured, _captured_none),
    ReasonCode.CALLS_CAPTURED_SOME: _typed(Captured, _captured_some),
    ReasonCode.CALLS_TOOL_CALLS_PARTIAL: _typed(
        Captured,
        lambda _, data: "tool_calls is partial: calls that cannot be read have no " + data.what,
    ),
    ReasonCode.SIDE_EFFECT_SEEN: _typed(KindEffects, _effects_seen),
    ReasonCode.SIDE_EFFECT_TRANSPORT_ONLY: _typed(Kind, _transport_only),
    ReasonCode.SIDE_EFFECT_UNSEEN_CALLS: _typed(Kind, lambda _, data: unseen_calls(data.kind)),
    ReasonCode.SIDE_EFFECT_NO_CALLS_RECORDED: _typed(
        Kind, lambda _, data: no_calls_recorded(data.kind)
    ),
    ReasonCode.SIDE_EFFECT_ASKED_UNRUN: _typed(
        Kind, lambda why, data: asked_unrun(data.kind, list(why.spans))
    ),
    ReasonCode.SIDE_EFFECT_DECLARED: _typed(Service, _declared_by),
    ReasonCode.SIDE_EFFECT_ALSO_DECLARED: _typed(
        Service, lambda why, data: "also " + _declared_by(why, data)
    ),
    ReasonCode.SIDE_EFFECT_SCOPE_GAPS: _typed(
        ScopeGaps, lambda _, data: scope_gaps(data.kind, data.scopes)
    ),
    ReasonCode.SIDE_EFFECT_SCOPES_DECLARED: _typed(
        Scopes, lambda _, data: declared_scopes(list(data.scopes))
    ),
    ReasonCode.SIDE_EFFECT_EVERY_TOOL_DECLARED: _typed(Scopes, _every_tool_declared),
    ReasonCode.SIDE_EFFECT_ATTESTED: _typed(
        ScopeGaps,
        lambda _, data: (
            f"no {data.kind} span in the run, and the watcher (rampart_otel.watch) in the "
            f"process of {_scope_calls(list(data.scopes))} attests that it sees {data.kind} "
            "there and nothing of it went unexplained: none happened unseen"
        ),
    ),
    ReasonCode.SIDE_EFFECT_NONE: _typed(
        Kind,
        lambda _, data: (
            f"no {data.kind} span in the run and the agent declared no "
            f"{SIDE_EFFECT_PREFIX}{data.kind} coverage"
        ),
    ),
    ReasonCode.FIX: _typed(Fix, _fix),
    **{code: _typed(Finding, _finding) for code in ReasonCode if code.value.startswith("finding.")},
}

# Codes whose words are the bottom layer's (``channels``: it cannot import this module).
WORDED_IN_CHANNELS = frozenset({ReasonCode.CHANNEL_UNKNOWN, ReasonCode.ASSUMED})

# What each code means, for docs/coverage.md's table (``make docs``; tests/processors/
# test_reasons.py fails while a code has no row, or the docs differ).
MEANINGS: dict[ReasonCode, str] = {
    ReasonCode.INPUT_READ: "every model call's input messages were read whole (observed)",
    ReasonCode.INPUT_READ_SOME: "the input messages of some model calls were read, not all",
    ReasonCode.INPUT_AGENT_ONLY_READ: (
        "no model span: an agent span's record of its caller's input was read (partial: "
        "messages sent during the run cannot show)"
    ),
    ReasonCode.INPUT_AGENT_ONLY_WITHHELD: (
        "no model span, and the agent span recorded its caller's input without content"
    ),
    ReasonCode.INPUT_NO_MODEL_SPAN: (
        "no model-inference span, and no span's record of the user's input read"
    ),
    ReasonCode.INPUT_AGENT_READ: "an agent span's record of its caller's input was read",
    ReasonCode.INPUT_AGENT_WITHHELD: (
        "an agent span recorded its caller's input without its content"
    ),
    ReasonCode.INPUT_NOT_UNDERSTOOD: (
        "input messages are in the trace in a form not understood (no capture setting helps)"
    ),
    ReasonCode.INPUT_WITHHELD: "model spans recorded the user's messages without their content",
    ReasonCode.INPUT_NOT_RECORDED: (
        "model spans recorded no input messages (redacted, cut, unread or not recorded)"
    ),
    ReasonCode.RESPONSE_AGENT_OUTPUT: "the final answer is the output of the top agent span",
    ReasonCode.RESPONSE_MODEL_TEXT: "the final answer is the text of the last model span",
    ReasonCode.RESPONSE_ENDED_ASKING_TOOLS: (
        "the last model span asked for tools and none followed it: there was no answer"
    ),
    ReasonCode.RESPONSE_NOT_READ: "model spans ran but the answer's text was not read",
    ReasonCode.RESPONSE_AGENT_NO_OUTPUT: "an agent span recorded no output, and no model span ran",
    ReasonCode.RESPONSE_NO_SPAN: "no agent or model-inference span: the answer is not recorded",
    ReasonCode.TOOL_CALLS_EXECUTION_SPANS: (
        "the calls are read from tool execution spans (the agent's answer tool is no call)"
    ),
    ReasonCode.TOOL_CALLS_ASKED_WITHOUT_EXECUTION: (
        "a model turn whose output was not read asked (or may have asked) for tools and no "
        "execution span follows it (partial)"
    ),
    ReasonCode.TOOL_CALLS_READ_FROM_EXECUTIONS: (
        "some model outputs were not read; the execution spans show the calls"
    ),
    ReasonCode.TOOL_CALLS_NO_SPAN: "no model-inference or tool execution span",
    ReasonCode.TOOL_CALLS_AGENT_CONVERSATION: (
        "no model-inference or tool execution span: the calls are read from the agent span's "
        "recorded conversation, captured whole"
    ),
    ReasonCode.TOOL_CALLS_OUTPUTS_READ: (
        "every model output was read: every tool the model asked for is listed"
    ),
    ReasonCode.TOOL_CALLS_ASKED_UNREAD: (
        "a model span's finish reason asked for tools but its output was not read (partial)"
    ),
    ReasonCode.TOOL_CALLS_NO_OUTPUT_READ: (
        "no model output and no finish reason was read, and no tool execution span ran"
    ),
    ReasonCode.TOOL_CALLS_SILENT_OUTPUTS: (
        "some model spans recorded neither their output nor a finish reason (partial)"
    ),
    ReasonCode.TOOL_CALLS_FINISH_UNCLEAR: (
        "an unread output's finish reason does not say whether it asked for tools (partial)"
    ),
    ReasonCode.TOOL_CALLS_NO_TOOLS_ASKED: (
        "outputs were not captured, but each finish reason says no tool was asked for"
    ),
    ReasonCode.TOOL_CALLS_RAN_ELSEWHERE: (
        "a call the model was sent a result for ran where no span of the run shows: the calls "
        "it made there are not read (partial)"
    ),
    ReasonCode.TOOL_CALLS_REMOTE_AGENT: (
        "a tool call handed its task to a remote agent whose spans are not in the trace: that "
        "agent's own calls are not read (partial)"
    ),
    ReasonCode.TOOL_CALLS_NESTED_AGENT: (
        "a framework's agent-as-tool call whose nested agent's run is not in the trace: that "
        "agent's own calls are not read (partial)"
    ),
    ReasonCode.TOOL_CALLS_AMBIGUOUS_ID: (
        "calls of different tools claim one call id in one model turn: which request each "
        "answers the trace cannot tell, both are kept (partial)"
    ),
    ReasonCode.CALLS_TOOL_CALLS_UNOBSERVED: (
        "tool_calls is unobserved, so calls and their arguments or results may be missing"
    ),
    ReasonCode.CALLS_NONE_SEEN: "no call seen: the channel takes tool_calls' state",
    ReasonCode.CALLS_CAPTURED: "arguments (results) captured on every call seen",
    ReasonCode.CALLS_CAPTURED_NONE: "arguments (results) captured on none of the calls seen",
    ReasonCode.CALLS_CAPTURED_SOME: "arguments (results) captured on some of the calls seen",
    ReasonCode.CALLS_TOOL_CALLS_PARTIAL: (
        "captured on every call seen, but tool_calls is partial: calls not read have none"
    ),
    ReasonCode.SIDE_EFFECT_SEEN: "side effects of the kind are in the run (named)",
    ReasonCode.SIDE_EFFECT_TRANSPORT_ONLY: (
        "the only spans of the kind are the model client's own transport: they attest "
        "nothing about the agent's calls"
    ),
    ReasonCode.SIDE_EFFECT_NONE: "no span of the kind and no declaration of it",
    ReasonCode.SIDE_EFFECT_UNSEEN_CALLS: (
        "no tool execution span and not every model output read: calls may have acted unseen "
        "(partial)"
    ),
    ReasonCode.SIDE_EFFECT_NO_CALLS_RECORDED: (
        "no tool execution span and no model call recorded: which tools ran is unknown (partial)"
    ),
    ReasonCode.SIDE_EFFECT_ASKED_UNRUN: (
        "a model turn whose output was not read asked for tools (or may have, and the model "
        "was called again) and no execution span follows it: the tool may have run unseen "
        "(partial)"
    ),
    ReasonCode.SIDE_EFFECT_DECLARED: (
        "a service declared the channel in its resource attribute rampart.coverage"
    ),
    ReasonCode.SIDE_EFFECT_ALSO_DECLARED: "observed from spans, and declared too",
    ReasonCode.SIDE_EFFECT_SCOPE_GAPS: (
        "tool calls whose scope was not watched for the kind (silent, or out of process)"
    ),
    ReasonCode.SIDE_EFFECT_SCOPES_DECLARED: (
        "the tool calls with no I/O span are declared (policy tools:, or on their span)"
    ),
    ReasonCode.SIDE_EFFECT_ATTESTED: (
        "no span of the kind, and the watcher attests every tool call's process sees the kind, "
        "with nothing of it unexplained in the call (rampart_otel.watch)"
    ),
    ReasonCode.SIDE_EFFECT_EVERY_TOOL_DECLARED: (
        "every executed tool call is declared and no side-effect span ran: what is left is "
        "the agent's own code"
    ),
    ReasonCode.CHANNEL_UNKNOWN: "a key that is no channel",
    ReasonCode.ASSUMED: "taken as observed: assume_coverage in the policy or on the command line",
    ReasonCode.FIX: "how to close the channel's gap (its hint); the last reason",
    ReasonCode.FINDING_SPLIT_RUN: "capped: spans were lost from inside the run (split_run)",
    ReasonCode.FINDING_LOST_ROOT: "capped: the run's own root span was lost (lost_root)",
    ReasonCode.FINDING_PARENT_CYCLE: "capped: span parent links form a cycle (parent_cycle)",
    ReasonCode.FINDING_UNENDED_SPAN: "capped: spans feeding the channel never ended",
    ReasonCode.FINDING_DROPPED_ATTRIBUTES: (
        "capped: the SDK's limits dropped attributes of spans feeding the channel"
    ),
    ReasonCode.FINDING_DROPPED_EVENTS: (
        "capped: the SDK's limits dropped events of spans feeding the channel"
    ),
    ReasonCode.FINDING_NOT_UNDERSTOOD: "capped: spans or content in a form not understood",
    ReasonCode.FINDING_FRAGMENT: "capped: no agent, model or tool span: not an agent run",
    ReasonCode.FINDING_CONTINUATION: (
        "capped: the model input history holds calls no span of the run made"
    ),
    ReasonCode.FINDING_REFUSED_SPAN: (
        "capped: spans of the run were refused for breaking the OTLP id rule, content not read"
    ),
    ReasonCode.FINDING_UNDECODABLE_SPAN: (
        "capped: spans of the run could not be decoded on their own, only their ids were read"
    ),
    ReasonCode.FINDING_REPEATED_KEYS: (
        "capped: spans feeding the channel recorded an attribute key twice with different "
        "values (OTLP keys must be unique): which value holds is not known"
    ),
    ReasonCode.FINDING_CONFLICTING_COPIES: (
        "capped: a span of the run was sent twice and the copies disagree (a copy forged by "
        "whoever learnt its ids, or a broken exporter): which one was recorded is not known"
    ),
}


def reason_codes_table() -> str:
    """docs/coverage.md's table of every reason code (``make docs``)."""
    rows = [f"| `{code.value}` | {MEANINGS[code]} |" for code in ReasonCode]
    return "\n".join(["| code | meaning |", "|---|---|", *rows])
