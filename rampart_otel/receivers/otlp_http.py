"""OTLP/HTTP receiver: ``POST /v1/traces`` plus ``GET /healthz`` and ``GET /metrics``.

A bare ASGI app (no framework): a request is a few header look-ups, a bounded body read,
the shared ingest decisions, and one wait for the durable write. Responses follow the
OTLP/HTTP spec: the body is encoded like the request, errors are ``google.rpc.Status``.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

from rampart_otel.errors import QueueFull, Refusal, WriterClosed
from rampart_otel.receivers import ingest
from rampart_otel.receivers.consumer import Consumer, Telemetry
from rampart_otel.receivers.ingest import PROTOBUF
from rampart_otel.render import safe_text

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

TRACES_PATH = "/v1/traces"
HTTP2_PREFACE = b"PRI * HTTP/2.0"  # how an HTTP/2 (gRPC) client opens its connection
TLS_HANDSHAKE = b"\x16\x03"  # a TLS record of type handshake, version 3.x: a ClientHello
log = logging.getLogger("rampart_otel.receivers")

# The usual ways an exporter is pointed wrong, each diagnosed in one log line (and in the
# answer's message where there is an answer). ``{...}`` fields are escaped request values.
DIAGNOSES = {
    "grpc_on_http": (
        "an HTTP/2 (gRPC) client connected to the OTLP/HTTP port {port}: send OTLP/gRPC to "
        "the gRPC port{grpc}, or set the exporter's protocol to http/protobuf "
        "(OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf)"
    ),
    "tls_on_http": (
        "a TLS (https) client connected to the OTLP/HTTP port {port}, which takes plain HTTP: "
        "give the exporter an http:// endpoint, or put a TLS-terminating proxy in front"
    ),
    "invalid_http": (
        "a request that is not valid HTTP/1.1 on the OTLP/HTTP port {port}: answered 400 and closed"
    ),
    "doubled_path": (
        "{method} {path}: /v1/traces given twice: OTEL_EXPORTER_OTLP_ENDPOINT takes the base "
        "URL (http://HOST:PORT, the exporter adds /v1/traces); "
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT takes the full URL (http://HOST:PORT/v1/traces)"
    ),
    "no_traces_path": (
        "{method} {path}: not found: OTLP/HTTP traces are received on /v1/traces; "
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is used as given, so it must end in /v1/traces "
        "(or set OTEL_EXPORTER_OTLP_ENDPOINT=http://HOST:PORT instead)"
    ),
    "not_traces": (
        "{method} {path}: this collector receives traces only (/v1/traces); turn the "
        "exporter's other signals off (OTEL_METRICS_EXPORTER=none, OTEL_LOGS_EXPORTER=none) "
        "or send them elsewhere"
    ),
    "content_type": (
        "POST /v1/traces with content type {content_type}: send application/x-protobuf or "
        "application/json (OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf or http/json)"
    ),
    "json_as_protobuf": (
        "POST /v1/traces: the body is JSON but its content type says protobuf "
        "({content_type}): send Content-Type: application/json"
    ),
}
_OTHER_SIGNALS = ("/v1/metrics", "/v1/logs", "/v1/profiles", "/v1development/profiles")


class Diagnoses:
    """Log each kind of misdirected request in one line: the first at once, then at most
    one a minute naming how many were not logged (an exporter retries, and must not flood
    the log)."""

    def __init__(self, every: float = 60.0, clock: Callable[[], float] = time.monotonic):
        self.every = every
        self.clock = clock
        self._lock = threading.Lock()
        self._last: dict[str, float] = {}
        self._unlogged: dict[str, int] = {}

    def __call__(self, kind: str, **fields: object) -> str:
        """The diagnosis as one line; logged unless one of its kind was logged recently."""
        line = DIAGNOSES[kind].format(
            **{key: safe_text(value, 120) for key, value in fields.items()}
        )
        now = self.clock()
        with self._lock:
            last = self._last.get(kind)
            if last is not None and now - last < self.every:
                self._unlogged[kind] = self._unlogged.get(kind, 0) + 1
                return line
            self._last[kind] = now
            unlogged = self._unlogged.pop(kind, 0)
        more = f" ({unlogged} more since the last such line)" if unlogged else ""
        log.warning("%s%s", line, more)
        return line


class OTLPHttpApp:
    """The ASGI application; ``health`` says whether the collector can take data."""

    def __init__(
        self,
        writer: Consumer,
        metrics: Telemetry,
        max_request_bytes: int,
        tokens: ingest.Tokens | None = None,
        retry_after: int = 1,
        backpressure_status: int = 503,
        health: Callable[[], tuple[bool, str]] | None = None,
        body_timeout: float = 30.0,
        diagnoses: Diagnoses | None = None,
    ) -> None:
        self.diagnose = diagnoses or Diagnoses()
        self.writer = writer
        self.metrics = metrics
        self.max_request_bytes = max_request_bytes
        self.tokens = tokens
        self.retry_after = retry_after
        self.backpressure_status = backpressure_status
        self.body_timeout = body_timeout
        self.health = health or (lambda: (writer.healthy, "ok" if writer.healthy else "storage"))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return  # lifespan and websocket: nothing to do
        path = scope["path"]
        method = scope["method"]
        if path == TRACES_PATH:
            if method != "POST":
                await _respond(
                    send,
                    405,
                    ingest.error_body(ingest.INVALID_ARGUMENT, "use POST", PROTOBUF),
                    PROTOBUF,
                    [(b"allow", b"POST")],
                )
                return
            await self._export(scope, receive, send)
        elif path == "/healthz" and method in ("GET", "HEAD"):
            healthy, detail = self.health()
            await _respond(send, 200 if healthy else 503, detail.encode() + b"\n", "text/plain")
        elif path == "/metrics" and method in ("GET", "HEAD"):
            body, content_type = self.metrics.exposition()
            await _respond(send, 200, body, content_type)
        elif path in ("/healthz", "/metrics"):
            await _respond(send, 405, b"use GET\n", "text/plain", [(b"allow", b"GET, HEAD")])
        elif method == "POST":  # an exporter pointed at a wrong URL: say which and how
            await self._misdirected(send, method, path)
        else:
            await _respond(send, 404, b"not found\n", "text/plain")

    async def _misdirected(self, send: Send, method: str, path: str) -> None:
        trimmed = path.rstrip("/")
        if trimmed == TRACES_PATH:  # /v1/traces/: the same endpoint
            kind = "no_traces_path"
        elif TRACES_PATH + TRACES_PATH in path:
            kind = "doubled_path"
        elif trimmed.endswith(_OTHER_SIGNALS):
            kind = "not_traces"
        else:
            kind = "no_traces_path"
        line = self.diagnose(kind, method=method, path=path or "/")
        await _respond(send, 404, line.encode() + b"\n", "text/plain")

    async def _export(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = _headers(scope)
        media = PROTOBUF
        spans = 0
        try:
            tenant = ingest.authenticate(
                self.tokens, headers.get(b"authorization", b"").decode("latin-1")
            )
            content_type = headers.get(b"content-type", b"").decode("latin-1")
            try:
                media = ingest.media_type(content_type)
            except Refusal:
                self.diagnose("content_type", content_type=repr(content_type or "(none)"))
                raise
            try:
                async with asyncio.timeout(self.body_timeout):
                    body = await self._read_body(headers, receive)
            except TimeoutError:
                raise Refusal(
                    408,
                    ingest.DEADLINE_EXCEEDED,
                    f"request body not received within {self.body_timeout:g}s",
                ) from None
            encoding = headers.get(b"content-encoding", b"").decode("latin-1")
            data = ingest.inflate(body, encoding, self.max_request_bytes)
            try:
                accepted = ingest.decode(data, media)
            except Refusal as refusal:
                if media == PROTOBUF and data.lstrip()[:1] in (b"{", b"["):
                    line = self.diagnose("json_as_protobuf", content_type=repr(content_type))
                    raise Refusal(refusal.http_status, refusal.grpc_code, line) from None
                raise
            spans = accepted.spans
            if accepted.stored:
                await self._store(ingest.sent_by(accepted, tenant, _client(scope)))
        except Refusal as refusal:
            await self._refuse(send, refusal, media, spans)
            return
        self.metrics.request("http", "200", accepted.spans, accepted.rejected, accepted.lost)
        await _respond(send, 200, ingest.success_body(accepted, media), media)

    async def _read_body(self, headers: dict[bytes, bytes], receive: Receive) -> bytes:
        limit = self.max_request_bytes
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            raise ingest.too_large(limit)
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise Refusal(400, ingest.INVALID_ARGUMENT, "client disconnected")
            chunk = message.get("body", b"")
            if chunk:
                size += len(chunk)
                if size > limit:
                    raise ingest.too_large(limit)
                chunks.append(chunk)
            if not message.get("more_body", False):
                return chunks[0] if len(chunks) == 1 else b"".join(chunks)

    async def _store(self, payload: bytes) -> None:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[BaseException | None] = loop.create_future()

        def done(error: BaseException | None) -> None:
            loop.call_soon_threadsafe(_settle, future, error)

        try:
            self.writer.append(payload, done)
        except QueueFull as full:
            raise ingest.busy(self.retry_after, self.backpressure_status, full) from None
        except WriterClosed as error:
            raise Refusal(
                503, ingest.UNAVAILABLE, str(error), self.retry_after, reason="storage"
            ) from None
        failure = await future
        if failure is not None:  # not stored: the client must send it again
            raise Refusal(
                503,
                ingest.UNAVAILABLE,
                f"storage error: {failure}",
                self.retry_after,
                reason="storage",
            )

    async def _refuse(self, send: Send, refusal: Refusal, media: str, spans: int) -> None:
        status = refusal.http_status
        reason = refusal.reason or {
            401: "unauthenticated",
            408: "timeout",
            413: "too_large",
            415: "unsupported",
        }.get(status, "busy" if refusal.retry_after is not None else "invalid")
        self.metrics.refused("http", str(status), reason, spans)
        extra: list[tuple[bytes, bytes]] = []
        if refusal.retry_after is not None:
            extra.append((b"retry-after", str(refusal.retry_after).encode()))
        if status == 401:
            extra.append((b"www-authenticate", b'Bearer realm="rampart-otel"'))
        if status in (408, 413):
            extra.append((b"connection", b"close"))  # the unread rest of the body is not read
        body = ingest.error_body(refusal.grpc_code, refusal.message, media)
        await _respond(send, status, body, media, extra)


def _settle(future: asyncio.Future[BaseException | None], error: BaseException | None) -> None:
    if not future.done():
        future.set_result(error)


def _client(scope: Scope) -> str:
    """The client's address as the server saw it (``HOST:PORT``), "" when not known."""
    client = scope.get("client")
    if not client:
        return ""
    host, port = client[0], client[1]
    return f"[{host}]:{port}" if ":" in str(host) else f"{host}:{port}"


def _headers(scope: Scope) -> dict[bytes, bytes]:
    return {name: value for name, value in scope["headers"]}  # ASGI names are lowercase


async def _respond(
    send: Send,
    status: int,
    body: bytes,
    content_type: str,
    extra: list[tuple[bytes, bytes]] | None = None,
) -> None:
    headers = [
        (b"content-type", content_type.encode()),
        (b"content-length", str(len(body)).encode()),
    ]
    if extra:
        headers.extend(extra)
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
