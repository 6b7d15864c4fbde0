"""Ports for the tests, without the port-0 race.

Binding port 0, closing the socket and using the number later is a race: between the two,
another xdist worker or process may take the port. So:

- a server of ours binds port 0 itself and the test reads the port it got (the collector
  announces its addresses; an in-process server has ``server_address``);
- a port that must refuse connections is held by ``closed_port``: bound and never listened on,
  nothing else can take it while the test runs, and connecting to it is refused;
- an external server that needs a number (PostgreSQL, Phoenix, MLflow) gets ``free_port``s
  through ``on_free_ports``, which starts it again on fresh ports when it could not bind: a lost
  race costs a retry, not a failed test.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

T = TypeVar("T")

ATTEMPTS = 5
# What PostgreSQL, uvicorn (Phoenix, MLflow), gunicorn and gRPC print when a port is taken.
IN_USE = re.compile(r"address already in use|errno 98|connection in use|failed to bind", re.I)


class PortInUse(RuntimeError):
    """A server could not bind a port it was given: start it again on another."""


@contextmanager
def closed_port() -> Iterator[int]:
    """A port on 127.0.0.1 that refuses connections for as long as the block runs."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))  # no listen(): connecting is refused
        yield holder.getsockname()[1]


def free_port() -> int:
    """A port free a moment ago, for a server that cannot bind port 0 itself: only through
    ``on_free_ports``."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def on_free_ports(start: Callable[..., T], count: int = 1, attempts: int = ATTEMPTS) -> T:
    """``start(*ports)`` with ``count`` free ports; when it raises ``PortInUse``, again with
    fresh ones, up to ``attempts`` times."""
    for attempt in range(attempts):
        try:
            return start(*(free_port() for _ in range(count)))
        except PortInUse:
            if attempt == attempts - 1:
                raise
    raise AssertionError("unreachable")


def in_use(log: str) -> bool:
    """Whether a server's output says a port it was given is taken."""
    return IN_USE.search(log) is not None
