"""Tool scopes: each executed tool call as a place where its side effects could happen.

"No side effect happened" holds only where every place one could have happened was
watched; one tool's recorded request says nothing about another tool's. So each executed
tool call is judged on its own:

- its I/O spans are those under its execution span, or, where the framework lost the
  context (the I/O span's trace holds no agent, model or tool span), those of the same
  service whose start falls inside this call's time window and no other's (``turns``,
  ``side_effects``);
- with at least one, the call's client was instrumented (``RECORDED``); with none and no
  declaration it is ``SILENT``: the client it used may not be. Evidence is per kind
  (``places.place``): a DB span says nothing of HTTP, and a connection or a file write
  the watcher recorded (``network_connect``, ``file_write``) vouches for no other kind: a
  raw connection shows no request. Where the watcher's attestation (``rampart.watch`` on
  the call's span) says it sees a kind and nothing of it went unexplained in the call,
  the kind is attested (docs/watch.md);
- a call run in another process (an MCP server) is watched only where that process's
  spans are in the trace (``OUT_OF_PROCESS`` otherwise); a child process a tool spawned
  is recorded by its ``process_exec`` span, its own effects are not;
- a framework's agent-as-tool call (``ToolCall.agent_tool``) is ``DELEGATED`` where the
  nested agent's run is under its execution span (that agent's calls are places of their
  own); where it is not (no agent or model span under the call, or no execution span at
  all) the agent ran in a part of the run the trace does not hold: ``OUT_OF_PROCESS``
  (``NESTED_AGENT``), and ``tool_calls`` is partial (``coverage``);
- a declaration closes the gap: ``rampart_otel.declare`` on the tool's span, the
  process-wide ``rampart.coverage`` resource attribute (for the kinds it names), a
  framework's built-in pseudo-tool, or the policy's ``tools:`` (an overlay:
  ``places.declared_by_policy``).

I/O outside tool calls (framework memory stores, telemetry, the model's transport) never
vouches for a tool call. The side-effect channels are capped by the scopes that leave
them unproven (``places.side_effect_decisions``); the words are ``wording``'s.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import NamedTuple

from rampart_otel import watch_contract as watch
from rampart_otel.channels import DECLARATION_KEY, EVERY_SIDE_EFFECT, SIDE_EFFECT_PREFIX
from rampart_otel.conventions.side_effects import (
    PROCESS,
    url_host,
)
from rampart_otel.declare import TOOL_SIDE_EFFECTS, TOOL_SIDE_EFFECTS_ATTRIBUTE
from rampart_otel.frozen import quick_init
from rampart_otel.lazy_regex import LazyPattern
from rampart_otel.model import (
    CHILD_PROCESS,
    MCP_SERVER,
    NESTED_AGENT,
    REMOTE_AGENT,
    UNKNOWN_DESTINATION,
    Destination,
    ScopeEvidence,
    ScopeState,
    SideEffect,
    Span,
    ToolCall,
    ToolScope,
)
from rampart_otel.processors.side_effects import SideEffects
from rampart_otel.processors.span_views import ClassifiedRun
from rampart_otel.processors.tool_calls import ToolCalls
from rampart_otel.processors.turns import Turns
from rampart_otel.vocabulary import (
    DB_QUERY,
    FILE_WRITE,
    HTTP_REQUEST,
    MCP_REQUEST,
    MESSAGE_PUBLISH,
    NETWORK_CONNECT,
    PROCESS_EXEC,
    RPC_CALL,
)


def resource_declarations(spans: Iterable[Span]) -> list[tuple[str, str | None]]:
    """(channel key, service) each process declared in its resource (``rampart.coverage``:
    a list, or a comma-separated text), once per resource."""
    found: list[tuple[str, str | None]] = []
    seen: set[int] = set()
    for span in spans:
        resource = span.resource
        if id(resource) in seen:
            continue
        seen.add(id(resource))
        value = resource.attributes.get(DECLARATION_KEY)
        if value is None:
            continue
        keys = value if isinstance(value, (list, tuple)) else str(value).split(",")
        service = resource.service_name
        found.extend((str(key).strip(), service) for key in keys if str(key).strip())
    return found


def declared_kinds(spans: Iterable[Span]) -> dict[str | None, set[str]]:
    """Service → side-effect kinds its process declared (``rampart.coverage``), ``*`` for all."""
    found: dict[str | None, set[str]] = {}
    for key, service in resource_declarations(spans):
        kinds = found.setdefault(service, set())
        if key == EVERY_SIDE_EFFECT:
            kinds.add("*")
        elif key.startswith(SIDE_EFFECT_PREFIX):
            kinds.add(key[len(SIDE_EFFECT_PREFIX) :])
    return found


class RunScopes(NamedTuple):
    """The places job's output: each executed call's scope, and what the run's processes
    declared (channel key, service) in the resources of the agent's own spans (else of any
    span) of the run's own traces."""

    scopes: list[ToolScope]
    declarations: list[tuple[str, str]]


def tool_scopes(
    run: ClassifiedRun,
    tool_calls: ToolCalls,
    turns: Turns,
    side_effects: SideEffects,
    joined: AbstractSet[str] = frozenset(),
) -> RunScopes:
    """Each executed call's scope, with its evidence per side-effect kind, and the run's
    declarations. ``joined``: the traces stitched onto the run; what their resources
    declare vouches for nothing here (a piece anyone can send, claiming the run's service,
    never declares for it)."""
    calls = tool_calls.calls
    effects, windowed, executed = side_effects.effects, side_effects.windowed, turns.executed
    by_id = run.record
    io: dict[int, list[SideEffect]] = {}
    for effect in effects:
        if effect.tool_call_index is not None:
            io.setdefault(effect.tool_call_index, []).append(effect)
    inside = _inside_calls(run, tool_calls)
    own = (
        [view for view in run.records if view.span.trace_id not in joined]
        if joined
        else run.records
    )
    process_kinds = declared_kinds(view.span for view in own)
    model_hosts = _model_hosts(run, side_effects)
    watch_lost = _watched_events_lost(run)
    scopes: list[ToolScope] = []
    for index in executed:
        call = calls[index]
        execution = by_id(call.executed_in) if call.executed_in else None
        anchor = execution or (by_id(call.requested_in) if call.requested_in else None)
        service = anchor.span.resource.service_name if anchor is not None else None
        found = io.get(index, [])
        # The scope's state and evidence, decided before it is built (once: a run of many
        # calls builds many scopes).
        state, remote, remote_target = ScopeState.RECORDED, None, None
        evidence: ScopeEvidence | None = (
            ScopeEvidence.TIME_WINDOW
            if found and all(effect.span_id in windowed for effect in found)
            else ScopeEvidence.SUBTREE
        )
        exempt_kinds = tuple(sorted(process_kinds.get(service, ())))
        declared = inside.declared.get(index)
        remote_seen = inside.other_process.get(index, set())
        children = [e for e in found if e.kind == PROCESS]
        agent_url = inside.remote_agents.get(index)
        if declared is not None:
            state, evidence = ScopeState.DECLARED, ScopeEvidence.SPAN
        elif index in inside.mcp and not remote_seen:
            state, remote, evidence = ScopeState.OUT_OF_PROCESS, MCP_SERVER, None
        elif agent_url is not None and not remote_seen:
            state, remote, evidence = ScopeState.OUT_OF_PROCESS, REMOTE_AGENT, None
            remote_target = agent_url
        elif call.agent_tool and execution is not None and index in inside.nested_agents:
            state = ScopeState.DELEGATED
        elif call.agent_tool:
            # The framework ran another agent as this tool, and that agent's run is not here
            # (traced elsewhere, or its spans lost): what it called is not read.
            state, remote, evidence = ScopeState.OUT_OF_PROCESS, NESTED_AGENT, None
        elif children and not any(e.span_id in remote_seen for e in children):
            # The child process is recorded by its process_exec span; what it did is not.
            state, remote, exempt_kinds = ScopeState.OUT_OF_PROCESS, CHILD_PROCESS, (PROCESS,)
        elif not found:
            if (
                index in tool_calls.pseudo_tools
                or _answers_only(call)
                or _hands_off(call, inside.handoffs)
            ):
                state, evidence = ScopeState.DECLARED, ScopeEvidence.PSEUDO_TOOL
            else:
                state, evidence = ScopeState.SILENT, None
        scope = ToolScope(
            call_index=index,
            tool=call.name,
            state=state,
            io_span_ids=tuple(dict.fromkeys(effect.span_id for effect in found)),
            evidence=evidence,
            exempt_kinds=exempt_kinds,
            remote=remote,
            span_id=execution.span.span_id if execution is not None else None,
            kinds=tuple(sorted({effect.kind for effect in found})),
            attested=(
                _attested(execution.span, found, run, model_hosts)
                if execution is not None and not watch_lost and index not in inside.watch_unread
                else ()
            ),
            unmet=_unmet(call, found, run),
            remote_target=remote_target,
        )
        scopes.append(scope)
    agentic = [
        view.span
        for view in own
        if view.model or view.agent or view.span.span_id in tool_calls.executing
    ]
    declarations = [
        (key, service or "unknown service")
        for key, service in resource_declarations(agentic or [view.span for view in own])
    ]
    return RunScopes(scopes, declarations)


@quick_init
@dataclass(frozen=True, slots=True)
class _Inside:
    """What the spans under each call show (keyed by call index): the ids of the parents,
    inside the call, of spans another process recorded (its server's, child's or remote
    agent's); a ``rampart_otel.declare`` value on its span or under it; the calls an MCP
    client sent to a server; the remote agent a call handed its task to; and the calls
    that hold another agent's model or agent spans."""

    other_process: dict[int, set[str]]
    declared: dict[int, str]
    mcp: set[int]
    remote_agents: dict[int, str]
    nested_agents: set[int]
    # Calls holding a watched span not read as the side effect its event is (its details
    # lost, its event not named): what the watcher saw there is not known.
    watch_unread: set[int]
    # The agents the run's hand-off spans move the conversation to (``SpanReport.handoff``).
    handoffs: set[str]


def _inside_calls(run: ClassifiedRun, calls: ToolCalls) -> _Inside:
    """What the spans under each call show (``_Inside``)."""
    inside = _Inside({}, {}, set(), {}, set(), set(), set())
    for view in run.records:
        if view.reading.handoff is not None:
            inside.handoffs.add(view.reading.handoff)
        index = calls.call_at.get(view.span.span_id)
        if index is None:
            continue
        span_id = view.span.span_id
        if span_id in calls.call_of and view.reading.runs_elsewhere:
            inside.mcp.add(index)
        if (
            view.span.scope.name == watch.SCOPE
            and not view.effects
            and view.span.attributes.get(watch.EVENT) not in _NO_EFFECT_EVENTS
            and not _read_elsewhere(run, view.span)
        ):
            inside.watch_unread.add(index)
        if view.reading.remote_agent is not None:
            inside.remote_agents.setdefault(index, view.reading.remote_agent)
        if (view.model or view.agent) and calls.call_of.get(span_id) != index:
            inside.nested_agents.add(index)
        value = view.span.attributes.get(TOOL_SIDE_EFFECTS_ATTRIBUTE)
        if isinstance(value, str) and value in TOOL_SIDE_EFFECTS:
            inside.declared.setdefault(index, value)
        parent = run.graph.parent(span_id)
        if parent is not None and parent.resource.attributes != view.span.resource.attributes:
            inside.other_process.setdefault(index, set()).add(parent.span_id)
    return inside


# A bare host name handed to a tool: dotted labels ending in letters (not a file name), or
# an IPv4 address, or localhost.
_HOST_NAME = LazyPattern(
    r"(?i)(?:localhost|(?:\d{1,3}\.){3}\d{1,3}|(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63})"
)
_FILE_ENDINGS = frozenset(
    {"py", "js", "ts", "json", "txt", "md", "csv", "html", "pdf", "log", "yaml", "yml", "xml"}
)
_URL_SCHEMES = ("http://", "https://")
_MAX_CLAIMS = 16  # destinations read from one call's arguments


def _unmet(call: ToolCall, found: list[SideEffect], run: ClassifiedRun) -> tuple[Destination, ...]:
    """The destinations the call was handed (an argument that is a URL or a host name) that
    no request recorded under it went to: each a place a client that is not instrumented
    may have sent something."""
    if not call.arguments_captured:
        # What it was handed is not known: a request it recorded may not be all it sent.
        return (UNKNOWN_DESTINATION,) if any(e.kind == HTTP_REQUEST for e in found) else ()
    claims = _destinations(call.arguments)
    if not claims:
        return ()
    reached: set[str] = set()
    for effect in found:
        record = run.record(effect.span_id)
        if record is None:
            continue
        for (kind, details, *_), endpoint in zip(
            record.effects, record.reading.endpoints, strict=False
        ):
            if endpoint is not None and kind == effect.kind and details is effect.details:
                reached.add(endpoint[0])
    return tuple(claim for claim in claims if claim.host not in reached)


def _destinations(arguments: object) -> list[Destination]:
    """Each argument whose whole text is an http(s) URL or a host name, with its path."""
    found: dict[str, Destination] = {}
    for path, text in _leaves(arguments, ""):
        value = text.strip()
        host: str | None = None
        if value.lower().startswith(_URL_SCHEMES):
            host = url_host(value)
        elif _HOST_NAME.fullmatch(value) and value.rsplit(".", 1)[-1].lower() not in _FILE_ENDINGS:
            host = value.lower().rstrip(".")
        if host and host not in found:
            found[host] = Destination(path or "(the argument)", host)
        if len(found) >= _MAX_CLAIMS:
            break
    return list(found.values())


def _leaves(value: object, path: str, depth: int = 0) -> Iterator[tuple[str, str]]:
    """(path, text) of every string leaf of a call's arguments, depth-bounded."""
    if isinstance(value, str):
        yield path, value
    elif depth < 8 and isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, f"{path}.{key}" if path else str(key), depth + 1)
    elif depth < 8 and isinstance(value, (list, tuple)):
        for position, item in enumerate(value):
            yield from _leaves(item, f"{path}[{position}]", depth + 1)


# --- the watcher's attestation (docs/watch.md) ------------------------------------------------

# What each kind the watcher attests (``rampart.watch``) proves absent where nothing of it
# went unexplained: no connection, no request of any networked kind; no process start, no
# process; no file write, no write.
_NETWORKED = (NETWORK_CONNECT, HTTP_REQUEST, RPC_CALL, MESSAGE_PUBLISH, MCP_REQUEST)
_ATTESTS = {
    watch.NETWORK: _NETWORKED,
    watch.PROCESS: (PROCESS_EXEC,),
    watch.FILE_WRITE: (FILE_WRITE,),
}
# The blind codes that take a watched kind away (``rampart.watch.blind``).
_BLINDS = {
    watch.NETWORK: "native_sockets:",
    watch.PROCESS: "unseen_processes:",
    watch.FILE_WRITE: "native_files:",
}
# Watched events that are no side effect of their own: a database opened (its statements,
# run in C, are db_query spans' to show).
_NO_EFFECT_EVENTS = frozenset({"sqlite3.connect"})


def _read_elsewhere(run: ClassifiedRun, span: Span) -> bool:
    """A watched span that is no side effect by design: the standard library's platform
    probe (``rampart.watch.platform_probe``), or the body of a request whose parent span,
    in the run, is the instrumented client's record of it (``rampart.watch.parent_request``)."""
    attrs = span.attributes
    if attrs.get(watch.PLATFORM_PROBE) is True:
        return True
    if attrs.get(watch.PARENT_REQUEST) is not True:
        return False
    parent = run.graph.parent(span.span_id)
    record = run.record(parent.span_id) if parent is not None else None
    return record is not None and any(kind == HTTP_REQUEST for kind, *_ in record.effects)


# Requests that explain a connection the watcher saw: the instrumented client's own span.
_REQUEST_KINDS = frozenset({HTTP_REQUEST, RPC_CALL, MESSAGE_PUBLISH, MCP_REQUEST, DB_QUERY})


def _attested(
    span: Span, found: list[SideEffect], run: ClassifiedRun, model_hosts: frozenset[str]
) -> tuple[str, ...]:
    """The side-effect kinds the watcher in the call's process attests for this call: it
    sees the kind there (``rampart.watch`` on the call's execution span, nothing of it
    blind; a call with no execution span ran where the trace does not show), and
    nothing of it in the call went unexplained (a connection no recorded request explains
    may have carried any networked kind). A pool of connections opened earlier is blind,
    but for the model client's own (the model's transport: a tool sends on it only by
    calling the model, which a model span shows). A database is attested only where both
    its connections and its files are: SQLite runs its statements in C."""
    attrs = span.attributes
    watched = attrs.get(watch.ATTESTATION)
    if not isinstance(watched, (list, tuple)) or not watched:
        return ()
    blind = [str(code) for code in attrs.get(watch.BLIND) or () if isinstance(code, str)]
    seen: set[str] = set()
    for capability, kinds in _ATTESTS.items():
        if capability not in watched or any(b.startswith(_BLINDS[capability]) for b in blind):
            continue
        if capability == watch.NETWORK and (
            _pooled_blind(attrs, blind, model_hosts) or _unexplained(found, run)
        ):
            continue
        seen.update(kinds)
    if NETWORK_CONNECT in seen and FILE_WRITE in seen:
        seen.add(DB_QUERY)
    return tuple(sorted(seen))


def _watched_events_lost(run: ClassifiedRun) -> bool:
    """A span says more events were watched under it (``rampart.watch.events``) than the run
    holds watched spans under it: some were lost (not exported, dropped, moved elsewhere),
    and no attestation of the run can stand on what is left."""
    under: dict[str, int] = {}
    said: list[tuple[str, int]] = []  # (span, how many watched events it says are under it)
    for view in run.records:
        span = view.span
        if span.scope.name == watch.SCOPE and span.parent_span_id:
            under[span.parent_span_id] = under.get(span.parent_span_id, 0) + 1
        count = span.attributes.get(watch.EVENTS_UNDER)
        if count is not None and not isinstance(count, bool) and isinstance(count, int):
            said.append((span.span_id, count))
    return any(under.get(span_id, 0) < count for span_id, count in said)


def _pooled_blind(attrs: dict[str, object], blind: list[str], model_hosts: frozenset[str]) -> bool:
    """Connections opened earlier were open when the call began (``pooled_connections``),
    and one of them is not the model client's own: the call may have sent on it unseen."""
    if watch.POOLED_CONNECTIONS not in blind:
        return False
    open_now = attrs.get(watch.OPEN_CONNECTIONS)
    if not isinstance(open_now, (list, tuple)) or not open_now:
        return True  # too many to follow, or not named: any may be
    return not all(
        isinstance(endpoint, str) and endpoint.lower() in model_hosts for endpoint in open_now
    )


def _unexplained(found: list[SideEffect], run: ClassifiedRun) -> bool:
    """A connection the watcher saw in the call that no recorded request explains: neither
    inside a request's span (an instrumented client's) nor to a host a request of the call
    went to (the watcher's own http.client request beside it)."""
    connects = [effect for effect in found if effect.kind == NETWORK_CONNECT]
    if not connects:
        return False
    requested: set[str] = set()
    request_spans: set[str] = set()
    for effect in found:
        if effect.kind in _REQUEST_KINDS:
            request_spans.add(effect.span_id)
            host, port = effect.details.get("host"), effect.details.get("port")
            if isinstance(host, str):
                requested.add(f"{host.lower()}:{port}" if port is not None else host.lower())
    for connect in connects:
        host, port = connect.details.get("host"), connect.details.get("port")
        address = connect.details.get("address")
        names = {f"{str(name).lower()}:{port}" for name in (host, address) if isinstance(name, str)}
        if names & requested or any(name.split(":")[0] in requested for name in names):
            continue
        if any(up.span_id in request_spans for up in run.graph.ancestors(connect.span_id)):
            continue
        return True
    return False


def _model_hosts(run: ClassifiedRun, side_effects: SideEffects) -> frozenset[str]:
    """``host:port`` of the model's servers: where its model spans say they sent, and where
    the model's transport went."""
    found: set[str] = set()
    for view in run.records:
        if view.model:
            found.update(
                f"{host}:{port}"
                for host, port in filter(None, view.reading.endpoints)
                if port is not None
            )
    for spans in side_effects.transport.values():
        for span in spans:
            record = run.record(span.span_id)
            endpoints = record.reading.endpoints if record is not None else ()
            found.update(
                f"{host}:{port}" for host, port in filter(None, endpoints) if port is not None
            )
    return frozenset(found)


# The code call of a code agent, and its answer function (smolagents').
_CODE_TOOL, _ANSWER_FUNCTION = "python_interpreter", "final_answer"


def _answers_only(call: ToolCall) -> bool:
    """A code step whose whole code is one call of the answer function with literal
    arguments (``final_answer("It is 18°C")``): it runs nothing but the answer, as the
    framework's answer tool does. Any other code (a name, a call, an import) may act."""
    if call.name != _CODE_TOOL or not isinstance(call.arguments, dict):
        return False
    code = call.arguments.get("code")
    if not isinstance(code, str) or len(code) > 100_000:
        return False
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Expr):
        return False
    answer = tree.body[0].value
    return (
        isinstance(answer, ast.Call)
        and isinstance(answer.func, ast.Name)
        and answer.func.id == _ANSWER_FUNCTION
        and all(isinstance(arg, ast.Constant) for arg in answer.args)
        and all(isinstance(keyword.value, ast.Constant) for keyword in answer.keywords)
    )


# The names a framework's hand-off tool goes by (OpenAI Agents, langgraph-supervisor: one
# per receiving agent; ADK: one for all).
_HANDOFF_PREFIXES = ("transfer_to_", "transfer_back_to_")


def _hands_off(call: ToolCall, targets: AbstractSet[str]) -> bool:
    """A call of a framework's hand-off tool, where the run holds the hand-off itself (a span
    read as one, ``SpanReport.handoff``, to the agent the call names): the framework moves
    the conversation to that agent, whose own calls are the places; no code of the user's
    runs in the hand-off."""
    if not targets or not call.name.startswith(_HANDOFF_PREFIXES):
        return False
    named = call.name.split("_to_", 1)[1]
    return named == "agent" or any(named == target or not target for target in targets)
