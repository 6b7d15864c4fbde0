"""The one way unit tests watch: a ``Watcher`` of their own, fed Python's real audit events.

A hook cannot be removed (PEP 578), so ``rampart_otel.watch()`` itself is tested in child
processes (tests/test_watch_processes.py). In this process one forwarding hook, added on first
use, hands each audit event to the watcher of the test running now, if any; the watcher's
spans go to a provider of the test's own (with the attestation processor), never the global
one.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from rampart_otel.watch import KINDS, Watcher, attestation_processor

_ACTIVE: list[Watcher] = []
_INSTALLED: list[bool] = []


def _forward(event: str, args: tuple[Any, ...]) -> None:
    if _ACTIVE:
        _ACTIVE[-1].hook(event, args)


@dataclass
class Watched:
    """A watcher on for one test: its spans, and a tracer of the same provider."""

    watcher: Watcher
    provider: TracerProvider
    exporter: InMemorySpanExporter

    @property
    def tracer(self) -> Any:
        return self.provider.get_tracer("tests.watching")

    def spans(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def watched(self) -> list[ReadableSpan]:
        """The watcher's own spans (scope ``rampart_otel.watch``)."""
        return [s for s in self.spans() if s.instrumentation_scope.name == "rampart_otel.watch"]


@contextmanager
def watching(kinds: tuple[str, ...] = KINDS, body_limit: int = 16 * 1024) -> Iterator[Watched]:
    if not _INSTALLED:
        sys.addaudithook(_forward)
        _INSTALLED.append(True)
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    watcher = Watcher(frozenset(kinds), body_limit, tracer_provider=provider)
    provider.add_span_processor(attestation_processor(watcher))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    _ACTIVE.append(watcher)
    try:
        yield Watched(watcher, provider, exporter)
    finally:
        _ACTIVE.remove(watcher)
        provider.shutdown()
