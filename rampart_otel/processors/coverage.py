"""Coverage inference: each channel's state from the run's facts, with the evidence behind it.

The rule every evaluator relies on: NOT_DETECTED only when each channel it reads is
``observed`` for the whole run. So a channel is observed only on positive evidence that
the instrumentation feeding it was there (a span of that kind, captured content, a
declaration), partial when that evidence has a hole, and unobserved otherwise — "nothing
was recorded" never becomes "nothing happened".

The integrity findings (``processors.integrity``: spans lost from inside a run, spans never
ended, dropped attributes or events, spans not understood) then cap the channels they feed
at partial; partial never upgrades unobserved. The reasons' words are ``processors.wording``'s.
"""

from __future__ import annotations

from bisect import bisect_right

from rampart_otel.channels import (
    DECLARATION_KEY,
    EVERY_SIDE_EFFECT,
    OBSERVED,
    PARTIAL,
    SIDE_EFFECT_PREFIX,
    UNOBSERVED,
    ChannelCoverage,
    Coverage,
    CoverageSource,
    cap,
    observability_level,
)
from rampart_otel.conventions.finish_reasons import ToolRequest
from rampart_otel.model import (
    FindingKind,
    IntegrityFinding,
    Response,
    ScopeState,
    SideEffect,
    Span,
    ToolCall,
    ToolCallStatus,
    ToolScope,
)
from rampart_otel.processors.integrity import integrity, understanding
from rampart_otel.processors.run_facts import RunFacts
from rampart_otel.processors.run_graph import RunGraph
from rampart_otel.processors.scopes import resource_declarations, unproven
from rampart_otel.processors.user_input import fully_read
from rampart_otel.processors.wording import (
    ANSWER_KEYS,
    ARGUMENT_KEYS,
    FIX,
    INPUT_KEYS,
    NAMED,
    NOT_RECORDED,
    RESULT_KEYS,
    UNREAD_FIX,
    call_names,
    counted,
    declared_scopes,
    effect_label,
    error_ending,
    finish_reasons_in_words,
    fix_hint,
    scope_gaps,
    span_label,
    span_names,
    unseen_calls,
    why_missing,
)
from rampart_otel.render import safe_text
from rampart_otel.vocabulary import STANDARD_KINDS


def infer_coverage(
    facts: RunFacts, response: Response, calls: list[ToolCall]
) -> tuple[Coverage, list[IntegrityFinding], Coverage]:
    """Every channel's state with its reasons, the integrity findings that capped them, and
    the coverage before the tool scopes and findings capped it (``scoped`` starts there)."""
    channels: dict[str, ChannelCoverage] = {
        "input": _input(facts),
        "response": _response(facts, response),
    }
    tool_calls = channels["tool_calls"] = _tool_calls(facts)
    channels["tool_calls.arguments"] = _captured("arguments", calls, tool_calls, facts)
    channels["tool_calls.results"] = _captured("results", calls, tool_calls, facts)
    channels.update(_side_effects(facts))
    _cap_unseen_calls(facts, tool_calls, channels)
    _apply_declarations(facts, channels)
    findings = integrity(facts) + understanding(facts)
    base = Coverage(channels, observability_level(channels))
    return scoped(base, facts.scopes, findings, scope_names(facts.spans)), findings, base


def scope_names(spans: list[Span]) -> set[str]:
    """The instrumentation scope names of ``spans``: which instrumentations are in use."""
    return {span.scope.name for span in spans if span.scope.name}


def scoped(
    base: Coverage,
    scopes: list[ToolScope],
    findings: list[IntegrityFinding],
    names: set[str],
) -> Coverage:
    """``base`` capped by the tool calls whose side effects were not watched, then by the
    integrity findings: a side effect of a kind is proven absent only where every executed
    tool call's scope was watched for it. Each channel left short of observed carries the
    way to close its gap, for the instrumentations ``names`` (scope names) show."""
    channels = dict(base.channels)
    for kind in STANDARD_KINDS:  # unobserved kinds: say which tools could have hidden one
        key = SIDE_EFFECT_PREFIX + kind
        channel = base.get(key)
        gaps = unproven(scopes, kind)
        if channel.state is UNOBSERVED and gaps:
            channels[key] = ChannelCoverage(
                UNOBSERVED, [*channel.reasons, scope_gaps(kind, gaps)], channel.source
            )
    for key, channel in list(channels.items()):
        if not key.startswith(SIDE_EFFECT_PREFIX) or channel.state is UNOBSERVED:
            continue
        kind = key[len(SIDE_EFFECT_PREFIX) :]
        gaps = unproven(scopes, kind)
        declared = [scope for scope in scopes if scope.state is ScopeState.DECLARED]
        if gaps:
            channels[key] = ChannelCoverage(
                PARTIAL, [*channel.reasons, scope_gaps(kind, gaps)], channel.source
            )
        elif declared:
            channels[key] = ChannelCoverage(
                channel.state, [*channel.reasons, declared_scopes(declared)], channel.source
            )
    if scopes and all(scope.state is ScopeState.DECLARED for scope in scopes):
        # Every place a tool could act is declared: what is left is the agent's own code.
        reason = (
            f"every tool call the run executed is declared ({declared_scopes(scopes)}) and "
            "the run records no side-effect span: what is left is the agent's own code"
        )
        for kind in STANDARD_KINDS:
            key = SIDE_EFFECT_PREFIX + kind
            if key not in channels or channels[key].state is UNOBSERVED:
                channels[key] = ChannelCoverage(OBSERVED, [reason], CoverageSource.DECLARED)
    capped_by: dict[str, str] = {}  # channel key → the cause of the first finding capping it
    for finding in findings:
        before = {key: (channel.state, len(channel.reasons)) for key, channel in channels.items()}
        cap(channels, finding)
        for key, channel in channels.items():
            state, reasons = before.get(key, (UNOBSERVED, 0))
            if len(channel.reasons) == reasons:
                continue  # not capped by this finding
            if finding.kind is FindingKind.NOT_UNDERSTOOD:  # what is missing is there, unread
                capped_by.setdefault(key, "unread")
            elif state is OBSERVED:
                capped_by.setdefault(key, "trace")
    for key, channel in list(channels.items()):
        cause = capped_by.get(key) or _gap_cause(key, channel, scopes)
        # A hint the channel's own inference chose (content there but unread) stands.
        hint = channel.hint or fix_hint(key, names, cause)
        if channel.state is OBSERVED:
            hint = None
        if hint is not None:
            channels[key] = ChannelCoverage(
                channel.state, [*channel.reasons, FIX + hint], channel.source, hint
            )
    return Coverage(channels, observability_level(channels))


def _gap_cause(key: str, channel: ChannelCoverage, scopes: list[ToolScope]) -> str:
    """Why a side-effect channel falls short: a call could go unrecorded (``client``: no
    span of the kind, or a silent tool), a tool ran out of process (``remote``), or the
    trace itself is incomplete (``trace``: an integrity finding capped it)."""
    if not key.startswith(SIDE_EFFECT_PREFIX) or channel.state is UNOBSERVED:
        return "client"
    gaps = unproven(scopes, key[len(SIDE_EFFECT_PREFIX) :])
    if any(scope.state is ScopeState.SILENT for scope in gaps):
        return "client"
    return "remote" if gaps else "trace"


# --- input -------------------------------------------------------------------------------


def _input(facts: RunFacts) -> ChannelCoverage:
    """Observed when every model call's input messages were read whole; the caller's input
    an agent span records shows what the user sent first, not what came during the run."""
    models = facts.model_inputs
    agent_read = next(((s, f) for s, f in facts.agent_inputs if f.texts), None)
    agent_withheld = next(((s, f) for s, f in facts.agent_inputs if f.withheld), None)
    agent_note = ""
    if agent_read:
        agent_note = f"the caller's input was read on agent span {span_label(agent_read[0])}"
    elif agent_withheld:
        span, found = agent_withheld
        where = ", ".join(safe_text(w, 80) for w in found.withheld[:2])
        agent_note = (
            f"agent span {span_label(span)} recorded the caller's input without its content "
            f"({where})"
        )
    if not models:
        if agent_note:
            return ChannelCoverage(
                PARTIAL if agent_read else UNOBSERVED,
                [
                    f"{agent_note}, and the run has no model-inference span whose input "
                    "messages would show every user message"
                ],
            )
        return ChannelCoverage(
            UNOBSERVED, ["no model-inference span in the run: the user's input is not recorded"]
        )
    read = [span for span, found in models if fully_read(found)]
    unrecorded = [span for span, found in models if found is None]
    withheld = [(s, f) for s, f in models if f is not None and f.withheld and not f.not_understood]
    unread = [(s, f) for s, f in models if f is not None and f.not_understood]
    if len(read) == len(models):
        texts = sorted({text for _, found in models if found for text in found.texts})
        return ChannelCoverage(
            OBSERVED,
            [
                f"the input messages of every model call ({len(models)}) were read: "
                f"{counted(texts, 'distinct user message')}"
            ],
        )
    reasons: list[str] = []
    if read:
        reasons.append(f"input messages read on {len(read)} of {len(models)} model calls")
    elif agent_note:
        reasons.append(agent_note)
    if unread:
        span, found = unread[0]
        notes = ", ".join(safe_text(note, 80) for note in found.not_understood[:2])
        more = f" (and {len(unread) - 1} more model span(s))" if len(unread) > 1 else ""
        reasons.append(
            f"input messages in a form not understood ({notes}) on {span_label(span)}{more}"
        )
    if withheld:
        span, found = withheld[0]
        where = ", ".join(safe_text(w, 80) for w in found.withheld[:2])
        reasons.append(
            f"{counted([s for s, _ in withheld], 'model span')} recorded the user's messages "
            f"without their content ({where} on {span_label(span)})"
        )
    if unrecorded:
        reasons.append(
            f"{counted(unrecorded, 'model span')} recorded no input messages "
            f"({why_missing(unrecorded, INPUT_KEYS)}): {span_names(unrecorded)}"
        )
    state = PARTIAL if read or agent_read or unread else UNOBSERVED
    # Only content in a form not read is missing: no capture setting would add it.
    only_unread = bool(unread) and not withheld and not unrecorded
    return ChannelCoverage(state, reasons, hint=UNREAD_FIX if only_unread else None)


# --- response ----------------------------------------------------------------------------


def _response(facts: RunFacts, response: Response) -> ChannelCoverage:
    span = facts.response_span
    if response.text is not None and span is not None:
        role = facts.roles.get(span.span_id)
        where = "output of agent span" if role and role.agent else "text of the last model span"
        return ChannelCoverage(
            OBSERVED, [f"the final answer was captured: {where} {span_label(span)}"]
        )
    models = [span for span, _, _ in facts.model_outputs]
    if models:
        last, output, _ = sorted(facts.model_outputs, key=lambda item: _end(item[0]))[-1]
        why = why_missing([last, *facts.agent_spans], ANSWER_KEYS)
        if output.requests and why == NOT_RECORDED:
            # The run stopped after a turn that asked for tools: there was no answer to read.
            names = ", ".join(safe_text(r.name, 40) for r in output.requests[:NAMED])
            return ChannelCoverage(
                UNOBSERVED,
                [
                    "no final answer in the trace: the last model span "
                    f"{span_label(last)} asked for tools ({names}) and no model span followed "
                    f"it{error_ending(facts.agent_spans)}"
                ],
            )
        return ChannelCoverage(
            UNOBSERVED,
            [
                f"{counted(models, 'model span')} in the run but the answer's text was not "
                f"read: the last one, {span_label(last)}, recorded no output text we read ({why})"
            ],
        )
    if facts.agent_spans:
        return ChannelCoverage(
            UNOBSERVED,
            [
                f"agent span {span_label(facts.agent_spans[-1])} recorded no output and the "
                "run has no model-inference span"
            ],
        )
    return ChannelCoverage(
        UNOBSERVED, ["no agent or model-inference span in the run: the answer is not recorded"]
    )


def _end(span: Span) -> int:
    return span.end_ns or span.start_ns or 0


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
        reasons = [f"{counted(facts.tool_spans, 'tool execution span')} in the run"]
        if facts.answer_tool_spans:
            reasons[0] += (
                f" (and {counted(facts.answer_tool_spans, 'span')} of the agent's answer tool "
                f"{span_names(facts.answer_tool_spans)}, which is no tool call)"
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
                        f"model span {span_label(unmatched[0])} "
                        f"{finish_reasons_in_words(output)}, its output was not read and no "
                        "tool execution span follows it: a tool run without an execution span "
                        "cannot be read",
                    ],
                )
            reasons.append(
                f"the output of {counted(unread, 'model span')} was not read; the calls are "
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
            f"model span {span_label(span)} finished with "
            f"{safe_text(output.finish_reasons[0], 40)!r} but its output was not read: the tools "
            "it asked for cannot be read"
        )
        if len(asked) > 1:
            reason += f" (and {len(asked) - 1} more such model span(s))"
        return ChannelCoverage(PARTIAL, [reason])
    if len(silent) == len(outputs):
        return ChannelCoverage(
            UNOBSERVED,
            [
                f"{counted(outputs, 'model span')} in the run but no output was read "
                f"({why_missing([span for span, _, _ in outputs], ANSWER_KEYS)}) and there "
                "is no tool execution span"
            ],
        )
    if silent:
        return ChannelCoverage(
            PARTIAL,
            [
                f"{len(silent)} of {len(outputs)} model spans recorded neither their output nor "
                f"a finish reason ({span_names([s for s, _ in silent])}): tools they may have "
                "asked for cannot be read"
            ],
        )
    if unknown:
        span, output = unknown[0]
        reason = (
            f"model span {span_label(span)} {finish_reasons_in_words(output)} and its output "
            "was not read"
        )
        if len(unknown) > 1:
            reason += f" (and {len(unknown) - 1} more such model span(s))"
        return ChannelCoverage(PARTIAL, [reason])
    reasons = sorted({reason for _, output in unread for reason in output.finish_reasons})
    return ChannelCoverage(
        OBSERVED,
        [
            f"the output of {counted(unread, 'model span')} was not captured, but each finish "
            f"reason ({safe_text(', '.join(reasons), 60)}) says it asked for no tool"
        ],
    )


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
    graph = facts.graph
    executions = [*facts.tool_spans, *facts.answer_tool_spans]
    tools = [(span.trace_id, span.start_ns or 0) for span in executions]
    unmatched: list[Span] = []
    for span in asking:
        begin = span.start_ns or 0
        until = _next_turn(models, span, graph)
        if not any(
            t == span.trace_id and s >= begin and (until is None or s < until) for t, s in tools
        ):
            unmatched.append(span)
    return unmatched


def _trace_start(item: tuple[str, int, Span]) -> tuple[str, int]:
    return item[0], item[1]


def _next_turn(models: list[tuple[str, int, Span]], span: Span, graph: RunGraph) -> int | None:
    """Start of the first model span after ``span``'s start that is not nested in it."""
    first = bisect_right(models, (span.trace_id, span.start_ns or 0), key=_trace_start)
    for trace, start, other in models[first:]:
        if trace != span.trace_id:
            return None
        if not graph.is_ancestor(span.span_id, other.span_id):
            return start
    return None


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
        keys = ARGUMENT_KEYS if what == "arguments" else RESULT_KEYS
        reason = (
            f"{what} not captured on any of the {counted(relevant, noun)} "
            f"({why_missing(_call_spans(missing, facts), keys)}): {call_names(missing)}"
        )
    else:
        state = PARTIAL
        reason = (
            f"{what} captured on {len(seen)} of {len(relevant)} {noun}s; not on "
            f"{call_names(missing)}"
        )
    reasons = [reason]
    if state is OBSERVED and tool_calls.state is PARTIAL:
        state = PARTIAL
        reasons.append("tool_calls is partial: calls that cannot be read have no " + what)
    return ChannelCoverage(state, reasons)


def _call_spans(calls: list[ToolCall], facts: RunFacts) -> list[Span]:
    wanted = {span_id for call in calls for span_id in call.span_ids}
    return [span for span in facts.spans if span.span_id in wanted]


# --- side effects ------------------------------------------------------------------------


def _side_effects(facts: RunFacts) -> dict[str, ChannelCoverage]:
    channels: dict[str, ChannelCoverage] = {}
    by_kind: dict[str, list[SideEffect]] = {}
    for effect in facts.effects:
        by_kind.setdefault(effect.kind, []).append(effect)
    for kind, found in by_kind.items():
        shown = "; ".join(effect_label(effect) for effect in found[:NAMED])
        more = f" and {len(found) - NAMED} more" if len(found) > NAMED else ""
        channels[SIDE_EFFECT_PREFIX + kind] = ChannelCoverage(
            OBSERVED, [f"{counted(found, kind + ' side effect')} in the run: {shown}{more}"]
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


def _cap_unseen_calls(
    facts: RunFacts, tool_calls: ChannelCoverage, channels: dict[str, ChannelCoverage]
) -> None:
    """With no tool execution span, the calls that ran are known only from the model
    outputs: where those cannot all be read, a call no scope stands for may have acted
    unwatched, so a kind seen elsewhere is not proven absent (``partial``)."""
    if facts.tool_spans or not facts.model_outputs or tool_calls.state is OBSERVED:
        return
    for key, channel in list(channels.items()):
        if key.startswith(SIDE_EFFECT_PREFIX) and channel.state is OBSERVED:
            kind = key[len(SIDE_EFFECT_PREFIX) :]
            channels[key] = ChannelCoverage(
                PARTIAL, [*channel.reasons, unseen_calls(kind)], channel.source
            )


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
    return [
        (key, service or "unknown service")
        for key, service in resource_declarations(agentic or facts.spans)
    ]
