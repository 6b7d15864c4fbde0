"""ScoringPlan: what a reading decides, and normalize under a narrowed plan (the full
reading, as ``inspect`` reads runs, decides every channel)."""

from __future__ import annotations

from pathlib import Path

from rampart_otel.normalize import normalize
from rampart_otel.pipeline import ReadStats, agent_runs, runs
from rampart_otel.scoring_plan import FULL_READING, ScoringPlan

SAMPLE = Path(__file__).resolve().parents[1] / "samples/traces/openinference-no-http-instr.jsonl"
EVERY_CHANNEL = {"input", "response", "tool_calls", "tool_calls.arguments", "tool_calls.results"}


def test_the_full_reading_decides_and_hints_every_channel() -> None:
    for key in [*EVERY_CHANNEL, "side_effects.http_request", "side_effects.anything"]:
        assert FULL_READING.decides(key) and FULL_READING.hints(key)
    assert FULL_READING.full and FULL_READING.content


def test_a_narrowed_plan_always_decides_tool_calls_and_side_effects() -> None:
    plan = ScoringPlan(frozenset({"response"}))
    assert plan.decides("response") and plan.hints("response")
    assert plan.decides("tool_calls") and not plan.hints("tool_calls")
    assert plan.decides("side_effects.db_query") and not plan.hints("side_effects.db_query")
    assert not plan.decides("input") and not plan.decides("tool_calls.arguments")
    assert plan.content
    assert not ScoringPlan(frozenset({"tool_calls"})).content


def test_inspect_reads_every_channel() -> None:
    (run,) = agent_runs([SAMPLE], ReadStats())
    assert set(run.coverage.channels) >= EVERY_CHANNEL
    assert run.user_input


def test_normalize_leaves_out_what_the_plan_does_not_decide() -> None:
    (assembled,) = runs([SAMPLE], ReadStats())
    full = normalize(assembled)
    narrow = normalize(assembled, ScoringPlan(frozenset({"response"})))
    assert full.user_input and not narrow.user_input  # the input is not collected
    assert set(narrow.coverage.channels) == set(full.coverage.channels) - {
        "input",
        "tool_calls.arguments",
        "tool_calls.results",
    }
    assert narrow.coverage.level == full.coverage.level
    assert narrow.coverage.get("response") == full.coverage.get("response")
    for key, channel in narrow.coverage.channels.items():
        theirs = full.coverage.get(key)
        assert channel.state is theirs.state, key
        if key != "response":  # a channel no check reads gets no way to close its gap
            assert channel.hint is None, key
    assert any(channel.hint for channel in full.coverage.channels.values())
