"""The body of ``rampart-otel replay``: recorded traces → any OTLP endpoint, as sent live.

Each recorded batch (a JSON line, a protobuf record, a whole document) becomes one request,
split past ``max_batch`` spans, in file order, with trace/span ids and timestamps as
recorded. Requests go through the real OTLP exporters' transport
(``exporters/otlp_send.py``), so retries and backpressure behave as for a live agent.

``speed`` keeps the recording's rhythm: a batch leaves when its latest span ended,
relative to the batch before, divided by ``speed``. Without it, requests go as fast as the
endpoint accepts them.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from rampart_otel.codecs.otlp_proto import spans_to_proto_request
from rampart_otel.errors import EmptyInput, ReplayError
from rampart_otel.exporters.otlp_send import (
    PROTOCOLS,
    EndpointError,
    SenderUnavailable,
    SendResult,
    TraceSender,
    address,
    make_trace_sender,
    reachable,
)
from rampart_otel.model import InputError, Span
from rampart_otel.receivers.files import read_path
from rampart_otel.render import safe_text, without_password

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
DEFAULT_MAX_BATCH = 512  # the SDK BatchSpanProcessor's max_export_batch_size
MAX_REFUSALS_SHOWN = 10  # one line each; a wrong URL would otherwise print one per request


@dataclass(slots=True)
class ReplayStats:
    requests: int = 0
    spans: int = 0
    rejected: int = 0  # spans the endpoint refused, partly or in failed requests
    failed_requests: int = 0
    input_errors: int = 0
    refusals: int = 0  # requests with any span rejected


class Pacer:
    """Spaces requests as the recording spaced its batches, ``speed`` times faster.

    Each batch's time is its latest span end (when an SDK batch processor could have sent
    it). A batch earlier than the one before (the next file, another recording) goes at
    once and restarts the clock; a gap longer than ``max_gap`` wall seconds is cut to it.
    """

    def __init__(
        self,
        speed: float | None,
        max_gap: float,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.speed = speed
        self.max_gap = max_gap
        self.clock = clock
        self.sleep = sleep
        self._anchor: tuple[float, int] | None = None  # (wall seconds, recorded ns)
        self._last_ns: int | None = None

    def delay(self, batch_ns: int | None) -> float:
        """Seconds to wait before sending a batch recorded at ``batch_ns``; moves the clock."""
        if self.speed is None or batch_ns is None:
            return 0.0
        now = self.clock()
        last = self._last_ns
        self._last_ns = batch_ns
        if self._anchor is None or last is None or batch_ns < last:
            self._anchor = (now, batch_ns)
            return 0.0
        wall, recorded = self._anchor
        wait = wall + (batch_ns - recorded) / 1e9 / self.speed - now
        if wait > self.max_gap:
            wait = self.max_gap
            self._anchor = (now + wait, batch_ns)
        return max(wait, 0.0)

    def wait(self, batch_ns: int | None) -> None:
        delay = self.delay(batch_ns)
        if delay > 0:
            self.sleep(delay)


def batch_time(spans: list[Span]) -> int | None:
    """When the batch was complete: its latest span end (else latest start)."""
    ends = [span.end_ns for span in spans if span.end_ns]
    if ends:
        return max(ends)
    starts = [span.start_ns for span in spans if span.start_ns]
    return max(starts) if starts else None


def replay(
    paths: Iterable[Path],
    url: str,
    protocol: str,
    headers: dict[str, str],
    out: IO[str],
    *,
    speed: float | None = None,
    max_gap: float = 60.0,
    timeout: float = 10.0,
    max_batch: int = DEFAULT_MAX_BATCH,
    on_error: Callable[[InputError], None] | None = None,
    on_refused: Callable[[str], None] | None = None,
    allow_empty: bool = False,
) -> tuple[int, ReplayStats]:
    """Send every batch; (exit code, stats). Raises ``ReplayError`` for exit code 2, and
    :class:`EmptyInput` for input with no span at all unless ``allow_empty``."""
    if protocol not in PROTOCOLS:
        raise ReplayError(f"--protocol: {protocol!r} is not one of {', '.join(PROTOCOLS)}")
    if speed is not None and not speed > 0:
        raise ReplayError("--speed: must be greater than 0")
    if max_batch < 1:
        raise ReplayError("--max-batch: must be at least 1")
    _quiet_exporter_logs()
    try:
        sender = make_trace_sender(url, protocol, headers, timeout)
    except EndpointError as error:
        raise ReplayError(f"--to: {error}") from None
    except SenderUnavailable as error:
        raise ReplayError(str(error)) from None
    target = getattr(sender, "url", url)
    try:
        why = reachable(target, min(timeout, 10.0))
        if why is not None:
            raise ReplayError(f"{without_password(target)}: cannot connect ({why})")
        stats = ReplayStats()
        pacer = Pacer(speed, max_gap)
        for path in paths:
            _replay_path(path, sender, target, pacer, stats, max_batch, on_error, on_refused)
    finally:
        sender.close()
    accepted = stats.spans - stats.rejected
    print(
        f"rampart-otel replay: {stats.spans} spans in {stats.requests} requests to "
        f"{without_password(target)} "
        f"({protocol}): {accepted} accepted, {stats.rejected} rejected"
        + (f" ({stats.failed_requests} requests failed)" if stats.failed_requests else ""),
        file=out,
        flush=True,
    )
    if stats.spans == 0 and stats.input_errors:
        raise ReplayError(f"no spans could be read from the input ({stats.input_errors} errors)")
    if stats.spans == 0 and not allow_empty:
        raise EmptyInput()
    return (EXIT_FAILED if stats.rejected else EXIT_OK), stats


def _replay_path(
    path: Path,
    sender: TraceSender,
    target: str,
    pacer: Pacer,
    stats: ReplayStats,
    max_batch: int,
    on_error: Callable[[InputError], None] | None,
    on_refused: Callable[[str], None] | None,
) -> None:
    for item in read_path(path):
        if isinstance(item, InputError):
            stats.input_errors += 1
            if on_error is not None:
                on_error(item)
            continue
        for start in range(0, len(item), max_batch):
            chunk = item[start : start + max_batch]
            pacer.wait(batch_time(chunk))
            result = sender.send(spans_to_proto_request(chunk))
            stats.requests += 1
            stats.spans += len(chunk)
            stats.rejected += result.rejected
            if not result.accepted:
                stats.failed_requests += 1
                _check_still_reachable(result, target, stats)
            if result.rejected and on_refused is not None:
                stats.refusals += 1
                if stats.refusals <= MAX_REFUSALS_SHOWN:
                    on_refused(_refusal(path, stats.requests, len(chunk), result))
                elif stats.refusals == MAX_REFUSALS_SHOWN + 1:
                    on_refused("further refusals are counted in the summary only")


def _check_still_reachable(result: SendResult, target: str, stats: ReplayStats) -> None:
    """Stop at once when the endpoint went away: every later request would wait it out."""
    if not result.unreachable:
        return
    why = reachable(target, 5.0)
    if why is not None:
        host, port = address(target)
        raise ReplayError(
            f"{without_password(target)}: unreachable after {stats.requests - 1} requests "
            f"({host}:{port}: {why}; last error: {result.message})"
        )


def _refusal(path: Path, number: int, spans: int, result: SendResult) -> str:
    what = "refused" if not result.accepted else f"{result.rejected} of {spans} spans rejected"
    message = safe_text(result.message, 300) or "no reason given"
    return f"{safe_text(str(path), 200)}: request {number} ({spans} spans) {what}: {message}"


def _quiet_exporter_logs() -> None:
    """Replay reports every refusal itself, in one line; the exporters' logs would repeat it."""
    logging.getLogger("opentelemetry.exporter").setLevel(logging.CRITICAL)
