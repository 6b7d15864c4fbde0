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
    found = _SpanFacts(calls.executing)
    for view in run.records:
        found.add(view)
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


class _SpanFacts:
    """The facts of each span ``RunFacts`` carries, gathered span by span in the records'
    order: each span's role (a span left out is generic: it feeds every channel), the
    model outputs, the answer tool's, agent and conversation spans, what was not
    understood, the model spans' places in the walk, and the spans each convention read
    and did not understand (``inspect`` lists them; a family no convention reads has spans
    not understood and none read)."""

    __slots__ = (
        "agent_spans",
        "answer_tool_spans",
        "conventions",
        "conversation_spans",
        "executing",
        "model_outputs",
        "model_tours",
        "not_understood",
        "roles",
    )

    def __init__(self, executing: frozenset[str]) -> None:
        self.executing = executing
        self.roles: dict[str, SpanRole] = {}
        self.model_outputs: list[tuple[Span, ModelOutput, bool]] = []
        self.answer_tool_spans: list[Span] = []
        self.agent_spans: list[Span] = []
        self.conversation_spans: list[Span] = []
        self.not_understood: list[tuple[Span, list[str]]] = []
        self.model_tours: dict[str, tuple[int, int]] = {}
        self.conventions: dict[str, ConventionUse] = {}

    def add(self, view: SpanRecord) -> None:
        span = view.span
        span_id = span.span_id
        model, agent, output, effects = view.model, view.agent, view.output, view.effects
        tool = span_id in self.executing
        if model or agent or tool or effects or view.in_model:
            kinds = tuple([effect[0] for effect in effects])
            self.roles[span_id] = SpanRole(model, agent, tool, kinds, bool(view.in_model))
        if output is not None:
            self.model_outputs.append((span, output, view.read_through))
        if view.execution is not None and view.execution.answer:
            self.answer_tool_spans.append(span)
        if agent:
            self.agent_spans.append(span)
            if view.dispatched:
                self.conversation_spans.append(span)
        if view.not_understood or (output is not None and output.not_understood):
            notes = [*view.not_understood, *(output.not_understood if output else [])]
            self.not_understood.append((span, notes))
        if model:
            self.model_tours[span_id] = view.tour
        for name in view.readers:
            self._use(name).spans += 1
        for name in view.unread_by:
            self._use(name).not_understood += 1

    def _use(self, name: str) -> ConventionUse:
        use = self.conventions.get(name)
        if use is None:  # made once per convention (not once per span, then thrown away)
            use = self.conventions[name] = ConventionUse()
        return use
