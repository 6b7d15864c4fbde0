"""The run graph: one index of a run's spans, links made once, on hand-built span trees."""

from __future__ import annotations

import pytest
from span_factory import mk

from rampart_otel.model import Run, replaces
from rampart_otel.run_graph import RunGraph, run_graph


def ids(spans: object) -> list[str]:
    return [span.span_id for span in spans]  # type: ignore[attr-defined]


def test_links_parents_children_and_roots_in_time_order() -> None:
    graph = RunGraph(
        [
            mk("c2", "c2", parent="root", start=30),
            mk("root", "root", start=0, end=100),
            mk("c1", "c1", parent="root", start=10),
            mk("g1", "g1", parent="c1", start=12),
        ]
    )
    assert ids(graph.spans) == ["root", "c1", "g1", "c2"]
    assert ids(graph.roots) == ["root"]
    assert ids(graph.children("root")) == ["c1", "c2"]
    assert graph.parent("g1").span_id == "c1"  # type: ignore[union-attr]
    assert graph.parent("root") is None
    assert ids(graph.ancestors("g1")) == ["c1", "root"]
    assert graph.is_ancestor("root", "g1") and not graph.is_ancestor("g1", "root")
    assert not graph.is_ancestor("g1", "g1")
    assert "g1" in graph and "zz" not in graph and len(graph) == 4


def test_on_a_start_tie_the_longer_span_comes_first_and_an_unended_one_is_longest() -> None:
    graph = RunGraph(
        [mk("short", "s", start=5, end=6), mk("open", "o", start=5, end=None), mk("a", "a")]
    )
    assert ids(graph.spans) == ["a", "open", "short"]


def test_a_parent_outside_the_run_makes_a_root_and_roots_are_grouped_by_trace() -> None:
    graph = RunGraph(
        [
            mk("a", "a", parent="lost", start=1),
            mk("b", "b", start=2),
            mk("x", "x", trace_id="f" * 32, start=3),
        ]
    )
    assert ids(graph.roots) == ["a", "b", "x"]
    assert {trace: ids(spans) for trace, spans in graph.roots_by_trace().items()} == {
        mk("t", "t").trace_id: ["a", "b"],
        "f" * 32: ["x"],
    }


def test_a_parent_cycle_is_cut_once_so_every_walk_up_ends() -> None:
    graph = RunGraph(
        [
            mk("a", "a", parent="c", start=1),
            mk("b", "b", parent="a", start=2),
            mk("c", "c", parent="b", start=3),
            mk("self", "s", parent="self", start=4),
        ]
    )
    # Walked from the first span: a → c → b, whose link back to a closes the cycle.
    assert ids(graph.cut) == ["b", "self"]
    assert ids(graph.roots) == ["b", "self"]
    assert ids(graph.ancestors("a")) == ["c", "b"]
    assert list(graph.ancestors("self")) == []


def test_a_span_sent_twice_is_one_span_and_a_copy_never_replaces_an_ended_one() -> None:
    open_copy = mk("s", "open", end=None)
    ended = mk("s", "ended")
    late_open = mk("s", "late", end=None)
    graph = RunGraph([open_copy, ended, late_open])
    assert [span.name for span in graph.spans] == ["ended"]
    assert replaces(None, ended) and replaces(open_copy, ended)
    assert not replaces(ended, late_open)


def test_tree_is_depth_first_with_depths() -> None:
    graph = RunGraph(
        [
            mk("r", "r", start=0, end=100),
            mk("b", "b", parent="r", start=20),
            mk("a", "a", parent="r", start=10),
            mk("a1", "a1", parent="a", start=11),
            mk("r2", "r2", start=50),
        ]
    )
    assert [(span.span_id, depth) for span, depth in graph.tree()] == [
        ("r", 0),
        ("a", 1),
        ("a1", 2),
        ("b", 1),
        ("r2", 0),
    ]


def test_the_graph_cannot_be_changed() -> None:
    graph = RunGraph([mk("r", "r"), mk("c", "c", parent="r", start=1)])
    with pytest.raises(AttributeError):
        graph.extra = 1  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        graph.spans = ()  # type: ignore[misc]
    assert isinstance(graph.spans, tuple) and isinstance(graph.children("r"), tuple)
    assert isinstance(graph.roots, tuple) and isinstance(graph.cut, tuple)


def test_a_runs_graph_is_built_once_and_kept_with_it() -> None:
    run = Run("r", ["t"], [mk("r", "r")])
    assert run_graph(run) is run_graph(run)
    assert Run("r", ["t"], [mk("r", "r")]) == run  # the kept graph is no part of equality


def test_nearest_names_the_closest_marked_span_at_or_above_each_span() -> None:
    graph = RunGraph(
        [
            mk("r", "r", start=0, end=100),
            mk("t1", "t1", parent="r", start=1, end=50),
            mk("io", "io", parent="t1", start=2),
            mk("t2", "t2", parent="t1", start=3, end=40),
            mk("deep", "deep", parent="t2", start=4),
            mk("other", "other", parent="r", start=60),
        ]
    )
    assert graph.nearest({"t1", "t2"}) == {"t1": "t1", "io": "t1", "t2": "t2", "deep": "t2"}
    assert graph.nearest(set()) == {}
