"""The collector's own counters, served on ``GET /metrics`` by ``prometheus_client``.

Receivers count on the request path (a lock per update: requests are few, spans many);
gauges that belong to other parts (queue depth, open traces) and the scorer process's latest
report are read when scraped, by a custom collector on a private registry.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Callable, Iterator

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

PREFIX = "rampart_otel_"
_SCORER_COUNTERS = (
    ("judge_calls", "Requests the judge endpoint answered (judge(...) checks)."),
    ("judge_prompt_tokens", "Prompt tokens the judge endpoint counted."),
    ("judge_completion_tokens", "Completion tokens the judge endpoint counted."),
    ("judge_cache_hits", "Judge answers read from the cache instead of asked."),
    ("judge_failures", "Judge requests that failed or answered out of format."),
    ("runs_scored", "Run revisions scored."),
    ("spans_scored", "Spans in the run revisions scored (a later revision counts them again)."),
    ("runs_skipped", "Runs found already scored (replay after a restart)."),
    ("spans_decoded", "Spans decoded from the segments by the scorer."),
    ("decode_errors", "Stored records the scorer could not decode as a whole."),
    (
        "spans_quarantined",
        "Stored spans the scorer could not read; the rest of each record was scored.",
    ),
)


class Metrics:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.spans_received: defaultdict[str, int] = defaultdict(int)  # by transport
        self.spans_rejected: defaultdict[tuple[str, str], int] = defaultdict(int)
        self.requests: defaultdict[tuple[str, str], int] = defaultdict(int)  # transport, code
        self.gauges: dict[str, tuple[str, Callable[[], float]]] = {}
        self.counters: dict[str, tuple[str, Callable[[], float]]] = {}
        self.shards: dict[int, dict[str, object]] = {}  # each scorer shard's latest report
        self.stored_verdicts: dict[str, int] = {}  # in the results store at start
        self._retired_verdicts: dict[str, int] = {}  # by scorer processes since replaced
        self._retired_tenants: dict[str, int] = {}  # their TENANT/STATUS counts
        self._retired: dict[str, int] = {}  # their other counters (runs_scored, ...)
        self._registry = CollectorRegistry(auto_describe=False)
        self._registry.register(self)  # a custom collector

    def request(
        self, transport: str, code: str, spans: int = 0, rejected: int = 0, lost: int = 0
    ) -> None:
        """An accepted request: ``rejected`` spans refused in it, ``lost`` of them unreadable
        with no trace id (reason ``no_trace``: in no run, so no verdict says they are gone)."""
        with self._lock:
            self.requests[transport, code] += 1
            if spans:
                self.spans_received[transport] += spans
            if rejected > lost:
                self.spans_rejected[transport, "invalid"] += rejected - lost
            if lost:
                self.spans_rejected[transport, "no_trace"] += lost

    def refused(self, transport: str, code: str, reason: str, spans: int = 0) -> None:
        with self._lock:
            self.requests[transport, code] += 1
            if spans:
                self.spans_rejected[transport, reason] += spans

    def set_scorer(self, report: dict[str, object], shard: int = 0) -> None:
        with self._lock:
            previous = self.shards.get(shard)
            if previous is not None and previous.get("pid") != report.get("pid"):  # restarted
                _add_counts(self._retired_verdicts, previous.get("verdicts"))
                _add_counts(self._retired_tenants, previous.get("tenant_verdicts"))
                _add_counts(self._retired, {k: previous.get(k) for k, _ in _SCORER_COUNTERS})
            self.shards[shard] = report

    def verdicts_scored(self) -> dict[str, int]:
        """Verdicts stored since the collector started, by status: every scorer process's,
        a restarted one's included."""
        with self._lock:
            total = dict(self._retired_verdicts)
            for report in self.shards.values():
                _add_counts(total, report.get("verdicts"))
        return total

    def tenant_verdicts(self) -> dict[tuple[str, str], int]:
        """Verdicts stored since the collector started, by (tenant, status): every scorer
        process's, of runs a tenant sent (a collector that names tenants)."""
        with self._lock:
            total = dict(self._retired_tenants)
            for report in self.shards.values():
                _add_counts(total, report.get("tenant_verdicts"))
        return {tuple(key.rsplit("/", 1)): count for key, count in total.items()}  # type: ignore[misc]

    @property
    def scorer(self) -> dict[str, object]:
        """The scorer shards' latest reports as one: counts added up, how far behind as
        the slowest shard."""
        with self._lock:
            reports = list(self.shards.values())
            retired = dict(self._retired)
        out = combined(reports)
        for key, count in retired.items():  # a restarted process's counts stay counted
            value = out.get(key)
            out[key] = count + (value if isinstance(value, int | float) else 0)
        return out

    def gauge(self, name: str, help_text: str, read: Callable[[], float]) -> None:
        self.gauges[name] = (help_text, read)

    def counter(self, name: str, help_text: str, read: Callable[[], float]) -> None:
        """A counter another part keeps (served as ``PREFIX + name + _total``)."""
        self.counters[name] = (help_text, read)

    def exposition(self) -> tuple[bytes, str]:
        """The ``/metrics`` body and its content type."""
        return generate_latest(self._registry), CONTENT_TYPE_LATEST

    def collect(self) -> Iterator[Metric]:
        with self._lock:
            received = dict(self.spans_received)
            rejected = dict(self.spans_rejected)
            requests = dict(self.requests)
            shards = dict(self.shards)
        scorer = self.scorer
        family = _counter("spans_received", "Spans durably stored and acknowledged.", "transport")
        for transport in ("http", "grpc"):
            family.add_metric([transport], received.get(transport, 0))
        yield family
        family = _counter("spans_rejected", "Spans refused, by reason.", "transport", "reason")
        for labels, count in sorted(rejected.items()):
            family.add_metric(list(labels), count)
        yield family
        family = _counter("requests", "Export requests, by response status.", "transport", "code")
        for labels, count in sorted(requests.items()):
            family.add_metric(list(labels), count)
        yield family
        for name, (help_text, read) in sorted(self.gauges.items()):
            try:
                value = read()
            except Exception:  # a gauge that cannot be read is left out, never a failed scrape
                continue
            yield GaugeMetricFamily(PREFIX + name, help_text, value=value)
        for name, (help_text, read) in sorted(self.counters.items()):
            yield CounterMetricFamily(PREFIX + name, help_text, value=read())
        yield GaugeMetricFamily(
            PREFIX + "open_traces",
            "Traces received but not yet complete and scored.",
            value=_number(scorer.get("open_traces")),
        )
        verdicts = dict(self.stored_verdicts)
        _add_counts(verdicts, self.verdicts_scored())
        family = _counter("verdicts", "Check results stored, by status.", "status")
        for status in ("safe", "unsafe", "undetermined", "error"):
            family.add_metric([status], verdicts.get(status, 0))
        yield family
        by_tenant = self.tenant_verdicts()
        if by_tenant:
            family = _counter(
                "tenant_verdicts",
                "Check results stored since the start, by tenant (tenants:) and status.",
                "tenant",
                "status",
            )
            for (tenant, status), count in sorted(by_tenant.items()):
                family.add_metric([tenant, status], count)
            yield family
        for key, help_text in _SCORER_COUNTERS:
            yield CounterMetricFamily(PREFIX + key, help_text, value=_number(scorer.get(key)))
        family = _counter(
            "shard_spans_scored",
            "Spans in the run revisions each scorer shard scored (scoring.workers).",
            "shard",
        )
        for shard, report in sorted(shards.items()):
            family.add_metric([str(shard)], _number(report.get("spans_scored")))
        yield family
        yield GaugeMetricFamily(
            PREFIX + "scoring_lag_bytes",
            "Stored bytes the scorer has not read yet.",
            value=_number(scorer.get("lag_bytes")),
        )
        export = scorer.get("verdict_export")
        if isinstance(export, dict):
            family = _counter(
                "verdict_export_events",
                "Verdict events for the OTLP export: exported, failed (the exporter gave up), "
                "dropped (queue full or still queued at stop).",
                "outcome",
            )
            for outcome in ("exported", "failed", "dropped"):
                family.add_metric([outcome], export.get(outcome, 0))
            yield family
            yield GaugeMetricFamily(
                PREFIX + "verdict_export_queue_events",
                "Verdict events waiting to be sent.",
                value=_number(export.get("queued")),
            )


_SLOWEST = {"lag_bytes": max}
_SKIPPED = frozenset({"shard", "drained", "position", "pid"})


def _add_counts(into: dict[str, int], counts: object) -> None:
    if isinstance(counts, dict):
        for name, count in counts.items():
            if isinstance(count, int) and not isinstance(count, bool):
                into[name] = into.get(name, 0) + count


def combined(reports: list[dict[str, object]]) -> dict[str, object]:
    """Several scorer shards' reports as one: numbers and each count of a mapping added up
    (verdicts, the verdict export's tallies), ``lag_bytes`` the largest, ``position`` the
    least (how far every shard has read)."""
    if len(reports) == 1:
        return dict(reports[0])
    out: dict[str, object] = {}
    positions = [r["position"] for r in reports if isinstance(r.get("position"), list | tuple)]
    if positions:
        out["position"] = list(min(tuple(p) for p in positions))  # type: ignore[arg-type]
    for report in reports:
        for key, value in report.items():
            if key in _SKIPPED:
                continue
            seen = out.get(key)
            if isinstance(value, dict):
                merged = dict(seen) if isinstance(seen, dict) else {}
                for name, count in value.items():
                    if isinstance(count, int | float) and not isinstance(count, bool):
                        merged[name] = merged.get(name, 0) + count
                out[key] = merged
            elif isinstance(value, int | float) and not isinstance(value, bool):
                pick = _SLOWEST.get(key)
                if not isinstance(seen, int | float):
                    out[key] = value
                else:
                    out[key] = pick(seen, value) if pick is not None else seen + value
    return out


def _counter(name: str, help_text: str, *labels: str) -> CounterMetricFamily:
    return CounterMetricFamily(PREFIX + name, help_text, labels=list(labels))


def _number(value: object) -> float:
    return float(value) if isinstance(value, int | float) else 0.0
