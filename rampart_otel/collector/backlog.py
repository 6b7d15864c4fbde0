"""The scoring backlog: data acknowledged that no scorer has read yet, measured and bounded.

Every acknowledged group commit is noted with its end in the segments, its running byte
count and when it was acknowledged (``acked``, from the writer thread, before the clients
are answered). Each scorer shard reports how far it has read (``read``); the backlog is what
lies past the slowest shard. Two figures, both on ``/metrics``:

- **age** (``scoring_backlog_seconds``): how long the oldest acknowledged record no shard
  has read yet has waited. Data stored before this collector started counts as
  acknowledged at its start (its real time is not kept).
- **drain estimate** (``scoring_backlog_drain_seconds``): the backlog's bytes over the rate
  the slowest shard read at while it had work (an average over the last seconds of work;
  unknown until it has been measured, then 0 without backlog).

Read means decoded and assembled: spans of a trace that is not complete yet wait in the
scorer's open traces (``open_traces``), not in the backlog; runs complete are scored in
the same step that read them.

With ``scoring.max_backlog_seconds``, ingest pushes back (``admit`` is False) while scoring
is over the limit behind (``behind``): the age, or, once the age is past half the limit,
the larger of the age and the drain estimate. The age alone lags (while the scorers read
data acknowledged faster than they read, it goes on rising after push-back began), the
estimate alone jumps (a scorer that pauses a second, starting or on a huge run, reads at
rate 0): together push-back starts early enough and never for a pause. A request refused
is answered "retry later" and nothing of it is written. Ingest accepts again once scoring
is at most ``RESUME`` of the limit behind.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path

from rampart_otel.errors import Backlogged
from rampart_otel.receivers.consumer import Consumer, Done
from rampart_otel.storage.segments import list_segments

log = logging.getLogger("rampart_otel.collector")

Position = tuple[int, int]  # (segment, byte offset)
RESUME = 0.8  # push-back ends once the backlog is back under this share of the limit
TRUST_DRAIN = 0.5  # the drain estimate counts once the age is past this share of the limit
MERGE_SECONDS = 0.05  # group commits this close together are one entry (age: up to this early)
MAX_ENTRIES = 200_000  # past it new commits join the newest entry: the oldest stay exact
RATE_HALF_LIFE = 5.0  # seconds: how fast the measured read rate follows a change


class Backlog:
    """Thread-safe: the writer thread notes commits, the scorers' report threads positions,
    request handlers ask ``admit``, the supervisor calls ``tick`` about once a second."""

    def __init__(
        self,
        segments_dir: Path,
        shards: int,
        start: Position,
        written: Position,
        limit: float | None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.segments_dir = segments_dir
        self.limit = limit
        self.clock = clock
        self._lock = threading.Lock()
        now = clock()
        self._read: list[Position] = [start] * shards  # each shard's reported position
        # (end position, running bytes acknowledged up to it, when acknowledged)
        self._entries: deque[tuple[Position, int, float]] = deque()
        self._acked_bytes = self._read_bytes = 0
        if written > start:  # stored before this start and not read: acknowledged "now"
            self._acked_bytes = _bytes_between(segments_dir, start, written)
            self._entries.append((written, self._acked_bytes, now))
        self._rate: float | None = None  # bytes/s the slowest shard reads while it has work
        self._last_tick: tuple[float, int, int] | None = None  # (when, read, backlog)
        self.pushing_back = False
        self.refused_requests = 0
        self.pushbacks = 0  # times push-back began

    # -- fed by the writer and the scorers ----------------------------------------------

    def acked(self, position: Position, size: int) -> None:
        """A group commit of ``size`` bytes ending at ``position`` is durable."""
        now = self.clock()
        with self._lock:
            self._acked_bytes += size
            entries = self._entries
            if entries and (now - entries[-1][2] < MERGE_SECONDS or len(entries) >= MAX_ENTRIES):
                entries[-1] = (position, self._acked_bytes, entries[-1][2])
            else:
                entries.append((position, self._acked_bytes, now))

    def read(self, shard: int, position: Position) -> None:
        """Shard ``shard`` has read everything before ``position``."""
        with self._lock:
            if 0 <= shard < len(self._read):
                self._read[shard] = position
            self._forget_read()

    def _forget_read(self) -> None:
        low = min(self._read)
        entries = self._entries
        while entries and entries[0][0] <= low:
            self._read_bytes = entries.popleft()[1]

    # -- the figures ---------------------------------------------------------------------

    def seconds(self) -> float:
        """Age of the oldest acknowledged record no shard has read (0: none)."""
        with self._lock:
            return self.clock() - self._entries[0][2] if self._entries else 0.0

    def bytes(self) -> int:
        """Acknowledged bytes not read by the slowest shard (whole group commits)."""
        with self._lock:
            return self._acked_bytes - self._read_bytes if self._entries else 0

    def drain_seconds(self) -> float:
        """The backlog's bytes at the measured read rate; 0 with none, inf while the rate
        measured is 0, NaN while not measured yet."""
        with self._lock:
            backlog = self._acked_bytes - self._read_bytes if self._entries else 0
            rate = self._rate
        if backlog == 0:
            return 0.0
        if rate is None:
            return math.nan
        return backlog / rate if rate > 0 else math.inf

    @property
    def read_rate(self) -> float | None:
        return self._rate

    def tick(self) -> None:
        """Measure the read rate over the last interval, if the scorers had work all along."""
        now = self.clock()
        with self._lock:
            self._forget_read()
            backlog = self._acked_bytes - self._read_bytes if self._entries else 0
            last, self._last_tick = self._last_tick, (now, self._read_bytes, backlog)
            if last is None or now <= last[0] or not (last[2] and backlog):
                return  # idle at one end: the interval says nothing of the scorers' speed
            rate = (self._read_bytes - last[1]) / (now - last[0])
            if self._rate is None:
                self._rate = rate
            else:
                weight = 1 - 0.5 ** ((now - last[0]) / RATE_HALF_LIFE)
                self._rate += weight * (rate - self._rate)

    # -- push-back -------------------------------------------------------------------------

    def admit(self) -> bool:
        """Whether ingest takes a request now; logs when push-back begins and ends."""
        limit = self.limit
        if limit is None:
            return True
        age, drain = self.seconds(), self.drain_seconds()
        over = self.behind(age, drain)
        with self._lock:
            if self.pushing_back:
                if over > limit * RESUME:
                    self.refused_requests += 1
                    return False
                self.pushing_back = False
                log.info(
                    "scoring caught up (backlog %.1fs, limit %gs): accepting spans again",
                    over, limit,
                )  # fmt: skip
                return True
            if over <= limit:
                return True
            self.pushing_back = True
            self.pushbacks += 1
            self.refused_requests += 1
        log.warning(
            "scoring is %.1fs behind (oldest unread %.1fs, drain estimate %s; limit "
            "scoring.max_backlog_seconds %gs): pushing back, clients retry later",
            over, age, _seconds(drain), limit,
        )  # fmt: skip
        return False

    def behind(self, age: float, drain: float) -> float:
        """How far behind scoring is, for push-back (module docstring)."""
        if self.limit is None or age <= self.limit * TRUST_DRAIN or math.isnan(drain):
            return age
        return max(age, drain)

    def message(self) -> str:
        return (
            f"scoring is behind (backlog over scoring.max_backlog_seconds {self.limit:g}s): "
            "nothing of this request was stored; retry later"
        )


class GatedConsumer:
    """The segment writer behind the backlog's gate: while ``admit`` says no, a request is
    refused (``Backlogged``: the receivers answer retry later) before anything is written."""

    def __init__(self, writer: Consumer, backlog: Backlog) -> None:
        self.writer = writer
        self.backlog = backlog

    @property
    def healthy(self) -> bool:
        return self.writer.healthy

    def append(self, payload: bytes, done: Done) -> None:
        if not self.backlog.admit():
            raise Backlogged(self.backlog.message())
        self.writer.append(payload, done)

    def append_wait(self, payload: bytes, timeout: float) -> None:
        if not self.backlog.admit():
            raise Backlogged(self.backlog.message())
        self.writer.append_wait(payload, timeout)


def _seconds(value: float) -> str:
    if math.isnan(value):
        return "not measured yet"
    return "unbounded (no progress)" if math.isinf(value) else f"{value:.1f}s"


def _bytes_between(segments_dir: Path, start: Position, end: Position) -> int:
    total = 0
    for number, path in list_segments(segments_dir):
        if start[0] <= number <= end[0]:
            try:
                size = path.stat().st_size
            except OSError:
                continue
            upto = end[1] if number == end[0] else size
            since = start[1] if number == start[0] else 0
            total += max(upto - since, 0)
    return total
