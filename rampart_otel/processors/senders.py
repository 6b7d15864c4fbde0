"""Pieces of a run are joined only when one sender sent them: stitching per tenant.

A collector several tenants share receives traces from each; the stitcher joins a piece
(a continuation, a fragment) to a run by what the spans claim (a service name, call ids,
a time window), which any client can claim. So each tenant's runs go to a stitcher of
their own (``Run.tenant``, the key the assembler passes in): nothing one tenant sends is
joined to another's run. Trace files and the API name no tenant: one stitcher, as before.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Protocol

from rampart_otel.model import Run


class _Stitcher(Protocol):
    @property
    def held(self) -> int: ...

    def take(self, runs: Iterable[Run], now: float) -> None: ...

    def expire(self, now: float) -> list[Run]: ...

    def flush(self) -> list[Run]: ...


class BySender:
    """A stitcher per sender key (``Run.tenant``), made on first use by ``make``; the
    same calls as one stitcher."""

    def __init__(self, make: Callable[[], _Stitcher]) -> None:
        self._make = make
        self._stitchers: dict[str, _Stitcher] = {}

    @property
    def held(self) -> int:
        return sum(stitcher.held for stitcher in self._stitchers.values())

    def add(self, runs: Iterable[Run], now: float) -> list[Run]:
        self.take(runs, now)
        return self.expire(now)

    def take(self, runs: Iterable[Run], now: float) -> None:
        by_sender: dict[str, list[Run]] = {}
        for run in runs:
            by_sender.setdefault(run.tenant, []).append(run)
        for sender, taken in by_sender.items():
            stitcher = self._stitchers.get(sender)
            if stitcher is None:
                stitcher = self._stitchers[sender] = self._make()
            stitcher.take(taken, now)

    def expire(self, now: float) -> list[Run]:
        return [run for stitcher in self._stitchers.values() for run in stitcher.expire(now)]

    def flush(self) -> list[Run]:
        return [run for stitcher in self._stitchers.values() for run in stitcher.flush()]
