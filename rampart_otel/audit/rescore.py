"""``rampart-otel rescore``: the stored runs evaluated again under a policy version.

The spans are read back from the data directory's segments (``read_paths``), grouped into
runs as the collector grouped them (``assemble``): that is this host's source
(``StoredRuns``). The one ``Pipeline`` scores them (``scorer.evaluator_for``) into the
results store (``results_sink.ResultsStoreSink``, the collector's own result rows), so a
re-scored verdict differs from the stored one only where the policy does.

Each run is re-scored exactly as its latest stored revision was scored: with that
revision's span set, under that revision number. New rows are keyed by the policy version;
the earlier version's verdicts stay. A run already scored under this version is skipped,
so an interrupted re-score resumes, and running it again after more traffic scores only
the new runs. It can run beside a live collector (both write through SQLite's lock, or
PostgreSQL's advisory lock when ``--results`` names the store the collectors share).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from rampart_otel.audit.command import open_results
from rampart_otel.collector.results_sink import BATCH_RUNS, ResultsStoreSink
from rampart_otel.collector.scorer import evaluator_for, keep_judge_cache_in
from rampart_otel.engine import checked_assumptions, fewer_young_collections, load_policies
from rampart_otel.model import InputError, Run, Span, add_copy, copies_held
from rampart_otel.pipeline import Pipeline, ReadStats
from rampart_otel.processors.assemble import DEFAULT_IDLE_SPANS, GroupBy
from rampart_otel.processors.stitch import assemble
from rampart_otel.receivers.files import read_paths
from rampart_otel.run_graph import scored_ids
from rampart_otel.storage import queries as q
from rampart_otel.storage.protocol import VerdictStore
from rampart_otel.storage.results import unpack_span_ids, version_text
from rampart_otel.storage.segments import list_segments
from rampart_otel.storage.store import open_results_store

__all__ = ["BATCH_RUNS", "RescoreStats", "StoredRuns", "rescore"]


@dataclass(slots=True)
class RescoreStats:
    rescored: int = 0
    already: int = 0  # scored under this version before
    unscored: int = 0  # runs in the segments the collector never scored (still open, no policy)
    spans_missing: int = 0  # stored runs only some of whose spans are left in the segments
    not_in_segments: int = 0  # stored runs none of whose spans are left (retention)
    input_errors: int = 0
    verdicts: dict[str, int] = field(default_factory=dict)


def rescore(
    data_dir: Path,
    policy_path: Path,
    assume_coverage: list[str],
    out: IO[str],
    results: str | None = None,
) -> None:
    """Spans from ``data_dir``'s segments; verdicts in its results.db, or at ``results``."""
    (policy,) = load_policies([policy_path])
    checked_assumptions(assume_coverage, option="--assume-coverage", policies=[policy])
    keep_judge_cache_in([policy], data_dir)
    pipeline = evaluator_for([policy], assume_coverage)
    open_results(data_dir if results is None else results).close()  # readable, migrated
    segments = [path for _, path in list_segments(data_dir / "segments")]
    store = open_results_store(data_dir if results is None else results)
    try:
        with fewer_young_collections():
            stats = _rescore(
                store, segments, pipeline, policy.name,
                version_text(policy.version),
            )  # fmt: skip
    finally:
        store.close()
    label = policy.name if policy.version is None else f"{policy.name} v{policy.version}"
    _report(stats, label, out, shared=results is not None)
    if policy.judge_client is not None:  # what the judge(...) checks cost
        judge = policy.judge_client.stats
        out.write(
            f"  judge: {judge.calls} calls, {judge.prompt_tokens} prompt and "
            f"{judge.completion_tokens} completion tokens, {judge.cache_hits} cache hits, "
            f"{judge.failures} failures\n"
        )


def _rescore(
    store: VerdictStore,
    segments: list[Path],
    pipeline: Pipeline,
    policy: str,
    version: str,
    idle_spans: int = DEFAULT_IDLE_SPANS,
) -> RescoreStats:
    """Re-score every stored run the segments hold; ``idle_spans`` as ``score`` assembles."""
    source = StoredRuns(store, segments, policy, version, idle_spans)
    sink = ResultsStoreSink(store, batch_runs=BATCH_RUNS)
    pipeline.with_sinks([sink]).run(source)
    stats = source.rescore
    stats.verdicts = sink.verdicts
    stats.spans_missing = len(source.pending)
    seen = stats.rescored + stats.already + stats.spans_missing
    stats.not_in_segments = max(q.stored_run_count(store.db) - seen, 0)
    return stats


class StoredRuns:
    """The source: each stored run not yet scored under ``policy`` ``version``, with its
    latest stored revision's span set and number, read from the segments."""

    def __init__(
        self,
        store: VerdictStore,
        segments: list[Path],
        policy: str,
        version: str,
        idle_spans: int = DEFAULT_IDLE_SPANS,
    ) -> None:
        self.store = store
        self.segments = segments
        self.policy = policy
        self.version = version
        self.idle_spans = idle_spans
        self.stats = ReadStats()
        self.rescore = RescoreStats()
        # Spans so far of runs short of their set, and copies conflicting with them.
        self.pending: dict[str, tuple[dict[str, Span], dict[str, list[Span]]]] = {}

    def runs(self) -> Iterator[Run]:
        db = self.store.db
        stats = self.rescore
        group_by: GroupBy = "session" if q.session_runs(db) else "trace"
        handled: set[str] = set()  # each run once, however many pieces the assembler emits
        pending = self.pending
        assembled = assemble(self._batches(), group_by=group_by, idle=self.idle_spans)
        for run in assembled:
            if run.run_id in handled:
                continue
            stored = q.latest_run(db, run.run_id)
            if stored is None:
                stats.unscored += 1
                handled.add(run.run_id)
                continue
            if q.has_results(db, run.run_id, stored.revision, self.policy, self.version):
                stats.already += 1
                handled.add(run.run_id)
                pending.pop(run.run_id, None)
                continue
            spans, others = pending.pop(run.run_id, ({}, {}))
            for span in run.spans:  # as the assembler merges a span sent twice
                add_copy(spans, others, span)
            wanted = unpack_span_ids(stored.span_ids)
            held = Run(run.run_id, stored.trace_ids, copies_held(spans, others))
            if not wanted <= {bytes.fromhex(span_id) for span_id in scored_ids(held)}:
                pending[run.run_id] = spans, others  # a late part of the run is further on
                continue
            exact = [span for span in held.spans if bytes.fromhex(span.span_id) in wanted]
            handled.add(run.run_id)
            stats.rescored += 1
            yield Run(run.run_id, stored.trace_ids, exact, run.session_id, stored.revision)

    def _batches(self) -> Iterator[list[Span]]:
        for item in read_paths(self.segments):
            if isinstance(item, InputError):
                self.rescore.input_errors += 1
                self.stats.errors.append(item)
                print(f"rampart-otel: warning: {item.location}: {item.message}", file=sys.stderr)
                continue
            self.stats.spans += len(item)
            yield item


def _report(stats: RescoreStats, label: str, out: IO[str], *, shared: bool = False) -> None:
    verdicts = stats.verdicts
    counts = ", ".join(f"{verdicts.get(s, 0)} {s}" for s in ("safe", "unsafe", "undetermined"))
    lines = [
        f"rampart-otel rescore: {stats.rescored} runs re-scored under {label} "
        f"({counts}, {verdicts.get('error', 0)} error)"
    ]
    if stats.already:
        lines.append(
            f"  {stats.already} runs already had verdicts of {label} and were left as they are"
            " (to re-evaluate changed checks, raise the policy's version)"
        )
    # A shared store holds every collector's runs; each collector's segments, its own.
    missing = stats.spans_missing + (0 if shared else stats.not_in_segments)
    if missing:
        lines.append(
            f"  {missing} stored runs could not be re-scored: their spans are no longer (all) in"
            " the segments; their earlier verdicts stay"
        )
    if shared and stats.not_in_segments:
        lines.append(
            f"  {stats.not_in_segments} stored runs have no spans in this data directory's"
            " segments (scored by another collector sharing the store, or removed by"
            " retention): rescore each collector's data directory; their verdicts stay"
        )
    if stats.unscored:
        lines.append(f"  {stats.unscored} runs in the segments were never scored; skipped")
    if stats.input_errors:
        lines.append(f"  {stats.input_errors} unreadable records in the segments (see above)")
    out.write("\n".join(lines) + "\n")
