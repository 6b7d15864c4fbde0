"""OpenLIT (``rampart_otel.conventions.openlit``) on the recordings in samples/traces/openlit:
its model spans' flat tool-call keys, and its traced-function spans."""

from __future__ import annotations

import pytest
from recorded import ANSWER, EXFIL_CALLS, only_run
from span_factory import mk

from rampart_otel.channels import ChannelState
from rampart_otel.conventions import openlit
from rampart_otel.model import AgentRun, Run, ToolCallStatus
from rampart_otel.normalize import normalize

OBSERVED = ChannelState.OBSERVED
CHANNELS = ("response", "tool_calls", "tool_calls.arguments", "tool_calls.results")
EFFECTS = [("http_request", 0), ("http_request", 1), ("db_query", 2)]


def effects(run: AgentRun) -> list[tuple[str, int | None]]:
    return [(e.kind, e.tool_call_index) for e in run.side_effects]


@pytest.mark.parametrize("case", ["exfil", "stream", "no-content", "parallel"])
def test_each_call_once_with_arguments_results_and_its_side_effects(case: str) -> None:
    """With content capture off OpenLIT drops only the messages: the flat keys and the
    traced functions still show every call (the no-content run reads the same)."""
    run = only_run(f"openlit/openlit-{case}")
    assert [(c.name, c.arguments, c.result) for c in run.tool_calls] == EXFIL_CALLS
    assert all(c.status is ToolCallStatus.EXECUTED for c in run.tool_calls)
    assert all(c.call_id and c.call_id.startswith("call_") for c in run.tool_calls)
    assert effects(run) == EFFECTS
    answer = "It is 18°C with light rain in Paris. Report filed, note saved."
    assert run.response.text == (answer if case == "parallel" else ANSWER)
    assert {key: run.coverage.get(key).state for key in CHANNELS} == dict.fromkeys(
        CHANNELS, OBSERVED
    )
    assert run.integrity == [] and run.conventions["openlit"].not_understood == 0


def test_content_off_reads_the_requests_from_the_flat_keys() -> None:
    run = only_run("openlit/openlit-no-content")
    assert (
        "openlit" in run.tool_calls[0].conventions and "gen_ai" not in run.tool_calls[0].conventions
    )


def test_joined_requests_of_one_turn_are_split_only_when_each_argument_decodes() -> None:
    attrs = {
        "gen_ai.operation.name": "chat",
        "gen_ai.tool.name": "fetch_weather, send_report",
        "gen_ai.tool.call.id": "c1, c2",
        "gen_ai.tool.args": '{"city": "Paris"}, {"data": "a, b"}',
    }
    model = mk("m1", "chat", attrs, scope="openlit.instrumentation.openai")
    output = openlit.read(model).output
    assert [(r.name, r.call_id, r.arguments) for r in output.requests] == [
        ("fetch_weather", "c1", {"city": "Paris"}),
        ("send_report", "c2", {"data": "a, b"}),
    ]
    attrs["gen_ai.tool.args"] = '{"city": "Paris"}, not json'
    output = openlit.read(mk("m2", "chat", attrs, scope="openlit.instrumentation.openai")).output
    assert output.readable and not any(r.arguments_captured for r in output.requests)


def test_a_traced_function_no_model_asked_for_is_no_tool_call() -> None:
    helper = mk("f1", "format_output", {"function.kwargs": "{'x': 1}", "function.args": "()"},
                scope=openlit.SCOPE)  # fmt: skip
    run = normalize(Run("t", ["t"], [helper]))
    assert run.tool_calls == []


def test_python_repr_arguments_are_read_as_literals_never_evaluated() -> None:
    assert openlit._python_arguments("{'city': 'Paris'}", "(1,)") == {"city": "Paris", "args": [1]}
    hostile = "{'x': __import__('os').system('true')}"
    assert openlit._python_arguments(hostile, "()") == f"() {hostile}"
