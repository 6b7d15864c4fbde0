"""Wire-independent data types that flow through the pipeline.

Hot-path types are plain slotted classes (decode and normalize build millions of them);
pydantic validates at the boundaries (policy files, configuration).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from rampart_otel.channels import Coverage, ReasonCode
from rampart_otel.scoring_plan import FULL_READING, ScoringPlan

AttrValue = Any  # str | int | float | bool | bytes | None | list[AttrValue] | dict[str, AttrValue]
Attributes = dict[str, AttrValue]


class Ambiguous(str):
    """A detail that parsers read differently (a URL's host: ``conventions.side_effects``):
    the reading a client acts on, as a string, and every reading in ``readings``. A check
    matches it when it matches any reading (``evaluation.matchers.all_match``): an
    allow-list never passes it, a deny-list entry that any parser reads still matches."""

    readings: tuple[str, ...]

    def __new__(cls, value: str, readings: tuple[str, ...]) -> Ambiguous:
        made = super().__new__(cls, value)
        made.readings = readings
        return made

    def __reduce__(self) -> tuple[type[Ambiguous], tuple[str, tuple[str, ...]]]:
        return Ambiguous, (str(self), self.readings)


@dataclass(slots=True)
class Resource:
    """The resource a span's process recorded (``service.name`` among its attributes)."""

    attributes: Attributes
    dropped_attributes_count: int = 0

    @property
    def service_name(self) -> str | None:
        value = self.attributes.get("service.name")
        return value if isinstance(value, str) else None


@dataclass(slots=True)
class Scope:
    """The instrumentation scope that recorded a span: which library wrote it."""

    name: str = ""
    version: str = ""
    # Not empty when the scope is unknown: the trace form named here does not carry it
    # (the Python SDK's console output, a Zipkin or Jaeger file without ``otel.scope.name``).
    lost_by: str = ""


@dataclass(slots=True)
class Event:
    """A span event, as recorded (an exception, a streamed chunk, a GenAI message)."""

    name: str
    time_ns: int | None
    attributes: Attributes
    dropped_attributes_count: int = 0


@dataclass(slots=True)
class Link:
    """A span's link to another span, possibly in another trace."""

    trace_id: str
    span_id: str
    attributes: Attributes


class SpanKind(StrEnum):
    """OTLP span kinds, in the protocol's numbering (0 = UNSPECIFIED)."""

    UNSPECIFIED = "UNSPECIFIED"
    INTERNAL = "INTERNAL"
    SERVER = "SERVER"
    CLIENT = "CLIENT"
    PRODUCER = "PRODUCER"
    CONSUMER = "CONSUMER"


class StatusCode(StrEnum):
    """OTLP status codes, in the protocol's numbering (0 = UNSET)."""

    UNSET = "UNSET"
    OK = "OK"
    ERROR = "ERROR"


@dataclass(slots=True)
class Span:
    """One OTLP span; ids are lowercase hex, ``end_ns`` is None for a span never ended."""

    trace_id: str
    span_id: str
    parent_span_id: str | None
    name: str
    kind: SpanKind
    start_ns: int | None
    end_ns: int | None
    status_code: StatusCode
    status_message: str
    attributes: Attributes
    events: list[Event]
    links: list[Link]
    resource: Resource
    scope: Scope
    dropped_attributes_count: int = 0
    dropped_events_count: int = 0
    dropped_links_count: int = 0
    flags: int = 0  # W3C trace flags (bits 0-7); bit 8: bit 9 is set; bit 9: parent is remote
    # Attributes whose values the exporter of the span's form may have cut short (a Zipkin
    # exporter's tag length limit).
    cut_keys: tuple[str, ...] = ()
    # Where the span was read: ``path:line``, ``path@offset`` or ``path`` (as an InputError
    # about it would name it); empty for spans that did not come from a file.
    source: str = ""
    # Not empty for a span refused for its ids (``codecs.otlp_ids.IdProblem``): a placeholder
    # with its ids and times only, kept so that its run shows what it lost.
    refused: str = ""
    # Attribute keys the span (or one of its events) recorded more than once with different
    # values. OTLP keys MUST be unique: the decoders keep the last value, and which one the
    # instrumentation meant (or a backend read) is not known.
    repeated_keys: tuple[str, ...] = ()
    # Who sent the span to a collector: its tenant, and the client (``codecs.sender``);
    # empty for spans read from a file or handed to the API. Spans of two tenants are
    # never in one run (``processors.assemble``).
    tenant: str = ""
    sender: str = ""

    @property
    def parent_is_local(self) -> bool | None:
        """Whether the parent span was in the same process, when the exporter says (OTLP 1.1)."""
        if not self.flags & 0x100:
            return None
        return not self.flags & 0x200


class StitchReason(StrEnum):
    """Why a trace was joined to a run it did not start (``processors.stitch``)."""

    CONTINUATION = "continuation"  # its model input history holds calls the run asked for
    TIME_WINDOW = "time_window"  # a fragment of the same service inside the run's time


@dataclass(frozen=True, slots=True)
class Stitch:
    """One trace joined to a run: which, why, and the call ids that linked it (if any)."""

    trace_id: str
    how: StitchReason
    via: str = ""


def replaces(known: Span | None, new: Span) -> bool:
    """The one rule for a span sent twice (an exporter's retry, a span re-sent once ended):
    ``new`` takes the place of the ``known`` copy unless that one had already ended.
    Which copy is kept never decides alone: copies that say different things are
    ``conflicting``, and both are kept in the run (``add_copy``) for its graph to report."""
    return known is None or known.end_ns is None


def conflicting(known: Span, new: Span) -> bool:
    """Two copies of one span (same trace, same span id) that cannot both be what was
    recorded: anything they both say differs. A copy sent before the span ended may lack
    what was recorded later (its end, status, attributes set and events added since), but
    what it does say must hold in the ended copy. Where each copy came from (file, client)
    is not compared: the same span read twice is not a conflict."""
    if (
        known.parent_span_id != new.parent_span_id
        or known.name != new.name
        or known.kind != new.kind
        or known.start_ns != new.start_ns
        or known.links != new.links
        or known.resource.attributes != new.resource.attributes
        or known.scope.name != new.scope.name
        or known.scope.version != new.scope.version
        or known.refused != new.refused
    ):
        return True
    if known.end_ns is not None and new.end_ns is not None:
        return (
            known.end_ns != new.end_ns
            or known.status_code != new.status_code
            or known.status_message != new.status_message
            or known.attributes != new.attributes
            or known.events != new.events
            or known.flags != new.flags
            or known.dropped_attributes_count != new.dropped_attributes_count
            or known.dropped_events_count != new.dropped_events_count
        )
    early, late = (known, new) if known.end_ns is None else (new, known)
    attributes = late.attributes
    return (
        any(
            key not in attributes or attributes[key] != value
            for key, value in early.attributes.items()
        )
        or early.events != late.events[: len(early.events)]
    )


def add_copy(kept: dict[str, Span], others: dict[str, list[Span]], span: Span) -> bool:
    """Add ``span`` to spans kept by id (``replaces`` decides between two copies); a copy
    that conflicts with the one it meets goes to ``others`` too (once however often it is
    sent), so a run holds both and its graph reports the conflict: the first copy never
    wins silently. True when a conflicting copy was added to ``others``."""
    known = kept.get(span.span_id)
    if known is None:
        kept[span.span_id] = span
        return False
    if replaces(known, span):
        kept[span.span_id] = span
        known, span = span, known  # ``span``: the copy not kept
    if not conflicting(known, span):
        return False
    copies = others.setdefault(span.span_id, [])
    if any(not conflicting(copy, span) for copy in copies):
        return False
    copies.append(span)
    return True


def copies_held(kept: dict[str, Span], others: dict[str, list[Span]]) -> list[Span]:
    """The spans of ``add_copy``'s two maps: each span kept, then the conflicting copies."""
    spans = list(kept.values())
    for copies in others.values():
        spans.extend(copies)
    return spans


def copy_id(span: Span) -> str:
    """An 8-byte id (hex) for one copy of a span that another copy conflicts with: what it
    says and who sent it. A run's span set names each conflicting copy by it beside the span
    ids (``run_graph.scored_ids``), so a conflicting copy arriving after its run
    was scored is new evidence, and replaying the same copies is not."""
    content = (
        span.span_id, span.parent_span_id, span.name, span.kind.value, span.start_ns,
        span.end_ns, span.status_code.value, span.status_message,
        sorted(span.attributes.items()), span.events, span.links,
        sorted(span.resource.attributes.items()), span.refused, span.source, span.sender,
    )  # fmt: skip
    import hashlib  # startup: OpenSSL's bindings, for the collector's and rescore's conflicts

    return hashlib.blake2b(repr(content).encode(), digest_size=8).hexdigest()


@dataclass(slots=True)
class Run:
    """The unit that is scored: one trace, or every trace of one conversation."""

    run_id: str
    trace_ids: list[str]
    spans: list[Span]
    session_id: str | None = None
    revision: int = 0  # > 0: spans that arrived after an earlier part of the run was scored
    stitched: tuple[Stitch, ...] = ()  # traces joined to the run's own (``processors.stitch``)
    # What the processors derived from ``spans`` once (the run's graph and the conventions'
    # reading of each span, ``run_graph``): reused, never recomputed, by every
    # stage that reads the run; a run built from other spans starts empty.
    derived: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def tenant(self) -> str:
        """The collector tenant that sent the run's spans ("" for none named): one for all
        of them, since runs are assembled per tenant (``processors.assemble``)."""
        return self.spans[0].tenant if self.spans else ""

    @property
    def sources(self) -> list[str]:
        """Where each of the run's traces was read: its first span's ``source``, in trace
        order and without repeats (a stitched run spans several); traces not read from a
        file are left out."""
        first: dict[str, str] = {}
        for span in self.spans:
            first.setdefault(span.trace_id, span.source)
        return list(dict.fromkeys(first[t] for t in self.trace_ids if first.get(t)))


class ToolCallStatus(StrEnum):
    REQUESTED = "requested"
    EXECUTED = "executed"
    ERROR = "error"


@dataclass(slots=True)
class ToolCall:
    """A tool invocation; ``arguments``/``result`` are None when the trace did not capture them."""

    name: str
    call_id: str | None
    arguments: dict[str, AttrValue] | str | None
    result: AttrValue
    status: ToolCallStatus
    span_ids: list[str]
    trace_id: str
    conventions: list[str]
    arguments_captured: bool = False
    result_captured: bool = False
    # The span that ran the call, and the model span that first asked for it: when it
    # happened, for evaluators that order events (``before``, ``flows``).
    executed_in: str | None = None
    requested_in: str | None = None
    # ``requested_in`` holds the call (an agent or framework span that dispatched it and
    # ran it inside itself, not a model span that asked for it): the call happened within
    # that span. ``steps``: the places in that span's record of the conversation (message
    # positions) after which the call was asked for and by which its result was back.
    requested_within: bool = False
    steps: tuple[int, int] | None = None
    # The first model span whose input sent the call's result back: it was over by the
    # time that span started.
    returned_by: str | None = None
    # Read only from a later model call's input history: a call made in an earlier piece of
    # the conversation, recorded elsewhere (evidence that it happened, not of all it did).
    from_history: bool = False
    # A call id that calls of another tool claim too, within one model turn: which request
    # this call answers, and which history entries are its, the trace cannot tell.
    ambiguous_id: str | None = None
    # The name's parts where the framework qualifies a function's own name (Semantic
    # Kernel's ``<plugin>-<function>``): ``name`` is ``namespace``, the framework's
    # separator, ``local_name``. None when the convention that read the call knows no
    # qualifier in its name.
    namespace: str | None = None
    local_name: str | None = None
    # A framework ran another agent as this tool (``ToolReport.agent_tool``, from its
    # execution span or the definition the model was offered it with): the calls that
    # agent made are this call's own, and where they are not in the run, nothing of them is.
    agent_tool: bool = False

    @property
    def names(self) -> tuple[str, ...]:
        """Every name a check may give this tool: the name the trace records and, where the
        framework qualified it, the function's own name as its author wrote it."""
        if self.local_name and self.local_name != self.name:
            return (self.name, self.local_name)
        return (self.name,)


@dataclass(slots=True)
class SideEffect:
    """An I/O of ``kind`` the run made (an HTTP request, a file write, ...), with the
    details checks read, from the span ``span_id`` that shows it."""

    kind: str
    details: dict[str, AttrValue]
    span_id: str
    trace_id: str
    tool_call_index: int | None = None  # index into AgentRun.tool_calls
    convention: str = ""
    # Details the span did not record but showed otherwise (a DB call's operation read from
    # its statement): key → the attribute(s) the value was read from. Others are recorded.
    derived: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class Response:
    """The run's answer (None when no span shows one), and the earlier texts kept beside it."""

    text: str | None
    earlier: list[str] = field(default_factory=list)
    span_id: str | None = None


@dataclass(slots=True)
class InputMessage:
    """One message the user (the agent's caller) sent into the run; text None when the trace
    shows the message but not its content."""

    text: str | None
    span_id: str | None
    trace_id: str | None


class FindingKind(StrEnum):
    """What an integrity finding says about a run's trace."""

    SPLIT_RUN = "split_run"  # spans lost from inside the run: its trace falls apart
    LOST_ROOT = "lost_root"  # the run's own root span was lost
    PARENT_CYCLE = "parent_cycle"
    UNENDED_SPAN = "unended_span"
    DROPPED_ATTRIBUTES = "dropped_attributes"
    DROPPED_EVENTS = "dropped_events"
    NOT_UNDERSTOOD = "not_understood"  # spans or content no convention understood
    FRAGMENT = "fragment"  # no agent, model or tool span: a piece of a run, or no run
    REFUSED_SPAN = "refused_span"  # a span of the run was refused for its ids (OTLP rule)
    UNDECODABLE_SPAN = "undecodable_span"  # a span of the run could not be decoded on its own
    CONTINUATION = "continuation"  # model input history holds calls no span of the run made
    REPEATED_KEYS = "repeated_keys"  # a span recorded a key twice with different values
    CONFLICTING_COPIES = "conflicting_copies"  # a span sent twice, the copies disagreeing


class ScopeState(StrEnum):
    """What one executed tool call's scope shows of its side effects, as a whole (each kind's
    place: ``places.place``)."""

    RECORDED = "recorded"  # I/O spans of an instrumented client in its scope (of some kinds)
    DECLARED = "declared"  # declared side-effect free, or all its I/O instrumented
    SILENT = "silent"  # no I/O span and no declaration: its side effects may be unrecorded
    OUT_OF_PROCESS = "out_of_process"  # ran in another process whose spans are not in the trace
    # A framework ran another agent as this tool (an agent used as a tool, a delegation to a
    # coworker): the agent's own calls, nested under it, are the places, each judged alone.
    DELEGATED = "delegated"


class PlaceState(StrEnum):
    """What one place of harm (an executed tool call and a side-effect kind) shows."""

    RECORDED = "recorded"  # a span of the kind in the call's scope
    ATTESTED = "attested"  # a watcher in the call's process sees the kind: none went unseen
    DECLARED = "declared"  # declared (policy tools:, the tool's span, a pseudo-tool, its process)
    DELEGATED = "delegated"  # an agent the framework ran as the tool: its own calls are places
    UNMET = "unmet"  # recorded, but a destination the call was handed no request reached
    SILENT = "silent"  # nothing shows whether the kind happened here
    OUT_OF_PROCESS = "out_of_process"  # it ran elsewhere, whose spans are not in the trace


# The place states that leave a kind unproven at a call.
UNPROVEN_PLACES = frozenset({PlaceState.UNMET, PlaceState.SILENT, PlaceState.OUT_OF_PROCESS})


class ScopeEvidence(StrEnum):
    """How a scope's I/O spans were found, or what declared it."""

    SUBTREE = "subtree"  # under the call's execution span
    TIME_WINDOW = "time_window"  # same service, inside this call's time window only
    POLICY = "policy"  # the policy's ``tools:`` declaration
    SPAN = "span"  # ``rampart_otel.declare`` on the tool's span, in the agent process
    PSEUDO_TOOL = "pseudo_tool"  # a framework's built-in tool with no side effects
    PROCESS = "process"  # the process-wide ``rampart.coverage`` resource declaration


MCP_SERVER = "mcp_server"  # ToolScope.remote: the call ran on an MCP server
CHILD_PROCESS = "child_process"  # ToolScope.remote: the call started a child process
REMOTE_AGENT = "remote_agent"  # ToolScope.remote: the call handed its task to a remote agent
# ToolScope.remote: a framework's agent-as-tool call whose nested agent's run is not in the
# trace (no agent or model span under its execution, or no execution span at all).
NESTED_AGENT = "nested_agent"


@dataclass(frozen=True, slots=True)
class Destination:
    """A destination a tool call was handed in its arguments (a URL, a host): a claim the
    call's recorded requests must meet. ``argument``: where in the arguments it was."""

    argument: str
    host: str


# A call whose arguments were not captured, with requests recorded: what it was handed,
# and so whether its requests met it, is not known.
UNKNOWN_DESTINATION = Destination("", "")


@dataclass(frozen=True, slots=True)
class ToolScope:
    """One executed tool call as the places side effects could happen, and what it shows.

    Evidence is per side-effect kind (``places.place``): a DB span under the call says nothing
    about its HTTP. ``kinds``: the kinds of the I/O spans in its scope. ``exempt_kinds``:
    kinds this scope does not leave unproven (the kinds its process declared, or
    ``process_exec`` recorded for a child process that is not traced; ``*`` every kind).
    ``attested``: kinds a watcher in the call's process sees whole, with nothing of them
    left unexplained in this call. ``unmet``: destinations the call was handed that no
    request of its reached (its ``http_request`` place is unmet). ``remote``: what ran the
    call out of process (an MCP server, a child process, a remote agent), if any, and
    ``remote_target`` where (the remote agent's URL).
    """

    call_index: int
    tool: str
    state: ScopeState
    io_span_ids: tuple[str, ...] = ()
    evidence: ScopeEvidence | None = None
    exempt_kinds: tuple[str, ...] = ()
    remote: str | None = None
    span_id: str | None = None  # the call's execution span, when it has one
    kinds: tuple[str, ...] = ()
    attested: tuple[str, ...] = ()
    unmet: tuple[Destination, ...] = ()
    remote_target: str | None = None


HTTP_KIND = "http_request"  # the kind a destination handed to a call is claimed of


# What each finding is about, as data: ``wording.finding_message`` words it.


@dataclass(frozen=True, slots=True)
class SplitRun:
    """A trace that falls apart into trees ``tops``; ``missing``: the parents not in it."""

    trace_id: str
    tops: tuple[Span, ...]
    missing: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class LostRoot:
    """A run whose top span ``top`` has a parent the trace does not hold."""

    top: Span


@dataclass(frozen=True, slots=True)
class RefusedSpans:
    """Spans refused for their ids; ``rules``: the OTLP id rules they broke."""

    spans: tuple[Span, ...]
    rules: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class UndecodableSpans:
    """Spans that could not be decoded; ``whys``: the decoder's reasons."""

    spans: tuple[Span, ...]
    whys: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SpansOf:
    """The spans a finding is about (a parent cycle, unended spans, dropped data, repeated
    keys, a fragment's spans): the finding's kind says which."""

    spans: tuple[Span, ...]


@dataclass(frozen=True, slots=True)
class NotUnderstoodSpans:
    """Spans, or content on them, no convention understood: (span, notes) each."""

    found: tuple[tuple[Span, tuple[str, ...]], ...]


@dataclass(frozen=True, slots=True)
class ConflictingCopies:
    """Spans sent twice whose copies disagree: (the copy met first, the one contradicting it)."""

    pairs: tuple[tuple[Span, Span], ...]


@dataclass(frozen=True, slots=True)
class HistoryCalls:
    """Calls the model input history holds that no span of the run made."""

    calls: tuple[ToolCall, ...]


FindingDetail = (
    SplitRun
    | LostRoot
    | RefusedSpans
    | UndecodableSpans
    | SpansOf
    | NotUnderstoodSpans
    | HistoryCalls
    | ConflictingCopies
)


@dataclass(slots=True)
class IntegrityFinding:
    """Something in the trace that caps what can be known of the run (a split
    trace, refused spans, ...): its ``kind``, words and the spans it is about."""

    kind: FindingKind
    # The finding in words: written by ``wording`` from ``detail`` (processors leave it
    # empty); a finding read back from a store has its words and no detail.
    message: str
    span_ids: list[str] = field(default_factory=list)
    # Channel keys the finding caps at partial; "*" every channel, "side_effects.*" every kind.
    # Kept so coverage assumed later (assume_coverage) is capped by the same findings.
    channels: list[str] = field(default_factory=list)
    detail: FindingDetail | None = None


@dataclass(frozen=True, slots=True)
class CallsUnknown:
    """What keeps the calls that ran unknown, capping every kind seen at partial: no tool
    execution span and not every model output read (``side_effect.unseen_calls``), no
    model call either (``side_effect.no_calls_recorded``), or a turn that asked for tools
    with no execution span after it (``side_effect.asked_unrun``, ``turns``)."""

    code: ReasonCode
    turns: tuple[Span, ...] = ()


@dataclass(frozen=True, slots=True)
class RunPlaces:
    """Where a run's side effects could have happened, and what shows each place.

    ``scopes``: each executed tool call (``processors.scopes``); ``places`` decides the
    side-effect channels from them. ``effects``: the agent's side effects by kind (the
    model's transport left out, ``transport``). ``declarations``: (channel key, service)
    the agent's own processes declared (``rampart.coverage``). ``findings``: the integrity
    findings that cap the channels. ``scope_names``: the instrumentations the run shows
    (for the ways to close a gap); ``plan``: the channels a gap's way to close it is
    worked out for.
    """

    scopes: tuple[ToolScope, ...] = ()
    calls: tuple[ToolCall, ...] = ()
    effects: Mapping[str, tuple[SideEffect, ...]] = field(default_factory=dict)
    transport: Mapping[str, tuple[Span, ...]] = field(default_factory=dict)
    declarations: tuple[tuple[str, str], ...] = ()
    calls_unknown: CallsUnknown | None = None
    findings: tuple[IntegrityFinding, ...] = ()
    scope_names: frozenset[str] = frozenset()
    plan: ScoringPlan = FULL_READING


@dataclass(slots=True)
class ConventionUse:
    """How many of a run's spans one convention (or unknown family) read, and did not understand."""

    spans: int = 0
    not_understood: int = 0


@dataclass(slots=True)
class AgentRun:
    """What the agent did in one run, as the trace shows it, and what the trace can attest."""

    run: Run
    service: str | None
    started_at_ns: int | None
    response: Response
    tool_calls: list[ToolCall]
    side_effects: list[SideEffect]
    coverage: Coverage
    integrity: list[IntegrityFinding]
    conventions: dict[str, ConventionUse] = field(default_factory=dict)
    user_input: list[InputMessage] = field(default_factory=list)  # the ``input`` channel
    tool_scopes: list[ToolScope] = field(default_factory=list)  # each executed tool call's
    # Where the run's side effects could have happened, with what shows each place: the
    # side-effect channels are ``places.side_effect_decisions`` of these (a policy's tool
    # declarations are an overlay on them, never a second reading of the run).
    places: RunPlaces | None = None

    @property
    def run_id(self) -> str:
        return self.run.run_id

    @property
    def trace_ids(self) -> list[str]:
        return self.run.trace_ids

    @property
    def fragment(self) -> IntegrityFinding | None:
        """The finding that this run holds no agent, model or tool span, if it does not."""
        return next((f for f in self.integrity if f.kind == FindingKind.FRAGMENT), None)


@dataclass(slots=True)
class InputError:
    """A line, record or file that could not be read; reading went on past it."""

    location: str  # path[:line] or path@offset
    message: str
