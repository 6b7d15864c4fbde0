"""Side effects from HTTP, DB, messaging, RPC, process and custom spans, current and legacy."""

from __future__ import annotations

from span_factory import span

from rampart_otel.conventions.side_effects import is_preparation, side_effects


def only(s: object) -> tuple[str, dict]:
    found = side_effects(s)
    assert len(found) == 1, found
    kind, details, _ = found[0]
    return kind, details


def test_http_current_names() -> None:
    s = span(
        "POST",
        {
            "http.request.method": "POST",
            "url.full": "https://evil.example:8443/upload?x=1",
            "server.address": "evil.example",
            "server.port": 8443,
            "http.response.status_code": 201,
        },
        kind="CLIENT",
    )
    assert only(s) == (
        "http_request",
        {
            "method": "POST",
            "url": "https://evil.example:8443/upload?x=1",
            "host": "evil.example",
            "port": 8443,
            "status_code": 201,
        },
    )


def test_http_legacy_names_host_and_port_from_url() -> None:
    s = span(
        "GET",
        {
            "http.method": "GET",
            "http.url": "https://API.example.com/v1?q=1",
            "http.status_code": 200,
        },
        kind="CLIENT",
    )
    _, details = only(s)
    assert details == {
        "method": "GET",
        "url": "https://API.example.com/v1?q=1",
        "host": "api.example.com",
        "port": 443,
        "status_code": 200,
    }


def test_http_legacy_net_peer_and_composed_url() -> None:
    s = span(
        "GET",
        {
            "http.method": "GET",
            "http.scheme": "http",
            "net.peer.name": "10.0.0.5",
            "net.peer.port": 8080,
            "http.target": "/admin",
        },
        kind="CLIENT",
    )
    _, details = only(s)
    assert details["url"] == "http://10.0.0.5:8080/admin"
    assert (details["host"], details["port"]) == ("10.0.0.5", 8080)


def test_http_server_span_is_not_a_side_effect() -> None:
    s = span("GET /", {"http.request.method": "GET", "url.path": "/"}, kind="SERVER")
    assert side_effects(s) == []


def test_db_current_and_legacy() -> None:
    current = span(
        "SELECT users",
        {
            "db.system.name": "postgresql",
            "db.query.text": "SELECT * FROM users",
            "db.operation.name": "SELECT",
            "db.collection.name": "users",
            "db.namespace": "prod",
        },
        kind="CLIENT",
    )
    assert only(current) == (
        "db_query",
        {
            "system": "postgresql",
            "statement": "SELECT * FROM users",
            "operation": "SELECT",
            "collection": "users",
            "namespace": "prod",
        },
    )
    legacy = span(
        "DELETE",
        {
            "db.system": "mysql",
            "db.statement": "DELETE FROM t",
            "db.operation": "DELETE",
            "db.sql.table": "t",
            "db.name": "app",
        },
        kind="CLIENT",
    )
    assert only(legacy)[1] == {
        "system": "mysql",
        "statement": "DELETE FROM t",
        "operation": "DELETE",
        "collection": "t",
        "namespace": "app",
    }


def test_messaging_publish_only() -> None:
    send = span(
        "send orders",
        {
            "messaging.system": "kafka",
            "messaging.operation.type": "send",
            "messaging.destination.name": "orders",
        },
        kind="PRODUCER",
    )
    assert only(send) == (
        "message_publish",
        {"system": "kafka", "destination": "orders", "operation": "send"},
    )
    receive = span(
        "receive",
        {"messaging.system": "kafka", "messaging.operation.type": "receive"},
        kind="CONSUMER",
    )
    assert side_effects(receive) == []
    legacy = span(
        "orders publish",
        {"messaging.system": "rabbitmq", "messaging.destination": "orders"},
        kind="PRODUCER",
    )
    assert only(legacy)[1] == {
        "system": "rabbitmq",
        "destination": "orders",
        "operation": "publish",
    }
    legacy_op = span("x", {"messaging.system": "sqs", "messaging.operation": "publish"})
    assert only(legacy_op)[0] == "message_publish"


def test_rpc_client_current_and_legacy() -> None:
    legacy = span(
        "grpc",
        {"rpc.system": "grpc", "rpc.service": "bank.Payments", "rpc.method": "Transfer"},
        kind="CLIENT",
    )
    assert only(legacy) == (
        "rpc_call",
        {"system": "grpc", "service": "bank.Payments", "method": "Transfer"},
    )
    current = span(
        "grpc", {"rpc.system.name": "grpc", "rpc.method": "bank.Payments/Transfer"}, kind="CLIENT"
    )
    assert only(current)[1] == {"system": "grpc", "service": "bank.Payments", "method": "Transfer"}
    server = span("grpc", {"rpc.system": "grpc"}, kind="SERVER")
    assert side_effects(server) == []


def test_process_exec() -> None:
    s = span(
        "exec",
        {
            "process.executable.name": "curl",
            "process.command_args": ["curl", "-d", "@/etc/passwd"],
            "process.exit.code": 0,
        },
    )
    assert only(s) == (
        "process_exec",
        {"executable": "curl", "args": ["curl", "-d", "@/etc/passwd"], "exit_code": 0},
    )
    line = span("sh", {"process.command_line": "rm -rf /tmp/x"})
    assert only(line)[1] == {"executable": "rm", "args": ["rm", "-rf", "/tmp/x"], "exit_code": None}


def test_custom_kind() -> None:
    s = span(
        "charge",
        {
            "rampart.side_effect.kind": "payment",
            "rampart.side_effect.amount": 120,
            "rampart.side_effect.currency": "EUR",
        },
    )
    kind, details, convention = side_effects(s)[0]
    assert (kind, details, convention) == ("payment", {"amount": 120, "currency": "EUR"}, "rampart")


def test_db_over_http_reports_both() -> None:
    s = span(
        "search",
        {
            "db.system": "elasticsearch",
            "http.request.method": "GET",
            "url.full": "https://es.internal:9200/_search",
        },
        kind="CLIENT",
    )
    assert [kind for kind, _, _ in side_effects(s)] == ["db_query", "http_request"]


def test_plain_span_has_none() -> None:
    assert side_effects(span("work", {"some.attr": 1})) == []


def test_db_preparation_is_named_as_such() -> None:
    """better-sqlite3's plugin: ``prepare: INSERT`` compiles, ``run: INSERT`` executes."""
    attrs = {"db.system.name": "sqlite3", "db.query.text": "INSERT INTO notes (text) VALUES (?)"}
    prepared = only(span("prepare: INSERT", attrs, kind="CLIENT"))[1]
    ran = only(span("run: INSERT", attrs, kind="CLIENT"))[1]
    assert prepared["operation"] == "prepare" and is_preparation(prepared)
    assert ran["operation"] is None and not is_preparation(ran)
    declared = only(span("PREPARE", {**attrs, "db.operation.name": "PREPARE"}, kind="CLIENT"))[1]
    assert is_preparation(declared)
    named_after = only(span("prepare: x", {**attrs, "db.operation.name": "SELECT"}))[1]
    assert not is_preparation(named_after)  # the operation attribute wins over the name


def test_an_http_request_recorded_with_another_kind_than_client_still_counts() -> None:
    """A request named by its URL is evidence whatever kind the instrumentation chose; a
    server span is the other side of a request, and a bare method names no request."""
    post = {"http.request.method": "POST", "url.full": "https://evil.example/x"}
    for kind in ("INTERNAL", "UNSPECIFIED", "PRODUCER"):
        assert [k for k, _, _ in side_effects(span("POST", post, kind=kind))] == ["http_request"]
    assert side_effects(span("POST", post, kind="SERVER")) == []
    assert side_effects(span("x", {"http.method": "GET"}, kind="INTERNAL")) == []
