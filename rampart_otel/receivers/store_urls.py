"""Whether a source names a trace store (``phoenix://``, ``mlflow://``): read before any
store is, so that a command given only files does not import the stores' reading
(``receivers/stores``, which re-exports these)."""

from __future__ import annotations

from rampart_otel.lazy_regex import LazyPattern

# scheme → (store, transport)
SCHEMES = {
    "phoenix": ("phoenix", "http"),
    "phoenix+http": ("phoenix", "http"),
    "phoenix+https": ("phoenix", "https"),
    "mlflow": ("mlflow", "http"),
    "mlflow+http": ("mlflow", "http"),
    "mlflow+https": ("mlflow", "https"),
}


def is_store_url(text: object) -> bool:
    """Whether ``text`` is a store URL (any other string is a file path)."""
    if not isinstance(text, str) or "://" not in text:
        return False
    return text.split("://", 1)[0].lower() in SCHEMES


_URL_LIKE = LazyPattern(r"[A-Za-z][A-Za-z0-9+.-]+://")


def is_url_like(text: object) -> bool:
    """Whether ``text`` reads as a URL (``scheme://``) of any scheme: a file path does not."""
    return isinstance(text, str) and _URL_LIKE.match(text) is not None
