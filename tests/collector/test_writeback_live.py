"""A collector writing its verdicts back to a trace store and alerting a webhook as it
scores: over real OTLP (``rampart-otel replay``), into ``rampart-otel collect`` run as an
operator runs it, with the store and the receiver going down and coming back.

The quick tests use a stand-in Phoenix (tests/store_standin.py) and a webhook receiver on
loopback (tests/webhook_receiver.py); the slow one a real Phoenix, stopped for 60 s under a
replayed load together with the receiver.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest
from store_standin import json_answer, standin
from trace_stores import (
    PHOENIX_PYTHON,
    POLICY,
    SAMPLES,
    missing,
    phoenix_server_in_temp,
    send,
    spans_in,
    wait_for_spans,
)
from webhook_receiver import WebhookReceiver

from collector.harness import spawn, wait_for, write_config

EXFIL = SAMPLES / "traces/openinference-exfil.jsonl"
INJECTION = SAMPLES / "traces/openinference-injection.jsonl"
SETTINGS = """\
assembly:
  idle_seconds: 1
delivery:
  retry_max_seconds: 2
"""


class StandInPhoenix:
    """What a stand-in Phoenix was asked to write; ``down`` answers every write 503."""

    def __init__(self) -> None:
        self.annotations: list[dict[str, Any]] = []
        self.down = False
        self.refused = 0
        self.lock = threading.Lock()

    def routes(self) -> dict[str, Any]:
        def write(method: str, _query: dict, body: Any) -> Any:
            with self.lock:
                if self.down:
                    self.refused += 1
                    return json_answer({"detail": "Service Unavailable"}, 503)
                if body and "data" in body:
                    self.annotations.extend(body["data"])
            return json_answer({"data": []})

        return {"/trace_annotations": write, "re:/annotation_configs": write}

    def of_trace(self, trace_id: str) -> list[dict[str, Any]]:
        with self.lock:
            return [a for a in self.annotations if a.get("trace_id") == trace_id]


def _metric(collector: Any, name: str) -> float:
    return collector.metrics().get(f"rampart_otel_{name}", 0.0)


def _replay(path: Path, url: str) -> None:
    send(path, url.removesuffix("/v1/traces") + "/v1/traces")


def test_verdicts_are_written_back_and_unsafe_alerted_once_through_an_outage(
    tmp_path: Path,
) -> None:
    store = StandInPhoenix()
    receiver = WebhookReceiver().start()
    config = write_config(tmp_path / "collector.yaml", SETTINGS)
    with standin(store.routes()) as (address, _):
        collector = spawn(
            tmp_path / "data", config, "--policy", str(POLICY),
            "--annotate", f"phoenix://{address}/default", "--alert-webhook", receiver.url,
        )  # fmt: skip
        try:
            _replay(EXFIL, collector.traces_url)
            exfil = "9eabfebdb8b003e645c9dab8a4a5e7ca"
            wait_for(lambda: len(receiver.bodies()) == 3, 120, "three alerts")
            wait_for(lambda: len(store.of_trace(exfil)) == 7, 120, "the run's annotations")
            alerts = receiver.bodies()
            assert {a["check"] for a in alerts} == {
                "no-exfiltration",
                "no-secrets-in-reports",
                "no-unrequested-reports",
            }
            first = alerts[0]
            assert first["schema"] == "rampart-otel/alert@1"
            assert (first["verdict"], first["run_id"], first["trace_ids"]) == (
                "unsafe",
                exfil,
                [exfil],
            )
            assert first["policy"] == "weather-agent-guard" and first["policy_version"] == "1"
            assert [h["idempotency-key"] for h, _ in receiver.received] == [a["id"] for a in alerts]
            rollup = next(a for a in store.of_trace(exfil) if a["name"] == "rampart")
            assert rollup["result"]["label"] == "unsafe"
            # Both down: the next run is scored, queued, and delivered once they are back.
            store.down = True
            receiver.stop()
            _replay(INJECTION, collector.traces_url)
            wait_for(lambda: _metric(collector, "alerts_pending") >= 3, 120, "alerts queued")
            wait_for(lambda: store.refused >= 1, 60, "the store refusing")
            assert len(receiver.bodies()) == 3
            store.down = False
            receiver.start()
            wait_for(lambda: len(receiver.bodies()) == 6, 120, "the queued alerts")
            wait_for(lambda: _metric(collector, "annotations_pending") == 0, 120, "write-back")
            time.sleep(3)  # nothing more arrives: each was sent once
            ids = Counter(a["id"] for a in receiver.bodies())
            assert len(ids) == 6 and set(ids.values()) == {1}
            assert _metric(collector, "alerts_sent_total") == 6
            assert _metric(collector, "alerts_failures_total") >= 1
            assert _metric(collector, "alerts_dropped_total") == 0
            assert _metric(collector, "annotations_written_total") == 2
            # Every metric the example alerting rules (docs/alerts.md) name is served.
            served = {name.partition("{")[0] for name in collector.metrics()}
            page = (Path(__file__).resolve().parents[2] / "docs/alerts.md").read_text()
            rules = page[page.index("groups:") :]
            named = set(re.findall(r"\b(rampart_otel_[a-z_]+[a-z])\b", rules))
            assert named and named <= served, named - served
            assert collector.terminate() == 0
        finally:
            receiver.stop()
            if collector.process.poll() is None:
                collector.kill()


def test_a_queued_alert_survives_a_collector_restart(tmp_path: Path) -> None:
    receiver = WebhookReceiver().start()
    receiver.stop()  # down from the start
    config = write_config(tmp_path / "collector.yaml", SETTINGS)
    args = ("--policy", str(POLICY), "--alert-webhook", receiver.url)
    collector = spawn(tmp_path / "data", config, *args)
    try:
        _replay(EXFIL, collector.traces_url)
        wait_for(lambda: _metric(collector, "alerts_pending") == 3, 120, "alerts queued")
        assert collector.terminate() == 0
    finally:
        if collector.process.poll() is None:
            collector.kill()
    receiver.start()
    collector = spawn(tmp_path / "data", config, *args)
    try:
        wait_for(lambda: len(receiver.bodies()) == 3, 120, "the alerts, after the restart")
        time.sleep(3)
        assert len(receiver.bodies()) == 3
        assert collector.terminate() == 0
    finally:
        receiver.stop()
        if collector.process.poll() is None:
            collector.kill()


# -- the real thing: Phoenix and the receiver down for a minute under load -----------------

OUTAGE_SECONDS = 60
RECORDINGS = sorted((SAMPLES / "traces").glob("openinference-*.jsonl")) + sorted(
    (SAMPLES / "traces").glob("openllmetry-*.jsonl")
)
COPIES = 4  # of each recording, under ids of its own: 96 runs


def copies(out_dir: Path) -> list[Path]:
    """``COPIES`` of each recording, every trace and span id replaced by one of its copy's
    own (the same span ids within a copy): as many distinct runs, each as recorded."""
    made = []
    for copy in range(COPIES):
        for path in RECORDINGS:
            target = out_dir / f"{copy}-{path.name}"
            with target.open("w") as out:
                for line in path.read_text().splitlines():
                    out.write(json.dumps(_renamed(json.loads(line), copy)) + "\n")
            made.append(target)
    return made


def _renamed(value: Any, copy: int) -> Any:
    if isinstance(value, dict):
        return {
            key: _new_id(item, copy)
            if key in ("traceId", "spanId", "parentSpanId") and isinstance(item, str) and item
            else _renamed(item, copy)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_renamed(item, copy) for item in value]
    return value


def _new_id(old: str, copy: int) -> str:
    return hashlib.sha256(f"{copy}:{old}".encode()).hexdigest()[: len(old)]


@pytest.mark.slow
@pytest.mark.stores
def test_store_and_receiver_down_for_a_minute_under_load_lose_and_repeat_nothing(
    tmp_path: Path,
) -> None:
    if not PHOENIX_PYTHON.is_file():
        pytest.skip(missing("arize-phoenix", PHOENIX_PYTHON))
    started = time.monotonic()
    figures: dict[str, float] = {}
    receiver = WebhookReceiver().start()
    config = write_config(tmp_path / "collector.yaml", SETTINGS)
    load = copies(tmp_path)
    half = len(load) // 2
    with phoenix_server_in_temp() as phoenix:
        address = phoenix.start()
        figures["phoenix_start_s"] = time.monotonic() - started
        collector = spawn(
            tmp_path / "data", config, "--policy", str(POLICY),
            "--annotate", f"phoenix://{address}/default", "--alert-webhook", receiver.url,
        )  # fmt: skip
        try:
            # The agents send every trace to Phoenix and to the collector.
            for path in load:
                send(path, f"http://{address}/v1/traces")
            wait_for_spans(f"phoenix://{address}/default", sum(map(spans_in, load)), 300)
            for path in load[:half]:
                _replay(path, collector.traces_url)
            wait_for(  # the first half written back while both are up
                lambda: _metric(collector, "annotations_written_total") >= half, 300, "half"
            )
            figures["delivered_before_outage"] = _metric(collector, "annotations_written_total")
            # Down: the store and the receiver, for a minute, while the load goes on.
            phoenix.stop()
            receiver.stop()
            down_at = time.monotonic()
            for path in load[half:]:
                _replay(path, collector.traces_url)
            wait_for(lambda: _metric(collector, "alerts_failures_total") > 0, 120, "a failure")
            time.sleep(max(OUTAGE_SECONDS - (time.monotonic() - down_at), 0))
            figures["queued_at_restart_annotations"] = _metric(collector, "annotations_pending")
            figures["queued_at_restart_alerts"] = _metric(collector, "alerts_pending")
            receiver.start()
            phoenix.start()
            figures["outage_s"] = time.monotonic() - down_at
            back_at = time.monotonic()
            runs = _wait_until_scored(collector, tmp_path / "data", len(load))
            wait_for(
                lambda: (
                    _metric(collector, "annotations_pending") == 0
                    and _metric(collector, "alerts_pending") == 0
                ),
                600,
                "the outbox to empty",
            )
            figures["drained_after_restart_s"] = time.monotonic() - back_at
            time.sleep(5)  # nothing more arrives
            for name in ("annotations_written", "annotations_failures", "annotations_dropped",
                         "alerts_sent", "alerts_failures", "alerts_dropped"):  # fmt: skip
                figures[name] = _metric(collector, f"{name}_total")
            assert collector.terminate() == 0
            verdicts = _stored_verdicts(tmp_path / "data")
            # Every run annotated once per check, and once as a whole, as stored.
            for run_id, results in verdicts.items():
                found = _phoenix_annotations(address, run_id)
                names = Counter(a["name"] for a in found)
                assert names == Counter(["rampart", *(f"rampart:{c}" for c in results)]), run_id
                for annotation in found:
                    if annotation["name"] != "rampart":
                        check = annotation["name"].removeprefix("rampart:")
                        assert annotation["result"]["label"] == results[check], (run_id, check)
            # Every UNSAFE alerted, once.
            unsafe = {
                (run_id, check)
                for run_id, results in verdicts.items()
                for check, status in results.items()
                if status == "unsafe"
            }
            alerted = Counter((a["run_id"], a["check"]) for a in receiver.bodies())
            assert set(alerted) == unsafe and set(alerted.values()) == {1}
            assert figures["alerts_dropped"] == figures["annotations_dropped"] == 0
            figures.update(runs=runs, unsafe=len(unsafe), took_s=time.monotonic() - started)
        finally:
            receiver.stop()
            if collector.process.poll() is None:
                collector.kill()
    print(f"[figures] outage under load: {json.dumps(figures, sort_keys=True)}")


def _wait_until_scored(collector: Any, data_dir: Path, files: int) -> int:
    """Until the run count stops moving (every file's run scored); the count."""
    last, steady = -1.0, 0
    while steady < 5:
        count = _metric(collector, "runs_scored_total")
        steady = steady + 1 if count == last and count >= files else 0
        last = count
        time.sleep(1)
    return int(last)


def _stored_verdicts(data_dir: Path) -> dict[str, dict[str, str]]:
    """Each run's latest revision's verdicts, by check, as the collector stored them."""
    db = sqlite3.connect(f"file:{data_dir / 'results.db'}?mode=ro", uri=True)
    try:
        rows = db.execute(
            "SELECT run_id, revision, check_id, status FROM results ORDER BY revision"
        ).fetchall()
    finally:
        db.close()
    latest: dict[str, int] = {}
    for run_id, revision, _, _ in rows:
        latest[run_id] = max(latest.get(run_id, -1), revision)
    verdicts: dict[str, dict[str, str]] = {}
    for run_id, revision, check, status in rows:
        if revision == latest[run_id]:
            verdicts.setdefault(run_id, {})[check] = status
    return verdicts


def _phoenix_annotations(address: str, trace_id: str) -> list[dict[str, Any]]:
    url = f"http://{address}/v1/projects/default/trace_annotations"
    return httpx.get(url, params={"trace_ids": trace_id, "limit": 1000}, timeout=60).json()["data"]
