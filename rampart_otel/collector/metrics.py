"""The collector's own counters, served as Prometheus text on ``GET /metrics``.

Receivers count on the request path (a lock per update: requests are few, spans many);
gauges that belong to other parts (queue depth, open traces) are read when scraped.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Callable

PREFIX = "rampart_otel_"


class Metrics:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.spans_received: defaultdict[str, int] = defaultdict(int)  # by transport
        self.spans_rejected: defaultdict[tuple[str, str], int] = defaultdict(int)
        self.requests: defaultdict[tuple[str, str], int] = defaultdict(int)  # transport, code
        self.gauges: dict[str, tuple[str, Callable[[], float]]] = {}
        self.scorer: dict[str, object] = {}  # the scorer's latest report

    def request(self, transport: str, code: str, spans: int = 0, rejected: int = 0) -> None:
        with self._lock:
            self.requests[transport, code] += 1
            if spans:
                self.spans_received[transport] += spans
            if rejected:
                self.spans_rejected[transport, "invalid"] += rejected

    def refused(self, transport: str, code: str, reason: str, spans: int = 0) -> None:
        with self._lock:
            self.requests[transport, code] += 1
            if spans:
                self.spans_rejected[transport, reason] += spans

    def set_scorer(self, report: dict[str, object]) -> None:
        with self._lock:
            self.scorer = report

    def gauge(self, name: str, help_text: str, read: Callable[[], float]) -> None:
        self.gauges[name] = (help_text, read)

    def render(self) -> str:
        lines: list[str] = []

        def family(name: str, kind: str, help_text: str) -> None:
            lines.append(f"# HELP {PREFIX}{name} {help_text}")
            lines.append(f"# TYPE {PREFIX}{name} {kind}")

        with self._lock:
            received = dict(self.spans_received)
            rejected = dict(self.spans_rejected)
            requests = dict(self.requests)
            scorer = dict(self.scorer)
        family("spans_received_total", "counter", "Spans durably stored and acknowledged.")
        for transport in ("http", "grpc"):
            lines.append(
                f'{PREFIX}spans_received_total{{transport="{transport}"}} '
                f"{received.get(transport, 0)}"
            )
        family("spans_rejected_total", "counter", "Spans refused, by reason.")
        for (transport, reason), count in sorted(rejected.items()):
            lines.append(
                f'{PREFIX}spans_rejected_total{{transport="{transport}",reason="{reason}"}} {count}'
            )
        family("requests_total", "counter", "Export requests, by response status.")
        for (transport, code), count in sorted(requests.items()):
            lines.append(f'{PREFIX}requests_total{{transport="{transport}",code="{code}"}} {count}')
        for name, (help_text, read) in sorted(self.gauges.items()):
            family(name, "gauge", help_text)
            try:
                value = read()
            except Exception:  # a gauge that cannot be read is left out, never a failed scrape
                lines.pop()
                lines.pop()
                continue
            lines.append(f"{PREFIX}{name} {_number(value)}")
        family("open_traces", "gauge", "Traces received but not yet complete and scored.")
        lines.append(f"{PREFIX}open_traces {scorer.get('open_traces', 0)}")
        family("verdicts_total", "counter", "Check results stored, by status.")
        verdicts = scorer.get("verdicts") or {}
        assert isinstance(verdicts, dict)
        for status in ("safe", "unsafe", "undetermined", "error"):
            lines.append(f'{PREFIX}verdicts_total{{status="{status}"}} {verdicts.get(status, 0)}')
        for key, help_text in (
            ("runs_scored", "Run revisions scored."),
            ("runs_skipped", "Runs found already scored (replay after a restart)."),
            ("spans_decoded", "Spans decoded from the segments by the scorer."),
            ("decode_errors", "Stored records the scorer could not decode."),
        ):
            family(f"{key}_total", "counter", help_text)
            lines.append(f"{PREFIX}{key}_total {scorer.get(key, 0)}")
        family("scoring_lag_bytes", "gauge", "Stored bytes the scorer has not read yet.")
        lines.append(f"{PREFIX}scoring_lag_bytes {scorer.get('lag_bytes', 0)}")
        export = scorer.get("verdict_export")
        if isinstance(export, dict):
            family(
                "verdict_export_events_total",
                "counter",
                "Verdict events for the OTLP export: exported, failed (the exporter gave up), "
                "dropped (queue full or still queued at stop).",
            )
            for outcome in ("exported", "failed", "dropped"):
                lines.append(
                    f'{PREFIX}verdict_export_events_total{{outcome="{outcome}"}} '
                    f"{export.get(outcome, 0)}"
                )
            family("verdict_export_queue_events", "gauge", "Verdict events waiting to be sent.")
            lines.append(f"{PREFIX}verdict_export_queue_events {export.get('queued', 0)}")
        return "\n".join(lines) + "\n"


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))
