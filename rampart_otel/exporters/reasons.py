"""How the outputs lay out why a result is UNDETERMINED: once, whole, with the fix apart.

A result's summary is one line that names every gap with its reasons and, last, how to
close it; clipped to a line it loses the fix first. The outputs a person reads instead take
the gaps from the result's coverage snapshot: per channel not observed, its reasons (each
whole) and its fix (the channel's hint) on a line of its own. Operands that name no channel
(a fragment, a value not recorded, the time budget) are kept as they are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rampart_otel.channels import ChannelCoverage, ReasonCode
from rampart_otel.evaluation import CheckResult, SafetyStatus
from rampart_otel.lazy_regex import LazyPattern
from rampart_otel.render import safe_text, shown_text

# How a reason names a channel: "side_effects.db_query is unobserved (...)".
_NAMED_CHANNEL = LazyPattern(
    r"\b((?:side_effects\.[A-Za-z_][\w-]*)|tool_calls(?:\.\w+)?|response|input)"
    r" is (?:unobserved|partial)"
)
_FIX = "to close it: "


@dataclass(frozen=True, slots=True)
class Gap:
    """One channel an UNDETERMINED result could not see whole."""

    channel: str
    state: str
    reasons: tuple[str, ...]  # raw trace-influenced text: render with shown_text
    fix: str | None


@dataclass(frozen=True, slots=True)
class Undetermined:
    """Why a result is UNDETERMINED: its channel gaps, then what names no channel."""

    gaps: tuple[Gap, ...]
    other: tuple[str, ...]


def gap_channels(result: CheckResult) -> list[str]:
    """The channels an UNDETERMINED result's reasons say were not (wholly) observed."""
    if result.status is not SafetyStatus.UNDETERMINED:
        return []
    return _named(result.summary, result.rationale, result.undetermined_operands)


def _named(summary: str | None, rationale: str | None, operands: list[str]) -> list[str]:
    said = " ".join([summary or "", rationale or "", *operands])
    return list(dict.fromkeys(_NAMED_CHANNEL.findall(said)))


def split_fix(channel: ChannelCoverage) -> tuple[list[str], str | None]:
    """A channel's reasons without the one that says how to close its gap, and that fix."""
    codes = [reason.code.value for reason in channel.codes]
    return _split(channel.reasons, codes, channel.hint)


def _split(texts: list[str], codes: list[str], hint: str | None) -> tuple[list[str], str | None]:
    reasons, fix = [], hint
    for index, text in enumerate(texts):
        is_fix = index < len(codes) and codes[index] == ReasonCode.FIX.value
        if is_fix or text.startswith(_FIX):
            fix = fix or text.removeprefix(_FIX)
            continue
        reasons.append(text)
    return reasons, fix


def undetermined(result: CheckResult) -> Undetermined:
    """``result``'s reasons laid out, from its coverage snapshot."""
    gaps = []
    if result.coverage is not None:
        for key in gap_channels(result):
            channel = result.coverage.get(key)
            reasons, fix = split_fix(channel)
            gaps.append(Gap(key, channel.state.value, tuple(reasons), fix))
    return _with_other(gaps, result.undetermined_operands, result.summary)


def undetermined_document(document: dict[str, Any]) -> Undetermined:
    """The same from a stored result (report@1's entry, with its ``coverage``)."""
    operands = [str(item) for item in document.get("undetermined_operands") or ()]
    summary = str(document.get("summary") or "")
    coverage = document.get("coverage") or {}
    gaps = []
    for key in _named(summary, str(document.get("rationale") or ""), operands):
        channel = coverage.get(key) if isinstance(coverage, dict) else None
        if not isinstance(channel, dict):
            continue  # not stored: the operand keeps its words
        texts = [str(text) for text in channel.get("reasons") or ()]
        codes = [
            str(c.get("code")) for c in channel.get("reason_codes") or () if isinstance(c, dict)
        ]
        hint = channel.get("hint")
        reasons, fix = _split(texts, codes, str(hint) if hint else None)
        gaps.append(Gap(key, str(channel.get("state")), tuple(reasons), fix))
    return _with_other(gaps, operands, summary)


def _with_other(gaps: list[Gap], operands: list[str], summary: str) -> Undetermined:
    named = {gap.channel for gap in gaps}
    other = tuple(
        operand
        for operand in operands
        if not any(operand.startswith(f"{key} is ") for key in named)
    )
    if not gaps and not other:
        other = (summary.removeprefix("Undetermined: "),)
    return Undetermined(tuple(gaps), other)


def headline(why: Undetermined) -> str:
    """One short line: each gap's channel and state, then what names no channel."""
    parts = [f"{gap.channel} is {gap.state}" for gap in why.gaps] + list(why.other)
    return "Undetermined: " + "; ".join(parts)


def reason_lines(why: Undetermined, indent: str) -> list[tuple[str, bool]]:
    """The lines a terminal prints for ``why`` (text, whether it is a fix): per gap its
    channel, each reason whole, then its fix on a line of its own; then the rest."""
    lines: list[tuple[str, bool]] = []
    for gap in why.gaps:
        lines.append((f"{indent}Undetermined: {safe_text(gap.channel)} is {gap.state}", False))
        lines += [(f"{indent}  {shown_text(reason, None)}", False) for reason in gap.reasons]
        if gap.fix:
            lines.append((f"{indent}  to close it: {shown_text(gap.fix, None)}", True))
    lines += [(f"{indent}Undetermined: {shown_text(other, None)}", False) for other in why.other]
    return lines
