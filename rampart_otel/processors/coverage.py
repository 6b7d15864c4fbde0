"""Coverage inference: each channel's state from the run's facts, with the evidence behind it.

The rule every evaluator relies on: NOT_DETECTED only when each channel it reads is
``observed`` for the whole run. So a channel is observed only on positive evidence that
the instrumentation feeding it was there (a span of that kind, captured content, a
declaration), partial when that evidence has a hole, and unobserved otherwise — "nothing
was recorded" never becomes "nothing happened".

This module decides the channels of what the trace records of the conversation (``input``,
``response``, ``tool_calls`` and its arguments and results) and gathers the run's places
of harm (``places.RunPlaces``), from which ``places.side_effect_decisions`` decides every
side-effect channel. The integrity findings (``processors.integrity``) then cap the
channels they feed at partial; partial never upgrades unobserved. Decisions are data
(``reasons``); ``wording`` renders them.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Mapping
from dataclasses import replace

from rampart_otel.channels import (
    OBSERVED,
    PARTIAL,
    UNOBSERVED,
    ChannelState,
    ReasonCode,
)
from rampart_otel.conventions import ModelOutput, UserInput
from rampart_otel.conventions.finish_reasons import ToolRequest
from rampart_otel.model import (
    NESTED_AGENT,
    REMOTE_AGENT,
    IntegrityFinding,
    Response,
    ScopeState,
    SideEffect,
    Span,
    ToolCall,
    ToolCallStatus,
)
from rampart_otel.places import CallsUnknown, RunPlaces, run_decisions
from rampart_otel.processors.run_facts import RunFacts
from rampart_otel.processors.span_views import inside
from rampart_otel.processors.user_input import fully_read
from rampart_otel.reasons import (
    AnswerTools,
    AnswerUnread,
    AskedTools,
    Captured,
    Decision,
    FinishReasons,
    ModelCount,
    Notes,
    Output,
    OutputsRead,
    Scopes,
    Texts,
    Why,
    Withheld,
)
from rampart_otel.scoring_plan import FULL_READING, ScoringPlan


def infer_coverage(
    facts: RunFacts,
    findings: list[IntegrityFinding],
    response: Response,
    calls: list[ToolCall],
    plan: ScoringPlan = FULL_READING,
) -> tuple[dict[str, Decision], RunPlaces]:
    """Every channel's decision with its reasons, capped by the run's integrity
    ``findings``, and the run's places (side-effect channels are
    ``places.side_effect_decisions`` of them). ``plan``: the channels to decide
    (``scoring_plan``); the others are left out."""
    channels: dict[str, Decision] = {}
    if plan.decides("input"):
        channels["input"] = _input_decision(facts)
    if plan.decides("response"):
        channels["response"] = _response_decision(facts, response)
    tool_calls = channels["tool_calls"] = _tool_calls_decision(facts)
    for part in ("arguments", "results"):
        if plan.decides(f"tool_calls.{part}"):
            channels[f"tool_calls.{part}"] = _captured_decision(
                part, calls, tool_calls.state, facts
            )
    names = scope_names(facts.spans)
    places = RunPlaces(
        scopes=tuple(facts.scopes),
        calls=tuple(calls),
        effects=_by_kind(facts.effects),
        transport={kind: tuple(spans) for kind, spans in facts.transport_spans.items()},
        declarations=tuple(facts.declarations),
        calls_unknown=_calls_unknown(facts, tool_calls),
        findings=tuple(findings),
        scope_names=names,
        plan=plan,
    )
    return run_decisions(channels, places), places


def scope_names(spans: list[Span]) -> frozenset[str]:
    """The instrumentation scope names of ``spans``: which instrumentations are in use."""
    return frozenset({span.scope.name for span in spans if span.scope.name})


# --- input -------------------------------------------------------------------------------


def _input_decision(facts: RunFacts) -> Decision:
    """Observed when every model call's input messages were read whole; the caller's input
    an agent span records shows what the user sent first, not what came during the run."""
    models = facts.model_inputs
    agent = _agent_input(facts)
    if not models:
        return _input_without_models(agent, _agent_unread(facts))
    read = [span for span, found in models if fully_read(found)]
    if len(read) < len(models):
        return _input_gaps(models, read, agent)
    texts = sorted({text for _, found in models if found for text in found.texts})
    spans = tuple(span for span, _ in models)
    return Decision(OBSERVED, (Why(ReasonCode.INPUT_READ, spans, Texts(tuple(texts))),))


def _agent_input(facts: RunFacts) -> Why | None:
    """The caller's input an agent span records: read (its texts), else withheld."""
    for span, found in facts.agent_inputs:
        if found.texts:
            return Why(ReasonCode.INPUT_AGENT_READ, (span,), Withheld())
    for span, found in facts.agent_inputs:
        if found.withheld:
            withheld = Withheld(tuple(found.withheld))
            return Why(ReasonCode.INPUT_AGENT_WITHHELD, (span,), withheld)
    return None


def _agent_unread(facts: RunFacts) -> Why | None:
    """The caller's input an agent span records in a form not read, where it is not read."""
    unread = [(span, found) for span, found in facts.agent_inputs if found.not_understood]
    if not unread:
        return None
    notes = Notes(tuple(unread[0][1].not_understood))
    return Why(ReasonCode.INPUT_NOT_UNDERSTOOD, tuple(span for span, _ in unread), notes)


def _input_without_models(agent: Why | None, unread: Why | None) -> Decision:
    """No model span: the agent spans' record of the caller's input is all there is. Input
    there in a form not read leaves the channel partial, never read as no input."""
    if agent is None and unread is None:
        return Decision(UNOBSERVED, (Why(ReasonCode.INPUT_NO_MODEL_SPAN),))
    whys: list[Why] = []
    if agent is not None and agent.code is ReasonCode.INPUT_AGENT_READ:
        whys.append(replace(agent, code=ReasonCode.INPUT_AGENT_ONLY_READ))
    elif agent is not None:
        whys.append(replace(agent, code=ReasonCode.INPUT_AGENT_ONLY_WITHHELD))
    if unread is not None:
        whys.append(unread)
    read = agent is not None and agent.code is ReasonCode.INPUT_AGENT_READ
    state = PARTIAL if read or unread is not None else UNOBSERVED
    return Decision(state, tuple(whys), unread_only=agent is None)


def _input_gaps(
    models: list[tuple[Span, UserInput | None]], read: list[Span], agent: Why | None
) -> Decision:
    """Some model call's input messages were not read whole: which, and why."""
    unrecorded = tuple(span for span, found in models if found is None)
    withheld = [(s, f) for s, f in models if f is not None and f.withheld and not f.not_understood]
    unread = [(s, f) for s, f in models if f is not None and f.not_understood]
    whys: list[Why] = []
    if read:
        whys.append(Why(ReasonCode.INPUT_READ_SOME, tuple(read), ModelCount(len(models))))
    elif agent is not None:
        whys.append(agent)
    if unread:
        notes = Notes(tuple(unread[0][1].not_understood))
        whys.append(Why(ReasonCode.INPUT_NOT_UNDERSTOOD, tuple(s for s, _ in unread), notes))
    if withheld:
        where = Withheld(tuple(withheld[0][1].withheld))
        whys.append(Why(ReasonCode.INPUT_WITHHELD, tuple(s for s, _ in withheld), where))
    if unrecorded:
        whys.append(Why(ReasonCode.INPUT_NOT_RECORDED, unrecorded))
    agent_read = agent is not None and agent.code is ReasonCode.INPUT_AGENT_READ
    state = PARTIAL if read or agent_read or unread else UNOBSERVED
    # Only content in a form not read is missing: no capture setting would add it.
    only_unread = bool(unread) and not withheld and not unrecorded
    return Decision(state, tuple(whys), unread_only=only_unread)


# --- response ----------------------------------------------------------------------------


def _response_decision(facts: RunFacts, response: Response) -> Decision:
    span = facts.response_span
    if response.text is not None and span is not None:
        role = facts.roles.get(span.span_id)
        agent = role is not None and role.agent
        code = ReasonCode.RESPONSE_AGENT_OUTPUT if agent else ReasonCode.RESPONSE_MODEL_TEXT
        return Decision(OBSERVED, (Why(code, (span,)),))
    if facts.model_outputs:
        return Decision(UNOBSERVED, (_answer_not_read(facts),))
    if facts.agent_spans:
        why = Why(ReasonCode.RESPONSE_AGENT_NO_OUTPUT, (facts.agent_spans[-1],))
        return Decision(UNOBSERVED, (why,))
    return Decision(UNOBSERVED, (Why(ReasonCode.RESPONSE_NO_SPAN),))


def _answer_not_read(facts: RunFacts) -> Why:
    """Why the model spans show no answer: the last one asked for tools and the run
    stopped there (no answer to read), or its text was not read."""
    last, output, _ = sorted(facts.model_outputs, key=lambda item: _end(item[0]))[-1]
    agents = facts.agent_spans
    if output.requests and facts.answer_unmarked:
        asked = AskedTools(tuple(output.requests), tuple(agents))
        return Why(ReasonCode.RESPONSE_ENDED_ASKING_TOOLS, (last,), asked)
    models = tuple(span for span, _, _ in facts.model_outputs)
    return Why(ReasonCode.RESPONSE_NOT_READ, (last,), AnswerUnread(models, tuple(agents)))


def _end(span: Span) -> int:
    return span.end_ns or span.start_ns or 0


# --- tool calls --------------------------------------------------------------------------


def _tool_calls_decision(facts: RunFacts) -> Decision:
    """The calls the run's spans show; partial where a call handed its task to a remote
    agent whose spans are not in the trace, or to a nested agent whose run is not in it
    (that agent's own calls are not read)."""
    decision = _calls_read(facts)
    if decision.state is UNOBSERVED:
        return decision
    short: list[Why] = []
    remote = [
        scope
        for scope in facts.scopes
        if scope.state is ScopeState.OUT_OF_PROCESS and scope.remote == REMOTE_AGENT
    ]
    if remote:
        ids = tuple(scope.span_id for scope in remote if scope.span_id)
        why = Why(ReasonCode.TOOL_CALLS_REMOTE_AGENT, data=Scopes(tuple(remote)), ids=ids)
        short.append(why)
    # A framework's agent-as-tool call whose nested agent's run is not in the run: the
    # calls that agent made are not read, whether or not the run records tool executions.
    nested = tuple(scope for scope in facts.scopes if scope.remote == NESTED_AGENT)
    if nested:
        ids = tuple(scope.span_id for scope in nested if scope.span_id)
        why = Why(ReasonCode.TOOL_CALLS_NESTED_AGENT, data=Scopes(nested), ids=ids)
        short.append(why)
    # A call the model was sent a result for that no span of a run recording its tool runs
    # executed ran where the trace does not show: what it called there (an agent's calls,
    # a delegation's) is not read.
    elsewhere = tuple(
        scope
        for scope in facts.scopes
        if scope.span_id is None
        and scope.state is not ScopeState.DECLARED
        and scope.remote != NESTED_AGENT
    )
    if elsewhere and facts.tool_spans:
        why = Why(ReasonCode.TOOL_CALLS_RAN_ELSEWHERE, data=Scopes(elsewhere))
        short.append(why)
    for call_id, calls in _ambiguous(facts.calls).items():
        # Two tools claim one id in one turn: which request each execution answers, and so
        # which arguments and results are whose, the trace cannot tell.
        tools = tuple(dict.fromkeys(call.name for call in calls))
        spans = tuple(_call_spans(calls, facts))
        why = Why(ReasonCode.TOOL_CALLS_AMBIGUOUS_ID, spans, Texts((call_id, *tools)))
        short.append(why)
    if not short:
        return decision
    return replace(decision, state=PARTIAL, whys=(*decision.whys, *short))


def _ambiguous(calls: list[ToolCall]) -> dict[str, list[ToolCall]]:
    """Calls grouped by the call id two tools claimed in one turn (``ambiguous_id``)."""
    found: dict[str, list[ToolCall]] = {}
    for call in calls:
        if call.ambiguous_id is not None:
            found.setdefault(call.ambiguous_id, []).append(call)
    return found


def _calls_read(facts: RunFacts) -> Decision:
    unread = _unread_outputs(facts)
    if facts.tool_spans or (facts.answer_tool_spans and unread):
        return _from_executions(facts, unread)
    # Every agent span's conversation read whole: another agent's may hold other calls.
    conversations = facts.conversation_spans
    if not facts.model_outputs and conversations and len(conversations) == len(facts.agent_spans):
        spans = tuple(facts.conversation_spans)
        return Decision(OBSERVED, (Why(ReasonCode.TOOL_CALLS_AGENT_CONVERSATION, spans),))
    if not facts.model_outputs:
        return Decision(UNOBSERVED, (Why(ReasonCode.TOOL_CALLS_NO_SPAN),))
    if not unread:
        through = sum(1 for _, _, read_through in facts.model_outputs if read_through)
        counts = OutputsRead(len(facts.model_outputs), through)
        return Decision(OBSERVED, (Why(ReasonCode.TOOL_CALLS_OUTPUTS_READ, data=counts),))
    return _from_unread_outputs(facts, unread)


def _unread_outputs(facts: RunFacts) -> list[tuple[Span, ModelOutput]]:
    """Outputs that do not list the calls: not captured, or captured without the calls the
    finish reason says were asked for (a form not read)."""
    return [
        (span, output)
        for span, output, through in facts.model_outputs
        if not through
        and (
            not output.readable
            or (output.tool_request is ToolRequest.TOOLS and not output.requests)
        )
    ]


def _from_executions(facts: RunFacts, unread: list[tuple[Span, ModelOutput]]) -> Decision:
    """The calls are read from the tool execution spans, unless a turn whose output was not
    read asked for tools and no execution span follows it."""
    spans = tuple(facts.tool_spans)
    answer_tools = AnswerTools(tuple(facts.answer_tool_spans))
    first = Why(ReasonCode.TOOL_CALLS_EXECUTION_SPANS, spans, answer_tools)
    if not unread:
        return Decision(OBSERVED, (first,))
    asking = [span for span, output in unread if output.tool_request is not ToolRequest.NO_TOOLS]
    unmatched = _asked_without_execution(facts, asking)
    if unmatched:
        output = next(o for s, o in unread if s is unmatched[0])
        why = Why(ReasonCode.TOOL_CALLS_ASKED_WITHOUT_EXECUTION, tuple(unmatched), Output(output))
        return Decision(PARTIAL, (first, why))
    unread_spans = tuple(span for span, _ in unread)
    return Decision(
        OBSERVED, (first, Why(ReasonCode.TOOL_CALLS_READ_FROM_EXECUTIONS, unread_spans))
    )


def _from_unread_outputs(facts: RunFacts, unread: list[tuple[Span, ModelOutput]]) -> Decision:
    """No tool execution span: the calls are read from the model outputs, some unread."""
    outputs = facts.model_outputs
    asked = [(s, o) for s, o in unread if o.tool_request is ToolRequest.TOOLS]
    silent = tuple(s for s, o in unread if not o.finish_reasons)
    unknown = [
        (s, o) for s, o in unread if o.finish_reasons and o.tool_request is ToolRequest.UNKNOWN
    ]
    if asked:
        reason = FinishReasons((asked[0][1].finish_reasons[0],))
        return _partial(Why(ReasonCode.TOOL_CALLS_ASKED_UNREAD, tuple(s for s, _ in asked), reason))
    if len(silent) == len(outputs):
        spans = tuple(span for span, _, _ in outputs)
        return Decision(UNOBSERVED, (Why(ReasonCode.TOOL_CALLS_NO_OUTPUT_READ, spans),))
    if silent:
        models = ModelCount(len(outputs))
        return _partial(Why(ReasonCode.TOOL_CALLS_SILENT_OUTPUTS, silent, models))
    if unknown:
        output = Output(unknown[0][1])
        return _partial(
            Why(ReasonCode.TOOL_CALLS_FINISH_UNCLEAR, tuple(s for s, _ in unknown), output)
        )
    reasons = sorted({reason for _, output in unread for reason in output.finish_reasons})
    why = Why(
        ReasonCode.TOOL_CALLS_NO_TOOLS_ASKED,
        tuple(s for s, _ in unread),
        FinishReasons(tuple(reasons)),
    )
    return Decision(OBSERVED, (why,))


def _partial(why: Why) -> Decision:
    return Decision(PARTIAL, (why,))


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
    tours = facts.model_tours
    executions = [*facts.tool_spans, *facts.answer_tool_spans]
    tools = sorted((span.trace_id, span.start_ns or 0) for span in executions)
    unmatched: list[Span] = []
    for span in asking:
        begin = span.start_ns or 0
        until = _next_turn(models, span, tours)
        # The first tool span of this trace starting at or after the turn (a bisection):
        # the turn ran a tool when it starts before the next turn.
        first = bisect_left(tools, (span.trace_id, begin))
        ran = (
            first < len(tools)
            and tools[first][0] == span.trace_id
            and (until is None or tools[first][1] < until)
        )
        if not ran:
            unmatched.append(span)
    return unmatched


def _trace_start(item: tuple[str, int, Span]) -> tuple[str, int]:
    return item[0], item[1]


def _next_turn(
    models: list[tuple[str, int, Span]], span: Span, tours: Mapping[str, tuple[int, int]]
) -> int | None:
    """Start of the first model span after ``span``'s start that is not nested in it
    (``tours``: each model span's place in the run's depth-first walk)."""
    first = bisect_right(models, (span.trace_id, span.start_ns or 0), key=_trace_start)
    here = tours.get(span.span_id)
    for trace, start, other in models[first:]:
        if trace != span.trace_id:
            return None
        there = tours.get(other.span_id)
        if here is None or there is None or not inside(there, here):
            return start
    return None


def _captured_decision(
    what: str, calls: list[ToolCall], tool_calls: ChannelState, facts: RunFacts
) -> Decision:
    if tool_calls is UNOBSERVED:
        return Decision(
            UNOBSERVED, (Why(ReasonCode.CALLS_TOOL_CALLS_UNOBSERVED, data=Captured(what)),)
        )
    relevant = _relevant_calls(what, calls, facts)
    if not relevant:
        why = Why(ReasonCode.CALLS_NONE_SEEN, data=Captured(what, state=tool_calls))
        return Decision(tool_calls, (why,))
    seen = [call for call in relevant if _call_captured(what, call)]
    missing = [call for call in relevant if not _call_captured(what, call)]
    counts = Captured(what, len(relevant), len(seen), tuple(missing))
    if missing:
        code = ReasonCode.CALLS_CAPTURED_SOME if seen else ReasonCode.CALLS_CAPTURED_NONE
        state = PARTIAL if seen else UNOBSERVED
        return Decision(state, (Why(code, tuple(_call_spans(missing, facts)), counts),))
    captured = Why(ReasonCode.CALLS_CAPTURED, data=counts)
    if tool_calls is PARTIAL:
        partial = Why(ReasonCode.CALLS_TOOL_CALLS_PARTIAL, data=Captured(what))
        return Decision(PARTIAL, (captured, partial))
    return Decision(OBSERVED, (captured,))


def _relevant_calls(what: str, calls: list[ToolCall], facts: RunFacts) -> list[ToolCall]:
    """The calls whose ``what`` could be captured. A requested call never executed has no
    result to capture — when execution is instrumented at all; without tool spans a
    requested call may have run unseen."""
    if what == "arguments":
        return calls
    return [
        call
        for call in calls
        if call.status is not ToolCallStatus.REQUESTED or not facts.tool_spans
    ]


def _call_captured(what: str, call: ToolCall) -> bool:
    return call.arguments_captured if what == "arguments" else call.result_captured


def _call_spans(calls: list[ToolCall], facts: RunFacts) -> list[Span]:
    wanted = {span_id for call in calls for span_id in call.span_ids}
    return [span for span in facts.spans if span.span_id in wanted]


# --- side effects: the run-level facts the places carry ----------------------------------


def _by_kind(effects: list[SideEffect]) -> dict[str, tuple[SideEffect, ...]]:
    by_kind: dict[str, list[SideEffect]] = {}
    for effect in effects:
        by_kind.setdefault(effect.kind, []).append(effect)
    return {kind: tuple(found) for kind, found in by_kind.items()}


def _calls_unknown(facts: RunFacts, tool_calls: Decision) -> CallsUnknown | None:
    """With no tool execution span, the calls that ran are known only from the model
    outputs: where those cannot all be read, or no model call is recorded at all, a call no
    place stands for may have acted unwatched, so a kind seen elsewhere is not proven
    absent (``partial``). So too, with execution spans, after a model turn whose output was
    not read asked for tools and no execution span follows it: the tool it ran may have
    been traced elsewhere (another service, another trace) or not at all."""
    if tool_calls.state is OBSERVED:
        return None
    if facts.tool_spans:
        asked = {
            span_id
            for why in tool_calls.whys
            if why.code is ReasonCode.TOOL_CALLS_ASKED_WITHOUT_EXECUTION
            for span_id in why.ids or tuple(span.span_id for span in why.spans)
        }
        # Turns whose finish reason says they asked; and one that may have asked ('stop'
        # where it can mean either) when the conversation went on after it: the model is
        # called again only with something new to read, a tool's result most of all. A
        # last turn that may have asked is taken as the answer.
        turns = tuple(
            span
            for span, output, _ in facts.model_outputs
            if span.span_id in asked
            and (
                output.tool_request is ToolRequest.TOOLS
                or (output.tool_request is ToolRequest.UNKNOWN and span.span_id in facts.continued)
            )
        )
        return CallsUnknown(ReasonCode.SIDE_EFFECT_ASKED_UNRUN, turns) if turns else None
    if not facts.model_outputs and not facts.agent_spans:
        return None  # a fragment: its own finding caps every channel
    # No model call either: which tools ran is not recorded at all.
    if facts.model_outputs:
        return CallsUnknown(ReasonCode.SIDE_EFFECT_UNSEEN_CALLS)
    return CallsUnknown(ReasonCode.SIDE_EFFECT_NO_CALLS_RECORDED)
