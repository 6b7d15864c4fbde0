"""Tracing an agent in one call: ``rampart_otel.setup(file="run.jsonl")`` or
``setup(endpoint="http://127.0.0.1:4318")``.

A verdict is only as good as what the trace shows, and a newcomer should not have to
assemble a provider, an exporter and a dozen instrumentations to get one. ``setup`` does
what the OpenTelemetry SDK's parts do when put together by hand:

- a ``TracerProvider`` (the global one; an SDK provider already set is added to instead);
- an exporter: a file of OTLP/JSON lines (the Collector file exporter's form, which
  ``rampart-otel score`` reads), written as each span ends, so the file is complete even
  if the process dies; or the SDK's OTLP/HTTP exporter, batched (``rampart-otel collect``);
- the instrumentation of every library present whose instrumentation package is installed
  (the ``opentelemetry_instrumentor`` entry points that ``opentelemetry-instrument`` uses:
  HTTP clients, sqlite3 and other databases, gRPC, messaging, the model SDKs), one per
  library (OpenInference's first, for a model SDK with several), with the model SDKs'
  content capture switched on unless the environment says otherwise;
- a flush at exit (the provider's own ``atexit`` shutdown).

It says what it did: one line on standard error (``quiet=True``: none), and the same in the
``Tracing`` it returns. It declares no coverage: ``rampart.coverage`` is a promise that
every call of a kind goes through an instrumented client, which only the agent's author can
make (``rampart_otel.declare``). Each step is a part of ``Tracing.parts``, so later ones
(an audit-hook watcher, say) are one more keyword and one more part.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from rampart_otel.errors import UsageError

FILE_VARIABLE = "RAMPART_OTEL_FILE"
ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
# What each instrumentation of a model SDK reads to record prompts and answers; set to
# "true" unless the environment already says.
CONTENT_SWITCHES = {
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true",  # OpenTelemetry's own
    "TRACELOOP_TRACE_CONTENT": "true",  # OpenLLMetry
    "OPENINFERENCE_HIDE_INPUTS": "false",  # OpenInference
    "OPENINFERENCE_HIDE_OUTPUTS": "false",
}
# What a library's instrumentation leaves out, where a check would otherwise trust it.
CAVEATS = {
    "sqlite3": "cursors only: Connection.execute is not traced",
}
_PREFERRED = ("openinference-",)  # for a library with several instrumentations installed


@dataclass(frozen=True, slots=True)
class Instrumented:
    """One library instrumented: its name, the package that did it, what it leaves out."""

    library: str
    by: str
    caveat: str | None = None

    def __str__(self) -> str:
        return self.library + (f" ({self.caveat})" if self.caveat else "")


@dataclass(frozen=True, slots=True)
class Tracing:
    """What :func:`setup` installed. ``str()`` is the line it printed."""

    provider: Any  # opentelemetry.sdk.trace.TracerProvider
    destination: str
    instrumented: tuple[Instrumented, ...] = ()
    failed: tuple[str, ...] = ()  # "library: why", one per instrumentation that did not load
    content_capture: bool = True
    parts: tuple[str, ...] = field(default=("provider", "exporter", "instrumentations"))

    def flush(self, timeout_millis: int = 30_000) -> bool:
        """Export every span ended so far; True when all were exported in time."""
        return bool(self.provider.force_flush(timeout_millis))

    def shutdown(self) -> None:
        """Flush and stop (at exit this happens by itself)."""
        self.provider.shutdown()

    def __str__(self) -> str:
        listed = ", ".join(str(item) for item in self.instrumented) or "nothing"
        line = f"rampart-otel: tracing to {self.destination}; instrumented: {listed}"
        line += "; model content capture " + ("on" if self.content_capture else "OFF")
        if self.failed:
            line += "; not instrumented: " + ", ".join(self.failed)
        return line


def setup(
    *,
    file: str | os.PathLike[str] | None = None,
    endpoint: str | None = None,
    service_name: str | None = None,
    instrument: bool | Iterable[str] = True,
    quiet: bool = False,
) -> Tracing:
    """Trace this process for rampart-otel: spans to ``file`` (OTLP/JSON lines, appended)
    or to ``endpoint`` (OTLP/HTTP, e.g. ``http://127.0.0.1:4318``; ``/v1/traces`` added
    when the URL has no path). Neither given: ``$RAMPART_OTEL_FILE``, else the standard
    ``$OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` / ``$OTEL_EXPORTER_OTLP_ENDPOINT``.

    ``service_name``: the Resource's ``service.name`` (else ``$OTEL_SERVICE_NAME``, else
    the script's name). ``instrument``: True for every library present, False for none, or
    the libraries to instrument by name (``["requests", "openai"]``);
    ``$OTEL_PYTHON_DISABLED_INSTRUMENTATIONS`` is honoured. Prints one line saying what it
    did on standard error unless ``quiet``; returns the same as a :class:`Tracing`.
    """
    exporter, processor, destination = _exporter(file, endpoint)
    provider = _provider(service_name)
    provider.add_span_processor(processor(exporter))
    content = _content_capture()
    instrumented, failed = _instrument(instrument)
    tracing = Tracing(provider, destination, instrumented, failed, content)
    if not quiet:
        print(tracing, file=sys.stderr, flush=True)
    return tracing


# --- the exporter -----------------------------------------------------------------------------


def _exporter(file: str | os.PathLike[str] | None, endpoint: str | None) -> tuple[Any, Any, str]:
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

    if file is not None and endpoint is not None:
        raise UsageError("setup(): give file= or endpoint=, not both")
    if file is None and endpoint is None:
        file = os.environ.get(FILE_VARIABLE) or None
        if file is None and not any(os.environ.get(name) for name in ENDPOINT_VARIABLES):
            raise UsageError(
                f"setup(): where should spans go? file='run.jsonl', "
                f"endpoint='http://127.0.0.1:4318', or ${FILE_VARIABLE} / "
                "$OTEL_EXPORTER_OTLP_ENDPOINT"
            )
    if file is not None:
        path = Path(file)
        # Written as each span ends: the file holds every ended span even if the agent dies.
        return JsonLinesFileExporter(path), SimpleSpanProcessor, str(path)
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    if endpoint is None:  # the exporter reads the standard variables itself
        exporter = OTLPSpanExporter()
        return exporter, BatchSpanProcessor, str(getattr(exporter, "_endpoint", "OTLP"))
    url = _traces_url(endpoint)
    return OTLPSpanExporter(endpoint=url), BatchSpanProcessor, url


def _traces_url(endpoint: str) -> str:
    from urllib.parse import urlsplit

    parts = urlsplit(endpoint)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise UsageError(f"setup(): endpoint {endpoint!r} is not an http(s):// URL")
    return endpoint if parts.path.strip("/") else endpoint.rstrip("/") + "/v1/traces"


class JsonLinesFileExporter:
    """One OTLP/JSON ``ExportTraceServiceRequest`` per line, appended to a file (the
    Collector file exporter's form: spec JSON, hex ids). The file is opened once, for
    appending, so a path that is a FIFO or a link is written into, never replaced."""

    def __init__(self, path: Path) -> None:
        try:
            self._file: IO[str] | None = path.open("a", encoding="utf-8")
        except OSError as error:
            raise UsageError(f"setup(): {path}: {error.strerror or error}") from None
        self._lock = threading.Lock()

    def export(self, spans: Sequence[Any]) -> Any:
        from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
        from opentelemetry.sdk.trace.export import SpanExportResult

        from rampart_otel.codecs.otlp_proto import request_to_json_dict

        line = json.dumps(request_to_json_dict(encode_spans(spans)), separators=(",", ":"))
        with self._lock:
            if self._file is None:
                return SpanExportResult.FAILURE
            self._file.write(line + "\n")
            self._file.flush()
        return SpanExportResult.SUCCESS

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return True  # every export is written and flushed before it returns

    def shutdown(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None


# --- the provider -----------------------------------------------------------------------------


def _provider(service_name: str | None) -> Any:
    from opentelemetry import trace
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider

    current = trace.get_tracer_provider()
    if isinstance(current, TracerProvider):
        return current  # set already (by the pytest plugin, or a second setup): add to it
    attributes = {}
    if service_name is not None:
        attributes[SERVICE_NAME] = service_name
    elif not os.environ.get("OTEL_SERVICE_NAME"):
        attributes[SERVICE_NAME] = Path(sys.argv[0]).stem if sys.argv and sys.argv[0] else "agent"
    provider = TracerProvider(resource=Resource.create(attributes))  # flushes at exit
    trace.set_tracer_provider(provider)
    return provider


# --- the instrumentations ---------------------------------------------------------------------


def _content_capture() -> bool:
    for name, value in CONTENT_SWITCHES.items():
        os.environ.setdefault(name, value)
    switches = CONTENT_SWITCHES.items()
    return all(os.environ[name].strip().lower() == value for name, value in switches)


def _instrument(wanted: bool | Iterable[str]) -> tuple[tuple[Instrumented, ...], tuple[str, ...]]:
    """Instrument each library present (or each named), once; what was done, what failed."""
    if wanted is False:
        return (), ()
    only = None if wanted is True else {str(name) for name in wanted}
    done: dict[str, Instrumented] = {}
    failed: list[str] = []
    for library, instrumentor, by in _candidates():
        if only is not None and library not in only:
            continue
        if library in done and done[library].by != by:
            continue  # instrumented by another package already: its spans twice would mislead
        try:
            if not instrumentor.is_instrumented_by_opentelemetry:
                instrumentor.instrument()
        except Exception as error:  # an instrumentation's bug must not stop the agent
            failed.append(f"{library}: {type(error).__name__}: {str(error)[:120]}")
            continue
        done.setdefault(library, Instrumented(library, by, CAVEATS.get(library)))
    return tuple(done.values()), tuple(failed)


def _candidates() -> list[tuple[str, Any, str]]:
    """(library, instrumentor, package) for each instrumentation installed whose library is
    installed too, OpenInference's first; not enabled ones left out."""
    try:
        from opentelemetry.instrumentation.dependencies import (
            get_dependency_conflicts,
            get_dist_dependency_conflicts,
        )
    except ImportError:  # no instrumentation package installed at all
        return []
    from importlib.metadata import entry_points

    from packaging.requirements import Requirement

    disabled = {
        name.strip()
        for name in os.environ.get("OTEL_PYTHON_DISABLED_INSTRUMENTATIONS", "").split(",")
        if name.strip()
    }
    points = sorted(
        entry_points(group="opentelemetry_instrumentor"),
        key=lambda point: not (point.dist and point.dist.name.startswith(_PREFERRED)),
    )
    found = []
    for point in points:
        if point.name in disabled or point.dist is None:
            continue
        if get_dist_dependency_conflicts(point.dist) is not None:
            continue  # its library is not installed (or not a version it supports)
        try:
            instrumentor = point.load()()
            dependencies = instrumentor.instrumentation_dependencies()
        except Exception:
            continue
        if get_dependency_conflicts(dependencies) is not None:
            continue
        library = Requirement(dependencies[0]).name if dependencies else point.name
        found.append((library, instrumentor, point.dist.name))
    return found
