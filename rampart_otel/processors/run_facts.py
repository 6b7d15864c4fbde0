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
    """What the earlier jobs found, as coverage and integrity read it."""
    views = run.records
    model_inputs, agent_inputs = inputs
    return RunFacts(
        graph=run.graph,
        roles=span_roles(views, calls),
        model_outputs=[(v.span, v.output, v.read_through) for v in views if v.output is not None],
        tool_spans=tool_spans,
        answer_tool_spans=[v.span for v in views if v.execution is not None and v.execution.answer],
        agent_spans=[view.span for view in views if view.agent],
        conversation_spans=[view.span for view in views if view.agent and view.dispatched],
        continued=turns.continued,
        effects=side_effects.effects,
        transport_spans=side_effects.transport,
        response_span=answer.view.span if answer.view else None,
        answer_unmarked=answer.unmarked,
        not_understood=[
            (view.span, notes)
            for view in views
            if (
                notes := [
                    *view.not_understood,
                    *(view.output.not_understood if view.output else []),
                ]
            )
        ],
        model_inputs=model_inputs,
        agent_inputs=agent_inputs,
        scopes=scopes.scopes,
        declarations=scopes.declarations,
        model_tours={view.span.span_id: view.tour for view in views if view.model},
        history_calls=[call for call in calls.calls if call.from_history],
        joined=joined,
        calls=calls.calls,
        conventions=convention_uses(views),
    )


def convention_uses(views: tuple[SpanRecord, ...]) -> dict[str, ConventionUse]:
    """Spans each convention read, and did not understand, in the run (for ``inspect``).

    A family no convention reads has spans not understood and none read.
    """
    uses: dict[str, ConventionUse] = {}
    for view in views:
        for name in view.readers:
            uses.setdefault(name, ConventionUse()).spans += 1
        for name in view.unread_by:
            uses.setdefault(name, ConventionUse()).not_understood += 1
    return uses


def span_roles(views: tuple[SpanRecord, ...], calls: ToolCalls) -> dict[str, SpanRole]:
    """Roles of the spans that have one; a span left out is generic (feeds every channel)."""
    roles: dict[str, SpanRole] = {}
    for view in views:
        tool = view.span.span_id in calls.executing
        if view.model or view.agent or tool or view.effects or view.in_model:
            roles[view.span.span_id] = SpanRole(
                view.model,
                view.agent,
                tool,
                tuple(effect[0] for effect in view.effects),
                bool(view.in_model),
            )
    return roles
