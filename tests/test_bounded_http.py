"""``bounded_http.post`` against raw servers on loopback: the deadline holds in every phase
(headers trickled byte by byte included), a short body is broken not short, an error body
is cut rather than refused, and a header value is never echoed in an error."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

from rampart_otel.bounded_http import (
    ERROR_BODY_BYTES,
    DeadlineExceeded,
    Unreachable,
    post,
    retry_after,
)


@contextmanager
def raw_server(answer: Callable[[socket.socket], None]) -> Iterator[str]:
    """A TCP server on 127.0.0.1 that reads each request, then runs ``answer``."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(30)
                try:
                    data = b""
                    while b"\r\n\r\n" not in data:
                        data += conn.recv(65536)
                    head, _, body = data.partition(b"\r\n\r\n")
                    length = 0
                    for line in head.split(b"\r\n")[1:]:
                        name, _, value = line.partition(b":")
                        if name.strip().lower() == b"content-length":
                            length = int(value)
                    while len(body) < length:  # read it all: unread data would reset
                        body += conn.recv(65536)
                    answer(conn)
                except OSError:
                    pass  # the client gave up

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}/v1/x"
    finally:
        listener.close()


def test_headers_trickled_byte_by_byte_end_at_the_deadline() -> None:
    head = b"HTTP/1.1 200 OK\r\n" + b"".join(b"X-Pad-%d: 1\r\n" % i for i in range(40))

    def trickle(conn: socket.socket) -> None:
        for byte in head:
            conn.sendall(bytes([byte]))
            time.sleep(0.05)

    with raw_server(trickle) as url:
        started = time.monotonic()
        with pytest.raises(DeadlineExceeded):
            post(url, b"{}", {}, deadline=time.monotonic() + 1.0)
        seconds = time.monotonic() - started
    assert seconds < 2.5, seconds  # each read is quick: only the deadline can stop it


def test_a_body_shorter_than_its_content_length_is_broken() -> None:
    def short(conn: socket.socket) -> None:
        conn.sendall(b'HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{"a": 1}')

    with raw_server(short) as url, pytest.raises(Unreachable, match="closed before the whole"):
        post(url, b"{}", {}, deadline=time.monotonic() + 5)


def test_an_error_body_is_cut_not_refused() -> None:
    def big_error(conn: socket.socket) -> None:
        body = b"e" * (ERROR_BODY_BYTES * 4)
        conn.sendall(b"HTTP/1.1 500 Oops\r\nContent-Length: %d\r\n\r\n" % len(body) + body)

    with raw_server(big_error) as url:
        answer = post(url, b"{}", {}, deadline=time.monotonic() + 5)
    assert answer.status == 500 and not answer.ok
    assert len(answer.body) == ERROR_BODY_BYTES


def test_a_header_value_is_never_echoed_in_an_error() -> None:
    with raw_server(lambda conn: None) as url, pytest.raises(Unreachable) as caught:
        post(url, b"", {"Authorization": "Bearer sk-secret\r\nX: y"}, deadline=time.monotonic() + 5)
    assert "sk-secret" not in str(caught.value)


@pytest.mark.parametrize(
    ("value", "seconds"),
    [("30", 30.0), ("0", 0.0), ("-5", 0.0), ("nan", None), ("soon", None), ("", None)],
)
def test_retry_after_reads_seconds(value: str, seconds: float | None) -> None:
    assert retry_after({"retry-after": value} if value else {}) == seconds


def test_a_grpc_port_is_named_not_shown_as_its_bytes() -> None:
    # An OTLP/HTTP endpoint pointed at a gRPC port: the server answers in HTTP/2 frames.
    from concurrent.futures import ThreadPoolExecutor

    import grpc

    server = grpc.server(ThreadPoolExecutor(max_workers=1))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        with pytest.raises(Unreachable) as caught:
            post(f"http://127.0.0.1:{port}/v1/traces", b"{}", {}, deadline=time.monotonic() + 10)
    finally:
        server.stop(None)
    assert str(caught.value) == ("the server did not answer in HTTP/1.1 (an HTTP/2 or gRPC port?)")
