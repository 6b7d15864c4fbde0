"""The collector's verdict export, from its settings: started in the scorer process.

Kept out of ``scorer.py``, which hands it to its pipeline as one sink among others
(``otlp_verdicts.VerdictEventSink``: the runs of each commit); what the events look like and
how they are sent is ``exporters/otlp_verdicts.py``.
"""

from __future__ import annotations

import logging

from rampart_otel.collector.config import CollectorConfig
from rampart_otel.exporters.otlp_verdicts import VerdictExporter, make_log_exporter


def start_verdict_export(config: CollectorConfig) -> VerdictExporter | None:
    """The exporter ``export.otlp`` asks for, running; None when no endpoint is set."""
    settings = config.export.otlp
    if settings.endpoint is None:
        return None
    # The exporter logs every failed batch; we count them (/metrics) and warn once a minute.
    logging.getLogger("opentelemetry.exporter").setLevel(logging.CRITICAL)
    exporter = make_log_exporter(
        settings.endpoint, settings.protocol, dict(settings.headers), settings.timeout_seconds
    )
    return VerdictExporter(exporter, queue_size=settings.queue_size, batch_size=settings.batch_size)
