"""Hand-offs read as hand-offs (issue 48), from the multi-agent recordings.

Each framework's record of a hand-off (``conventions.handoffs``) names the receiving agent
(``SpanReport.handoff``) and is no tool call of the user's; langgraph-supervisor's own
hand-back entries in the history are no call of an earlier conversation. Hand-built spans
only for what the recordings cannot show.
"""

from __future__ import annotations

import pathlib

import pytest
from span_factory import span

from rampart_otel.conventions import adk, genai, handoffs, openinference
from rampart_otel.conventions.pseudo_tools import pseudo_tool
from rampart_otel.model import Span
from rampart_otel.pipeline import ReadStats, agent_runs

TRACES = pathlib.Path(__file__).resolve().parents[2] / "samples" / "traces"


def spans_of(setup: str, case: str = "exfil") -> list[Span]:
    path = TRACES / setup / f"{setup}-{case}.jsonl"
    return [s for run in agent_runs([path], ReadStats()) for s in run.run.spans]


def named(spans: list[Span], name: str) -> list[Span]:
    return [s for s in spans if s.name == name]


def test_the_openai_agents_handoff_span_is_a_handoff_not_a_call() -> None:
    (handoff,) = named(spans_of("openai-agents-multi"), "handoff to ops_agent")
    report = openinference.read(handoff)
    assert report is not None
    assert report.handoff == "ops_agent"
    assert report.execution is None and report.not_understood == []


@pytest.mark.parametrize(
    ("setup", "reader", "name"),
    [
        ("langgraph-supervisor-openinference", openinference.read, "transfer_to_ops_agent"),
        ("langgraph-supervisor-openllmetry", genai.read, "execute_tool transfer_to_ops_agent"),
    ],
)
def test_langgraph_supervisor_handoff_tool(setup: str, reader: object, name: str) -> None:
    (tool,) = named(spans_of(setup), name)
    report = reader(tool)  # type: ignore[operator]
    assert report.handoff == "ops_agent"
    assert report.execution is not None and report.execution.name == "transfer_to_ops_agent"
    assert report.agent is False  # OpenInference traces the tool as an AGENT span: no agent
    assert pseudo_tool("transfer_to_ops_agent", tool) is not None


def test_a_user_tool_named_like_a_handoff_in_the_same_scope_is_still_a_tool() -> None:
    own = span(
        "transfer_to_bank",
        {"openinference.span.kind": "TOOL", "tool.name": "transfer_to_bank", "output.value": "ok"},
        scope="openinference.instrumentation.langchain",
    )
    assert handoffs.receiver(own) is None
    assert pseudo_tool("transfer_to_bank", own) is None


@pytest.mark.parametrize("case", ["exfil", "openinference-hidden"])
def test_adk_transfer_to_agent(case: str) -> None:
    spans = spans_of("adk-multi", case)
    (tool,) = [s for s in named(spans, "execute_tool transfer_to_agent") if s.scope.name]
    report = adk.read(tool) or openinference.read(tool)
    assert report is not None and report.handoff == "ops_agent"
    assert pseudo_tool("transfer_to_agent", tool) is not None


def test_adk_transfer_without_arguments_is_a_handoff_to_an_unnamed_agent() -> None:
    tool = span(
        "execute_tool transfer_to_agent",
        {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "transfer_to_agent",
            "gen_ai.tool.type": "TransferToAgentTool",
        },
        scope=adk.SCOPE,
    )
    report = adk.read(tool)
    assert report is not None and report.handoff == ""
    assert pseudo_tool("transfer_to_agent", tool) is not None


def test_adk_openinference_hidden_inputs_keep_the_arguments_in_tool_parameters() -> None:
    (tool,) = named(spans_of("adk-multi", "openinference-hidden"), "execute_tool send_report")
    report = openinference.read(tool)
    assert report is not None and report.execution is not None
    assert report.execution.arguments_captured
    arguments = report.execution.arguments
    assert isinstance(arguments, dict) and "api_token=tok_live_9f3a" in arguments["data"]


def test_adk_openinference_llm_reading_on_adks_own_span_is_read() -> None:
    spans = spans_of("adk-multi", "openinference-hidden")
    (model,) = [s for s in named(spans, "invoke_agent ops_agent") if s.scope.name == adk.SCOPE]
    report = adk.read(model)
    assert report is not None and report.model and report.output is not None
    assert [r.name for r in report.output.requests] == ["save_note"]


@pytest.mark.parametrize(
    ("setup", "reader"),
    [
        ("langgraph-supervisor-openinference", openinference.input_history),
        ("langgraph-supervisor-openllmetry", genai.input_history),
    ],
)
def test_the_supervisors_hand_back_is_not_history(setup: str, reader: object) -> None:
    names: set[str] = set()
    for model in spans_of(setup):
        names.update(reader(model).names.values())  # type: ignore[operator]
    assert "transfer_to_weather_agent" in names  # the model's own hand-offs stay
    assert not any(name.startswith(handoffs.HAND_BACK_PREFIX) for name in names)


@pytest.mark.parametrize(
    ("name", "text", "hand_back"),
    [
        ("transfer_back_to_supervisor", "Transferring back to supervisor", True),
        ("transfer_back_to_my_lead", "Transferring back to My Lead", True),
        ("transfer_back_to_supervisor", "I am transferring back now", False),
        ("transfer_back_to_bank", "Transferring back to supervisor", False),
        (None, "Transferring back to supervisor", False),
    ],
)
def test_a_hand_back_is_only_the_supervisors_exact_form(
    name: str | None, text: str, hand_back: bool
) -> None:
    assert handoffs.is_hand_back(name, text) is hand_back


def test_the_receiving_agent_reaches_each_spans_record() -> None:
    """SpanReport.handoff is kept on the span's reading (``SpanRecord.reading.handoff``),
    where the run's reader of places finds it."""
    from rampart_otel.processors.span_views import classified

    path = TRACES / "openai-agents-multi" / "openai-agents-multi-exfil.jsonl"
    (run,) = agent_runs([path], ReadStats())
    handoffs_read = {
        record.span.name: record.reading.handoff
        for record in classified(run.run).records
        if record.reading.handoff is not None
    }
    assert handoffs_read == {"handoff to ops_agent": "ops_agent"}
