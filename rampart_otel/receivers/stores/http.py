"""The one HTTP client both store readers (and the annotation writers) use: the store's
credentials, a timeout, and every failure as one line naming the store and what failed."""

from __future__ import annotations

from typing import Any

import httpx

from rampart_otel.receivers.stores import TIMEOUT, StoreSource, TraceStoreError

DETAIL_CHARS = 300


def client(source: StoreSource) -> httpx.Client:
    return httpx.Client(
        base_url=source.base_url,
        headers={"accept": "application/json", **source.headers()},
        auth=source.auth(),
        timeout=TIMEOUT,
    )


def call(http: httpx.Client, source: StoreSource, method: str, path: str, **kwargs: Any) -> Any:
    """The JSON body of a successful response; anything else a :class:`TraceStoreError`."""
    store = source.store.capitalize() if source.store == "phoenix" else "MLflow"
    try:
        response = http.request(method, path, **kwargs)
    except httpx.HTTPError as error:
        raise TraceStoreError(
            f"{source.url}: {store} at {source.base_url}: {type(error).__name__}: {error}"
        ) from None
    if response.status_code >= 400:
        detail = " ".join(response.text.split())[:DETAIL_CHARS]
        raise TraceStoreError(
            f"{source.url}: {store} answered {method} {path} with HTTP "
            f"{response.status_code}: {detail}"
        )
    try:
        return response.json()
    except ValueError:
        raise TraceStoreError(
            f"{source.url}: {store} answered {method} {path} with something not JSON"
        ) from None
