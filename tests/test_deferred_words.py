"""Coverage words made only when read: a narrowed reading (outputs that show no coverage)
words a channel the first time its reasons or hint are read, once however many copies of
the coverage read them; the full reading words every channel as it decides it. Counted, not
timed: the words of each channel are made by one call (``wording._reasons_and_hint``)."""

from __future__ import annotations

import io
import pickle
from pathlib import Path

import pytest

from rampart_otel import wording
from rampart_otel.channels import ChannelCoverage
from rampart_otel.evaluation import load_policy
from rampart_otel.evaluation.plan import FULL_READING, scoring_plan
from rampart_otel.evaluation.verdict import evaluate_policy, snapshot
from rampart_otel.exporters.report_sinks import JunitSink, TerminalSink
from rampart_otel.normalize import normalize
from rampart_otel.pipeline import ReadStats, runs
from rampart_otel.sinks import Scored

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "samples/traces/adk/adk-exfil.jsonl"


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many channels were worded (one entry per channel worded)."""
    calls: list[int] = []
    real = wording._reasons_and_hint

    def counting(decision, *codes):  # type: ignore[no-untyped-def]
        calls.append(1)
        return real(decision, *codes)

    monkeypatch.setattr(wording, "_reasons_and_hint", counting)
    return calls


def _run():  # type: ignore[no-untyped-def]
    return next(iter(runs([SAMPLE], ReadStats())))


def test_the_full_reading_words_every_channel(counted: list[int]) -> None:
    agent_run = normalize(_run(), FULL_READING)
    assert len(counted) == len(agent_run.coverage.channels) > 5


def test_a_narrowed_reading_words_only_what_is_read(counted: list[int]) -> None:
    plan = scoring_plan([load_policy(REPO / "samples/policy.yaml")])
    full = normalize(_run(), FULL_READING).coverage.channels
    counted.clear()
    agent_run = normalize(_run(), plan)
    channels = agent_run.coverage.channels
    assert counted == []  # decided, coded, not yet worded
    assert plan.channels is not None
    shared = [key for key in channels if key in plan.channels]  # decided as the full reading
    assert "side_effects.db_query" in shared
    assert all(channels[key].codes == full[key].codes for key in shared)
    copy = snapshot(agent_run)
    assert copy is not None
    key = "side_effects.db_query"
    assert copy.channels[key].reasons == full[key].reasons
    assert channels[key].hint == full[key].hint
    assert len(counted) == 1  # one channel worded, once for the run and its copy
    assert channels[key] == full[key]
    for other in shared:  # the words of the plan's channels are the full reading's
        assert channels[other] == full[other]
    assert len(counted) == len(shared)


def test_a_deferred_channel_is_pickled_with_its_words(counted: list[int]) -> None:
    plan = scoring_plan([load_policy(REPO / "samples/policy.yaml")])
    channel = normalize(_run(), plan).coverage.channels["side_effects.http_request"]
    again = pickle.loads(pickle.dumps(channel))
    assert isinstance(again, ChannelCoverage)
    assert again.reasons == channel.reasons and again.reasons
    assert len(counted) == 1


def test_a_kept_result_holds_its_coverage_only_where_it_is_shown() -> None:
    """The overview and JUnit show no coverage: their kept results do not hold each run's
    (with its decisions) to the end of the input; the verbose terminal shows the gaps."""
    policy = load_policy(REPO / "samples/policy.yaml")
    agent_run = normalize(_run())
    results = evaluate_policy(agent_run, policy)
    assert all(result.coverage is not None for result in results)
    scored = Scored(_run(), results)
    out = io.StringIO()
    sinks: list[tuple[TerminalSink | JunitSink, bool]] = [
        (TerminalSink(out), False),
        (JunitSink(out), False),
        (TerminalSink(out, verbose=True), True),
    ]
    for sink, keeps in sinks:
        sink.write([sink.prepare(scored)])
        assert [r.coverage is not None for r in sink.kept] == [keeps] * len(results)
        assert [r.status for r in sink.kept] == [r.status for r in results]
    assert all(result.coverage is not None for result in results)  # the sinks' own copies


def test_words_read_together_are_the_reasons_and_hint(counted: list[int]) -> None:
    plan = scoring_plan([load_policy(REPO / "samples/policy.yaml")])
    channel = normalize(_run(), plan).coverage.channels["side_effects.db_query"]
    assert counted == []
    reasons, hint = channel.words()  # a deferred channel: worded here, once
    assert len(counted) == 1
    assert (reasons, hint) == (channel.reasons, channel.hint) and reasons and hint
    assert len(counted) == 1
