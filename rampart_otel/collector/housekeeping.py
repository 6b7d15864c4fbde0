"""Periodic upkeep of the data directory, from the collector's supervisor loop: retention.

It runs in a worker thread (deleting files must not stall the event loop that answers
clients) at most every ``retention.check_interval_seconds``; see
``storage/retention.py`` for what may be deleted and why.
"""

from __future__ import annotations

import asyncio
import logging
import time

from rampart_otel.collector.config import CollectorConfig
from rampart_otel.collector.metrics import Metrics
from rampart_otel.storage.retention import Retention
from rampart_otel.storage.segments import SegmentWriter

log = logging.getLogger("rampart_otel.collector")


class Housekeeping:
    def __init__(self, config: CollectorConfig, writer: SegmentWriter, metrics: Metrics) -> None:
        settings = config.retention
        self.writer = writer
        self.interval = settings.check_interval_seconds
        self.retention: Retention | None = None
        self._due = 0.0
        if settings.max_age is None and settings.max_bytes is None:
            return
        retention = Retention(
            config.data_dir,
            settings.max_age,
            settings.max_bytes,
            results_url=config.results,
            instance=config.instance(),
        )
        self.retention = retention
        if not config.policies:
            log.warning(
                "retention deletes only segments already scored; with no policy nothing new "
                "is scored, so segments are kept"
            )
        gauge = metrics.gauge
        gauge(
            "retention_segments_deleted",
            "Segments deleted by retention since start.",
            lambda: retention.segments_deleted,
        )
        gauge(
            "retention_bytes_deleted",
            "Bytes of segments deleted by retention since start.",
            lambda: retention.bytes_deleted,
        )
        gauge(
            "retention_unscored_over_bytes",
            "Bytes over retention.max_bytes kept because not yet scored.",
            lambda: retention.over_by_unscored,
        )

    async def tick(self) -> None:
        """Run a retention pass if one is due."""
        if self.retention is None or time.monotonic() < self._due:
            return
        self._due = time.monotonic() + self.interval
        try:
            await asyncio.to_thread(self.retention.run, self.writer.position[0])
        except Exception:  # upkeep must never take the collector down
            log.exception("retention pass failed")
