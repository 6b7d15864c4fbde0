"""Trace stores as sources: ``phoenix://`` and ``mlflow://`` URLs wherever trace files are read.

A store URL names the store, where it listens and which project (Phoenix) or experiment
(MLflow) to read; its query selects a window and a limit:

    phoenix://127.0.0.1:6006/default?since=2026-12-01T00:00:00Z&until=...&limit=500
    mlflow+https://mlflow.example.com/agents?limit=100

``phoenix`` and ``mlflow`` talk plain HTTP, ``phoenix+https`` and ``mlflow+https`` TLS. A
path before the last segment is the server's root path (Phoenix behind ``/s/space``). The
window and the limit select *traces* by their start time, so every trace is read whole;
``page`` sets how many traces one request lists (default 100).

Each store is read through its public REST API (``receivers/stores/phoenix.py``, ``mlflow.py``,
every request through ``receivers/stores/http.py``: bounded in time and size), a page of
traces at a time, each page's spans handed on as one batch before the next page is asked
for: memory is bounded by a page, not by the store. Credentials come
from the stores' own environment variables, never from the URL: ``PHOENIX_API_KEY``;
``MLFLOW_TRACKING_TOKEN`` or ``MLFLOW_TRACKING_USERNAME``/``MLFLOW_TRACKING_PASSWORD``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any
from urllib.parse import SplitResult, parse_qsl, unquote, urlencode, urlsplit, urlunsplit

from rampart_otel.codecs.otlp_ids import (
    RULES,
    UNDECODABLE,
    UNDECODABLE_KEY,
    in_no_trace,
    kept_spans,
    refusal_of,
    traceless,
    undecodable_why,
)
from rampart_otel.errors import UserError
from rampart_otel.model import InputError, Span
from rampart_otel.receivers.files import read_paths
from rampart_otel.receivers.store_urls import SCHEMES, is_store_url, is_url_like
from rampart_otel.render import safe_text

__all__ = [
    "Cursors",
    "StoreSource",
    "TraceStoreError",
    "adopted",
    "is_store_url",
    "is_url_like",
    "parse_store_url",
    "read_sources",
    "read_store",
    "with_window",
]

_QUERY_KEYS = ("since", "until", "limit", "page")
DEFAULT_PAGE = 100
MAX_PAGE = {"phoenix": 1000, "mlflow": 500}  # what each server accepts per request
TIMEOUT = 60.0


class TraceStoreError(UserError):
    """A trace store that cannot be read: a bad URL, a server that is down or refuses."""


@dataclass(frozen=True, slots=True)
class StoreSource:
    """A parsed store URL: which store, its base URL, the project/experiment, the window."""

    store: str  # "phoenix" or "mlflow"
    base_url: str  # http(s)://host:port[/root]
    name: str  # Phoenix project, MLflow experiment (id or name)
    since: datetime | None = None
    until: datetime | None = None
    limit: int | None = None  # traces
    page: int = DEFAULT_PAGE  # traces per request
    url: str = ""  # as the user gave it: what messages name

    def headers(self) -> dict[str, str]:
        """The store's own credentials, from its own environment variables."""
        if self.store == "phoenix":
            key = os.environ.get("PHOENIX_API_KEY")
            return {"authorization": f"Bearer {key}"} if key else {}
        token = os.environ.get("MLFLOW_TRACKING_TOKEN")
        return {"authorization": f"Bearer {token}"} if token else {}

    def auth(self) -> tuple[str, str] | None:
        """HTTP basic credentials (MLflow's basic-auth app), when both are set."""
        if self.store != "mlflow" or os.environ.get("MLFLOW_TRACKING_TOKEN"):
            return None
        user = os.environ.get("MLFLOW_TRACKING_USERNAME")
        password = os.environ.get("MLFLOW_TRACKING_PASSWORD")
        return (user, password) if user and password else None


def _split(text: str) -> SplitResult:
    try:
        return urlsplit(text)
    except ValueError as error:  # an unclosed [IPv6 address, ...
        raise TraceStoreError(f"{safe_text(text, 200)}: not a URL ({error})") from None


def parse_store_url(text: str) -> StoreSource:
    """The source a store URL names; a malformed one is a :class:`TraceStoreError`."""
    parts = _split(text)
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES:
        raise TraceStoreError(f"{text}: not a trace store URL ({', '.join(SCHEMES)})")
    store, transport = SCHEMES[scheme]
    what = "project" if store == "phoenix" else "experiment"
    if "@" in parts.netloc:  # before anything that echoes the URL
        raise TraceStoreError(
            f"{scheme}://…: credentials do not go in the URL; set "
            + ("PHOENIX_API_KEY" if store == "phoenix" else "MLFLOW_TRACKING_TOKEN")
        )
    if not parts.hostname:
        raise TraceStoreError(f"{text}: no host (e.g. {scheme}://127.0.0.1:PORT/NAME)")
    try:
        port = parts.port
    except ValueError:
        raise TraceStoreError(f"{text}: the port is not a number from 1 to 65535") from None
    segments = [s for s in parts.path.split("/") if s]
    if not segments:
        raise TraceStoreError(f"{text}: no {what} (e.g. {scheme}://HOST:PORT/NAME)")
    name = unquote(segments[-1])
    root = "/" + "/".join(segments[:-1]) if len(segments) > 1 else ""
    host = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
    netloc = host if port is None else f"{host}:{port}"
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    unknown = sorted(set(query) - set(_QUERY_KEYS))
    if unknown:
        raise TraceStoreError(
            f"{text}: unknown parameter {unknown[0]!r} (known: {', '.join(_QUERY_KEYS)})"
        )
    since = _time(query.get("since"), text, "since")
    until = _time(query.get("until"), text, "until")
    if since is not None and until is not None and until <= since:
        raise TraceStoreError(f"{text}: until is not after since")
    page = _count(query.get("page"), text, "page") or DEFAULT_PAGE
    return StoreSource(
        store=store,
        base_url=urlunsplit((transport, netloc, root, "", "")),
        name=name,
        since=since,
        until=until,
        limit=_count(query.get("limit"), text, "limit"),
        page=min(page, MAX_PAGE[store]),
        url=text,
    )


def with_window(
    url: str, *, since: datetime | None, until: datetime | None, limit: int | None
) -> str:
    """``url`` with the command line's window and limit set in its query."""
    parts = _split(url)
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    if since is not None:
        query["since"] = since.astimezone(UTC).isoformat()
    if until is not None:
        query["until"] = until.astimezone(UTC).isoformat()
    if limit is not None:
        query["limit"] = str(limit)
    return urlunsplit(parts._replace(query=urlencode(query)))


def read_store(source: StoreSource) -> Iterator[list[Span]]:
    """The source's spans, a page of whole traces per batch, oldest trace first."""
    if source.store == "phoenix":
        from rampart_otel.receivers.stores.phoenix import read_phoenix  # startup

        return read_phoenix(source)
    from rampart_otel.receivers.stores.mlflow import read_mlflow  # startup

    return read_mlflow(source)


def read_sources(
    paths: Iterable[object],
    read_files: Callable[[list[Any]], Iterable[list[Span] | InputError]] = read_paths,
) -> Iterator[list[Span] | InputError]:
    """Like ``receivers.files.read_paths`` (or ``read_files``), with store URLs read from
    their stores."""
    files: list[object] = []
    for path in paths:
        if not is_store_url(path):
            files.append(path)
            continue
        if files:
            yield from read_files(files)
            files = []
        source = parse_store_url(path)  # type: ignore[arg-type]
        for batch in read_store(source):
            kept, refused = kept_spans(batch)  # the OTLP id rule, as for files
            if refused:
                yield InputError(source.url, refusal_of(refused, len(batch)))
            if kept:
                yield kept
    if files:
        yield from read_files(files)


def adopted(spans: list[Span], trace_ids: Iterable[str]) -> list[Span]:
    """The spans a store answered for ``trace_ids``, each refused one whose own trace id
    cannot be read (in no run, as decoded) put in each of those traces as an undecodable
    placeholder: it came from one of them, so none of them may be scored as if whole."""
    lost = [span for span in spans if span.refused and in_no_trace(span)]
    if not lost:
        return spans
    ids = [t for t in dict.fromkeys(trace_ids) if _valid_trace_id(t)]
    kept = [span for span in spans if not (span.refused and in_no_trace(span))]
    for span in lost:
        why = span.attributes.get(UNDECODABLE_KEY) or RULES[span.refused]
        for trace_id in ids:
            kept.append(
                replace(
                    span,
                    trace_id=trace_id,
                    refused=UNDECODABLE,
                    attributes={UNDECODABLE_KEY: undecodable_why(why)},
                )
            )
    return kept + ([] if ids else lost)


def _valid_trace_id(text: str) -> bool:
    try:
        return not traceless(bytes.fromhex(text))
    except ValueError:
        return False


EMPTY_PAGES = 10  # pages in a row with nothing on them but a next cursor


class Cursors:
    """The cursors of one paginated listing, followed as the store names them. The answer is
    the store's: a cursor that is not text, one already followed (its pages would repeat
    without end), or a cursor after ``EMPTY_PAGES`` empty pages in a row (new cursors to
    nothing, without end) is a :class:`TraceStoreError`. A page is empty when it lists
    nothing :meth:`fresh` had not already seen: a store that lists the same traces under
    ever-new cursors reads as new cursors to nothing."""

    def __init__(self, source: StoreSource, key: str) -> None:
        self.source, self.key = source, key
        self.seen: set[str] = set()
        self.listed: set[str] = set()  # items already read from earlier pages
        self.empty = 0

    def fresh(self, ids: Iterable[str]) -> list[str]:
        """``ids`` less those already listed on an earlier page (or earlier on this one),
        in order; they are read once."""
        new = []
        for item in ids:
            if item not in self.listed:
                self.listed.add(item)
                new.append(item)
        return new

    def next(self, body: object, listed: int) -> str | None:
        """The cursor of the next page (``body[key]``) after a page of ``listed`` items, or
        None at the end."""
        cursor = body.get(self.key) if isinstance(body, dict) else None
        if cursor is None or cursor == "":
            return None
        self.empty = 0 if listed else self.empty + 1
        store = "Phoenix" if self.source.store == "phoenix" else "MLflow"
        where = f"{self.source.url}: {store} answered"
        if not isinstance(cursor, str):
            raise TraceStoreError(f"{where} a {self.key} that is not text")
        if cursor in self.seen:
            raise TraceStoreError(
                f"{where} a {self.key} it had already given (its pages would repeat without end)"
            )
        if self.empty >= EMPTY_PAGES:
            raise TraceStoreError(
                f"{where} {self.empty} empty pages in a row, each with a new {self.key}"
            )
        self.seen.add(cursor)
        return cursor


def _time(value: str | None, url: str, key: str) -> datetime | None:
    if value is None or value == "":
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00").replace(" ", "+"))
    except ValueError:
        raise TraceStoreError(f"{url}: {key}={value!r} is not an ISO 8601 time") from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _count(value: str | None, url: str, key: str) -> int | None:
    if value is None or value == "":
        return None
    if not value.isdigit() or int(value) == 0:
        raise TraceStoreError(f"{url}: {key}={value!r} is not a positive whole number")
    return int(value)
