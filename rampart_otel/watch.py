"""See every place of harm from inside the agent: each connection, HTTP request, process
and file write the process makes, whatever library made it, as a span where it happened.

    import rampart_otel

    rampart_otel.watch()                    # or: rampart-otel watch -- python agent.py

Python raises an audit event (PEP 578) for every ``socket.connect``, ``http.client`` send,
``subprocess.Popen``, ``os.system``, ``os.exec*``, ``os.fork``, ``open`` for writing, file
removal and rename, and ``sqlite3.connect``, whichever library calls them. One audit hook
turns each into an OpenTelemetry span under the span current in that thread or task, so it
lands inside the tool call that caused it, and a span processor attests on every span which
kinds the watcher sees in this process and what it cannot see (docs/watch.md, "Contract").

This module is imported by agent processes (and loaded by ``rampart-otel watch`` before the
agent's first line): it needs only the standard library, and uses the OpenTelemetry API and
SDK of the agent's own environment, imported when first needed.

A hook cannot be removed once added (``sys.addaudithook``): the watcher stays on until the
process exits. ``watch(kinds=...)`` chooses what it records; a later call may widen that,
never narrow it (spans already attested would then claim what is no longer watched).
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import os
import re
import stat
import sys
import threading
import types
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rampart_otel.lazy_regex import LazyPattern

# The contract, re-exported (rampart_otel.watch.SCOPE ...): its readers import it alone.
from rampart_otel.watch_contract import (  # noqa: F401
    ATTESTATION,
    BLIND,
    CHILD_PROCESS_IO,
    CONNECT_EVENTS,
    EVENT,
    EVENTS_UNDER,
    FILE_EVENTS,
    FILE_WRITE,
    HTTP_CLIENT,
    KIND_EVENTS,
    KINDS,
    NETWORK,
    OPEN_CONNECTIONS,
    OPEN_MODE,
    PARENT_REQUEST,
    PLATFORM_PROBE,
    POOLED_CONNECTIONS,
    PROCESS,
    PROCESS_EVENTS,
    REQUEST_BODY,
    REQUEST_BODY_SIZE,
    REQUEST_BODY_TRUNCATED,
    RESOLVED_NAMES,
    SCOPE,
    SOURCE_PATH,
    SQLITE_PATH,
)

# Native libraries that open their own sockets, write their own files or start processes in
# C, where no audit event is raised: (module whose presence shows it, kind, blind code).
NATIVE: tuple[tuple[str, str, str], ...] = (
    ("grpc", NETWORK, "native_sockets:grpc"),
    ("psycopg", NETWORK, "native_sockets:psycopg"),
    ("psycopg2", NETWORK, "native_sockets:psycopg2"),
    ("MySQLdb", NETWORK, "native_sockets:mysqlclient"),
    ("pymssql", NETWORK, "native_sockets:pymssql"),
    ("confluent_kafka", NETWORK, "native_sockets:confluent_kafka"),
    ("zmq", NETWORK, "native_sockets:zmq"),
    ("pycurl", NETWORK, "native_sockets:pycurl"),
    ("curl_cffi", NETWORK, "native_sockets:curl_cffi"),
    ("uvloop", NETWORK, "native_sockets:uvloop"),
    ("duckdb", NETWORK, "native_sockets:duckdb"),
    ("pyarrow._flight", NETWORK, "native_sockets:pyarrow"),
    ("duckdb", FILE_WRITE, "native_files:duckdb"),
    ("pyarrow", FILE_WRITE, "native_files:pyarrow"),
    ("multiprocessing.popen_spawn_posix", PROCESS, "unseen_processes:multiprocessing"),
    ("multiprocessing.popen_forkserver", PROCESS, "unseen_processes:multiprocessing"),
)

# A native library loaded while a span is open (a tool that imports its database client when
# it runs): the spans started before it carry no blind code for it, so the load is a watched
# span of its own under the current span, naming the code (``IMPORT``; coverage then takes
# nothing the watcher saw in that call as attested).
IMPORT = "import"
NATIVE_MODULE = "rampart.watch.native_module"

# SQLite writes its files in C: the database named at ``sqlite3.connect`` (recorded), and any a
# statement names (ATTACH, VACUUM INTO), which only a db_query span shows. Blind from the first
# connect seen, or from the start when sqlite3 was loaded before the watcher.
SQLITE_FILES = "native_files:sqlite3"
# Commands the standard library runs to describe the platform, with arguments it fixes
# (``platform.processor()``'s ``uname -p``, ``ctypes.util.find_library``'s ``ldconfig -p`` or
# compiler): recorded, not as a process the agent ran (``rampart.watch.platform_probe``).
PLATFORM_PROBES = {
    "platform": frozenset({"uname"}),
    "ctypes.util": frozenset({"ldconfig", "gcc", "cc", "ld", "objdump"}),
}
PROBE_ARGS = "rampart.watch.probe_args"
NOT_FILES = frozenset({"/dev/null"})  # what is written there is gone: no file is changed

BODY_LIMIT = 16 * 1024  # bytes of a request body kept as text
HEAD_LIMIT = 64 * 1024  # bytes of a send read for a request line and its headers
OPEN_REQUESTS_LIMIT = 256  # HTTP requests whose body is still being sent
TRACKED_SOCKETS_LIMIT = 1024  # connected sockets followed for pooled_connections
RESOLVED_LIMIT = 4096  # addresses remembered with the names resolved to them
NAMES_PER_ADDRESS = 8  # names kept per address (a shared address: many)
OPEN_CONNECTIONS_SHOWN = 16

_WRITE_FLAGS = (
    os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC | getattr(os, "O_EXCL", 0)
)
_FLAG_NAMES = tuple(
    (name, getattr(os, name))
    for name in ("O_WRONLY", "O_RDWR", "O_APPEND", "O_CREAT", "O_TRUNC", "O_EXCL")
    if hasattr(os, name)
)
_REQUEST_LINE = LazyPattern(rb"([A-Z]{3,10}) (\S+) HTTP/1\.[01]\Z")
_DEFAULT_PORTS = {"http": 80, "https": 443}


class WatchError(ValueError):
    """``watch()`` was asked for something it cannot do (an unknown kind, a narrowing)."""


@dataclass
class _Request:
    """One HTTP request whose span stays open while its body is sent."""

    span: Any
    parent_id: int | None
    expected: int | None  # Content-Length, or None when not given
    chunked: bool
    body: bytearray = field(default_factory=bytearray)
    size: int = 0
    truncated: bool = False
    tail: bytes = b""


@dataclass(frozen=True)
class _Socket:
    """A connected socket the watcher saw connect, followed while it stays open."""

    inode: int
    endpoint: str  # host:port, or the unix path
    http_client: bool  # http.client sent on it: each of its sends is seen


class Watcher:
    """The process's one watcher: its kinds, its hook's state, its attestation."""

    def __init__(
        self, kinds: frozenset[str], body_limit: int = BODY_LIMIT, tracer_provider: Any = None
    ) -> None:
        """``tracer_provider``: where its spans go (default: the global one, when it is set)."""
        self.kinds = kinds
        self.body_limit = body_limit
        self.errors = 0  # events the hook could not record (never raised into the agent)
        self.recorded = 0
        self.events: frozenset[str] = _events_of(kinds)
        self._local = threading.local()
        self._lock = threading.Lock()
        self._provider = tracer_provider
        self._trace: Any = None
        self._context: Any = None
        self._suppress: Any = None
        self._tracer: Any = None
        self._client_kind: Any = None
        self._internal_kind: Any = None
        self._requests: dict[int, tuple[Any, _Request]] = {}  # id(connection) → request
        self._sockets: dict[int, _Socket] = {}  # fd → the socket connected on it
        self._sockets_overflow = False
        self._sent_to: collections.OrderedDict[tuple[int, int, str], None] = (
            collections.OrderedDict()
        )
        self._resolved: collections.OrderedDict[str, set[str]] = collections.OrderedDict()
        self._native_seen = -1
        self._native_codes: tuple[str, ...] = ()
        self._static: dict[str, Any] | None = None
        self.sqlite_used = "_sqlite3" in sys.modules  # a connection may be open, unseen

    # --- the hook -----------------------------------------------------------------------------

    def hook(self, event: str, args: tuple[Any, ...]) -> None:
        """The audit hook: a set lookup for every other event; never raises, never blocks."""
        if event not in self.events:
            return
        if event == IMPORT:  # (module, filename, ...): every module loaded, few of them native
            if not args or not isinstance(args[0], str) or args[0] not in _NATIVE_MODULES:
                return
        elif event == "open":  # (path, mode, flags): most events of all, imports included
            flags = args[2] if len(args) > 2 else None
            if not (isinstance(flags, int) and flags & _WRITE_FLAGS):
                return  # a read
        local = self._local
        if getattr(local, "busy", False):
            return  # an event raised while the watcher itself records one
        local.busy = True
        try:
            self._record(event, args)
        except Exception:
            self.errors += 1
        finally:
            local.busy = False

    def _record(self, event: str, args: tuple[Any, ...]) -> None:
        if not self._ready() or self._context.get_value(self._suppress):
            return  # no tracing in this process yet, or the SDK's own export
        handler = _HANDLERS[event]
        handler(self, event, args)

    def _ready(self) -> bool:
        if self._trace is not None:
            return True
        trace = sys.modules.get("opentelemetry.trace")
        context = sys.modules.get("opentelemetry.context")
        if trace is None or context is None:
            return False  # nothing traces in this process: there is no span to record under
        self._context = context
        self._suppress = getattr(context, "_SUPPRESS_INSTRUMENTATION_KEY", None)
        self._client_kind = trace.SpanKind.CLIENT
        self._internal_kind = trace.SpanKind.INTERNAL
        provider = self._provider
        self._tracer = provider.get_tracer(SCOPE) if provider else trace.get_tracer(SCOPE)
        self._trace = trace
        return True

    def _start(self, name: str, kind: Any, attributes: dict[str, Any]) -> Any:
        """A span of this event under the current span (a root span when there is none),
        with the attestation of what it is made by (no pooled connection: it is a leaf)."""
        attributes.update(self.static_attestation())
        parent = self._trace.get_current_span()
        span = self._tracer.start_span(name, kind=kind, attributes=attributes)
        self.recorded += 1
        if parent.is_recording():
            with self._lock:  # counted under the span it happened in, for lost-span checks
                held = getattr(parent, "attributes", None) or {}
                count = held.get(EVENTS_UNDER, 0)
                parent.set_attribute(EVENTS_UNDER, (count if isinstance(count, int) else 0) + 1)
        return span

    def _emit(self, name: str, kind: Any, attributes: dict[str, Any]) -> None:
        self._start(name, kind, attributes).end()

    # --- network ------------------------------------------------------------------------------

    def _connect(self, event: str, args: tuple[Any, ...]) -> None:
        sock, address = args[0], args[1]
        if address is None:
            return  # sendmsg on a connected socket: its connect was seen
        described = _describe_address(sock, address)
        if described is None:
            return
        transport, peer, port = described
        if event != "socket.connect" and not self._first_send_to(sock, peer, port):
            return
        host = self._name_of(peer) if port is not None else peer
        attributes: dict[str, Any] = {
            EVENT: event,
            "server.address": host,
            "network.peer.address": peer,
            "network.transport": transport,
        }
        if port is not None:
            attributes["server.port"] = port
            attributes["network.peer.port"] = port
        names = self._resolved.get(peer)
        if names and len(names) > 1:
            attributes[RESOLVED_NAMES] = sorted(names)
        shown = peer if port is None else f"{_bracketed(host)}:{port}"
        verb = "connect" if event == "socket.connect" else "send to"
        self._emit(f"{verb} {shown}", self._client_kind, attributes)
        if event == "socket.connect":  # unix sockets too: a database's, a daemon's
            self._follow(sock, shown)

    def _first_send_to(self, sock: Any, peer: str, port: int | None) -> bool:
        """A datagram sent without connect: recorded once per socket and destination."""
        key = (_fileno(sock), id(sock), f"{peer}:{port}")
        with self._lock:
            if key in self._sent_to:
                return False
            self._sent_to[key] = None
            if len(self._sent_to) > TRACKED_SOCKETS_LIMIT:
                self._sent_to.popitem(last=False)
        return True

    def _name_of(self, address: str) -> str:
        """The host name this thread last resolved to ``address``, else the one name any
        thread resolved to it, else the address itself (never a guess among several)."""
        last = getattr(self._local, "resolved", None)
        if last is not None and address in last[1]:
            return str(last[0])
        names = self._resolved.get(address)
        if names is not None and len(names) == 1:
            return next(iter(names))
        return address

    def note_resolution(self, host: Any, results: Any) -> None:
        """What ``socket.getaddrinfo`` answered: the names each address was resolved from."""
        if isinstance(host, bytes):
            host = host.decode("idna", "replace")
        if not isinstance(host, str) or not isinstance(results, list):
            return
        addresses = {
            str(item[4][0])
            for item in results
            if isinstance(item, tuple) and len(item) == 5 and isinstance(item[4], tuple)
        }
        name = host.lower().rstrip(".")
        self._local.resolved = (name, frozenset(addresses))
        if _is_ip(name) or not name:
            return
        with self._lock:
            for address in addresses:
                names = self._resolved.pop(address, set())
                if len(names) < NAMES_PER_ADDRESS:  # more: ambiguous all the same
                    names.add(name)
                self._resolved[address] = names
            while len(self._resolved) > RESOLVED_LIMIT:
                self._resolved.popitem(last=False)

    def _follow(self, sock: Any, endpoint: str) -> None:
        fd = _fileno(sock)
        if fd < 0:
            return
        try:
            inode = os.fstat(fd).st_ino
        except OSError:
            return
        with self._lock:
            self._sockets[fd] = _Socket(inode, endpoint, http_client=False)
            if len(self._sockets) > TRACKED_SOCKETS_LIMIT:
                self._prune_sockets()
                if len(self._sockets) > TRACKED_SOCKETS_LIMIT:
                    self._sockets_overflow = True  # pooled_connections from now on
                    self._sockets.pop(next(iter(self._sockets)))

    def _prune_sockets(self) -> list[_Socket]:
        """Drop the sockets closed since; the open ones (call with the lock held)."""
        alive = []
        for fd, known in list(self._sockets.items()):
            try:
                found = os.fstat(fd)
            except OSError:
                found = None
            if found is not None and stat.S_ISSOCK(found.st_mode) and found.st_ino == known.inode:
                alive.append(known)
            else:
                del self._sockets[fd]
        return alive

    def open_connections(self) -> list[str] | None:
        """Connections opened earlier and still open whose sends the watcher does not see
        (any client but http.client's): a call may send on one unseen. None: too many to
        follow, so any may be."""
        with self._lock:
            if self._sockets_overflow:
                return None
            if not self._sockets:
                return []
            return sorted({s.endpoint for s in self._prune_sockets() if not s.http_client})

    def _mark_http_socket(self, connection: Any) -> None:
        fd = _fileno(getattr(connection, "sock", None))
        with self._lock:
            known = self._sockets.get(fd)
            if known is not None and not known.http_client:
                self._sockets[fd] = _Socket(known.inode, known.endpoint, True)

    # --- http.client --------------------------------------------------------------------------

    def _http_connect(self, event: str, args: tuple[Any, ...]) -> None:
        self._end_request(args[0])  # a new connection: the last request on it is over

    def _http_send(self, event: str, args: tuple[Any, ...]) -> None:
        connection, data = args[0], args[1]
        self._mark_http_socket(connection)
        if not isinstance(data, (bytes, bytearray, memoryview)):
            self._unseen_body(connection)  # an iterable body: its parts are sent unaudited
            return
        view = memoryview(data).cast("B")  # never copied whole: a body may be large
        first = bytes(view[:HEAD_LIMIT])
        line_end = first.find(b"\r\n")
        request_line = _REQUEST_LINE.match(first[:line_end]) if line_end > 0 else None
        if request_line is None:
            self._body(connection, view)
            return
        self._end_request(connection)
        head_end = first.find(b"\r\n\r\n")
        head = first if head_end < 0 else first[:head_end]
        rest = view[head_end + 4 :] if head_end >= 0 else view[len(first) :]
        headers = _headers(head.split(b"\r\n")[1:])
        method = request_line.group(1).decode("ascii")
        target = request_line.group(2).decode("latin-1")
        attributes: dict[str, Any] = {EVENT: event}
        attributes.update(_server(connection, headers))
        url = _url(connection, target, attributes)
        if _http_client_span(self._trace.get_current_span(), self._client_kind):
            # An instrumented client's span of this same request is current (requests',
            # urllib3's, urllib's): it records the request; this span adds what it sent.
            attributes[PARENT_REQUEST] = True
        else:
            attributes["http.request.method"] = method
            attributes["url.full"] = url
        span = self._start(method, self._client_kind, attributes)
        length = headers.get("content-length", "")
        expected = int(length) if length.isdigit() else None
        chunked = "chunked" in headers.get("transfer-encoding", "").lower()
        request = _Request(span, _span_id(self._trace.get_current_span()), expected, chunked)
        if expected in (None, 0) and not chunked:
            self._finish(request)  # nothing more to send
            return
        oldest = None
        with self._lock:
            self._requests[id(connection)] = (connection, request)
            if len(self._requests) > OPEN_REQUESTS_LIMIT:
                oldest = self._requests.pop(next(iter(self._requests)))[1]
        if oldest is not None:
            self._finish(oldest)
        if len(rest):
            self._body(connection, rest)

    def _body(self, connection: Any, data: memoryview) -> None:
        with self._lock:
            held = self._requests.get(id(connection))
            if held is None or held[0] is not connection:
                return  # no request of ours is being sent on it
            request = held[1]
            request.size += len(data)
            room = self.body_limit - len(request.body)
            if room > 0:
                request.body += data[:room]
            if len(data) > max(room, 0):
                request.truncated = True
            request.tail = (request.tail + bytes(data[-7:]))[-7:]
            done = (request.chunked and request.tail.endswith(b"0\r\n\r\n")) or (
                request.expected is not None and request.size >= request.expected
            )
            if done:
                del self._requests[id(connection)]
        if done:
            self._finish(request)

    def _unseen_body(self, connection: Any) -> None:
        with self._lock:
            held = self._requests.get(id(connection))
            if held is not None and held[0] is connection:
                held[1].truncated = True

    def _end_request(self, connection: Any) -> None:
        with self._lock:
            held = self._requests.get(id(connection))
            if held is None or held[0] is not connection:
                return
            del self._requests[id(connection)]
        self._finish(held[1])

    def _finish(self, request: _Request) -> None:
        span = request.span
        if self.body_limit and (request.size or request.expected or request.chunked):
            body = bytes(request.body)
            if request.chunked:
                body = _dechunked(body)
            span.set_attribute(REQUEST_BODY, body.decode("utf-8", "replace"))
        if request.size or request.expected or request.chunked:
            span.set_attribute(REQUEST_BODY_SIZE, request.size)
        if request.truncated:
            span.set_attribute(REQUEST_BODY_TRUNCATED, True)
        span.end()

    def end_requests(self, parent_id: int | None = None) -> None:
        """End the request spans still open: those under ``parent_id`` as it ends (a span
        outlives no parent), or every one (at exit)."""
        with self._lock:
            if not self._requests:
                return
            ending = [
                key
                for key, (_, request) in self._requests.items()
                if parent_id is None or request.parent_id == parent_id
            ]
            requests = [self._requests.pop(key)[1] for key in ending]
        for request in requests:
            try:
                self._finish(request)
            except Exception:
                self.errors += 1

    # --- processes ----------------------------------------------------------------------------

    def _process(self, event: str, args: tuple[Any, ...]) -> None:
        attributes: dict[str, Any] = {EVENT: event}
        if event == "subprocess.Popen":
            executable, argv = args[0], args[1]
        elif event == "os.system":
            command = _text(args[0])
            attributes["process.command_line"] = command
            first = command.split(maxsplit=1)[0] if command.strip() else "sh"
            self._emit(f"exec {os.path.basename(first)}", self._internal_kind, attributes)
            return
        elif event in ("os.exec", "os.posix_spawn"):
            executable, argv = args[0], args[1]
        elif event == "os.spawn":
            executable, argv = args[1], args[2]
        else:  # os.fork, os.forkpty: the same program, a new process
            attributes["process.executable.name"] = os.path.basename(sys.executable)
            attributes["process.executable.path"] = sys.executable
            self._emit("fork", self._internal_kind, attributes)
            return
        args_list = _text_list(argv)
        path = _text(executable) if executable is not None else (args_list or [""])[0]
        name = os.path.basename(path) or path
        if _platform_probe(name):
            attributes[PLATFORM_PROBE] = True
            attributes[PROBE_ARGS] = args_list
            self._emit(f"exec {name}", self._internal_kind, attributes)
            return
        attributes["process.executable.name"] = name
        if os.path.isabs(path):
            attributes["process.executable.path"] = path
        if args_list:
            attributes["process.command_args"] = args_list
        self._emit(f"exec {name}", self._internal_kind, attributes)

    # --- files --------------------------------------------------------------------------------

    def _file(self, event: str, args: tuple[Any, ...]) -> None:
        source: Any = None
        if event == "open":
            target, mode, flags = args[0], args[1], args[2]
            if not isinstance(flags, int) or not flags & _WRITE_FLAGS:
                return  # a read
            shown_mode = mode if isinstance(mode, str) else _flag_names(flags)
            operation = "write"
        elif event in ("os.rename", "os.symlink", "os.link"):
            source, target = args[0], args[1]  # the path made is the second
            operation = shown_mode = event.rpartition(".")[2]
        else:
            target = args[0]
            operation = shown_mode = event.rpartition(".")[2]
        path = _path(target)  # None for an fd: the write was its open
        if path is None or path in NOT_FILES or _is_bytecode(path):
            return
        attributes: dict[str, Any] = {EVENT: event, "file.path": path, OPEN_MODE: shown_mode}
        source_path = _path(source)
        if source_path is not None:
            attributes[SOURCE_PATH] = source_path
        name = os.path.basename(path.rstrip("/")) or path
        self._emit(f"{operation} {name}", self._internal_kind, attributes)

    def _sqlite(self, event: str, args: tuple[Any, ...]) -> None:
        database = args[0] if args else None
        if not isinstance(database, (str, bytes, os.PathLike)):
            return
        text = _text(database)
        path = text if text == ":memory:" or text.startswith("file:") else _path(text)
        if path is None:
            return
        name = os.path.basename(path) or path
        attributes = {EVENT: event, SQLITE_PATH: path}
        if not self.sqlite_used:
            self.sqlite_used = True
            self._native_seen = -1
        self._emit(f"sqlite3.connect {name}", self._internal_kind, attributes)

    def _native_import(self, event: str, args: tuple[Any, ...]) -> None:
        module = args[0]
        codes = [code for kind, code in _NATIVE_MODULES[module] if kind in self.kinds]
        if not codes or not self._trace.get_current_span().is_recording():
            return  # not a kind watched, or no span open: spans started later see it loaded
        if module == "_sqlite3":
            self.sqlite_used = True
        self._native_seen = -1  # the static blind codes are read again for later spans
        attributes = {EVENT: event, NATIVE_MODULE: module}
        span = self._start(f"load {module}", self._internal_kind, attributes)
        blind = [str(code) for code in span.attributes.get(BLIND) or ()]
        span.set_attribute(BLIND, [*blind, *(code for code in codes if code not in blind)])
        span.end()

    # --- attestation --------------------------------------------------------------------------

    def attestation(self) -> dict[str, Any]:
        """The attributes every span started now carries (``rampart.watch*``)."""
        kinds = [kind for kind in KINDS if kind in self.kinds]
        blind = list(self._static_blind())
        if NETWORK in self.kinds:
            open_now = self.open_connections()
            if open_now is None or open_now:
                blind.append(POOLED_CONNECTIONS)
        else:
            open_now = []
        attributes: dict[str, Any] = {ATTESTATION: kinds, BLIND: blind}
        if open_now:
            attributes[OPEN_CONNECTIONS] = open_now[:OPEN_CONNECTIONS_SHOWN] + (
                [f"+{len(open_now) - OPEN_CONNECTIONS_SHOWN} more"]
                if len(open_now) > OPEN_CONNECTIONS_SHOWN
                else []
            )
        return attributes

    def static_attestation(self) -> dict[str, Any]:
        """``rampart.watch`` and the blind codes known without looking at open connections."""
        blind = self._static_blind()
        cached = self._static
        if cached is None or cached[BLIND] is not blind:
            kinds = tuple(kind for kind in KINDS if kind in self.kinds)
            cached = self._static = {ATTESTATION: kinds, BLIND: blind}
        return cached

    def _static_blind(self) -> tuple[str, ...]:
        """Blind codes of the native libraries loaded now (cached while no module loads)."""
        loaded = len(sys.modules)
        if loaded != self._native_seen:
            codes = [CHILD_PROCESS_IO] if PROCESS in self.kinds else []
            if FILE_WRITE in self.kinds and self.sqlite_used:
                codes.append(SQLITE_FILES)
            for module, kind, code in NATIVE:
                if kind in self.kinds and module in sys.modules and code not in codes:
                    codes.append(code)
            self._native_codes = tuple(codes)
            self._native_seen = loaded
        return self._native_codes

    def after_fork(self) -> None:
        """In a forked child: fresh locks (another thread may have held one at the fork),
        and the parent's open requests left to the parent to end."""
        self._lock = threading.Lock()
        self._requests = {}

    def widen(self, kinds: frozenset[str]) -> None:
        self.kinds = self.kinds | kinds
        self.events = _events_of(self.kinds)
        self._native_seen = -1
        self._static = None


# --- the pieces the handlers use -------------------------------------------------------------


def _events_of(kinds: Iterable[str]) -> frozenset[str]:
    kinds = frozenset(kinds)
    events = {event for kind in kinds for event in KIND_EVENTS[kind]}
    if any(kind in kinds for module in _NATIVE_MODULES.values() for kind, _ in module):
        events.add(IMPORT)
    return frozenset(events)


# The import event's module names that load a native library: (kind, blind code) of each.
_NATIVE_MODULES: dict[str, tuple[tuple[str, str], ...]] = {}
for _module, _kind, _code in (*NATIVE, ("_sqlite3", FILE_WRITE, SQLITE_FILES)):
    _NATIVE_MODULES[_module] = (*_NATIVE_MODULES.get(_module, ()), (_kind, _code))

_HANDLERS: dict[str, Callable[[Watcher, str, tuple[Any, ...]], None]] = {
    **dict.fromkeys(CONNECT_EVENTS, Watcher._connect),
    "http.client.connect": Watcher._http_connect,
    "http.client.send": Watcher._http_send,
    **dict.fromkeys(PROCESS_EVENTS, Watcher._process),
    **dict.fromkeys(FILE_EVENTS, Watcher._file),
    "sqlite3.connect": Watcher._sqlite,
    IMPORT: Watcher._native_import,
}


def _describe_address(sock: Any, address: Any) -> tuple[str, str, int | None] | None:
    """(transport, peer address, port) of an INET/INET6 or unix address; None otherwise."""
    import socket

    family = getattr(sock, "family", None)
    if family in (socket.AF_INET, getattr(socket, "AF_INET6", None)):
        if not isinstance(address, tuple) or len(address) < 2:
            return None
        host, port = address[0], address[1]
        if isinstance(host, bytes):
            host = host.decode("idna", "replace")
        if not isinstance(host, str) or not isinstance(port, int):
            return None
        transport = "tcp" if getattr(sock, "type", None) == socket.SOCK_STREAM else "udp"
        return transport, host.partition("%")[0], port
    if family == getattr(socket, "AF_UNIX", None):
        if isinstance(address, bytes):
            address = address.decode("utf-8", "backslashreplace")
        if not isinstance(address, str):
            return None
        return "unix", address.replace("\0", "@", 1) if address.startswith("\0") else address, None
    return None


def _fileno(sock: Any) -> int:
    try:
        return int(sock.fileno()) if sock is not None else -1
    except Exception:
        return -1


def _is_ip(host: str) -> bool:
    import ipaddress

    try:
        ipaddress.ip_address(host.partition("%")[0])
    except ValueError:
        return False
    return True


def _bracketed(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _headers(lines: Sequence[bytes]) -> dict[str, str]:
    found: dict[str, str] = {}
    for line in lines:
        name, colon, value = line.partition(b":")
        if colon:
            found[name.strip().decode("latin-1").lower()] = value.strip().decode("latin-1")
    return found


def _url(connection: Any, target: str, server: dict[str, Any]) -> str:
    """``url.full``: the target itself when absolute (a request to a proxy), else the scheme
    of the connection's class, the server's authority and the target."""
    if target.startswith(("http://", "https://")):
        return target
    client = sys.modules.get("http.client")
    https = getattr(client, "HTTPSConnection", None)
    scheme = "https" if https is not None and isinstance(connection, https) else "http"
    authority = _bracketed(str(server.get("server.address", "")))
    port = server.get("server.port")
    if isinstance(port, int) and _DEFAULT_PORTS.get(scheme) != port:
        authority += f":{port}"
    return f"{scheme}://{authority}{target}"


def _server(connection: Any, headers: dict[str, str]) -> dict[str, Any]:
    """``server.address`` and ``server.port``: the Host header's, else the connection's."""
    tunnel = getattr(connection, "_tunnel_host", None)
    host = str(tunnel or getattr(connection, "host", "") or "")
    port = getattr(connection, "_tunnel_port" if tunnel else "port", None)
    authority = headers.get("host")
    if authority:
        if authority.startswith("["):
            host, _, after = authority[1:].partition("]")
            given = after[1:] if after.startswith(":") else ""
        else:
            named, colon, given = authority.rpartition(":")
            host = named if colon and given.isdigit() else authority
            given = given if colon and given.isdigit() else ""
        if given:
            port = int(given)
    found: dict[str, Any] = {"server.address": host.lower()}
    if isinstance(port, int):
        found["server.port"] = port
    return found


def _http_client_span(span: Any, client_kind: Any) -> bool:
    """An HTTP client instrumentation's span, recording: it is the request being sent."""
    if not span.is_recording() or getattr(span, "kind", None) != client_kind:
        return False
    attributes = getattr(span, "attributes", None) or {}
    return "http.request.method" in attributes or "http.method" in attributes


def _span_id(span: Any) -> int | None:
    context = span.get_span_context()
    return context.span_id if context.is_valid else None


def _dechunked(raw: bytes) -> bytes:
    """A chunked body's data (as much as was kept), or the raw bytes when not well formed."""
    out = bytearray()
    position = 0
    while position < len(raw):
        line_end = raw.find(b"\r\n", position)
        if line_end < 0:
            break
        try:
            size = int(raw[position:line_end].split(b";")[0], 16)
        except ValueError:
            return raw
        if size == 0:
            break
        out += raw[line_end + 2 : line_end + 2 + size]
        position = line_end + 2 + size + 2
    return bytes(out)


def _text(value: Any) -> str:
    if isinstance(value, bytes):
        return os.fsdecode(value)
    if isinstance(value, os.PathLike):
        return _text(os.fspath(value))
    return str(value)


def _text_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, (str, bytes, os.PathLike)):
        return [_text(value)]
    if isinstance(value, (list, tuple)):
        return [_text(item) for item in value]
    return []  # an iterator: reading it here would take it from the caller


def _path(value: Any) -> str | None:
    if isinstance(value, (str, bytes, os.PathLike)):
        try:
            text = _text(value)
        except (TypeError, ValueError):
            return None
        return text if os.path.isabs(text) else os.path.abspath(text)
    return None


def _platform_probe(name: str) -> bool:
    """A command the standard library's platform description runs (``PLATFORM_PROBES``):
    the first caller outside ``subprocess`` and ``os`` is that module."""
    if not any(name in names for names in PLATFORM_PROBES.values()):
        return False
    frame = sys._getframe(1)
    skipped = {__name__, "subprocess", "os"}
    for _ in range(32):
        if frame is None:
            return False
        module = frame.f_globals.get("__name__")
        if module not in skipped:
            return name in PLATFORM_PROBES.get(str(module), ())
        frame = frame.f_back  # type: ignore[assignment]
    return False


def _is_bytecode(path: str) -> bool:
    """Python's own bytecode cache, written as modules are imported: no act of the agent."""
    if "__pycache__" not in path:
        return False
    name = os.path.basename(path)
    return name == "__pycache__" or ".pyc" in name


def _flag_names(flags: int) -> str:
    return "|".join(name for name, bit in _FLAG_NAMES if flags & bit) or str(flags)


# --- the SDK side: attestation on every span, request spans ended with their parent ----------


def attestation_processor(watcher: Watcher) -> Any:
    """The SDK span processor that attests ``watcher`` on every span (``watch()`` adds it to
    the global provider and to each SDK provider made after it)."""
    from opentelemetry.sdk.trace import SpanProcessor

    class WatchAttestation(SpanProcessor):
        """Puts the watcher's attestation on every span as it starts; ends the request
        spans still open under a span as it ends."""

        def on_start(self, span: Any, parent_context: Any = None) -> None:
            scope = getattr(span, "instrumentation_scope", None)
            if scope is not None and scope.name == SCOPE:
                return  # the watcher's own: attested as it was made
            try:
                span.set_attributes(watcher.attestation())
            except Exception:
                watcher.errors += 1

        def on_end(self, span: Any) -> None:
            if watcher._requests:
                context = span.get_span_context()
                watcher.end_requests(context.span_id)

        def shutdown(self) -> None:
            watcher.end_requests()

    return WatchAttestation()


_PATCHED = "_rampart_otel_watched"  # on what the watcher wrapped: the class, the function
_ATTESTED = "_rampart_otel_attested"  # on a provider given the attestation processor


def _attach(watcher: Watcher) -> None:
    """The attestation processor on the global provider if it takes processors, and on each
    SDK TracerProvider made from now on (with the attestation on its resource too)."""
    try:
        from opentelemetry import trace
        from opentelemetry.sdk import trace as sdk_trace
        from opentelemetry.sdk.resources import Resource
    except ImportError:
        return  # no SDK here: no span is recorded in this process
    processor = attestation_processor(watcher)
    provider_class = sdk_trace.TracerProvider
    if not getattr(provider_class, _PATCHED, False):
        original = provider_class.__init__

        def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
            original(self, *args, **kwargs)
            # Run before the provider's own shutdown at exit (atexit runs the last first):
            # a request span still open is ended while its exporter can still send it.
            atexit.register(watcher.end_requests)
            try:
                static = {ATTESTATION: watcher.attestation()[ATTESTATION]}
                static[BLIND] = list(watcher._static_blind())
                self._resource = self._resource.merge(Resource(static))
                self.add_span_processor(processor)
                setattr(self, _ATTESTED, True)
            except Exception:
                watcher.errors += 1

        provider_class.__init__ = __init__  # type: ignore[method-assign]
        setattr(provider_class, _PATCHED, True)
    provider = trace.get_tracer_provider()
    taker = getattr(provider, "add_span_processor", None)
    if callable(taker) and not _attested(provider):
        taker(processor)
        with contextlib.suppress(Exception):
            setattr(provider, _ATTESTED, True)


def _attested(provider: Any) -> bool:
    """The provider has the processor already (made after ``watch()``, or given it)."""
    try:
        return bool(vars(provider).get(_ATTESTED))
    except TypeError:  # no __dict__
        return False


def _wrap_getaddrinfo(watcher: Watcher) -> None:
    """Resolution results, which no audit event carries: the names of connected addresses."""
    import socket

    original = socket.getaddrinfo
    if getattr(original, _PATCHED, False):
        return

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        results = original(host, port, *args, **kwargs)
        try:
            watcher.note_resolution(host, results)
        except Exception:
            watcher.errors += 1
        return results

    setattr(getaddrinfo, _PATCHED, True)
    getaddrinfo.__wrapped__ = original  # type: ignore[attr-defined]
    getaddrinfo.__doc__ = original.__doc__
    socket.getaddrinfo = getaddrinfo


# --- turning it on ----------------------------------------------------------------------------

_WATCHER: Watcher | None = None
_INSTALL = threading.Lock()
ENVIRONMENT = "RAMPART_OTEL_WATCH"  # what `rampart-otel watch` passes: the kinds, comma-separated
BODY_LIMIT_ENVIRONMENT = "RAMPART_OTEL_WATCH_BODY_LIMIT"
BOOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_watch_boot")  # sitecustomize


def parse_kinds(kinds: str | Iterable[str] | None) -> frozenset[str]:
    """The kinds asked for (all when None), each checked."""
    if kinds is None:
        return frozenset(KINDS)
    if isinstance(kinds, str):
        kinds = [part for part in re.split(r"[,\s]+", kinds) if part]
    chosen = frozenset(kinds)
    unknown = sorted(chosen - set(KINDS))
    if unknown:
        raise WatchError(f"unknown kind {unknown[0]!r}: the kinds are {', '.join(KINDS)}")
    if not chosen:
        raise WatchError(f"no kind to watch: choose among {', '.join(KINDS)}")
    return chosen


def watch(kinds: str | Iterable[str] | None = None, *, body_limit: int = BODY_LIMIT) -> Watcher:
    """Turn the watcher on for this process (once; it stays on until the process exits).

    ``kinds``: among ``network``, ``http_client``, ``process``, ``file_write`` (default: all).
    A later call without ``kinds`` returns the watcher as it is; one with more kinds widens
    it; one that leaves out a kind already watched raises ``WatchError``: a hook cannot be
    removed, and spans already started say the kind is seen. ``body_limit``: bytes of each
    HTTP request body kept (0: none), as the first call chose it.
    """
    global _WATCHER
    chosen = parse_kinds(kinds)
    with _INSTALL:
        watcher = _WATCHER
        if watcher is not None:
            if kinds is None:
                return watcher  # on already, as chosen then
            missing = watcher.kinds - chosen
            if missing:
                raise WatchError(
                    "the watcher is already on for "
                    f"{', '.join(k for k in KINDS if k in watcher.kinds)} and cannot be narrowed "
                    f"(a hook cannot be removed); {', '.join(sorted(missing))} stays watched"
                )
            if chosen - watcher.kinds:
                watcher.widen(chosen)
                if NETWORK in chosen:
                    _wrap_getaddrinfo(watcher)
            return watcher
        watcher = Watcher(chosen, max(0, body_limit))
        if NETWORK in chosen:
            _wrap_getaddrinfo(watcher)
        _attach(watcher)
        sys.addaudithook(watcher.hook)
        atexit.register(watcher.end_requests)
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=watcher.after_fork)
        _WATCHER = watcher
        return watcher


def current() -> Watcher | None:
    """The process's watcher, or None while ``watch()`` was not called."""
    return _WATCHER


def from_environment() -> Watcher | None:
    """``watch()`` with the kinds ``RAMPART_OTEL_WATCH`` names (`rampart-otel watch`)."""
    value = os.environ.get(ENVIRONMENT, "").strip()
    if not value:
        return None
    limit = os.environ.get(BODY_LIMIT_ENVIRONMENT, "").strip()
    body_limit = int(limit) if limit.isdigit() else BODY_LIMIT
    return watch(None if value == "all" else value, body_limit=body_limit)


def environment(kinds: str | Iterable[str] | None, body_limit: int = BODY_LIMIT) -> dict[str, str]:
    """The variables that turn the watcher on in a Python process started with them (and in
    the Python processes it starts): ``rampart-otel watch``'s, for ``os.environ.update``."""
    chosen = parse_kinds(kinds)
    path = os.environ.get("PYTHONPATH", "")
    return {
        "PYTHONPATH": BOOT + (os.pathsep + path if path else ""),
        ENVIRONMENT: ",".join(kind for kind in KINDS if kind in chosen),
        BODY_LIMIT_ENVIRONMENT: str(max(0, body_limit)),
    }


class _WatchModule(types.ModuleType):
    """``rampart_otel.watch()`` calls ``watch`` of this module."""

    def __call__(
        self, kinds: str | Iterable[str] | None = None, *, body_limit: int = BODY_LIMIT
    ) -> Watcher:
        return watch(kinds, body_limit=body_limit)


sys.modules[__name__].__class__ = _WatchModule
