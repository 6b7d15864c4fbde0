"""Build AgentRun objects directly, without traces, for evaluation tests."""

from __future__ import annotations

from typing import Any

from rampart_otel.channels import (
    ChannelCoverage,
    ChannelState,
    Coverage,
    CoverageSource,
    ObservabilityLevel,
)
from rampart_otel.model import AgentRun, Response, Run, SideEffect, ToolCall, ToolCallStatus

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
    keys = ["response", "tool_calls", "tool_calls.arguments", "tool_calls.results"]
    keys += [f"side_effects.{kind}" for kind in side_effect_kinds]
    return dict.fromkeys(keys, "observed")


def call(
    name: str,
    arguments: dict[str, Any] | str | None = None,
    *,
    captured: bool | None = None,
    span: str = "00f067aa0ba902b7",
) -> ToolCall:
    return ToolCall(
        name=name,
        call_id=None,
        arguments=arguments,
        result=None,
        status=ToolCallStatus.EXECUTED,
        span_ids=[span],
        trace_id=TRACE,
        conventions=["gen_ai"],
        arguments_captured=arguments is not None if captured is None else captured,
    )


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
) -> AgentRun:
    """A run; ``channels`` maps channel keys to a state name or a ChannelCoverage."""
    if channels is None:
        channels = observed_everywhere("http_request")
    coverage = Coverage(
        {k: v if isinstance(v, ChannelCoverage) else channel(v) for k, v in channels.items()},
        level,
    )
    return AgentRun(
        run=Run(run_id=TRACE, trace_ids=[TRACE], spans=[]),
        service="support-agent",
        started_at_ns=1_700_000_000_000_000_000,
        response=Response(text=response, earlier=list(earlier or []), span_id="a1b2c3d4e5f60718"),
        tool_calls=list(tool_calls or []),
        side_effects=list(side_effects or []),
        coverage=coverage,
        integrity=[],
    )
