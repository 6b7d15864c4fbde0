"""Each verdict as an OpenTelemetry event on any OTLP endpoint, tied to the scored trace.

The convention is the GenAI semantic conventions' ``gen_ai.evaluation.result`` event
(development status): ``gen_ai.evaluation.name``, ``gen_ai.evaluation.score.label`` /
``.score.value``, ``gen_ai.evaluation.explanation``, ``error.type``; the event "SHOULD be
parented to the GenAI operation span being evaluated". In current OpenTelemetry an event
is a log record with an ``event_name`` (span events are being phased out in its favour),
so each (run, check) result becomes one SDK log record carrying the trace id and span id
of the scored trace's root span, sent over OTLP logs by the real ``OTLPLogExporter``
(HTTP/protobuf or gRPC). A backend then shows the verdict on the agent's own trace.

It runs in the scorer process, after the results are committed, and never makes scoring
wait: ``submit`` only puts small records on a bounded queue (when full they are dropped and
counted); one thread emits them in batches and flushes each through the exporter, which
retries within its timeout. ``results.db`` stays the record; export is best effort and
every record is counted as exported, failed or dropped (``/metrics``): exported only on a 2xx
answer. Over HTTP each request ends within ``timeout_seconds``, retries and ``Retry-After``
included, and a redirect is a failure (``exporters/otlp_send.bounded_transport``).

The SDK and the OTLP log exporters are imported when an export starts (marked "startup"):
the collector loads this module whether or not verdict export is configured.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rampart_otel import __version__
from rampart_otel.evaluation import CheckResult
from rampart_otel.exporters.otlp_send import bounded_transport, grpc_endpoint, http_endpoint
from rampart_otel.model import Run
from rampart_otel.run_graph import run_graph
from rampart_otel.sinks import Closing, Scored, SinkDefaults

log = logging.getLogger(__name__)

EVENT_NAME = "gen_ai.evaluation.result"
SCOPE = "rampart_otel.verdicts"
# Severity per status: what a log backend filters on. An unsafe or undetermined verdict
# needs a look; an error is the evaluation itself failing.
_SEVERITY = {"safe": "INFO", "undetermined": "WARN", "unsafe": "WARN", "error": "ERROR"}
_SCORE_VALUE = {"safe": 1.0, "unsafe": 0.0}  # so a backend can average a pass rate
WARN_EVERY = 60.0  # seconds between warnings about a failing endpoint


@dataclass(frozen=True, slots=True)
class VerdictEvent:
    """What one log record needs, without holding on to the run's spans."""

    trace_id: str
    span_id: str | None
    timestamp_ns: int
    severity: str
    attributes: dict[str, Any]


def root_span(run: Run) -> tuple[str, str | None, Any]:
    """(trace id, span id, span) of the run's earliest root: the span the verdict is about."""
    roots = run_graph(run).roots
    if not roots:
        return (run.trace_ids[0] if run.trace_ids else ""), None, None
    root = min(roots, key=lambda s: (s.parent_span_id is not None, s.start_ns or 0))
    return root.trace_id, root.span_id, root


def verdict_events(
    run: Run, results: Sequence[CheckResult], *, scored_at: float
) -> list[VerdictEvent]:
    """One event per result of the run's revision."""
    trace_id, span_id, root = root_span(run)
    response_id = root.attributes.get("gen_ai.response.id") if root is not None else None
    return [
        VerdictEvent(
            trace_id,
            span_id,
            int(scored_at * 1e9),
            _SEVERITY.get(result.status.value, "INFO"),
            evaluation_attributes(result, run, response_id),
        )
        for result in results
    ]


def evaluation_attributes(
    result: CheckResult, run: Run, response_id: object = None
) -> dict[str, Any]:
    """The ``gen_ai.evaluation.result`` attributes, then rampart-otel's own (``rampart.*``)."""
    status = result.status.value
    attributes: dict[str, Any] = {
        "gen_ai.evaluation.name": result.check_id,
        "gen_ai.evaluation.score.label": status,
    }
    if status in _SCORE_VALUE:
        attributes["gen_ai.evaluation.score.value"] = _SCORE_VALUE[status]
    if result.summary:
        attributes["gen_ai.evaluation.explanation"] = result.summary
    if status == "error":
        attributes["error.type"] = _error_type(result.error or result.summary)
    if isinstance(response_id, str) and response_id:
        attributes["gen_ai.response.id"] = response_id
    level = result.observability_level
    optional = {
        "rampart.policy.name": result.policy,
        "rampart.policy.version": _scalar(result.policy_version),
        "rampart.check.polarity": result.polarity or None,
        "rampart.harm_category": result.harm_category,
        "rampart.observability_level": level.value if level is not None else None,
        "rampart.run.id": result.run_id,
        "rampart.run.revision": run.revision,
        "rampart.tenant": run.tenant or None,  # the collector tenant that sent the run
        "rampart.trace_ids": list(run.trace_ids) or None,
        "rampart.service.name": result.service,
        "rampart.assumed_channels": sorted(result.assumed_channels) or None,
    }
    attributes.update({key: value for key, value in optional.items() if value is not None})
    return attributes


def _scalar(value: object) -> str | int | float | None:
    if value is None or isinstance(value, str | int | float):
        return value
    return str(value)


def _error_type(error: object) -> str:
    """A low-cardinality ``error.type``: the exception class when the text starts with one."""
    name = str(error or "").partition(":")[0].strip()
    return name if name.isidentifier() else "_OTHER"


# -- the export thread ----------------------------------------------------------------------


@dataclass(slots=True)
class ExportStats:
    submitted: int = 0
    exported: int = 0
    failed: int = 0  # the exporter gave up on them (endpoint down, refused)
    dropped: int = 0  # never handed to the exporter: queue full, or still queued at stop
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, **counts: int) -> None:
        with self.lock:
            for name, count in counts.items():
                setattr(self, name, getattr(self, name) + count)

    def snapshot(self, queued: int) -> dict[str, int]:
        with self.lock:
            return {
                "submitted": self.submitted,
                "exported": self.exported,
                "failed": self.failed,
                "dropped": self.dropped,
                "queued": queued,
            }


def _counting_exporter(inner: Any, stats: ExportStats) -> Any:
    """The real exporter, counting each record it sent or gave up on."""
    from opentelemetry.sdk._logs.export import LogRecordExporter, LogRecordExportResult  # startup

    last_warning = [-WARN_EVERY]

    class Counting(LogRecordExporter):
        def export(self, batch: Sequence[Any]) -> Any:
            try:
                result = inner.export(batch)
            except Exception:
                log.exception("verdict export failed")
                result = LogRecordExportResult.FAILURE
            if result == LogRecordExportResult.SUCCESS:
                stats.add(exported=len(batch))
            else:
                stats.add(failed=len(batch))
                now = time.monotonic()
                if now - last_warning[0] >= WARN_EVERY:  # a down endpoint: once a minute
                    last_warning[0] = now
                    log.warning(
                        "verdict export failing: %d verdict events not delivered so far",
                        stats.failed,
                    )
            return result

        def shutdown(self) -> None:
            inner.shutdown()

        def force_flush(self, timeout_millis: int = 30000) -> bool:
            return True

    return Counting()


def make_log_exporter(endpoint: str, protocol: str, headers: dict[str, str], timeout: float) -> Any:
    """The real OTLPLogExporter for ``protocol``; an HTTP URL without a path gets /v1/logs."""
    if protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter  # startup

        return OTLPLogExporter(
            endpoint=grpc_endpoint(endpoint),
            headers=tuple(headers.items()) or None,
            timeout=timeout,
        )
    from opentelemetry.exporter.otlp.proto.http._log_exporter import (
        OTLPLogExporter as HttpLogExporter,
    )

    # Our transport: each request ends within the timeout whatever the endpoint does, and
    # a 3xx is a failure (the exporter alone would count a redirect as delivered).
    return HttpLogExporter(
        endpoint=http_endpoint(endpoint, "/v1/logs"),
        headers=headers,
        timeout=timeout,
        _transport=bounded_transport("LOGS"),
    )


_STOP = object()


class VerdictExporter:
    """Bounded queue → one thread → SDK LoggerProvider → the real OTLP log exporter."""

    def __init__(
        self,
        exporter: Any,
        *,
        queue_size: int = 10000,
        batch_size: int = 512,
        resource_attributes: dict[str, Any] | None = None,
    ) -> None:
        from opentelemetry.sdk._logs import LoggerProvider  # startup
        from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
        from opentelemetry.sdk.resources import Resource

        self.stats = ExportStats()
        self.batch_size = batch_size
        self._queue: queue.Queue[VerdictEvent] = queue.Queue(queue_size)
        attributes = {"service.name": "rampart-otel", "service.version": __version__}
        attributes.update(resource_attributes or {})
        self._provider = LoggerProvider(
            resource=Resource.create(attributes), shutdown_on_exit=False
        )
        self._provider.add_log_record_processor(
            BatchLogRecordProcessor(
                _counting_exporter(exporter, self.stats),
                max_export_batch_size=batch_size,
                max_queue_size=2 * batch_size,  # never fuller than one batch: nothing dropped
                schedule_delay_millis=60_000,  # we flush each batch ourselves
            )
        )
        self._logger = self._provider.get_logger(SCOPE, __version__)
        self._closing = threading.Event()  # finish what is queued, then stop
        self._abort = threading.Event()  # stop now: out of time
        self._thread = threading.Thread(target=self._run, name="verdict-export", daemon=True)
        self._thread.start()

    # -- scorer side: never blocks ---------------------------------------------------------

    def submit(self, scored: Sequence[Scored]) -> None:
        """Queue the events of committed results; what does not fit is dropped and counted."""
        dropped = submitted = 0
        for item in scored:
            for event in verdict_events(item.run, item.results, scored_at=item.scored_at):
                try:
                    self._queue.put_nowait(event)
                    submitted += 1
                except queue.Full:
                    dropped += 1
        self.stats.add(submitted=submitted, dropped=dropped)
        if dropped:
            log.warning("verdict export queue full: %d verdict events dropped", dropped)

    def report(self) -> dict[str, int]:
        return self.stats.snapshot(self._queue.qsize())

    # -- export thread ---------------------------------------------------------------------

    def _run(self) -> None:
        while not self._abort.is_set():
            try:
                first = self._queue.get(timeout=0.2)
            except queue.Empty:
                if self._closing.is_set():
                    return
                continue
            batch = [first]
            while len(batch) < self.batch_size:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            if self._abort.is_set():  # the provider is shut down: these would vanish
                self.stats.add(dropped=len(batch))
                return
            for event in batch:
                self._emit(event)
            self._provider.force_flush()

    def _emit(self, event: VerdictEvent) -> None:
        from opentelemetry import trace  # startup
        from opentelemetry._logs import LogRecord, SeverityNumber

        context = None
        if event.span_id:
            span_context = trace.SpanContext(
                int(event.trace_id, 16),
                int(event.span_id, 16),
                is_remote=True,
                trace_flags=trace.TraceFlags(trace.TraceFlags.SAMPLED),
            )
            context = trace.set_span_in_context(trace.NonRecordingSpan(span_context))
        self._logger.emit(
            LogRecord(
                timestamp=event.timestamp_ns,
                context=context,
                severity_text=event.severity,
                severity_number=getattr(SeverityNumber, event.severity),
                attributes=event.attributes,
                event_name=EVENT_NAME,
            )
        )

    def close(self, timeout: float) -> None:
        """Send what is queued for up to ``timeout`` seconds; count the rest as dropped."""
        if self._closing.is_set():
            return
        self._closing.set()
        self._thread.join(timeout)
        if self._thread.is_alive():
            self._abort.set()
        self._provider.shutdown()  # also cuts short an export still waiting out retries
        self._thread.join(5)
        left = 0
        while True:
            try:
                self._queue.get_nowait()
                left += 1
            except queue.Empty:
                break
        if left:
            self.stats.add(dropped=left)
            log.warning("verdict export: %d verdict events still queued at stop, dropped", left)


class VerdictEventSink(SinkDefaults):
    """The collector's verdict export as a sink: each batch of committed runs queued as
    events (never waiting); ``close`` sends what is queued for up to ``timeout`` seconds."""

    def __init__(self, exporter: VerdictExporter, *, timeout: float) -> None:
        self.exporter = exporter
        self.timeout = timeout

    def prepare(self, scored: Scored) -> Scored:
        return scored

    def write(self, batch: Sequence[Scored]) -> None:
        self.exporter.submit(batch)

    def close(self, closing: Closing) -> None:
        self.exporter.close(self.timeout)
