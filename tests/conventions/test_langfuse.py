"""The Langfuse SDK (``rampart_otel.conventions.langfuse``) on the recordings in
samples/traces/langfuse: generations, tool and agent observations, content masked."""

from __future__ import annotations

import json

import pytest
from recorded import ANSWER, EXFIL_CALLS, WEATHER, only_run
from span_factory import mk

from rampart_otel.channels import ChannelState
from rampart_otel.conventions import langfuse
from rampart_otel.model import Run, ToolCallStatus
from rampart_otel.normalize import normalize

OBSERVED, PARTIAL, UNOBSERVED = (
    ChannelState.OBSERVED,
    ChannelState.PARTIAL,
    ChannelState.UNOBSERVED,
)
CHANNELS = ("input", "response", "tool_calls", "tool_calls.arguments", "tool_calls.results")
EFFECTS = [("http_request", 0), ("http_request", 1), ("db_query", 2)]


def effects(run) -> list[tuple[str, int | None]]:
    return [(e.kind, e.tool_call_index) for e in run.side_effects]


@pytest.mark.parametrize("case", ["exfil", "parallel"])
def test_every_call_with_arguments_results_and_its_side_effects(case: str) -> None:
    run = only_run(f"langfuse/langfuse-{case}")
    assert [(c.name, c.arguments, c.result) for c in run.tool_calls] == EXFIL_CALLS
    assert all(c.status is ToolCallStatus.EXECUTED for c in run.tool_calls)
    assert all(c.call_id and c.call_id.startswith("call_") for c in run.tool_calls)
    assert effects(run) == EFFECTS
    answer = "It is 18°C with light rain in Paris. Report filed, note saved."
    assert run.response.text == (answer if case == "parallel" else ANSWER)
    assert {key: run.coverage.get(key).state for key in CHANNELS} == dict.fromkeys(
        CHANNELS, OBSERVED
    )
    assert run.integrity == [] and run.conventions["langfuse"].not_understood == 0


def test_benign_one_call_and_the_http_channel_observed() -> None:
    run = only_run("langfuse/langfuse-benign")
    assert [(c.name, c.arguments, c.result) for c in run.tool_calls] == [
        ("fetch_weather", {"city": "Paris"}, WEATHER)
    ]
    assert effects(run) == [("http_request", 0)]
    assert run.coverage.get("side_effects.http_request").state is OBSERVED


def test_masked_content_leaves_the_calls_named_and_their_content_unread() -> None:
    run = only_run("langfuse/langfuse-no-content")
    assert [(c.name, c.arguments_captured, c.result_captured) for c in run.tool_calls] == [
        (name, False, False) for name, _, _ in EXFIL_CALLS
    ]
    assert effects(run) == EFFECTS and run.response.text is None
    assert run.coverage.get("tool_calls").state is PARTIAL
    for key in ("input", "response", "tool_calls.arguments", "tool_calls.results"):
        assert run.coverage.get(key).state is UNOBSERVED, key


def test_positional_arguments_and_an_error_level() -> None:
    attrs = {
        langfuse.TYPE: "tool",
        langfuse.INPUT: json.dumps({"args": ["Paris"], "kwargs": {"units": "C"}}),
        langfuse.LEVEL: "ERROR",
    }
    report = langfuse.read(mk("t1", "fetch_weather", attrs, scope=langfuse.SCOPE))
    call = report.execution
    assert call.arguments == {"units": "C", "args": ["Paris"]} and call.error
    assert not call.result_captured


def test_an_unknown_observation_type_is_not_understood() -> None:
    span = mk("s1", "x", {langfuse.TYPE: "new-kind"}, scope=langfuse.SCOPE)
    run = normalize(Run("t", ["t"], [span]))
    assert run.conventions["langfuse"].not_understood == 1


def test_langfuse_keys_outside_its_scope_are_reported_not_understood() -> None:
    span = mk("s1", "x", {langfuse.TYPE: "generation"}, scope="langfuse-js")
    run = normalize(Run("t", ["t"], [span]))
    assert "Langfuse" in run.conventions and run.conventions["Langfuse"].not_understood == 1
