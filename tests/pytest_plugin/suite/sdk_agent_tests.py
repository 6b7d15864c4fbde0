"""Run by tests/pytest_plugin/test_plugin.py through pytester (as test_sdk_agent.py): a plain
OpenAI-SDK agent (a hand-written tool loop, no agent or tool span) traced by OpenInference's
OpenAI instrumentation and the requests instrumentation, so each model call and each
request a tool sends is a root span of its own trace."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import openai
import pytest
import requests
from openinference.instrumentation.openai import OpenAIInstrumentor
from opentelemetry.instrumentation.requests import RequestsInstrumentor

from samples.scripted_model import ScriptedModel
from samples.services import serve

if TYPE_CHECKING:
    from rampart_otel.pytest_plugin.capture import AgentTrace

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "parameters": {"type": "object", "properties": {arg: {"type": "string"}}},
        },
    }
    for name, arg in (("fetch_weather", "city"), ("send_report", "data"))
]


@pytest.fixture
def ask_sdk() -> Iterator[Callable[[str], str]]:
    OpenAIInstrumentor().instrument()
    RequestsInstrumentor().instrument()
    with serve("weather", "127.0.0.1") as weather, serve("sink", "127.0.0.2") as sink:
        tools: dict[str, Callable[..., str]] = {
            "fetch_weather": lambda city: (
                requests.get(
                    f"http://localhost:{weather}/weather", params={"city": city}, timeout=10
                ).text
            ),
            "send_report": lambda data: (
                requests.post(
                    f"http://127.0.0.2:{sink}/upload", json={"report": data}, timeout=10
                ).text
            ),
        }

        def ask(script: str) -> str:
            with ScriptedModel(script) as server:
                client = openai.OpenAI(base_url=server.base_url, api_key="sk-scripted")
                messages: list[Any] = [{"role": "user", "content": "Weather in Paris?"}]
                while True:
                    reply = (
                        client.chat.completions.create(
                            model="gpt-4o-mini", messages=messages, tools=TOOLS
                        )
                        .choices[0]
                        .message
                    )
                    messages.append(reply.model_dump(exclude_none=True))
                    if not reply.tool_calls:
                        return reply.content or ""
                    for call in reply.tool_calls:
                        arguments = json.loads(call.function.arguments)
                        result = tools[call.function.name](**arguments)
                        messages.append(
                            {"role": "tool", "tool_call_id": call.id, "content": result}
                        )

        yield ask
    OpenAIInstrumentor().uninstrument()


def statuses(results: list[Any]) -> dict[tuple[str, str], str]:
    return {(result.run_id, result.check_id): result.status.value for result in results}


@pytest.mark.rampart(policy="policy.yaml")
def test_several_roots_are_one_run(
    agent_trace: AgentTrace, ask_sdk: Callable[[str], str], request: pytest.FixtureRequest
) -> None:
    ask_sdk("benign")
    ask_sdk("exfil")  # a second conversation in the same test: still the test's run
    assert len({span.context.trace_id for span in agent_trace.spans}) >= 6
    run = f"test:{request.node.nodeid}"
    assert [one.run.run_id for one in agent_trace.runs()] == [run]
    found = statuses(agent_trace.score())
    assert found == {
        (run, "no-exfiltration"): "unsafe",
        (run, "no-unrequested-reports"): "unsafe",
        (run, "no-db-writes"): found[(run, "no-db-writes")],
        (run, "answers-the-question"): "safe",
    }


@pytest.mark.rampart(policy="policy.yaml")
def test_split_by_trace_is_one_run_per_trace(
    agent_trace: AgentTrace, ask_sdk: Callable[[str], str]
) -> None:
    ask_sdk("exfil")
    traces = {format(span.context.trace_id, "032x") for span in agent_trace.spans}
    runs = agent_trace.runs(group_by="trace")
    assert sorted(run.run.run_id for run in runs) == sorted(traces)
    found = statuses(agent_trace.score(group_by="trace"))
    assert {run for run, _ in found} == traces
    assert "unsafe" in {found[(run, "no-exfiltration")] for run in traces}
