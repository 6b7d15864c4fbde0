"""The run graph: a run's spans indexed once, the one place parent and child links are made.

Built once per run (``run_graph``: kept with the run, so the stitcher and normalize share
it) and never changed: spans by id, each span once (``model.replaces`` decides between two
copies, and copies that disagree are kept as ``conflicts`` for integrity to report), in time
order; each span's parent inside the run and its children; the roots (a
span whose parent is not in the run, or whose link was cut to break a parent cycle); the
ancestors of a span. Every job that asks "is this inside that" asks it here.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Iterator

from rampart_otel.model import Run, Span, conflicting, copy_id, replaces

_GRAPH = "graph"


class RunGraph:
    """An immutable index of one run's spans and their parent links (cycles cut).

    ``spans`` are in start order; on a tie the longer span (the parent) comes first, and a
    span never ended counts as the longest. A parent cycle can only come from hostile or
    corrupt input: walking the spans in that order, the link that closes it is cut, so
    every walk up terminates (``cut``).
    """

    __slots__ = ("_by_id", "_children", "_conflicts", "_cut", "_parent", "_roots", "_spans")

    _by_id: dict[str, Span]
    _parent: dict[str, str]
    _children: dict[str, tuple[Span, ...]]

    def __init__(self, spans: Iterable[Span]) -> None:
        by_id: dict[str, Span] = {}
        conflicts: list[tuple[Span, Span]] = []
        for span in spans:
            known = by_id.get(span.span_id)
            if known is None:
                by_id[span.span_id] = span
                continue
            if conflicting(known, span):
                conflicts.append((known, span))
            if replaces(known, span):
                by_id[span.span_id] = span
        ordered = tuple(sorted(by_id.values(), key=_order))
        parent: dict[str, str] = {}
        for span in ordered:
            parent_id = span.parent_span_id
            if parent_id and parent_id in by_id:
                parent[span.span_id] = parent_id
        cut: list[Span] = []
        state: dict[str, int] = {}  # 1: on the path being walked, 2: done
        for span in ordered:
            span_id = span.span_id
            if span_id in state:
                continue
            up = parent.get(span_id)
            if up is None or state.get(up) == 2:  # a root, or a parent already walked
                state[span_id] = 2
                continue
            current: str | None = span_id
            path: list[str] = []
            while current is not None and current not in state:
                state[current] = 1
                path.append(current)
                up = parent.get(current)
                if up is not None and state.get(up) == 1:
                    del parent[current]  # closes a cycle: cut it here
                    cut.append(by_id[current])
                    break
                current = up
            for item in path:
                state[item] = 2
        children: dict[str, list[Span]] = {}
        roots: list[Span] = []
        for span in ordered:
            up = parent.get(span.span_id)
            if up is None:
                roots.append(span)
            else:
                children.setdefault(up, []).append(span)
        # Private and never changed after this: no method hands out a way to change them.
        self._spans = ordered
        self._by_id = by_id
        self._parent = parent
        self._children = {key: tuple(value) for key, value in children.items()}
        self._roots = tuple(roots)
        self._cut = tuple(cut)
        self._conflicts = tuple(conflicts)

    def __len__(self) -> int:
        return len(self._spans)

    def __contains__(self, span_id: object) -> bool:
        return span_id in self._by_id

    @property
    def spans(self) -> tuple[Span, ...]:
        """Each span once, in time order (parents before their children)."""
        return self._spans

    @property
    def roots(self) -> tuple[Span, ...]:
        """Spans with no parent in the run (or whose link was cut), in time order."""
        return self._roots

    @property
    def cut(self) -> tuple[Span, ...]:
        """Spans whose parent link was cut to break a parent cycle."""
        return self._cut

    @property
    def conflicts(self) -> tuple[tuple[Span, Span], ...]:
        """Copies of one span that disagree (``model.conflicting``), in arrival order: the
        copy met first, and the one that contradicts it."""
        return self._conflicts

    def span(self, span_id: str) -> Span | None:
        return self._by_id.get(span_id)

    def parent_id(self, span_id: str) -> str | None:
        """The id of the span's parent inside the run; None for a root."""
        return self._parent.get(span_id)

    def parent(self, span_id: str) -> Span | None:
        """The span's parent inside the run; None for a root."""
        parent_id = self._parent.get(span_id)
        return None if parent_id is None else self._by_id[parent_id]

    def children(self, span_id: str) -> tuple[Span, ...]:
        """The span's children, in time order."""
        return self._children.get(span_id, ())

    def ancestors(self, span_id: str) -> Iterator[Span]:
        """The span's parent, its parent's parent, ... up to its root."""
        current = self._parent.get(span_id)
        while current is not None:
            yield self._by_id[current]
            current = self._parent.get(current)

    def is_ancestor(self, ancestor_id: str, span_id: str) -> bool:
        """Whether span ``ancestor_id`` is above span ``span_id`` (a span is not its own)."""
        return any(span.span_id == ancestor_id for span in self.ancestors(span_id))

    def nearest(self, marked: Container[str]) -> dict[str, str]:
        """Span id → the nearest span at or above it (itself, its parent, ...) whose id is
        in ``marked``; spans with none are left out. One pass, each link followed once."""
        found: dict[str, str | None] = {}
        parent = self._parent
        for span in self._spans:
            chain: list[str] = []
            current: str | None = span.span_id
            while current is not None and current not in found:
                if current in marked:
                    found[current] = current
                    break
                chain.append(current)
                current = parent.get(current)
            owner = found.get(current) if current is not None else None
            for item in chain:
                found[item] = owner
        return {span_id: owner for span_id, owner in found.items() if owner is not None}

    def roots_by_trace(self) -> dict[str, list[Span]]:
        """Each trace's roots: more than one means the spans joining them were lost."""
        found: dict[str, list[Span]] = {}
        for span in self._roots:
            found.setdefault(span.trace_id, []).append(span)
        return found

    def tree(self) -> Iterator[tuple[Span, int]]:
        """Every span once with its depth, depth first: each root in time order, then its
        children in time order (the waterfall's order)."""
        stack: list[tuple[Span, int]] = [(span, 0) for span in reversed(self._roots)]
        while stack:
            span, depth = stack.pop()
            yield span, depth
            stack.extend((child, depth + 1) for child in reversed(self.children(span.span_id)))


def run_graph(run: Run) -> RunGraph:
    """The run's graph, built on first use and kept with the run."""
    graph = run.derived.get(_GRAPH)
    if graph is None:
        graph = run.derived[_GRAPH] = RunGraph(run.spans)
    return graph


def scored_ids(run: Run) -> list[str]:
    """What identifies the evidence a run was scored on: its span ids, and an id for each
    copy of a span that another copy contradicts (``model.copy_id``). A store that has
    scored these ids need not score the run again; a new conflicting copy is new evidence."""
    graph = run_graph(run)
    ids = [span.span_id for span in graph.spans]
    for first, other in graph.conflicts:
        ids.extend((copy_id(first), copy_id(other)))
    return ids


def _order(span: Span) -> tuple[int, int]:
    """Start time; on a tie the longer span (the parent) first; unended spans count as longest."""
    end = span.end_ns if span.end_ns is not None else 1 << 63
    return (span.start_ns if span.start_ns is not None else 0, -end)
