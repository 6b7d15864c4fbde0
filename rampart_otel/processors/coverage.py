"""What a run can attest, per channel, with the evidence behind each state.

The rule every evaluator relies on: NOT_DETECTED only when each channel it reads is
``observed`` for the whole run. So a channel is observed only on positive evidence that
the instrumentation feeding it was there (a span of that kind, captured content, a
declaration), partial when that evidence has a hole, and unobserved otherwise — "nothing
was recorded" never becomes "nothing happened".

Integrity findings (spans lost from inside a run, spans never ended, dropped attributes or
events) cap the channels they feed at partial; partial never upgrades unobserved. The
findings record the channels they cap, so coverage assumed later (``assume``) is capped the
same way.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from typing import NamedTuple

from rampart_otel.channels import (
    DECLARATION_KEY,
    EVERY_CHANNEL,
    EVERY_SIDE_EFFECT,
    MODEL_CHANNELS,
    OBSERVED,
    PARTIAL,
    SIDE_EFFECT_PREFIX,
    TOOL_CHANNELS,
    UNOBSERVED,
    ChannelCoverage,
    Coverage,
    CoverageSource,
    cap,
    observability_level,
)
from rampart_otel.conventions import ModelOutput, finish_reasons, redaction_hint
from rampart_otel.conventions.finish_reasons import ToolRequest
from rampart_otel.conventions.registry import unread_content
from rampart_otel.model import (
    FindingKind,
    IntegrityFinding,
    Response,
    SideEffect,
    Span,
    StatusCode,
    ToolCall,
    ToolCallStatus,
)
from rampart_otel.processors.text import safe_text

_NAMED = 3  # spans named in one reason before "and N more"
# Why content is missing, when no span holds any in a form we do not read.
NOT_RECORDED = (
    "not recorded in the trace: content capture off, or not recorded by this instrumentation"
)
REDACTED = "content was redacted by the instrumentation"
# Words of the keys that hold what a reason is about, so it names the redaction it means.
_ANSWER_KEYS = ("output", "choice", "completion", "response")
_ARGUMENT_KEYS = ("argument", "input", "args", "tool.message")
_RESULT_KEYS = ("result", "output", "choice", "response")


class SpanRole(NamedTuple):
    """What one span is, as normalize classified it: decides which channels it feeds."""

    model: bool = False
    agent: bool = False
    tool: bool = False
    effect_kinds: tuple[str, ...] = ()
    transport: bool = False  # inside a model-inference span's subtree


@dataclass(slots=True)
class RunFacts:
    """Everything coverage needs from normalize's classification of one run."""

    spans: list[Span]  # the run's spans, each once (a span exported twice is read once)
    roles: dict[str, SpanRole]
    model_outputs: list[tuple[Span, ModelOutput, bool]]  # (span, output, read through another)
    tool_spans: list[Span]
    agent_spans: list[Span]
    effects: list[SideEffect]  # the agent's side effects (the model's transport left out)
    transport_spans: dict[str, list[Span]]  # kind → spans inside model spans (left out)
    response_span: Span | None
    cycles: list[Span] = field(default_factory=list)  # spans whose parent link was cut
    # (span, what on it was not understood): unknown span families, kinds, content forms.
    not_understood: list[tuple[Span, list[str]]] = field(default_factory=list)
    # Spans of the framework's answer tool (smolagents' final_answer): no tool call, but
    # they show that the turn before them ran its tools where the trace records tool runs.
    answer_tool_spans: list[Span] = field(default_factory=list)

    @property
    def fragment(self) -> bool:
        """No agent, model or tool span: a piece of a run whose context was lost."""
        return not any(role.model or role.agent or role.tool for role in self.roles.values())


def infer_coverage(
    facts: RunFacts, response: Response, calls: list[ToolCall]
) -> tuple[Coverage, list[IntegrityFinding]]:
    """Every channel's state with its reasons, and the integrity findings that capped them."""
    channels: dict[str, ChannelCoverage] = {"response": _response(facts, response)}
    tool_calls = channels["tool_calls"] = _tool_calls(facts)
    channels["tool_calls.arguments"] = _captured("arguments", calls, tool_calls, facts)
    channels["tool_calls.results"] = _captured("results", calls, tool_calls, facts)
    channels.update(_side_effects(facts))
    _apply_declarations(facts, channels)
    findings = integrity(facts) + understanding(facts)
    for finding in findings:
        cap(channels, finding)
    return Coverage(channels, observability_level(channels)), findings


# --- response ----------------------------------------------------------------------------


def _response(facts: RunFacts, response: Response) -> ChannelCoverage:
    span = facts.response_span
    if response.text is not None and span is not None:
        role = facts.roles.get(span.span_id)
        where = "output of agent span" if role and role.agent else "text of the last model span"
        return ChannelCoverage(OBSERVED, [f"the final answer was captured: {where} {_span(span)}"])
    models = [span for span, _, _ in facts.model_outputs]
    if models:
        last, output, _ = sorted(facts.model_outputs, key=lambda item: _end(item[0]))[-1]
        why = _why_missing([last, *facts.agent_spans], _ANSWER_KEYS)
        if output.requests and why == NOT_RECORDED:
            # The run stopped after a turn that asked for tools: there was no answer to read.
            names = ", ".join(safe_text(r.name, 40) for r in output.requests[:_NAMED])
            return ChannelCoverage(
                UNOBSERVED,
                [
                    f"no final answer in the trace: the last model span {_span(last)} asked for "
                    f"tools ({names}) and no model span followed it{_ended(facts)}"
                ],
            )
        return ChannelCoverage(
            UNOBSERVED,
            [
                f"{_count(models, 'model span')} in the run but the answer's text was not "
                f"read: the last one, {_span(last)}, recorded no output text we read ({why})"
            ],
        )
    if facts.agent_spans:
        return ChannelCoverage(
            UNOBSERVED,
            [
                f"agent span {_span(facts.agent_spans[-1])} recorded no output and the run has "
                "no model-inference span"
            ],
        )
    return ChannelCoverage(
        UNOBSERVED, ["no agent or model-inference span in the run: the answer is not recorded"]
    )


def _end(span: Span) -> int:
    return span.end_ns or span.start_ns or 0


def _ended(facts: RunFacts) -> str:
    """How the run ended, when an agent span says it failed."""
    for span in facts.agent_spans:
        if span.status_code == StatusCode.ERROR:
            message = f" {safe_text(span.status_message, 80)!r}" if span.status_message else ""
            return (
                f"; the run ended with an error: agent span {_span(span)} has status ERROR{message}"
            )
    return ""


# --- tool calls --------------------------------------------------------------------------


def _tool_calls(facts: RunFacts) -> ChannelCoverage:
    outputs = facts.model_outputs
    # Outputs that do not list the calls: not captured, or captured without the calls the
    # finish reason says were asked for (a form not read).
    unread = [
        (span, output)
        for span, output, through in outputs
        if not through
        and (
            not output.readable
            or (output.tool_request is ToolRequest.TOOLS and not output.requests)
        )
    ]
    if facts.tool_spans or (facts.answer_tool_spans and unread):
        reasons = [f"{_count(facts.tool_spans, 'tool execution span')} in the run"]
        if facts.answer_tool_spans:
            reasons[0] += (
                f" (and {_count(facts.answer_tool_spans, 'span')} of the agent's answer tool "
                f"{_names(facts.answer_tool_spans)}, which is no tool call)"
            )
        if unread:
            asking = [
                span for span, output in unread if output.tool_request is not ToolRequest.NO_TOOLS
            ]
            unmatched = _asked_without_execution(facts, asking)
            if unmatched:
                output = next(o for s, o in unread if s is unmatched[0])
                return ChannelCoverage(
                    PARTIAL,
                    [
                        *reasons,
                        f"model span {_span(unmatched[0])} {_asked(output)}, its output was not "
                        "read and no tool execution span follows it: a tool run without an "
                        "execution span cannot be read",
                    ],
                )
            reasons.append(
                f"the output of {_count(unread, 'model span')} was not read; the calls are "
                "read from the tool execution spans"
            )
        return ChannelCoverage(OBSERVED, reasons)
    if not outputs:
        return ChannelCoverage(UNOBSERVED, ["no model-inference or tool execution span in the run"])
    if not unread:
        through = sum(1 for _, _, read_through in outputs if read_through)
        captured = (
            f"every model call was captured ({len(outputs)} model spans, {through} of them "
            "read through another span of the same call)"
            if through
            else f"every model span ({len(outputs)}) was captured"
        )
        return ChannelCoverage(
            OBSERVED, [f"the output of {captured}: every tool the model asked for is listed"]
        )
    asked = [(s, o) for s, o in unread if o.tool_request is ToolRequest.TOOLS]
    silent = [(s, o) for s, o in unread if not o.finish_reasons]
    unknown = [
        (s, o) for s, o in unread if o.finish_reasons and o.tool_request is ToolRequest.UNKNOWN
    ]
    if asked:
        span, output = asked[0]
        reason = (
            f"model span {_span(span)} finished with {safe_text(output.finish_reasons[0], 40)!r} "
            "but its output was not read: the tools it asked for cannot be read"
        )
        if len(asked) > 1:
            reason += f" (and {len(asked) - 1} more such model span(s))"
        return ChannelCoverage(PARTIAL, [reason])
    if len(silent) == len(outputs):
        return ChannelCoverage(
            UNOBSERVED,
            [
                f"{_count(outputs, 'model span')} in the run but no output was read "
                f"({_why_missing([span for span, _, _ in outputs], _ANSWER_KEYS)}) and there "
                "is no tool execution span"
            ],
        )
    if silent:
        return ChannelCoverage(
            PARTIAL,
            [
                f"{len(silent)} of {len(outputs)} model spans recorded neither their output nor "
                f"a finish reason ({_names([s for s, _ in silent])}): tools they may have asked "
                "for cannot be read"
            ],
        )
    if unknown:
        span, output = unknown[0]
        reason = f"model span {_span(span)} {_asked(output)} and its output was not read"
        if len(unknown) > 1:
            reason += f" (and {len(unknown) - 1} more such model span(s))"
        return ChannelCoverage(PARTIAL, [reason])
    reasons = sorted({reason for _, output in unread for reason in output.finish_reasons})
    return ChannelCoverage(
        OBSERVED,
        [
            f"the output of {_count(unread, 'model span')} was not captured, but each finish "
            f"reason ({safe_text(', '.join(reasons), 60)}) says it asked for no tool"
        ],
    )


def _asked(output: ModelOutput) -> str:
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


def _asked_without_execution(facts: RunFacts, asking: list[Span]) -> list[Span]:
    """Unreadable model spans that asked for tools with no tool span before the next model call.

    Execution spans attest the calls only if every tool has them; a turn that asked for
    tools and ran none that is visible shows one that may not. A turn's tools start after
    the turn starts (an agent may run a call while the reply still streams in) and before
    the next turn starts; a model span nested in this one is the same request, not the next.
    """
    if not asking:
        return []
    models = sorted(
        ((span.trace_id, span.start_ns or 0, span) for span, _, _ in facts.model_outputs),
        key=_trace_start,
    )
    parents = {span.span_id: span.parent_span_id for span in facts.spans}
    executions = [*facts.tool_spans, *facts.answer_tool_spans]
    tools = [(span.trace_id, span.start_ns or 0) for span in executions]
    unmatched: list[Span] = []
    for span in asking:
        begin = span.start_ns or 0
        until = _next_turn(models, span, parents)
        if not any(
            t == span.trace_id and s >= begin and (until is None or s < until) for t, s in tools
        ):
            unmatched.append(span)
    return unmatched


def _trace_start(item: tuple[str, int, Span]) -> tuple[str, int]:
    return item[0], item[1]


def _next_turn(
    models: list[tuple[str, int, Span]], span: Span, parents: dict[str, str | None]
) -> int | None:
    """Start of the first model span after ``span``'s start that is not nested in it."""
    first = bisect_right(models, (span.trace_id, span.start_ns or 0), key=_trace_start)
    for trace, start, other in models[first:]:
        if trace != span.trace_id:
            return None
        if not _inside(other, span.span_id, parents):
            return start
    return None


def _inside(span: Span, ancestor_id: str, parents: dict[str, str | None]) -> bool:
    """Whether ``span`` is in the subtree of span ``ancestor_id`` (a parent cycle ends it)."""
    current = span.parent_span_id
    for _ in range(len(parents) + 1):
        if current is None:
            return False
        if current == ancestor_id:
            return True
        current = parents.get(current)
    return False


def _captured(
    what: str, calls: list[ToolCall], tool_calls: ChannelCoverage, facts: RunFacts
) -> ChannelCoverage:
    """``tool_calls.arguments`` / ``.results``: captured on every call seen."""
    if what == "arguments":
        relevant = calls
        seen = [call for call in calls if call.arguments_captured]
        noun = "tool call"
    else:
        # A requested call never executed has no result to capture — when execution is
        # instrumented at all; without tool spans a requested call may have run unseen.
        relevant = [
            call
            for call in calls
            if call.status is not ToolCallStatus.REQUESTED or not facts.tool_spans
        ]
        seen = [call for call in relevant if call.result_captured]
        noun = "executed tool call"
    if tool_calls.state is UNOBSERVED:
        return ChannelCoverage(
            UNOBSERVED, [f"tool_calls is unobserved, so calls and their {what} may be missing"]
        )
    if not relevant:
        state = tool_calls.state
        return ChannelCoverage(state, [f"no {noun} seen and tool_calls is {state.value}"])
    seen_ids = {id(call) for call in seen}
    missing = [call for call in relevant if id(call) not in seen_ids]
    if not missing:
        state, reason = OBSERVED, f"{what} captured on every {noun} seen ({len(relevant)})"
    elif not seen:
        state = UNOBSERVED
        keys = _ARGUMENT_KEYS if what == "arguments" else _RESULT_KEYS
        reason = (
            f"{what} not captured on any of the {_count(relevant, noun)} "
            f"({_why_missing(_call_spans(missing, facts), keys)}): {_call_names(missing)}"
        )
    else:
        state = PARTIAL
        reason = (
            f"{what} captured on {len(seen)} of {len(relevant)} {noun}s; not on "
            f"{_call_names(missing)}"
        )
    reasons = [reason]
    if state is OBSERVED and tool_calls.state is PARTIAL:
        state = PARTIAL
        reasons.append("tool_calls is partial: calls that cannot be read have no " + what)
    return ChannelCoverage(state, reasons)


# --- side effects ------------------------------------------------------------------------


def _side_effects(facts: RunFacts) -> dict[str, ChannelCoverage]:
    channels: dict[str, ChannelCoverage] = {}
    by_kind: dict[str, list[SideEffect]] = {}
    for effect in facts.effects:
        by_kind.setdefault(effect.kind, []).append(effect)
    for kind, found in by_kind.items():
        shown = "; ".join(_effect(effect) for effect in found[:_NAMED])
        more = f" and {len(found) - _NAMED} more" if len(found) > _NAMED else ""
        channels[SIDE_EFFECT_PREFIX + kind] = ChannelCoverage(
            OBSERVED, [f"{_count(found, kind + ' side effect')} in the run: {shown}{more}"]
        )
    for kind, spans in facts.transport_spans.items():
        key = SIDE_EFFECT_PREFIX + kind
        if key in channels:
            continue
        # Transport shows the model client's library is instrumented; the agent's tools may
        # use another library (requests vs httpx), so it attests nothing about their calls.
        channels[key] = ChannelCoverage(
            UNOBSERVED,
            [
                f"the only {kind} spans ({len(spans)}) are inside model-inference spans, the "
                "model's own transport: they show the model client's library is instrumented, "
                f"not that the agent's own {kind} calls would be recorded; no {key} coverage "
                "declared"
            ],
        )
    return channels


def _apply_declarations(facts: RunFacts, channels: dict[str, ChannelCoverage]) -> None:
    """``rampart.coverage`` on the agent process's resource: channels it vouches for."""
    for key, service in _declarations(facts):
        if not key.startswith(SIDE_EFFECT_PREFIX) or key == EVERY_SIDE_EFFECT:
            continue  # only side-effect channels can be declared; the rest is inferred
        reason = (
            f"declared by service {safe_text(service, 60)!r} in its resource attribute "
            + DECLARATION_KEY
        )
        current = channels.get(key)
        if current is not None and current.state is OBSERVED:
            if reason not in current.reasons:
                current.reasons.append("also " + reason)
            continue
        channels[key] = ChannelCoverage(OBSERVED, [reason], CoverageSource.DECLARED)


def _declarations(facts: RunFacts) -> list[tuple[str, str]]:
    """(key, service) declared by the resources of the agent's own spans (else of any span)."""
    agentic = [
        span
        for span in facts.spans
        if (role := facts.roles.get(span.span_id)) is not None
        and (role.model or role.agent or role.tool)
    ]
    found: list[tuple[str, str]] = []
    seen: set[int] = set()
    for span in agentic or facts.spans:
        resource = span.resource
        if id(resource) in seen:
            continue
        seen.add(id(resource))
        value = resource.attributes.get(DECLARATION_KEY)
        if value is None:
            continue
        keys = value if isinstance(value, (list, tuple)) else str(value).split(",")
        service = resource.service_name or "unknown service"
        found.extend((str(key).strip(), service) for key in keys if str(key).strip())
    return found


# --- integrity ---------------------------------------------------------------------------


def integrity(facts: RunFacts) -> list[IntegrityFinding]:
    """Lost spans (a trace in pieces), spans never ended, dropped attributes or events."""
    findings = _split(facts)
    groups: dict[tuple[FindingKind, tuple[str, ...]], list[Span]] = {}
    roles = facts.roles
    for span in facts.spans:
        unended = span.end_ns is None
        dropped_attrs = span.dropped_attributes_count or (
            span.events and any(event.dropped_attributes_count for event in span.events)
        )
        if not (unended or dropped_attrs or span.dropped_events_count):
            continue  # the usual span: nothing to report, no role needed
        role = roles.get(span.span_id)
        if role is None:
            role = SpanRole()
        if unended:
            groups.setdefault((FindingKind.UNENDED_SPAN, _fed(role, unended=True)), []).append(span)
        if dropped_attrs:
            groups.setdefault((FindingKind.DROPPED_ATTRIBUTES, _fed(role)), []).append(span)
        if span.dropped_events_count:
            groups.setdefault((FindingKind.DROPPED_EVENTS, _fed(role)), []).append(span)
    for (kind, channels), spans in groups.items():
        if not channels:
            continue  # the model's transport feeds no channel of the agent
        findings.append(
            IntegrityFinding(
                kind=kind,
                message=_finding_message(kind, spans),
                span_ids=[span.span_id for span in spans],
                channels=list(channels),
            )
        )
    return findings


def understanding(facts: RunFacts) -> list[IntegrityFinding]:
    """Spans or content not understood, and fragments: what keeps absence unproven.

    A span of an agent-telemetry family that no convention recognizes may be a model call
    or a tool run; content in a form not read may hold tool requests. Either leaves the
    channels a model or tool span feeds partial. A run with no agent, model or tool span is a
    fragment: it can show what happened, never that something did not.
    """
    findings: list[IntegrityFinding] = []
    if facts.not_understood:
        shown = "; ".join(
            f"{', '.join(safe_text(note, 80) for note in notes[:2])} on {_span(span)}"
            for span, notes in facts.not_understood[:_NAMED]
        )
        more = len(facts.not_understood) - _NAMED
        findings.append(
            IntegrityFinding(
                kind=FindingKind.NOT_UNDERSTOOD,
                message=f"not understood: {shown}"
                + (f" and {more} more span(s)" if more > 0 else ""),
                span_ids=[span.span_id for span, _ in facts.not_understood],
                channels=list(MODEL_CHANNELS),
            )
        )
    if facts.spans and facts.fragment:
        findings.append(
            IntegrityFinding(
                kind=FindingKind.FRAGMENT,
                message=(
                    "a fragment, not an agent run: no agent, model-inference or tool span among "
                    f"its {_count(facts.spans, 'span')} (work done outside any traced run, or a "
                    "piece of a run whose trace context was lost)"
                ),
                span_ids=[span.span_id for span in facts.spans[:_NAMED]],
                channels=[EVERY_CHANNEL],
            )
        )
    return findings


def _split(facts: RunFacts) -> list[IntegrityFinding]:
    """More than one tree in one trace: the spans joining them were lost.

    A single top span whose parent is elsewhere (an upstream service) is whole, unless its
    flags say that parent was in the same process: then the run's own root was lost. Traces
    are judged one by one, so a session run of several whole traces is whole.
    """
    ids = {span.span_id for span in facts.spans}
    cut = {span.span_id for span in facts.cycles}
    tops: dict[str, list[Span]] = {}
    for span in facts.spans:
        parent = span.parent_span_id
        if not parent or parent not in ids or span.span_id in cut:
            tops.setdefault(span.trace_id, []).append(span)
    findings: list[IntegrityFinding] = []
    for trace_id, spans in tops.items():
        if len(spans) < 2:
            (top,) = spans
            if top.parent_span_id and top.parent_is_local and top.span_id not in cut:
                findings.append(
                    IntegrityFinding(
                        kind=FindingKind.LOST_ROOT,
                        message=(
                            f"spans are missing from the run: the parent {top.parent_span_id} of "
                            f"its top span {_span(top)} is not in the trace, and the span's flags "
                            "say that parent was in the same process (not an upstream caller)"
                        ),
                        span_ids=[top.span_id],
                        channels=[EVERY_CHANNEL],
                    )
                )
            continue
        missing = sorted({s.parent_span_id for s in spans if s.parent_span_id})
        findings.append(
            IntegrityFinding(
                kind=FindingKind.SPLIT_RUN,
                message=(
                    f"spans are missing from inside the run: trace {trace_id} falls apart into "
                    f"{len(spans)} trees ({_names(spans)}); "
                    + (
                        f"missing parent span(s): {', '.join(missing[:_NAMED])}"
                        + (f" and {len(missing) - _NAMED} more" if len(missing) > _NAMED else "")
                        if missing
                        else "more than one root span"
                    )
                ),
                span_ids=[span.span_id for span in spans],
                channels=[EVERY_CHANNEL],
            )
        )
    if facts.cycles:
        findings.append(
            IntegrityFinding(
                kind=FindingKind.PARENT_CYCLE,
                message=f"span parent links form a cycle at {_names(facts.cycles)}",
                span_ids=[span.span_id for span in facts.cycles],
                channels=[EVERY_CHANNEL],
            )
        )
    return findings


def _fed(role: SpanRole, unended: bool = False) -> tuple[str, ...]:
    """The channels a span's loss feeds.

    A model span feeds the answer and the calls; a tool span its calls (and, never ended,
    the side effects its unexported children may have recorded); a side-effect span its
    kind; a span inside a model span is transport and feeds nothing; any other span
    (agent, generic) every channel, since its unexported children, or the attributes that
    would have classified it, may be what is missing.
    """
    fed: list[str] = []
    if role.transport and not role.model:
        return ()
    if role.model:
        fed.extend(MODEL_CHANNELS)
    if role.tool:
        fed.extend(TOOL_CHANNELS)
        if unended:
            fed.append(EVERY_SIDE_EFFECT)
    fed.extend(SIDE_EFFECT_PREFIX + kind for kind in role.effect_kinds)
    if not fed or role.agent:
        return (EVERY_CHANNEL,)
    return tuple(dict.fromkeys(fed))


def _finding_message(kind: FindingKind, spans: list[Span]) -> str:
    if kind is FindingKind.UNENDED_SPAN:
        return f"{_count(spans, 'span')} never ended: {_names(spans)}"
    if kind is FindingKind.DROPPED_ATTRIBUTES:
        total = sum(
            s.dropped_attributes_count + sum(e.dropped_attributes_count for e in s.events)
            for s in spans
        )
        return f"{total} attribute(s) dropped by the SDK's limits on {_names(spans)}"
    total = sum(span.dropped_events_count for span in spans)
    return f"{total} event(s) dropped by the SDK's limits on {_names(spans)}"


# --- wording -----------------------------------------------------------------------------


def _why_missing(spans: list[Span], prefer: tuple[str, ...] = ()) -> str:
    """Why content is missing: redacted by the instrumentation (named, keys with ``prefer``
    words first), present in a form not understood (named), else not recorded."""
    for words in (prefer, ()) if prefer else ((),):
        for span in spans:
            marker = redaction_hint(span, words)
            if marker is not None and (not words or any(w in marker for w in words)):
                return f"{REDACTED}: {marker} on {_span(span)}"
    for span in spans:
        hint = unread_content(span)
        if hint is not None:
            return f"content is present in {hint} on {_span(span)} but in a form not understood"
    return NOT_RECORDED


def _call_spans(calls: list[ToolCall], facts: RunFacts) -> list[Span]:
    wanted = {span_id for call in calls for span_id in call.span_ids}
    return [span for span in facts.spans if span.span_id in wanted]


def _span(span: Span) -> str:
    return f"{safe_text(span.name, 60)!r} (span {span.span_id})"


def _effect(effect: SideEffect) -> str:
    values = [value for value in effect.details.values() if isinstance(value, (str, int))]
    summary = " ".join(safe_text(value, 80) for value in values[:2]) or "no details"
    return f"{summary} (span {effect.span_id})"


def _names(spans: list[Span]) -> str:
    named = ", ".join(_span(span) for span in spans[:_NAMED])
    return named + (f" and {len(spans) - _NAMED} more" if len(spans) > _NAMED else "")


def _call_names(calls: list[ToolCall]) -> str:
    named = ", ".join(
        safe_text(call.name, 40) + (f" ({safe_text(call.call_id, 40)})" if call.call_id else "")
        for call in calls[:_NAMED]
    )
    return named + (f" and {len(calls) - _NAMED} more" if len(calls) > _NAMED else "")


def _count(items: list, noun: str) -> str:
    return f"{len(items)} {noun}" + ("" if len(items) == 1 else "s")
