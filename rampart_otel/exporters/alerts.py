"""Alerts: a verdict someone must act on, as the JSON a webhook receives.

:func:`alerts_of` picks the results a rule asks for (by verdict, by check) and makes one
:class:`Alert` each, plain data decided once (the collector queues it durably and sends it
later, ``collector/writeback.py``). :func:`alert_body` is what is POSTed: the versioned
``rampart-otel/alert@1`` document (docs/alerts.md describes each field), or a
Slack-compatible ``{"text", "blocks"}`` message. :func:`send_alert` POSTs it, bounded in
time and size, redirects refused, with an ``Idempotency-Key`` header: the alert's id, the
same however often it is sent.

Trace text in an alert (the summary, the evidence) is escaped and its secrets masked,
unless the rule says ``show_secrets``.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from fnmatch import fnmatchcase
from typing import Any, Literal

from rampart_otel import __version__
from rampart_otel.bounded_http import HttpFailure, request, retry_after
from rampart_otel.render import safe_text
from rampart_otel.secret_values import mask_secrets
from rampart_otel.sinks import Scored

SCHEMA = "rampart-otel/alert@1"
EVIDENCE_ITEMS = 10
TEXT_CHARS = 1000
Form = Literal["json", "slack"]


@dataclass(frozen=True, slots=True)
class AlertRule:
    """Which results become alerts: their verdicts, and their checks (ids or globs; none:
    every check)."""

    verdicts: tuple[str, ...] = ("unsafe",)
    checks: tuple[str, ...] = ()
    show_secrets: bool = False

    def wants(self, verdict: str, check_id: str) -> bool:
        return verdict in self.verdicts and (
            not self.checks or any(fnmatchcase(check_id, pattern) for pattern in self.checks)
        )


@dataclass(frozen=True, slots=True)
class Alert:
    """One result someone must act on (``rampart-otel/alert@1``, less its ``schema``)."""

    id: str  # the same for the same run, policy version and check: receivers deduplicate
    verdict: str
    check: str
    policy: str | None
    policy_version: str | None
    harm_category: str | None
    summary: str
    evidence: list[str]
    run_id: str
    revision: int
    trace_ids: list[str]
    service: str | None
    started_at: str | None
    scored_at: str
    links: list[str] = field(default_factory=list)  # where the run is, in a trace store's UI
    collector: str | None = None
    tenant: str | None = None  # the collector tenant that sent the run, if any

    @property
    def key(self) -> str:
        """What an alert is sent once for: the tenant's run, the policy version, the check."""
        return f"{self.tenant or ''}|{self.run_id}|{self.policy}@{self.policy_version}|{self.check}"

    def as_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Alert:
        return cls(**data)


def alerts_of(
    scored: Scored, rule: AlertRule, *, collector: str | None = None, links: Sequence[str] = ()
) -> list[Alert]:
    """The alerts ``rule`` asks for among one scored run's results."""
    run = scored.run
    show = rule.show_secrets
    alerts = []
    for result in scored.results:
        verdict = result.status.value
        if not rule.wants(verdict, result.check_id):
            continue
        version = None if result.policy_version is None else str(result.policy_version)
        key = f"{run.tenant}|{run.run_id}|{result.policy}@{version}|{result.check_id}"
        alerts.append(
            Alert(
                id=hashlib.sha256(key.encode()).hexdigest()[:32],
                verdict=verdict,
                check=result.check_id,
                policy=result.policy,
                policy_version=version,
                harm_category=result.harm_category,
                summary=_shown(result.error or result.summary, show),
                evidence=[_shown(e.text, show) for e in result.evidence[:EVIDENCE_ITEMS]],
                run_id=run.run_id,
                revision=run.revision,
                trace_ids=list(run.trace_ids),
                service=result.service,
                started_at=_iso(result.started_at_ns / 1e9) if result.started_at_ns else None,
                scored_at=_iso(scored.scored_at or time.time()),
                links=list(links),
                collector=collector,
                tenant=run.tenant or None,
            )
        )
    return alerts


def alert_body(alert: Alert, form: Form = "json") -> dict[str, Any]:
    """What the webhook receives: ``rampart-otel/alert@1``, or a Slack-compatible message."""
    if form == "json":
        return {"schema": SCHEMA, **alert.as_json(), "rampart_otel_version": __version__}
    where = alert.service or "an agent"
    head = f"*{alert.verdict.upper()}* `{alert.check}` in {where}, run `{alert.run_id}`"
    lines = [head, alert.summary]
    lines += [f"• {text}" for text in alert.evidence[:3]]
    lines += [f"<{link}|open the trace>" for link in alert.links[:1]]
    text = "\n".join(lines)
    return {
        "text": text,
        "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": text}}],
    }


class Refused(Exception):
    """The receiver did not take the alert; ``retry_in`` when it said when to try again.
    ``str()`` is one line."""

    def __init__(self, message: str, *, retry_in: float | None = None, final: bool = False):
        super().__init__(message)
        self.retry_in = retry_in
        self.final = final  # the receiver says the request itself is wrong: never again


FINAL = (400, 413, 422)  # the request is wrong: sending it again gives the same answer
TIMEOUT = 15.0


def send_alert(
    url: str, alert: Alert, *, form: Form = "json", headers: dict[str, str] | None = None
) -> None:
    """POST the alert to ``url``; a :class:`Refused` unless the receiver answered 2xx."""
    body = json.dumps(alert_body(alert, form), ensure_ascii=False).encode()
    sent = {
        "content-type": "application/json",
        "user-agent": f"rampart-otel/{__version__}",
        "idempotency-key": alert.id,
        **(headers or {}),
    }
    try:
        answer = request(
            "POST", url, body, sent, deadline=time.monotonic() + TIMEOUT, max_bytes=64 * 1024
        )
    except HttpFailure as error:
        raise Refused(str(error)) from None
    if not answer.ok:
        detail = safe_text(" ".join(answer.body.decode("utf-8", "replace").split()), 200)
        raise Refused(
            f"HTTP {answer.status}: {detail}",
            retry_in=retry_after(answer.headers),
            final=answer.status in FINAL,
        )


def _shown(text: str, show: bool) -> str:
    text = safe_text(text, TEXT_CHARS)
    return text if show else mask_secrets(text)


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat().replace("+00:00", "Z")
