"""Places of harm as data, and the side-effect channels as a pure function of them.

A side effect of a kind is proven absent only where every place it could have happened was
watched. The processors find the places once per run (``processors.scopes``: each executed
tool call, with the evidence of what it did) and the run-level facts the side-effect
channels stand on (the effects seen by kind, the model's transport, the processes'
declarations, what keeps the calls that ran unknown, the integrity findings): a
``RunPlaces``. ``side_effect_decisions`` turns them into each ``side_effects.<kind>``
channel's decision; the policy's ``tools:`` declarations are an ``Overlay`` applied by the
same function (``evaluation`` calls it with one), never a second reading of the run.

Decisions here are data (``reasons``); ``wording`` words them.
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from rampart_otel.channels import (
    EVERY_CHANNEL,
    EVERY_SIDE_EFFECT,
    OBSERVED,
    PARTIAL,
    SIDE_EFFECT_PREFIX,
    UNOBSERVED,
    ChannelState,
    CoverageSource,
    ReasonCode,
)
from rampart_otel.model import (
    HTTP_KIND,
    NESTED_AGENT,
    REMOTE_AGENT,
    UNPROVEN_PLACES,
    CallsUnknown,
    FindingKind,
    IntegrityFinding,
    PlaceState,
    RunPlaces,
    ScopeEvidence,
    ScopeState,
    ToolCall,
    ToolScope,
)
from rampart_otel.reasons import (
    Decision,
    Finding,
    Fix,
    Kind,
    KindEffects,
    ScopeGaps,
    Scopes,
    Service,
    Why,
)
from rampart_otel.vocabulary import STANDARD_KINDS


@dataclass(frozen=True, slots=True)
class Overlay:
    """Declarations made at policy time: the policy's ``tools:`` (tool name → what its
    side effects are: ``none`` or ``instrumented``)."""

    tools: Mapping[str, str] = field(default_factory=dict)


NO_OVERLAY = Overlay()


def place(scope: ToolScope, kind: str) -> PlaceState:
    """What the call ``scope`` stands for shows of side effects of ``kind``: the one rule
    every channel, report and view reads a place by."""
    state = scope.state
    if state is _DECLARED_SCOPE:
        return _DECLARED
    if state is _DELEGATED_SCOPE:
        return PlaceState.DELEGATED
    exempt = kind in scope.exempt_kinds or "*" in scope.exempt_kinds
    if state is _OUT_OF_PROCESS_SCOPE:
        return _DECLARED if exempt else PlaceState.OUT_OF_PROCESS
    if kind in scope.kinds:
        # A destination no request reached is a gap unless something vouches that every
        # request of the kind here was recorded: a watcher, or the process's declaration
        # (which closes the place of a call that recorded nothing just the same).
        vouched = kind in scope.attested or exempt
        unmet = scope.unmet and kind == HTTP_KIND and not vouched
        return PlaceState.UNMET if unmet else _RECORDED
    if kind in scope.attested:
        return PlaceState.ATTESTED
    if exempt:
        return _DECLARED
    return _SILENT


# The states ``place`` reads most, as module names (an enum's attribute costs more, and
# ``place`` is asked for each place and kind).
_DECLARED_SCOPE, _DELEGATED_SCOPE = ScopeState.DECLARED, ScopeState.DELEGATED
_OUT_OF_PROCESS_SCOPE, _SILENT_SCOPE = ScopeState.OUT_OF_PROCESS, ScopeState.SILENT
_DECLARED, _RECORDED, _SILENT = PlaceState.DECLARED, PlaceState.RECORDED, PlaceState.SILENT


def run_decisions(conversation: dict[str, Decision], places: RunPlaces) -> dict[str, Decision]:
    """Every channel of the run: the conversation's channels (decided by
    ``processors.coverage``) capped by the run's integrity findings, each left short of
    observed with its way to close the gap, and the side-effect channels decided from the
    places (``side_effect_decisions``)."""
    channels = dict(conversation)
    _cap_and_fix(channels, places, _conversation_gap)
    channels.update(side_effect_decisions(places))
    return channels


def _with_why(decision: Decision, why: Why, state: ChannelState | None = None) -> Decision:
    """``decision`` with one more reason, at ``state`` when given."""
    return Decision(
        decision.state if state is None else state,
        (*decision.whys, why),
        decision.source,
        decision.unread_only,
    )


def _finding_why(finding: IntegrityFinding) -> Why:
    """The reason a finding adds to each channel it caps (``finding.<kind>``)."""
    code = ReasonCode(f"finding.{finding.kind.value}")
    return Why(code, data=Finding(finding), ids=tuple(finding.span_ids))


def side_effect_decisions(places: RunPlaces, overlay: Overlay = NO_OVERLAY) -> dict[str, Decision]:
    """Every ``side_effects.<kind>`` channel the run decides, from its places: the kinds
    seen (or only in the model's transport), capped where the calls that ran are unknown,
    declared by the agent's processes, then capped by each place left unwatched for the
    kind, then by the integrity findings, each left short of observed with its way to
    close the gap. ``overlay``: the policy's declarations, applied to the places first."""
    scopes = declared_by_policy(places.scopes, overlay.tools, places.calls)
    gaps = _Gaps(scopes)
    channels = _seen(places)
    _cap_unknown_calls(places.calls_unknown, channels)
    _apply_declarations(places.declarations, channels)
    _attest(scopes, channels)
    _name_unwatched(gaps, channels)
    _cap_unwatched(scopes, gaps, channels)
    if scopes and all(scope.state is ScopeState.DECLARED for scope in scopes):
        _every_tool_declared(scopes, channels)
    _cap_and_fix(channels, places, lambda key, decision: _gap_cause(key, decision, gaps))
    return channels


def _cap_and_fix(
    channels: dict[str, Decision], places: RunPlaces, gap_cause: Callable[[str, Decision], str]
) -> None:
    """Cap ``channels`` by the run's findings (in place), then give each channel left short
    of observed its way to close the gap: the finding's cause, else ``gap_cause``'s."""
    capped_by = capped(channels, places.findings) if places.findings else {}
    hints, names = places.plan.hints, places.scope_names
    for key, decision in list(channels.items()):
        if decision.state is not OBSERVED and hints(key):
            cause = capped_by.get(key) or gap_cause(key, decision)
            channels[key] = with_fix(decision, key, cause, names)


def declared_by_policy(
    scopes: Sequence[ToolScope], tools: Mapping[str, str], calls: Sequence[ToolCall] = ()
) -> tuple[ToolScope, ...]:
    """The scopes with the policy's ``tools:`` declarations applied to the calls they name:
    by any of the call's names (``ToolCall.names``, ``calls`` indexed as the run's), else
    by the scope's tool name."""
    if not tools:
        return tuple(scopes)

    def named(scope: ToolScope) -> bool:
        names = calls[scope.call_index].names if scope.call_index < len(calls) else ()
        return any(name in tools for name in (scope.tool, *names))

    return tuple(
        dataclasses.replace(
            scope, state=ScopeState.DECLARED, evidence=ScopeEvidence.POLICY, exempt_kinds=()
        )
        if scope.state is not ScopeState.DECLARED and named(scope)
        else scope
        for scope in scopes
    )


def unproven(scopes: Sequence[ToolScope], kind: str) -> list[ToolScope]:
    """The scopes that leave side effects of ``kind`` unproven: their place for the kind is
    silent, out of process, or a destination they were handed is not met."""
    return [scope for scope in scopes if place(scope, kind) in UNPROVEN_PLACES]


class _Gaps:
    """``unproven`` of one run's scopes, each kind's found once (every kind is read by the
    channel's decision, its cap and its way to close the gap). Kinds left unproven by the
    same scopes share one tuple (and its span ids), so what is made of it (its words:
    ``wording.scope_gaps``) is made once for them all."""

    __slots__ = ("_found", "_ids", "_marked", "_unmarked", "scopes")

    def __init__(self, scopes: Sequence[ToolScope]) -> None:
        self.scopes = scopes
        self._found: dict[str, tuple[ToolScope, ...]] = {}
        self._ids: dict[int, tuple[str, ...]] = {}  # id of a found tuple (kept here) → ids
        # The kinds a scope tells apart (recorded, attested or exempt there; HTTP where a
        # destination was handed): every other kind has the same places, found once.
        self._marked = {k for s in scopes for k in (*s.kinds, *s.attested, *s.exempt_kinds)}
        if any(scope.unmet for scope in scopes):
            self._marked.add(HTTP_KIND)
        self._unmarked: tuple[ToolScope, ...] | None = None

    def of(self, kind: str) -> tuple[ToolScope, ...]:
        found = self._found.get(kind)
        if found is None and kind not in self._marked:
            found = self._unmarked
            if found is None:
                found = self._unmarked = self._unproven(kind)
            self._found[kind] = found
        if found is None:
            found = self._unproven(kind)
            for earlier in self._found.values():
                if len(earlier) == len(found) and all(map(operator.is_, earlier, found)):
                    found = earlier
                    break
            self._found[kind] = found
        return found

    def _unproven(self, kind: str) -> tuple[ToolScope, ...]:
        return tuple(
            [
                scope
                for scope in self.scopes
                if (
                    scope.state is _SILENT_SCOPE
                    and not (scope.kinds or scope.attested or scope.exempt_kinds)
                )
                or place(scope, kind) in UNPROVEN_PLACES
            ]
        )  # a silent call with nothing of any kind to vouch for it: silent for every kind

    def span_ids(self, found: tuple[ToolScope, ...]) -> tuple[str, ...]:
        """The execution span ids of ``found`` (a tuple ``of`` gave)."""
        ids = self._ids.get(id(found))
        if ids is None:
            ids = self._ids[id(found)] = tuple([scope.span_id for scope in found if scope.span_id])
        return ids


# --- findings and the ways to close a gap: every channel's, not only the side effects' ------


def capped(channels: dict[str, Decision], findings: Sequence[IntegrityFinding]) -> dict[str, str]:
    """Cap ``channels`` by each finding in turn (in place: partial, never upgrading
    unobserved); channel key → the cause of the first finding that capped it (``unread``:
    what is missing is there, unread; ``ids``, ``undecodable``, ``repeated``: what the trace
    lost; ``trace``: a channel that was observed)."""
    capped_by: dict[str, str] = {}
    for finding in findings:
        why = _finding_why(finding)
        for key, decision in list(channels.items()):
            if decision.state is UNOBSERVED or not _matches(key, finding.channels):
                continue
            channels[key] = _with_why(decision, why, PARTIAL)
            cause = _FINDING_CAUSES.get(finding.kind)
            if cause is not None:
                capped_by.setdefault(key, cause)
            elif decision.state is OBSERVED:
                capped_by.setdefault(key, "trace")
    return capped_by


_FINDING_CAUSES = {
    FindingKind.NOT_UNDERSTOOD: "unread",  # the trace holds it, in a form not understood
    FindingKind.REFUSED_SPAN: "ids",  # lost to the OTLP id rule
    FindingKind.UNDECODABLE_SPAN: "undecodable",
    FindingKind.REPEATED_KEYS: "repeated",
    FindingKind.CONFLICTING_COPIES: "conflict",  # a span sent twice, the copies unalike
}


def with_fix(decision: Decision, key: str, cause: str, scope_names: frozenset[str]) -> Decision:
    """``decision`` with its way to close the gap as its last reason (``fix``); a channel
    whose only missing content is in a form not read is closed by reading that form."""
    cause = "unread" if decision.unread_only else cause
    return _with_why(decision, _fix_why(key, cause, scope_names))


@lru_cache(maxsize=1024)
def _fix_why(key: str, cause: str, scope_names: frozenset[str]) -> Why:
    """The ``fix`` reason of ``key``'s gap: one immutable value, shared by the runs of an
    agent (the same instrumentations leave the same gaps), so its words are made once."""
    return Why(ReasonCode.FIX, data=Fix(key, cause, scope_names))


def _matches(key: str, patterns: list[str]) -> bool:
    for pattern in patterns:
        if pattern in (EVERY_CHANNEL, key):
            return True
        if pattern == EVERY_SIDE_EFFECT and key.startswith(SIDE_EFFECT_PREFIX):
            return True
    return False


# --- the side-effect channels ----------------------------------------------------------------


def _seen(places: RunPlaces) -> dict[str, Decision]:
    """A kind with a side effect of the agent's is observed; one only in the model's
    transport is not (it shows the model client's library is instrumented, not the
    agent's tools')."""
    channels: dict[str, Decision] = {}
    for kind, found in places.effects.items():
        ids = tuple(effect.span_id for effect in found)
        why = Why(ReasonCode.SIDE_EFFECT_SEEN, data=KindEffects(kind, found), ids=ids)
        channels[SIDE_EFFECT_PREFIX + kind] = Decision(OBSERVED, (why,))
    for kind, spans in places.transport.items():
        key = SIDE_EFFECT_PREFIX + kind
        if key not in channels:
            why = Why(ReasonCode.SIDE_EFFECT_TRANSPORT_ONLY, spans, Kind(kind))
            channels[key] = Decision(UNOBSERVED, (why,))
    return channels


def _cap_unknown_calls(unknown: CallsUnknown | None, channels: dict[str, Decision]) -> None:
    """Where the calls that ran are unknown, a call no place stands for may have acted
    unwatched: a kind seen elsewhere is not proven absent."""
    if unknown is None:
        return
    for key, decision in list(channels.items()):
        if key.startswith(SIDE_EFFECT_PREFIX) and decision.state is OBSERVED:
            why = Why(unknown.code, unknown.turns, Kind(key[len(SIDE_EFFECT_PREFIX) :]))
            channels[key] = _with_why(decision, why, PARTIAL)


def _apply_declarations(
    declarations: Sequence[tuple[str, str]], channels: dict[str, Decision]
) -> None:
    """``rampart.coverage`` on the agent process's resource: channels it vouches for; a
    channel observed otherwise gains the declaration as one more reason (once per service)."""
    created: set[tuple[str, str]] = set()  # (key, service) a declaration made observed
    for key, service in declarations:
        if not key.startswith(SIDE_EFFECT_PREFIX) or key == EVERY_SIDE_EFFECT:
            continue  # only side-effect channels can be declared; the rest is inferred
        current = channels.get(key)
        if current is None or current.state is not OBSERVED:
            why = Why(ReasonCode.SIDE_EFFECT_DECLARED, data=Service(service))
            channels[key] = Decision(OBSERVED, (why,), CoverageSource.DECLARED)
            created.add((key, service))
        elif (key, service) not in created:
            why = Why(ReasonCode.SIDE_EFFECT_ALSO_DECLARED, data=Service(service))
            channels[key] = _with_why(current, why)


# A place that leaves nothing of its kind unseen without a span of the kind.
_WATCHED_PLACES = frozenset({PlaceState.ATTESTED, PlaceState.DECLARED, PlaceState.DELEGATED})


def _attest(scopes: Sequence[ToolScope], channels: dict[str, Decision]) -> None:
    """A kind no span showed is observed where the watcher attests it at every place (each
    executed call, in a watched process, with nothing of the kind unexplained there; a
    declared one counts as declared): then "no span" means "none happened"."""
    kinds = {kind for scope in scopes for kind in scope.attested}
    for kind in sorted(kinds):
        key = SIDE_EFFECT_PREFIX + kind
        current = channels.get(key)
        if current is not None and current.state is not UNOBSERVED:
            continue
        if not all(place(scope, kind) in _WATCHED_PLACES for scope in scopes):
            continue
        watched = tuple(scope for scope in scopes if place(scope, kind) is PlaceState.ATTESTED)
        ids = tuple(scope.span_id for scope in watched if scope.span_id)
        why = Why(ReasonCode.SIDE_EFFECT_ATTESTED, data=ScopeGaps(kind, watched), ids=ids)
        channels[key] = Decision(OBSERVED, (why,))


def _scope_gaps(kind: str, found: tuple[ToolScope, ...], gaps: _Gaps) -> Why:
    """The reason naming ``found``, the places ``gaps`` found unproven for ``kind``."""
    data = ScopeGaps(kind, found)
    return Why(ReasonCode.SIDE_EFFECT_SCOPE_GAPS, (), data, gaps.span_ids(found))


def _name_unwatched(gaps: _Gaps, channels: dict[str, Decision]) -> None:
    """Unobserved kinds: say which tool calls could have hidden one."""
    for kind, key in _STANDARD_KEYS:
        found = gaps.of(kind)
        if not found:
            continue
        decision = channels.get(key) or _UNOBSERVED[kind]
        if decision.state is UNOBSERVED:
            channels[key] = _with_why(decision, _scope_gaps(kind, found, gaps))


def _no_span(kind: str) -> Decision:
    return Decision(UNOBSERVED, (Why(ReasonCode.SIDE_EFFECT_NONE, data=Kind(kind)),))


# The same for every run (decisions are immutable): built once per standard kind.
_UNOBSERVED = {kind: _no_span(kind) for kind in STANDARD_KINDS}
_STANDARD_KEYS = tuple((kind, SIDE_EFFECT_PREFIX + kind) for kind in STANDARD_KINDS)


def _cap_unwatched(scopes: Sequence[ToolScope], gaps: _Gaps, channels: dict[str, Decision]) -> None:
    """A kind seen is partial while a tool call's scope was not watched for it; else the
    declarations that explain the silent calls join its reasons."""
    declared = tuple(scope for scope in scopes if scope.state is ScopeState.DECLARED)
    for key, decision in list(channels.items()):
        if not key.startswith(SIDE_EFFECT_PREFIX) or decision.state is UNOBSERVED:
            continue
        kind = key[len(SIDE_EFFECT_PREFIX) :]
        found = gaps.of(kind)
        if found:
            channels[key] = _with_why(decision, _scope_gaps(kind, found, gaps), PARTIAL)
        elif declared:
            ids = tuple(scope.span_id for scope in declared if scope.span_id)
            why = Why(ReasonCode.SIDE_EFFECT_SCOPES_DECLARED, data=Scopes(declared), ids=ids)
            channels[key] = _with_why(decision, why)


def _every_tool_declared(scopes: Sequence[ToolScope], channels: dict[str, Decision]) -> None:
    """Every place a tool could act is declared: what is left is the agent's own code."""
    ids = tuple(scope.span_id for scope in scopes if scope.span_id)
    why = Why(ReasonCode.SIDE_EFFECT_EVERY_TOOL_DECLARED, data=Scopes(tuple(scopes)), ids=ids)
    declared = Decision(OBSERVED, (why,), CoverageSource.DECLARED)
    for kind in STANDARD_KINDS:
        key = SIDE_EFFECT_PREFIX + kind
        if key not in channels or channels[key].state is UNOBSERVED:
            channels[key] = declared


# The channel is short because the run does not show which tools ran.
_CALLS_UNKNOWN = (ReasonCode.SIDE_EFFECT_UNSEEN_CALLS, ReasonCode.SIDE_EFFECT_NO_CALLS_RECORDED)


# The input channel is short because no model call was recorded as a span.
_NO_MODEL_SPAN = frozenset(
    (
        ReasonCode.INPUT_NO_MODEL_SPAN,
        ReasonCode.INPUT_AGENT_ONLY_READ,
        ReasonCode.INPUT_AGENT_ONLY_WITHHELD,
    )
)


def _conversation_gap(key: str, decision: Decision) -> str:
    """Why a channel of the conversation falls short. The input channel of a run with no
    model span: the model calls were not recorded (``models``; ``models+content`` where the
    agent span's record hid its content too); otherwise content or calls went unrecorded
    (``client``: the hint is the instrumentation's capture setting)."""
    codes = {why.code for why in decision.whys}
    if ReasonCode.TOOL_CALLS_REMOTE_AGENT in codes:
        return "remote_agent"
    if ReasonCode.TOOL_CALLS_NESTED_AGENT in codes:
        return "nested_agent"
    if key == "input" and codes & _NO_MODEL_SPAN:
        # Only an agent span's record: the model calls' own spans are what is missing.
        return "models" if ReasonCode.INPUT_AGENT_ONLY_READ in codes else "models+content"
    return "client"


def _gap_cause(key: str, decision: Decision, gaps_of: _Gaps) -> str:
    """Why a side-effect channel falls short: a call could go unrecorded (``client``: no
    span of the kind, or a silent tool), the calls that ran are not known (``calls``), a
    tool ran out of process (``remote``), or the trace itself is incomplete (``trace``)."""
    if decision.state is UNOBSERVED:
        return "client"
    if any(why.code in _CALLS_UNKNOWN for why in decision.whys):
        return "calls"
    kind = key[len(SIDE_EFFECT_PREFIX) :]
    gaps = gaps_of.of(kind)
    if any(place(scope, kind) is not PlaceState.OUT_OF_PROCESS for scope in gaps):
        return "client"
    if gaps and all(scope.remote == REMOTE_AGENT for scope in gaps):
        return "remote_agent"
    if gaps and all(scope.remote == NESTED_AGENT for scope in gaps):
        return "nested_agent"
    return "remote" if gaps else "trace"
