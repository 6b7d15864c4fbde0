"""Shape 3: a Python agent writes its trace to a file (or sends it to ``rampart-otel collect``).

    python -m examples.trace_file --out trace.jsonl    # then: rampart-otel score trace.jsonl ...
    python -m examples.trace_file --otlp http://127.0.0.1:4318

``tracing(...)`` is the part to copy: a TracerProvider whose exporter writes one OTLP/JSON
request per line (the OpenTelemetry Collector file exporter's format, which rampart-otel
reads), or the SDK's own OTLP/HTTP exporter pointed at the collector's ``/v1/traces``.
The agent it traces here is the hand-written tool loop of ``examples.tool_loop``.
"""

from __future__ import annotations

import argparse
import json
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from google.protobuf.json_format import MessageToDict
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult


class JsonLinesFileExporter(SpanExporter):
    """One ``ExportTraceServiceRequest`` per line, as OTLP/JSON, appended to a file."""

    def __init__(self, path: Path) -> None:
        self._file = path.open("a", encoding="utf-8")
        self._lock = threading.Lock()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        message = MessageToDict(encode_spans(spans), use_integers_for_enums=True)
        # rampart-otel reads protobuf-JSON's base64 ids as well as hex ones.
        with self._lock:
            self._file.write(json.dumps(message, separators=(",", ":")) + "\n")
            self._file.flush()
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        with self._lock:
            self._file.close()


@contextmanager
def tracing(
    service_name: str, out: Path | None = None, otlp: str | None = None
) -> Iterator[TracerProvider]:
    """The global tracer provider, exporting to ``out`` (a file) or ``otlp`` (a collector)."""
    exporter: SpanExporter
    if otlp is not None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        exporter = OTLPSpanExporter(endpoint=otlp.rstrip("/") + "/v1/traces")
    elif out is not None:
        exporter = JsonLinesFileExporter(out)
    else:
        raise ValueError("give a file (out) or a collector URL (otlp)")
    provider = TracerProvider(resource=Resource.create({"service.name": service_name}))
    provider.add_span_processor(BatchSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    try:
        yield provider
    finally:
        provider.shutdown()  # flushes what is still batched: do not skip it at exit


def main(argv: Sequence[str] | None = None) -> int:
    from examples.tool_loop import run_agent

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--out", type=Path, help="the trace file to write (OTLP/JSON lines)")
    where.add_argument("--otlp", help="a collector's base URL, e.g. http://127.0.0.1:4318")
    args = parser.parse_args(argv)
    with tracing("weather-agent", out=args.out, otlp=args.otlp):
        answer: Any = run_agent()
    print(answer)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
