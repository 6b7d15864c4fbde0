"""One HTTP request that ends by a deadline, reads at most a size cap, and never follows a
redirect: what the judge's client, the OTLP senders (replay, verdict export) and the trace
store readers (``phoenix://``, ``mlflow://``, ``--annotate``) send with.

Why not httpx or requests: their timeouts bound each socket operation, not the request, so
an answer trickled one byte at a time, or chunked without end, holds the caller for as long
as the server likes. Here every blocking step (connect, send, the status line and headers,
each read of the body) runs under the socket timeout of the time left, and a watchdog shuts
the socket down at the deadline, so the whole exchange ends by then whatever the server does
(name resolution aside: ``getaddrinfo`` cannot be interrupted). The body is read as a
stream and refused past ``max_bytes`` without being held. A 3xx is reported with its
``Location`` and not followed: a body meant for one host is never sent to another.

Errors are one line (``str()``), raised as subclasses of ``HttpFailure``. No proxy is used.
"""

from __future__ import annotations

import contextlib
import http.client
import math
import socket
import ssl
import threading
import time
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from urllib.parse import urlsplit

from rampart_otel.render import safe_text

MAX_ANSWER_BYTES = 4 * 1024 * 1024  # a 2xx body larger than this is refused
NOT_HTTP1 = "the server did not answer in HTTP/1.1 (an HTTP/2 or gRPC port?)"
ERROR_BODY_BYTES = 64 * 1024  # of a non-2xx body, only this much is read (for its message)
_READ = 64 * 1024


class HttpFailure(Exception):
    """No usable answer; ``str()`` is one line."""


class DeadlineExceeded(HttpFailure):
    """The exchange did not finish by the deadline."""


class Unreachable(HttpFailure):
    """No connection, or it broke before a whole answer arrived."""


class RedirectRefused(HttpFailure):
    """The server answered 3xx; nothing was sent to the ``location`` it named."""

    def __init__(self, status: int, location: str) -> None:
        self.status = status
        self.location = location
        where = f"to {safe_text(location, 300)}" if location else "without a Location"
        super().__init__(f"HTTP {status} redirect {where} (redirects are not followed)")


class AnswerTooLarge(HttpFailure):
    """A 2xx body over the cap."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        super().__init__(f"an answer larger than {_size(limit)} (refused)")


@dataclass(frozen=True, slots=True)
class HttpAnswer:
    status: int
    reason: str
    headers: dict[str, str]  # lower-cased names; repeated headers joined with ", "
    body: bytes  # a non-2xx body is cut to ERROR_BODY_BYTES

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


def post(
    url: str,
    body: bytes,
    headers: dict[str, str],
    *,
    deadline: float,
    max_bytes: int = MAX_ANSWER_BYTES,
    context: ssl.SSLContext | None = None,
) -> HttpAnswer:
    """POST ``body`` to ``url``, all of it done by ``deadline`` (``time.monotonic()``)."""
    return request(
        "POST", url, body, headers, deadline=deadline, max_bytes=max_bytes, context=context
    )


def request(
    method: str,
    url: str,
    body: bytes | None,
    headers: dict[str, str],
    *,
    deadline: float,
    max_bytes: int = MAX_ANSWER_BYTES,
    context: ssl.SSLContext | None = None,
) -> HttpAnswer:
    """``method`` ``url`` (with ``body``, if any), all of it done by ``deadline``."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise Unreachable(f"{safe_text(url, 200)} is not an http:// or https:// URL")
    try:
        port = parts.port
    except ValueError:
        raise Unreachable(f"{safe_text(url, 200)}: the port is not a number") from None
    left = _left(deadline)
    if parts.scheme == "https":
        connection: http.client.HTTPConnection = http.client.HTTPSConnection(
            parts.hostname, port, timeout=left, context=context or ssl.create_default_context()
        )
    else:
        connection = http.client.HTTPConnection(parts.hostname, port, timeout=left)
    fired = threading.Event()

    def cut() -> None:  # at the deadline: any blocked send or receive returns at once
        fired.set()
        sock = connection.sock
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    watchdog = threading.Timer(left, cut)
    watchdog.daemon = True
    watchdog.start()
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:
        connection.request(method, target, body=body, headers=headers)
        _timeout(connection, deadline)
        response = connection.getresponse()
        status = response.status
        if 300 <= status < 400:
            raise RedirectRefused(status, response.getheader("location") or "")
        ok = 200 <= status < 300
        limit = max_bytes if ok else ERROR_BODY_BYTES
        length = response.getheader("content-length")
        if ok and length is not None and length.strip().isdigit() and int(length) > limit:
            raise AnswerTooLarge(limit)
        chunks: list[bytes] = []
        size = 0
        while True:
            _timeout(connection, deadline)
            piece = response.read1(_READ)
            if not piece:
                # the end: a Content-Length not met is a broken answer, not a short one
                if response.length:
                    raise Unreachable("the connection closed before the whole answer arrived")
                break
            size += len(piece)
            if size > limit:
                if ok:
                    raise AnswerTooLarge(limit)
                chunks.append(piece[: len(piece) - (size - limit)])
                break
            chunks.append(piece)
        found: dict[str, str] = {}
        for name, value in response.getheaders():
            key = name.lower()
            found[key] = f"{found[key]}, {value}" if key in found else value
        return HttpAnswer(status, response.reason or "", found, b"".join(chunks))
    except HttpFailure:
        raise
    except ValueError:  # a header value http.client refuses: never echoed (it may be a key)
        raise Unreachable("a request header cannot be sent (a control character in it)") from None
    except (OSError, http.client.HTTPException) as error:
        if fired.is_set() or time.monotonic() >= deadline or isinstance(error, TimeoutError):
            raise DeadlineExceeded("no whole answer before the deadline") from None
        if isinstance(error, http.client.BadStatusLine) and not isinstance(
            error, http.client.RemoteDisconnected
        ):  # its text is the server's first bytes: HTTP/2 frames, from a gRPC port
            raise Unreachable(NOT_HTTP1) from None
        raise Unreachable(_why(error)) from None
    finally:
        watchdog.cancel()
        connection.close()


def retry_after(headers: dict[str, str]) -> float | None:
    """Seconds a ``Retry-After`` header asks to wait (delay-seconds or an HTTP date)."""
    value = (headers.get("retry-after") or "").strip()
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        return max(when.timestamp() - time.time(), 0.0)
    return max(seconds, 0.0) if math.isfinite(seconds) else None


def _left(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise DeadlineExceeded("no time left before the deadline")
    return left


def _timeout(connection: http.client.HTTPConnection, deadline: float) -> None:
    """Each next blocking step waits at most for the time left."""
    left = _left(deadline)
    if connection.sock is not None:
        connection.sock.settimeout(left)


def _why(error: BaseException) -> str:
    text = getattr(error, "strerror", None) or str(error) or type(error).__name__
    return safe_text(f"{type(error).__name__}: {text}", 200)


def _size(count: int) -> str:
    if count % (1024 * 1024) == 0:
        return f"{count // (1024 * 1024)} MiB"
    return f"{count} bytes"
