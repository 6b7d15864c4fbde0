"""--since/--until: ISO 8601 (UTC unless an offset is given) or a duration back from now;
trend buckets on whole UTC hours, days and Monday-started weeks."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from rampart_otel.audit.timespec import DAY, HOUR, WEEK, choose_buckets, iso, parse_time
from rampart_otel.errors import AuditError

NOW = datetime(2024, 5, 8, 12, 30, tzinfo=UTC).timestamp()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("24h", NOW - 86400),
        ("7d", NOW - 7 * 86400),
        ("90m", NOW - 5400),
        ("2w", NOW - 14 * 86400),
        ("30s", NOW - 30),
        ("1.5h", NOW - 5400),
        ("2024-05-01", datetime(2024, 5, 1, tzinfo=UTC).timestamp()),
        ("2024-05-01T12:00Z", datetime(2024, 5, 1, 12, tzinfo=UTC).timestamp()),
        ("2024-05-01T12:00:00", datetime(2024, 5, 1, 12, tzinfo=UTC).timestamp()),
        ("2024-05-01T14:00+02:00", datetime(2024, 5, 1, 12, tzinfo=UTC).timestamp()),
    ],
)
def test_times_and_durations(text, expected):
    assert parse_time(text, NOW, "--since") == pytest.approx(expected)


@pytest.mark.parametrize("text", ["yesterday", "24", "h", "-1d", "2024-13-01", ""])
def test_anything_else_is_a_one_line_error_naming_the_option(text):
    with pytest.raises(AuditError) as raised:
        parse_time(text, NOW, "--until")
    assert str(raised.value).startswith("--until: ")
    assert "\n" not in str(raised.value)


def test_auto_buckets_follow_the_window_and_named_ones_win():
    assert choose_buckets("auto", NOW - 86400, NOW) is HOUR
    assert choose_buckets("auto", NOW - 30 * 86400, NOW) is DAY
    assert choose_buckets("auto", NOW - 365 * 86400, NOW) is WEEK
    assert choose_buckets("auto", None, None) is HOUR
    assert choose_buckets("week", NOW - 60, NOW) is WEEK


def test_weeks_start_on_monday_and_days_at_utc_midnight():
    wednesday = datetime(2024, 5, 8, 15, tzinfo=UTC).timestamp()
    index = int((wednesday - WEEK.origin) // WEEK.width)
    assert iso(WEEK.start(index)) == "2024-05-06T00:00:00Z"  # a Monday
    assert iso(DAY.start(int(wednesday // DAY.width))) == "2024-05-08T00:00:00Z"
    assert iso(None) is None
