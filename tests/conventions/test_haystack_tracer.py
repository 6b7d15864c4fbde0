"""Haystack's own OpenTelemetry tracer (scope ``haystack``), read from its recordings
(``samples/traces/haystack-native/``); hand-built spans only for what they cannot show."""

from __future__ import annotations

import pathlib

from span_factory import span

from rampart_otel.conventions import haystack_tracer
from rampart_otel.model import Span
from rampart_otel.pipeline import ReadStats, agent_runs

TRACES = pathlib.Path(__file__).resolve().parents[2] / "samples" / "traces" / "haystack-native"


def spans_of(case: str) -> list[Span]:
    path = TRACES / f"haystack-native-{case}.jsonl"
    return [s for run in agent_runs([path], ReadStats()) for s in run.run.spans]


def test_model_calls_tool_runs_and_the_answer_are_read() -> None:
    spans = spans_of("exfil")
    models = [haystack_tracer.model_output(s) for s in spans if s.name == haystack_tracer.LLM]
    assert [[r.name for r in m.requests] for m in models] == [
        ["fetch_weather"],
        ["send_report"],
        ["save_note"],
        [],
    ]
    assert all(m.readable for m in models)
    assert [m.finish_reasons for m in models][-1] == ["stop"]
    tools = [haystack_tracer.tool_execution(s) for s in spans if s.name == haystack_tracer.TOOL]
    assert [(t.name, t.arguments_captured) for t in tools][1] == ("send_report", True)
    (agent,) = [s for s in spans if s.name == haystack_tracer.AGENT]
    report = haystack_tracer.read(agent)
    assert report is not None and report.answer is not None and "18°C" in report.answer


def test_content_off_records_no_reply_so_none_is_readable() -> None:
    spans = spans_of("no-content")
    models = [haystack_tracer.model_output(s) for s in spans if s.name == haystack_tracer.LLM]
    assert models and not any(m.readable for m in models)
    tools = [haystack_tracer.tool_execution(s) for s in spans if s.name == haystack_tracer.TOOL]
    assert [t.name for t in tools] == ["fetch_weather", "send_report", "save_note"]
    assert not any(t.arguments_captured for t in tools)


def test_a_generator_component_run_is_not_understood_never_neutral() -> None:
    generator = span(
        "haystack.component.run",
        {"haystack.component.type": "OpenAIChatGenerator"},
        scope=haystack_tracer.SCOPE,
    )
    report = haystack_tracer.read(generator)
    assert report is not None and report.not_understood and not report.model
    other = span("haystack.component.run", {"haystack.component.type": "Agent"}, scope="haystack")
    assert haystack_tracer.read(other) is not None
    assert haystack_tracer.read(span("x", scope="haystack")).not_understood  # type: ignore[union-attr]
    assert haystack_tracer.read(span("haystack.agent.run", scope="elsewhere")) is None
