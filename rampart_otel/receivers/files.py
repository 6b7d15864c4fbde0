"""Recorded trace files → span batches, streaming, one bad record never costing the rest.

Formats are told apart by content, never by file name (see :func:`sniff_format`):

- gzip (``1f 8b``) is decompressed on the fly, then sniffed again; zstd (``28 b5 2f fd``)
  is recognised and reported as unsupported;
- JSON, when the first bytes hold no control character and the first non-blank one is
  ``{`` or ``[``: JSON Lines — one ExportTraceServiceRequest/TracesData per line, the
  Collector file exporter's ``json`` format — unless the first non-blank line is an
  *incomplete* JSON value (the parser ran out of input at its end), which marks a single
  document pretty-printed over many lines (or several such documents back to back);
- length-prefixed protobuf, the file exporter's ``proto`` format: each record is a
  4-byte big-endian unsigned length, then that many bytes of ExportTraceServiceRequest
  (a record holding OTLP/JSON is read too). The first byte is the length's top byte:
  ``0x00`` for any record under 16 MiB; anything below ``0x0a`` is taken as this format;
- raw protobuf: one serialized ExportTraceServiceRequest/TracesData, first byte ``0x0a``
  (field 1, length-delimited). A length-prefixed file whose first record is 144 MiB or
  more is misread (as raw protobuf, or as unknown); the file exporter never writes one.
- anything else is reported as not OTLP trace data (binary forms recognised but not read,
  Jaeger protobuf and Zipkin proto3 or Thrift, are named: ``codecs/foreign.py``).

Each JSON value (a line, or a document) is decoded by ``codecs/json_forms``, which tells
OTLP JSON from Tempo's, Jaeger's and Zipkin's JSON and the SDK's console output by content.

JSON Lines and length-prefixed files are read record by record, so memory is bounded by
the largest record. A single JSON document or raw protobuf file is read whole.

Directories are read recursively in sorted name order. Entries whose name starts with a
dot (``.git``, ``.DS_Store``, editor swap files) are skipped inside directories; a hidden
path named explicitly is read. Symlinks are followed, each directory read once.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import stat
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import IO

from rampart_otel.codecs.foreign import binary_form
from rampart_otel.codecs.json_forms import spans_from_document, spans_from_document_bytes
from rampart_otel.codecs.otlp_json import (
    GC_PAUSE_THRESHOLD,
    gc_paused,
    parse_json,
    spans_from_json_bytes,
)
from rampart_otel.codecs.otlp_proto import spans_from_proto_bytes
from rampart_otel.errors import DecodeError
from rampart_otel.model import InputError, Span

__all__ = [
    "FileFormat",
    "Record",
    "RecordKind",
    "decode_record",
    "read_path",
    "read_paths",
    "read_records",
    "sniff_format",
]

Item = list[Span] | InputError


class FileFormat(StrEnum):
    EMPTY = "empty"
    GZIP = "gzip"
    ZSTD = "zstd"
    JSON = "json"
    PROTO_LENGTH_PREFIXED = "proto-length-prefixed"
    PROTO = "proto"
    UNKNOWN = "unknown"


SNIFF_BYTES = 64
NOT_TRACE_DATA_MESSAGE = (
    "not OTLP trace data (expected OTLP JSON, JSON Lines or protobuf, Tempo's, Jaeger's or "
    "Zipkin v2 JSON, the Python SDK's ConsoleSpanExporter output, or gzip of one)"
)
# A length-prefixed file of zeros reads as empty records, four bytes each (a GiB of them
# took minutes); the file exporter never writes an empty request.
MAX_EMPTY_RECORDS = 64
_GZIP_MAGIC = b"\x1f\x8b"
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_BOM = b"\xef\xbb\xbf"
_JSON_WS = b" \t\r\n"
_CHUNK = 1 << 24  # read big records in pieces: a bogus length must not allocate 4 GiB
_WS_RE = re.compile(r"[ \t\r\n]*")
_CONTROL_RE = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f]")  # what JSON text never holds raw
_DECODER = json.JSONDecoder()
# What a failing read raises: OSError (incl. BadGzipFile), EOFError (truncated gzip),
# zlib.error (corrupt deflate data).
_READ_ERRORS = (OSError, EOFError, zlib.error)


def sniff_format(head: bytes) -> FileFormat:
    """Name the format of a stream from its first bytes (a few dozen suffice).

    Text is told from binary by control bytes: JSON never holds one raw (strings must
    escape them), and OTLP protobuf shows one within its first bytes (field tags such
    as ``0x12``, short lengths). That matters because protobuf's first byte ``0x0a`` is
    also a newline, which may well precede a JSON document.
    """
    if not head:
        return FileFormat.EMPTY
    if head.startswith(_GZIP_MAGIC):
        return FileFormat.GZIP
    if head.startswith(_ZSTD_MAGIC):
        return FileFormat.ZSTD
    text = head[3:] if head.startswith(_BOM) else head
    if not _CONTROL_RE.search(text):
        stripped = text.lstrip(_JSON_WS)
        if not stripped or stripped[:1] in (b"{", b"["):
            return FileFormat.JSON  # whitespace only reads as blank JSON Lines: nothing
        return FileFormat.UNKNOWN
    first = head[0]
    if first < 0x0A:
        return FileFormat.PROTO_LENGTH_PREFIXED
    if first == 0x0A:
        return FileFormat.PROTO
    return FileFormat.UNKNOWN


# Inside a directory these are documentation, configuration or a collector's results
# store, never trace data; named directly, every file is read (and reported if bad).
NOT_TRACE_DATA = (
    ".md", ".txt", ".rst", ".yaml", ".yml", ".toml", ".ini", ".cfg", ".py",
    ".db", ".db-wal", ".db-shm", ".sqlite", ".lock", ".xml", ".html",
)  # fmt: skip


class RecordKind(StrEnum):
    JSON_LINE = "json-line"
    JSON_DOCUMENTS = "json-documents"  # the rest of a file: pretty-printed documents
    PROTO = "proto"  # a length-prefixed record, or a whole raw protobuf file


@dataclass(frozen=True, slots=True)
class Record:
    """One unit of a file, read but not decoded: what a parallel scorer hands to a worker."""

    kind: RecordKind
    path: str
    location: str  # what an InputError about it names: path:line, path@offset, or path
    payload: bytes


def read_paths(paths: Iterable[str | os.PathLike[str]]) -> Iterator[Item]:
    """Yield span batches and InputErrors for every file under ``paths``, in order."""
    for path in paths:
        yield from read_path(path)


def read_path(path: str | os.PathLike[str]) -> Iterator[Item]:
    """One file or directory; a nonexistent path is an InputError, like any bad file."""
    for record in read_records([path]):
        if isinstance(record, InputError):
            yield record
        else:
            yield from decode_record(record)


def read_records(paths: Iterable[str | os.PathLike[str]]) -> Iterator[Record | InputError]:
    """Every file under ``paths`` as undecoded records, in order; read errors as InputErrors."""
    for path in paths:
        name = os.fsdecode(path)
        if os.path.isdir(name):
            for item in _walk(name, set()):
                if isinstance(item, InputError):
                    yield item
                else:
                    yield from _read_file(item)
        elif os.path.lexists(name):
            yield from _read_file(name)
        else:
            yield InputError(name, "no such file or directory")


def decode_record(record: Record) -> Iterator[Item]:
    """A record's span batches, or the InputError that says why it could not be read."""
    if record.kind is RecordKind.JSON_LINE:
        try:
            batch = spans_from_document_bytes(record.payload)
        except DecodeError as exc:
            yield InputError(record.location, exc.message)
            return
        if batch:
            yield batch
    elif record.kind is RecordKind.PROTO:
        yield from _decode_record(record.payload, record.location)
    else:
        yield from _read_json_documents(record.payload, record.path)


def _walk(directory: str, seen: set[tuple[int, int]]) -> Iterator[str | InputError]:
    try:
        st = os.stat(directory)
        if (st.st_dev, st.st_ino) in seen:
            return  # a symlink loop, or a directory reached twice
        seen.add((st.st_dev, st.st_ino))
        with os.scandir(directory) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError as exc:
        yield InputError(directory, _os_message(exc))
        return
    for entry in entries:
        if entry.name.startswith(".") or entry.name.lower().endswith(NOT_TRACE_DATA):
            continue
        try:
            is_dir = entry.is_dir()
        except OSError:
            is_dir = False
        if is_dir:
            yield from _walk(entry.path, seen)
        else:
            yield entry.path


class _Cursor:
    """Where the reader is, for the InputError if the stream itself fails under it."""

    __slots__ = ("location",)

    def __init__(self, location: str) -> None:
        self.location = location


def _read_file(path: str) -> Iterator[Record | InputError]:
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # opening a FIFO would wait forever
            yield InputError(path, "not a regular file (a FIFO, socket or device); skipped")
            return
        raw = open(path, "rb")  # noqa: SIM115 - closed below, generator-safe
    except OSError as exc:
        yield InputError(path, _os_message(exc))
        return
    cursor = _Cursor(path)
    try:
        stream: IO[bytes] = raw
        fmt = sniff_format(raw.peek(SNIFF_BYTES)[:SNIFF_BYTES])
        if fmt is FileFormat.GZIP:
            stream = gzip.GzipFile(fileobj=raw, mode="rb")
            fmt = sniff_format(stream.peek(SNIFF_BYTES)[:SNIFF_BYTES])
            if fmt is FileFormat.GZIP:
                yield InputError(path, "gzip inside gzip is not supported")
                return
        if fmt is FileFormat.JSON:
            yield from _read_json(stream, path, cursor)
        elif fmt is FileFormat.PROTO_LENGTH_PREFIXED:
            yield from _read_length_prefixed(stream, path, cursor)
        elif fmt is FileFormat.PROTO:
            yield from _read_raw_proto(stream, path)
        elif fmt is FileFormat.ZSTD:
            yield InputError(path, "zstd-compressed; not supported, decompress it first (zstd -d)")
        elif fmt is FileFormat.UNKNOWN:
            head = stream.peek(SNIFF_BYTES)[:SNIFF_BYTES]
            yield InputError(path, binary_form(head) or NOT_TRACE_DATA_MESSAGE)
    except _READ_ERRORS as exc:
        yield InputError(cursor.location, _read_error_message(exc))
    finally:
        raw.close()


def _read_error_message(exc: BaseException) -> str:
    if isinstance(exc, EOFError):
        return "truncated gzip stream; the rest of the file is lost"
    if isinstance(exc, zlib.error | gzip.BadGzipFile):
        return f"corrupt gzip data ({exc}); the rest of the file is lost"
    if isinstance(exc, OSError):
        return f"read error: {_os_message(exc)}; the rest of the file is lost"
    return f"read error: {exc}"


def _os_message(exc: OSError) -> str:
    return exc.strerror.lower() if exc.strerror else str(exc)


# ---- JSON ---------------------------------------------------------------------------


def _read_json(stream: IO[bytes], path: str, cursor: _Cursor) -> Iterator[Record | InputError]:
    lineno = 0
    skipped: list[bytes] = []
    while True:
        cursor.location = f"{path}:{lineno + 1}"
        line = stream.readline()
        if not line:
            return
        lineno += 1
        if not line.isspace():
            break
        skipped.append(line)

    try:
        if len(line) > GC_PAUSE_THRESHOLD:
            with gc_paused():
                parse_json(line)
        else:
            parse_json(line)
    except json.JSONDecodeError as exc:
        if exc.pos >= len(exc.doc.rstrip()):
            # Ran out of input at the end of the line: a document spread over lines.
            cursor.location = path
            skipped.append(line)
            data = b"".join(skipped) + stream.read()
            yield Record(RecordKind.JSON_DOCUMENTS, path, path, data)
            return
    except (ValueError, RecursionError):
        pass  # reported when the line is decoded, as any other line's error
    yield Record(RecordKind.JSON_LINE, path, f"{path}:{lineno}", line)
    while True:
        cursor.location = f"{path}:{lineno + 1}"
        line = stream.readline()
        if not line:
            return
        lineno += 1
        if not line.isspace():
            yield Record(RecordKind.JSON_LINE, path, f"{path}:{lineno}", line)


def _json_lines(lines: Iterable[tuple[int, bytes | str]], path: str) -> Iterator[Item]:
    for lineno, line in lines:
        if not line or line.isspace():
            continue
        try:
            batch = spans_from_document_bytes(line)
        except DecodeError as exc:
            yield InputError(f"{path}:{lineno}", exc.message)
            continue
        if batch:
            yield batch


def _read_json_documents(data: bytes, path: str) -> Iterator[Item]:
    """One pretty-printed document, or several back to back (as ``jq .`` writes them)."""
    try:
        text = data.decode("utf-8-sig", "surrogatepass")
    except UnicodeDecodeError as exc:
        yield InputError(path, f"invalid JSON: not UTF-8 text (byte {exc.start})")
        return
    del data
    end = len(text)
    idx = _WS_RE.match(text).end()  # type: ignore[union-attr]
    line = 1 + text.count("\n", 0, idx)
    first = True
    while idx < end:
        try:
            with gc_paused():  # json's containers are acyclic; GC scans only cost time
                obj, stop = _DECODER.raw_decode(text, idx)
                batch: list[Span] | DecodeError = _try_spans(obj)
                del obj
        except (json.JSONDecodeError, RecursionError) as exc:
            if first and _second_line_is_object(text):
                # A JSON Lines file whose first line is broken at a value boundary.
                yield from _json_lines(enumerate(text.split("\n"), 1), path)
                return
            where = path if first else f"{path}:{line}"
            rest = "" if first else "; the rest of the file is lost"
            yield InputError(where, f"invalid JSON: {_json_error(exc)}{rest}")
            return
        nxt = _WS_RE.match(text, stop).end()  # type: ignore[union-attr]
        where = path if first and nxt >= end else f"{path}:{line}"
        if isinstance(batch, DecodeError):
            yield InputError(where, batch.message)
        elif batch:
            yield batch
        line += text.count("\n", idx, nxt)
        idx = nxt
        first = False


def _try_spans(obj: object) -> list[Span] | DecodeError:
    try:
        return spans_from_document(obj)
    except DecodeError as exc:
        return exc


def _second_line_is_object(text: str) -> bool:
    lines = (ln for ln in text.split("\n", 64) if ln.strip())
    next(lines, None)
    second = next(lines, None)
    try:
        return second is not None and isinstance(json.loads(second), dict)
    except (ValueError, RecursionError):
        return False


def _json_error(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at line {exc.lineno} column {exc.colno}"
    return str(exc)


# ---- protobuf -----------------------------------------------------------------------


def _read_length_prefixed(
    stream: IO[bytes], path: str, cursor: _Cursor
) -> Iterator[Record | InputError]:
    offset = empty = 0
    while True:
        where = cursor.location = f"{path}@{offset}"
        header = stream.read(4)
        if not header:
            return
        if len(header) < 4:
            yield InputError(where, f"truncated record: {len(header)}-byte length prefix")
            return
        size = int.from_bytes(header, "big")
        payload = _read_exact(stream, size)
        if len(payload) < size:
            yield InputError(
                where, f"truncated record: {size} bytes announced, {len(payload)} present"
            )
            return
        empty = empty + 1 if size == 0 else 0
        if empty == MAX_EMPTY_RECORDS:  # zeros, not trace data: do not read on for minutes
            yield InputError(
                f"{path}@{offset + 4 - 4 * MAX_EMPTY_RECORDS}",
                f"{MAX_EMPTY_RECORDS} empty records in a row: not trace data; "
                "the rest of the file is skipped",
            )
            return
        yield Record(RecordKind.PROTO, path, where, payload)
        offset += 4 + size


def _read_exact(stream: IO[bytes], size: int) -> bytes:
    if size <= _CHUNK:
        return stream.read(size)
    parts = []
    remaining = size
    while remaining:
        chunk = stream.read(min(remaining, _CHUNK))
        if not chunk:
            break
        parts.append(chunk)
        remaining -= len(chunk)
    return b"".join(parts)


def _decode_record(payload: bytes, where: str) -> Iterator[Item]:
    try:
        if payload.startswith(_ZSTD_MAGIC):
            raise DecodeError("zstd-compressed record; not supported, decompress it first")
        if payload.startswith(b"{"):  # the file exporter's JSON with legacy compression
            batch = spans_from_json_bytes(payload)
        elif len(payload) > GC_PAUSE_THRESHOLD:
            with gc_paused():
                batch = spans_from_proto_bytes(payload)
        else:
            batch = spans_from_proto_bytes(payload)
    except DecodeError as exc:
        yield InputError(where, binary_form(payload) or exc.message)
        return
    if batch:
        yield batch


def _read_raw_proto(stream: IO[bytes], path: str) -> Iterator[Record]:
    yield Record(RecordKind.PROTO, path, path, stream.read())
