"""``at_least`` and ``at_most``: how many matches an event evaluator has in the run."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from rampart_otel.evaluation.evaluators.algebra import Evaluator
from rampart_otel.evaluation.evaluators.before import event_operand
from rampart_otel.evaluation.evaluators.events import EventEvaluator
from rampart_otel.evaluation.evaluators.settle import (
    EVIDENCE_LIMIT,
    calls_of,
    described_target,
    listed_evidence,
    near_miss_reason,
    read_coverage,
    span_list,
)
from rampart_otel.evaluation.evaluators.tool_called import ToolCalled, arguments_text
from rampart_otel.evaluation.outcome import EvalOutcome, EvalResult, Evidence
from rampart_otel.evaluation.tool_names import NearMiss, named_calls
from rampart_otel.model import AgentRun, ToolCall
from rampart_otel.render import safe_text


@dataclass(frozen=True, slots=True)
class Count(Evaluator):
    """At least / at most ``n`` matches of ``inner``.

    The count is known between the matches found (``k``) and, when every channel ``inner``
    reads is observed, ``k`` plus the undecided candidates; with a channel not observed
    there is no upper bound. ``at_least(n)``: DETECTED when ``k >= n``, NOT_DETECTED when
    the upper bound is below ``n``. ``at_most(n)`` is its mirror: NOT_DETECTED when
    ``k > n``, DETECTED when the upper bound is at most ``n``. Otherwise UNDETERMINED.
    """

    n: int
    inner: EventEvaluator
    most: bool  # at_most when True, else at_least
    _target: str = field(default="", init=False, repr=False, compare=False)

    @property
    def channels(self) -> tuple[str, ...]:
        return self.inner.channels

    def target(self) -> str:
        bound = "at most" if self.most else "at least"
        return f"{bound} {self.n} of {described_target(self.inner)}"

    def evaluate(self, run: AgentRun) -> EvalResult:
        found = self.inner.occurrences(run)
        read = read_coverage(run, self.channels)
        low = len(found.matches)
        high = None if read.gaps else low + len(found.undecided)
        evidence = [o.evidence for o in found.matches]
        counted = f"{low} found" + (f": {listed_evidence(evidence)}" if evidence else "")
        reached = low > self.n if self.most else low >= self.n
        ruled_out = high is not None and (high <= self.n if self.most else high < self.n)
        target = described_target(self)
        if reached:  # at_least: enough found; at_most: too many found
            outcome = EvalOutcome.NOT_DETECTED if self.most else EvalOutcome.DETECTED
            return EvalResult(outcome, evidence, f"{target} {_verb(outcome)}: {counted}")
        if ruled_out:
            outcome = EvalOutcome.DETECTED if self.most else EvalOutcome.NOT_DETECTED
            known = "; ".join(read.notes)
            return EvalResult(
                outcome,
                evidence if outcome is EvalOutcome.DETECTED else [],
                f"{target} {_verb(outcome)}: {counted}, at most {high} possible ({known})",
                assumed_channels=read.assumed,
            )
        gaps = [*read.gaps, *found.unknown_reasons]
        return EvalResult(
            EvalOutcome.UNDETERMINED,
            [],
            f"{'; '.join(gaps)}: cannot tell whether {target} ({counted})",
        )

    def __repr__(self) -> str:
        return f"{'at_most' if self.most else 'at_least'}({self.n}, {self.inner!r})"


def _verb(outcome: EvalOutcome) -> str:
    return "holds" if outcome is EvalOutcome.DETECTED else "does not hold"


def at_least(n: int, inner: Evaluator, /) -> Count:
    """At least ``n`` (>= 1) matches of ``inner``."""
    return Count(_count(n, "at_least", 1), event_operand(inner, "at_least", "second"), most=False)


def at_most(n: int, inner: Evaluator, /) -> Count:
    """At most ``n`` (>= 0) matches of ``inner``."""
    return Count(_count(n, "at_most", 0), event_operand(inner, "at_most", "second"), most=True)


def _count(n: object, function: str, least: int) -> int:
    if not isinstance(n, int) or isinstance(n, bool) or n < least:
        raise ValueError(f"{function}()'s count must be a whole number >= {least}, not {n!r}")
    return n


@dataclass(frozen=True, slots=True)
class Repeated(Evaluator):
    """The same call (one tool, the same arguments) made at least ``n`` times: a loop.

    Calls are grouped by tool name and arguments (their JSON, keys sorted). A call whose
    arguments were not captured could belong to any group of its tool: it counts toward
    each of them in the upper bound, never toward a match. DETECTED when a group has ``n``
    calls; NOT_DETECTED when ``tool_calls`` and ``tool_calls.arguments`` are observed and
    no group can reach ``n``; otherwise UNDETERMINED.
    """

    n: int
    inner: ToolCalled
    _target: str = field(default="", init=False, repr=False, compare=False)

    @property
    def channels(self) -> tuple[str, ...]:
        return ("tool_calls", "tool_calls.arguments")

    def target(self) -> str:
        inner = described_target(self.inner)
        return f"call ({inner}) repeated {self.n} times or more with the same arguments"

    def evaluate(self, run: AgentRun) -> EvalResult:
        groups: dict[tuple[str, str], list[ToolCall]] = {}
        unknown: Counter[str] = Counter()
        maybe: list[NearMiss] = []
        for call, miss in named_calls(self.inner.name, run.tool_calls):
            if miss is not None:  # it may be the tool: it counts toward the bound only
                maybe.append(miss)
                unknown[call.name] += 1
                continue
            if call.arguments is None or not call.arguments_captured:
                unknown[call.name] += 1
                continue
            groups.setdefault((call.name, arguments_text(call.arguments)), []).append(call)
        target = described_target(self)
        largest = max(groups.values(), key=len, default=[])
        if len(largest) >= self.n:
            evidence = [
                Evidence(call.trace_id, call.span_ids[0] if call.span_ids else None, "")
                for call in largest
            ]
            first = largest[0]
            text = safe_text(f"{first.name}({arguments_text(first.arguments)})", EVIDENCE_LIMIT)
            evidence = [Evidence(e.trace_id, e.span_id, text) for e in evidence]
            spans = span_list([e.span_id for e in evidence])
            return EvalResult(
                EvalOutcome.DETECTED, evidence, f"{target}: {len(largest)} calls of {text}{spans}"
            )
        read = read_coverage(run, self.channels)
        names = set(unknown) | {name for name, _ in groups}
        high = max(
            (
                max((len(c) for (n, _), c in groups.items() if n == name), default=0)
                + unknown[name]
                for name in names
            ),
            default=0,
        )
        if not read.gaps and high < self.n:
            return EvalResult(
                EvalOutcome.NOT_DETECTED,
                [],
                f"no {target}: at most {high} possible ({'; '.join(read.notes)})",
                assumed_channels=read.assumed,
            )
        gaps = list(read.gaps)
        uncaptured = unknown - Counter(miss.call.name for miss in maybe)
        if uncaptured:
            gaps.append(f"arguments not captured on {calls_of(list(uncaptured.elements()))}")
        if maybe:
            gaps.append(near_miss_reason(self.inner.name, maybe))
        return EvalResult(
            EvalOutcome.UNDETERMINED,
            [],
            f"{'; '.join(gaps)}: cannot tell whether {target} (largest group: {len(largest)})",
        )

    def __repr__(self) -> str:
        return f"repeated({self.n}, {self.inner!r})"


def repeated(n: int, inner: Evaluator, /) -> Repeated:
    """The same call of ``inner``'s tools (name and arguments) at least ``n`` (>= 2) times;
    ``inner`` is ``tool_called(name)`` without argument matchers."""
    if not isinstance(inner, ToolCalled) or inner.reads_arguments:
        raise TypeError(
            "repeated() counts calls of a tool with the same arguments: its second argument "
            "is tool_called(name), without argument matchers"
        )
    return Repeated(_count(n, "repeated", 2), inner)
