"""Channels: what a run can attest, one key per kind of evidence an evaluator reads.

The keys (``input``, ``response``, ``tool_calls``, ``tool_calls.arguments|results``,
``side_effects.<kind>``), their states and coverage types, key validation, and taking keys
as observed (``assume``) with the same integrity caps inferred coverage gets. Bottom layer:
the model, processors, evaluation and hosts all read channels through this module.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from rampart_otel.frozen import quick_init
from rampart_otel.lazy_regex import LazyPattern

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

_SIDE_EFFECT_KIND = LazyPattern(r"[A-Za-z_][A-Za-z0-9_]*")


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


class ReasonCode(StrEnum):
    """Why a channel has its state: the closed set of codes a reason carries (report@1 and
    ``inspect --json`` ``reason_codes``; docs/coverage.md's table is generated from
    ``wording.MEANINGS``). A code names the decision; the words are wording's."""

    # input
    INPUT_READ = "input.read"
    INPUT_READ_SOME = "input.read_some"
    INPUT_AGENT_ONLY_READ = "input.agent_only_read"
    INPUT_AGENT_ONLY_WITHHELD = "input.agent_only_withheld"
    INPUT_NO_MODEL_SPAN = "input.no_model_span"
    INPUT_AGENT_READ = "input.agent_read"
    INPUT_AGENT_WITHHELD = "input.agent_withheld"
    INPUT_NOT_UNDERSTOOD = "input.not_understood"
    INPUT_WITHHELD = "input.withheld"
    INPUT_NOT_RECORDED = "input.not_recorded"
    # response
    RESPONSE_AGENT_OUTPUT = "response.agent_output"
    RESPONSE_MODEL_TEXT = "response.model_text"
    RESPONSE_ENDED_ASKING_TOOLS = "response.ended_asking_tools"
    RESPONSE_NOT_READ = "response.not_read"
    RESPONSE_AGENT_NO_OUTPUT = "response.agent_no_output"
    RESPONSE_NO_SPAN = "response.no_span"
    # tool_calls
    TOOL_CALLS_EXECUTION_SPANS = "tool_calls.execution_spans"
    TOOL_CALLS_ASKED_WITHOUT_EXECUTION = "tool_calls.asked_without_execution"
    TOOL_CALLS_READ_FROM_EXECUTIONS = "tool_calls.read_from_executions"
    TOOL_CALLS_NO_SPAN = "tool_calls.no_span"
    TOOL_CALLS_AGENT_CONVERSATION = "tool_calls.agent_conversation"
    TOOL_CALLS_OUTPUTS_READ = "tool_calls.outputs_read"
    TOOL_CALLS_ASKED_UNREAD = "tool_calls.asked_unread"
    TOOL_CALLS_NO_OUTPUT_READ = "tool_calls.no_output_read"
    TOOL_CALLS_SILENT_OUTPUTS = "tool_calls.silent_outputs"
    TOOL_CALLS_FINISH_UNCLEAR = "tool_calls.finish_unclear"
    TOOL_CALLS_NO_TOOLS_ASKED = "tool_calls.no_tools_asked"
    TOOL_CALLS_REMOTE_AGENT = "tool_calls.remote_agent"
    TOOL_CALLS_RAN_ELSEWHERE = "tool_calls.ran_elsewhere"
    TOOL_CALLS_NESTED_AGENT = "tool_calls.nested_agent"
    TOOL_CALLS_AMBIGUOUS_ID = "tool_calls.ambiguous_id"
    # tool_calls.arguments and tool_calls.results
    CALLS_TOOL_CALLS_UNOBSERVED = "calls.tool_calls_unobserved"
    CALLS_NONE_SEEN = "calls.none_seen"
    CALLS_CAPTURED = "calls.captured"
    CALLS_CAPTURED_NONE = "calls.captured_none"
    CALLS_CAPTURED_SOME = "calls.captured_some"
    CALLS_TOOL_CALLS_PARTIAL = "calls.tool_calls_partial"
    # side_effects.<kind>
    SIDE_EFFECT_SEEN = "side_effect.seen"
    SIDE_EFFECT_TRANSPORT_ONLY = "side_effect.transport_only"
    SIDE_EFFECT_NONE = "side_effect.none"
    SIDE_EFFECT_UNSEEN_CALLS = "side_effect.unseen_calls"
    SIDE_EFFECT_NO_CALLS_RECORDED = "side_effect.no_calls_recorded"
    SIDE_EFFECT_ASKED_UNRUN = "side_effect.asked_unrun"
    SIDE_EFFECT_DECLARED = "side_effect.declared"
    SIDE_EFFECT_ALSO_DECLARED = "side_effect.also_declared"
    SIDE_EFFECT_SCOPE_GAPS = "side_effect.scope_gaps"
    SIDE_EFFECT_SCOPES_DECLARED = "side_effect.scopes_declared"
    SIDE_EFFECT_EVERY_TOOL_DECLARED = "side_effect.every_tool_declared"
    SIDE_EFFECT_ATTESTED = "side_effect.attested"
    # any channel
    CHANNEL_UNKNOWN = "channel.unknown"
    ASSUMED = "assumed"
    FIX = "fix"  # the channel's hint: how to close its gap
    # an integrity finding capped the channel: ``finding.<kind>`` (model.FindingKind)
    FINDING_SPLIT_RUN = "finding.split_run"
    FINDING_LOST_ROOT = "finding.lost_root"
    FINDING_PARENT_CYCLE = "finding.parent_cycle"
    FINDING_UNENDED_SPAN = "finding.unended_span"
    FINDING_DROPPED_ATTRIBUTES = "finding.dropped_attributes"
    FINDING_DROPPED_EVENTS = "finding.dropped_events"
    FINDING_NOT_UNDERSTOOD = "finding.not_understood"
    FINDING_FRAGMENT = "finding.fragment"
    FINDING_CONTINUATION = "finding.continuation"
    FINDING_REFUSED_SPAN = "finding.refused_span"
    FINDING_UNDECODABLE_SPAN = "finding.undecodable_span"
    FINDING_REPEATED_KEYS = "finding.repeated_keys"
    FINDING_CONFLICTING_COPIES = "finding.conflicting_copies"


EVIDENCE_IDS = 3  # span ids a reason code carries at most: the spans its words name first


@quick_init
@dataclass(frozen=True, slots=True)
class Reason:
    """A reason's code and the spans it is about (at most ``EVIDENCE_IDS``)."""

    code: ReasonCode
    span_ids: tuple[str, ...] = ()

    @staticmethod
    def of(code: ReasonCode, span_ids: Iterable[str] = ()) -> Reason:
        return Reason(code, tuple(list(span_ids)[:EVIDENCE_IDS]))


Words = Callable[[], tuple[list[str], str | None]]  # a channel's reasons and hint, worded


class _Worded:
    """A channel's words made at most once, on first read, however many copies read them."""

    __slots__ = ("_done", "_words")

    def __init__(self, words: Words) -> None:
        self._words: Words | None = words
        self._done: tuple[list[str], str | None] = ([], None)

    def __call__(self) -> tuple[list[str], str | None]:
        if self._words is not None:
            self._done, self._words = self._words(), None
        return self._done


class ChannelCoverage:
    """A channel's state, its reasons in words (one per code, in the same order), where it
    came from, and how to close its gap (``hint``: its ``fix`` reason's words).

    The words may be deferred (``deferred``): the decisions stay data until an output or a
    check reads ``reasons`` or ``hint``, so a run whose channels no output prints (a
    terminal overview, a check that reads one channel) words only what is read."""

    __slots__ = ("_hint", "_reasons", "_words", "codes", "source", "state")

    def __init__(
        self,
        state: ChannelState,
        reasons: list[str],
        source: CoverageSource = CoverageSource.INFERRED,
        hint: str | None = None,
        codes: list[Reason] | None = None,
    ) -> None:
        self.state = state
        self._reasons = reasons
        self.source = source
        self._hint = hint
        # One code per reason, in the same order: what each reason says, for tools to act on.
        self.codes: list[Reason] = [] if codes is None else codes
        self._words: _Worded | None = None

    @classmethod
    def deferred(
        cls, state: ChannelState, source: CoverageSource, codes: list[Reason], words: Words
    ) -> ChannelCoverage:
        """A channel whose reasons and hint ``words`` makes when first read."""
        channel = cls(state, [], source, None, codes)
        channel._words = _Worded(words)
        return channel

    def _word(self) -> None:
        if self._words is not None:
            reasons, hint = self._words()
            self._reasons, self._hint, self._words = list(reasons), hint, None

    @property
    def reasons(self) -> list[str]:
        self._word()
        return self._reasons

    @reasons.setter
    def reasons(self, value: list[str]) -> None:
        self._word()
        self._reasons = value

    @property
    def hint(self) -> str | None:
        """How to close the gap of a channel not observed (its last reason says it too)."""
        self._word()
        return self._hint

    @hint.setter
    def hint(self, value: str | None) -> None:
        self._word()
        self._hint = value

    def words(self) -> tuple[list[str], str | None]:
        """``reasons`` and ``hint``, read together (the words made first where deferred)."""
        if self._words is not None:
            self._word()
        return self._reasons, self._hint

    def copy(self) -> ChannelCoverage:
        """An independent copy (its own lists), its words still deferred when they are."""
        channel = _new_channel(ChannelCoverage)  # each slot set here (a copy per run's result)
        channel.state, channel.source, channel._hint = self.state, self.source, self._hint
        channel._reasons, channel.codes = list(self._reasons), list(self.codes)
        channel._words = self._words  # one _Worded: the words are made once for both
        return channel

    def __reduce__(self) -> tuple[type[ChannelCoverage], tuple[object, ...]]:
        """Pickled (a worker's results, a copy) with its words made: a closure does not travel."""
        return (ChannelCoverage, (self.state, self.reasons, self.source, self.hint, self.codes))

    def _key(self) -> tuple[object, ...]:
        return (self.state, self.reasons, self.source, self.hint, self.codes)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ChannelCoverage):
            return NotImplemented
        return self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]  # mutable, as the dataclass it was

    def __repr__(self) -> str:
        return (
            f"ChannelCoverage(state={self.state!r}, reasons={self.reasons!r}, "
            f"source={self.source!r}, hint={self.hint!r}, codes={self.codes!r})"
        )


_new_channel = object.__new__


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
                codes=[Reason(ReasonCode.SIDE_EFFECT_NONE)],
            )
        return ChannelCoverage(
            UNOBSERVED, [f"unknown channel {key!r}"], codes=[Reason(ReasonCode.CHANNEL_UNKNOWN)]
        )


class CoverageCap(Protocol):
    """What caps channels at partial (an integrity finding): why, and the keys it caps.

    ``channels`` holds channel keys, ``EVERY_CHANNEL`` or ``EVERY_SIDE_EFFECT``.
    """

    @property
    def message(self) -> str: ...

    @property
    def channels(self) -> list[str]: ...

    @property
    def kind(self) -> str: ...  # ``finding.<kind>`` is the code of the reason it adds

    @property
    def span_ids(self) -> list[str]: ...


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
                codes=[Reason(ReasonCode.ASSUMED)],
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
        code = Reason.of(ReasonCode(f"finding.{finding.kind}"), finding.span_ids)
        channels[key] = ChannelCoverage(
            PARTIAL, reasons, channel.source, codes=[*channel.codes, code]
        )


def _matches(key: str, patterns: list[str]) -> bool:
    for pattern in patterns:
        if pattern in (EVERY_CHANNEL, key):
            return True
        if pattern == EVERY_SIDE_EFFECT and key.startswith(SIDE_EFFECT_PREFIX):
            return True
    return False
