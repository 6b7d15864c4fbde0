"""Write-back and alerts through the outbox: what the scorer queues, and how the delivery
threads deliver it (receivers stood in by functions here; the real ones, and a collector
under load with both down for a minute, in test_writeback_live.py)."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from rampart_otel.collector.config import load_config
from rampart_otel.collector.writeback import (
    ALERT,
    ANNOTATE,
    Deliveries,
    OutboxSink,
    _Target,
    receiver_down,
)
from rampart_otel.evaluation import CheckResult, SafetyStatus
from rampart_otel.exporters.alerts import Refused
from rampart_otel.model import Run
from rampart_otel.receivers.stores import TraceStoreError
from rampart_otel.sinks import Scored
from rampart_otel.storage.outbox import Outbox

TRACE = "0123456789abcdef0123456789abcdef"


def _config(tmp_path: Path, **delivery: float) -> object:
    return load_config(
        None,
        overrides={
            "data_dir": str(tmp_path),
            "annotate.url": "phoenix://127.0.0.1:1/default",
            "alerts.webhook.url": "http://127.0.0.1:1/alerts",
            "delivery.retry_max_seconds": delivery.get("retry", 0.2),
            "delivery.give_up_after_seconds": delivery.get("give_up", 600),
        },
    )


def _scored(run_id: str, revision: int = 0, *statuses: SafetyStatus) -> Scored:
    run = Run(run_id=run_id, trace_ids=[TRACE], spans=[], revision=revision)
    results = [
        CheckResult(
            run_id=run_id,
            trace_ids=[TRACE],
            check_id=f"check-{index}",
            polarity="attack",
            status=status,
            summary=f"{status.value} summary",
            policy="guard",
            policy_version=1,
        )
        for index, status in enumerate(statuses or (SafetyStatus.UNSAFE, SafetyStatus.SAFE))
    ]
    return Scored(run, results, scored_at=time.time())


def test_the_scorer_queues_an_annotation_per_run_and_an_alert_per_unsafe_result(
    tmp_path: Path,
) -> None:
    config = _config(tmp_path)
    outbox = Outbox(tmp_path)
    sink = OutboxSink(config, outbox)  # type: ignore[arg-type]
    assert sink.durable
    batch = [_scored("run-1"), _scored("run-2", 0, SafetyStatus.SAFE)]
    sink.write([sink.prepare(scored) for scored in batch])
    annotations = outbox.due(ANNOTATE, time.time())
    alerts = outbox.due(ALERT, time.time())
    assert [a.key for a in annotations] == ["run-1", "run-2"]
    assert [a.key for a in alerts] == ["|run-1|guard@1|check-0"]  # no tenant named
    body = json.loads(alerts[0].payload)
    assert (body["verdict"], body["check"], body["run_id"]) == ("unsafe", "check-0", "run-1")
    # The same commit queued again (a crash before the verdicts committed): nothing new.
    sink.write([sink.prepare(scored) for scored in batch])
    assert outbox.pending_count(ANNOTATE) == 2 and outbox.pending_count(ALERT) == 1


class Receiver:
    """A target that is down for its first ``down`` calls (``failure`` raised), then takes
    everything; what it took, in order."""

    def __init__(self, down: int = 0, failure: Exception | None = None) -> None:
        self.down = down
        self.failure = failure or Refused("Unreachable: [Errno 111] Connection refused")
        self.calls = 0
        self.took: list[bytes] = []
        self.lock = threading.Lock()

    def __call__(self, payload: bytes) -> None:
        with self.lock:
            self.calls += 1
            if self.calls <= self.down:
                raise self.failure
            self.took.append(payload)


def _deliver(deliveries: Deliveries, until: object, timeout: float = 30.0) -> None:
    deliveries.start()
    try:
        deadline = time.monotonic() + timeout
        while not until():  # type: ignore[operator]
            assert time.monotonic() < deadline, "not delivered in time"
            time.sleep(0.05)
    finally:
        deliveries.stop()


def test_a_receiver_down_gets_everything_once_when_it_is_back(tmp_path: Path) -> None:
    config = _config(tmp_path)
    outbox = Outbox(tmp_path)
    sink = OutboxSink(config, outbox)  # type: ignore[arg-type]
    sink.write([sink.prepare(_scored(f"run-{n}")) for n in range(20)])
    receiver = Receiver(down=5)
    deliveries = Deliveries(config)  # type: ignore[arg-type]
    deliveries.targets = [_Target(ALERT, receiver)]
    _deliver(deliveries, lambda: len(receiver.took) == 20)
    keys = [json.loads(p)["run_id"] for p in receiver.took]
    assert sorted(keys) == sorted(f"run-{n}" for n in range(20))  # each once
    # While down it was asked about one item at a time, not about all twenty.
    assert receiver.calls == 25
    assert outbox.pending_count(ALERT) == 0
    assert outbox.counts(ALERT) == {"queued": 20, "delivered": 20, "failures": 5, "dropped": 0}


def test_an_item_the_store_refuses_on_its_own_does_not_hold_the_others(tmp_path: Path) -> None:
    # Phoenix answers 404 for a trace it does not have (yet): that item waits, the rest go.
    config = _config(tmp_path)
    outbox = Outbox(tmp_path)
    sink = OutboxSink(config, outbox)  # type: ignore[arg-type]
    sink.write([sink.prepare(_scored(f"run-{n}")) for n in range(5)])
    took: list[str] = []

    def store(payload: bytes) -> None:
        run_id = json.loads(payload)["run_id"]
        if run_id == "run-0":
            raise TraceStoreError(
                "phoenix://x/default: Phoenix answered POST /v1/trace_annotations with "
                "HTTP 404: Traces with IDs 0123 do not exist."
            )
        took.append(run_id)

    deliveries = Deliveries(config)  # type: ignore[arg-type]
    deliveries.targets = [_Target(ANNOTATE, store)]
    _deliver(deliveries, lambda: len(took) == 4)
    assert took == ["run-1", "run-2", "run-3", "run-4"]
    assert [d.key for d in outbox.due(ANNOTATE, time.time() + 3600)] == ["run-0"]


def test_what_the_receiver_calls_malformed_or_what_is_too_old_is_dropped(tmp_path: Path) -> None:
    config = _config(tmp_path, give_up=0.5)
    outbox = Outbox(tmp_path)
    sink = OutboxSink(config, outbox)  # type: ignore[arg-type]
    sink.write([sink.prepare(_scored("run-1")), sink.prepare(_scored("run-2"))])
    receiver = Receiver(down=10**6, failure=Refused("HTTP 400: bad", final=True))
    deliveries = Deliveries(config)  # type: ignore[arg-type]
    deliveries.targets = [_Target(ALERT, receiver)]
    _deliver(deliveries, lambda: outbox.pending_count(ALERT) == 0)
    assert outbox.counts(ALERT)["dropped"] == 2 and receiver.calls == 2
    # An annotation the store keeps refusing is given up once older than give_up_after.
    store = Receiver(down=10**6, failure=TraceStoreError("Phoenix answered HTTP 503"))
    deliveries = Deliveries(config)  # type: ignore[arg-type]
    deliveries.targets = [_Target(ANNOTATE, store)]
    _deliver(deliveries, lambda: outbox.pending_count(ANNOTATE) == 0)
    assert outbox.counts(ANNOTATE)["dropped"] == 2


def test_alerts_keep_to_their_rate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = _config(tmp_path)
    outbox = Outbox(tmp_path)
    sink = OutboxSink(config, outbox)  # type: ignore[arg-type]
    sink.write([sink.prepare(_scored(f"run-{n}")) for n in range(5)])
    receiver = Receiver()
    deliveries = Deliveries(config)  # type: ignore[arg-type]
    deliveries.targets = [_Target(ALERT, receiver, per_minute=3)]
    deliveries.start()
    try:
        time.sleep(3)
        assert len(receiver.took) == 3  # the other two wait for the minute to pass
    finally:
        deliveries.stop(timeout=1)
    assert outbox.pending_count(ALERT) == 2


@pytest.mark.parametrize(
    ("reason", "down"),
    [
        ("Unreachable: [Errno 111] Connection refused", True),
        ("HTTP 503: unavailable", True),
        ("HTTP 429: slow down", True),
        ("phoenix://x: Phoenix answered POST /v1/trace_annotations with HTTP 404: no", False),
        ("HTTP 401: who are you", False),
    ],
)
def test_a_failure_is_the_receivers_or_the_items(reason: str, down: bool) -> None:
    assert receiver_down(reason) is down


def test_the_collector_settings_refuse_what_cannot_work(tmp_path: Path) -> None:
    from rampart_otel.errors import ConfigError

    with pytest.raises(ConfigError, match="--annotate: must be a phoenix:// or mlflow:// URL"):
        load_config(
            None,
            overrides={"annotate.url": "http://127.0.0.1:6006"},
            flags={"annotate.url": "--annotate"},
        )
    with pytest.raises(ConfigError, match="--alert-webhook: must be an http:// or https://"):
        load_config(
            None,
            overrides={"alerts.webhook.url": "ftp://x"},
            flags={"alerts.webhook.url": "--alert-webhook"},
        )
    config = load_config(None, overrides={"alerts.webhook.url": "https://hooks.example/x"})
    assert config.alerts.webhook.verdicts == ["unsafe"] and config.annotate.url is None


def test_write_back_and_alerts_carry_the_tenant_that_sent_the_run(tmp_path: Path) -> None:
    from dataclasses import replace as copy_with

    from span_factory import mk

    config = _config(tmp_path)
    outbox = Outbox(tmp_path)
    sink = OutboxSink(config, outbox)  # type: ignore[arg-type]
    scored = _scored("run-1")
    for tenant in ("team-a", "team-b"):  # the same run id from two tenants: two of each
        span = copy_with(mk("00000000000000aa", "agent"), tenant=tenant)
        run = Run(run_id="run-1", trace_ids=[TRACE], spans=[span])
        sink.write([sink.prepare(Scored(run, scored.results, scored_at=scored.scored_at))])
    annotations = [json.loads(d.payload) for d in outbox.due(ANNOTATE, time.time())]
    alerts = [json.loads(d.payload) for d in outbox.due(ALERT, time.time())]
    assert [a["checks"][0]["metadata"]["tenant"] for a in annotations] == ["team-a", "team-b"]
    assert [a["rollup"]["metadata"]["tenant"] for a in annotations] == ["team-a", "team-b"]
    assert [a["tenant"] for a in alerts] == ["team-a", "team-b"]
    assert len({a["id"] for a in alerts}) == 2
