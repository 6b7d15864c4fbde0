from span_factory import mk

from rampart_otel.model import Span
from rampart_otel.processors.assemble import RunAssembler
from rampart_otel.processors.stitch import assemble


def span(trace: str, span_id: str, parent: str | None = None, ended: bool = True, **attrs) -> Span:
    return mk(span_id, span_id, attrs, trace_id=trace, parent=parent, end=-1 if ended else None)


def test_spans_of_one_trace_across_batches_make_one_run():
    runs = list(assemble([[span("t1", "b", "a")], [span("t2", "x")], [span("t1", "a")]]))
    by_id = {run.run_id: run for run in runs}
    assert sorted(by_id) == ["t1", "t2"]
    assert {s.span_id for s in by_id["t1"].spans} == {"a", "b"}
    assert all(run.revision == 0 for run in runs)


def test_trace_is_emitted_once_root_ended_and_idle():
    assembler = RunAssembler(idle=2)
    assert assembler.add([span("t1", "child", "root")], now=1) == []
    assert assembler.add([span("t1", "root")], now=2) == []
    assert assembler.add([span("t2", "other", ended=False)], now=3) == []
    emitted = assembler.add([span("t3", "x", ended=False)], now=4)
    assert [run.run_id for run in emitted] == ["t1"]
    assert assembler.open_traces == 2


def test_trace_with_open_root_stays_open_until_it_ends():
    assembler = RunAssembler(idle=1)
    assembler.add([span("t1", "root", ended=False)], now=1)
    assert assembler.add([span("t2", "x")], now=5) == []
    assert assembler.open_traces == 2
    emitted = assembler.add([span("t1", "root")], now=6)
    emitted += assembler.expire(now=10)
    assert sorted(run.run_id for run in emitted) == ["t1", "t2"]
    (t1,) = [run for run in emitted if run.run_id == "t1"]
    assert [(s.span_id, s.end_ns is not None) for s in t1.spans] == [("root", True)]  # ended wins


def test_root_with_upstream_parent_counts_as_top_span():
    assembler = RunAssembler(idle=1)
    assembler.add([span("t1", "root", parent="upstream")], now=1)
    assert [run.run_id for run in assembler.expire(now=3)] == ["t1"]


def test_late_span_becomes_a_new_revision_never_merged_silently():
    assembler = RunAssembler(idle=1)
    assembler.add([span("t1", "root")], now=1)
    first = assembler.expire(now=3)
    late = assembler.add([span("t1", "late", "root")], now=4) + assembler.flush()
    assert [(r.run_id, r.revision) for r in first] == [("t1", 0)]
    assert [(r.run_id, r.revision, len(r.spans)) for r in late] == [("t1", 1, 1)]


def test_flush_emits_incomplete_traces():
    assembler = RunAssembler()
    assembler.add([span("t1", "root", ended=False)], now=1)
    assert [run.run_id for run in assembler.flush()] == ["t1"]
    assert assembler.open_traces == 0


def test_group_by_session_joins_traces_of_one_conversation():
    batches = [
        [span("t1", "a", **{"gen_ai.conversation.id": "c1"})],
        [span("t2", "b", **{"session.id": "c1"})],
        [span("t3", "c")],
    ]
    runs = list(assemble(batches, group_by="session"))
    by_id = {run.run_id: run for run in runs}
    assert sorted(by_id) == ["session:c1", "t3"]
    assert by_id["session:c1"].trace_ids == ["t1", "t2"]
    assert by_id["session:c1"].session_id == "c1"


def test_memory_is_bounded_by_open_traces():
    assembler = RunAssembler(idle=10)
    emitted = 0
    for i in range(1000):
        emitted += len(assembler.add([span(f"t{i}", "root")], now=i))
        assert assembler.open_traces <= 11
    assert emitted + len(assembler.flush()) == 1000


def test_a_span_sent_twice_is_one_span():
    runs = list(assemble([[span("t1", "root")], [span("t1", "root")]]))
    assert [len(run.spans) for run in runs] == [1]


def test_max_wait_emits_a_trace_that_never_stops_receiving_spans():
    # One span a second, never idle for `idle`: only max_wait can end the wait.
    assembler = RunAssembler(idle=5, max_wait=30)
    emitted = []
    for second in range(0, 62):
        spans = [span("t1", "root")] if second == 0 else [span("t1", f"s{second}", "root")]
        for run in assembler.add(spans, now=second):
            emitted.append((second, run.revision, len(run.spans)))
    assert emitted[0] == (30, 0, 31)  # first span at 0: scored at max_wait, spans 0..30
    # Later spans follow the late-span rule: the next revision, never merged silently.
    assert emitted[1] == (61, 1, 31)  # spans 31..61, emitted 30 s after span 31
    assert assembler.open_traces == 0


def test_max_spans_bounds_one_open_trace():
    assembler = RunAssembler(idle=1000, max_spans=100)
    emitted = []
    for index in range(250):
        emitted += assembler.add([span("t1", f"s{index}", "root")], now=index)
        assert assembler.open_traces <= 1
        assert sum(len(trace.spans) for trace in assembler._open.values()) < 100
    assert [(run.revision, len(run.spans)) for run in emitted] == [(0, 100), (1, 100)]
    assert [len(run.spans) for run in assembler.flush()] == [50]
