"""Which results store a command writes to or reads: a data directory's ``results.db``
(the default) or a PostgreSQL database several collectors share, named by its URL."""

from __future__ import annotations

from pathlib import Path

from rampart_otel.errors import StoreError
from rampart_otel.storage.pg_results import (
    DEFAULT_INSTANCE,
    PgResultsStore,
    is_postgres_url,
    redacted,
)
from rampart_otel.storage.protocol import VerdictStore
from rampart_otel.storage.results import ResultsStore, open_reader


def open_results_store(
    target: Path | str, *, instance: str = DEFAULT_INSTANCE, readonly: bool = False
) -> VerdictStore:
    """A data directory's ``results.db`` (as ``ResultsStore`` opens it), or the PostgreSQL
    store at a ``postgresql://`` URL with ``instance``'s checkpoint.

    ``readonly`` opens as ``open_reader`` does: an older schema is migrated first.
    Raises StoreError for a target that is neither, or a server that cannot be reached.
    """
    if is_postgres_url(target):
        return PgResultsStore(str(target), instance=instance, readonly=readonly)
    if isinstance(target, str):  # a URL given on the command line or in the configuration
        scheme = target.split("://", 1)[0] + "://" if "://" in target else "a path"
        raise StoreError(
            f"{redacted(target)}: a results URL is postgresql://, not {scheme}"
            " (a data directory's results.db is chosen with --data-dir)"
        )
    path = Path(target) / "results.db"
    return open_reader(path) if readonly else ResultsStore(path)


def describe(target: Path | str) -> str:
    """The store as messages and reports name it (no password)."""
    return redacted(target) if isinstance(target, str) else str(target)
