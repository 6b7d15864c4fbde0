"""Integrity findings: what in a run's trace keeps absence unproven.

Spans lost from inside a run (a trace in pieces, a lost root, a parent cycle), spans never
ended, attributes or events dropped by the SDK's limits, attribute keys recorded twice with
different values (the value read may not be the one meant), spans or content no convention
understood, fragments (no agent, model or tool span), and a span sent twice whose copies
disagree. Each finding names the channels it caps at partial (``channels.cap``), so
coverage assumed later is capped the same way.
The findings are data (``IntegrityFinding.detail``); ``wording`` words them.
"""

from __future__ import annotations

from rampart_otel.channels import (
    EVERY_CHANNEL,
    EVERY_SIDE_EFFECT,
    MODEL_CHANNELS,
    SIDE_EFFECT_PREFIX,
    TOOL_CHANNELS,
)
from rampart_otel.codecs.otlp_ids import RULES, UNDECODABLE, UNDECODABLE_KEY
from rampart_otel.model import (
    ConflictingCopies,
    FindingKind,
    HistoryCalls,
    IntegrityFinding,
    LostRoot,
    NotUnderstoodSpans,
    RefusedSpans,
    Span,
    SpansOf,
    SplitRun,
    UndecodableSpans,
)
from rampart_otel.processors.run_facts import RunFacts, SpanRole

FRAGMENT_IDS = 3  # span ids a fragment finding names: its first spans


def integrity_findings(facts: RunFacts) -> list[IntegrityFinding]:
    """Every integrity finding of the run: what the trace lost (``integrity``), then what
    it holds that is not understood (``understanding``)."""
    return integrity(facts) + understanding(facts)


def integrity(facts: RunFacts) -> list[IntegrityFinding]:
    """Lost spans (a trace in pieces), spans never ended, dropped attributes or events."""
    refused = [span for span in facts.spans if span.refused]
    # First: a placeholder often splits its trace too, and the refusal is the cause to fix.
    findings: list[IntegrityFinding] = []
    if refused:
        unread = [span for span in refused if span.refused == UNDECODABLE]
        if unread:
            findings.append(_undecodable(unread))
        if len(unread) < len(refused):
            findings.append(_refused([span for span in refused if span.refused != UNDECODABLE]))
    findings += _split(facts)
    conflicts = facts.graph.conflicts
    if conflicts:  # a copy forged by whoever learnt the span's ids, or a broken exporter
        findings.append(
            IntegrityFinding(
                kind=FindingKind.CONFLICTING_COPIES,
                message="",
                detail=ConflictingCopies(tuple(conflicts)),
                span_ids=list(dict.fromkeys(first.span_id for first, _ in conflicts)),
                channels=[EVERY_CHANNEL],
            )
        )
    groups: dict[tuple[FindingKind, tuple[str, ...]], list[Span]] = {}
    roles = facts.roles
    for span in facts.spans:
        unended = span.end_ns is None
        dropped_attrs = span.dropped_attributes_count or (
            span.events and any(event.dropped_attributes_count for event in span.events)
        )
        if not (unended or dropped_attrs or span.dropped_events_count or span.repeated_keys):
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
        if span.repeated_keys:  # the value read may not be the one meant
            groups.setdefault((FindingKind.REPEATED_KEYS, _fed(role)), []).append(span)
    for (kind, channels), spans in groups.items():
        if not channels:
            continue  # the model's transport feeds no channel of the agent
        findings.append(
            IntegrityFinding(
                kind=kind,
                message="",
                detail=SpansOf(tuple(spans)),
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
        findings.append(
            IntegrityFinding(
                kind=FindingKind.NOT_UNDERSTOOD,
                message="",
                detail=NotUnderstoodSpans(
                    tuple((span, tuple(notes)) for span, notes in facts.not_understood)
                ),
                span_ids=[span.span_id for span, _ in facts.not_understood],
                channels=list(MODEL_CHANNELS),
            )
        )
    if facts.spans and facts.fragment:
        findings.append(
            IntegrityFinding(
                kind=FindingKind.FRAGMENT,
                message="",
                detail=SpansOf(tuple(facts.spans)),
                span_ids=[span.span_id for span in facts.spans[:FRAGMENT_IDS]],
                channels=[EVERY_CHANNEL],
            )
        )
    if facts.history_calls:
        calls = facts.history_calls
        findings.append(
            IntegrityFinding(
                kind=FindingKind.CONTINUATION,
                message="",
                detail=HistoryCalls(tuple(calls)),
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
                        message="",
                        detail=LostRoot(top),
                        span_ids=[top.span_id],
                        channels=[EVERY_CHANNEL],
                    )
                )
            continue
        missing = sorted({s.parent_span_id for s in spans if s.parent_span_id})
        findings.append(
            IntegrityFinding(
                kind=FindingKind.SPLIT_RUN,
                message="",
                detail=SplitRun(trace_id, tuple(spans), tuple(missing)),
                span_ids=[span.span_id for span in spans],
                channels=[EVERY_CHANNEL],
            )
        )
    if facts.cycles:
        findings.append(
            IntegrityFinding(
                kind=FindingKind.PARENT_CYCLE,
                message="",
                detail=SpansOf(tuple(facts.cycles)),
                span_ids=[span.span_id for span in facts.cycles],
                channels=[EVERY_CHANNEL],
            )
        )
    return findings


def _refused(spans: list[Span]) -> IntegrityFinding:
    """Spans refused for their ids (``codecs/otlp_ids``): only their ids are in the run, what
    they recorded is not, and any channel may be what they held."""
    rules = sorted({RULES.get(span.refused, span.refused) for span in spans})
    return IntegrityFinding(
        kind=FindingKind.REFUSED_SPAN,
        message="",
        detail=RefusedSpans(tuple(spans), tuple(rules)),
        span_ids=[span.span_id for span in spans],
        channels=[EVERY_CHANNEL],
    )


def _undecodable(spans: list[Span]) -> IntegrityFinding:
    """Spans that could not be decoded (``codecs/otlp_salvage``): as for a refused span, only
    their ids are in the run, and any channel may be what they held."""
    whys = sorted({str(span.attributes.get(UNDECODABLE_KEY, "")) for span in spans})
    return IntegrityFinding(
        kind=FindingKind.UNDECODABLE_SPAN,
        message="",
        detail=UndecodableSpans(tuple(spans), tuple(whys)),
        span_ids=[span.span_id for span in spans],
        channels=[EVERY_CHANNEL],
    )


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
