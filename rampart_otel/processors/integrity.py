"""Integrity findings: what in a run's trace keeps absence unproven.

Spans lost from inside a run (a trace in pieces, a lost root, a parent cycle), spans never
ended, attributes or events dropped by the SDK's limits, spans or content no convention
understood, and fragments (no agent, model or tool span). Each finding names the channels
it caps at partial (``channels.cap``), so coverage assumed later is capped the same way.
"""

from __future__ import annotations

from rampart_otel.channels import (
    EVERY_CHANNEL,
    EVERY_SIDE_EFFECT,
    MODEL_CHANNELS,
    SIDE_EFFECT_PREFIX,
    TOOL_CHANNELS,
)
from rampart_otel.model import FindingKind, IntegrityFinding, Span
from rampart_otel.processors.run_facts import RunFacts, SpanRole
from rampart_otel.processors.wording import NAMED, call_names, counted, span_label, span_names
from rampart_otel.render import safe_text


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
            f"{', '.join(safe_text(note, 80) for note in notes[:2])} on {span_label(span)}"
            for span, notes in facts.not_understood[:NAMED]
        )
        more = len(facts.not_understood) - NAMED
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
                    f"its {counted(facts.spans, 'span')} (work done outside any traced run, or a "
                    "piece of a run whose trace context was lost)"
                ),
                span_ids=[span.span_id for span in facts.spans[:NAMED]],
                channels=[EVERY_CHANNEL],
            )
        )
    if facts.history_calls:
        calls = facts.history_calls
        findings.append(
            IntegrityFinding(
                kind=FindingKind.CONTINUATION,
                message=(
                    f"a continuation, not a whole conversation: the model input history holds "
                    f"{counted(calls, 'tool call')} no span of this run made "
                    f"({call_names(calls)}); the earlier part was recorded elsewhere, so its "
                    "calls and side effects are not all here (read from history as evidence). "
                    "Trace the loop as one run (an agent span around it), or score the traces "
                    "together so they are stitched"
                ),
                span_ids=[span_id for call in calls for span_id in call.span_ids[:1]],
                channels=[*TOOL_CHANNELS, EVERY_SIDE_EFFECT],
            )
        )
    return findings


def _split(facts: RunFacts) -> list[IntegrityFinding]:
    """More than one tree in one trace: the spans joining them were lost.

    A single top span whose parent is elsewhere (an upstream service) is whole, unless its
    flags say that parent was in the same process: then the run's own root was lost. Traces
    are judged one by one, so a session run of several whole traces is whole.
    """
    cut = {span.span_id for span in facts.cycles}
    tops = facts.graph.roots_by_trace()
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
                            f"its top span {span_label(top)} is not in the trace, and the span's "
                            "flags say that parent was in the same process (not an upstream "
                            "caller)"
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
                    f"{len(spans)} trees ({span_names(spans)}); "
                    + (
                        f"missing parent span(s): {', '.join(missing[:NAMED])}"
                        + (f" and {len(missing) - NAMED} more" if len(missing) > NAMED else "")
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
                message=f"span parent links form a cycle at {span_names(facts.cycles)}",
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
        return f"{counted(spans, 'span')} never ended: {span_names(spans)}"
    if kind is FindingKind.DROPPED_ATTRIBUTES:
        total = sum(
            s.dropped_attributes_count + sum(e.dropped_attributes_count for e in s.events)
            for s in spans
        )
        return f"{total} attribute(s) dropped by the SDK's limits on {span_names(spans)}"
    total = sum(span.dropped_events_count for span in spans)
    return f"{total} event(s) dropped by the SDK's limits on {span_names(spans)}"
