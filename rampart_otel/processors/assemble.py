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

Spans a collector received from different tenants (``Span.tenant``) are never in one run:
traces and sessions are kept per tenant, and a tenant's run ids start with its name
(``TENANT/``), so one tenant's spans can neither join nor replace another's, whatever
trace id they claim.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator, Reversible
from typing import Literal

from rampart_otel.model import Run, Span, add_copy, copies_held

GroupBy = Literal["trace", "session"]
SESSION_KEYS = ("gen_ai.conversation.id", "session.id")
DEFAULT_IDLE_SPANS = 50_000
DEFAULT_MAX_SPANS = 100_000  # spans one open trace holds before it is emitted anyway


def tenant_key(tenant: str, key: str) -> str:
    """A trace id, session id or run id as ``tenant``'s (unchanged for no tenant)."""
    return f"{tenant}/{key}" if tenant else key


class _OpenTrace:
    __slots__ = (
        "conflicting", "copies", "first_seen", "last_seen", "session_id", "spans", "tenant",
        "trace_id",
    )  # fmt: skip

    def __init__(self, trace_id: str, tenant: str, now: float = 0.0) -> None:
        self.trace_id = trace_id
        self.tenant = tenant
        self.spans: dict[str, Span] = {}  # by span id: a re-sent span is one span
        self.conflicting: dict[str, list[Span]] = {}  # copies another copy contradicts
        self.copies = 0  # conflicting copies held
        self.first_seen = now
        self.last_seen = 0.0
        self.session_id: str | None = None

    def add(self, span: Span) -> None:
        if add_copy(self.spans, self.conflicting, span):
            self.copies += 1

    @property
    def held(self) -> int:
        """Spans and conflicting copies: what ``max_spans`` bounds."""
        return len(self.spans) + self.copies

    def all_spans(self) -> list[Span]:
        """Each span kept, and each copy that conflicts with it (``model.add_copy``)."""
        return copies_held(self.spans, self.conflicting)

    def is_complete(self) -> bool:
        spans = self.spans
        return all(
            span.end_ns is not None
            for span in spans.values()
            if span.parent_span_id is None or span.parent_span_id not in spans
        )


class _TraceIds:
    """The trace ids of held traces, in their order (a tenant's trace is held under its
    tenant's key): a view, read lazily from either end."""

    __slots__ = ("_traces",)

    def __init__(self, traces: dict[str, _OpenTrace]) -> None:
        self._traces = traces

    def __iter__(self) -> Iterator[str]:
        return (trace.trace_id for trace in self._traces.values())

    def __reversed__(self) -> Iterator[str]:
        return (trace.trace_id for trace in reversed(self._traces.values()))


class _OpenSession:
    __slots__ = ("last_seen", "session_id", "tenant", "traces")

    def __init__(self, session_id: str, tenant: str) -> None:
        self.session_id = session_id
        self.tenant = tenant
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
        return _TraceIds(self._stalled)

    def add(self, spans: Iterable[Span], now: float) -> list[Run]:
        open_traces = self._open
        full: list[Run] = []
        for span in spans:
            key = span.trace_id if not span.tenant else tenant_key(span.tenant, span.trace_id)
            trace = open_traces.get(key)
            if trace is None:
                trace = self._stalled.pop(key, None)
                if trace is None:
                    trace = self._by_first[key] = _OpenTrace(span.trace_id, span.tenant, now)
                open_traces[key] = trace
            else:
                open_traces.move_to_end(key)
            trace.add(span)
            trace.last_seen = now
            if trace.session_id is None and self.group_by == "session":
                trace.session_id = _session_of(span)
            if trace.held >= self.max_spans:
                del open_traces[key]
                full.extend(self._complete(key, trace, now))
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
            session_key, session = next(iter(self._sessions.items()))
            if session.last_seen > deadline:
                break
            del self._sessions[session_key]
            done.append(self._session_run(session))
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
        for session in self._sessions.values():
            done.append(self._session_run(session))
        self._sessions.clear()
        return done

    def _complete(self, key: str, trace: _OpenTrace, now: float) -> list[Run]:
        """The trace held under ``key`` (its id, as its tenant's) as a run, or into its
        session."""
        self._by_first.pop(key, None)
        if self.group_by == "session" and trace.session_id is not None:
            session_key = tenant_key(trace.tenant, trace.session_id)
            session = self._sessions.get(session_key)
            if session is None:
                session = self._sessions[session_key] = _OpenSession(trace.session_id, trace.tenant)
            else:
                self._sessions.move_to_end(session_key)
            session.traces.append((trace.trace_id, trace.all_spans()))
            session.last_seen = now
            return []
        return [self._new_run(key, [trace.trace_id], trace.all_spans(), None)]

    def _session_run(self, session: _OpenSession) -> Run:
        trace_ids = list(dict.fromkeys(trace_id for trace_id, _ in session.traces))
        spans = [span for _, trace_spans in session.traces for span in trace_spans]
        run_id = tenant_key(session.tenant, f"session:{session.session_id}")
        return self._new_run(run_id, trace_ids, spans, session.session_id)

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
