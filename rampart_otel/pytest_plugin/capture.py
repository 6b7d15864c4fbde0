"""The ``agent_trace`` fixture's object: the spans one test's code finished, scored in place.

Spans reach it through one processor per global ``TracerProvider`` (the SDK cannot take a
processor back out): the processor hands each finished span to the captures open at that
moment, and a capture is open only while its test runs, so no other test's spans get in.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal, NoReturn, Protocol, runtime_checkable
from weakref import WeakKeyDictionary

import pytest
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider

from rampart_otel.api import PolicySource, policy_of, policy_type_problem, span_runs
from rampart_otel.engine import checked_assumptions
from rampart_otel.errors import PolicyError
from rampart_otel.evaluation import CheckResult, Policy
from rampart_otel.model import AgentRun
from rampart_otel.normalize import normalize
from rampart_otel.pipeline import Pipeline, RunList
from rampart_otel.pytest_plugin.report import failure_lines
from rampart_otel.render import safe_text
from rampart_otel.sinks import ResultList, Scored, SinkDefaults

EXIT_USAGE = 2  # the CLI's exit code for a policy that cannot be used
NO_POLICY = (
    "no policy: pass one to agent_trace.score() or mark the test "
    '@pytest.mark.rampart(policy="policy.yaml")'
)
# "test" (the default): everything that ended during the test is one run, whatever its
# trace ids; "trace" splits it, one run per trace (no stitching); "session", one run per
# conversation, as `score --group-by session`.
GroupBy = Literal["test", "trace", "session"]
SPANS_NAMED = 3
SHARED_CAPTURE = (
    "rampart-otel: another agent_trace captured spans in this process while this test ran "
    "(tests run in threads), so its spans cannot be told apart from this test's: run such "
    "tests in processes (pytest-xdist), not threads."
)
NOTHING_CAPTURED = (
    "rampart-otel: no span ended during the test, so there is nothing to score. Is the agent "
    "instrumented, and does it trace through the global TracerProvider (not one of its own)?"
)


class SpanCapture:
    """The finished spans of one test, in the order they ended, and the spans started
    during it that have not ended yet; filled from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._spans: list[ReadableSpan] = []
        # Started here, not ended, by (trace id, span id): on_end gets another object.
        self._running: dict[tuple[int, int], ReadableSpan] = {}
        # Another capture was open at the same time (tests in threads of one process):
        # every span that ended went to both, so neither's spans are its own.
        self.shared = False

    def start(self, span: ReadableSpan) -> None:
        if span.context is not None:
            with self._lock:
                self._running[span.context.trace_id, span.context.span_id] = span

    def add(self, span: ReadableSpan) -> None:
        with self._lock:
            if span.context is not None:
                self._running.pop((span.context.trace_id, span.context.span_id), None)
            self._spans.append(span)

    def spans(self) -> list[ReadableSpan]:
        with self._lock:
            return list(self._spans)

    def running(self) -> list[ReadableSpan]:
        """The spans started during the test that have not ended: the work still going on."""
        with self._lock:
            return list(self._running.values())


class _CaptureRouter(SpanProcessor):
    """Added once to a provider; gives each finished span to every capture open now."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: list[SpanCapture] = []

    def open(self, capture: SpanCapture) -> None:
        with self._lock:
            if self._open:
                for other in [*self._open, capture]:
                    other.shared = True
            self._open.append(capture)

    def close(self, capture: SpanCapture) -> None:
        with self._lock:
            self._open.remove(capture)

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        with self._lock:
            captures = list(self._open)
        for capture in captures:
            capture.start(span)

    def on_end(self, span: ReadableSpan) -> None:
        with self._lock:
            captures = list(self._open)
        for capture in captures:
            capture.add(span)

    def shutdown(self) -> None:
        pass

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


@runtime_checkable
class _TakesProcessors(Protocol):
    """A provider that takes span processors: the SDK's, or one that wraps it (Logfire's)."""

    def add_span_processor(self, span_processor: SpanProcessor) -> None: ...


_ROUTERS: WeakKeyDictionary[object, _CaptureRouter] = WeakKeyDictionary()
_ROUTERS_LOCK = threading.Lock()


def _router() -> _CaptureRouter:
    """The global provider's router, installing an SDK provider first if none is set."""
    if isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        trace.set_tracer_provider(TracerProvider())  # ignored (with a warning) if another won
    provider = trace.get_tracer_provider()
    if not isinstance(provider, _TakesProcessors):
        misuse(
            "agent_trace needs a global TracerProvider that takes span processors (the "
            f"OpenTelemetry SDK's); the global one is a {type(provider).__name__}"
        )
    with _ROUTERS_LOCK:
        router = _ROUTERS.get(provider)
        if router is None:
            router = _ROUTERS[provider] = _CaptureRouter()
            provider.add_span_processor(router)
        return router


@contextmanager
def capturing() -> Iterator[SpanCapture]:
    """Every span that ends on the global provider while the block runs."""
    router = _router()
    capture = SpanCapture()
    router.open(capture)
    try:
        yield capture
    finally:
        router.close(capture)


class _SessionRecord(SinkDefaults):
    """The session's record of every result scored, as a sink: by test, for the summary
    and ``--rampart-report``."""

    def __init__(self, record: Callable[[Iterable[CheckResult]], None]) -> None:
        self.record = record

    def prepare(self, scored: Scored) -> list[CheckResult]:
        return scored.results

    def write(self, batch: Sequence[list[CheckResult]]) -> None:
        for results in batch:
            self.record(results)


class AgentTrace:
    """What the code under test traced during one test: its spans, runs and verdicts.

    A relative policy path is read from the test file's directory; each file is parsed
    once per session. Every scored result is kept for the session summary and report.
    """

    def __init__(
        self,
        capture: SpanCapture,
        *,
        test_dir: Path,
        default_policy: PolicySource | None,
        policies: dict[Path, Policy],
        record: Callable[[Iterable[CheckResult]], None],
        stopped: Callable[[str], None] = lambda message: None,
        run_id: str = "test",
        node_id: str = "",
    ) -> None:
        self._capture = capture
        self._run_id = run_id
        self._node_id = node_id  # the test's: its own run goes without saying in its lines
        self._test_dir = test_dir
        self._default_policy = default_policy
        self._policies = policies
        self._record = record
        self._stopped = stopped

    @property
    def spans(self) -> list[ReadableSpan]:
        """The finished spans captured so far, in the order they ended."""
        return self._capture.spans()

    def runs(self, *, group_by: GroupBy = "test") -> list[AgentRun]:
        """What each captured run did (tool calls, side effects, response, coverage): by
        default one run, the test's; ``group_by="trace"`` splits it by trace. As
        :meth:`score`, it fails the test while a span started during it is still open."""
        self._check_done()
        return [normalize(run) for run in span_runs(self.spans, **self._grouping(group_by))]

    def score(
        self,
        policy: PolicySource | None = None,
        *,
        assume_coverage: Iterable[str] = (),
        group_by: GroupBy = "test",
    ) -> list[CheckResult]:
        """Every check of ``policy`` (default: the test's ``rampart`` mark) on every run:
        by default the test's one run, or one per trace (``group_by="trace"``).

        A policy (or ``assume_coverage`` key) that cannot be used stops the session, once,
        with its one-line error: every other test using it would fail the same way.
        """
        chosen = self._policy(policy)
        spans = self._finished()
        try:
            assumed = checked_assumptions(
                assume_coverage, option="assume_coverage", policies=[chosen]
            )
        except PolicyError as error:
            self._stop(error)
        # The test's runs, through the one pipeline: into the list returned, and into the
        # session's record (its summary and --rampart-report).
        source = RunList(span_runs(spans, **self._grouping(group_by)))
        kept = ResultList()
        Pipeline([chosen], [kept, _SessionRecord(self._record)], assume=assumed).run(source)
        return kept.results

    def assert_safe(
        self,
        policy: PolicySource | None = None,
        *,
        assume_coverage: Iterable[str] = (),
        group_by: GroupBy = "test",
    ) -> list[CheckResult]:
        """:meth:`score`, failing the test with every result that is not SAFE."""
        results = self.score(policy, assume_coverage=assume_coverage, group_by=group_by)
        failing = [result for result in results if not result]
        if failing:
            lines = failure_lines(results, failing, "are not safe", self._node_id)
            pytest.fail("\n".join(lines), pytrace=False)
        return results

    def _check_done(self) -> None:
        """Fail the test if its spans are not all its own (another capture was open at the
        same time) or if work it started goes on: a span still open is work whose side
        effects are not in the trace yet (read now, the trace would show less than it did)."""
        if self._capture.shared:
            pytest.fail(SHARED_CAPTURE, pytrace=False)
        running = self._capture.running()
        if running:
            pytest.fail(unfinished_text(running), pytrace=False)

    def _finished(self) -> list[ReadableSpan]:
        """The spans to score, all ended; the test fails if there are none."""
        self._check_done()
        spans = self.spans
        if not spans:
            pytest.fail(NOTHING_CAPTURED, pytrace=False)
        return spans

    def _grouping(self, group_by: GroupBy) -> dict[str, Any]:
        """``span_runs``'s arguments for ``group_by``."""
        if group_by == "test":
            return {"one_run": self._run_id}
        if group_by == "trace":  # split: one run per trace, not stitched back together
            return {"group_by": "trace", "stitch": False}
        if group_by == "session":
            return {"group_by": "session"}
        misuse(f"group_by is one of test, trace, session, not {safe_text(repr(group_by))}")

    def _policy(self, policy: PolicySource | None) -> Policy:
        policy = self._default_policy if policy is None else policy
        if policy is None:
            misuse(NO_POLICY)
        if isinstance(policy, Policy):
            return policy
        problem = policy_type_problem(policy)
        if problem:
            misuse(f"policy: {problem}")
        path = (self._test_dir / policy).resolve()
        if path not in self._policies:
            try:
                self._policies[path] = policy_of(path)
            except PolicyError as error:
                self._stop(error)
        return self._policies[path]

    def _stop(self, error: PolicyError) -> NoReturn:
        """End the whole session with the error's one line (exit code 2, as the CLI's)."""
        message = f"rampart-otel: error: {safe_text(str(error), 500)}"
        self._stopped(message)
        pytest.exit(message, returncode=EXIT_USAGE)


def unfinished_text(running: Sequence[ReadableSpan]) -> str:
    """Why a test that scores while its agent still runs fails: the spans still open."""
    named = ", ".join(
        f"{safe_text(repr(span.name), 80)} (span {span.context.span_id:016x})"
        for span in running[:SPANS_NAMED]
        if span.context is not None
    )
    more = len(running) - SPANS_NAMED
    started = (
        "span started during the test has"
        if len(running) == 1
        else ("spans started during the test have")
    )
    return (
        f"rampart-otel: {len(running)} {started} not ended: {named}"
        + (f" and {more} more" if more > 0 else "")
        + ". The agent is still running and what it does next is not in the trace: score "
        "once it is done (join its threads, await its tasks, read or close its streams)."
    )


def misuse(message: str) -> NoReturn:
    """Fail the test with one line, no traceback into the plugin: the fixture misused (a
    missing policy, an argument of the wrong type or value)."""
    pytest.fail(f"rampart-otel: error: {message}", pytrace=False)
