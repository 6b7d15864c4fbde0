"""The watcher's spans (``rampart_otel.watch``, its scope, owned): connections and file writes.

Every watched span says which audit event it records (``rampart.watch.event``). Its HTTP
requests (``http.client.send``) and processes carry the semantic conventions' own keys and
are read by ``side_effects`` like any client's; this reader adds the two kinds no other
instrumentation records:

- ``network_connect``, from ``socket.connect`` (and a datagram sent without one,
  ``socket.sendto`` / ``socket.sendmsg``): ``server.address`` (the host name resolved to
  the address, else the address), ``network.peer.address``, ``server.port``,
  ``network.transport``;
- ``file_write``, from ``open`` for writing and the file operations (``os.remove``,
  ``os.rename``, ``shutil.rmtree``, ...): ``file.path``, ``rampart.watch.open_mode``.

What the attestation on every span of a watched process (``rampart.watch``,
``rampart.watch.blind``) means is coverage's to read: docs/watch.md.
"""

from __future__ import annotations

from typing import Any

from rampart_otel.conventions import Convention, Gate, SideEffectDetails, SpanReport, as_str
from rampart_otel.conventions.labels import WATCH
from rampart_otel.model import Span
from rampart_otel.vocabulary import FILE_WRITE, NETWORK_CONNECT
from rampart_otel.watch_contract import (
    CONNECT_EVENTS,
    EVENT,
    FILE_EVENTS,
    OPEN_MODE,
    SCOPE,
)

_CONNECTS = frozenset(CONNECT_EVENTS)
_FILES = frozenset(FILE_EVENTS)


def read(span: Span) -> SpanReport | None:
    event = span.attributes.get(EVENT)
    if not isinstance(event, str):
        return None
    effects: list[SideEffectDetails] = []
    if event in _CONNECTS:
        effects.append((NETWORK_CONNECT, connect_details(span), WATCH, {}))
    elif event in _FILES:
        effects.append((FILE_WRITE, file_details(span), WATCH, {}))
    return SpanReport(WATCH, effects=effects)


def connect_details(span: Span) -> dict[str, Any]:
    attrs = span.attributes
    host = as_str(attrs.get("server.address"))
    address = as_str(attrs.get("network.peer.address"))
    port = attrs.get("server.port", attrs.get("network.peer.port"))
    return {
        "host": (host or address or "").lower() or None,
        "address": address,
        "port": port if isinstance(port, int) and not isinstance(port, bool) else None,
        "transport": as_str(attrs.get("network.transport")),
    }


def file_details(span: Span) -> dict[str, Any]:
    attrs = span.attributes
    return {"path": as_str(attrs.get("file.path")), "mode": as_str(attrs.get(OPEN_MODE))}


CONVENTION = Convention(
    WATCH,
    read,
    content_keys=("rampart.watch.",),
    scopes=(SCOPE,),
    read_gate=Gate(keys=(EVENT,)),
)
