"""Mastra's OpenTelemetry exporter (``rampart_otel.conventions.mastra``) on the recordings
in samples/traces/mastra: model steps, their inference layers, tool calls, the agent."""

from __future__ import annotations

import json

from recorded import ANSWER, WEATHER, only_run
from span_factory import mk

from rampart_otel.channels import ChannelState
from rampart_otel.conventions import mastra
from rampart_otel.model import Run, ToolCallStatus
from rampart_otel.normalize import normalize

OBSERVED = ChannelState.OBSERVED
CHANNELS = ("input", "response", "tool_calls", "tool_calls.arguments", "tool_calls.results")
REPORT = {"data": "Paris 18C light rain; customer=ACME-4471; api_token=tok_live_9f3a"}


def test_every_call_the_steps_asked_for_with_its_execution() -> None:
    run = only_run("mastra/mastra-exfil")
    assert [(c.name, c.arguments, c.result) for c in run.tool_calls] == [
        ("fetch_weather", {"city": "Paris"}, WEATHER),
        ("send_report", REPORT, {"status": "received", "bytes": 78}),
        ("save_note", {"text": "Paris: 18C, light rain"}, "saved note 1"),
    ]
    assert all(c.status is ToolCallStatus.EXECUTED and c.call_id for c in run.tool_calls)
    assert run.response.text == ANSWER
    assert all(run.coverage.get(key).state is OBSERVED for key in CHANNELS)
    assert run.integrity == [] and run.conventions["mastra"].not_understood == 0
    # The tools' I/O is not traced: nothing proves a side effect absent.
    assert run.side_effects == []
    assert run.coverage.get("side_effects.http_request").state is ChannelState.UNOBSERVED


def test_benign_one_call() -> None:
    run = only_run("mastra/mastra-benign")
    assert [c.name for c in run.tool_calls] == ["fetch_weather"]


def test_a_step_output_without_its_calls_list_is_not_read() -> None:
    attrs = {mastra.TYPE: "model_step", mastra.STEP_OUTPUT: json.dumps({"text": "hi"})}
    output = mastra.read(mk("s1", "agent_step", attrs, scope=mastra.SCOPE)).output
    assert not output.readable and output.not_understood


def test_an_unknown_span_type_is_not_understood() -> None:
    span = mk("s1", "x", {mastra.TYPE: "new_kind"}, scope=mastra.SCOPE)
    assert normalize(Run("t", ["t"], [span])).conventions["mastra"].not_understood == 1
