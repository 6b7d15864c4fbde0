"""The convention interface: what a family implements (``Convention``: a reader of one span
at a time, behind ``Gate``s) and what it reports (``SpanReport``, ``ModelOutput``,
``ToolReport``, side-effect details, ``History``, ``UserInput``). Plain data, made by the
readers and never changed by the processors that merge it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from rampart_otel.conventions.agent_tools import executes_agent, requests_agent
from rampart_otel.conventions.finish_reasons import ToolRequest, combine
from rampart_otel.conventions.helpers import as_str, parse_arguments, redacted
from rampart_otel.model import Span, StatusCode


@dataclass(slots=True)
class ToolReport:
    """One convention's account of one tool call, as one span shows it."""

    name: str
    call_id: str | None
    arguments: dict[str, Any] | str | None
    arguments_captured: bool
    result: Any
    result_captured: bool
    executed: bool  # False: a model asked for it; True: the span ran it
    error: bool
    span: Span
    convention: str
    # The framework's own tool for delivering the agent's answer (smolagents' final_answer):
    # its span shows tool runs are traced, but it is the answer, not a tool call.
    answer: bool = False
    # A traced function (not a tool by any convention of its own): it is the execution of a
    # call only when a model asked for a tool of its name before it; otherwise no call.
    candidate: bool = False
    # The framework runs another agent as this tool (an agent used as a tool, a delegation
    # to a coworker): no code of the user's runs in it but that agent's, whose own calls
    # nest under it.
    agent_tool: bool = False
    # Read from a span's own record of the conversation: the message positions after which
    # the call was asked for and by which its result came back (``ToolCall.steps``).
    steps: tuple[int, int] | None = None
    # Where the framework qualifies a function's own name (Semantic Kernel's
    # ``<plugin>-<function>``): the qualifier and the function's own name (``ToolCall``'s).
    namespace: str | None = None
    local_name: str | None = None

    @classmethod
    def requested(
        cls, span: Span, convention: str, name: Any, call_id: Any, raw: Any, captured: bool
    ) -> ToolReport:
        """A call a model asked for; ``raw`` arguments are parsed only when captured. It is
        an agent-as-tool call when the request offered the tool as one (``agent_tools``)."""
        tool = as_str(name) or ""
        return cls(
            name=tool,
            call_id=as_str(call_id) or None,
            arguments=parse_arguments(raw) if captured else None,
            arguments_captured=captured,
            result=None,
            result_captured=False,
            executed=False,
            error=False,
            span=span,
            convention=convention,
            agent_tool=requests_agent(span, tool),
        )

    @classmethod
    def execution(
        cls,
        span: Span,
        convention: str,
        name: Any,
        call_id: Any,
        *,
        arguments: dict[str, Any] | str | None,
        arguments_captured: bool,
        result: Any,
        result_captured: bool,
        failed: bool = False,
        ran: bool = True,
        answer: bool = False,
        candidate: bool = False,
    ) -> ToolReport:
        """A call the span ran, its arguments and result as the family reads them (captured:
        recorded, even when empty). It failed when the span's status is ERROR or ``failed``,
        the family's own sign (``error.type``, a result that says so). ``ran=False``: the
        span shows the call and its outcome but did not run it (a tool span whose child
        runs it, a call deferred for approval), so it is asked for and has no error. A
        framework's agent-as-tool span is marked (``agent_tools``)."""
        return cls(
            name=as_str(name) or "",
            call_id=as_str(call_id) or None,
            arguments=arguments,
            arguments_captured=arguments_captured,
            result=result,
            result_captured=result_captured,
            executed=ran,
            error=ran and (span.status_code == StatusCode.ERROR or failed),
            span=span,
            convention=convention,
            answer=answer,
            candidate=candidate,
            agent_tool=executes_agent(span),
        )


@dataclass(slots=True)
class ModelOutput:
    """What one model-inference span says the model produced.

    ``readable`` means the trace lists the output's parts, so the tool calls the model asked
    for are all known (a readable output with no tool call asked for none). Text may still
    be missing when content capture is off (parts recorded without their content).
    """

    readable: bool
    text: str | None = None  # assistant text; None when not captured
    text_captured: bool = False
    requests: list[ToolReport] = field(default_factory=list)
    finish_reasons: list[str] = field(default_factory=list)
    convention: str = ""
    provider: str | None = None  # as the span names it: "openai", "gcp.gemini", ...
    source: str | None = None  # the instrumentation scope that wrote it, when it matters
    # Content present on the span in a form not read: "part type 'x' in gen_ai.output.messages".
    not_understood: list[str] = field(default_factory=list)
    # The provider's id of the response (``gen_ai.response.id``): two spans of one trace with
    # the same one are two instrumentations' layers of one model call.
    response_id: str | None = None

    @property
    def tool_request(self) -> ToolRequest:
        """What the finish reasons say about tool requests (``finish_reasons.classify``)."""
        return combine(self.finish_reasons, self.provider, self.source)


# kind, details, convention, and the details derived: key → the attribute(s) read for it.
SideEffectDetails = tuple[str, dict[str, Any], str, dict[str, str]]


@dataclass(slots=True)
class SpanReport:
    """What one convention reads on one span; a span no convention reports is generic.

    A report with no role and nothing in it still says "recognized": a chain or workflow
    span of a known family, which feeds no channel. ``not_understood`` names content or
    markers of the family that the reader could not make sense of.
    """

    convention: str
    model: bool = False
    agent: bool = False
    output: ModelOutput | None = None  # model spans (or spans holding model output)
    execution: ToolReport | None = None
    effects: list[SideEffectDetails] = field(default_factory=list)
    answer: str | None = None  # the agent's answer, on an agent span, when captured
    not_understood: list[str] = field(default_factory=list)
    # Calls a framework span hands to its tools (LangGraph's ToolNode input), as requested
    # calls: they name and identify what the tool spans under it run. Not a model output.
    dispatched: list[ToolReport] = field(default_factory=list)
    # The caller's span, which a framework wrote a model call's attributes onto (LiteLLM's
    # callback under an active span): holding that call's own span, it is no model call.
    caller: bool = False
    # The span hands a task to a remote agent (A2A): its URL, or "" (``a2a.DELEGATED``) when
    # the span does not say where; what the remote does is in its own process's spans.
    remote_agent: str | None = None
    # A code agent's step (smolagents' ``Step N``): its model writes code and the agent runs
    # it inside this span, which so executes the step's code call (``python_interpreter``).
    code_step: bool = False
    # The agent a hand-off moves the conversation to (``conventions.handoffs``), on the span
    # that records it: an agent boundary, whose receiving agent's spans follow; not a tool
    # call of the user's (its ``execution``, where the span runs the framework's hand-off
    # tool, is the framework's own).
    handoff: str | None = None


class History(NamedTuple):
    """What a model call's input history shows of earlier tool calls, by call id."""

    arguments: dict[str, Any]
    results: dict[str, Any]
    names: dict[str, str] = {}


@dataclass(slots=True)
class UserInput:
    """What one span shows of the user's messages: on a model span, the user-role messages
    of its input; on an agent span, the caller's input. System and developer prompts and
    tool results sent back to the model are not the user's input.

    A reader returns None when the span records no input messages at all.
    """

    texts: list[str] = field(default_factory=list)
    # User messages recorded without their content: where, in words ("parts without
    # content in gen_ai.input.messages"). The instrumentation's own sign of capture off.
    withheld: list[str] = field(default_factory=list)
    # Input content present in a form not read ("part type 'image' in a user message").
    not_understood: list[str] = field(default_factory=list)

    def add(self, text: Any, where: str) -> None:
        """One user message's (or part's) content; None or a redaction marker: withheld."""
        if text is None or redacted(text):
            if where not in self.withheld:
                self.withheld.append(where)
        elif isinstance(text, str):
            self.texts.append(text)
        else:
            self.not_understood.append(f"content of type {type(text).__name__} in {where}")


@dataclass(frozen=True, slots=True)
class Gate:
    """Which spans a reader can say anything of, by cheap probes: those holding one of
    ``keys`` (attributes), of one of ``scopes`` (or a scope under one: ``scope.``), or,
    with ``events``, with any event. A reader behind a gate reports nothing (``None``, an
    empty ``History``) on any other span, so ``processors.span_views`` does not call it
    there. Declare a gate next to its reader and keep it a superset of what the reader
    probes: a key it forgets silently drops what the reader would have read."""

    keys: tuple[str, ...] = ()
    scopes: tuple[str, ...] = ()
    events: bool = False


@dataclass(frozen=True, slots=True)
class Convention:
    """One family's reader: ``read`` is called on every span, so it probes keys cheaply."""

    name: str
    read: Callable[[Span], SpanReport | None]
    # Call id → arguments / results sent back to the model in a model span's input.
    history: Callable[[Span], History] | None = None
    # The user's messages a model span was sent, or the caller's input an agent span shows.
    user_input: Callable[[Span], UserInput | None] | None = None
    # Where the family records content: attribute keys (a trailing "." is a prefix) and
    # event names. Content elsewhere is "present but not understood" (``content_hint``).
    content_keys: tuple[str, ...] = ()
    content_events: tuple[str, ...] = ()
    # Instrumentation scopes of a framework that writes its spans itself: their spans are
    # read by this family (and the side-effect conventions) only, since the framework's
    # gen_ai.* keys mean what it says they mean there (ids, wrappers, envelopes).
    scopes: tuple[str, ...] = ()
    # The spans ``read``, ``history`` and ``user_input`` can report on (None: any span).
    read_gate: Gate | None = None
    history_gate: Gate | None = None
    input_gate: Gate | None = None
