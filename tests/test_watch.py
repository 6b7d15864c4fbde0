"""The watcher (rampart_otel/watch.py) on Python's real audit events, in this process.

Files, SQLite and the HTTP request parser here (no socket, no process: tests/watching.py says
how a test watches); connections, processes, ``watch()`` and ``rampart-otel watch`` in child
processes: tests/test_watch_processes.py.
"""

from __future__ import annotations

import http.client
import importlib
import os
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import context
from watching import watching

from rampart_otel import watch as watch_module
from rampart_otel.api import span_runs
from rampart_otel.normalize import normalize
from rampart_otel.watch import (
    ATTESTATION,
    BLIND,
    EVENT,
    EVENTS_UNDER,
    NATIVE_MODULE,
    OPEN_MODE,
    REQUEST_BODY,
    REQUEST_BODY_SIZE,
    REQUEST_BODY_TRUNCATED,
    SQLITE_PATH,
    WatchError,
    parse_kinds,
)


def test_a_file_written_in_a_tool_is_a_span_under_it(tmp_path: Path) -> None:
    target = tmp_path / "note.txt"
    with watching() as w:
        with w.tracer.start_as_current_span("execute_tool save_note") as tool:
            target.write_text("Paris 18C")
        (written,) = w.watched()
        assert written.name == "write note.txt"
        assert written.parent is not None
        assert written.parent.span_id == tool.get_span_context().span_id
        assert written.attributes[EVENT] == "open"
        assert written.attributes["file.path"] == str(target)
        assert written.attributes[OPEN_MODE] == "w"
        (tool_span,) = [s for s in w.spans() if s.name == "execute_tool save_note"]
        assert tool_span.attributes[EVENTS_UNDER] == 1


def test_every_span_carries_the_attestation(tmp_path: Path) -> None:
    with watching(kinds=("network", "file_write")) as w:
        with w.tracer.start_as_current_span("agent"):
            (tmp_path / "x").write_bytes(b"1")
        for span in w.spans():
            assert list(span.attributes[ATTESTATION]) == ["network", "file_write"], span.name
            assert "child_process_io" not in span.attributes[BLIND]  # process is not watched


def test_reads_and_imports_are_never_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "data.txt").write_text("x")
    (tmp_path / "fresh_module_for_watch.py").write_text("VALUE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    with watching() as w:
        with w.tracer.start_as_current_span("tool"):
            (tmp_path / "data.txt").read_text()
            os.close(os.open(tmp_path / "data.txt", os.O_RDONLY))
            importlib.import_module("fresh_module_for_watch")  # its bytecode is written
        assert (tmp_path / "__pycache__").is_dir()
        assert w.watched() == []
    sys.modules.pop("fresh_module_for_watch", None)


def test_the_null_device_is_no_file() -> None:
    with watching() as w:
        with open(os.devnull, "w") as null:
            null.write("gone")
        assert w.watched() == []


def test_os_open_flags_removal_rename_and_directories(tmp_path: Path) -> None:
    with watching() as w:
        with w.tracer.start_as_current_span("tool"):
            os.close(os.open(tmp_path / "a", os.O_WRONLY | os.O_CREAT, 0o600))
            os.rename(tmp_path / "a", tmp_path / "b")
            os.mkdir(tmp_path / "d")
            os.remove(tmp_path / "b")
        found = {s.name: dict(s.attributes) for s in w.watched()}
    assert found["write a"][OPEN_MODE] == "O_WRONLY|O_CREAT"
    assert found["rename b"]["file.path"] == str(tmp_path / "b")
    assert found["rename b"]["rampart.watch.source_path"] == str(tmp_path / "a")
    assert found["mkdir d"][OPEN_MODE] == "mkdir"
    assert found["remove b"][EVENT] == "os.remove"


def test_a_relative_path_is_made_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with watching() as w:
        with open("relative.txt", "a") as handle:
            handle.write("x")
        (span,) = w.watched()
    assert span.attributes["file.path"] == str(tmp_path / "relative.txt")
    assert span.attributes[OPEN_MODE] == "a"
    assert span.parent is None  # no span current: a root span, a fragment to stitch


def test_sqlite_connect_is_a_note_not_a_write(tmp_path: Path) -> None:
    with watching() as w:
        with w.tracer.start_as_current_span("tool"):
            sqlite3.connect(tmp_path / "notes.db").close()
        (note,) = w.watched()
        assert note.attributes[SQLITE_PATH] == str(tmp_path / "notes.db")
        (run,) = [normalize(r) for r in span_runs(w.spans(), one_run="t")]
    assert [effect.kind for effect in run.side_effects] == []


def test_suppressed_instrumentation_is_not_recorded(tmp_path: Path) -> None:
    key = context._SUPPRESS_INSTRUMENTATION_KEY  # what the SDK's exporters set
    with watching() as w:
        token = context.attach(context.set_value(key, True))
        try:
            (tmp_path / "export.bin").write_bytes(b"")
        finally:
            context.detach(token)
        assert w.watched() == []


def test_a_kind_not_watched_is_not_recorded(tmp_path: Path) -> None:
    with watching(kinds=("network",)) as w:
        (tmp_path / "f").write_text("x")
        assert w.watched() == []


def _request(*lines: str, body: bytes = b"") -> bytes:
    return "\r\n".join([*lines, "", ""]).encode() + body


def test_an_http_request_and_its_body_sent_apart_are_one_span() -> None:
    connection = http.client.HTTPConnection("127.0.0.2", 8080)
    head = _request("POST /upload?x=1 HTTP/1.1", "Host: 127.0.0.2:8080", "Content-Length: 24")
    with watching() as w:
        with w.tracer.start_as_current_span("execute_tool send_report") as tool:
            sys.audit("http.client.send", connection, head)
            assert w.watched() == []  # open while its body is sent
            sys.audit("http.client.send", connection, b'{"key": "sk-live-123"}  ')
        (request,) = w.watched()
        assert request.parent is not None
        assert request.parent.span_id == tool.get_span_context().span_id
    attributes = request.attributes
    assert request.name == "POST"
    assert attributes["http.request.method"] == "POST"
    assert attributes["url.full"] == "http://127.0.0.2:8080/upload?x=1"
    assert attributes["server.address"] == "127.0.0.2"
    assert attributes["server.port"] == 8080
    assert attributes[REQUEST_BODY] == '{"key": "sk-live-123"}  '
    assert attributes[REQUEST_BODY_SIZE] == 24


def test_a_chunked_body_is_read_whole_and_a_body_over_the_limit_is_cut() -> None:
    connection = http.client.HTTPSConnection("api.example.com")
    head = _request("PUT /v1 HTTP/1.1", "Host: api.example.com", "Transfer-Encoding: chunked")
    with watching(body_limit=64) as w:
        sys.audit("http.client.send", connection, head)
        sys.audit("http.client.send", connection, b"5\r\nhello\r\n")
        sys.audit("http.client.send", connection, b"6\r\n world\r\n")
        sys.audit("http.client.send", connection, b"0\r\n\r\n")
        (chunked,) = w.watched()
        assert chunked.attributes["url.full"] == "https://api.example.com/v1"
        assert chunked.attributes["server.port"] == 443
        assert chunked.attributes[REQUEST_BODY] == "hello world"
    with watching(body_limit=4) as w:
        sys.audit(
            "http.client.send",
            connection,
            _request("POST / HTTP/1.1", "Host: api.example.com", "Content-Length: 10"),
        )
        sys.audit("http.client.send", connection, b"0123456789")
        (cut,) = w.watched()
        assert cut.attributes[REQUEST_BODY] == "0123"
        assert cut.attributes[REQUEST_BODY_SIZE] == 10
        assert cut.attributes[REQUEST_BODY_TRUNCATED] is True
        mebibyte = 1 << 20  # a large body, as a buffer: read without copying it whole
        head = _request("PUT /big HTTP/1.1", "Host: api.example.com", f"Content-Length: {mebibyte}")
        sys.audit("http.client.send", connection, bytearray(head))
        sys.audit("http.client.send", connection, memoryview(b"\x00" * mebibyte))
        big = w.watched()[-1]
        assert big.attributes[REQUEST_BODY_SIZE] == mebibyte
        assert big.attributes[REQUEST_BODY] == "\x00" * 4


def test_a_request_left_unfinished_ends_with_its_parent_or_the_next_request() -> None:
    connection = http.client.HTTPConnection("localhost", 8000)
    partial = _request("POST /a HTTP/1.1", "Host: localhost:8000", "Content-Length: 100")
    with watching() as w:
        with w.tracer.start_as_current_span("tool"):
            sys.audit("http.client.send", connection, partial + b"only part")
        (ended,) = w.watched()  # its parent ended: so did it
        assert ended.end_time is not None and ended.attributes[REQUEST_BODY] == "only part"
        sys.audit("http.client.send", connection, partial)
        sys.audit("http.client.send", connection, _request("GET /b HTTP/1.1", "Host: localhost"))
        names = [s.name for s in w.watched()]
        assert names == ["POST", "POST", "GET"]  # the GET line ended the second POST
        w.watcher.end_requests()


def test_the_hook_never_raises_into_the_agent() -> None:
    with watching() as w:
        hook = w.watcher.hook
        hook("open", (object(), "w", os.O_WRONLY))
        hook("socket.connect", (object(), ("1.2.3.4",)))
        hook("http.client.send", (object(), b"GET / HTTP/1.1\r\n\r\n"))
        hook("subprocess.Popen", (None, iter(["x"]), None, None))
        hook("os.exec", ())
        hook("open", ("x",))  # raised by someone else's sys.audit, short
        assert w.watcher.errors >= 1  # counted, never raised


def test_kinds_are_checked() -> None:
    assert parse_kinds("network, process") == {"network", "process"}
    assert parse_kinds(None) == set(watch_module.KINDS)
    with pytest.raises(WatchError, match="unknown kind 'net'"):
        parse_kinds(["net"])
    with pytest.raises(WatchError, match="no kind to watch"):
        parse_kinds("")


def test_the_watcher_is_the_module_and_callable() -> None:
    import rampart_otel

    assert rampart_otel.watch is watch_module
    assert callable(rampart_otel.watch)


def _answer(*addresses: str) -> list[tuple[object, ...]]:
    """What socket.getaddrinfo answers for a TCP lookup (family, type, proto, name, address)."""
    return [(2, 1, 6, "", (address, 443)) for address in addresses]


def test_a_connection_is_named_by_what_resolved_to_its_address_never_by_a_guess() -> None:
    import threading

    from rampart_otel.watch import Watcher

    watcher = Watcher(frozenset({"network"}))
    watcher.note_resolution("api.example.com", _answer("203.0.113.5"))
    assert watcher._name_of("203.0.113.5") == "api.example.com"  # this thread's last lookup
    other = threading.Thread(
        target=watcher.note_resolution, args=("cdn.example", _answer("5.5.5.5"))
    )
    other.start()
    other.join()
    assert watcher._name_of("5.5.5.5") == "cdn.example"  # the one name any thread resolved
    for name in ("a.example", "b.example"):
        thread = threading.Thread(target=watcher.note_resolution, args=(name, _answer("6.6.6.6")))
        thread.start()
        thread.join()
    assert watcher._name_of("6.6.6.6") == "6.6.6.6"  # two names: the address, not a guess
    watcher.note_resolution("127.0.0.9", _answer("127.0.0.9"))
    assert "127.0.0.9" not in watcher._resolved  # an address is no name
    for number in range(20):
        watcher.note_resolution(f"n{number}.example", _answer("7.7.7.7"))
    assert len(watcher._resolved["7.7.7.7"]) == 8  # bounded


def _tool_call_attested(w: Any, tool: str) -> tuple[str, ...]:
    (run,) = [normalize(r) for r in span_runs(w.spans(), one_run="t")]
    (scope,) = [s for s in run.tool_scopes if s.tool == tool]
    return tuple(scope.attested)


TOOL = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "save_note"}


def test_a_native_client_loaded_inside_a_call_takes_its_attestation_away(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The call's span was stamped before the module loaded (no blind code for it): processes
    # a multiprocessing pool starts, or sockets libpq opens (psycopg2), are made in C unseen.
    for module in ("multiprocessing.popen_spawn_posix", "multiprocessing.popen_forkserver"):
        monkeypatch.delitem(sys.modules, module, raising=False)  # as in an agent's process
    with watching(kinds=("process",)) as w:
        with (
            w.tracer.start_as_current_span("agent"),
            w.tracer.start_as_current_span("execute_tool save_note", attributes=TOOL),
        ):
            # as CPython raises it: (module, filename, sys.path, sys.meta_path, sys.path_hooks)
            w.watcher.hook("import", ("multiprocessing.popen_spawn_posix", None, [], [], []))
        (loaded,) = w.watched()
        assert loaded.name == "load multiprocessing.popen_spawn_posix"
        assert loaded.attributes[EVENT] == "import"
        assert loaded.attributes[NATIVE_MODULE] == "multiprocessing.popen_spawn_posix"
        assert "unseen_processes:multiprocessing" in loaded.attributes[BLIND]
        assert _tool_call_attested(w, "save_note") == ()
    with watching(kinds=("process",)) as w:  # the same call without the load: attested
        with (
            w.tracer.start_as_current_span("agent"),
            w.tracer.start_as_current_span("execute_tool save_note", attributes=TOOL),
        ):
            pass
        assert _tool_call_attested(w, "save_note") == ("process_exec",)
    with watching(kinds=("network",)) as w:
        with w.tracer.start_as_current_span("execute_tool save_note", attributes=TOOL):
            w.watcher.hook("import", ("psycopg2", None, [], [], []))
        (loaded,) = w.watched()
        assert "native_sockets:psycopg2" in loaded.attributes[BLIND]


def test_only_native_loads_inside_a_span_are_recorded() -> None:
    with watching() as w:
        w.watcher.hook("import", ("psycopg2", None, [], [], []))  # no span open
        with w.tracer.start_as_current_span("tool"):
            w.watcher.hook("import", ("json", None, [], [], []))  # pure Python
            w.watcher.hook("import", (["not", "a", "name"],))  # a hostile value: ignored
        assert w.watched() == []
    with watching(kinds=("process",)) as w:  # a socket library, sockets not watched
        with w.tracer.start_as_current_span("tool"):
            w.watcher.hook("import", ("grpc", None, [], [], []))
        assert w.watched() == []
