"""Group a stream of spans into runs, emitting each run as soon as it is complete.

A trace is complete when every top span (no parent, or a parent outside the trace) has
ended and no span of it has arrived for ``idle`` units of the caller's clock: spans read
for files, seconds for the collector. Memory is bounded by the traces still open, and each
open trace by ``max_spans``.

``max_wait`` bounds the time from a trace's first span to its first emission, whether
the trace went quiet with a top span still open or never stops receiving spans (a
long-lived agent, a stuck loop); ``max_spans`` emits a trace that reached that many
spans. Either way the spans that follow open the trace again.

Spans arriving for a trace that was already emitted form a new revision of that run;
they are never silently merged into, or dropped from, a verdict already given.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Reversible
from typing import Literal

from rampart_otel.model import Run, Span, replaces

GroupBy = Literal["trace", "session"]
SESSION_KEYS = ("gen_ai.conversation.id", "session.id")
DEFAULT_IDLE_SPANS = 50_000
DEFAULT_MAX_SPANS = 100_000  # spans one open trace holds before it is emitted anyway


class _OpenTrace:
    __slots__ = ("first_seen", "last_seen", "session_id", "spans")

    def __init__(self, now: float = 0.0) -> None:
        self.spans: dict[str, Span] = {}  # by span id: a re-sent span is one span
        self.first_seen = now
        self.last_seen = 0.0
        self.session_id: str | None = None

    def add(self, span: Span) -> None:
        if replaces(self.spans.get(span.span_id), span):
            self.spans[span.span_id] = span

    def is_complete(self) -> bool:
        spans = self.spans
        return all(
            span.end_ns is not None
            for span in spans.values()
            if span.parent_span_id is None or span.parent_span_id not in spans
        )


class _OpenSession:
    __slots__ = ("last_seen", "traces")

    def __init__(self) -> None:
        self.traces: list[tuple[str, list[Span]]] = []
        self.last_seen = 0.0


class RunAssembler:
    """Feed span batches with ``add``; collect completed runs; ``flush`` at end of input.

    ``max_wait``: a trace not emitted this long after its first span is emitted anyway,
    complete or not, idle or not (a live collector cannot wait forever for a root span
    that may never end, nor for an agent that never stops). ``max_spans``: a trace that
    holds this many spans is emitted at once. Spans arriving later open the trace again.
    ``remember_revisions=False`` leaves revision numbering to the caller, so a long-running
    caller does not keep every run id it ever emitted.
    """

    def __init__(
        self,
        *,
        group_by: GroupBy = "trace",
        idle: float = DEFAULT_IDLE_SPANS,
        max_wait: float | None = None,
        max_spans: int = DEFAULT_MAX_SPANS,
        remember_revisions: bool = True,
    ) -> None:
        self.group_by = group_by
        self.idle = idle
        self.max_wait = max_wait
        self.max_spans = max(max_spans, 1)
        self.remember_revisions = remember_revisions
        self._open: OrderedDict[str, _OpenTrace] = OrderedDict()
        self._stalled: dict[str, _OpenTrace] = {}  # idle but a top span is still open
        # Every open or stalled trace, in the order their first span came (max_wait's order).
        self._by_first: OrderedDict[str, _OpenTrace] = OrderedDict()
        self._sessions: OrderedDict[str, _OpenSession] = OrderedDict()
        self._revisions: dict[str, int] = {}  # emitted run id -> last revision

    @property
    def open_traces(self) -> int:
        return len(self._open) + len(self._stalled)

    @property
    def stalled_trace_ids(self) -> Reversible[str]:
        """Idle traces whose top spans have not all ended, oldest first (flush order)."""
        return self._stalled.keys()

    def add(self, spans: Iterable[Span], now: float) -> list[Run]:
        open_traces = self._open
        full: list[Run] = []
        for span in spans:
            trace = open_traces.get(span.trace_id)
            if trace is None:
                trace = self._stalled.pop(span.trace_id, None)
                if trace is None:
                    trace = self._by_first[span.trace_id] = _OpenTrace(now)
                open_traces[span.trace_id] = trace
            else:
                open_traces.move_to_end(span.trace_id)
            trace.add(span)
            trace.last_seen = now
            if trace.session_id is None and self.group_by == "session":
                trace.session_id = _session_of(span)
            if len(trace.spans) >= self.max_spans:
                del open_traces[span.trace_id]
                full.extend(self._complete(span.trace_id, trace, now))
        return full + self.expire(now)

    def expire(self, now: float) -> list[Run]:
        """Emit runs idle for longer than ``idle``; the collector calls this on a timer."""
        done: list[Run] = []
        deadline = now - self.idle
        while self._open:
            trace_id, trace = next(iter(self._open.items()))
            if trace.last_seen > deadline:
                break
            del self._open[trace_id]
            if trace.is_complete():
                done.extend(self._complete(trace_id, trace, now))
            else:
                self._stalled[trace_id] = trace
        if self.max_wait is not None:
            oldest = now - self.max_wait
            by_first = self._by_first
            while by_first:
                trace_id, trace = next(iter(by_first.items()))
                if trace.first_seen > oldest:
                    break
                if self._open.pop(trace_id, None) is None:
                    del self._stalled[trace_id]
                done.extend(self._complete(trace_id, trace, now))
        while self._sessions:
            session_id, session = next(iter(self._sessions.items()))
            if session.last_seen > deadline:
                break
            del self._sessions[session_id]
            done.append(self._session_run(session_id, session))
        return done

    def emit_complete(self, now: float) -> list[Run]:
        """Every open trace whose top spans have all ended, idle or not: a graceful stop."""
        done: list[Run] = []
        for trace_id in [t for t, trace in self._open.items() if trace.is_complete()]:
            done.extend(self._complete(trace_id, self._open.pop(trace_id), now))
        return done

    def flush(self) -> list[Run]:
        """End of input: everything still open becomes a run, complete or not."""
        done: list[Run] = []
        for source in (self._open, self._stalled):
            for trace_id, trace in source.items():
                done.extend(self._complete(trace_id, trace, 0.0))
            source.clear()
        self._by_first.clear()
        for session_id, session in self._sessions.items():
            done.append(self._session_run(session_id, session))
        self._sessions.clear()
        return done

    def _complete(self, trace_id: str, trace: _OpenTrace, now: float) -> list[Run]:
        self._by_first.pop(trace_id, None)
        if self.group_by == "session" and trace.session_id is not None:
            session = self._sessions.get(trace.session_id)
            if session is None:
                session = self._sessions[trace.session_id] = _OpenSession()
            else:
                self._sessions.move_to_end(trace.session_id)
            session.traces.append((trace_id, list(trace.spans.values())))
            session.last_seen = now
            return []
        return [self._new_run(trace_id, [trace_id], list(trace.spans.values()), None)]

    def _session_run(self, session_id: str, session: _OpenSession) -> Run:
        trace_ids = list(dict.fromkeys(trace_id for trace_id, _ in session.traces))
        spans = [span for _, trace_spans in session.traces for span in trace_spans]
        return self._new_run(f"session:{session_id}", trace_ids, spans, session_id)

    def _new_run(
        self, run_id: str, trace_ids: list[str], spans: list[Span], session_id: str | None
    ) -> Run:
        revision = self._revisions.get(run_id, -1) + 1
        if self.remember_revisions:
            self._revisions[run_id] = revision
        return Run(run_id, trace_ids, spans, session_id=session_id, revision=revision)


def _session_of(span: Span) -> str | None:
    for key in SESSION_KEYS:
        value = span.attributes.get(key)
        if isinstance(value, str) and value:
            return value
    return None
