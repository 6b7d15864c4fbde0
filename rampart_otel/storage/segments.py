"""Durable span storage: append-only segment files, fsync'd before anything is acknowledged.

Each record is a 4-byte big-endian length followed by the raw ``ExportTraceServiceRequest``
bytes the client sent (validated, never re-encoded) -- the OpenTelemetry Collector file
exporter's ``proto`` format, so ``rampart-otel score DATA_DIR/segments`` reads a data
directory as is.

Group commit: one writer thread takes every append queued since its last write, writes
them with one ``write`` and one ``fdatasync``, then releases all their waiters. Under load
many requests share one fsync; alone, a request waits for exactly one.

After a crash only the tail of the newest segment can be torn (a group is acknowledged only
once it is synced); ``recover`` cuts it back to the last whole, parseable record.
"""

from __future__ import annotations

import logging
import os
import struct
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from google.protobuf.message import DecodeError as ProtoDecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from rampart_otel.errors import QueueFull, WriterClosed

log = logging.getLogger(__name__)

PREFIX = "segment-"
SUFFIX = ".binpb"
_HEADER = struct.Struct(">I")
MAX_RECORD_BYTES = 1 << 30  # a length beyond this can only be garbage

Done = Callable[[BaseException | None], None]


def segment_name(seq: int) -> str:
    return f"{PREFIX}{seq:012d}{SUFFIX}"


def segment_seq(path: Path) -> int | None:
    name = path.name
    if not (name.startswith(PREFIX) and name.endswith(SUFFIX)):
        return None
    digits = name[len(PREFIX) : -len(SUFFIX)]
    return int(digits) if digits.isdigit() else None


def list_segments(directory: Path) -> list[tuple[int, Path]]:
    """Segments in write order."""
    if not directory.is_dir():
        return []
    found = [(seq, path) for path in directory.iterdir() if (seq := segment_seq(path)) is not None]
    return sorted(found)


def fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@dataclass(slots=True)
class Recovery:
    segment: Path | None
    kept_bytes: int
    cut_bytes: int
    records: int


def _is_record(payload: bytes) -> bool:
    if not payload:
        return False  # the writer never stores an empty request: zeros are an unwritten tail
    try:
        ExportTraceServiceRequest.FromString(payload)
    except ProtoDecodeError:
        return False
    return True


def recover(directory: Path) -> Recovery:
    """Cut a torn tail off the newest segment, so appends continue after whole records."""
    segments = list_segments(directory)
    if not segments:
        return Recovery(None, 0, 0, 0)
    _, path = segments[-1]
    size = path.stat().st_size
    offset = records = 0
    with path.open("rb") as handle:
        while offset < size:
            header = handle.read(_HEADER.size)
            if len(header) < _HEADER.size:
                break
            (length,) = _HEADER.unpack(header)
            if length > MAX_RECORD_BYTES or offset + _HEADER.size + length > size:
                break
            if not _is_record(handle.read(length)):
                break
            offset += _HEADER.size + length
            records += 1
    if offset < size:
        with path.open("r+b") as handle:
            handle.truncate(offset)
            handle.flush()
            os.fsync(handle.fileno())
        log.warning("segment %s: cut a torn tail of %d bytes", path.name, size - offset)
    return Recovery(path, offset, size - offset, records)


def read_records(path: Path, offset: int = 0) -> Iterator[tuple[int, int, bytes]]:
    """``(start, end, payload)`` for each whole record from ``offset``; stops at a partial tail."""
    with path.open("rb") as handle:
        handle.seek(offset)
        while True:
            header = handle.read(_HEADER.size)
            if len(header) < _HEADER.size:
                return
            (length,) = _HEADER.unpack(header)
            payload = handle.read(length)
            if len(payload) < length:
                return  # being written right now, or a torn tail: not a record yet
            end = offset + _HEADER.size + length
            yield offset, end, payload
            offset = end


class SegmentWriter:
    """Append records durably; ``append`` returns at once and ``done`` runs after the fsync."""

    def __init__(
        self,
        directory: Path,
        segment_max_bytes: int = 64 * 1024 * 1024,
        queue_max_bytes: int = 64 * 1024 * 1024,
        queue_max_requests: int = 1024,
        fsync: bool = True,
    ) -> None:
        self.directory = directory
        self.segment_max_bytes = segment_max_bytes
        self.queue_max_bytes = queue_max_bytes
        self.queue_max_requests = queue_max_requests
        self.fsync = fsync
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.recovery = recover(directory)
        segments = list_segments(directory)
        self._seq = segments[-1][0] if segments else 1
        self._fd = -1
        self._size = 0
        self._open_segment(self._seq)
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._pending: list[tuple[bytes, Done]] = []
        self._pending_bytes = 0
        self._inflight_requests = 0
        self._inflight_bytes = 0
        self._closing = False
        self._failed: BaseException | None = None
        self._write_error: str | None = None  # why the last write failed, until one succeeds
        self.write_failures = 0  # group commits refused since then
        self._paused = False
        # Counters read by /metrics (written only by the writer thread).
        self.groups = 0
        self.records = 0
        self.bytes_written = 0
        self.fsync_seconds = 0.0
        # Told of each group commit once durable, before its requests are acknowledged:
        # (position after it, its bytes). Called on the writer thread.
        self.on_durable: Callable[[tuple[int, int], int], None] | None = None
        self._thread = threading.Thread(target=self._run, name="segment-writer", daemon=True)
        self._thread.start()

    # -- producer side -------------------------------------------------------------------

    def append(self, payload: bytes, done: Done) -> None:
        """Queue one record; raises ``QueueFull`` or ``WriterClosed`` instead of blocking."""
        size = len(payload) + _HEADER.size
        with self._lock:
            if self._closing:
                raise WriterClosed("the collector is shutting down")
            if self._failed is not None:
                raise WriterClosed(f"storage failed: {self._failed}")
            queued = self._pending_bytes + self._inflight_bytes
            requests = len(self._pending) + self._inflight_requests
            if requests and (
                requests >= self.queue_max_requests or queued + size > self.queue_max_bytes
            ):
                raise QueueFull("ingest queue is full")
            self._pending.append((payload, done))
            self._pending_bytes += size
            self._wake.notify()

    def append_wait(self, payload: bytes, timeout: float | None = None) -> None:
        """Blocking ``append`` for thread-based callers (the gRPC receiver)."""
        finished = threading.Event()
        outcome: list[BaseException | None] = []

        def done(error: BaseException | None) -> None:
            outcome.append(error)
            finished.set()

        self.append(payload, done)
        if not finished.wait(timeout):
            raise TimeoutError("storage did not confirm the write in time")
        if outcome[0] is not None:
            raise outcome[0]

    @property
    def queue_requests(self) -> int:
        return len(self._pending) + self._inflight_requests

    @property
    def queue_bytes(self) -> int:
        return self._pending_bytes + self._inflight_bytes

    @property
    def healthy(self) -> bool:
        """False while writes fail (a full disk: requests are refused until one succeeds)."""
        return self._failed is None and self._write_error is None and self._thread.is_alive()

    @property
    def position(self) -> tuple[int, int]:
        """The segment and offset up to which every record is durable."""
        return self._seq, self._size

    def pause(self, paused: bool = True) -> None:
        """Hold writes (appends still queue up to the limits); for tests and maintenance."""
        with self._lock:
            self._paused = paused
            self._wake.notify()

    def close(self, timeout: float | None = None) -> None:
        """Write and sync everything queued, then stop; later appends raise ``WriterClosed``."""
        with self._lock:
            self._closing = True
            self._paused = False
            self._wake.notify()
        self._thread.join(timeout)
        if self._fd >= 0 and not self._thread.is_alive():
            os.close(self._fd)
            self._fd = -1

    # -- writer thread -------------------------------------------------------------------

    def _open_segment(self, seq: int) -> None:
        path = self.directory / segment_name(seq)
        created = not path.exists()
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        self._size = os.fstat(self._fd).st_size
        self._seq = seq
        if created and self.fsync:
            fsync_dir(self.directory)  # the new name itself must survive a crash

    def _run(self) -> None:
        while True:
            with self._lock:
                while (not self._pending or self._paused) and not self._closing:
                    self._wake.wait()
                if not self._pending and self._closing:
                    return
                group, self._pending = self._pending, []
                self._inflight_requests = len(group)
                self._inflight_bytes = self._pending_bytes
                self._pending_bytes = 0
            written = self.bytes_written
            error = self._write_group(group)
            with self._lock:
                self._inflight_requests = 0
                self._inflight_bytes = 0
            if error is None and self.on_durable is not None:
                try:
                    self.on_durable(self.position, self.bytes_written - written)
                except Exception:  # a gauge's bug must not stop the writer
                    log.exception("durable-write callback failed")
            for _, done in group:
                try:
                    done(error)
                except Exception:  # a waiter's bug must not stop the writer
                    log.exception("acknowledgement callback failed")

    def _write_group(self, group: list[tuple[bytes, Done]]) -> BaseException | None:
        if self._failed is not None:
            return WriterClosed(f"storage failed: {self._failed}")
        parts: list[bytes] = []
        for payload, _ in group:
            parts.append(_HEADER.pack(len(payload)))
            parts.append(payload)
        data = b"".join(parts)
        start = self._size
        try:
            if start and start + len(data) > self.segment_max_bytes:
                self._rotate()
                start = 0
            view = memoryview(data)
            while view:
                written = os.write(self._fd, view)
                view = view[written:]
            began = time.perf_counter()
            if self.fsync:
                os.fdatasync(self._fd)
            self.fsync_seconds += time.perf_counter() - began
        except OSError as error:
            if self._write_error is None:  # one line per outage, not one per request
                log.error(
                    "cannot write %s: %s; refusing requests (HTTP 503, gRPC UNAVAILABLE: "
                    "exporters retry) until a write succeeds",
                    self.directory / segment_name(self._seq),
                    error.strerror or error,
                )
            self._write_error = str(error.strerror or error)
            self.write_failures += 1
            try:  # take back the unsynced bytes so the file ends on a whole record
                os.ftruncate(self._fd, start)
                os.fsync(self._fd)
            except OSError as again:
                self._failed = again
                log.error("segment %s could not be repaired; refusing writes", self._seq)
            return error
        if self._write_error is not None:
            log.warning(
                "segment writes succeed again (%d refused while they failed)", self.write_failures
            )
            self._write_error = None
            self.write_failures = 0
        self._size = start + len(data)
        self.groups += 1
        self.records += len(group)
        self.bytes_written += len(data)
        return None

    def _rotate(self) -> None:
        if self.fsync:
            os.fsync(self._fd)
        os.close(self._fd)
        self._fd = -1
        self._open_segment(self._seq + 1)
