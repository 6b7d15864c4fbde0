"""LangChain.js (createAgent) traced by OpenInference JS (samples/traces/langchainjs-
openinference): read by ``rampart_otel.conventions.openinference``; the HTTP client's spans
lose their trace context, so runs are read as the CLI reads them, stitched."""

from __future__ import annotations

from recorded import TRACES, WEATHER

from rampart_otel.channels import ChannelState
from rampart_otel.model import AgentRun
from rampart_otel.pipeline import ReadStats, agent_runs

FOLDER = TRACES / "langchainjs-openinference"
REPORT = {"data": "Paris 18C light rain; customer=ACME-4471; api_token=tok_live_9f3a"}


def agent_run(case: str) -> AgentRun:
    runs = list(agent_runs([FOLDER / f"langchainjs-openinference-{case}.jsonl"], ReadStats()))
    (run,) = [r for r in runs if r.fragment is None]
    return run


def test_every_call_with_its_result_unwrapped_from_the_tool_message() -> None:
    run = agent_run("exfil")
    assert [(c.name, c.arguments, c.result) for c in run.tool_calls] == [
        ("fetch_weather", {"city": "Paris"}, WEATHER),
        ("send_report", REPORT, {"status": "received", "bytes": 78}),
        ("save_note", {"text": "Paris: 18C, light rain"}, "saved note 1"),
    ]
    assert all(c.call_id and c.call_id.startswith("call_") for c in run.tool_calls)


def test_the_models_own_requests_are_transport_and_the_tools_are_side_effects() -> None:
    """The model's POSTs to /v1/chat/completions lost their context like the tools' I/O;
    each ran while one model span did, so they are its transport, not the agent's."""
    run = agent_run("exfil")
    hosts = sorted(
        e.details.get("host") or "" for e in run.side_effects if e.kind == "http_request"
    )
    assert hosts == ["127.0.0.2", "localhost"]
    benign = agent_run("benign")
    assert [e.details["host"] for e in benign.side_effects] == ["localhost"]
    assert benign.coverage.get("side_effects.http_request").state is ChannelState.OBSERVED


def test_hidden_content_names_the_calls_and_reads_none_of_their_content() -> None:
    run = agent_run("no-content")
    assert [(c.name, c.arguments_captured) for c in run.tool_calls] == [
        ("fetch_weather", False),
        ("send_report", False),
        ("save_note", False),
    ]
    assert run.coverage.get("tool_calls.arguments").state is ChannelState.UNOBSERVED
