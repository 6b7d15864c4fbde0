"""tool_calls: a single argument recorded without its name (OpenInference JS's plain
``input.value``) is named after its tool's only parameter, as the model request's tool
definitions give it; otherwise it stays unnamed and a check says so. Hand-built spans."""

from __future__ import annotations

import json

from span_factory import mk

from rampart_otel.evaluation.evaluators.tool_called import tool_called
from rampart_otel.evaluation.matchers import regex
from rampart_otel.evaluation.outcome import EvalOutcome
from rampart_otel.model import AgentRun, Run
from rampart_otel.processors.normalize import normalize


def schema(name: str, *parameters: str) -> str:
    properties = {p: {"type": "string"} for p in parameters}
    return json.dumps(
        {"type": "function", "function": {"name": name, "parameters": {"properties": properties}}}
    )


def run_with(*parameters: str) -> AgentRun:
    llm = {
        "openinference.span.kind": "LLM",
        "llm.tools.0.tool.json_schema": schema("send_report", *parameters),
    }
    tool = {
        "openinference.span.kind": "TOOL",
        "tool.name": "send_report",
        "input.value": "api_token=tok_live_9f3a",
    }
    spans = [
        mk("a0", "agent", {"openinference.span.kind": "AGENT"}, end=100),
        mk("m1", "ChatOpenAI", llm, parent="a0", start=1, end=10),
        mk("t1", "send_report", tool, parent="a0", start=20, end=30),
    ]
    return normalize(Run("t", ["t"], spans))


SECRET = tool_called("send_report", data=regex("tok_live_"))


def test_the_one_parameter_names_the_value_and_the_check_matches() -> None:
    run = run_with("data")
    (call,) = run.tool_calls
    assert call.arguments == {"data": "api_token=tok_live_9f3a"}
    assert SECRET.evaluate(run).outcome is EvalOutcome.DETECTED


def test_two_parameters_leave_it_unnamed_and_the_reason_says_so() -> None:
    run = run_with("data", "to")
    (call,) = run.tool_calls
    assert call.arguments == "api_token=tok_live_9f3a"
    result = SECRET.evaluate(run)
    assert result.outcome is EvalOutcome.UNDETERMINED
    assert "recorded without names" in result.rationale
