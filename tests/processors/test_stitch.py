"""Stitching: the pieces of one agent's work, arriving as separate traces, joined into one run.

OpenInference-shaped hand-built spans: a plain SDK tool loop leaves one LLM span per trace,
the later one's input history holding the call the earlier one asked for.
"""

from __future__ import annotations

from typing import Any

from span_factory import mk

from rampart_otel.model import FindingKind, Run, Span, StitchReason
from rampart_otel.normalize import normalize
from rampart_otel.processors.assemble import RunAssembler
from rampart_otel.processors.span_views import classified
from rampart_otel.processors.stitch import MAX_GAP_NS, Stitcher, StitchingAssembler, assemble

T1, T2, T3, T4 = (f"{n:032x}" for n in (0xA1, 0xA2, 0xA3, 0xA4))
SECOND = 1_000_000_000
ARGUMENTS = '{"data": "key=sk-live-123"}'


def asks(call_id: str, name: str = "send_report") -> dict[str, Any]:
    prefix = "llm.output_messages.0.message."
    return {
        "openinference.span.kind": "LLM",
        "llm.input_messages.0.message.role": "user",
        "llm.input_messages.0.message.content": "file the report",
        prefix + "role": "assistant",
        prefix + "tool_calls.0.tool_call.id": call_id,
        prefix + "tool_calls.0.tool_call.function.name": name,
        prefix + "tool_calls.0.tool_call.function.arguments": ARGUMENTS,
    }


def continues(call_id: str, name: str = "send_report") -> dict[str, Any]:
    """An LLM call whose input history holds ``call_id`` (asked, and its result sent back)."""
    prefix = "llm.input_messages."
    return {
        "openinference.span.kind": "LLM",
        prefix + "0.message.role": "user",
        prefix + "0.message.content": "file the report",
        prefix + "1.message.role": "assistant",
        prefix + "1.message.tool_calls.0.tool_call.id": call_id,
        prefix + "1.message.tool_calls.0.tool_call.function.name": name,
        prefix
        + "1.message.tool_calls.0.tool_call.function.arguments": '{"data": "key=sk-live-123"}',
        prefix + "2.message.role": "tool",
        prefix + "2.message.tool_call_id": call_id,
        prefix + "2.message.content": "sent",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.content": "Filed.",
    }


POST = {"http.request.method": "POST", "url.full": "https://evil.example/upload"}


def run(trace_id: str, *spans: Span) -> Run:
    return Run(trace_id, [trace_id], list(spans))


def loop(gap: int = SECOND, *, second: dict[str, Any] | None = None) -> list[Run]:
    """First model call (asks c1), the tool's POST in a trace of its own, the second call."""
    return [
        run(T1, mk("m1", "ChatCompletion", asks("c1"), trace_id=T1, start=0, end=SECOND)),
        run(T3, mk("h1", "POST", POST, trace_id=T3, kind="CLIENT", start=SECOND + 10,
                   end=SECOND + 20)),
        run(T2, mk("m2", "ChatCompletion", second or continues("c1"), trace_id=T2,
                   start=SECOND + gap, end=2 * SECOND + gap)),
    ]  # fmt: skip


def stitched(runs: list[Run]) -> list[Run]:
    stitcher = Stitcher(hold=10)
    stitcher.take(runs, 0)
    return stitcher.flush()


def test_a_continuation_and_its_tools_lost_io_join_the_run_it_continues() -> None:
    (whole,) = stitched(loop())
    assert whole.run_id == T1 and whole.trace_ids == [T1, T2, T3]
    assert [(s.trace_id, s.how, s.via) for s in whole.stitched] == [
        (T2, StitchReason.CONTINUATION, "c1"),
        (T3, StitchReason.TIME_WINDOW, ""),
    ]
    agent = normalize(whole)
    (call,) = agent.tool_calls
    assert call.name == "send_report" and not call.from_history
    (effect,) = agent.side_effects
    assert effect.tool_call_index == 0  # the POST falls in the call's window alone
    assert agent.integrity == []
    assert agent.coverage.get("side_effects.http_request").state.value == "observed"


def test_a_piece_alone_is_a_continuation_with_its_history_as_evidence() -> None:
    agent = normalize(loop()[2])
    (call,) = agent.tool_calls
    assert call.from_history and call.name == "send_report"
    assert call.arguments == {"data": "key=sk-live-123"} and call.result == "sent"
    (finding,) = agent.integrity
    assert finding.kind is FindingKind.CONTINUATION and "send_report" in finding.message
    for key in ("tool_calls", "tool_calls.arguments", "tool_calls.results"):
        assert agent.coverage.get(key).state.value == "partial", key


def test_no_join_when_the_history_holds_a_call_the_earlier_run_did_not_ask_for() -> None:
    runs = loop(second=continues("c9"))
    assert len(stitched(runs)) == 3


def test_no_join_across_a_long_pause() -> None:
    runs = loop(gap=MAX_GAP_NS + 2 * SECOND)
    assert [len(r.trace_ids) for r in stitched(runs)] != [3]
    assert all(r.trace_ids != [T1, T2] for r in stitched(runs))


def test_a_run_with_its_own_agent_span_is_never_a_continuation_piece() -> None:
    first, fragment, second = loop()
    agent = {"openinference.span.kind": "AGENT"}
    second = run(T2, mk("g2", "agent", agent, trace_id=T2, start=2 * SECOND, end=4 * SECOND),
                 *[mk("m2", s.name, s.attributes, trace_id=T2, parent="g2",
                      start=2 * SECOND, end=3 * SECOND) for s in second.spans])  # fmt: skip
    assert {r.run_id for r in stitched([first, fragment, second])} >= {T1, T2}


def test_a_fragment_inside_two_runs_windows_stays_apart() -> None:
    agent = {"openinference.span.kind": "AGENT"}
    runs = [
        run(T1, mk("g1", "agent", agent, trace_id=T1, start=0, end=10 * SECOND)),
        run(T2, mk("g2", "agent", agent, trace_id=T2, start=SECOND, end=9 * SECOND)),
        run(T3, mk("h1", "POST", POST, trace_id=T3, kind="CLIENT", start=2 * SECOND,
                   end=3 * SECOND)),
    ]  # fmt: skip
    assert sorted(r.run_id for r in stitched(runs)) == sorted([T1, T2, T3])


def test_a_fragment_of_another_process_stays_apart() -> None:
    agent = {"openinference.span.kind": "AGENT"}
    other = {"service.name": "billing"}
    runs = [
        run(T1, mk("g1", "agent", agent, trace_id=T1, start=0, end=10 * SECOND)),
        run(T3, mk("h1", "POST", POST, trace_id=T3, kind="CLIENT", start=SECOND, end=2 * SECOND,
                   resource=other)),
    ]  # fmt: skip
    assert len(stitched(runs)) == 2


def test_only_runs_that_may_still_be_joined_are_held() -> None:
    """A loop that asked for a tool waits for its next piece; a fragment for its run; a run
    whose calls were all answered, or with an agent span, passes straight through."""
    first, fragment, second = loop()
    stitcher = Stitcher(hold=5)
    assert stitcher.add([first], 0) == []  # asked for c1, never got its result: may go on
    assert stitcher.add([fragment], 1) == []  # a fragment waits for its run
    (whole,) = stitcher.add([second], 3)  # c1 answered: nothing more can join
    assert whole.trace_ids == [T1, T2, T3]
    late = run(T4, mk("m4", "ChatCompletion", continues("c1"), trace_id=T4, start=3 * SECOND,
                      end=4 * SECOND))  # fmt: skip
    assert stitcher.add([late], 9) == [late]  # too late to join: alone, and honest about it
    lone = run(T3, mk("h9", "POST", POST, trace_id=T3, kind="CLIENT", start=9 * SECOND))
    assert stitcher.add([lone], 10) == [] and stitcher.add([], 15) == [lone]


def test_a_later_revision_of_a_held_run_is_never_merged_into_it() -> None:
    first = loop()[0]
    again = Run(T1, [T1], [mk("m9", "ChatCompletion", asks("c2"), trace_id=T1, start=10)],
                revision=1)  # fmt: skip
    out = stitched([first, again])
    assert [(r.run_id, r.revision, len(r.spans)) for r in out] == [(T1, 0, 1), (T1, 1, 1)]


def test_stitching_can_be_switched_off() -> None:
    spans = [span for piece in loop() for span in piece.spans]
    assert len(list(assemble([spans], stitch=False))) == 3
    assert len(list(assemble([spans]))) == 1


def test_the_stitching_assembler_keeps_the_assemblers_calls() -> None:
    assembler = StitchingAssembler(RunAssembler(idle=100))
    spans = [span for piece in loop() for span in piece.spans]
    assert assembler.add(spans, 1) == []
    assert assembler.open_traces == 3
    (whole,) = assembler.emit_complete(2)
    assert whole.trace_ids == [T1, T2, T3] and assembler.open_traces == 0


def test_a_large_release_passes_through_in_order_and_leaves_nothing_indexed() -> None:
    """A collector's expiry can release tens of thousands of runs at once: each is looked up
    by its own ids (no scan of the others), comes out in arrival order, and nothing of an
    emitted run stays in the stitcher's indexes."""
    agent = {"openinference.span.kind": "AGENT"}
    first, fragment, second = loop()
    many = [
        run(f"{n:032x}", mk(f"{n:016x}", "agent", agent, trace_id=f"{n:032x}", start=n * SECOND))
        for n in range(0x100, 0x100 + 2000)
    ]
    stitcher = Stitcher(hold=5)
    out = stitcher.add([first, *many, fragment, second], 0)
    assert [r.run_id for r in out] == [T1, *(r.run_id for r in many)]
    assert out[0].trace_ids == [T1, T2, T3]
    assert stitcher.held == 0
    assert stitcher._by_run == {} and stitcher._by_call == {} and stitcher._fragments == {}
    assert stitcher._spans == {} and stitcher._groups == {}


def test_a_joined_run_reuses_its_pieces_readings_and_normalize_reuses_the_stitchers() -> None:
    """Each span is read by the conventions once: when its piece arrives at the stitcher.
    The joined run's records are made from those readings, and normalize takes the
    classification the stitcher made of a run that passed through alone."""
    pieces = loop()
    (whole,) = stitched(pieces)
    before = {r.span.span_id: r.reading for p in pieces for r in classified(p).records}
    assert {r.span.span_id: r.reading for r in classified(whole).records} == before
    alone = run(T4, mk("m9", "ChatCompletion", continues("c9"), trace_id=T4))
    (passed,) = stitched([alone])
    assert passed is alone and classified(passed) is classified(alone)
