"""Verdicts written back to a trace store and alerts sent to a webhook, as the collector
scores, through a durable outbox (``storage/outbox.py``): nothing lost while the store or
the receiver is down, nothing written or alerted twice, the queue bounded.

Two halves:

- :class:`OutboxSink`, a sink of the scorer's pipeline (``sinks.ResultSink``), ``durable``:
  the scorer hands it each commit's runs *inside* the verdicts' write transaction
  (``scorer.Scorer._commit``), so a verdict is stored only once its write-back and alerts
  are queued; a crash before the commit re-scores the run, and queuing it again changes
  nothing (the outbox keys each item).
- :class:`Deliveries`, in the collector's own process: one thread per target takes what
  is due, delivers it, and retries what failed with exponential backoff (to
  ``delivery.retry_max_seconds``), pausing the whole target while its receiver is down.
  An item is dropped (counted, logged) only when the receiver says the request itself is
  wrong, or it is older than ``delivery.give_up_after_seconds``.

Annotations: one item per run, the newest revision replacing an older one still waiting.
Alerts: one per (run, policy version, check), sent once ever, at most
``alerts.webhook.rate_per_minute``.
"""

from __future__ import annotations

import json
import logging
import random
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rampart_otel.collector.config import CollectorConfig
from rampart_otel.collector.metrics import Metrics
from rampart_otel.errors import UserError
from rampart_otel.exporters.alerts import Alert, AlertRule, Refused, alerts_of, send_alert
from rampart_otel.exporters.store_annotations import (
    RunAnnotation,
    Writer,
    annotations_for,
    run_annotation,
)
from rampart_otel.lazy_regex import LazyPattern
from rampart_otel.sinks import Scored, SinkDefaults
from rampart_otel.storage.outbox import Due, Item, Outbox

log = logging.getLogger("rampart_otel.collector")

ANNOTATE, ALERT = "annotate", "alert"
ONCE = (ALERT,)
BATCH = 50  # items taken per round
FIRST_RETRY = 1.0  # seconds; doubled per failure up to delivery.retry_max_seconds
WARN_EVERY = 60.0  # seconds between warnings about one target's failures
ITEM_RETRY_MAX = 600.0  # an item the receiver refuses on its own (a trace not in the store)
_ITEM_REFUSED = LazyPattern(r"HTTP 4(?!08|29)\d\d")  # 4xx but timeout / too many requests


def receiver_down(reason: str) -> bool:
    """Whether a failure is the receiver's as a whole (unreachable, 5xx, 408, 429) rather
    than the item's own (another 4xx: a trace the store does not have yet)."""
    return _ITEM_REFUSED.search(reason) is None


def enabled(config: CollectorConfig) -> bool:
    return config.annotate.url is not None or config.alerts.webhook.url is not None


def alert_rule(config: CollectorConfig) -> AlertRule:
    webhook = config.alerts.webhook
    return AlertRule(tuple(webhook.verdicts), tuple(webhook.checks), webhook.show_secrets)


class OutboxSink(SinkDefaults):
    """Each scored run's write-back and alerts, queued in the outbox (``durable``: the
    scorer writes it inside the verdicts' transaction)."""

    durable = True
    shows_coverage = False  # annotations and alerts say verdicts, reasons and evidence

    def __init__(self, config: CollectorConfig, outbox: Outbox) -> None:
        self.outbox = outbox
        self.annotate = config.annotate
        self.rule = alert_rule(config) if config.alerts.webhook.url else None
        self.collector = config.instance()
        self.dropped = 0

    def prepare(self, scored: Scored) -> list[Item]:
        items = []
        run = scored.run
        if self.annotate.url is not None:
            annotation = run_annotation(
                scored, show_secrets=self.annotate.show_secrets, session=self.annotate.sessions
            )
            if annotation is not None:
                payload = json.dumps(annotation.as_json(), ensure_ascii=False).encode()
                key = f"{run.tenant}|{run.run_id}" if run.tenant else run.run_id
                items.append(Item(ANNOTATE, key, run.revision, payload))
        if self.rule is not None:
            for alert in alerts_of(scored, self.rule, collector=self.collector):
                payload = json.dumps(alert.as_json(), ensure_ascii=False).encode()
                items.append(Item(ALERT, alert.key, run.revision, payload))
        return items

    def write(self, batch: Sequence[list[Item]]) -> None:
        dropped = self.outbox.enqueue((item for items in batch for item in items), once=ONCE)
        if dropped:
            self.dropped += dropped
            log.error(
                "outbox full (delivery.max_pending): %d write-backs or alerts dropped", dropped
            )


@dataclass
class _Target:
    """How one target delivers an item, and how fast it may."""

    name: str
    deliver: Callable[[bytes], None]
    per_minute: float | None = None


class Deliveries:
    """The outbox's delivery threads (one per configured target), in the collector's
    process; ``stop`` lets them finish the item in hand."""

    def __init__(self, config: CollectorConfig, metrics: Metrics | None = None) -> None:
        self.config = config
        self.delivery = config.delivery
        self.targets: list[_Target] = []
        if config.annotate.url is not None:
            writer = _store_writer(config.annotate.url)
            self.targets.append(
                _Target(ANNOTATE, lambda data: _annotate(writer, data), per_minute=None)
            )
        webhook = config.alerts.webhook
        if webhook.url is not None:
            url, form, headers = webhook.url, webhook.format, dict(webhook.headers)
            self.targets.append(
                _Target(
                    ALERT,
                    lambda data: send_alert(url, _alert(data), form=form, headers=headers),
                    per_minute=webhook.rate_per_minute,
                )
            )
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        self._reader = Outbox(config.data_dir, max_pending=self.delivery.max_pending)
        self._cache: tuple[float, dict[str, Any]] = (0.0, {})
        if metrics is not None:
            self._register(metrics)

    def start(self) -> None:
        for target in self.targets:
            thread = threading.Thread(
                target=self._run, args=(target,), name=f"deliver-{target.name}", daemon=True
            )
            thread.start()
            self._threads.append(thread)

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout)
        with self._lock:
            self._reader.close()

    # -- one target ----------------------------------------------------------------------

    def _run(self, target: _Target) -> None:
        outbox = Outbox(self.config.data_dir, max_pending=self.delivery.max_pending)
        warned = 0.0
        sent_at: list[float] = []  # the last minute's deliveries (rate limit)
        try:
            while not self._stop.is_set():
                now = time.time()
                due = outbox.due(target.name, now, BATCH)
                if not due:
                    following = outbox.next_due(target.name)
                    wait = 1.0 if following is None else min(max(following - now, 0.05), 1.0)
                    self._stop.wait(wait)
                    continue
                for item in due:
                    if self._stop.is_set():
                        break
                    if target.per_minute is not None:
                        self._pace(sent_at, target.per_minute)
                        if self._stop.is_set():
                            break
                    failure, down = self._deliver_one(outbox, target, item)
                    if failure is None:
                        if target.per_minute is not None:
                            sent_at.append(time.monotonic())
                        continue
                    if time.monotonic() - warned >= WARN_EVERY:
                        warned = time.monotonic()
                        log.warning(
                            "%s: %s (%d waiting; retried with backoff)",
                            _what(target.name),
                            failure,
                            outbox.pending_count(target.name),
                        )
                    if down:
                        break  # the receiver failed: the rest wait for the backoff too
        except Exception:  # a bug must not take the collector down; say it, and stop here
            log.exception("%s: delivery stopped", _what(target.name))
        finally:
            outbox.close()

    def _deliver_one(self, outbox: Outbox, target: _Target, item: Due) -> tuple[str | None, bool]:
        """Deliver ``item``: (None, False) when done, else (why not, whether the receiver
        as a whole is down); the item is retried later, or dropped."""
        try:
            target.deliver(item.payload)
        except (Refused, UserError) as error:
            reason = str(error)
            age = time.time() - item.enqueued_at
            if getattr(error, "final", False) or age > self.delivery.give_up_after_seconds:
                outbox.give_up(target.name, item, reason)
                log.error("%s: dropped %s: %s", _what(target.name), item.key, reason)
                return reason, False
            down = receiver_down(reason)
            longest = self.delivery.retry_max_seconds if down else ITEM_RETRY_MAX
            wait = min(FIRST_RETRY * 2**item.attempts, longest) * random.uniform(0.8, 1.0)
            at = time.time() + max(wait, getattr(error, "retry_in", None) or 0)
            outbox.retry(target.name, item, reason, at)
            if down:  # the others wait too, instead of each failing against it
                outbox.postpone(target.name, at)
            return reason, down
        outbox.delivered(target.name, item)
        return None, False

    def _pace(self, sent_at: list[float], per_minute: float) -> None:
        while sent_at and time.monotonic() - sent_at[0] >= 60.0:
            sent_at.pop(0)
        if len(sent_at) >= per_minute:
            self._stop.wait(max(60.0 - (time.monotonic() - sent_at[0]), 0.0))

    # -- /metrics ------------------------------------------------------------------------

    def figures(self) -> dict[str, Any]:
        """Each target's pending count, oldest item's age and totals (read at most once a
        second, however many gauges ask)."""
        now = time.time()
        with self._lock:
            read_at, cached = self._cache
            if now - read_at < 1.0:
                return cached
            figures = {
                target.name: {
                    "pending": self._reader.pending_count(target.name),
                    "oldest": self._reader.oldest_seconds(target.name, now),
                    **self._reader.counts(target.name),
                }
                for target in self.targets
            }
            self._cache = (now, figures)
            return figures

    def _register(self, metrics: Metrics) -> None:
        for target in self.targets:
            noun = "annotations" if target.name == ANNOTATE else "alerts"
            done = "written" if target.name == ANNOTATE else "sent"
            name = target.name

            def read(key: str, name: str = name) -> Callable[[], float]:
                return lambda: float(self.figures().get(name, {}).get(key, 0))

            metrics.gauge(
                f"{noun}_pending", f"{noun.capitalize()} waiting in the outbox.", read("pending")
            )
            metrics.gauge(
                f"{noun}_oldest_seconds",
                f"Age of the oldest of the {noun} waiting (0: none).",
                read("oldest"),
            )
            metrics.counter(f"{noun}_{done}", f"{noun.capitalize()} {done}.", read("delivered"))
            metrics.counter(
                f"{noun}_failures",
                f"Attempts to deliver {noun} that failed (each is retried).",
                read("failures"),
            )
            metrics.counter(
                f"{noun}_dropped",
                f"{noun.capitalize()} given up (refused as malformed, too old, or the outbox "
                "full).",
                read("dropped"),
            )


def _what(target: str) -> str:
    return "write-back" if target == ANNOTATE else "alerts"


def _store_writer(url: str) -> Writer:
    from rampart_otel.receivers.stores import parse_store_url
    from rampart_otel.receivers.stores.http import StoreClient, call

    source = parse_store_url(url)
    http = StoreClient(source)
    return annotations_for(
        source.store, lambda method, path, **kw: call(http, source, method, path, **kw), source.name
    )


def _annotate(writer: Writer, payload: bytes) -> None:
    writer.write(RunAnnotation.from_json(json.loads(payload)))


def _alert(payload: bytes) -> Alert:
    return Alert.from_json(json.loads(payload))
