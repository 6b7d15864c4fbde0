"""OTLP/JSON → :class:`~rampart_otel.model.Span`.

Accepts what real exporters write, not only what the spec allows: hex ids (any case) and
the protobuf-JSON base64 default, enum ints and names, int64 as strings or numbers,
camelCase and snake_case keys, the legacy ``instrumentationLibrarySpans`` envelope.
Unknown fields are ignored. Anything malformed raises one :class:`DecodeError`.

This is the decode hot path: plain dict access and local variables, no validation layer.
"""

from __future__ import annotations

import binascii
import gc
import json
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

import orjson

from rampart_otel.codecs.otlp_ids import (
    UNDECODABLE_KEY,
    IdProblem,
    id_problem,
    placeholder,
    undecodable,
)
from rampart_otel.errors import DecodeError
from rampart_otel.model import Attributes, Event, Link, Resource, Scope, Span, SpanKind, StatusCode

__all__ = [
    "DecodeError",
    "gc_paused",
    "json_syntax_error",
    "load_json",
    "parse_json",
    "spans_from_json",
    "spans_from_json_bytes",
    "without_trailing_whitespace",
]

# Inputs above this size are parsed with the cyclic GC paused: on big documents the
# collector's repeated scans of millions of fresh containers dominate parse time.
GC_PAUSE_THRESHOLD = 1 << 20

_KIND: dict[Any, SpanKind] = {}
for _i, _kind in enumerate(SpanKind):
    _KIND[_i] = _KIND["SPAN_KIND_" + _kind] = _kind
_STATUS: dict[Any, StatusCode] = {}
for _i, _status in enumerate(StatusCode):
    _STATUS[_i] = _STATUS["STATUS_CODE_" + _status] = _status
_UNSPECIFIED, _UNSET = SpanKind.UNSPECIFIED, StatusCode.UNSET

# AnyValue oneof members, both spellings → a small code for dispatch.
_STR, _BOOL, _INT, _DOUBLE, _ARRAY, _KVLIST, _BYTES = range(7)
_AV: dict[str, int] = {}
for _code, _camel, _snake in (
    (_STR, "stringValue", "string_value"),
    (_BOOL, "boolValue", "bool_value"),
    (_INT, "intValue", "int_value"),
    (_DOUBLE, "doubleValue", "double_value"),
    (_ARRAY, "arrayValue", "array_value"),
    (_KVLIST, "kvlistValue", "kvlist_value"),
    (_BYTES, "bytesValue", "bytes_value"),
):
    _AV[_camel] = _AV[_snake] = _code

_ZERO_SPAN_ID = bytes(8)
# The ranges of the protobuf types behind OTLP/JSON numbers (uint32, fixed64, int64).
_U32, _U64 = (1 << 32) - 1, (1 << 64) - 1
_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1

_gc_lock = threading.Lock()
_gc_depth = 0
_gc_was_enabled = False


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic GC; nests and is thread-safe, so it never stays off by accident."""
    global _gc_depth, _gc_was_enabled
    with _gc_lock:
        if _gc_depth == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_depth += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_depth -= 1
            if _gc_depth == 0 and _gc_was_enabled:
                gc.enable()


def spans_from_json_bytes(data: bytes | bytearray | str) -> list[Span]:
    """Decode one OTLP/JSON document (ExportTraceServiceRequest or TracesData)."""
    if len(data) > GC_PAUSE_THRESHOLD:
        with gc_paused():
            return spans_from_json(_loads(data))
    return spans_from_json(_loads(data))


def load_json(data: bytes | bytearray | str) -> Any:
    """JSON text → Python values; a syntax error is one :class:`DecodeError` saying where."""
    if len(data) > GC_PAUSE_THRESHOLD:
        with gc_paused():
            return _loads(data)
    return _loads(data)


def parse_json(data: bytes | bytearray | memoryview | str) -> Any:
    """JSON text → Python values: orjson, with the standard library as the judge of the rest.

    orjson is several times faster, but rejects what ``json`` accepts (NaN, integers beyond
    64 bits, lone surrogates): those documents take the slow path and decode exactly as before.
    Raises ``ValueError`` (``json.JSONDecodeError`` for syntax) or ``RecursionError``.
    """
    try:
        return _orjson_loads(data)
    except orjson.JSONDecodeError:
        return json.loads(data)


_orjson_loads = orjson.loads


def json_syntax_error(exc: json.JSONDecodeError, where: str) -> str:
    """``exc``'s message placed ``at`` ``where`` ("Unterminated string starting at" already
    ends in "at")."""
    return f"{exc.msg.removesuffix(' at')} at {where}"


def without_trailing_whitespace(exc: json.JSONDecodeError) -> json.JSONDecodeError:
    """The error the text gives without its trailing whitespace, where ``exc`` is in it: a
    line cut off inside a string is "Unterminated string", not "Invalid control
    character" (its own newline)."""
    doc = exc.doc
    end = len(doc.rstrip())
    if exc.pos < end or not exc.msg.startswith("Invalid control character"):
        return exc  # not the string's end meeting the line's end
    try:
        json.loads(doc[:end])
    except json.JSONDecodeError as inner:
        return inner
    except (ValueError, RecursionError):
        pass
    return exc


def _loads(data: bytes | bytearray | str) -> Any:
    try:
        return parse_json(data)
    except RecursionError:
        raise DecodeError("invalid JSON: nested too deeply") from None
    except json.JSONDecodeError as exc:
        exc = without_trailing_whitespace(exc)
        where = f"line {exc.lineno} column {exc.colno}" if exc.lineno > 1 else f"column {exc.colno}"
        raise DecodeError(f"invalid JSON: {json_syntax_error(exc, where)}") from None
    except ValueError as exc:  # UnicodeDecodeError
        raise DecodeError(f"invalid JSON: {exc}") from None


def spans_from_json(obj: dict[str, Any]) -> list[Span]:
    """Decode a parsed OTLP/JSON document; resource and scope objects are shared per block."""
    if type(obj) is not dict:
        raise DecodeError(f"expected a JSON object with resourceSpans, got {_tname(obj)}")
    rss = obj.get("resourceSpans")
    if rss is None:
        rss = obj.get("resource_spans")
    if rss is None:
        if obj:
            keys = ", ".join(sorted(map(str, obj))[:5])
            raise DecodeError(f"not OTLP trace data: no resourceSpans (keys: {keys})")
        return []
    if type(rss) is not list:
        raise DecodeError(f"resourceSpans: expected an array, got {_tname(rss)}")

    out: list[Span] = []
    append = out.append
    ri = si = pi = -1
    try:
        # The loop indices are read by the error handlers below, to say where.
        for ri, rs in enumerate(rss):
            si = pi = -1
            res = rs.get("resource")
            resource = _resource(res) if res else Resource({})
            for si, ss in enumerate(_scope_spans(rs)):
                pi = -1
                g = ss.get
                sc = g("scope") or g("instrumentationLibrary") or g("instrumentation_library")
                scope = _scope(sc) if sc else Scope()
                for pi, sp in enumerate(g("spans") or ()):
                    try:
                        append(_span(sp, resource, scope))
                    except _SPAN_ERRORS as exc:  # refused alone, kept as a mark of its run
                        append(
                            _unreadable(sp, resource, scope, f"{_where(ri, si, pi)}: {_why(exc)}")
                        )
    except DecodeError as exc:
        raise DecodeError(f"{_where(ri, si, pi)}: {exc.message}") from None
    except RecursionError:
        raise DecodeError(f"{_where(ri, si, pi)}: values nested too deeply") from None
    except (TypeError, AttributeError, KeyError, ValueError, IndexError) as exc:
        raise DecodeError(f"{_where(ri, si, pi)}: {_explain(exc)}") from None
    return out


_SPAN_ERRORS = (
    DecodeError,
    RecursionError,
    TypeError,
    AttributeError,
    KeyError,
    ValueError,
    IndexError,
)


def _why(exc: Exception) -> str:
    if isinstance(exc, DecodeError):
        return exc.message
    if isinstance(exc, RecursionError):
        return "values nested too deeply"
    return _explain(exc)


def _unreadable(sp: Any, resource: Resource, scope: Scope, why: str) -> Span:
    """A span object that does not decode: a placeholder (``otlp_ids.undecodable``) of the ids
    and times it shows, each read on its own; one with no readable trace id is in no run
    (``otlp_ids.kept_spans`` leaves it out, the refusal counts it)."""
    shown: dict[str, Any] = {}
    if type(sp) is dict:
        for key, snake, size in _ID_FIELDS:
            try:
                v = sp.get(key)
                shown[key] = _id(sp.get(snake) if v is None else v, size, key)
            except DecodeError:
                shown[key] = b""
        for key, snake, _ in _TIME_FIELDS:
            v = sp.get(key)
            v = sp.get(snake) if v is None else v
            try:
                shown[key] = _uint(v, key, _U64) or None if v is not None else None
            except DecodeError:
                shown[key] = None
    return undecodable(
        shown.get("traceId", b""),
        shown.get("spanId", b""),
        shown.get("parentSpanId", b""),
        shown.get("startTimeUnixNano"),
        shown.get("endTimeUnixNano"),
        resource,
        scope,
        why,
    )


_ID_FIELDS = (
    ("traceId", "trace_id", 16),
    ("spanId", "span_id", 8),
    ("parentSpanId", "parent_span_id", 8),
)
_TIME_FIELDS = (
    ("startTimeUnixNano", "start_time_unix_nano", 0),
    ("endTimeUnixNano", "end_time_unix_nano", 0),
)


def _scope_spans(rs: dict[str, Any]) -> Any:
    """A resourceSpans' scope blocks, under any of the names exporters have used."""
    g = rs.get
    return (
        g("scopeSpans")
        or g("scope_spans")
        or g("instrumentationLibrarySpans")
        or g("instrumentation_library_spans")
        or ()
    )


def _where(ri: int, si: int, pi: int) -> str:
    where = f"resourceSpans[{ri}]"
    if si >= 0:
        where += f".scopeSpans[{si}]"
    if pi >= 0:
        where += f".spans[{pi}]"
    return where


def _explain(exc: Exception) -> str:
    text = str(exc)
    if isinstance(exc, AttributeError) and "has no attribute" in text:
        pytype = text.split(" object", 1)[0].strip("'")
        return f"expected an object, got {_JSON_NAMES.get(pytype, pytype)}"
    if isinstance(exc, KeyError):
        return f"missing field {text}"
    return f"malformed ({text})"


_JSON_NAMES = {
    "str": "string",
    "list": "array",
    "int": "number",
    "float": "number",
    "bool": "boolean",
    "NoneType": "null",
}


def _tname(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, str):
        return "string"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _resource(res: dict[str, Any]) -> Resource:
    g = res.get
    dropped = g("droppedAttributesCount")
    if dropped is None:
        dropped = g("dropped_attributes_count")
    try:
        attributes = _attrs(g("attributes") or ())
        return Resource(
            attributes, _uint(dropped, "droppedAttributesCount") if dropped is not None else 0
        )
    except DecodeError as exc:
        raise DecodeError(f"resource: {exc.message}") from None


def _scope(sc: dict[str, Any]) -> Scope:
    g = sc.get
    name = g("name") or ""
    version = g("version") or ""
    if type(name) is not str or type(version) is not str:
        raise DecodeError("scope: name and version must be strings")
    return Scope(name, version)


def _span(sp: dict[str, Any], resource: Resource, scope: Scope) -> Span:
    g = sp.get
    v = g("traceId")
    if v is None:
        v = g("trace_id")
    trace_id = _id(v, 16, "traceId")
    v = g("spanId")
    if v is None:
        v = g("span_id")
    span_id = _id(v, 8, "spanId")
    v = g("parentSpanId")
    if v is None:
        v = g("parent_span_id")
    parent = _id(v, 8, "parentSpanId") if v else b""
    links = g("links")
    link_ids = _link_ids(links) if links else ()

    v = g("startTimeUnixNano")
    if v is None:
        v = g("start_time_unix_nano")
    start = _time(v, "startTimeUnixNano")
    v = g("endTimeUnixNano")
    if v is None:
        v = g("end_time_unix_nano")
    end = _time(v, "endTimeUnixNano")

    problem = id_problem(trace_id, span_id, parent, link_ids)
    # the OTLP id rule (codecs/otlp_ids.py): refused, kept as a mark; a placeholder of a span
    # that could not be decoded is read as such (its attribute says why), as protobuf's is
    if problem is not None and (problem is IdProblem.TRACE_ID or not _marked(g("attributes"))):
        return placeholder(
            problem, trace_id, span_id, parent, link_ids, start or None, end or None,
            resource, scope,
        )  # fmt: skip

    name = g("name")
    if type(name) is not str:
        if name is not None:
            raise DecodeError(f"name: expected a string, got {_tname(name)}")
        name = ""
    v = g("kind")
    kind = _UNSPECIFIED if v is None else _KIND.get(v) or _enum(v, "kind", _UNSPECIFIED)

    status = g("status")
    if status:
        v = status.get("code")
        code = _UNSET if v is None else _STATUS.get(v) or _enum(v, "status.code", _UNSET)
        message = status.get("message") or ""
        if type(message) is not str:
            raise DecodeError(f"status.message: expected a string, got {_tname(message)}")
    else:
        code = _UNSET
        message = ""

    v = g("attributes")
    attributes = _attrs(v) if v else {}
    why = attributes.get(UNDECODABLE_KEY)
    if why is not None:
        return undecodable(
            trace_id, span_id, parent, start or None, end or None, resource, scope, why
        )
    repeated = repeated_keys(v, len(attributes)) if v else []
    raw_events = g("events")
    events = _events(raw_events) if raw_events else []
    if events:
        for event, raw in zip(events, raw_events or (), strict=True):
            kvs = raw.get("attributes")
            if kvs:
                repeated += repeated_keys(kvs, len(event.attributes))
    links = _links(links, link_ids) if links else []

    da = g("droppedAttributesCount")
    if da is None:
        da = g("dropped_attributes_count")
    de = g("droppedEventsCount")
    if de is None:
        de = g("dropped_events_count")
    dl = g("droppedLinksCount")
    if dl is None:
        dl = g("dropped_links_count")
    flags = g("flags")

    return Span(
        trace_id.hex(),
        span_id.hex(),
        parent.hex() if parent and parent != _ZERO_SPAN_ID else None,
        name,
        kind,
        start or None,  # 0 is proto3's "not set"
        end or None,
        code,
        message,
        attributes,
        events,
        links,
        resource,
        scope,
        _count(da, "droppedAttributesCount"),
        _count(de, "droppedEventsCount"),
        _count(dl, "droppedLinksCount"),
        _count(flags, "flags"),
        repeated_keys=tuple(dict.fromkeys(repeated)) if repeated else (),
    )


def _marked(kvs: Any) -> bool:
    """The attributes hold the mark of an undecodable span's placeholder."""
    return type(kvs) is list and any(
        type(kv) is dict and kv.get("key") == UNDECODABLE_KEY for kv in kvs
    )


def _time(value: Any, field: str) -> int | None:
    """A fixed64 time: a number, or (as OTLP/JSON writes int64s) its decimal text."""
    tv = type(value)
    if tv is str:
        try:
            n = int(value)
        except ValueError:
            n = -1  # _uint says why
        if 0 <= n <= _U64:
            return n
    elif tv is int and 0 <= value <= _U64:
        return value  # type: ignore[no-any-return]
    elif value is None:
        return None
    return _uint(value, field, _U64)


def _count(value: Any, field: str) -> int:
    """An optional uint32 field (a count, the flags): missing is 0."""
    if type(value) is int and 0 <= value <= _U32:
        return value
    return 0 if value is None else _uint(value, field)


def _events(items: list[Any]) -> list[Event]:
    out = []
    for i, ev in enumerate(items):
        try:
            g = ev.get
            t = g("timeUnixNano")
            if t is None:
                t = g("time_unix_nano")
            if t is not None and (type(t) is not int or not 0 <= t <= _U64):
                t = _uint(t, "timeUnixNano", _U64)
            name = g("name") or ""
            if type(name) is not str:
                raise DecodeError(f"name: expected a string, got {_tname(name)}")
            v = g("attributes")
            d = g("droppedAttributesCount")
            if d is None:
                d = g("dropped_attributes_count")
            out.append(
                Event(
                    name,
                    t or None,
                    _attrs(v) if v else {},
                    _uint(d, "droppedAttributesCount") if d is not None else 0,
                )
            )
        except DecodeError as exc:
            raise DecodeError(f"events[{i}]: {exc.message}") from None
        except (TypeError, AttributeError, KeyError, ValueError) as exc:
            raise DecodeError(f"events[{i}]: {_explain(exc)}") from None
    return out


def _link_ids(items: Any) -> list[tuple[bytes, bytes]]:
    """Each link's trace and span id bytes (the id rule is the span's, in ``otlp_ids``)."""
    out = []
    for i, ln in enumerate(items):
        try:
            g = ln.get
            t = g("traceId")
            if t is None:
                t = g("trace_id")
            s = g("spanId")
            if s is None:
                s = g("span_id")
            out.append((_id(t, 16, "traceId"), _id(s, 8, "spanId")))
        except DecodeError as exc:
            raise DecodeError(f"links[{i}]: {exc.message}") from None
        except (TypeError, AttributeError, KeyError, ValueError) as exc:
            raise DecodeError(f"links[{i}]: {_explain(exc)}") from None
    return out


def _links(items: list[Any], ids: Sequence[tuple[bytes, bytes]]) -> list[Link]:
    out = []
    for i, (ln, (t, s)) in enumerate(zip(items, ids, strict=True)):
        try:
            v = ln.get("attributes")
            out.append(Link(t.hex(), s.hex(), _attrs(v) if v else {}))
        except DecodeError as exc:
            raise DecodeError(f"links[{i}]: {exc.message}") from None
        except (TypeError, AttributeError, KeyError, ValueError) as exc:
            raise DecodeError(f"links[{i}]: {_explain(exc)}") from None
    return out


def repeated_keys(kvs: Sequence[Any], kept: int) -> list[str]:
    """The keys of a KeyValue list (JSON objects or protobuf messages) recorded more than once
    with different values; ``kept``: how many keys its attributes hold (as many as the list
    holds items: no key repeated, nothing to look for)."""
    if kept >= len(kvs):
        return []
    first: dict[Any, Any] = {}
    found: dict[Any, None] = {}
    for kv in kvs:
        key, value = (kv.get("key"), kv.get("value")) if type(kv) is dict else (kv.key, kv.value)
        if key in first:
            if first[key] != value:
                found[key] = None
        else:
            first[key] = value
    return [str(key) for key in found]


def _attrs(kvs: Iterable[Any]) -> Attributes:
    """KeyValue list → dict; a repeated key keeps its last value."""
    out: Attributes = {}
    key: Any = None
    try:
        for kv in kvs:
            key = kv["key"]
            if type(key) is not str:
                raise DecodeError(f"key: expected a string, got {_tname(key)}")
            av = kv.get("value")
            if av is None:
                out[key] = None
                continue
            if len(av) == 1:  # the common shapes, read as _value reads them, inline
                s = av.get("stringValue")
                if type(s) is str:
                    out[key] = s
                    continue
                s = av.get("intValue")
                if s is not None:
                    ts = type(s)
                    if ts is str:
                        try:
                            s = int(s)
                        except ValueError:
                            s = None  # _value says why
                    elif ts is not int:
                        s = None
                    if s is not None and _I64_MIN <= s <= _I64_MAX:
                        out[key] = s
                        continue
                else:
                    s = av.get("boolValue")
                    if type(s) is bool:
                        out[key] = s
                        continue
            out[key] = _value(av)
    except DecodeError as exc:
        raise DecodeError(f"attribute {_short(key)}: {exc.message}") from None
    except (TypeError, AttributeError, KeyError, ValueError) as exc:
        raise DecodeError(f"attribute {_short(key)}: {_explain(exc)}") from None
    return out


def _short(key: Any) -> str:
    text = repr(key)
    return text if len(text) <= 60 else text[:57] + "..."


def _value(av: Any) -> Any:
    """One AnyValue object → a plain Python value; an empty AnyValue is None."""
    if type(av) is not dict:
        raise DecodeError(f"expected an AnyValue object, got {_tname(av)}")
    for k, v in av.items():
        t = _AV.get(k)
        if t is None or v is None:  # unknown field, or JSON null (= not set)
            continue
        tv = type(v)
        if t == _STR:
            if tv is str:
                return v
        elif t == _INT:
            if tv is int or tv is str or tv is float:
                return _int64(v, k)
        elif t == _BOOL:
            if tv is bool:
                return v
        elif t == _DOUBLE:
            if tv is float or tv is int:
                return float(v)
            if tv is str:
                try:
                    return float(v)  # "NaN", "Infinity", "-Infinity", or a numeric string
                except ValueError:
                    raise DecodeError(f"{k}: not a number: {v[:40]!r}") from None
        elif t == _ARRAY:
            if tv is dict:
                return [_value(x) for x in v.get("values") or ()]
        elif t == _KVLIST:
            if tv is dict:
                return _attrs(v.get("values") or ())
        elif t == _BYTES and tv is str:
            return _b64(v, k)
        raise DecodeError(f"{k}: unexpected {_tname(v)}")
    return None


_Enum = TypeVar("_Enum", SpanKind, StatusCode)


def _enum(value: Any, field: str, unknown: _Enum) -> _Enum:
    # Proto3 enums are open: an unknown number is kept as "not specified", not rejected.
    if type(value) is int:
        return unknown
    raise DecodeError(f"{field}: unknown value {_short(value)}")


def _int(value: Any, field: str) -> int:
    if type(value) is int:
        return value
    tv = type(value)
    if tv is str:
        try:
            return int(value)
        except ValueError:
            pass
    elif tv is float and value.is_integer():
        return int(value)
    raise DecodeError(f"{field}: expected an integer, got {_short(value)}")


def _uint(value: Any, field: str, limit: int = _U32) -> int:
    """An unsigned protobuf field (uint32, fixed32; fixed64 with ``limit=_U64``): a value
    beyond its type is malformed here as it is in protobuf, so every path reads the same."""
    n = _int(value, field)
    if n < 0:
        raise DecodeError(f"{field}: expected a non-negative integer, got {n}")
    if n > limit:
        raise DecodeError(f"{field}: {n} is out of range (at most {limit})")
    return n


def _int64(value: Any, field: str) -> int:
    n = _int(value, field)
    if not _I64_MIN <= n <= _I64_MAX:
        raise DecodeError(f"{field}: {_short(n)} is out of the int64 range")
    return n


def _id(value: Any, nbytes: int, field: str) -> bytes:
    """An id's bytes: hex (any case) or base64, told apart by length; missing is empty.

    Text that is neither is malformed (a :class:`DecodeError`); bytes of the wrong length or
    all zero are well formed but invalid, for the span's id rule (``otlp_ids``) to refuse.
    """
    if type(value) is str:
        n = len(value)
        if n == 2 * nbytes:
            try:
                return bytes.fromhex(value)
            except ValueError:
                pass
        elif n == _B64_LEN[nbytes] or n == _B64_LEN[nbytes] - _B64_PAD[nbytes]:
            try:
                raw = _b64(value, field)
            except DecodeError:
                raw = b""
            if len(raw) == nbytes:
                return raw
        if not value:
            return b""
        if not n % 2:
            try:
                return bytes.fromhex(value)
            except ValueError:
                pass
        try:
            return _b64(value, field)
        except DecodeError:
            pass
    elif value is None:
        return b""
    raise DecodeError(
        f"{field}: expected {2 * nbytes} hex digits or base64 of {nbytes} bytes, "
        f"got {_short(value)}"
    )


_B64_LEN = {16: 24, 8: 12}
_B64_PAD = {16: 2, 8: 1}
_URLSAFE = str.maketrans("-_", "+/")


def _b64(text: str, field: str) -> bytes:
    """Standard or URL-safe base64, padding optional (protobuf JSON accepts all four)."""
    if "-" in text or "_" in text:
        text = text.translate(_URLSAFE)
    pad = -len(text) % 4
    if pad:
        text += "=" * pad
    try:
        return binascii.a2b_base64(text, strict_mode=True)
    except (binascii.Error, ValueError):
        raise DecodeError(f"{field}: invalid base64") from None


def trace_ids_of_json(data: bytes) -> tuple[set[str], int] | None:
    """The trace ids (lowercase hex) and span count of one document, without decoding spans.

    For routing a record to the worker that owns its traces; None when the document is not
    plainly readable (the caller then lets every worker decode it, and report its error).
    """
    try:
        obj = _orjson_loads(data)
        rss = obj.get("resourceSpans")
        if rss is None:
            rss = obj.get("resource_spans")
        if rss is None and obj:
            return None  # another form (Tempo, Jaeger, console output): every worker reads it
        ids: set[str] = set()
        count = 0
        for rs in rss or ():
            for ss in _scope_spans(rs):
                for sp in ss.get("spans") or ():
                    v = sp.get("traceId")
                    if v is None:
                        v = sp.get("trace_id")
                    ids.add(_id(v, 16, "traceId").hex())
                    count += 1
    except (orjson.JSONDecodeError, DecodeError, TypeError, AttributeError, ValueError):
        return None
    return ids, count
