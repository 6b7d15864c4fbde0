"""MLflow Tracing (``rampart_otel.conventions.mlflow``) on the recordings in
samples/traces/mlflow: CHAT_MODEL, TOOL and AGENT spans with JSON inputs and outputs."""

from __future__ import annotations

import json

import pytest
from recorded import ANSWER, EXFIL_CALLS, WEATHER, only_run
from span_factory import mk

from rampart_otel.channels import ChannelState
from rampart_otel.conventions import mlflow
from rampart_otel.model import Run, ToolCallStatus
from rampart_otel.normalize import normalize

OBSERVED = ChannelState.OBSERVED
CHANNELS = ("input", "response", "tool_calls", "tool_calls.arguments", "tool_calls.results")
EFFECTS = [("http_request", 0), ("http_request", 1), ("db_query", 2)]


def effects(run) -> list[tuple[str, int | None]]:
    return [(e.kind, e.tool_call_index) for e in run.side_effects]


@pytest.mark.parametrize("case", ["exfil", "parallel"])
def test_every_call_with_arguments_results_and_its_side_effects(case: str) -> None:
    run = only_run(f"mlflow/mlflow-{case}")
    assert [(c.name, c.arguments, c.result) for c in run.tool_calls] == EXFIL_CALLS
    assert all(c.status is ToolCallStatus.EXECUTED for c in run.tool_calls)
    assert all(c.call_id and c.call_id.startswith("call_") for c in run.tool_calls)
    assert effects(run) == EFFECTS
    answer = "It is 18°C with light rain in Paris. Report filed, note saved."
    assert run.response.text == (answer if case == "parallel" else ANSWER)
    assert {key: run.coverage.get(key).state for key in CHANNELS} == dict.fromkeys(
        CHANNELS, OBSERVED
    )
    assert run.integrity == [] and run.conventions["mlflow"].not_understood == 0


def test_benign_one_call() -> None:
    run = only_run("mlflow/mlflow-benign")
    assert [(c.name, c.arguments, c.result) for c in run.tool_calls] == [
        ("fetch_weather", {"city": "Paris"}, WEATHER)
    ]
    assert effects(run) == [("http_request", 0)]


def test_a_model_output_in_another_shape_is_not_understood() -> None:
    attrs = {
        mlflow.SPAN_TYPE: json.dumps("CHAT_MODEL"),
        mlflow.OUTPUTS: json.dumps({"content": [{"type": "tool_use", "name": "x"}]}),
    }
    output = mlflow.read(mk("m1", "Messages", attrs, scope=mlflow.SCOPE)).output
    assert not output.readable
    assert output.not_understood == [f"{mlflow.OUTPUTS} (not a chat completion with choices)"]


def test_an_unknown_span_type_is_not_understood() -> None:
    span = mk("s1", "x", {mlflow.SPAN_TYPE: json.dumps("NEW_KIND")}, scope=mlflow.SCOPE)
    run = normalize(Run("t", ["t"], [span]))
    assert run.conventions["mlflow"].not_understood == 1
