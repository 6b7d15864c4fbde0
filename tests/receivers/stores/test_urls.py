"""Store URLs: what they name, and one-line errors for what they cannot."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from rampart_otel.receivers.stores import (
    TraceStoreError,
    is_store_url,
    is_url_like,
    parse_store_url,
    with_window,
)


def test_a_phoenix_url_names_the_server_and_the_project() -> None:
    source = parse_store_url("phoenix://127.0.0.1:6006/my%20project")
    assert (source.store, source.base_url, source.name) == (
        "phoenix",
        "http://127.0.0.1:6006",
        "my project",
    )
    assert (source.since, source.until, source.limit, source.page) == (None, None, None, 100)


def test_https_and_a_root_path() -> None:
    source = parse_store_url("phoenix+https://app.example.com/s/space/default?limit=5&page=5000")
    assert (source.base_url, source.name, source.limit) == (
        "https://app.example.com/s/space",
        "default",
        5,
    )
    assert source.page == 1000  # Phoenix's largest page
    assert parse_store_url("mlflow+https://ml.example.com/7").base_url == "https://ml.example.com"


def test_the_window_reads_back_as_given() -> None:
    since = datetime(2026, 12, 1, tzinfo=UTC)
    url = with_window("mlflow://h:5000/agents", since=since, until=None, limit=3)
    source = parse_store_url(url)
    assert (source.since, source.until, source.limit) == (since, None, 3)
    assert parse_store_url("mlflow://h:1/x?since=2026-12-01").since == since


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("phoenix://127.0.0.1:6006", "no project"),
        ("mlflow://127.0.0.1:5000/", "no experiment"),
        ("phoenix:///default", "no host"),
        ("phoenix://h:port/default", "the port is not a number"),
        ("mlflow://user:secret@h:5000/x", "credentials do not go in the URL"),
        ("mlflow://token-secret@/x", "credentials do not go in the URL"),
        ("phoenix://h:1/p?limit=0", "limit='0' is not a positive whole number"),
        ("phoenix://h:1/p?since=yesterday", "since='yesterday' is not an ISO 8601 time"),
        ("phoenix://h:1/p?since=2026-12-02&until=2026-12-01", "until is not after since"),
        ("phoenix://h:1/p?project=x", "unknown parameter 'project'"),
        ("phoenix://[::1/p", "not a URL"),
        ("phoenix://h:99999/p", "the port is not a number from 1 to 65535"),
        ("phoenixx://h:1/p", "not a trace store URL"),
    ],
)
def test_malformed_urls_are_one_line(url: str, message: str) -> None:
    with pytest.raises(TraceStoreError, match=message) as raised:
        parse_store_url(url)
    assert "\n" not in str(raised.value) and "secret" not in str(raised.value)


def test_only_the_store_schemes_are_store_urls() -> None:
    assert is_store_url("phoenix://h:1/p") and is_store_url("MLFLOW+HTTPS://h/p")
    assert not is_store_url("samples/traces") and not is_store_url("https://h/p")


def test_a_url_of_an_unknown_scheme_is_named_as_such() -> None:
    assert is_url_like("phoenixx://h:1/p") and is_url_like("http://h/p")
    assert not is_url_like("samples/traces") and not is_url_like("C:\\traces")


def test_with_window_of_a_malformed_url_is_one_line() -> None:
    with pytest.raises(TraceStoreError, match="not a URL"):
        with_window("phoenix://[::1/p", since=None, until=None, limit=3)
