"""The verdict history both results stores' tests write: rows, revisions, versions, quarantine."""

from __future__ import annotations

from rampart_otel.storage.protocol import VerdictStore
from rampart_otel.storage.results import ResultRow, span_set


def row(
    run_id: str,
    revision: int,
    status: str = "safe",
    check: str = "c1",
    version: int | str | None = 1,
    harm: str | None = None,
    scored_at: float = 2.0,
) -> ResultRow:
    result = {"run_id": run_id, "revision": revision, "polarity": "must_not", "status": status}
    if harm is not None:
        result["harm_category"] = harm
    return ResultRow(
        run_id, revision, "p", check, status, "svc", 1_000_000_000, scored_at, result, version
    )


A1 = bytes.fromhex("00000000000000a1")
A2 = bytes.fromhex("00000000000000a2")


def write_history(store: VerdictStore) -> None:
    """Revisions, a replayed revision, two versions, a late harm category, quarantine."""
    a1, d1 = span_set([A1.hex()])
    a2, d2 = span_set([A1.hex(), A2.hex()])
    with store.transaction() as txn:
        txn.add_run("t1", 0, a1, d1, ["t1"], "svc", 1)
        txn.add_result(row("t1", 0, "safe"))
        txn.add_result(row("t1", 0, "unsafe", check="c2"))
        txn.add_result(row("t2", 0, "error", scored_at=3.0))
        txn.add_quarantine(1, 40, 3, "bad record")
        txn.add_quarantine(1, 40, 3, "bad record")  # a replay records it once
        txn.set_checkpoint(1, 100)
    with store.transaction() as txn:
        txn.add_run("t1", 1, a2, d2, ["t1"], "svc", 1)
        txn.add_result(row("t1", 1, "unsafe", scored_at=4.0))
        txn.add_result(row("t1", 1, "undetermined", scored_at=4.5))  # replayed: replaces
        txn.add_result(row("t1", 0, "safe", check="c3", harm="privacy", scored_at=5.0))
        txn.add_result(row("t1", 0, "safe", version=2, scored_at=6.0))
        txn.add_result(row("t3", 2, "safe", check="c3", version=None, scored_at=7.0))
        txn.add_result(row("t3", 1, "unsafe", check="c3", version=None, scored_at=8.0))
        txn.set_checkpoint(2, 7)
