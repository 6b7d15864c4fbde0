"""The OpenTelemetry GenAI instrumentation of the openai client (2.x) and its utility's
handler, read by ``rampart_otel.conventions.genai``, in every content mode it has
(samples/traces/openai-v2), and the setting the content reasons name."""

from __future__ import annotations

import pytest
from recorded import ANSWER, EXFIL_CALLS, only_run

from rampart_otel.channels import ChannelState
from rampart_otel.model import ToolCallStatus

OBSERVED, UNOBSERVED = ChannelState.OBSERVED, ChannelState.UNOBSERVED
CONTENT = ("input", "response", "tool_calls.arguments", "tool_calls.results")
EFFECTS = [("http_request", 0), ("http_request", 1), ("db_query", 2)]
SETTING = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY"


def effects(run) -> list[tuple[str, int | None]]:
    return [(e.kind, e.tool_call_index) for e in run.side_effects]


@pytest.mark.parametrize("case", ["exfil", "span-only"])  # SPAN_AND_EVENT, SPAN_ONLY
def test_content_on_spans_reads_every_call(case: str) -> None:
    run = only_run(f"openai-v2/openai-v2-{case}")
    assert [(c.name, c.arguments, c.result) for c in run.tool_calls] == EXFIL_CALLS
    assert all(c.status is ToolCallStatus.EXECUTED and c.call_id for c in run.tool_calls)
    assert effects(run) == EFFECTS and run.response.text == ANSWER
    assert all(run.coverage.get(key).state is OBSERVED for key in (*CONTENT, "tool_calls"))


@pytest.mark.parametrize("case", ["event-only", "no-content"])  # EVENT_ONLY, true
def test_content_off_spans_names_the_calls_and_the_setting(case: str) -> None:
    run = only_run(f"openai-v2/openai-v2-{case}")
    assert [c.name for c in run.tool_calls] == [name for name, _, _ in EXFIL_CALLS]
    assert not any(c.arguments_captured or c.result_captured for c in run.tool_calls)
    assert effects(run) == EFFECTS and run.response.text is None
    assert run.coverage.get("tool_calls").state is OBSERVED
    for key in CONTENT:
        channel = run.coverage.get(key)
        assert channel.state is UNOBSERVED, key
        # The fix names the setting the library reads (its last reason, and the hint).
        assert SETTING in channel.reasons[-1] and "gen_ai_latest_experimental" in channel.hint


def test_benign_span_only() -> None:
    run = only_run("openai-v2/openai-v2-benign")
    assert [c.name for c in run.tool_calls] == ["fetch_weather"]
    assert effects(run) == [("http_request", 0)]
