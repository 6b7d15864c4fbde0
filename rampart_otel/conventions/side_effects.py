"""Side effects from the general semantic conventions: HTTP, DB, messaging, RPC, process.

Each family is read under its current names first, then the legacy ones (semconv before
the 1.2x stabilisations): ``http.method`` / ``http.url`` / ``net.peer.*``, ``db.system`` /
``db.statement``, ``messaging.operation``, ``rpc.system``. A DB span that only prepares a
statement says so in its ``operation`` (``prepare``). A span may carry more than one
family (Elasticsearch queries are DB spans with HTTP attributes); each is reported.
A span with ``rampart.side_effect.kind`` declares its own kind, details from
``rampart.side_effect.*``.

A detail the span leaves out but shows otherwise is derived, and named as derived with the
attributes it was read from: a DB call's ``operation`` and ``collection`` from its SQL
statement (``sql_statement``), an HTTP request's ``host``, ``port`` and ``path`` from its
URL, and the URL from its scheme, host, port and target.

Whether a side effect belongs to the agent (not the model's transport) is normalize's call.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, NamedTuple
from urllib.parse import urlsplit

import ada_url

from rampart_otel import watch_contract as watch
from rampart_otel.conventions import sql_statement
from rampart_otel.conventions.helpers import as_str, as_str_list, load_json
from rampart_otel.conventions.interface import Convention, Gate, SideEffectDetails, SpanReport
from rampart_otel.conventions.labels import (
    DB_SEMCONV,
    HTTP_SEMCONV,
    MESSAGING_SEMCONV,
    PROCESS_SEMCONV,
    RAMPART_SIDE_EFFECT,
    RPC_SEMCONV,
    SEMCONV,
)
from rampart_otel.lazy_regex import LazyPattern
from rampart_otel.model import Ambiguous, Span, SpanKind
from rampart_otel.vocabulary import (
    DB_QUERY,
    HTTP_REQUEST,
    MESSAGE_PUBLISH,
    NETWORK_CONNECT,
    PROCESS_EXEC,
    RPC_CALL,
)

# The kinds, and the details each reports, are the policy language's words: see vocabulary.
HTTP = HTTP_REQUEST
DB = DB_QUERY
MESSAGE = MESSAGE_PUBLISH
RPC = RPC_CALL
PROCESS = PROCESS_EXEC

# A DB client span is one database call, "the logical database operation as observed by the
# caller" (semconv). Preparing a statement is a call that compiles it and runs nothing; the
# statement runs in the calls after it, each a span of its own. better-sqlite3's plugin sets
# no db.operation.name: only the span name tells ``prepare: INSERT`` from ``run: INSERT``.
PREPARE = "prepare"

CUSTOM_KIND = "rampart.side_effect.kind"
CUSTOM_PREFIX = "rampart.side_effect."
PUBLISH_OPERATIONS = frozenset({"send", "publish", "create"})
_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}


def read(span: Span) -> SpanReport | None:
    found = side_effects(span)
    return SpanReport(SEMCONV, effects=found) if found else None


Derived = dict[str, str]  # detail key → the recorded attribute(s) its value was read from

# Derived details read by interpreting recorded text (a SQL statement), where a reader could
# err, rather than split from a URL: a verdict that rests on one says so in its evidence.
INTERPRETED = frozenset({(DB, "operation"), (DB, "collection")})


def side_effects(span: Span) -> list[SideEffectDetails]:
    """Every side effect this one span records; cheap key probes before any work (each
    key probed first is in ``_PROBED``, the convention's gate: a span without one is not
    read at all)."""
    attrs = span.attributes
    found: list[SideEffectDetails] = []
    if CUSTOM_KIND in attrs:
        custom = custom_side_effect(span)
        if custom is not None:
            found.append(custom)
    if "db.system.name" in attrs or "db.system" in attrs:
        derived: Derived = {}
        found.append((DB, db_details(span, derived), DB_SEMCONV, derived))
    if _is_publish(span):
        found.append((MESSAGE, message_details(span), MESSAGING_SEMCONV, {}))
    if ("rpc.system.name" in attrs or "rpc.system" in attrs) and span.kind == SpanKind.CLIENT:
        found.append((RPC, rpc_details(span), RPC_SEMCONV, {}))
    if ("http.request.method" in attrs or "http.method" in attrs) and _http_client(span):
        derived = {}
        found.append((HTTP, http_details(span, derived), HTTP_SEMCONV, derived))
    if (
        "process.executable.name" in attrs
        or "process.executable.path" in attrs
        or "process.command_args" in attrs
        or "process.command_line" in attrs
    ):
        found.append((PROCESS, process_details(span), PROCESS_SEMCONV, {}))
    return found


# Where a model span says its request went: the server it names, else the base URL its
# client was given (LiteLLM writes it into the JSON of ``hidden_params``).
_MODEL_BASE_URL_KEYS = ("gen_ai.openai.api_base", "openai.api_base", "url.full", "http.url")
_LITELLM_HIDDEN = "hidden_params"
# Only a request (or the connection it was sent on: the watcher's, docs/watch.md) can be a
# model's transport: a query, a message, a process, a file never is.
TRANSPORT_KINDS = frozenset({HTTP, RPC, NETWORK_CONNECT})

Endpoint = tuple[str, int | None]  # host (lower case), port when known


# The paths of the model APIs' inference requests (OpenAI Chat Completions and Responses,
# Anthropic Messages, Gemini): how a request whose trace context was lost is told for a
# model call's own when its model span names no server.
MODEL_API_PATHS = ("/chat/completions", "/responses", "/messages", ":generatecontent")


def model_api_request(details: dict[str, Any]) -> bool:
    """An HTTP request to a model API's inference path (``http_details``)."""
    url = details.get("url")
    parts = _url_parts(url) if isinstance(url, str) else None
    path = (parts.path if parts is not None else "").lower().rstrip("/")
    return path.endswith(MODEL_API_PATHS) or ":streamgeneratecontent" in path


def model_endpoint(span: Span) -> Endpoint | None:
    """The server a model-inference span's request went to, when the span names it."""
    attrs = span.attributes
    host = as_str(_first(attrs, "server.address", "net.peer.name"))
    if host:
        return host.lower(), _int(_first(attrs, "server.port", "net.peer.port"))
    for key in _MODEL_BASE_URL_KEYS:
        found = _url_endpoint(as_str(attrs.get(key)))
        if found is not None:
            return found
    hidden = load_json(attrs.get(_LITELLM_HIDDEN))
    if isinstance(hidden, dict):
        return _url_endpoint(as_str(hidden.get("api_base")))
    return None


def request_endpoint(kind: str, details: dict[str, Any], span: Span) -> Endpoint | None:
    """The server an HTTP or RPC side effect went to, when its span names it."""
    if kind == HTTP and details.get("host"):
        return str(details["host"]).lower(), details.get("port")
    host = as_str(_first(span.attributes, "server.address", "net.peer.name"))
    if not host:
        return None
    return host.lower(), _int(_first(span.attributes, "server.port", "net.peer.port"))


def same_endpoint(a: Endpoint, b: Endpoint) -> bool:
    """One server: the same host, and the same port when both name one."""
    return a[0] == b[0] and (a[1] is None or b[1] is None or a[1] == b[1])


def _url_endpoint(url: str | None) -> Endpoint | None:
    parts = _url_parts(url)
    if parts is None or not parts.hostname:
        return None
    return parts.hostname.lower(), parts.port


def custom_side_effect(span: Span) -> SideEffectDetails | None:
    kind = as_str(span.attributes.get(CUSTOM_KIND))
    if not kind:
        return None
    start = len(CUSTOM_PREFIX)
    details = {
        key[start:]: value
        for key, value in span.attributes.items()
        if key.startswith(CUSTOM_PREFIX) and key != CUSTOM_KIND
    }
    derived: Derived = {}
    if kind == DB:
        _derive_from_statement(details, CUSTOM_PREFIX + "statement", derived)
    return kind, details, RAMPART_SIDE_EFFECT, derived


_URL_KEYS = ("url.full", "http.url")


def http_details(span: Span, derived: Derived) -> dict[str, Any]:
    """The request's details; ``derived`` gets those read from another of its attributes."""
    attrs = span.attributes
    method = _first(attrs, "http.request.method", "http.method")
    url_key = _first_key(attrs, *_URL_KEYS)
    url = as_str(attrs[url_key]) if url_key else None
    if url is None:
        url_key = None
        url = _compose_url(attrs)
        if url is not None:
            derived["url"] = ", ".join(_present(attrs, *_COMPOSED_FROM))
    parts = _url_parts(url)
    source = url_key or derived.get("url", "")
    host = as_str(_first(attrs, "server.address", "net.peer.name"))
    client = _client_host(url) if url_key else None  # the URL as a client resolves it
    if host is None:
        host = _host_only(as_str(attrs.get("http.host")))
        if host:
            derived["host"] = "http.host"
        elif client is not None:
            host, derived["host"] = client.hostname.strip("[]"), source
        elif parts is not None and parts.hostname:
            host, derived["host"] = parts.hostname, source
        else:
            host = None
    port = _int(_first(attrs, "server.port", "net.peer.port"))
    if port is None and client is not None:
        port = client.port
        if port is not None:
            derived["port"] = source
    elif port is None and parts is not None:
        port = parts.port
        if port is not None:
            derived["port"] = source
    path = as_str(attrs.get("url.path"))
    if path is None:
        path = _url_path(url_key, parts, as_str(attrs.get("http.target")))
        if path is not None:
            derived["path"] = url_key or "http.target"
    details = {
        "method": as_str(method),
        "url": url,
        "host": _readings(host.lower() if host else host, client, parts),
        "port": port,
        "path": path,
        "status_code": _int(_first(attrs, "http.response.status_code", "http.status_code")),
    }
    body = _recorded_body(attrs)
    if body is not None:
        details["body"] = body
        if attrs.get(watch.REQUEST_BODY_TRUNCATED) is True:
            derived["body"] = BODY_CUT
    return details


def _recorded_body(attrs: dict[str, Any]) -> str | None:
    """The request body, where the watcher recorded it (``rampart.watch.request_body``; a
    request it saw send no body is recorded as empty); None: no one recorded it."""
    body = as_str(attrs.get(watch.REQUEST_BODY))
    if body is not None:
        return body
    size = attrs.get(watch.REQUEST_BODY_SIZE)
    return "" if size == 0 and not isinstance(size, bool) else None


class _ClientHost(NamedTuple):
    """Where a client sends a request for a URL (``_client_host``)."""

    hostname: str  # never empty
    port: int | None  # the URL's, else its scheme's default


class _UrlParts(NamedTuple):
    """A URL as Python's ``urlsplit`` reads it (``_url_parts``)."""

    hostname: str | None
    port: int | None  # the URL's, else its scheme's default (``_url_port``)
    path: str
    netloc: str


# A URL is read once however many spans name it (a run's requests to its model's API, to
# the same few services): its readings are kept for so many URLs, up to so long a text.
_URLS_KEPT, _URL_KEPT_CHARS = 4096, 2048


def _client_host(url: str | None) -> _ClientHost | None:
    """The URL as clients resolve it: the WHATWG URL Standard (browsers, Node's fetch; for
    a URL like ``http://127.0.0.2:37987\\@localhost/`` urllib3 and requests agree: host
    127.0.0.2), by Ada; None when it is no valid URL there, or names no host."""
    if not url:
        return None
    return _kept_client_host(url) if len(url) <= _URL_KEPT_CHARS else _read_client_host(url)


def _read_client_host(url: str) -> _ClientHost | None:
    try:
        client = ada_url.URL(url)
    except ValueError:
        return None
    if not client.hostname:
        return None
    port = int(client.port) if client.port else _DEFAULT_PORTS.get(client.protocol[:-1])
    return _ClientHost(client.hostname, port)


_kept_client_host = lru_cache(maxsize=_URLS_KEPT)(_read_client_host)


def _url_parts(url: str | None) -> _UrlParts | None:
    """``urlsplit``'s reading of ``url``; None when it is none or no URL there."""
    if not url:
        return None
    return _kept_url_parts(url) if len(url) <= _URL_KEPT_CHARS else _read_url_parts(url)


def _read_url_parts(url: str) -> _UrlParts | None:
    parts = _split(url)
    if parts is None:
        return None
    return _UrlParts(parts.hostname, _url_port(parts), parts.path, parts.netloc)


_kept_url_parts = lru_cache(maxsize=_URLS_KEPT)(_read_url_parts)


def _readings(host: str | None, client: _ClientHost | None, parts: _UrlParts | None) -> str | None:
    """``host``, ambiguous (``model.Ambiguous``) when the span's URL names another host
    to another parser: the WHATWG reading, Python's ``urlsplit``'s, the span's own."""
    if host is None:
        return None
    readings = [host]
    if client is not None:
        readings.append(client.hostname.strip("[]").lower())
    if parts is not None and parts.hostname:
        readings.append(parts.hostname.lower())
    distinct = tuple(dict.fromkeys(readings))
    return host if len(distinct) == 1 else Ambiguous(host, distinct)


def _url_path(url_key: str | None, parts: _UrlParts | None, target: str | None) -> str | None:
    """The path of a recorded URL ('/' for none), else of the recorded request target."""
    if url_key is not None:
        return (parts.path or "/") if parts is not None and parts.netloc else None
    if target:
        return target.partition("?")[0].partition("#")[0] or None
    return None


def db_details(span: Span, derived: Derived) -> dict[str, Any]:
    """The call's details; ``derived`` gets those read from another of its attributes."""
    attrs = span.attributes
    operation = as_str(_first(attrs, "db.operation.name", "db.operation"))
    if operation is None and _names_preparation(span.name):
        operation = PREPARE
        derived["operation"] = "span name"
    details = {
        "system": as_str(_first(attrs, "db.system.name", "db.system")),
        "statement": as_str(_first(attrs, "db.query.text", "db.statement")),
        "operation": operation,
        "collection": as_str(
            _first(attrs, "db.collection.name", "db.sql.table", "db.mongodb.collection")
        ),
        "namespace": as_str(_first(attrs, "db.namespace", "db.name")),
    }
    statement_key = _first_key(attrs, "db.query.text", "db.statement")
    if statement_key is not None:
        _derive_from_statement(details, statement_key, derived)
    return details


def _derive_from_statement(details: dict[str, Any], source: str, derived: Derived) -> None:
    """``operation`` and ``collection`` left out but plain in a SQL statement, from it."""
    statement, system = details.get("statement"), details.get("system")
    if details.get("operation") is not None and details.get("collection") is not None:
        return
    if not isinstance(statement, str) or not isinstance(system, str):
        return
    if system.strip().lower() not in sql_statement.SQL_SYSTEMS:
        return
    summary = sql_statement.summarize(statement)
    for key, value in (("operation", summary.operation), ("collection", summary.table)):
        if details.get(key) is None and value is not None:
            details[key] = value
            derived[key] = source


def is_preparation(details: dict[str, Any]) -> bool:
    """A DB call that compiled a statement without running it (``db_details``)."""
    operation = details.get("operation")
    return isinstance(operation, str) and operation.strip().lower() == PREPARE


def _names_preparation(name: str) -> bool:
    """``prepare: INSERT`` (the better-sqlite3 plugin's name for ``Database.prepare``)."""
    head = name.partition(":")[0] if ":" in name else name.partition(" ")[0]
    return head.strip().lower() == PREPARE


def message_details(span: Span) -> dict[str, Any]:
    attrs = span.attributes
    return {
        "system": as_str(attrs.get("messaging.system")),
        "destination": as_str(_first(attrs, "messaging.destination.name", "messaging.destination")),
        "operation": _messaging_operation(span) or "publish",
    }


def rpc_details(span: Span) -> dict[str, Any]:
    attrs = span.attributes
    service = as_str(attrs.get("rpc.service"))
    method = as_str(attrs.get("rpc.method"))
    if service is None and method and "/" in method:  # newer semconv: fully-qualified method
        service, _, method = method.rpartition("/")
    return {
        "system": as_str(_first(attrs, "rpc.system.name", "rpc.system")),
        "service": service,
        "method": method,
    }


def process_details(span: Span) -> dict[str, Any]:
    attrs = span.attributes
    args = as_str_list(attrs.get("process.command_args"))
    if not args and isinstance(attrs.get("process.command_line"), str):
        args = attrs["process.command_line"].split()
    executable = as_str(_first(attrs, "process.executable.name", "process.executable.path"))
    if executable is None and args:
        executable = args[0]
    return {
        "executable": executable,
        "args": args,
        "exit_code": _int(attrs.get("process.exit.code")),
    }


def _http_client(span: Span) -> bool:
    """A request this process sent: a CLIENT span, or one of another non-server kind that
    names the URL it requested (an instrumentation that picked the wrong kind still shows
    the request; ignoring it could hide one among observed ones)."""
    if span.kind == SpanKind.CLIENT:
        return True
    if span.kind == SpanKind.SERVER:
        return False
    return "url.full" in span.attributes or "http.url" in span.attributes


def _is_publish(span: Span) -> bool:
    attrs = span.attributes
    if (
        "messaging.system" not in attrs
        and "messaging.operation.type" not in attrs
        and "messaging.operation" not in attrs
    ):
        return False
    operation = _messaging_operation(span)
    if operation is None:
        return span.kind == SpanKind.PRODUCER  # old semconv: publish was implied by the span kind
    return operation in PUBLISH_OPERATIONS


def _messaging_operation(span: Span) -> str | None:
    value = as_str(_first(span.attributes, "messaging.operation.type", "messaging.operation"))
    return value.lower() if value else None


def _first_key(attrs: dict[str, Any], *keys: str) -> str | None:
    """The first of ``keys`` the span holds a value for."""
    for key in keys:
        if attrs.get(key) is not None:
            return key
    return None


def _present(attrs: dict[str, Any], *keys: str) -> list[str]:
    return [key for key in keys if attrs.get(key) is not None]


def _first(attrs: dict[str, Any], *keys: str) -> Any:
    for key in keys:
        value = attrs.get(key)
        if value is not None:
            return value
    return None


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, (str, float)):
        try:
            return int(value)
        except ValueError:
            return None
    return None


def _split(url: str | None) -> Any:
    if not url:
        return None
    try:
        return urlsplit(url)
    except ValueError:
        return None


def _url_port(parts: Any) -> int | None:
    try:
        port = parts.port
    except ValueError:
        return None
    if port is not None:
        return port
    return _DEFAULT_PORTS.get((parts.scheme or "").lower())


def _host_only(value: str | None) -> str | None:
    if not value:
        return None
    if value.startswith("["):  # [v6]:port
        return value[1:].partition("]")[0]
    return value.rpartition(":")[0] if value.count(":") == 1 else value


_COMPOSED_FROM = (
    "url.scheme",
    "http.scheme",
    "server.address",
    "http.host",
    "net.peer.name",
    "server.port",
    "net.peer.port",
    "url.path",
    "url.query",
    "http.target",
)


def _compose_url(attrs: dict[str, Any]) -> str | None:
    """Legacy spans without ``http.url``: scheme + host + target (``url.path`` and
    ``url.query``, or ``http.target``), when there are a host and a target. Without the
    target no URL is made: host and port alone would read as a URL with no path and no
    query, and a check of the URL would find nothing where the query was lost."""
    scheme = as_str(_first(attrs, "url.scheme", "http.scheme")) or "http"
    host = as_str(_first(attrs, "server.address", "http.host", "net.peer.name"))
    path = as_str(attrs.get("url.path"))
    target: str | None
    if path is not None:
        query = as_str(attrs.get("url.query"))
        target = path if query is None else f"{path}?{query}"
    else:
        target = as_str(attrs.get("http.target"))
    if not host or target is None:
        return None
    port = _int(_first(attrs, "server.port", "net.peer.port"))
    netloc = (
        host
        if port is None or ":" in host or _DEFAULT_PORTS.get(scheme) == port
        else (f"{host}:{port}")
    )
    return f"{scheme}://{netloc}{target}"


# Every key ``side_effects`` probes first: a span holding none of them records none.
_PROBED = (
    CUSTOM_KIND,
    "db.system.name",
    "db.system",
    "messaging.system",
    "messaging.operation.type",
    "messaging.operation",
    "rpc.system.name",
    "rpc.system",
    "http.request.method",
    "http.method",
    "process.executable.name",
    "process.executable.path",
    "process.command_args",
    "process.command_line",
)

CONVENTION = Convention(SEMCONV, read, read_gate=Gate(keys=_PROBED))


def url_host(url: str) -> str | None:
    """The host a client sends a request for ``url`` to (lower case), or None when the text
    is no URL with a host."""
    found = _url_endpoint(url)
    return found[0] if found is not None else None


# The details of each kind a value leaving the process could be in: where ``flows`` looks,
# and what it cannot rule out when a span did not record it (HTTP instrumentations record
# no request body, a DB span no bound parameters, a messaging span no payload).
PAYLOAD_FIELDS: dict[str, tuple[str, ...]] = {
    HTTP: ("url", "body"),
    DB: ("statement", "parameters"),
    MESSAGE: ("destination", "payload"),
    RPC: ("service", "method", "payload"),
    PROCESS: ("executable", "args"),
    "mcp_request": ("target", "params"),
}
# A statement with bound parameters: its values are not in the text (``?``, ``%s``,
# ``%(name)s``, ``$1``, ``:name``, ``@name``).
_PLACEHOLDER = LazyPattern(r"\?|%s|%\(\w+\)s|\$\d+|(?<![:\w]):[A-Za-z_]\w*|(?<!\w)@[A-Za-z_]\w*")


# How a body recorded only in part says so (``SideEffect.derived``).
BODY_CUT = f"{watch.REQUEST_BODY}, cut at the watcher's limit"


def unrecorded_payload(
    kind: str, details: dict[str, Any], derived: dict[str, str] | None = None
) -> tuple[str, ...]:
    """The fields of a side effect's payload its span did not record: where a value may
    have left that no check can read. A statement without placeholders binds nothing, and
    a process recorded by its arguments has nothing else to send (its input is not a field
    the conventions record, for any client)."""
    missing = [key for key in PAYLOAD_FIELDS.get(kind, ()) if details.get(key) is None]
    if kind == HTTP and derived and derived.get("body") == BODY_CUT:
        missing.append("body past the part recorded")
    if kind == DB and "parameters" in missing:
        statement = details.get("statement")
        if isinstance(statement, str) and not _PLACEHOLDER.search(statement):
            missing.remove("parameters")
    if kind == PROCESS and "executable" in missing and details.get("args"):
        missing.remove("executable")
    return tuple(missing)
