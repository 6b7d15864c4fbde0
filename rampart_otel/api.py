"""One call from Python: trace files, or SDK spans already in memory, → verdicts.

``rampart_otel.score_files`` and ``rampart_otel.score_spans`` read, assemble and score
exactly as ``rampart-otel score`` does (the same :class:`~rampart_otel.pipeline.Pipeline`,
into a sink that keeps the results), so a test and the command line give the same verdicts
on the same trace.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import get_args

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan

from rampart_otel.codecs.otlp_proto import spans_from_proto
from rampart_otel.engine import checked_assumptions
from rampart_otel.errors import DataError, EmptyInput, PolicyError, UsageError
from rampart_otel.evaluation import CheckResult, Policy, load_policy
from rampart_otel.model import InputError, Run
from rampart_otel.pipeline import FileSource, Pipeline, RunList, RunSource
from rampart_otel.processors.assemble import GroupBy
from rampart_otel.processors.stitch import assemble
from rampart_otel.reading import Paths, path_list
from rampart_otel.render import safe_text
from rampart_otel.sinks import ResultList

PolicySource = Policy | str | os.PathLike[str]
ERRORS_NAMED = 3
ALLOW_EMPTY = "allow_empty=True"


class TraceReadError(DataError):
    """Trace files that could not all be read; ``errors`` lists every line or file skipped."""

    def __init__(self, errors: Sequence[InputError]) -> None:
        self.errors = list(errors)
        named = "; ".join(f"{e.location}: {e.message}" for e in self.errors[:ERRORS_NAMED])
        more = len(self.errors) - ERRORS_NAMED
        super().__init__(
            f"{len(self.errors)} input errors: {named}" + (f"; and {more} more" if more > 0 else "")
        )


def score_files(
    paths: Paths,
    policy: PolicySource,
    *,
    assume_coverage: Iterable[str] = (),
    group_by: GroupBy = "trace",
    allow_empty: bool = False,
) -> list[CheckResult]:
    """Every check of ``policy`` on every run in ``paths`` (files or directories, any form the
    file reader takes: OTLP, Tempo, Jaeger, Zipkin v2 JSON, the SDK's console output; or trace
    stores: ``phoenix://HOST:PORT/PROJECT``, ``mlflow://HOST:PORT/EXPERIMENT``, the window in
    the query: ``?since=2026-12-01T00:00:00Z&until=...&limit=N``).

    Raises :class:`TraceReadError` if any line or file could not be read: a verdict list that
    silently left part of the input out would read as safer than the trace was; and
    :class:`~rampart_otel.errors.PolicyError` (one line) for a policy or an
    ``assume_coverage`` key that cannot be used, before anything is read. Input with no span
    at all raises :class:`~rampart_otel.errors.EmptyInput`, as ``score`` exits 2 on it (an
    empty list of results would pass ``for result in results: assert result``), unless
    ``allow_empty``. Arguments of the wrong type are one
    :class:`~rampart_otel.errors.UsageError` (a policy's, a PolicyError).
    """
    chosen = policy_of(policy)
    assumed = checked_assumptions(assume_coverage, option="assume_coverage", policies=[chosen])
    source = FileSource(path_list(paths), group_by=_grouping(group_by))
    results = _scored(source, chosen, assumed)
    if source.stats.errors:
        raise TraceReadError(source.stats.errors)
    if source.stats.spans == 0 and not allow_empty:
        raise EmptyInput(ALLOW_EMPTY)
    return results


def score_spans(
    spans: Iterable[ReadableSpan],
    policy: PolicySource,
    *,
    assume_coverage: Iterable[str] = (),
    group_by: GroupBy = "trace",
    one_run: str | None = None,
    stitch: bool = True,
    allow_empty: bool = False,
) -> list[CheckResult]:
    """Every check of ``policy`` on every run the finished SDK ``spans`` make up (errors as
    :func:`score_files`, no span at all included; ``one_run``, ``stitch`` as for
    :func:`span_runs`)."""
    chosen = policy_of(policy)
    assumed = checked_assumptions(assume_coverage, option="assume_coverage", policies=[chosen])
    runs = span_runs(spans, group_by=group_by, one_run=one_run, stitch=stitch)
    if not runs and not allow_empty:
        raise EmptyInput(ALLOW_EMPTY)
    return _scored(RunList(runs), chosen, assumed)


def _scored(source: RunSource, policy: Policy, assume: list[str]) -> list[CheckResult]:
    """Every result of ``policy`` on the runs of ``source``, through the one pipeline."""
    kept = ResultList()
    Pipeline([policy], [kept], assume=assume).run(source)
    return kept.results


def span_runs(
    spans: Iterable[ReadableSpan],
    *,
    group_by: GroupBy = "trace",
    one_run: str | None = None,
    stitch: bool = True,
) -> list[Run]:
    """The runs finished SDK spans make up, read as an OTLP exporter would send them.

    ``one_run``: every span is one run with that id, whatever trace it is in (the pytest
    plugin's test: an agent traced only at the SDK level starts a trace per model call and
    per tool, and the test is what holds them together). ``stitch=False``: one run per
    trace, the pieces of one agent's work left apart (``processors.stitch``).
    """
    group_by = _grouping(group_by)
    sdk_spans = _span_list(spans)
    if not sdk_spans:
        return []
    # Through the real OTLP encoder and our decoder: the spans are read exactly as if the
    # agent had exported them to a file or a collector.
    read = spans_from_proto(encode_spans(sdk_spans))
    if one_run is not None:
        trace_ids = list(dict.fromkeys(span.trace_id for span in read))
        return [Run(one_run, trace_ids, read)]
    return list(assemble([read], group_by=group_by, stitch=stitch))


def policy_of(policy: PolicySource) -> Policy:
    """``policy`` itself, or the policy file it names; anything else is a PolicyError (an
    int would be opened as a file descriptor: 0, standard input)."""
    if isinstance(policy, Policy):
        return policy
    problem = policy_type_problem(policy)
    if problem:
        raise PolicyError("policy", None, None, problem)
    return load_policy(policy)


def policy_type_problem(policy: object) -> str | None:
    """What is wrong with ``policy``'s type, if anything: a Policy or a path is due."""
    if isinstance(policy, Policy | str | os.PathLike):
        return None
    return _wrong_type(policy, _POLICY_TYPES)


_POLICY_TYPES = "a Policy or the path of a policy file (str or os.PathLike)"
_SPAN_TYPES = "the SDK's finished spans (ReadableSpan), an iterable of them"


def _wrong_type(value: object, expected: str) -> str:
    return f"{expected}, not {type(value).__name__}"


def _span_list(spans: Iterable[ReadableSpan]) -> list[ReadableSpan]:
    if isinstance(spans, str | bytes) or not isinstance(spans, Iterable):
        raise UsageError(f"spans: {_wrong_type(spans, _SPAN_TYPES)}")
    listed = list(spans)
    for span in listed:
        if not isinstance(span, ReadableSpan):
            raise UsageError(f"spans: {_wrong_type(span, _SPAN_TYPES)}")
        if span.end_time is None:  # live: what runs under it is not in the trace yet
            raise UsageError(
                f"spans: {safe_text(repr(span.name), 80)} (span "
                f"{span.context.span_id if span.context else 0:016x}) has not ended: "
                "score finished spans (an exporter's, after the agent is done)"
            )
    return listed


def _grouping(group_by: GroupBy) -> GroupBy:
    if group_by not in get_args(GroupBy):
        raise UsageError(f"group_by is trace or session, not {group_by!r}")
    return group_by
