"""What the earlier jobs found in a run, gathered for coverage and integrity.

Normalize classifies each span once and merges the calls, turns, side effects and places;
``run_facts`` carries what they found (each span's role, the model outputs, tool, agent and
side-effect spans) to the processors that judge what the run can attest, so they never
classify a span again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from rampart_otel.conventions import ModelOutput, UserInput
from rampart_otel.model import ConventionUse, SideEffect, Span, ToolCall, ToolScope
from rampart_otel.processors.response import Answer
from rampart_otel.processors.scopes import RunScopes
from rampart_otel.processors.side_effects import SideEffects
from rampart_otel.processors.span_views import ClassifiedRun, SpanRecord
from rampart_otel.processors.tool_calls import ToolCalls
from rampart_otel.processors.turns import Turns
from rampart_otel.processors.user_input import SpanInput
from rampart_otel.run_graph import RunGraph


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

    graph: RunGraph  # the run's spans, each once, and their links
    roles: dict[str, SpanRole]
    model_outputs: list[tuple[Span, ModelOutput, bool]]  # (span, output, read through another)
    tool_spans: list[Span]
    agent_spans: list[Span]
    effects: list[SideEffect]  # the agent's side effects (the model's transport left out)
    transport_spans: dict[str, list[Span]]  # kind → spans inside model spans (left out)
    response_span: Span | None
    # No answer read, the last model call asked for tools, and no span that would hold the
    # answer shows a trace of content missing (``response.Answer.unmarked``).
    answer_unmarked: bool = False
    # (span, what on it was not understood): unknown span families, kinds, content forms.
    not_understood: list[tuple[Span, list[str]]] = field(default_factory=list)
    # Spans of the framework's answer tool (smolagents' final_answer): no tool call, but
    # they show that the turn before them ran its tools where the trace records tool runs.
    answer_tool_spans: list[Span] = field(default_factory=list)
    # Each model call's reading of its user input (None: no input messages recorded), and
    # the caller's input agent spans record (``processors.user_input``).
    model_inputs: list[tuple[Span, UserInput | None]] = field(default_factory=list)
    agent_inputs: list[tuple[Span, UserInput]] = field(default_factory=list)
    # Each executed tool call as a place its side effects could happen (``scopes``).
    scopes: list[ToolScope] = field(default_factory=list)
    # Calls read only from model input history: the run continues an earlier conversation.
    history_calls: list[ToolCall] = field(default_factory=list)
    # Agent spans whose recorded conversation lists the calls the agent ran (Haystack's
    # Agent.run): read whole and captured, they list every call of the run.
    conversation_spans: list[Span] = field(default_factory=list)
    # The model spans another model call of their trace starts after (turns.continued_turns).
    continued: frozenset[str] = frozenset()
    # The traces stitched onto the run (``model.Run.stitched``): pieces of it, not its own.
    joined: frozenset[str] = frozenset()
    # Every tool call of the run (``tool_calls``), as merged.
    calls: list[ToolCall] = field(default_factory=list)
    # Each model span's place in the run's depth-first walk (``SpanRecord.tour``).
    model_tours: dict[str, tuple[int, int]] = field(default_factory=dict)
    # (channel key, service) the run's processes declared (``scopes.RunScopes``).
    declarations: list[tuple[str, str]] = field(default_factory=list)
    # Spans each convention read, and did not understand (``inspect`` lists them).
    conventions: dict[str, ConventionUse] = field(default_factory=dict)

    @property
    def spans(self) -> list[Span]:
        """The run's spans, each once (a span exported twice is read once), in time order."""
        return list(self.graph.spans)

    @property
    def cycles(self) -> list[Span]:
        """Spans whose parent link was cut to break a parent cycle."""
        return list(self.graph.cut)

    @property
    def fragment(self) -> bool:
        """No agent, model or tool span: a piece of a run whose context was lost."""
        return not any(role.model or role.agent or role.tool for role in self.roles.values())


def run_facts(
    run: ClassifiedRun,
    calls: ToolCalls,
    tool_spans: list[Span],
    turns: Turns,
    side_effects: SideEffects,
    scopes: RunScopes,
    answer: Answer,
    inputs: tuple[list[SpanInput], list[tuple[Span, UserInput]]],
    joined: frozenset[str] = frozenset(),
) -> RunFacts:
    """What the earlier jobs found, as coverage and integrity read it: the spans' facts
    gathered in one pass over the run's records (``_SpanFacts``)."""
    found = _span_facts(run.records, calls.executing)
    model_inputs, agent_inputs = inputs
    return RunFacts(
        graph=run.graph,
        roles=found.roles,
        model_outputs=found.model_outputs,
        tool_spans=tool_spans,
        answer_tool_spans=found.answer_tool_spans,
        agent_spans=found.agent_spans,
        conversation_spans=found.conversation_spans,
        continued=turns.continued,
        effects=side_effects.effects,
        transport_spans=side_effects.transport,
        response_span=answer.view.span if answer.view else None,
        answer_unmarked=answer.unmarked,
        not_understood=found.not_understood,
        model_inputs=model_inputs,
        agent_inputs=agent_inputs,
        scopes=scopes.scopes,
        declarations=scopes.declarations,
        model_tours=found.model_tours,
        history_calls=[call for call in calls.calls if call.from_history],
        joined=joined,
        calls=calls.calls,
        conventions=found.conventions,
    )


class _SpanFacts(NamedTuple):
    """The facts of each span ``RunFacts`` carries, in the records' order (``_span_facts``)."""

    roles: dict[str, SpanRole]
    model_outputs: list[tuple[Span, ModelOutput, bool]]
    answer_tool_spans: list[Span]
    agent_spans: list[Span]
    conversation_spans: list[Span]
    not_understood: list[tuple[Span, list[str]]]
    model_tours: dict[str, tuple[int, int]]
    conventions: dict[str, ConventionUse]


def _span_facts(records: tuple[SpanRecord, ...], executing: frozenset[str]) -> _SpanFacts:
    """The spans' facts, gathered in one pass over the run's records: each span's role (a
    span left out is generic: it feeds every channel), the model outputs, the answer
    tool's, agent and conversation spans, what was not understood, the model spans'
    places in the walk, and the spans each convention read and did not understand
    (``inspect`` lists them; a family no convention reads has spans not understood and
    none read)."""
    found = _SpanFacts({}, [], [], [], [], [], {}, {})
    roles, outputs, answer_tools, agents, conversations, notes, tours, uses = found
    for view in records:
        span = view.span
        span_id = span.span_id
        model, agent, output, effects = view.model, view.agent, view.output, view.effects
        tool = span_id in executing
        if model or agent or tool or effects or view.in_model:
            kinds = tuple([effect[0] for effect in effects]) if effects else ()
            roles[span_id] = SpanRole(model, agent, tool, kinds, bool(view.in_model))
        if output is not None:
            outputs.append((span, output, view.read_through))
        if view.execution is not None and view.execution.answer:
            answer_tools.append(span)
        if agent:
            agents.append(span)
            if view.dispatched:
                conversations.append(span)
        if view.not_understood or (output is not None and output.not_understood):
            notes.append((span, [*view.not_understood, *(output.not_understood if output else [])]))
        if model:
            tours[span_id] = view.tour
        for name in view.readers:
            (uses.get(name) or _new_use(uses, name)).spans += 1
        for name in view.unread_by:
            (uses.get(name) or _new_use(uses, name)).not_understood += 1
    return found


def _new_use(uses: dict[str, ConventionUse], name: str) -> ConventionUse:
    """A convention's first use in the run (made once, not once per span it reads)."""
    use = uses[name] = ConventionUse()
    return use
