"""Verdicts into a results store (SQLite ``results.db`` or the shared PostgreSQL one), as
rows the collector and ``rescore`` write alike: :func:`result_rows`, and
:class:`ResultsStoreSink` for a pipeline whose runs are already stored (``rescore``).

Here, above both, because a row holds the report@1 entry (``exporters.report_json``) and
goes to ``storage``; the collector's scorer writes its rows in the transaction that also
moves its checkpoint (``scorer.Scorer``), with these same rows.
"""

from __future__ import annotations

from collections.abc import Sequence

from rampart_otel.evaluation import CheckResult
from rampart_otel.exporters.report_json import stored_entries
from rampart_otel.sinks import Closing, Scored, SinkDefaults
from rampart_otel.storage import queries as q
from rampart_otel.storage.protocol import VerdictStore
from rampart_otel.storage.results import ResultRow

BATCH_RUNS = 200  # runs per write transaction: short enough not to stall a live scorer


def result_rows(results: list[CheckResult], *, revision: int, scored_at: float) -> list[ResultRow]:
    """One run revision's results as the results stores keep them: their report@1 entries
    (no JSON text: the store packs a run revision's documents together, ``storage.documents``)."""
    return [
        ResultRow(
            result.run_id,
            revision,
            result.policy or "",
            result.check_id,
            result.status.value,
            result.service,
            result.started_at_ns,
            scored_at,
            document,
            policy_version=result.policy_version,
        )
        for result, document in zip(
            results, stored_entries(results, revision=revision), strict=True
        )
    ]


class ResultsStoreSink(SinkDefaults):
    """The results of runs the store already holds (each run's ``revision`` as stored),
    written ``batch_runs`` runs per transaction; a result without a start time keeps the
    audit time its run already has. ``verdicts`` counts the rows written by status."""

    def __init__(self, store: VerdictStore, *, batch_runs: int = BATCH_RUNS) -> None:
        self.store = store
        self.batch_runs = batch_runs
        self.verdicts: dict[str, int] = {}
        self._rows: list[ResultRow] = []
        self._runs = 0

    def prepare(self, scored: Scored) -> list[ResultRow]:
        return result_rows(scored.results, revision=scored.run.revision, scored_at=scored.scored_at)

    def write(self, batch: Sequence[list[ResultRow]]) -> None:
        for rows in batch:
            for row in rows:
                if row.started_at_ns is None:  # keep the run where the audit already has it
                    row.run_at = q.run_time(self.store.db, row.run_id, row.revision)
                self.verdicts[row.status] = self.verdicts.get(row.status, 0) + 1
            self._rows.extend(rows)
            self._runs += 1
            if self._runs >= self.batch_runs:
                self._flush()

    def close(self, closing: Closing) -> None:
        self._flush()

    def _flush(self) -> None:
        if self._rows:
            with self.store.transaction() as txn:
                for row in self._rows:
                    txn.add_result(row)
        self._rows.clear()
        self._runs = 0
