"""A2A: the spans that hand a task to a remote agent, and the remote agent's URL.

Hand-built spans for the rules; then the recordings of ``samples/traces/a2a-delegation``
(a2a-sdk 1.3.0 client and server, httpx and Starlette instrumented), read span by span.
"""

from __future__ import annotations

import pathlib

import pytest
from span_factory import span

from rampart_otel.conventions import a2a
from rampart_otel.processors.span_views import _read
from rampart_otel.receivers.files import read_paths

SAMPLES = pathlib.Path(__file__).resolve().parents[2] / "samples" / "traces" / "a2a-delegation"
SEND = "a2a.client.transports.jsonrpc.JsonRpcTransport.send_message"


@pytest.mark.parametrize(
    ("url", "agent"),
    [
        ("http://localhost:8000/.well-known/agent-card.json", "http://localhost:8000/"),
        (
            "https://ops.example/agents/ops/.well-known/agent.json",
            "https://ops.example/agents/ops/",
        ),
        ("http://localhost:8000/weather?city=Paris", None),
        ("http://localhost:8000/.well-known/agent-card.json.bak", None),
        ("http://[::1/.well-known/agent-card.json", None),  # no URL at all
        # A tab or line break in the recorded URL: the URL parser drops it, so it is the card's
        ("http://h/a/.well-known/agent\t-card.json", "http://h/a/"),
        ("http://h/.well-\nknown/agent.json", "http://h/"),
    ],
)
def test_an_agent_card_request_names_the_remote_agent(url: str, agent: str | None) -> None:
    assert a2a.remote_agent(span("GET", {"url.full": url}, kind="CLIENT")) == agent


def test_the_remote_serving_its_card_is_no_delegation() -> None:
    card = "http://localhost:8000/.well-known/agent-card.json"
    assert (
        a2a.remote_agent(
            span("GET /.well-known/agent-card.json", {"http.url": card}, kind="SERVER")
        )
        is None
    )


@pytest.mark.parametrize(
    ("name", "kind", "delegates"),
    [
        (SEND, "CLIENT", True),
        ("a2a.client.transports.rest.RestTransport.send_message_streaming", "CLIENT", True),
        ("a2a.client.transports.jsonrpc.JsonRpcTransport.get_task", "CLIENT", False),
        ("a2a.client.transports.jsonrpc.JsonRpcTransport.close", "CLIENT", False),
        (
            "a2a.server.request_handlers.default_request_handler_v2.DefaultRequestHandlerV2.on_message_send",
            "SERVER",
            False,
        ),
    ],
)
def test_the_sdks_message_call_is_a_delegation(name: str, kind: str, delegates: bool) -> None:
    found = a2a.remote_agent(span(name, {}, kind=kind, scope=a2a.SDK_SCOPE))
    assert found == (a2a.DELEGATED if delegates else None)


def test_another_scopes_span_of_that_name_is_none() -> None:
    assert a2a.remote_agent(span(SEND, {}, kind="CLIENT", scope="my.app")) is None


def _delegations(case: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for batch in read_paths([SAMPLES / f"a2a-delegation-{case}.jsonl"]):
        assert isinstance(batch, list)
        for item in batch:
            reading = _read(item)
            if reading.remote_agent is not None:
                found.setdefault(item.name, []).append(reading.remote_agent)
    return found


@pytest.mark.parametrize(
    "case", ["remote-untraced", "remote-unlinked", "remote-propagated", "benign-propagated"]
)
def test_the_recorded_delegations_are_read(case: str) -> None:
    """In every case the caller's card GET names the remote agent and a2a-sdk's send_message
    span delegates; no span of the remote (served card, JSON-RPC, its tools) does."""
    found = _delegations(case)
    assert set(found) == {"GET", SEND}
    ((url,),) = [found["GET"]]
    assert url.startswith("http://localhost:") and url.endswith("/")
    assert found[SEND] == [a2a.DELEGATED]
