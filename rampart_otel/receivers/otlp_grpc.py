"""OTLP/gRPC receiver: ``opentelemetry.proto.collector.trace.v1.TraceService/Export``.

Registered as a generic handler that receives the request's raw bytes, so what is stored
is exactly what the client sent. gRPC itself enforces the size limit (after
decompression too) with RESOURCE_EXHAUSTED. Backpressure is UNAVAILABLE with a
``RetryInfo``, both as ``grpc-status-details-bin`` (the standard) and as the
``google.rpc.retryinfo-bin`` trailer the Python exporter reads.
"""

from __future__ import annotations

from concurrent import futures

import grpc
from google.protobuf.duration_pb2 import Duration
from google.rpc.error_details_pb2 import RetryInfo
from google.rpc.status_pb2 import Status

from rampart_otel.errors import QueueFull, Refusal, WriterClosed
from rampart_otel.receivers import ingest
from rampart_otel.receivers.consumer import Consumer, Telemetry
from rampart_otel.receivers.ingest import PROTOBUF

SERVICE = "opentelemetry.proto.collector.trace.v1.TraceService"
_CODES = {code.value[0]: code for code in grpc.StatusCode}
STORE_TIMEOUT = 60.0


class TraceService:
    """The Export method; one call per worker thread, waiting for its durable write."""

    def __init__(
        self,
        writer: Consumer,
        metrics: Telemetry,
        tokens: ingest.Tokens | None = None,
        retry_after: int = 1,
    ) -> None:
        self.writer = writer
        self.metrics = metrics
        self.tokens = tokens
        self.retry_after = retry_after

    def export(self, request: bytes, context: grpc.ServicerContext) -> bytes:
        spans = 0
        try:
            metadata = dict(context.invocation_metadata())
            authorization = metadata.get("authorization")  # str: not a -bin key
            tenant = ingest.authenticate(
                self.tokens, authorization if isinstance(authorization, str) else None
            )
            accepted = ingest.decode(request, PROTOBUF)
            spans = accepted.spans
            if accepted.stored:
                self._store(ingest.sent_by(accepted, tenant, _client(context)))
        except Refusal as refusal:
            self._refuse(context, refusal, spans)
            raise AssertionError("unreachable: abort raises") from None
        self.metrics.request("grpc", "OK", accepted.spans, accepted.rejected, accepted.lost)
        return accepted.response().SerializeToString()

    def _store(self, payload: bytes) -> None:
        try:
            self.writer.append_wait(payload, STORE_TIMEOUT)
        except QueueFull as full:
            raise ingest.busy(self.retry_after, cause=full) from None
        except (WriterClosed, OSError, TimeoutError) as error:
            raise Refusal(
                503, ingest.UNAVAILABLE, f"storage: {error}", self.retry_after, reason="storage"
            ) from None

    def _refuse(self, context: grpc.ServicerContext, refusal: Refusal, spans: int) -> None:
        code = _CODES.get(refusal.grpc_code, grpc.StatusCode.INTERNAL)
        reason = refusal.reason or {
            grpc.StatusCode.UNAUTHENTICATED: "unauthenticated",
            grpc.StatusCode.UNAVAILABLE: "busy",
        }.get(code, "invalid")
        self.metrics.refused("grpc", code.name, reason, spans)
        status = Status(code=refusal.grpc_code, message=refusal.message)
        if refusal.retry_after is not None:
            info = RetryInfo(retry_delay=Duration(seconds=refusal.retry_after))
            status.details.add().Pack(info)
            context.set_trailing_metadata(
                (
                    ("google.rpc.retryinfo-bin", info.SerializeToString()),
                    ("grpc-status-details-bin", status.SerializeToString()),
                )
            )
        context.abort(code, refusal.message)


def _client(context: grpc.ServicerContext) -> str:
    """The client's address as gRPC names it (``ipv4:HOST:PORT``), without the family."""
    peer = context.peer() or ""
    family, _, address = peer.partition(":")
    return address if family in ("ipv4", "ipv6") else peer


def make_server(
    service: TraceService,
    host: str,
    port: int,
    max_request_bytes: int,
    max_workers: int = 8,
) -> tuple[grpc.Server, int]:
    """A started-ready (not started) server and the port it bound (0 picks a free one)."""
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="otlp-grpc"),
        options=[
            ("grpc.max_receive_message_length", max_request_bytes),
            ("grpc.so_reuseport", 0),
        ],
    )
    handler = grpc.method_handlers_generic_handler(
        SERVICE,
        {"Export": grpc.unary_unary_rpc_method_handler(service.export)},
    )
    server.add_generic_rpc_handlers((handler,))
    target = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    bound = server.add_insecure_port(target)
    if bound == 0:
        raise OSError(f"cannot listen on {target} (gRPC)")
    return server, bound
