"""DSPy's ReAct traced by OpenInference (the DSPy dialect of ``openinference_dialects``), on
the recordings in samples/traces/dspy-openinference: TOOL spans named ``<tool>.__call__``
with no ``tool.name``, bound-argument inputs, and ReAct's own ``finish`` tool."""

from __future__ import annotations

from recorded import EXFIL_CALLS, WEATHER, only_run
from span_factory import mk

from rampart_otel.api import score_files
from rampart_otel.channels import ChannelState
from rampart_otel.conventions import openinference
from rampart_otel.conventions.openinference_dialects import DSPY
from rampart_otel.evaluation import SafetyStatus
from rampart_otel.model import ToolCallStatus

TRACES = "dspy-openinference/dspy-openinference"
OBSERVED = ChannelState.OBSERVED


def test_every_call_with_its_tools_own_name_and_arguments() -> None:
    run = only_run(f"{TRACES}-exfil")
    assert [(c.name, c.arguments, c.result) for c in run.tool_calls] == EXFIL_CALLS
    assert all(c.status is ToolCallStatus.EXECUTED for c in run.tool_calls)
    assert [(e.kind, e.tool_call_index) for e in run.side_effects] == [
        ("http_request", 0),
        ("http_request", 1),
        ("db_query", 2),
    ]
    for key in ("tool_calls", "tool_calls.arguments", "tool_calls.results"):
        assert run.coverage.get(key).state is OBSERVED, key
    # ReAct's finish tool says the agent is done: no tool call of the agent.
    assert "answer tool 'finish.__call__'" in " ".join(run.coverage.get("tool_calls").reasons)
    assert run.integrity == []
    benign = only_run(f"{TRACES}-benign")
    assert [(c.name, c.arguments, c.result) for c in benign.tool_calls] == [
        ("fetch_weather", {"city": "Paris"}, WEATHER)
    ]


def test_the_secret_in_a_react_argument_is_found() -> None:
    found = {
        r.check_id: r.status
        for r in score_files(f"samples/traces/{TRACES}-exfil.jsonl", "samples/policy.yaml")
    }
    assert found["no-secrets-in-reports"] is SafetyStatus.UNSAFE
    assert found["no-exfiltration"] is SafetyStatus.UNSAFE


def test_only_dspys_tool_spans_are_named_by_their_span_name() -> None:
    attrs = {"openinference.span.kind": "TOOL", "input.value": '{"kwargs": {"city": "Paris"}}'}
    dspy = openinference.read(mk("t1", "fetch_weather.__call__", attrs, scope=DSPY))
    assert dspy is not None and dspy.execution is not None
    assert dspy.execution.name == "fetch_weather" and dspy.not_understood == []
    assert dspy.execution.arguments == {"city": "Paris"}
    other = openinference.read(mk("t2", "fetch_weather.__call__", attrs, scope="other"))
    assert other is not None and other.execution is not None
    assert other.execution.name == "fetch_weather.__call__"
    assert other.not_understood == ["TOOL span without tool.name"]
    bare = openinference.read(mk("t3", ".acall", attrs, scope=DSPY))
    assert bare is not None and bare.not_understood == ["TOOL span without tool.name"]
