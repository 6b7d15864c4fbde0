"""Agent2Agent (A2A): a call that hands its task to a remote agent, in another process.

What the a2a-sdk (1.x, its own telemetry, scope ``a2a-python-sdk``) records, read from
``samples/traces/a2a-delegation/``: one span per method of its classes, named
``<module>.<Class>.<method>``, with **no attributes** (no URL, no task or context id). On the
caller, the transports' spans are CLIENT (``a2a.client.transports.jsonrpc.JsonRpcTransport.
send_message``, ``…_send_request``, ``…close``; the REST and gRPC transports alike); their
HTTP goes through httpx, whose instrumentation records the agent-card GET
(``/.well-known/agent-card.json``) and the JSON-RPC POST to the agent's URL. On the remote,
the JSON-RPC dispatcher, request handler and event queue spans are SERVER; they join the
caller's trace only where the server takes the trace context (the ASGI / Starlette
instrumentation), else they start a trace of their own.

So a span says "this delegates to a remote agent" when it is an a2a-sdk client transport's
message call (the URL is not on it: ``DELEGATED``), or an HTTP request for an agent card
(the remote agent's URL: the card's URL without its well-known path).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from rampart_otel.conventions import Convention, Gate, SpanReport, as_str
from rampart_otel.conventions.labels import A2A
from rampart_otel.model import Span, SpanKind

SDK_SCOPE = "a2a-python-sdk"
CLIENT_TRANSPORTS = "a2a.client.transports."
# The transports' methods that send the remote agent a message (a task to run).
MESSAGE_METHODS = (".send_message", ".send_message_streaming")
# Where an A2A agent publishes its card: the current path, and 0.2's.
CARD_PATHS = ("/.well-known/agent-card.json", "/.well-known/agent.json")
URL_KEYS = ("url.full", "http.url")
# What the URL parser removes from a URL before reading it (urllib.parse, after WHATWG): a
# card's path split by one of them is still a card's path.
_DROPPED = ("\t", "\r", "\n")
# A delegation whose span does not say where to (the a2a-sdk's spans carry no URL).
DELEGATED = ""


def remote_agent(span: Span) -> str | None:
    """The remote agent this span hands a task to (``DELEGATED`` when the span does not
    name its URL), or None when it is no delegation."""
    if span.kind != SpanKind.CLIENT:  # the remote serving its card is no delegation
        return None
    if span.scope.name == SDK_SCOPE:
        if span.name.startswith(CLIENT_TRANSPORTS) and span.name.endswith(MESSAGE_METHODS):
            return DELEGATED
        return None
    for key in URL_KEYS:
        url = as_str(span.attributes.get(key))
        if url:
            return _agent_url(url)
    return None


def _agent_url(url: str) -> str | None:
    """The agent's URL from its card's (the card path dropped), None for any other URL."""
    if not any(path in url for path in CARD_PATHS) and not any(c in url for c in _DROPPED):
        return None  # no card's path in it: most requests, not parsed
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    for path in CARD_PATHS:
        if parts.path.endswith(path):
            base = parts.path[: -len(path)] + "/"
            return f"{parts.scheme}://{parts.netloc}{base}"
    return None


def read(span: Span) -> SpanReport | None:
    found = remote_agent(span)
    return None if found is None else SpanReport(A2A, remote_agent=found)


CONVENTION = Convention(A2A, read, read_gate=Gate(keys=URL_KEYS, scopes=(SDK_SCOPE,)))
