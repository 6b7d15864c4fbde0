"""Collector settings for where verdicts go besides the results store: written back to the
trace store the agents also send to (``annotate``), and alerts to a webhook
(``alerts.webhook``), both through a durable outbox (``delivery``). Sections of
``CollectorConfig`` (``collector/config.py``); ``collector/rampart-otel.yaml`` shows each key.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from rampart_otel.errors import UserError

Verdict = Literal["unsafe", "error", "undetermined", "safe"]


def _unsafe() -> list[Verdict]:
    return ["unsafe"]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AnnotateConfig(_Section):
    """Each verdict written back to the trace store: ``phoenix://HOST:PORT/PROJECT`` or
    ``mlflow://HOST:PORT/EXPERIMENT`` (docs/trace-stores.md); off when unset."""

    url: str | None = None
    show_secrets: bool = False  # explanations keep values that look like secrets in clear
    # ``--group-by session``'s counterpart: conversations annotated as Phoenix sessions too
    sessions: bool = False

    @field_validator("url")
    @classmethod
    def _store_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        from rampart_otel.receivers.stores import is_store_url, parse_store_url

        if not is_store_url(value):
            raise ValueError("must be a phoenix:// or mlflow:// URL (docs/trace-stores.md)")
        try:
            source = parse_store_url(value)
        except UserError as error:
            raise ValueError(str(error)) from None
        if source.since or source.until or source.limit:
            raise ValueError("a store to write to takes no since=, until= or limit=")
        return value


class WebhookConfig(_Section):
    """Alerts POSTed to ``url``: ``rampart-otel/alert@1`` JSON (docs/alerts.md) or a
    Slack-compatible message; off when unset."""

    url: str | None = None
    format: Literal["json", "slack"] = "json"
    verdicts: list[Verdict] = Field(default_factory=_unsafe, min_length=1)
    checks: list[str] = []  # check ids or globs; none: every check
    rate_per_minute: int = Field(60, ge=1, le=60_000)  # past it, alerts wait their turn
    headers: dict[str, str] = {}  # e.g. an Authorization
    show_secrets: bool = False

    @field_validator("url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is not None and not value.lower().startswith(("http://", "https://")):
            raise ValueError("must be an http:// or https:// URL")
        return value


class AlertsConfig(_Section):
    webhook: WebhookConfig = Field(default_factory=WebhookConfig)


class DeliveryConfig(_Section):
    """The outbox both go through: retried with backoff while the receiver is down."""

    max_pending: int = Field(100_000, ge=1)  # per target; past it new items are dropped
    retry_max_seconds: float = Field(30.0, gt=0, le=3600)  # the longest wait between tries
    give_up_after_seconds: float = Field(86_400.0, gt=0)  # an item this old is dropped
