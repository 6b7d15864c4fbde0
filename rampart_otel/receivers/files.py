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
the largest record: a JSON line may be up to ``MAX_LINE_BYTES`` (64 MiB; a longer one is an
error for that line, the others are read). JSON text is read in pieces of 1 MiB, its blank
lines and whitespace skipped as they are read, never kept, so time is linear and memory
bounded whatever a file holds (a gzip of a GiB of newlines, one endless line). A single
JSON document (its runs of blank lines collapsed) or raw protobuf file is read whole, up to
``MAX_DOCUMENT_BYTES`` (256 MiB; a larger one is an error for the file).

Directories are read recursively in sorted name order. Entries whose name starts with a
dot (``.git``, ``.DS_Store``, editor swap files) are skipped inside directories; a hidden
path named explicitly is read. Symlinks are followed, each directory read once.
"""

from __future__ import annotations

import bisect
import gzip
import io
import itertools
import json
import os
import stat
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, TypeAlias

from rampart_otel.codecs.foreign import binary_form
from rampart_otel.codecs.json_forms import spans_from_document, spans_from_document_bytes
from rampart_otel.codecs.json_salvage import salvaged_spans
from rampart_otel.codecs.otlp_ids import UNDECODABLE, kept_spans, refusal_message, refusal_of
from rampart_otel.codecs.otlp_json import (
    GC_PAUSE_THRESHOLD,
    gc_paused,
    json_syntax_error,
    parse_json,
    spans_from_json_bytes,
    without_trailing_whitespace,
)
from rampart_otel.errors import DecodeError
from rampart_otel.lazy_regex import LazyPattern
from rampart_otel.model import InputError, Span

# An opened trace file: the file itself, or the gzip stream over it (both can peek).
_Stream: TypeAlias = "io.BufferedReader[Any] | gzip.GzipFile"

__all__ = [
    "FileFormat",
    "Piece",
    "Record",
    "RecordKind",
    "decode_record",
    "pieces",
    "read_path",
    "read_paths",
    "read_piece",
    "read_records",
    "sniff_format",
    "splittable",
    "trace_files",
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
# JSON Lines are read in pieces of this size; a line may be up to MAX_LINE_BYTES long (a
# longer one is an InputError for that line, the others are read), a JSON document spread
# over lines (or a raw protobuf file) up to MAX_DOCUMENT_BYTES (a larger one is an InputError
# for the file). Blank lines and whitespace are skipped as they are read, never kept.
_READ_SIZE = 1 << 20
MAX_LINE_BYTES = 64 << 20
MAX_DOCUMENT_BYTES = 256 << 20
_NOT_BLANK = LazyPattern(rb"[^ \t\r\n]")
_BLANK_RUN = LazyPattern(rb"\n(?:[ \t\r]*\n)+")  # a newline, then one blank line or more
_MAX_INDENT = 4096
_BLANK_BYTES = frozenset(_JSON_WS)
_WS_RE = LazyPattern(r"[ \t\r\n]*")
_CONTROL_RE = LazyPattern(rb"[\x00-\x08\x0b\x0c\x0e-\x1f]")  # what JSON text never holds raw
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
    # JSON documents: the file's line the payload starts at, and the runs of blank lines
    # collapsed in it, as ``(line, lines removed)`` (``_LineReader.rest``).
    line: int = 1
    gaps: tuple[tuple[int, int], ...] = ()


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
    for item in trace_files(paths):
        if isinstance(item, InputError):
            yield item
        else:
            yield from _read_file(item)


def trace_files(paths: Iterable[str | os.PathLike[str]]) -> Iterator[str | InputError]:
    """Every file ``read_records`` reads under ``paths``, in its order; a directory that
    cannot be listed, or a path that does not exist, as an InputError in its place."""
    for path in paths:
        name = os.fsdecode(path)
        if os.path.isdir(name):
            yield from _walk(name, set())
        elif os.path.lexists(name):
            yield name
        else:
            yield InputError(name, "no such file or directory")


def decode_record(record: Record) -> Iterator[Item]:
    """A record's span batches, or the InputError that says why it could not be read."""
    if record.kind is RecordKind.JSON_LINE:
        yield from _json_line(record.payload, record.location)
    elif record.kind is RecordKind.PROTO:
        yield from _decode_record(record.payload, record.location)
    else:
        lines = _FileLines(record.line, record.gaps)
        yield from _read_json_documents(record.payload, record.path, lines)


def _unparsed(data: bytes | str, where: str, why: str) -> Iterator[Item]:
    """JSON text that does not decode (a line, or the rest of a file): its error, and a
    placeholder for each span of OTLP whose ids the text still shows (``json_salvage``),
    so the runs it belonged to are scored as incomplete, not as if it had never been
    written."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    kept = salvaged_spans(raw, why)
    if not kept:
        yield InputError(where, why)
        return
    traces = len({span.trace_id for span in kept})
    spans = f"{len(kept)} span{'s' if len(kept) != 1 else ''}"
    of = f"{traces} trace{'s' if traces != 1 else ''}"
    yield InputError(
        where,
        f"{why}; the ids of {spans} of {of} read from its text, kept without content: "
        "those runs are scored as incomplete",
    )
    yield kept


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
        stream: _Stream = raw
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


def _read_json(stream: _Stream, path: str, cursor: _Cursor) -> Iterator[Record | InputError]:
    lines = _LineReader(stream, path, cursor)
    first = lines.next_line()
    if first is None:
        return  # blank from end to end
    lineno, line = first
    if line is not None and _spread_over_lines(line):
        cursor.location = path
        rest = lines.rest(MAX_DOCUMENT_BYTES - len(line))
        if rest is None:
            yield InputError(path, _too_long("JSON document", MAX_DOCUMENT_BYTES))
        else:
            data, gaps = rest
            yield Record(RecordKind.JSON_DOCUMENTS, path, path, line + data, lineno, gaps)
        return
    yield from _json_line_records(lines, path, first)


def _spread_over_lines(line: bytes) -> bool:
    """Whether a file's first line is an *incomplete* JSON value (the parser ran out of
    input at its end): a document spread over lines, not JSON Lines. A line that is bad
    JSON otherwise is a line, whose error is reported when it is decoded."""
    try:
        if len(line) > GC_PAUSE_THRESHOLD:
            with gc_paused():
                parse_json(line)
        else:
            parse_json(line)
    except json.JSONDecodeError as exc:
        return exc.pos >= len(exc.doc.rstrip())
    except (ValueError, RecursionError):
        pass
    return False


def _json_line_records(
    lines: _LineReader, path: str, item: tuple[int, bytes | None] | None
) -> Iterator[Record | InputError]:
    while item is not None:
        lineno, line = item
        if line is None:
            yield InputError(f"{path}:{lineno}", _too_long("line", MAX_LINE_BYTES))
        else:
            yield Record(RecordKind.JSON_LINE, path, f"{path}:{lineno}", line)
        item = lines.next_line()


class _LineReader:
    """The non-blank lines of a stream, read in pieces of ``_READ_SIZE``: time linear in its
    size, memory bounded by ``MAX_LINE_BYTES`` whatever it holds. Blank lines are counted,
    never kept; a line over the limit is skipped to its end and comes as None."""

    __slots__ = ("chunk", "cursor", "lineno", "path", "pos", "read")

    def __init__(self, stream: _Stream, path: str, cursor: _Cursor) -> None:
        # read1: what one decompression step gives, so the lines before a truncated gzip
        # stream's end are read before the error.
        self.read = getattr(stream, "read1", stream.read)
        self.path = path
        self.cursor = cursor
        self.chunk = b""
        self.pos = 0
        self.lineno = 0  # lines read so far, blank ones included

    def _fill(self) -> bool:
        self.chunk = self.read(_READ_SIZE)
        self.pos = 0
        return bool(self.chunk)

    def next_line(self) -> tuple[int, bytes | None] | None:
        """``(number, line)`` of the next non-blank line, from its first non-blank byte to its
        newline; ``(number, None)`` for one over ``MAX_LINE_BYTES``; None at the end."""
        chunk, pos = self.chunk, self.pos
        if pos < len(chunk) and chunk[pos] not in _BLANK_BYTES:  # the usual: a whole line here
            end = chunk.find(b"\n", pos)
            if end >= 0 and end - pos < MAX_LINE_BYTES:
                self.pos = end + 1
                self.lineno += 1
                self.cursor.location = f"{self.path}:{self.lineno}"
                return self.lineno, chunk[pos : end + 1]
        self.cursor.location = f"{self.path}:{self.lineno + 1}"
        while True:  # skip blanks, counting the newlines among them
            chunk, pos = self.chunk, self.pos
            if pos >= len(chunk):
                if not self._fill():
                    return None
                chunk, pos = self.chunk, 0
            if pos == 0:  # the fastest skip, one copy per piece
                start = len(chunk) - len(chunk.lstrip(_JSON_WS))
            else:
                found = _NOT_BLANK.search(chunk, pos)
                start = found.start() if found else len(chunk)
            self.lineno += chunk.count(b"\n", pos, start)
            self.pos = start
            if start < len(chunk):
                break
        self.lineno += 1
        self.cursor.location = f"{self.path}:{self.lineno}"
        parts: list[bytes] | None = []
        size = 0
        while True:
            chunk, pos = self.chunk, self.pos
            end = chunk.find(b"\n", pos)
            stop = len(chunk) if end < 0 else end + 1
            size += stop - pos
            if parts is not None:
                if size > MAX_LINE_BYTES:
                    parts = None  # over the limit: dropped, read on to the newline
                else:
                    parts.append(chunk[pos:stop])
            self.pos = stop
            if end >= 0 or not self._fill():
                break
        return self.lineno, None if parts is None else b"".join(parts)

    def rest(self, limit: int) -> tuple[bytes, tuple[tuple[int, int], ...]] | None:
        """Everything not read yet (a document's next lines), each run of blank lines
        collapsed to one newline (a blank line is never inside a JSON string), and those runs
        as ``(line, lines removed)``: the kept text's line whose newline stands for the run.
        None once what is kept is over ``limit`` bytes."""
        parts: list[bytes] = []
        gaps: list[tuple[int, int]] = []
        size = 0
        line = 2  # the kept text's line: the first line is the caller's
        # Whitespace at the start of a line (never inside a string) reaching the end of the
        # last piece: its newlines (-1: not at a line start), and the whitespace after the
        # last one (the next line's indentation, kept for error columns, up to _MAX_INDENT).
        carry, indent = 0, b""  # the next line starts here
        chunk, pos = self.chunk, self.pos
        while pos < len(chunk) or self._fill():
            if pos >= len(chunk):
                chunk, pos = self.chunk, 0
            kept = len(parts)
            if carry >= 0:
                unread = chunk[pos:] if pos else chunk  # pos: only where rest() begins
                start = len(chunk) - len(unread.lstrip(_JSON_WS))
                newline = chunk.rfind(b"\n", pos, start)
                if newline >= 0:
                    carry += chunk.count(b"\n", pos, start)
                    indent = b""
                indent = (indent + chunk[max(newline + 1, pos) : start])[-_MAX_INDENT:]
                if start == len(chunk):
                    pos = start
                    continue
                if carry:
                    parts.append(b"\n")
                    if carry > 1:
                        gaps.append((line, carry - 1))
                    line += 1
                parts.append(indent)
                carry, pos = -1, start
            end = len(chunk)
            blank_end = max(len(chunk.rstrip(_JSON_WS)), pos)
            newline = chunk.find(b"\n", blank_end)
            body_end = end if newline < 0 else newline
            for run in _BLANK_RUN.finditer(chunk, pos, body_end):
                parts += (chunk[pos : run.start()], b"\n")
                line += chunk.count(b"\n", pos, run.start())
                gaps.append((line, chunk.count(b"\n", run.start(), run.end()) - 1))
                line += 1
                pos = run.end()
            parts.append(chunk[pos:body_end])
            line += chunk.count(b"\n", pos, body_end)
            if newline >= 0:
                carry = chunk.count(b"\n", newline, end)
                indent = chunk[max(chunk.rfind(b"\n", newline) + 1, end - _MAX_INDENT) :]
            pos = end
            size += sum(len(part) for part in parts[kept:])
            if size > limit:
                self.chunk, self.pos = b"", 0
                return None
        if carry > 0:
            parts.append(b"\n")
        self.chunk, self.pos = b"", 0
        return b"".join(parts), tuple(gaps)


def _too_long(what: str, limit: int) -> str:
    return f"{what} longer than {_size(limit)}, the limit; skipped"


def _size(count: int) -> str:
    return f"{count >> 20} MiB" if count >= 1 << 20 and not count % (1 << 20) else f"{count} bytes"


def _json_lines(lines: Iterable[tuple[int, bytes | str]], path: str) -> Iterator[Item]:
    for lineno, line in lines:
        if line and not line.isspace():
            yield from _json_line(line, f"{path}:{lineno}")


def _json_line(line: bytes | str, where: str) -> Iterator[Item]:
    """One JSON Lines line's spans, or its error (with what its text still shows)."""
    try:
        batch = spans_from_document_bytes(line)
    except DecodeError as exc:
        yield from _unparsed(line, where, exc.message)
        return
    yield from _checked(batch, where)


def _read_json_documents(
    data: bytes, path: str, file_line: Callable[[int], int] = int
) -> Iterator[Item]:
    """One pretty-printed document, or several back to back (as ``jq .`` writes them);
    ``file_line`` maps a line of ``data`` to the file's (blank lines were skipped)."""
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
                yield from _json_lines(
                    ((file_line(n), ln) for n, ln in enumerate(text.split("\n"), 1)), path
                )
                return
            where = path if first else f"{path}:{file_line(line)}"
            rest = "" if first else "; the rest of the file is lost"
            why = f"invalid JSON: {_json_error(exc, file_line)}{rest}"
            yield from _unparsed(text[idx:], where, why)
            return
        nxt = _WS_RE.match(text, stop).end()  # type: ignore[union-attr]
        where = path if first and nxt >= end else f"{path}:{file_line(line)}"
        if isinstance(batch, DecodeError):
            yield InputError(where, batch.message)
        else:
            yield from _checked(batch, where)
        line += text.count("\n", idx, nxt)
        idx = nxt
        first = False


class _FileLines:
    """A document's line → the file's: it starts at ``first``, ``gaps`` as ``Record.gaps``."""

    __slots__ = ("first", "removed", "starts")

    def __init__(self, first: int, gaps: tuple[tuple[int, int], ...]) -> None:
        self.first = first
        self.starts = [line for line, _ in gaps]
        self.removed = list(itertools.accumulate(count for _, count in gaps))

    def __call__(self, line: int) -> int:
        before = bisect.bisect_left(self.starts, line)  # runs on lines before this one
        return self.first - 1 + line + (self.removed[before - 1] if before else 0)


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


def _json_error(exc: BaseException, file_line: Callable[[int], int] = int) -> str:
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    if isinstance(exc, json.JSONDecodeError):
        exc = without_trailing_whitespace(exc)
        return json_syntax_error(exc, f"line {file_line(exc.lineno)} column {exc.colno}")
    return str(exc)


# ---- protobuf -----------------------------------------------------------------------


def _read_length_prefixed(
    stream: _Stream, path: str, cursor: _Cursor, offset: int = 0
) -> Iterator[Record | InputError]:
    """The records from ``offset`` (where ``stream`` stands: a record's start, after a
    record that was not empty) to the end of ``stream``."""
    empty = 0
    while True:
        where = cursor.location = f"{path}@{offset}"
        header = stream.read(4)
        if not header:
            return
        if len(header) < 4:
            yield InputError(where, f"truncated record: {len(header)}-byte length prefix")
            return
        size = int.from_bytes(header, "big")
        if size > MAX_DOCUMENT_BYTES:  # skipped as it is read, never held
            present = _skip(stream, size)
            if present < size:
                yield InputError(
                    where, f"truncated record: {size} bytes announced, {present} present"
                )
                return
            yield InputError(
                where,
                f"record of {size} bytes, longer than {MAX_DOCUMENT_BYTES} bytes, the limit; "
                "skipped",
            )
            empty = 0
            offset += 4 + size
            continue
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


def _skip(stream: _Stream, size: int) -> int:
    """Read past ``size`` bytes, a piece at a time; how many there were."""
    skipped = 0
    while skipped < size:
        chunk = stream.read(min(size - skipped, _READ_SIZE))
        if not chunk:
            break
        skipped += len(chunk)
    return skipped


def _read_exact(stream: _Stream, size: int) -> bytes:
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
    from rampart_otel.codecs.otlp_proto import spans_from_proto_bytes  # startup: protobuf

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
        if payload.startswith((b"{", _ZSTD_MAGIC)) or binary_form(payload):
            yield InputError(where, binary_form(payload) or exc.message)
        else:
            yield from _salvaged(payload, where, exc)
        return
    yield from _checked(batch, where)


def _salvaged(payload: bytes, where: str, error: DecodeError) -> Iterator[Item]:
    """A protobuf record that does not decode as a whole: every span that decodes on its
    own, and a placeholder for each one that does not (``codecs/otlp_salvage``), which
    keeps its run short of complete; the InputError says how many, and how many were in no
    run. A record none of whose spans can be placed in a trace is refused whole."""
    from rampart_otel.codecs.otlp_proto import readable_spans  # startup: protobuf

    spans, unreadable, lost = readable_spans(payload)
    if not spans:
        yield InputError(where, error.message)
        return
    kept, refused = kept_spans(spans)
    total = len(spans) + lost
    message = f"{unreadable} of {total} spans could not be decoded ({error.message})"
    if lost:
        message += f"; {lost} of them with no readable trace id, in no run"
    if lost < unreadable:
        message += "; their traces are scored without their content, as incomplete"
    others = [span.refused for span in refused if span.refused != UNDECODABLE]
    if others:
        message += "; " + refusal_message(others, total)
    yield InputError(where, message)
    if kept:
        yield kept


def _checked(batch: list[Span], where: str) -> Iterator[Item]:
    """A record's spans, those the OTLP id rule refused named in an InputError; a span with
    no valid trace id is dropped, the others stay as placeholders (``codecs/otlp_ids``)."""
    kept, refused = kept_spans(batch)
    if refused:
        yield InputError(where, refusal_of(refused, len(batch)))
    if kept:
        yield kept


def _read_raw_proto(stream: _Stream, path: str) -> Iterator[Record | InputError]:
    data = stream.read(MAX_DOCUMENT_BYTES + 1)
    if len(data) > MAX_DOCUMENT_BYTES:
        yield InputError(path, _too_long("protobuf file", MAX_DOCUMENT_BYTES))
    else:
        yield Record(RecordKind.PROTO, path, path, data)


# ---- pieces: one file read by several processes (``score --jobs N``) -----------------


@dataclass(frozen=True, slots=True)
class Piece:
    """A stretch of a file that starts at a record's start and ends at one (or at the file's
    end): reading the pieces of a file one after the other gives the records ``read_records``
    gives, with the same locations. ``line``: the newlines before ``start`` (JSON Lines)."""

    path: str
    kind: RecordKind  # JSON_LINE: a JSON Lines file; PROTO: length-prefixed protobuf
    start: int
    end: int
    line: int = 0

    @property
    def size(self) -> int:
        return self.end - self.start


def splittable(path: str) -> RecordKind | None:
    """How ``path`` (a file ``trace_files`` gave) can be cut into pieces: JSON_LINE for
    JSON Lines, PROTO for length-prefixed protobuf, None for every other form or a file
    that cannot be read now (read whole: gzip, a JSON document, raw protobuf, ...)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        with open(path, "rb") as raw:
            fmt = sniff_format(raw.peek(SNIFF_BYTES)[:SNIFF_BYTES])
            if fmt is FileFormat.EMPTY:
                return RecordKind.JSON_LINE  # no record either way
            if fmt is FileFormat.PROTO_LENGTH_PREFIXED:
                return RecordKind.PROTO
            if fmt is not FileFormat.JSON:
                return None
            first = _LineReader(raw, path, _Cursor(path)).next_line()
    except OSError:
        return None
    if first is not None and first[1] is not None and _spread_over_lines(first[1]):
        return None
    return RecordKind.JSON_LINE


def pieces(path: str, kind: RecordKind, step: int) -> list[Piece]:
    """``path`` cut at record starts about every ``step`` bytes (JSON Lines: after a newline;
    length-prefixed protobuf: at a record whose length prefix the walk reached, after one
    that is not empty, never past a truncated record or a run of empty ones)."""
    step = max(step, 1)
    with open(path, "rb") as file:
        size = os.fstat(file.fileno()).st_size
        cuts = _line_cuts(file, size, step) if kind is RecordKind.JSON_LINE else None
        if cuts is None:
            cuts = _record_cuts(file, size, step)
    ends = [start for start, _ in cuts[1:]] + [size]
    return [
        Piece(path, kind, start, end, line) for (start, line), end in zip(cuts, ends, strict=True)
    ]


def _line_cuts(file: io.BufferedReader, size: int, step: int) -> list[tuple[int, int]]:
    cuts = [(0, 0)]
    base = lines = 0  # bytes read before this chunk, and the newlines among them
    target = step  # the next cut is the first line start at or after it
    while target < size:
        chunk = file.read(_READ_SIZE)
        if not chunk:
            break
        start = 0
        while target < size and target - 1 < base + len(chunk):
            at = chunk.find(b"\n", max(target - 1 - base, start))
            if at < 0:
                break
            cut = base + at + 1
            if cut < size:
                cuts.append((cut, lines + chunk.count(b"\n", 0, at + 1)))
            target, start = cut + step, at + 1
        lines += chunk.count(b"\n")
        base += len(chunk)
    return cuts


def _record_cuts(file: io.BufferedReader, size: int, step: int) -> list[tuple[int, int]]:
    cuts = [(0, 0)]
    offset = empty = 0
    target = step
    while True:
        header = file.read(4)
        if len(header) < 4:
            return cuts
        if offset >= target and empty == 0:
            cuts.append((offset, 0))
            target = offset + step
        length = int.from_bytes(header, "big")
        if offset + 4 + length > size:
            return cuts  # truncated: reported by the piece that holds it
        empty = empty + 1 if length == 0 else 0
        if empty == MAX_EMPTY_RECORDS:
            return cuts  # the reader stops here: no piece may start after it
        offset += 4 + length
        file.seek(offset)


class _Slice(io.RawIOBase):
    """``remaining`` bytes of an open file, from where it stands."""

    def __init__(self, file: io.FileIO, remaining: int) -> None:
        self.file = file
        self.remaining = remaining

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        size = min(len(buffer), self.remaining)
        if size <= 0:
            return 0
        got = self.file.readinto(memoryview(buffer)[:size]) or 0
        self.remaining -= got
        return got


def read_piece(piece: Piece) -> Iterator[Record | InputError]:
    """The records of one piece, as ``read_records`` gives them for that stretch."""
    path = piece.path
    try:
        raw = open(path, "rb", buffering=0)  # noqa: SIM115 - closed below, generator-safe
    except OSError as exc:
        yield InputError(path, _os_message(exc))
        return
    cursor = _Cursor(path)
    try:
        raw.seek(piece.start)
        stream = io.BufferedReader(_Slice(raw, piece.size), _READ_SIZE)
        if piece.kind is RecordKind.PROTO:
            yield from _read_length_prefixed(stream, path, cursor, piece.start)
        else:
            lines = _LineReader(stream, path, cursor)
            lines.lineno = piece.line
            yield from _json_line_records(lines, path, lines.next_line())
    except _READ_ERRORS as exc:
        yield InputError(cursor.location, _read_error_message(exc))
    finally:
        raw.close()
