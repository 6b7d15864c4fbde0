"""The one HTTP client both store readers (and the annotation writers) use: the store's
credentials, and every request through ``bounded_http`` — done by a deadline, its answer
read up to a size cap, a redirect refused, never followed — with every failure one line
naming the store and what failed.

A store's answer is not trusted: ``httpx`` (which the readers used before) bounds each socket
read, not the request, so a store trickling its answer held the reader for as long as it
liked, and read a page of any size into memory."""

from __future__ import annotations

import base64
import json as jsonlib
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlencode

from rampart_otel.bounded_http import AnswerTooLarge, HttpFailure, request
from rampart_otel.receivers.stores import TIMEOUT, StoreSource, TraceStoreError
from rampart_otel.render import safe_text
from rampart_otel.secret_values import redact_credentials

DETAIL_CHARS = 300
MAX_ANSWER_BYTES = 64 * 1024 * 1024  # one page of a store's answer


class StoreClient:
    """Where requests go and what they carry: the base URL and the store's credentials."""

    def __init__(self, source: StoreSource) -> None:
        self.source = source
        self.headers = {"accept": "application/json", **source.headers()}
        auth = source.auth()
        if auth is not None:
            token = base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
            self.headers["authorization"] = f"Basic {token}"
        # What a store's error may echo of ours: every credential value sent, its parts too.
        sent = [v for k, v in self.headers.items() if k != "accept"]
        parts = [part for value in sent for part in value.split()[1:]]
        self.secrets = tuple(sent + parts + ([auth[1]] if auth is not None else []))


@contextmanager
def client(source: StoreSource) -> Iterator[StoreClient]:
    yield StoreClient(source)


def call(
    http: StoreClient,
    source: StoreSource,
    method: str,
    path: str,
    *,
    params: dict[str, Any] | None = None,
    json: Any = None,
) -> Any:
    """The JSON body of a successful response; anything else a :class:`TraceStoreError`."""
    store = source.store.capitalize() if source.store == "phoenix" else "MLflow"
    url = source.base_url + path
    if params:
        url += "?" + urlencode(params, doseq=True)
    headers = dict(http.headers)
    body = None
    if json is not None:
        body = jsonlib.dumps(json).encode()
        headers["content-type"] = "application/json"
    try:
        answer = request(
            method,
            url,
            body,
            headers,
            deadline=time.monotonic() + TIMEOUT,
            max_bytes=MAX_ANSWER_BYTES,
        )
    except AnswerTooLarge as error:
        raise TraceStoreError(
            f"{source.url}: {store} answered {method} {path} with {error}"
            + ("; a smaller page=N may help" if "page=" not in source.url else "")
        ) from None
    except HttpFailure as error:
        raise TraceStoreError(f"{source.url}: {store} at {source.base_url}: {error}") from None
    if not answer.ok:
        text = redact_credentials(answer.body.decode("utf-8", "replace"), http.secrets)
        detail = safe_text(" ".join(text.split()), DETAIL_CHARS)
        raise TraceStoreError(
            f"{source.url}: {store} answered {method} {path} with HTTP {answer.status}: {detail}"
        )
    try:
        return jsonlib.loads(answer.body)
    except (ValueError, RecursionError):
        raise TraceStoreError(
            f"{source.url}: {store} answered {method} {path} with something not JSON"
        ) from None
