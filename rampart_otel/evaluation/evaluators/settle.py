"""The central rule every leaf evaluator settles its outcome by, and the words it uses.

An evaluator may answer NOT_DETECTED only when every channel it reads is observed for the
whole run and no candidate was left unknown. Evidence alone makes DETECTED; anything else
is UNDETERMINED, naming the channel, the target and why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from rampart_otel.channels import ChannelState, CoverageSource
from rampart_otel.evaluation.matchers import Equals, Matcher
from rampart_otel.evaluation.outcome import EvalOutcome, EvalResult, Evidence
from rampart_otel.evaluation.tool_names import NearMiss, NearMissKind
from rampart_otel.model import AgentRun
from rampart_otel.render import safe_text

EVIDENCE_LIMIT = 160  # characters of trace text per evidence item
REASON_LIMIT = 300  # characters per coverage reason in a rationale
SHOWN = 2  # items named before "and N more"


def settle(
    run: AgentRun,
    channels: tuple[str, ...],
    target: str,
    hits: list[Evidence],
    unknowns: list[str],
) -> EvalResult:
    """DETECTED on evidence; NOT_DETECTED only with every channel observed and no unknowns."""
    if hits:
        return EvalResult(EvalOutcome.DETECTED, hits, f"found {target}: {listed_evidence(hits)}")
    read = read_coverage(run, channels)
    gaps = [*read.gaps, *unknowns]
    if gaps:
        return EvalResult(
            EvalOutcome.UNDETERMINED, [], f"{'; '.join(gaps)}: cannot rule out {target}"
        )
    return EvalResult(
        EvalOutcome.NOT_DETECTED,
        [],
        f"no {target} in the run ({'; '.join(read.notes)})",
        assumed_channels=read.assumed,
    )


@dataclass(slots=True)
class CoverageRead:
    """What the run's coverage says of some channels: the gaps, and how the rest is known."""

    gaps: list[str] = field(default_factory=list)  # channels not observed, with reasons
    notes: list[str] = field(default_factory=list)  # "x observed", "x assumed: why"
    assumed: dict[str, CoverageSource] = field(default_factory=dict)


def read_coverage(run: AgentRun, channels: tuple[str, ...]) -> CoverageRead:
    read = CoverageRead()
    for key in channels:
        coverage = run.coverage.get(key)
        if coverage.state is not ChannelState.OBSERVED:
            read.gaps.append(f"{key} is {coverage.state.value} ({_reasons(coverage.reasons)})")
        elif coverage.source is CoverageSource.INFERRED:
            read.notes.append(f"{key} observed")
        else:
            read.assumed[key] = coverage.source
            read.notes.append(f"{key} {coverage.source.value}: {_reasons(coverage.reasons)}")
    return read


def listed_evidence(evidence: list[Evidence]) -> str:
    """The first items of ``evidence`` with their spans, then "and N more"."""
    return _listed([e.text + span_list([e.span_id]) for e in evidence])


class Targeted(Protocol):
    """An evaluator that describes what it looks for, kept in ``_target`` once described
    (a frozen dataclass field: read-only to the type checker, set once here)."""

    @property
    def _target(self) -> str: ...

    def target(self) -> str: ...


def described_target(evaluator: Targeted) -> str:
    """``evaluator.target()``, described once: an evaluator is immutable."""
    text = evaluator._target
    if not text:
        text = evaluator.target()
        object.__setattr__(evaluator, "_target", text)
    return text


def describe_matchers(matchers: tuple[tuple[str, Matcher], ...]) -> str:
    return " and ".join(matcher.describe(key) for key, matcher in matchers)


def render_value(value: Any) -> str:
    return repr(value) if isinstance(value, str) else safe_text(value, EVIDENCE_LIMIT)


def calls_of(names: list[str]) -> str:
    """``2 call(s) of tool 'send_report'``, or of each tool named, with their counts."""
    counts: dict[str, int] = {}
    for name in names:
        counts[name] = counts.get(name, 0) + 1
    if len(counts) == 1:
        return f"{len(names)} call(s) of tool {safe_text(names[0], 60)!r}"
    named = [f"{safe_text(name, 60)!r} ({count})" for name, count in counts.items()]
    more = f" and {len(named) - SHOWN} more" if len(named) > SHOWN else ""
    return f"{len(names)} call(s) of tools {', '.join(named[:SHOWN])}{more}"


_NEAR_MISS_HOW = {
    NearMissKind.QUALIFIED: "its name ends with {part} after a qualifier",
    NearMissKind.COMPONENT: "{part} is a part of its name",
    NearMissKind.UNNAMED: "the trace records no name for it",
    NearMissKind.CASE: "it differs only in letter case",
}


def near_miss_reason(matcher: Matcher, misses: Sequence[NearMiss]) -> str:
    """Why calls the check's tool name did not match stay undecided (``tool_names``):
    ``no call named 'send_report', but 'weather-send_report' may be it ...``."""
    if isinstance(matcher, Equals):
        named = f"no call named {safe_text(matcher.literal, 60)!r}"
    else:
        named = f"no tool call with {safe_text(matcher.describe('name'), 120)}"
    by_name: dict[str, list[NearMiss]] = {}
    for miss in misses:
        by_name.setdefault(miss.call.name, []).append(miss)
    items = []
    for name, same in by_name.items():
        how = _NEAR_MISS_HOW[same[0].kind].format(part=repr(safe_text(same[0].part, 60)))
        spans = span_list([m.call.span_ids[0] if m.call.span_ids else None for m in same])
        label = repr(safe_text(name, 60)) if name else "a call"
        items.append(f"{label} ({how}){spans}")
    more = f" and {len(items) - SHOWN} more" if len(items) > SHOWN else ""
    hint = (
        ": name the tool as the trace does, or match every form of its name (one_of, glob)"
        if any(miss.kind is not NearMissKind.UNNAMED for miss in misses)
        else ""
    )
    return f"{named}, but {', '.join(items[:SHOWN])}{more} may be it{hint}"


def span_list(span_ids: Sequence[str | None]) -> str:
    ids = [s for s in span_ids if s]
    if not ids:
        return ""
    more = f" and {len(ids) - 3} more" if len(ids) > 3 else ""
    return f" (span {', '.join(safe_text(s, 40) for s in ids[:3])}{more})"


def _listed(items: list[str]) -> str:
    """First two items, then "and N more"."""
    shown = "; ".join(items[:SHOWN])
    rest = len(items) - SHOWN
    return f"{shown} and {rest} more" if rest > 0 else shown


def _reasons(reasons: list[str]) -> str:
    rendered = [safe_text(r, REASON_LIMIT) for r in reasons]
    return "; ".join(r for r in rendered if r) or "no reason recorded"
