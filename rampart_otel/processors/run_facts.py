"""What normalize's classification of a run tells coverage and integrity.

Normalize classifies each span once; these plain types carry what it found (each span's
role, the model outputs, tool, agent and side-effect spans) to the processors that judge
what the run can attest, so they never classify a span again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from rampart_otel.conventions import ModelOutput, UserInput
from rampart_otel.model import SideEffect, Span, ToolCall, ToolScope
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
    # The model spans another model call of their trace starts after (scopes.continued_turns).
    continued: frozenset[str] = frozenset()

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
