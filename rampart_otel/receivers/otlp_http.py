"""OTLP/HTTP receiver: ``POST /v1/traces`` plus ``GET /healthz`` and ``GET /metrics``.

A bare ASGI app (no framework): a request is a few header look-ups, a bounded body read,
the shared ingest decisions, and one wait for the durable write. Responses follow the
OTLP/HTTP spec: the body is encoded like the request, errors are ``google.rpc.Status``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from rampart_otel.errors import QueueFull, Refusal, WriterClosed
from rampart_otel.receivers import ingest
from rampart_otel.receivers.consumer import Consumer, Telemetry
from rampart_otel.receivers.ingest import PROTOBUF, Accepted

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

TRACES_PATH = "/v1/traces"


class OTLPHttpApp:
    """The ASGI application; ``health`` says whether the collector can take data."""

    def __init__(
        self,
        writer: Consumer,
        metrics: Telemetry,
        max_request_bytes: int,
        token: str | None = None,
        retry_after: int = 1,
        backpressure_status: int = 503,
        health: Callable[[], tuple[bool, str]] | None = None,
        body_timeout: float = 30.0,
    ) -> None:
        self.writer = writer
        self.metrics = metrics
        self.max_request_bytes = max_request_bytes
        self.token = token
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
        else:
            await _respond(send, 404, b"not found\n", "text/plain")

    async def _export(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = _headers(scope)
        media = PROTOBUF
        spans = 0
        try:
            ingest.check_token(self.token, headers.get(b"authorization", b"").decode("latin-1"))
            media = ingest.media_type(headers.get(b"content-type", b"").decode("latin-1"))
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
            accepted = ingest.decode(data, media)
            spans = accepted.spans
            if accepted.spans:
                await self._store(accepted)
        except Refusal as refusal:
            await self._refuse(send, refusal, media, spans)
            return
        self.metrics.request("http", "200", accepted.spans, accepted.rejected)
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

    async def _store(self, accepted: Accepted) -> None:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[BaseException | None] = loop.create_future()

        def done(error: BaseException | None) -> None:
            loop.call_soon_threadsafe(_settle, future, error)

        try:
            self.writer.append(accepted.payload, done)
        except QueueFull:
            raise ingest.busy(self.retry_after, self.backpressure_status) from None
        except WriterClosed as error:
            raise Refusal(503, ingest.UNAVAILABLE, str(error), self.retry_after) from None
        error = await future
        if error is not None:  # not stored: the client must send it again
            raise Refusal(503, ingest.UNAVAILABLE, f"storage error: {error}", self.retry_after)

    async def _refuse(self, send: Send, refusal: Refusal, media: str, spans: int) -> None:
        status = refusal.http_status
        reason = {401: "unauthenticated", 408: "timeout", 413: "too_large", 415: "unsupported"}.get(
            status, "busy" if refusal.retry_after is not None else "invalid"
        )
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
