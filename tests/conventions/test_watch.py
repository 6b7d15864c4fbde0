"""conventions/watch.py: the watcher's connections and file writes as side effects, and the
model client's own connection as its transport (the recordings: tests/test_watch_samples.py)."""

from __future__ import annotations

from span_factory import mk

from rampart_otel.conventions import watch
from rampart_otel.model import ToolScope
from rampart_otel.processors.side_effects import agent_side_effects
from rampart_otel.processors.span_views import classify
from rampart_otel.processors.tool_calls import merge_tool_calls
from rampart_otel.processors.turns import Turns
from rampart_otel.run_graph import RunGraph
from rampart_otel.vocabulary import FILE_WRITE, HTTP_REQUEST, NETWORK_CONNECT
from rampart_otel.watch import SCOPE


def connect(span_id: str, host: str, address: str, port: int, **options: object) -> object:
    attributes = {
        "rampart.watch.event": "socket.connect",
        "server.address": host,
        "server.port": port,
        "network.peer.address": address,
        "network.peer.port": port,
        "network.transport": "tcp",
    }
    return mk(span_id, f"connect {host}:{port}", attributes, kind="CLIENT", scope=SCOPE, **options)


def test_a_connection_and_a_file_write_are_read() -> None:
    report = watch.read(connect("c1", "LocalHost", "127.0.0.1", 8080))  # type: ignore[arg-type]
    assert report is not None
    ((kind, details, convention, derived),) = report.effects
    assert (kind, convention, derived) == (NETWORK_CONNECT, "watch", {})
    assert details == {
        "host": "localhost",
        "address": "127.0.0.1",
        "port": 8080,
        "transport": "tcp",
    }
    written = mk(
        "f1",
        "write notes.txt",
        {"rampart.watch.event": "open", "file.path": "/etc/x", "rampart.watch.open_mode": "w"},
        scope=SCOPE,
    )
    report = watch.read(written)
    assert report is not None
    assert report.effects == [(FILE_WRITE, {"path": "/etc/x", "mode": "w"}, "watch", {})]


def test_a_note_is_recognized_and_reports_nothing() -> None:
    note = mk("s1", "sqlite3.connect notes.db", {"rampart.watch.event": "sqlite3.connect"})
    report = watch.read(note)
    assert report is not None and report.effects == []
    assert watch.read(mk("x", "plain", {})) is None


def test_the_model_clients_own_connection_and_request_are_its_transport() -> None:
    llm = {"openinference.span.kind": "LLM", "server.address": "127.0.0.1", "server.port": 4000}
    request = {
        "rampart.watch.event": "http.client.send",
        "http.request.method": "POST",
        "url.full": "http://127.0.0.1:4000/v1/chat/completions",
        "server.address": "127.0.0.1",
        "server.port": 4000,
    }
    graph = RunGraph(
        [
            mk("a0", "agent", {"openinference.span.kind": "AGENT"}, end=100),
            mk("m1", "llm", llm, parent="a0", start=1, end=10),
            connect("c1", "127.0.0.1", "127.0.0.1", 4000, parent="m1", start=2),
            mk("p1", "POST", request, kind="CLIENT", scope=SCOPE, parent="m1", start=3),
            connect("c2", "127.0.0.2", "127.0.0.2", 9, parent="m1", start=4),  # elsewhere
        ]
    )
    run = classify(graph)
    made = agent_side_effects(run, merge_tool_calls(run), Turns(frozenset(), [], []))
    assert {kind: [s.span_id for s in spans] for kind, spans in made.transport.items()} == {
        NETWORK_CONNECT: ["c1"],
        HTTP_REQUEST: ["p1"],
    }
    assert [(e.span_id, e.kind) for e in made.effects] == [("c2", NETWORK_CONNECT)]


def _instrumented_request_run(parent_request: bool) -> ToolScope:
    """A watched tool call whose POST went through an instrumented client: the client's
    CLIENT span, and under it the watcher's connect and its body span."""
    from rampart_otel.model import Run
    from rampart_otel.normalize import normalize

    attested = {
        "rampart.watch": ["network", "http_client", "process", "file_write"],
        "rampart.watch.blind": ["child_process_io"],
    }
    llm = {
        "openinference.span.kind": "LLM",
        "llm.output_messages.0.message.tool_calls.0.tool_call.id": "c1",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "send",
        **attested,
    }
    tool = {"openinference.span.kind": "TOOL", "tool.name": "send", **attested}
    client = {
        "http.request.method": "POST",
        "url.full": "http://localhost:8080/up",
        "server.address": "localhost",
        "server.port": 8080,
    }
    body = {"rampart.watch.event": "http.client.send", "rampart.watch.request_body": "x"}
    if parent_request:
        body["rampart.watch.parent_request"] = True
    spans = [
        mk("a0", "agent", {"openinference.span.kind": "AGENT", **attested}, end=100),
        mk("m1", "llm", llm, parent="a0", start=1, end=10),
        mk("t1", "send", tool, parent="a0", start=20, end=30),
        mk("r1", "POST", client, kind="CLIENT", parent="t1", start=21, end=29),
        connect("w1", "localhost", "127.0.0.1", 8080, parent="r1", start=22),
        mk("w2", "POST", body, kind="CLIENT", scope=SCOPE, parent="r1", start=23),
    ]
    (scope,) = normalize(Run("r", [spans[0].trace_id], spans)).tool_scopes
    return scope


def test_a_body_span_under_the_instrumented_request_keeps_the_call_attested() -> None:
    """The watcher's span under an instrumented client's span of the same request is no
    second request (``parent_request``): the call stays attested; a watched span that is
    read as nothing, without that mark, leaves it unattested (what it saw is not known)."""
    assert "http_request" in _instrumented_request_run(parent_request=True).attested
    assert _instrumented_request_run(parent_request=False).attested == ()
