"""Events: the matches of a leaf evaluator as things that happened somewhere, at some time.

``before``, ``flows``, ``at_least`` and ``at_most`` reason about a leaf's matches, not only
its outcome: how many there are, where in the span tree and when each happened, and what
value each carried. A leaf lists them as ``Occurrences``: the candidates that matched, and
the ones it could not decide (a value not captured), with the reasons it gives for them.
"""

from __future__ import annotations

from abc import abstractmethod
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from rampart_otel.evaluation.evaluators.algebra import Evaluator
from rampart_otel.evaluation.evaluators.settle import described_target, settle
from rampart_otel.evaluation.matchers import MISSING
from rampart_otel.evaluation.outcome import EvalResult, Evidence
from rampart_otel.frozen import quick_init
from rampart_otel.model import AgentRun
from rampart_otel.run_graph import run_graph


class Part(StrEnum):
    """When, relative to one span, an event happened: exactly, or bounded on one side."""

    SPAN = "span"  # it lasted the span (a tool ran, a request was made)
    START = "start"  # at the span's start
    END = "end"  # at the span's end (a result, an answer, a model's request for a tool)
    AFTER_END = "after_end"  # some time after the span ended (a call that ran, no span of it)
    BY_START = "by_start"  # some time before the span started (an input the span carried)
    WITHIN = "within"  # some time inside the span (a call the span dispatched and ran)


@quick_init
@dataclass(frozen=True, slots=True)
class Moment:
    """When an event happened, as a part of one span of the run.

    ``until``: a span by whose start the event was over (a call whose result a later model
    call's input sent back). ``steps``: where in the span's own record of a conversation
    the event lies (message positions: after the first, over by the second), which orders
    the events of one span that its timestamps cannot.
    """

    span_id: str
    part: Part
    until: str | None = None
    steps: tuple[int, int] | None = None


@quick_init
@dataclass(frozen=True, slots=True)
class Occurrence:
    """One candidate a leaf considered: where it is, when, and the value ``flows`` reads.

    ``value`` is MISSING when the trace did not capture it; ``at`` is None when the trace
    does not say when it happened; ``unrecorded`` names what of it was not recorded.
    """

    evidence: Evidence
    at: Moment | None
    value: Any = MISSING
    # Fields of a side effect's payload its span did not record (a request body): a value
    # not found in ``value`` may still have left through them.
    unrecorded: tuple[str, ...] = ()


@dataclass(slots=True)
class Occurrences:
    """A leaf's candidates on one run: those that matched and those left undecided.

    ``unknown_reasons`` are the leaf's own words for the undecided ones (grouped), as its
    UNDETERMINED rationale gives them.
    """

    matches: list[Occurrence] = field(default_factory=list)
    undecided: list[Occurrence] = field(default_factory=list)
    unknown_reasons: list[str] = field(default_factory=list)


class EventEvaluator(Evaluator):
    """A leaf whose matches are events; ``evaluate`` is settled from its occurrences."""

    __slots__ = ()
    _target: str  # each subclass's dataclass field (Targeted)

    @property
    def value_channels(self) -> tuple[str, ...]:
        """The channels an occurrence's ``value`` comes from (what ``flows`` reads)."""
        return self.channels

    @abstractmethod
    def occurrences(self, run: AgentRun) -> Occurrences:
        """Every candidate of the run, matched or undecided, in the run's order."""

    @abstractmethod
    def target(self) -> str:
        """What the leaf looks for, in words."""

    def evaluate(self, run: AgentRun) -> EvalResult:
        found = self.occurrences(run)
        hits = [occurrence.evidence for occurrence in found.matches]
        return settle(run, self.channels, described_target(self), hits, found.unknown_reasons)


_EARLIEST, _LATEST = float("-inf"), float("inf")


class SpanIndex:
    """The run's spans by id, for placing events in time and in the span tree."""

    __slots__ = ("_graph",)

    def __init__(self, run: AgentRun) -> None:
        self._graph = run_graph(run.run)

    def bounds(self, moment: Moment) -> tuple[float, float, float, float] | None:
        """(earliest start, latest start, earliest end, latest end) of the moment, in ns;
        None when the trace lacks a timestamp it needs."""
        found = self._bounds(moment.span_id, moment.part)
        if found is None or moment.until is None:
            return found
        until = self._graph.span(moment.until)
        if until is None or until.start_ns is None:
            return found  # the later bound is not known: the moment's own bounds hold
        limit = until.start_ns
        earliest_start, latest_start, earliest_end, latest_end = found
        if earliest_end > limit:
            return None  # over before it began: the trace contradicts itself
        return earliest_start, min(latest_start, limit), earliest_end, min(latest_end, limit)

    def _bounds(self, span_id: str, part: Part) -> tuple[float, float, float, float] | None:
        span = self._graph.span(span_id)
        if span is None or span.start_ns is None or span.end_ns is None:
            return None
        start, end = span.start_ns, span.end_ns
        if part is Part.SPAN:
            return start, start, end, end
        if part is Part.START:
            return start, start, start, start
        if part is Part.END:
            return end, end, end, end
        if part is Part.AFTER_END:
            return end, _LATEST, end, _LATEST
        if part is Part.WITHIN:
            return start, end, start, end
        return _EARLIEST, start, _EARLIEST, start  # BY_START

    def contains(self, outer: str, inner: str) -> bool:
        """Whether span ``outer`` is ``inner`` or one of its ancestors (cycles cut)."""
        return outer == inner or self._graph.is_ancestor(outer, inner)


def happened_before(first: Occurrence, second: Occurrence, index: SpanIndex) -> bool | None:
    """Whether ``first`` was over before ``second`` began; None when the trace cannot say.

    Two spans one inside the other (or the same span) overlap: neither was before the other.
    Two events one span's record of a conversation places (``Moment.steps``) are ordered by
    it: ``first`` over by a message before the one after which ``second`` began. Otherwise
    the timestamps decide, as far as they bound each event: True when ``first`` surely
    ended at or before ``second`` started, False when it surely ended after.
    """
    if first.at is None or second.at is None:
        return None
    a, b = first.at, second.at
    if a.span_id == b.span_id and a.steps is not None and b.steps is not None:
        if a.steps[1] < b.steps[0]:
            return True
        if b.steps[1] < a.steps[0]:
            return False  # second was over before first began
        return None  # asked for in the same turn, or overlapping: not recorded
    if (
        a.part is Part.SPAN
        and b.part is Part.SPAN
        and (index.contains(a.span_id, b.span_id) or index.contains(b.span_id, a.span_id))
    ):
        return False
    first_bounds, second_bounds = index.bounds(a), index.bounds(b)
    if first_bounds is None or second_bounds is None:
        return None
    first_end_earliest, first_end_latest = first_bounds[2], first_bounds[3]
    second_start_earliest, second_start_latest = second_bounds[0], second_bounds[1]
    if first_end_latest <= second_start_earliest:
        return True
    if first_end_earliest > second_start_latest:
        return False
    return None


def order_evidence(first: Occurrence, second: Occurrence) -> Evidence | None:
    """What recorded the order of a pair ``happened_before`` put first-then-second, when it
    was not the timestamps of two spans alone: the conversation one span recorded, or a
    model call whose input sent the first's result back before the second began."""
    a, b = first.at, second.at
    if a is None or b is None:
        return None
    if a.span_id == b.span_id and a.steps is not None and b.steps is not None:
        return Evidence(
            first.evidence.trace_id,
            a.span_id,
            f"order recorded by this span's conversation: the first was over by messages["
            f"{a.steps[1]}], the second began after messages[{b.steps[0]}]",
        )
    if a.until is not None and a.part is Part.AFTER_END:
        return Evidence(
            first.evidence.trace_id,
            a.until,
            "order recorded by this model call's input: it sent the first's result back, "
            "so the first was over when this call began, before the second",
        )
    return None
