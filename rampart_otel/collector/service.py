"""The collector, wired: receivers → durable segments → (scorer process) → results.db.

Ingest and scoring are decoupled through storage: a request is acknowledged once its
bytes are fsync'd, and the scorer process reads the same segments on its own schedule.
So acknowledgement never waits for a policy, a crash loses nothing acknowledged, and
the scorer resumes where its stored checkpoint says.

Stopping (SIGTERM, SIGINT, ``request_stop``): stop accepting, finish in-flight requests,
flush the writer, let the scorer read everything and score what is complete, close.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import fcntl
import json
import logging
import multiprocessing
import shutil
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import grpc
import uvicorn

from rampart_otel.collector import writeback
from rampart_otel.collector.backlog import Backlog, GatedConsumer
from rampart_otel.collector.config import CollectorConfig
from rampart_otel.collector.housekeeping import Housekeeping
from rampart_otel.collector.metrics import Metrics
from rampart_otel.collector.scorer import run_process
from rampart_otel.collector.writeback import Deliveries
from rampart_otel.errors import ConfigError, StoreError
from rampart_otel.receivers.consumer import Consumer
from rampart_otel.receivers.otlp_grpc import TraceService, make_server
from rampart_otel.receivers.otlp_http import (
    HTTP2_PREFACE,
    TLS_HANDSHAKE,
    Diagnoses,
    OTLPHttpApp,
)
from rampart_otel.storage.checkpoint import forget_shard_checkpoints, reconcile_checkpoint
from rampart_otel.storage.segments import SegmentWriter, list_segments
from rampart_otel.storage.store import open_results_store

log = logging.getLogger("rampart_otel.collector")


@dataclass(slots=True)
class Bound:
    """Where the receivers actually listen (a configured port 0 picks a free one)."""

    http: tuple[str, int] | None = None
    grpc: tuple[str, int] | None = None


class _Uvicorn(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield  # the collector owns the signals and stops every part in order


def _http_protocol(
    header_timeout: float, on_foreign: Callable[[str], None] = lambda kind: None
) -> type[asyncio.Protocol] | str:
    """uvicorn's httptools protocol, closing a connection whose request head is too slow.

    uvicorn times out only idle keep-alive connections; a client that sends a request's
    first bytes and then stalls (slowloris) would hold its connection for ever. A
    connection that opens with the HTTP/2 preface (a gRPC exporter sent to the HTTP port)
    or a TLS handshake (an https:// exporter) is closed after ``on_foreign`` diagnoses it
    (``grpc_on_http``, ``tls_on_http``); any other request that is no HTTP/1.1 is answered
    400 by uvicorn and diagnosed as ``invalid_http``, instead of uvicorn's own warning
    line for each one (a retrying client or a scanner would flood the log).
    """
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError:  # httptools is a dependency; without it uvicorn's h11, untimed
        return "h11"

    class TimedHttpToolsProtocol(HttpToolsProtocol):
        _head_timer: asyncio.TimerHandle | None = None
        _first = True

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self.logger = _Diagnosed(self.logger, on_foreign)  # type: ignore[assignment]
            self._arm()

        def data_received(self, data: bytes) -> None:
            if self._first:
                self._first = False
                foreign = None
                if data.startswith(HTTP2_PREFACE[: len(data)]) and len(data) >= 4:
                    foreign = "grpc_on_http"
                elif data.startswith(TLS_HANDSHAKE):
                    foreign = "tls_on_http"
                if foreign is not None:
                    on_foreign(foreign)
                    self._disarm()
                    self.transport.close()
                    return
            super().data_received(data)

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self._arm()

        def on_headers_complete(self) -> None:
            self._disarm()
            super().on_headers_complete()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            self._disarm()
            self._head_timer = self.loop.call_later(header_timeout, self._head_too_slow)

        def _disarm(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def _head_too_slow(self) -> None:
            self._head_timer = None
            if not self.transport.is_closing():
                self.transport.close()

    return TimedHttpToolsProtocol


class _Diagnosed:
    """uvicorn's logger for a connection, with its line for a request that is no HTTP/1.1
    turned into the ``invalid_http`` diagnosis (logged at most once a minute)."""

    _INVALID = "Invalid HTTP request received."  # uvicorn's words (httptools_impl)

    def __init__(self, logger: Any, on_foreign: Callable[[str], None]) -> None:
        self._logger = logger
        self._on_foreign = on_foreign

    def warning(self, message: object, *args: object, **kwargs: Any) -> None:
        if message == self._INVALID and not args:
            self._on_foreign("invalid_http")
        else:
            self._logger.warning(message, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._logger, name)


def _listen(host: str, port: int, receiver: str = "HTTP") -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say TCP, and without
    # it a response written as headers + body waits ~40 ms for the client's delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as error:
        sock.close()
        raise ConfigError(_cannot_listen(host, port, receiver, error)) from None
    return sock


def _cannot_listen(host: str, port: int, receiver: str, error: OSError) -> str:
    flag = "--http" if receiver == "HTTP" else "--grpc"
    where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    if error.errno == errno.EADDRINUSE:
        return (
            f"cannot listen on {where} (OTLP/{receiver}): the port is already in use "
            f"(another collector?); choose another with {flag} HOST:PORT, or {flag} off"
        )
    return f"cannot listen on {where} (OTLP/{receiver}, {flag}): {error.strerror or error}"


def _first_missing(path: Path) -> Path | None:
    """The outermost directory ``mkdir(parents=True)`` would create for ``path``, if any."""
    missing = None
    for candidate in (path, *path.parents):
        if candidate.exists():
            break
        missing = candidate
    return missing


class Outage:
    """Which scorer shards find the results store down: the outage is logged when the first
    does and its end when the last recovers."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._down: set[int] = set()

    def begins(self, shard: int) -> bool:
        with self._lock:
            first = not self._down
            self._down.add(shard)
            return first

    def ends(self, shard: int) -> bool:
        with self._lock:
            self._down.discard(shard)
            return not self._down


class ScorerProcess:
    """The scorer in its own process, restarted if it dies; reports feed ``/metrics``.

    Two clocks say whether it is stuck, and neither restarts with the process: the time
    since it last said anything (a frozen process), and the time since it last moved
    (read, scored, or caught up) while stored data waits for it (a results store that is
    down makes it exit and be restarted over and over, each time saying little).
    """

    def __init__(
        self,
        config: CollectorConfig,
        metrics: Metrics,
        written: Callable[[], tuple[int, int]] = lambda: (0, 0),
        shard: int = 0,
        backlog: Backlog | None = None,
        outage: Outage | None = None,
    ) -> None:
        self.shard = shard
        self.backlog = backlog
        self.outage = outage or Outage()
        self.config_json = config.model_dump_json()
        self.metrics = metrics
        self.written = written  # how far the segments are durable: work exists below it
        self.context = multiprocessing.get_context("spawn")
        self.process: multiprocessing.process.BaseProcess | None = None
        self.conn: multiprocessing.connection.Connection | None = None
        self.stopping = False
        self.fatal: str | None = None
        self.store_down: str | None = None  # why the results store cannot be used, while so
        self.restarts = 0
        self._drained = threading.Event()
        self._drained_ok = False
        self.last_report = time.monotonic()  # any message from the running scorer
        self.last_progress = time.monotonic()  # it moved, or had nothing to do
        self._progress: tuple[object, ...] | None = None
        self._position: tuple[int, int] | None = None  # how far it has read, as last reported
        self._pump: threading.Thread | None = None
        self.on_verdicts: Callable[[list[dict[str, Any]]], None] | None = None

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.is_alive()

    def work_waiting(self) -> bool:
        """Stored data the scorer has not read, as far as its last report tells."""
        written = self.written()
        if self._position is None:
            return written[1] > 0
        return written > self._position

    def tick(self) -> None:
        """From the supervisor: with nothing waiting, the scorer is not behind."""
        if not self.work_waiting() and self.store_down is None:
            self.last_progress = time.monotonic()

    def stalled_for(self) -> float:
        """Seconds the scorer has shown no progress: silent while running, or not moving
        while data waits for it (whatever restarts happened in between)."""
        now = time.monotonic()
        silent = now - self.last_report if self.alive else 0.0
        stuck = now - self.last_progress if self.work_waiting() else 0.0
        return max(silent, stuck)

    def start(self) -> None:
        self.last_report = time.monotonic()  # this process has not had time to speak yet
        parent, child = self.context.Pipe()
        self.process = self.context.Process(
            target=run_process,
            args=(self.config_json, child, self.shard),
            name=f"rampart-otel-scorer-{self.shard}",
        )
        self.process.start()
        child.close()
        self.conn = parent
        self._pump = threading.Thread(target=self._receive, name="scorer-reports", daemon=True)
        self._pump.start()

    def _receive(self) -> None:
        conn = self.conn
        assert conn is not None
        while True:
            try:
                report = conn.recv()
            except (EOFError, OSError):
                break
            self.last_report = time.monotonic()
            if "fatal" in report:
                self.fatal = str(report["fatal"])
                log.error("scorer cannot start: %s", self.fatal)
                continue
            if "verdict_notices" in report:
                if self.on_verdicts is not None:
                    self.on_verdicts(report["verdict_notices"])
                continue
            if "store_down" in report:
                # One line per outage, however many restarts and however many shards.
                if self.store_down is None and self.outage.begins(self.shard):
                    log.error(
                        "results store unavailable: %s; spans stay stored and are scored "
                        "when it is back (/healthz 503 after %gs without progress)",
                        report["store_down"],
                        self.stall_seconds,
                    )
                self.store_down = str(report["store_down"])
                continue
            if self.store_down is not None:
                if self.outage.ends(self.shard):
                    log.info("results store available again: scoring resumes")
                self.store_down = None
            self._moved(report)
            self.metrics.set_scorer(report, self.shard)
            if self.backlog is not None and self._position is not None:
                self.backlog.read(self.shard, self._position)
            if "drained" in report:
                self._drained_ok = bool(report["drained"])
                self._drained.set()

    @property
    def stall_seconds(self) -> float:
        return float(json.loads(self.config_json)["scoring"]["stall_seconds"])

    def _moved(self, report: dict[str, Any]) -> None:
        position = report.get("position")
        if isinstance(position, list | tuple) and len(position) == 2:
            self._position = (int(position[0]), int(position[1]))
        progress = (self._position, report.get("runs_scored"), report.get("runs_evaluated"))
        if progress != self._progress or not report.get("lag_bytes"):
            self.last_progress = time.monotonic()
        self._progress = progress

    def ensure_running(self) -> None:
        """Restart a scorer that died; call from the thread that started it.

        (Linux delivers the scorer's parent-death signal when that *thread* exits.)
        """
        if self.stopping or self.fatal is not None or self.alive:
            return
        if self.store_down is None:  # else the outage was logged once, when it began
            log.error("scorer exited unexpectedly (code %s); restarting", self._exitcode())
        self.restarts += 1
        if self.process is not None:
            self.process.join(1)
        if self.conn is not None:
            self.conn.close()
        self.start()

    def _exitcode(self) -> int | None:
        return self.process.exitcode if self.process is not None else None

    def drain(self, timeout: float) -> bool:
        """Ask the scorer to finish; True if it scored everything complete in time."""
        self.request_drain()
        return self.finish_drain(time.monotonic() + timeout, timeout)

    def request_drain(self) -> None:
        self.stopping = True
        if self.process is not None and self.conn is not None:
            with contextlib.suppress(OSError):
                self.conn.send("drain")

    def finish_drain(self, deadline: float, timeout: float) -> bool:
        """Wait until ``deadline`` for the drain asked for; stop the process if it is late."""
        if self.process is None or self.conn is None:
            return True
        while not self._drained.wait(0.1):  # or it ended without draining (store down)
            if not self.process.is_alive() or time.monotonic() > deadline:
                break
        drained = self._drained.is_set() and self._drained_ok
        # A scorer that finished may still take a while to exit (it runs niced: on a busy
        # machine its interpreter's teardown waits for CPU): it gets what is left of the
        # timeout, at least 5 s, before it is stopped.
        self.process.join(max(deadline - time.monotonic(), 5) if drained else 0.1)
        if self.process.is_alive():
            if drained:
                log.error("scorer finished but did not exit in %.0fs; stopping it", timeout)
            else:
                log.error(
                    "scorer did not finish in %.0fs; stopping it (it resumes next start)", timeout
                )
            self.process.kill()
            self.process.join(5)
        return drained


class ScorerPool:
    """The scorer shards (``scoring.workers`` processes, each a ``ScorerProcess``), seen by
    the collector as one scorer: alive while all are, stalled as long as the most stalled."""

    def __init__(
        self,
        config: CollectorConfig,
        metrics: Metrics,
        written: Callable[[], tuple[int, int]],
        backlog: Backlog | None = None,
    ) -> None:
        outage = Outage()
        self.shards = [
            ScorerProcess(config, metrics, written, shard, backlog, outage)
            for shard in range(config.scoring.workers)
        ]

    @property
    def alive(self) -> bool:
        return all(shard.alive for shard in self.shards)

    @property
    def started(self) -> bool:
        return any(shard.process is not None for shard in self.shards)

    @property
    def fatal(self) -> str | None:
        return next((shard.fatal for shard in self.shards if shard.fatal), None)

    @property
    def store_down(self) -> str | None:
        return next((s.store_down for s in self.shards if s.store_down is not None), None)

    @property
    def restarts(self) -> int:
        return sum(shard.restarts for shard in self.shards)

    @property
    def on_verdicts(self) -> Callable[[list[dict[str, Any]]], None] | None:
        return self.shards[0].on_verdicts

    @on_verdicts.setter
    def on_verdicts(self, callback: Callable[[list[dict[str, Any]]], None] | None) -> None:
        for shard in self.shards:
            shard.on_verdicts = callback

    def stalled_for(self) -> float:
        return max(shard.stalled_for() for shard in self.shards)

    def start(self) -> None:
        for shard in self.shards:
            shard.start()

    def tick(self) -> None:
        for shard in self.shards:
            shard.tick()

    def ensure_running(self) -> None:
        for shard in self.shards:
            shard.ensure_running()

    def drain(self, timeout: float) -> bool:
        """Ask every shard to finish, then wait for them together, ``timeout`` in all."""
        deadline = time.monotonic() + timeout
        for shard in self.shards:
            shard.request_drain()
        drained = [shard.finish_drain(deadline, timeout) for shard in self.shards]
        return all(drained)


class Collector:
    def __init__(self, config: CollectorConfig) -> None:
        self.config = config
        self.tokens = config.tokens()
        data_dir = config.data_dir
        # Trace content (prompts, tool arguments, secrets) is for this user only: the data
        # directory is 0700 (an existing one others can read is tightened), its files 0600.
        # Made here: removed again if the collector cannot start (a port in use).
        self._made_dir = _first_missing(data_dir.absolute())
        try:
            data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
            if data_dir.stat().st_mode & 0o077:
                data_dir.chmod(0o700)
                log.warning("data_dir %s was readable by others: now 0700", data_dir)
        except FileExistsError:  # a file (or a link to one) where the directory goes
            raise ConfigError(f"data_dir {data_dir}: not a directory") from None
        except OSError as error:
            raise ConfigError(f"data_dir {data_dir}: {error.strerror or error}") from None
        limits = config.limits
        self.metrics = Metrics()
        try:
            self._lock_file = self._lock(data_dir)
            self.writer = SegmentWriter(
                data_dir / "segments",
                segment_max_bytes=config.storage.segment_max_bytes,
                queue_max_bytes=limits.queue_max_bytes,
                queue_max_requests=limits.queue_max_requests,
                fsync=config.storage.fsync,
            )
        except OSError as error:
            # A directory this user cannot write, a file where a directory goes (or the
            # reverse): the operator's to fix, in one line naming the path.
            if hasattr(self, "_lock_file"):
                self._lock_file.close()
            where = error.filename or data_dir
            reason = error.strerror or str(error)
            if isinstance(error, FileExistsError | NotADirectoryError):
                reason = "not a directory"  # (mkdir's "File exists" is a file there)
            raise ConfigError(f"data_dir {data_dir}: cannot use {where}: {reason}") from None
        if self.writer.recovery.cut_bytes:
            log.warning(
                "recovered %s: cut %d bytes of an unacknowledged torn tail",
                self.writer.recovery.segment,
                self.writer.recovery.cut_bytes,
            )
        # Before anything is appended: appends must never land behind the checkpoint.
        reconciled = reconcile_checkpoint(
            data_dir / "results.db",
            data_dir / "segments",
            results_url=config.results,
            instance=config.instance(),
        )
        self.backlog: Backlog | None = None
        self.scorer: ScorerPool | None = None
        self.consumer: Consumer = self.writer
        if config.policies:
            start = reconciled or _first_position(data_dir / "segments")
            self.backlog = Backlog(
                data_dir / "segments",
                config.scoring.workers,
                start,
                self.writer.position,
                config.scoring.max_backlog_seconds,
            )
            self.writer.on_durable = self.backlog.acked
            self.consumer = GatedConsumer(self.writer, self.backlog)
            self.scorer = ScorerPool(config, self.metrics, self._written, self.backlog)
            self.metrics.stored_verdicts = _stored_verdicts(config)
        # Write-back and alerts: the scorers queue them, these threads deliver them.
        self.deliveries: Deliveries | None = None
        if config.policies and writeback.enabled(config):
            self.deliveries = Deliveries(config, self.metrics)
        self._register_gauges()
        self.housekeeping = Housekeeping(config, self.writer, self.metrics)
        self.bound = Bound()
        self.ready = threading.Event()
        self.stopped = threading.Event()
        self.stopping = False
        self.on_ready: Callable[[], None] | None = None
        self.on_tick: Callable[[dict[str, float]], None] | None = None  # about once a second
        # Once stopped (scoring drained), with the final totals: the console's last words.
        self.on_stopped: Callable[[dict[str, float]], None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None

    def _written(self) -> tuple[int, int]:
        return self.writer.position

    @staticmethod
    def _lock(data_dir: object) -> IO[str]:
        handle = open(f"{data_dir}/.collector.lock", "w")  # noqa: SIM115 -- held until close
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            raise ConfigError(f"another collector is using the data directory {data_dir}") from None
        return handle

    def _register_gauges(self) -> None:
        writer, gauge = self.writer, self.metrics.gauge
        gauge(
            "ingest_queue_requests",
            "Requests waiting for their durable write.",
            lambda: writer.queue_requests,
        )
        gauge(
            "ingest_queue_bytes",
            "Bytes waiting for their durable write.",
            lambda: writer.queue_bytes,
        )
        gauge(
            "ingest_queue_limit_bytes",
            "Queue size at which requests are refused.",
            lambda: writer.queue_max_bytes,
        )
        gauge(
            "storage_group_commits",
            "Group commits (one write and one fsync each).",
            lambda: writer.groups,
        )
        gauge("storage_records", "Requests stored since start.", lambda: writer.records)
        gauge(
            "storage_bytes_written",
            "Bytes appended to segments since start.",
            lambda: writer.bytes_written,
        )
        gauge(
            "storage_fsync_seconds",
            "Time spent in fsync since start.",
            lambda: writer.fsync_seconds,
        )
        gauge(
            "storage_segment",
            "Sequence number of the segment being written.",
            lambda: writer.position[0],
        )
        if self.scorer is not None:
            scorer = self.scorer
            gauge("scorer_up", "1 while the scorer process runs.", lambda: int(scorer.alive))
            gauge(
                "scorer_stalled_seconds",
                "Seconds the scorer has shown no progress while data waits for it, across "
                "restarts (/healthz 503 past scoring.stall_seconds).",
                scorer.stalled_for,
            )
            self.metrics.counter(
                "scorer_restarts",
                "Times the scorer process was restarted (it died, or the results store was down).",
                lambda: scorer.restarts,
            )
            gauge(
                "results_store_up",
                "0 while the results store cannot be used (spans wait in the segments).",
                lambda: int(scorer.store_down is None),
            )
            gauge("scorer_workers", "Scorer processes (shards).", lambda: len(scorer.shards))
        if self.backlog is not None:
            self._register_backlog(self.backlog)

    def _register_backlog(self, backlog: Backlog) -> None:
        gauge = self.metrics.gauge
        gauge(
            "scoring_backlog_bytes",
            "Acknowledged bytes the slowest scorer shard has not read yet.",
            backlog.bytes,
        )
        gauge(
            "scoring_backlog_seconds",
            "Age of the oldest acknowledged record the slowest scorer shard has not read "
            "(0: none).",
            backlog.seconds,
        )
        gauge(
            "scoring_backlog_drain_seconds",
            "The backlog's bytes over the rate the slowest shard reads at while it has work "
            "(NaN until measured, +Inf while it makes no progress).",
            backlog.drain_seconds,
        )
        limit = backlog.limit
        if limit is not None:
            gauge(
                "scoring_backlog_limit_seconds",
                "scoring.max_backlog_seconds: past it ingest pushes back.",
                lambda: limit,
            )
        gauge(
            "ingest_pushing_back",
            "1 while ingest refuses requests because scoring is behind (retry later).",
            lambda: int(backlog.pushing_back),
        )
        self.metrics.counter(
            "ingest_pushbacks",
            "Times ingest began pushing back because scoring was behind.",
            lambda: backlog.pushbacks,
        )
        self.metrics.counter(
            "requests_pushed_back",
            "Requests refused (retry later, nothing stored) because scoring was behind.",
            lambda: backlog.refused_requests,
        )

    def health(self) -> tuple[bool, str]:
        if self.stopping:
            return False, "shutting down"
        if not self.writer.healthy:
            return False, "storage failed: see the collector log"
        if self.scorer is not None and self.scorer.fatal:
            return True, f"ok (scoring disabled: {self.scorer.fatal})"
        if self.scorer is not None:
            stalled = self.scorer.stalled_for()
            if stalled > self.config.scoring.stall_seconds:
                reason = f"scorer stalled: no progress for {stalled:.0f}s"
                if self.scorer.store_down is not None:
                    reason += f"; results store unavailable: {self.scorer.store_down}"
                return False, reason
        return True, "ok"

    # -- running -------------------------------------------------------------------------

    def run(self) -> None:
        """Serve until SIGTERM/SIGINT, in the main thread."""
        asyncio.run(self.serve(install_signals=True))

    def start_in_thread(self, timeout: float = 60.0) -> threading.Thread:
        """Serve in a background thread (tests, embedding); returns once listening."""
        failure: list[BaseException] = []

        def target() -> None:
            try:
                asyncio.run(self.serve())
            except BaseException as error:
                failure.append(error)
                self.ready.set()

        thread = threading.Thread(target=target, name="rampart-otel-collector", daemon=True)
        thread.start()
        if not self.ready.wait(timeout):
            raise TimeoutError("collector did not start")
        if failure:
            raise failure[0]
        return thread

    def request_stop(self) -> None:
        """Thread-safe: begin the graceful stop."""
        loop, stop = self._loop, self._stop
        if loop is not None and stop is not None:
            loop.call_soon_threadsafe(stop.set)

    async def serve(self, install_signals: bool = False) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        config = self.config
        try:
            if install_signals:
                for sig in (signal.SIGTERM, signal.SIGINT):
                    self._loop.add_signal_handler(sig, self._stop.set)
            # Every port is bound before anything starts: one that is in use stops the
            # start in one line, with no scorer started and nothing left behind.
            http_socket = self._bind_http()
            try:
                grpc_server = self._start_grpc()
            except ConfigError:
                if http_socket is not None:
                    http_socket.close()
                raise
            http_server, http_task = await self._start_http(http_socket)
            if self.scorer is not None:
                self.scorer.start()
            if self.deliveries is not None:
                self.deliveries.start()
            supervisor = asyncio.create_task(self._supervise())
            self.ready.set()
            if self.on_ready is not None:
                self.on_ready()
            await self._stop.wait()
            supervisor.cancel()
            self.stopping = True
            log.info("stopping: no new requests; finishing those in flight")
            if http_server is not None:
                http_server.should_exit = True
            grace = config.shutdown_timeout_seconds
            if grpc_server is not None:
                await asyncio.to_thread(lambda: grpc_server.stop(grace).wait())
            if http_task is not None:
                await http_task
        finally:
            await asyncio.to_thread(self._close)

    async def _supervise(self) -> None:
        while True:
            await asyncio.sleep(1.0)
            if self.scorer is not None:
                self.scorer.ensure_running()
                self.scorer.tick()
            if self.backlog is not None:
                self.backlog.tick()
                self.backlog.admit()  # push-back ends (and says so) with no request to ask
            if self.on_tick is not None:
                self.on_tick(self.totals())
            await self.housekeeping.tick()

    def totals(self) -> dict[str, float]:
        """Running totals for a console summary: spans received, runs and verdicts scored."""
        metrics = self.metrics
        scorer = dict(metrics.scorer)
        # Those this start scored (/metrics adds the store's earlier ones).
        verdicts = metrics.verdicts_scored()
        totals = {
            "spans_received": float(sum(metrics.spans_received.values())),
            "runs_scored": _number(scorer.get("runs_scored")),
            "open_traces": _number(scorer.get("open_traces")),
            "lag_bytes": _number(scorer.get("lag_bytes")),
        }
        totals.update({status: float(count) for status, count in verdicts.items()})
        return totals

    def _close(self) -> None:
        self.writer.close()
        if self.scorer is not None and self.scorer.started:
            drained = self.scorer.drain(self.config.shutdown_timeout_seconds)
            log.info("scorer %s", "finished" if drained else "stopped before finishing")
            if len(self.scorer.shards) > 1 and not any(s.alive for s in self.scorer.shards):
                try:  # only the store's checkpoint is left, as one scorer leaves it
                    forget_shard_checkpoints(
                        self.config.data_dir / "results.db",
                        results_url=self.config.results,
                        instance=self.config.instance(),
                    )
                except Exception as error:  # the next start drops them instead
                    log.warning("scorer shards' checkpoints left for the next start: %s", error)
        if self.deliveries is not None:  # what is not delivered yet waits for the next start
            self.deliveries.stop()
        if self.ready.is_set() and self.on_stopped is not None:
            try:
                self.on_stopped(self.totals())
            except Exception:  # the console's failure must not keep the lock held
                log.exception("the stop summary failed")
        self._lock_file.close()
        if not self.ready.is_set() and self._made_dir is not None:  # it never started
            shutil.rmtree(self._made_dir, ignore_errors=True)
        self.stopped.set()

    def _start_grpc(self) -> grpc.Server | None:
        address = self.config.grpc.address
        if address is None:
            return None
        service = TraceService(
            self.consumer, self.metrics, self.tokens, self.config.limits.retry_after_seconds
        )
        if address[1] != 0:  # gRPC's own failure is a raw core log line and a vaguer message
            _listen(*address, "gRPC").close()
        try:
            server, port = make_server(
                service,
                *address,
                max_request_bytes=self.config.limits.max_request_bytes,
                max_workers=self.config.grpc.max_workers,
            )
        except (OSError, RuntimeError) as error:
            raise ConfigError(
                f"cannot listen on {address[0]}:{address[1]} (gRPC): {error}"
            ) from None
        server.start()
        self.bound.grpc = (address[0], port)
        return server

    def _bind_http(self) -> socket.socket | None:
        address = self.config.http.address
        return None if address is None else _listen(*address)

    async def _start_http(
        self, sock: socket.socket | None
    ) -> tuple[_Uvicorn | None, asyncio.Task[None] | None]:
        address = self.config.http.address
        if address is None or sock is None:
            return None, None
        limits = self.config.limits
        diagnose = Diagnoses()
        app = OTLPHttpApp(
            self.consumer,
            self.metrics,
            max_request_bytes=limits.max_request_bytes,
            tokens=self.tokens,
            retry_after=limits.retry_after_seconds,
            backpressure_status=limits.backpressure_status,
            health=self.health,
            body_timeout=limits.body_timeout_seconds,
            diagnoses=diagnose,
        )
        port = sock.getsockname()[1]
        grpc = f" ({_hostport(self.bound.grpc)})" if self.bound.grpc else " (off: --grpc HOST:PORT)"

        def on_foreign(kind: str) -> None:
            diagnose(kind, port=port, grpc=grpc)

        self.bound.http = (address[0], sock.getsockname()[1])
        server = _Uvicorn(
            uvicorn.Config(
                app,
                http=_http_protocol(limits.header_timeout_seconds, on_foreign),
                lifespan="off",
                log_config=None,
                access_log=False,
                log_level="warning",
                timeout_graceful_shutdown=int(self.config.shutdown_timeout_seconds),
                backlog=2048,
            )
        )
        task = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started:
            if task.done():
                task.result()
                raise ConfigError("HTTP receiver did not start")
            await asyncio.sleep(0.01)
        return server, task


def _first_position(segments_dir: Path) -> tuple[int, int]:
    """Where a scorer with no checkpoint starts: the oldest segment's beginning."""
    segments = list_segments(segments_dir)
    return (segments[0][0], 0) if segments else (1, 0)


def _hostport(address: tuple[str, int]) -> str:
    host, port = address
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _number(value: object) -> float:
    return float(value) if isinstance(value, int | float) else 0.0


def _stored_verdicts(config: CollectorConfig) -> dict[str, int]:
    """The verdicts in the results store before this start, by status: read once, here,
    so a scorer shard that restarts cannot count them again."""
    if config.results is None and not (config.data_dir / "results.db").exists():
        return {}
    try:
        store = open_results_store(config.results_target(), instance=config.instance())
    except StoreError:  # the scorer says why, once
        return {}
    try:
        return store.status_counts()
    finally:
        store.close()
