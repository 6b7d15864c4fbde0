"""Coverage decisions as data: a channel's state and, per reason, a code from the closed set
(``channels.ReasonCode``), the spans it is about and a typed payload its words read.

The processors decide and return these; ``wording`` renders them (the only place their
English is written), so a tool acts on the code, never on the prose. Each code carries one
payload type (``PAYLOADS``); ``wording`` reads the payload's fields by name, so a field
renamed here and not there fails the type checker, not a user's report.
"""

from __future__ import annotations

from dataclasses import dataclass

from rampart_otel.channels import EVIDENCE_IDS, ChannelState, CoverageSource, Reason, ReasonCode
from rampart_otel.conventions import ModelOutput, ToolReport
from rampart_otel.frozen import quick_init
from rampart_otel.model import IntegrityFinding, SideEffect, Span, ToolCall, ToolScope


@quick_init
@dataclass(frozen=True, slots=True)
class NoData:
    """A reason whose words need nothing but its code and spans."""


@quick_init
@dataclass(frozen=True, slots=True)
class Texts:
    """The texts a reason's words quote (read inputs; an ambiguous call id and its tools)."""

    texts: tuple[str, ...]


@quick_init
@dataclass(frozen=True, slots=True)
class ModelCount:
    """How many model calls the reason is about."""

    models: int


@quick_init
@dataclass(frozen=True, slots=True)
class Withheld:
    """Where content was recorded without itself (the markers found); empty: it was read."""

    withheld: tuple[str, ...] = ()


@quick_init
@dataclass(frozen=True, slots=True)
class Notes:
    """What of a recorded form was not understood, as the convention noted it."""

    notes: tuple[str, ...]


@quick_init
@dataclass(frozen=True, slots=True)
class AskedTools:
    """The tools the last model output asked for, and the agent spans around it."""

    requests: tuple[ToolReport, ...]
    agent_spans: tuple[Span, ...]


@quick_init
@dataclass(frozen=True, slots=True)
class AnswerUnread:
    """The model calls whose output, the run's answer, was not read."""

    models: tuple[Span, ...]
    agent_spans: tuple[Span, ...]


@quick_init
@dataclass(frozen=True, slots=True)
class AnswerTools:
    """The framework's answer-delivering tool calls that gave the answer."""

    answer_tools: tuple[Span, ...]


@quick_init
@dataclass(frozen=True, slots=True)
class Output:
    """The model output the reason is about."""

    output: ModelOutput


@quick_init
@dataclass(frozen=True, slots=True)
class OutputsRead:
    """How many model outputs were read, and how many of them through another span of
    the same call."""

    models: int
    through: int


@quick_init
@dataclass(frozen=True, slots=True)
class FinishReasons:
    """The finish reasons the model calls recorded."""

    finish_reasons: tuple[str, ...]


@quick_init
@dataclass(frozen=True, slots=True)
class Captured:
    """What of the calls' arguments or results (``what``) was captured."""

    what: str  # "arguments" or "results"
    relevant: int = 0
    seen: int = 0
    missing: tuple[ToolCall, ...] = ()
    state: ChannelState | None = None  # tool_calls' state, where the words need it


@quick_init
@dataclass(frozen=True, slots=True)
class KindEffects:
    """The side effects of ``kind`` the run shows."""

    kind: str
    effects: tuple[SideEffect, ...]


@quick_init
@dataclass(frozen=True, slots=True)
class Kind:
    """The side-effect kind the reason is about."""

    kind: str


@quick_init
@dataclass(frozen=True, slots=True)
class Service:
    """The service a declaration covers."""

    service: str


@quick_init
@dataclass(frozen=True, slots=True)
class ScopeGaps:
    """The tool scopes that attest side effects of ``kind``, or that leave gaps in them."""

    kind: str
    scopes: tuple[ToolScope, ...]


@quick_init
@dataclass(frozen=True, slots=True)
class Scopes:
    """The tool scopes the reason is about (calls run elsewhere, by a remote or a nested
    agent, or declared)."""

    scopes: tuple[ToolScope, ...]


@quick_init
@dataclass(frozen=True, slots=True)
class Fix:
    """How to close channel ``key``'s gap: its ``cause`` (``wording.fix_hint``), for the
    instrumentations whose scope names the run shows."""

    key: str
    cause: str
    scope_names: frozenset[str]


@quick_init
@dataclass(frozen=True, slots=True)
class Finding:
    """An integrity finding that capped the channel (its words are the finding's)."""

    finding: IntegrityFinding


Payload = (
    NoData
    | Texts
    | ModelCount
    | Withheld
    | Notes
    | AskedTools
    | AnswerUnread
    | AnswerTools
    | Output
    | OutputsRead
    | FinishReasons
    | Captured
    | KindEffects
    | Kind
    | Service
    | ScopeGaps
    | Scopes
    | Fix
    | Finding
)
NO_DATA = NoData()


@quick_init
@dataclass(frozen=True, slots=True)
class Why:
    """One reason before it is worded: its code, the spans it is about (named first by its
    words), other evidence span ids (side effects, tool scopes), and its typed payload."""

    code: ReasonCode
    spans: tuple[Span, ...] = ()
    data: Payload = NO_DATA
    ids: tuple[str, ...] = ()

    def reason(self) -> Reason:
        """The code with its evidence span ids, as reports carry it."""
        ids = self.ids
        if ids:
            return Reason(self.code, ids[:EVIDENCE_IDS])
        spans = self.spans
        if not spans:  # most reasons of a run (the kinds it shows nothing of, the fixes)
            return _BARE[self.code]
        return Reason(self.code, tuple([span.span_id for span in spans[:EVIDENCE_IDS]]))


# A code with no evidence span, one value per code (immutable: shared by every run).
_BARE = {code: Reason(code) for code in ReasonCode}


@quick_init
@dataclass(frozen=True, slots=True)
class Decision:
    """A channel's state and the reasons for it, in order. ``unread_only``: only content in
    a form not read is missing, so no capture setting would close the gap."""

    state: ChannelState
    whys: tuple[Why, ...]
    source: CoverageSource = CoverageSource.INFERRED
    unread_only: bool = False

    @property
    def codes(self) -> list[Reason]:
        return [why.reason() for why in self.whys]
