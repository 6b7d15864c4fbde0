"""LiteLLM's OpenTelemetry callback (``rampart_otel.conventions.litellm``) on the recordings
in samples/traces/litellm: its raw-request spans, and the caller's span it writes onto."""

from __future__ import annotations

import json

import pytest
from recorded import ANSWER, EXFIL_CALLS, WEATHER, only_run, spans
from span_factory import mk

from rampart_otel.channels import ChannelState
from rampart_otel.conventions import litellm
from rampart_otel.model import Run, ToolCallStatus
from rampart_otel.normalize import normalize
from rampart_otel.processors.span_views import classify
from rampart_otel.run_graph import RunGraph

OBSERVED, UNOBSERVED = ChannelState.OBSERVED, ChannelState.UNOBSERVED
CHANNELS = ("input", "response", "tool_calls", "tool_calls.arguments", "tool_calls.results")
SIDE_EFFECTS = ["http_request", "http_request", "db_query"]


@pytest.mark.parametrize("case", ["exfil", "parallel"])
def test_every_call_asked_for_is_read_from_the_raw_request_spans(case: str) -> None:
    run = only_run(f"litellm/litellm-{case}")
    assert [(c.name, c.arguments, c.result) for c in run.tool_calls] == EXFIL_CALLS
    assert all(c.status is ToolCallStatus.EXECUTED for c in run.tool_calls)
    assert all(c.call_id and c.call_id.startswith("call_") for c in run.tool_calls)
    assert [e.kind for e in run.side_effects] == SIDE_EFFECTS
    answer = "It is 18°C with light rain in Paris. Report filed, note saved."
    assert run.response.text == (answer if case == "parallel" else ANSWER)
    assert {key: run.coverage.get(key).state for key in CHANNELS} == dict.fromkeys(
        CHANNELS, OBSERVED
    )
    assert run.integrity == [] and run.conventions["litellm"].not_understood == 0


def test_the_callers_span_holding_the_raw_spans_is_no_model_call() -> None:
    views = classify(RunGraph(spans("litellm/litellm-exfil"))).records
    root = next(v for v in views if v.span.name == "weather-agent run")
    assert root.caller and not root.model and root.output is None
    raw = [v for v in views if v.span.name == litellm.RAW_REQUEST]
    assert len(raw) == 4 and all(v.model and v.output.readable for v in raw)
    assert [r.name for v in raw for r in v.output.requests] == [n for n, _, _ in EXFIL_CALLS]


def test_the_callers_span_alone_shows_the_calls_its_history_holds() -> None:
    """Without the raw-request spans (not exported, or filtered out), the caller's span is
    the one model call; the history LiteLLM wrote on it (OpenAI-shaped ``tool_calls`` and
    ``tool_call_id`` in ``gen_ai.input.messages``) still shows the earlier calls: a report
    sent with a secret is no less sent because the spans that asked for it are gone."""
    kept = [s for s in spans("litellm/litellm-exfil") if s.name != litellm.RAW_REQUEST]
    run = normalize(Run("t", [kept[0].trace_id], kept))
    calls = {c.name: c for c in run.tool_calls}
    assert set(calls) == {"fetch_weather", "send_report", "save_note"}
    assert calls["send_report"].arguments == {
        "data": "Paris 18C light rain; customer=ACME-4471; api_token=tok_live_9f3a"
    }
    assert calls["fetch_weather"].result == WEATHER


def test_benign_reads_its_one_call() -> None:
    run = only_run("litellm/litellm-benign")
    assert [(c.name, c.arguments, c.result) for c in run.tool_calls] == [
        ("fetch_weather", {"city": "Paris"}, WEATHER)
    ]
    assert [e.kind for e in run.side_effects] == ["http_request"]


def test_content_off_leaves_the_callers_span_as_the_one_unread_model_call() -> None:
    """No raw spans: nothing shows the calls, so nothing about them is proven; the side
    effects under the caller's span are still the agent's."""
    run = only_run("litellm/litellm-no-content")
    assert run.tool_calls == [] and run.response.text is None
    assert all(run.coverage.get(key).state is UNOBSERVED for key in CHANNELS)
    assert [e.kind for e in run.side_effects] == SIDE_EFFECTS
    # No execution span and no output read: a call nothing shows may have acted unwatched.
    http = run.coverage.get("side_effects.http_request")
    assert http.state is ChannelState.PARTIAL
    assert any("tool calls the trace cannot show may have run" in r for r in http.reasons)


def test_a_callers_span_with_no_completion_span_under_it_stays_a_model_call() -> None:
    attrs = {
        "gen_ai.operation.name": "chat",
        "litellm.call_id": "x",
        "gen_ai.output.messages": json.dumps(
            [{"role": "assistant", "parts": [{"type": "text", "content": "hi"}]}]
        ),
    }
    run = normalize(Run("t", ["t"], [mk("r1", "agent run", attrs, scope="my-agent")]))
    assert run.response.text == "hi"


def test_raw_text_is_read_as_literals_never_evaluated() -> None:
    assert litellm.literal("[{'role': 'user', 'content': None}]") == [
        {"role": "user", "content": None}
    ]
    hostile = "[__import__('os').system('true')]"
    assert litellm.literal(hostile) == hostile


def test_a_raw_response_in_another_shape_is_not_understood() -> None:
    raw = {"llm.anthropic.messages": "[]", "llm.anthropic.content": "[{'type': 'tool_use'}]"}
    report = litellm.read(mk("s1", litellm.RAW_REQUEST, raw, scope=litellm.SCOPE))
    assert report is not None and report.model and not report.output.readable
    assert report.output.not_understood == ["llm.anthropic.content (a raw response shape not read)"]
