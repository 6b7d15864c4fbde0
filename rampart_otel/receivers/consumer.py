"""What a network receiver is given by its host: where accepted requests go, and where it
counts them. The collector wires in its durable segment writer and its metrics; receivers
know nothing above them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

Done = Callable[[BaseException | None], None]


class Consumer(Protocol):
    """Takes each accepted request's payload; raises ``QueueFull`` or ``WriterClosed``."""

    @property
    def healthy(self) -> bool: ...

    def append(self, payload: bytes, done: Done) -> None:
        """Queue the payload; ``done`` runs once it is durable (or failed)."""

    def append_wait(self, payload: bytes, timeout: float) -> None:
        """Store the payload, returning once it is durable."""


class Telemetry(Protocol):
    """Counts requests and spans; renders the ``/metrics`` page."""

    def request(
        self, transport: str, code: str, spans: int = 0, rejected: int = 0, lost: int = 0
    ) -> None: ...

    def refused(self, transport: str, code: str, reason: str, spans: int = 0) -> None: ...

    def exposition(self) -> tuple[bytes, str]:
        """The ``/metrics`` body and its content type."""
