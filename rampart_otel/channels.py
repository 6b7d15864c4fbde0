"""Channels: what a run can attest, one key per kind of evidence an evaluator reads.

The keys (``input``, ``response``, ``tool_calls``, ``tool_calls.arguments|results``,
``side_effects.<kind>``), their states and coverage types, key validation, and taking keys
as observed (``assume``) with the same integrity caps inferred coverage gets. Bottom layer:
the model, processors, evaluation and hosts all read channels through this module.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

TOOL_CHANNELS = ("tool_calls", "tool_calls.arguments", "tool_calls.results")
CHANNEL_KEYS_CORE = ("input", "response", *TOOL_CHANNELS)  # every key but the side effects'
SIDE_EFFECT_PREFIX = "side_effects."
# What a model span feeds: the user's input it was sent, its answer and calls.
MODEL_CHANNELS = ("input", "response", *TOOL_CHANNELS)
# Patterns a finding caps: every channel, every side-effect kind.
EVERY_CHANNEL = "*"
EVERY_SIDE_EFFECT = SIDE_EFFECT_PREFIX + "*"
# The resource attribute an agent declares its side-effect coverage in (see ``declare``).
DECLARATION_KEY = "rampart.coverage"

_SIDE_EFFECT_KIND = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class ChannelState(StrEnum):
    OBSERVED = "observed"
    PARTIAL = "partial"
    UNOBSERVED = "unobserved"


class CoverageSource(StrEnum):
    INFERRED = "inferred"
    DECLARED = "declared"
    ASSUMED = "assumed"


class ObservabilityLevel(StrEnum):
    TOOL_AND_SIDE_EFFECTS = "tool_and_side_effects"
    TOOL_ONLY = "tool_only"
    RESPONSE_ONLY = "response_only"


OBSERVED, PARTIAL, UNOBSERVED = ChannelState.OBSERVED, ChannelState.PARTIAL, ChannelState.UNOBSERVED


@dataclass(slots=True)
class ChannelCoverage:
    state: ChannelState
    reasons: list[str]
    source: CoverageSource = CoverageSource.INFERRED
    # How to close the gap of a channel not observed (its last reason says it too).
    hint: str | None = None


@dataclass(slots=True)
class Coverage:
    """What the run can attest, per channel key; an unknown side-effect key is unobserved."""

    channels: dict[str, ChannelCoverage]
    level: ObservabilityLevel = ObservabilityLevel.RESPONSE_ONLY

    def get(self, key: str) -> ChannelCoverage:
        found = self.channels.get(key)
        if found is not None:
            return found
        if key.startswith(SIDE_EFFECT_PREFIX):
            kind = key[len(SIDE_EFFECT_PREFIX) :]
            return ChannelCoverage(
                UNOBSERVED,
                [f"no {kind} span in the run and the agent declared no {key} coverage"],
            )
        return ChannelCoverage(UNOBSERVED, [f"unknown channel {key!r}"])


class CoverageCap(Protocol):
    """What caps channels at partial (an integrity finding): why, and the keys it caps.

    ``channels`` holds channel keys, ``EVERY_CHANNEL`` or ``EVERY_SIDE_EFFECT``.
    """

    @property
    def message(self) -> str: ...

    @property
    def channels(self) -> list[str]: ...


# --- keys ----------------------------------------------------------------------------------


def is_side_effect_kind(kind: object) -> bool:
    """A kind is an identifier, so ``side_effects.<kind>`` is an unambiguous channel key."""
    return isinstance(kind, str) and _SIDE_EFFECT_KIND.fullmatch(kind) is not None


def is_channel_key(key: object) -> bool:
    """``input``, ``response``, ``tool_calls``, ``tool_calls.arguments|results``,
    ``side_effects.<kind>``."""
    if not isinstance(key, str):
        return False
    if key in CHANNEL_KEYS_CORE:
        return True
    return key.startswith(SIDE_EFFECT_PREFIX) and is_side_effect_kind(
        key[len(SIDE_EFFECT_PREFIX) :]
    )


def channel_key_error(key: object) -> str:
    """Why ``key`` is not a channel key, for policy and command-line errors."""
    return (
        f"invalid channel key {key!r}: expected one of {', '.join(CHANNEL_KEYS_CORE)} "
        "or side_effects.<kind> with <kind> an identifier"
    )


# --- states ----------------------------------------------------------------------------------


def observability_level(channels: dict[str, ChannelCoverage]) -> ObservabilityLevel:
    """RAMPART's summary: tool calls observed, plus at least one side-effect channel."""
    tool_calls = channels.get("tool_calls")
    if tool_calls is None or tool_calls.state is not OBSERVED:
        return ObservabilityLevel.RESPONSE_ONLY
    if any(
        key.startswith(SIDE_EFFECT_PREFIX) and channel.state is OBSERVED
        for key, channel in channels.items()
    ):
        return ObservabilityLevel.TOOL_AND_SIDE_EFFECTS
    return ObservabilityLevel.TOOL_ONLY


def assume(
    coverage: Coverage, keys: Iterable[str], findings: Iterable[CoverageCap] = ()
) -> Coverage:
    """Coverage with ``keys`` taken as observed (source assumed), still capped by integrity.

    The one place a channel is taken as observed, so an assumed channel is recorded as
    source ASSUMED and capped by the run's findings exactly as inferred coverage is.
    """
    channels = dict(coverage.channels)
    assumed: list[str] = []
    for key in keys:
        if coverage.get(key).state is not OBSERVED:
            channels[key] = ChannelCoverage(
                OBSERVED,
                ["assumed observed (assume_coverage in the policy or on the command line)"],
                CoverageSource.ASSUMED,
            )
            assumed.append(key)
    for finding in findings:
        cap(channels, finding, only=assumed)
    return Coverage(channels, observability_level(channels))


def cap(
    channels: dict[str, ChannelCoverage], finding: CoverageCap, only: list[str] | None = None
) -> None:
    """Lower the channels ``finding`` caps (of ``only``, when given) to partial, in place.

    Partial never upgrades unobserved; the finding's message joins the channel's reasons.
    """
    for key, channel in list(channels.items()):
        if only is not None and key not in only:
            continue
        if not _matches(key, finding.channels) or channel.state is UNOBSERVED:
            continue
        reasons = [*channel.reasons, finding.message]
        channels[key] = ChannelCoverage(PARTIAL, reasons, channel.source)


def _matches(key: str, patterns: list[str]) -> bool:
    for pattern in patterns:
        if pattern in (EVERY_CHANNEL, key):
            return True
        if pattern == EVERY_SIDE_EFFECT and key.startswith(SIDE_EFFECT_PREFIX):
            return True
    return False
