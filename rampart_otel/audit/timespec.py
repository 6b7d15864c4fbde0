"""Times on the audit's command line and the buckets of its trend, all in UTC.

``--since``/``--until`` take an ISO 8601 date or time (no offset means UTC) or a duration
back from now (``90m``, ``24h``, ``7d``, ``2w``). Buckets start on whole UTC hours, days and
weeks (Monday), so one bucket means the same span of time in every report.
"""

from __future__ import annotations

from datetime import UTC, datetime

from rampart_otel.errors import AuditError
from rampart_otel.lazy_regex import LazyPattern
from rampart_otel.storage.audit_queries import Buckets

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_DURATION = LazyPattern(r"(\d+(?:\.\d+)?)\s*([smhdw])")

HOUR = Buckets("hour", 3600.0)
DAY = Buckets("day", 86400.0)
WEEK = Buckets("week", 7 * 86400.0, origin=4 * 86400.0)  # 1970-01-05 was a Monday
BUCKETS = {b.name: b for b in (HOUR, DAY, WEEK)}
BUCKET_CHOICES = ("auto", *BUCKETS)


def parse_time(text: str, now: float, option: str) -> float:
    """Epoch seconds for an ISO 8601 time or a duration back from ``now``."""
    value = text.strip()
    duration = _DURATION.fullmatch(value.lower())
    if duration:
        return now - float(duration[1]) * _UNITS[duration[2]]
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise AuditError(
            f"{option}: {text!r} is neither an ISO 8601 time (2024-05-01, 2024-05-01T12:00Z)"
            " nor a duration back from now (90m, 24h, 7d, 2w)"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def choose_buckets(name: str, first: float | None, last: float | None) -> Buckets:
    """The named buckets, or for ``auto`` the finest giving at most about 60 over the window."""
    if name != "auto":
        return BUCKETS[name]
    span = 0.0 if first is None or last is None else last - first
    if span <= 2 * 86400:
        return HOUR
    if span <= 62 * 86400:
        return DAY
    return WEEK


def iso(seconds: float | None) -> str | None:
    """Epoch seconds as ISO 8601 UTC ('...Z'), to the second."""
    if seconds is None:
        return None
    moment = datetime.fromtimestamp(seconds, UTC).replace(microsecond=0)
    return moment.isoformat().replace("+00:00", "Z")
