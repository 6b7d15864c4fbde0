"""What ``rampart-otel collect`` tells the person watching it, on standard error.

A startup block (where it listens, where the data and the verdicts go, which policies
with how many checks, and the command to look at the verdicts), then one line per UNSAFE
or ERROR verdict as it lands and one short line per scored run with its counts, so that
"scored, fine" is told from "nothing arrived" (each rate-limited: past the limit they are
counted and the count printed), and a one-line summary now and then while something
happens. ``quiet`` keeps
only the first line (the addresses) and warnings. Everything the trace supplied (service
names, run ids, evidence) goes through ``render.safe_text``.
"""

from __future__ import annotations

import logging
import shlex
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import IO, Any

from rampart_otel.collector.config import CollectorConfig
from rampart_otel.evaluation import Policy
from rampart_otel.render import safe_text, secrets_shown, shown_text, without_password
from rampart_otel.storage.store import describe

PREFIX = "rampart-otel: "
VERDICT_LINES_PER_MINUTE = 30
RUN_LINES_PER_MINUTE = 30
STATUS_ORDER = ("unsafe", "error", "undetermined", "safe")
SUMMARY_EVERY = 60.0  # seconds between summary lines, printed only when something happened
DETAIL_LIMIT = 160


def hostport(address: tuple[str, int]) -> str:
    host, port = address
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


class OneLineFormatter(logging.Formatter):
    """Log lines as every output shows text it does not own: one line, no control sequence
    (``render.safe_text``), whatever a message quotes (a path, a request's field, another
    library's words). A traceback after it keeps its lines."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        record.message = safe_text(record.message, None)
        return super().formatMessage(record)


def log_to_stderr(level: str, prefix: str) -> None:
    """The process's log: ``PREFIX: LEVEL message`` lines on stderr, at ``level``."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(OneLineFormatter(f"{prefix}: %(levelname)s %(message)s"))
    logging.basicConfig(level=level, handlers=[handler])


def audit_command(config: CollectorConfig) -> str:
    """The ``rampart-otel audit`` arguments that read this collector's verdicts."""
    if config.results is not None:
        return f"rampart-otel audit --results {shlex.quote(describe(config.results))}"
    return f"rampart-otel audit --data-dir {shlex.quote(str(config.data_dir))}"


class Console:
    def __init__(
        self,
        out: IO[str],
        *,
        quiet: bool = False,
        show_secrets: bool = False,
        lines_per_minute: int = VERDICT_LINES_PER_MINUTE,
        summary_every: float = SUMMARY_EVERY,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.out = out
        self.quiet = quiet
        self.show_secrets = show_secrets  # else verdict lines mask secret-looking values
        self.lines_per_minute = lines_per_minute
        self.summary_every = summary_every
        self.clock = clock
        self.audit = "rampart-otel audit"
        self._lock = threading.Lock()
        self._window = clock()
        self._printed = 0  # verdict lines printed in the current minute
        self._unprinted = 0  # verdicts not printed in it (over the limit)
        self._runs_printed = 0  # run lines printed in the current minute
        self._runs_unprinted = 0
        self._summary_at = clock()
        self._totals: dict[str, float] = {}
        self._started = clock()

    def _print(self, line: str) -> None:
        print(line, file=self.out, flush=True)

    # -- startup -------------------------------------------------------------------------

    def startup(
        self,
        config: CollectorConfig,
        http: tuple[str, int] | None,
        grpc: tuple[str, int] | None,
        policies: Sequence[Policy],
    ) -> None:
        self.audit = audit_command(config)
        parts = []
        if http:
            parts.append(f"OTLP/HTTP on http://{hostport(http)}/v1/traces")
        if grpc:
            parts.append(f"OTLP/gRPC on {hostport(grpc)}")
        self._print(f"{PREFIX}collecting: {', '.join(parts) or 'no receiver'}")
        if self.quiet:
            return
        rows = [("data", f"{config.data_dir} (segments: every span, stored before it is acked)")]
        if policies:
            for path, policy in zip(config.policies, policies, strict=False):
                checks = len(policy.checks)
                rows.append(
                    (
                        "policy",
                        f"{path}: {safe_text(policy.name)} v{safe_text(policy.version)}, "
                        f"{checks} check{'s' if checks != 1 else ''}",
                    )
                )
            if config.results is not None:
                where = f"{describe(config.results)} (shared PostgreSQL store)"
            else:
                where = str(config.data_dir / "results.db")
            if config.export.otlp.endpoint is not None:
                where += f"; also as OTLP events to {without_password(config.export.otlp.endpoint)}"
            rows.append(("verdicts", where))
            if config.annotate.url is not None:
                rows.append(("annotate", f"{config.annotate.url} (queued, retried while down)"))
            if config.alerts.webhook.url is not None:
                webhook = config.alerts.webhook
                rows.append(
                    (
                        "alerts",
                        f"{without_password(webhook.url or '')}: {', '.join(webhook.verdicts)} "
                        f"({webhook.format}, queued, retried while down)",
                    )
                )
            rows.append(("look", self.audit))
            rows.append(("", f"{self.audit} --html -o audit.html"))
        else:
            rows.append(("policy", "none: spans are stored, nothing is scored (add --policy)"))
        if http:
            base = f"http://{hostport(http)}"
            rows.append(("health", f"{base}/healthz  {base}/metrics"))
        for label, text in rows:  # paths and URLs may hold a newline or escape sequence
            self._print(f"  {label:<9} {safe_text(text, None)}")
        if policies:
            self._print(
                "  Each scored run is printed below with its counts, each UNSAFE and ERROR "
                f"verdict too, and a summary every {self.summary_every:g}s while traces "
                "arrive (--quiet: none of them)."
            )

    # -- as verdicts land ----------------------------------------------------------------

    def verdicts(self, notices: Sequence[dict[str, Any]]) -> None:
        """One line per UNSAFE or ERROR verdict, at most ``lines_per_minute``."""
        if self.quiet:
            return
        # The scorer's reports arrive on another thread: the choice is applied here.
        with self._lock, secrets_shown(self.show_secrets):
            self._roll()
            for notice in notices:
                if "scored" in notice:
                    self._run(notice)
                elif "unsent" in notice:
                    self._unprinted += int(notice["unsent"])
                elif self._printed >= self.lines_per_minute:
                    self._unprinted += 1
                else:
                    self._printed += 1
                    self._print(verdict_line(notice))

    def _run(self, notice: dict[str, Any]) -> None:
        if self._runs_printed >= self.lines_per_minute:
            self._runs_unprinted += 1
        else:
            self._runs_printed += 1
            self._print(run_line(notice))

    def _roll(self, final: bool = False) -> None:
        """A new minute (or the stop): say how many the last one did not print."""
        now = self.clock()
        if now - self._window < 60.0 and not final:
            return
        if self._unprinted:
            self._print(
                f"{PREFIX}{self._unprinted} more UNSAFE/ERROR verdicts were not printed "
                f"(over {self.lines_per_minute} a minute): "
                f"{self.audit} --status unsafe --status error"
            )
        if self._runs_unprinted:
            self._print(
                f"{PREFIX}{self._runs_unprinted} more runs scored, not printed one by one "
                f"(over {self.lines_per_minute} a minute): {self.audit}"
            )
        self._window, self._printed, self._unprinted = now, 0, 0
        self._runs_printed = self._runs_unprinted = 0

    # -- now and then --------------------------------------------------------------------

    def tick(self, totals: dict[str, float]) -> None:
        """From the collector's supervisor, about once a second, with its running totals
        (``spans_received``, ``runs_scored``, ``unsafe``, ``error``, ``undetermined``,
        ``safe``, ``open_traces``, ``lag_bytes``)."""
        if self.quiet:
            return
        with self._lock:
            self._roll()
            now = self.clock()
            if now - self._summary_at < self.summary_every:
                return
            previous, self._totals = self._totals, dict(totals)
            interval, self._summary_at = now - self._summary_at, now
            line = summary_line(previous, totals, interval)
            if line is not None:
                self._print(line)

    def stopped(self, totals: dict[str, float]) -> None:
        """At the stop, once scoring has drained: the verdicts this minute did not print,
        and what the whole run did (a stop within a minute of the start or of the last
        summary said nothing of it)."""
        if self.quiet:
            return
        with self._lock:
            self._roll(final=True)
            interval = self.clock() - self._started
            line = summary_line({}, totals, interval, label=f"stopped after {interval:.0f}s")
            self._print(line or f"{PREFIX}stopped after {interval:.0f}s: nothing received")


def verdict_line(notice: dict[str, Any]) -> str:
    status = str(notice.get("status", "")).upper()
    check = safe_text(notice.get("check"), 80)
    policy = notice.get("policy")
    service = notice.get("service")
    revision = notice.get("revision") or 0
    run = safe_text(notice.get("run_id"), 80) + (f" (revision {revision})" if revision else "")
    return (
        f"{PREFIX}{status} {check}"
        + (f" [{safe_text(policy, 60)}]" if policy else "")
        + f" service {shown_text(service, 60) if service else '(none)'}"
        + f" run {run}: {shown_text(notice.get('detail'), DETAIL_LIMIT, words=True)}"
    )


def run_line(notice: dict[str, Any]) -> str:
    """``rampart-otel: scored run ID service S: 1 unsafe, 5 safe``."""
    counts = notice.get("scored") or {}
    service = notice.get("service")
    revision = notice.get("revision") or 0
    run = safe_text(notice.get("run_id"), 80) + (f" (revision {revision})" if revision else "")
    listed = ", ".join(
        f"{int(counts[status])} {status}" for status in STATUS_ORDER if counts.get(status)
    )
    return (
        f"{PREFIX}scored run {run} service {shown_text(service, 60) if service else '(none)'}: "
        f"{listed or 'no check'}"
    )


def summary_line(
    before: dict[str, float], now: dict[str, float], interval: float, label: str = ""
) -> str | None:
    """What happened since ``before`` (``label``: ``last Ns`` by default); None when
    nothing did."""

    def delta(key: str) -> int:
        change = now.get(key, 0) - before.get(key, 0)
        return int(change if change >= 0 else now.get(key, 0))  # a restarted scorer's count

    received, scored = delta("spans_received"), delta("runs_scored")
    if not received and not scored:
        return None
    statuses = ", ".join(
        f"{delta(status)} {status}"
        for status in ("unsafe", "error", "undetermined", "safe")
        if delta(status)
    )
    lag = int(now.get("lag_bytes", 0))
    return (
        f"{PREFIX}{label or f'last {interval:.0f}s'}: {received} spans received, "
        f"{scored} runs scored"
        + (f" ({statuses} results)" if statuses else "")
        + f"; {int(now.get('open_traces', 0))} traces open"
        + (f"; {lag} bytes not yet read by the scorer" if lag else "")
    )
