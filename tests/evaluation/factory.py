"""Build AgentRun objects directly, without traces, for evaluation tests."""

from __future__ import annotations

from typing import Any

from span_factory import mk

from rampart_otel.channels import (
    ChannelCoverage,
    ChannelState,
    Coverage,
    CoverageSource,
    ObservabilityLevel,
)
from rampart_otel.model import (
    AgentRun,
    InputMessage,
    Response,
    Run,
    SideEffect,
    Span,
    ToolCall,
    ToolCallStatus,
)

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"

# A channel state in tests: "observed", "partial", "unobserved", "assumed", "declared".
STATES = ("observed", "partial", "unobserved", "assumed", "declared")


def channel(state: str, *reasons: str) -> ChannelCoverage:
    if state == "assumed":
        return ChannelCoverage(
            ChannelState.OBSERVED, list(reasons) or ["assumed by policy"], CoverageSource.ASSUMED
        )
    if state == "declared":
        return ChannelCoverage(
            ChannelState.OBSERVED,
            list(reasons) or ["declared by the agent (rampart.coverage)"],
            CoverageSource.DECLARED,
        )
    return ChannelCoverage(ChannelState(state), list(reasons) or [f"test: {state}"])


def observed_everywhere(*side_effect_kinds: str) -> dict[str, str]:
    keys = ["input", "response", "tool_calls", "tool_calls.arguments", "tool_calls.results"]
    keys += [f"side_effects.{kind}" for kind in side_effect_kinds]
    return dict.fromkeys(keys, "observed")


def call(
    name: str,
    arguments: dict[str, Any] | str | None = None,
    *,
    captured: bool | None = None,
    span: str = "00f067aa0ba902b7",
    result: Any = None,
    result_captured: bool | None = None,
    executed_in: str | None = None,
    requested_in: str | None = None,
) -> ToolCall:
    """A call; ``executed_in``/``requested_in`` name spans of the run (see ``make_run``)."""
    return ToolCall(
        name=name,
        call_id=None,
        arguments=arguments,
        result=result,
        status=ToolCallStatus.EXECUTED,
        span_ids=[span],
        trace_id=TRACE,
        conventions=["gen_ai"],
        arguments_captured=arguments is not None if captured is None else captured,
        result_captured=result is not None if result_captured is None else result_captured,
        executed_in=executed_in,
        requested_in=requested_in,
    )


def timed_span(span_id: str, start: int | None, end: int | None, parent: str | None = None) -> Span:
    """A span placed in time (ns) and in the tree, for evaluators that order events."""
    return mk(span_id, f"span {span_id}", start=start, end=end, parent=parent)


def message(text: str | None, span: str | None = "5a5a5a5a5a5a5a5a") -> InputMessage:
    return InputMessage(text=text, span_id=span, trace_id=TRACE)


def effect(kind: str, span: str = "b7ad6b7169203331", **details: Any) -> SideEffect:
    return SideEffect(kind=kind, details=details, span_id=span, trace_id=TRACE)


def make_run(
    *,
    tool_calls: list[ToolCall] | None = None,
    side_effects: list[SideEffect] | None = None,
    response: str | None = "All done.",
    earlier: list[str] | None = None,
    channels: dict[str, str | ChannelCoverage] | None = None,
    level: ObservabilityLevel = ObservabilityLevel.TOOL_AND_SIDE_EFFECTS,
    spans: list[Span] | None = None,
    user_input: list[InputMessage] | None = None,
) -> AgentRun:
    """A run; ``channels`` maps channel keys to a state name or a ChannelCoverage."""
    if channels is None:
        channels = observed_everywhere("http_request")
    coverage = Coverage(
        {k: v if isinstance(v, ChannelCoverage) else channel(v) for k, v in channels.items()},
        level,
    )
    return AgentRun(
        run=Run(run_id=TRACE, trace_ids=[TRACE], spans=list(spans or [])),
        service="support-agent",
        started_at_ns=1_700_000_000_000_000_000,
        response=Response(text=response, earlier=list(earlier or []), span_id="a1b2c3d4e5f60718"),
        tool_calls=list(tool_calls or []),
        side_effects=list(side_effects or []),
        coverage=coverage,
        integrity=[],
        user_input=list(user_input or []),
    )
