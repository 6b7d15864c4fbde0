"""Keep the scorer's checkpoint inside the segments after recovery.

The checkpoint (where the scorer resumes) is saved with the results, the segments are cut
back by ``recover`` after a torn write. When the cut goes below the checkpoint (a crash
mid-write, disk trouble), or the checkpoint names a segment that is gone, new appends land
before the checkpoint and would never be scored. So, before anything is appended, the
checkpoint is moved back to the cut (a whole-record boundary); anything between is scored
again, and runs already scored with the same spans are skipped by the scorer.

The scorer shards' own resume points (several scorer processes, ``scoring.workers``) are
dropped here too: the checkpoint is always the least of them, so every shard of the new
run resumes from it, whatever the number of shards was before; what a shard reads again
was scored already and is skipped.
"""

from __future__ import annotations

import logging
from pathlib import Path

from rampart_otel.storage.pg_results import DEFAULT_INSTANCE, PgResultsStore
from rampart_otel.storage.protocol import VerdictStore
from rampart_otel.storage.results import ResultsStore
from rampart_otel.storage.segments import list_segments

log = logging.getLogger(__name__)


def reconcile_checkpoint(
    results_db: Path,
    segments_dir: Path,
    *,
    results_url: str | None = None,
    instance: str = DEFAULT_INSTANCE,
) -> tuple[int, int] | None:
    """The checkpoint, moved back into the segments if it is past their end (call it after
    ``recover`` and before the first append); None when there is none.

    With ``results_url`` the checkpoint is ``instance``'s in that shared store, not the one
    in ``results_db``.
    """
    store: VerdictStore
    if results_url is not None:
        store = PgResultsStore(results_url, instance=instance)
    elif not results_db.exists():
        return None
    else:
        store = ResultsStore(results_db)
    try:
        # The scorer shards of the last run are gone: each new one resumes from the
        # checkpoint (the least of theirs), however many shards there were and are now.
        store.clear_shard_checkpoints()
        saved = store.checkpoint()
        if saved is None:
            return None
        seq, offset = saved
        segments = list_segments(segments_dir)
        moved: tuple[int, int] | None = None
        if not segments:
            moved = (1, 0) if saved != (1, 0) else None  # the writer starts over at 1
        else:
            newest, path = segments[-1]
            if seq > newest:
                moved = (newest, 0)
            elif seq == newest and offset > (size := path.stat().st_size):
                moved = (seq, size)  # recover left whole records only: the end is a boundary
        if moved is None:
            return saved
        with store.transaction() as txn:
            txn.set_checkpoint(*moved)
        log.warning(
            "scorer checkpoint %d@%d was past the segments' end: moved back to %d@%d",
            seq, offset, *moved,
        )  # fmt: skip
        return moved
    finally:
        store.close()


def forget_shard_checkpoints(
    results_db: Path, *, results_url: str | None = None, instance: str = DEFAULT_INSTANCE
) -> None:
    """Drop the scorer shards' own resume points once they have stopped (the store's
    checkpoint, the least of them, is all a restart reads); a store that cannot be opened
    now keeps them until the next start drops them."""
    store: VerdictStore
    if results_url is not None:
        store = PgResultsStore(results_url, instance=instance)
    elif not results_db.exists():
        return
    else:
        store = ResultsStore(results_db)
    try:
        store.clear_shard_checkpoints()
    finally:
        store.close()
