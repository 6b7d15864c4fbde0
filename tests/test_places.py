"""Places of harm as data (``rampart_otel.places``): each executed tool call and each
side-effect kind is a place; a kind is proven absent only where every place was watched.

Hand-built places (``ToolScope``, ``RunPlaces``), for the forms no registered convention
reports yet: a call handed to a remote agent, an agent the framework ran as a tool.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from rampart_otel import places as places_module
from rampart_otel import wording
from rampart_otel.channels import OBSERVED, PARTIAL, UNOBSERVED, ReasonCode
from rampart_otel.model import (
    MCP_SERVER,
    REMOTE_AGENT,
    Destination,
    PlaceState,
    RunPlaces,
    ScopeState,
    SideEffect,
    ToolScope,
)
from rampart_otel.places import place, side_effect_decisions, unproven
from rampart_otel.reasons import Decision, Fix, ScopeGaps, Why
from rampart_otel.wording import REMOTE_AGENT_FIX, REMOTE_FIX, worded

HTTP, DB = "side_effects.http_request", "side_effects.db_query"
KINDS = ("http_request", "db_query", "process_exec")
AGENT_URL = "https://planner.example/a2a"


def get(span_id: str, call: int | None) -> SideEffect:
    details = {"method": "GET", "url": "https://weather.example/today", "host": "weather.example"}
    return SideEffect("http_request", details, span_id, "t" * 32, call)


def recorded(index: int, tool: str, span_id: str, *kinds: str) -> ToolScope:
    return ToolScope(index, tool, ScopeState.RECORDED, (f"io-{span_id}",), span_id=span_id,
                     kinds=kinds)  # fmt: skip


def remote_agent(index: int, tool: str, span_id: str) -> ToolScope:
    return ToolScope(index, tool, ScopeState.OUT_OF_PROCESS, remote=REMOTE_AGENT, span_id=span_id,
                     remote_target=AGENT_URL)  # fmt: skip


def places(*scopes: ToolScope, effects: tuple[SideEffect, ...] = ()) -> RunPlaces:
    return RunPlaces(scopes=scopes, effects={"http_request": effects} if effects else {})


def reasons(decision: Decision) -> str:
    return " | ".join(worded(decision).reasons)


def fix_of(decision: Decision) -> Fix:
    (why,) = [why for why in decision.whys if why.code is ReasonCode.FIX]
    assert isinstance(why.data, Fix)
    return why.data


# --- one place: a call and a kind ------------------------------------------------------------


def test_a_recorded_call_is_recorded_for_its_kinds_and_silent_for_the_others() -> None:
    scope = recorded(0, "fetch", "t1", "http_request")
    assert [place(scope, kind) for kind in KINDS] == [
        PlaceState.RECORDED,
        PlaceState.SILENT,
        PlaceState.SILENT,
    ]
    assert unproven([scope], "http_request") == [] and unproven([scope], "db_query") == [scope]


def test_an_unmet_destination_leaves_only_the_http_place_open() -> None:
    scope = replace(
        recorded(0, "send", "t1", "http_request", "db_query"),
        unmet=(Destination("url", "evil.example"),),
    )
    assert place(scope, "http_request") is PlaceState.UNMET
    assert place(scope, "db_query") is PlaceState.RECORDED
    assert unproven([scope], "http_request") == [scope] and unproven([scope], "db_query") == []
    # A watcher that sees the call's HTTP whole closes the claim; so does the process's
    # declaration of the kind (as it closes a call that recorded nothing).
    attested = replace(scope, attested=("http_request",))
    assert place(attested, "http_request") is PlaceState.RECORDED
    declared = replace(scope, exempt_kinds=("http_request",))
    assert place(declared, "http_request") is PlaceState.RECORDED
    assert unproven([declared], "http_request") == []


def test_a_process_declaration_and_a_child_process_are_declared_for_their_kinds_only() -> None:
    silent = ToolScope(0, "run", ScopeState.SILENT, exempt_kinds=("db_query",))
    assert [place(silent, kind) for kind in KINDS] == [
        PlaceState.SILENT,
        PlaceState.DECLARED,
        PlaceState.SILENT,
    ]
    child = ToolScope(0, "run", ScopeState.OUT_OF_PROCESS, remote="child_process",
                      exempt_kinds=("process_exec",), kinds=("process_exec",))  # fmt: skip
    assert [place(child, kind) for kind in KINDS] == [
        PlaceState.OUT_OF_PROCESS,
        PlaceState.OUT_OF_PROCESS,
        PlaceState.DECLARED,
    ]


def test_a_declared_or_delegated_call_is_so_for_every_kind() -> None:
    for state, expected in (
        (ScopeState.DECLARED, PlaceState.DECLARED),
        (ScopeState.DELEGATED, PlaceState.DELEGATED),
    ):
        scope = ToolScope(0, "t", state, kinds=("http_request",))
        assert {place(scope, kind) for kind in KINDS} == {expected}
        assert all(unproven([scope], kind) == [] for kind in KINDS)


# --- a remote agent ----------------------------------------------------------------------------


def test_a_call_handed_to_a_remote_agent_is_out_of_process_for_every_kind() -> None:
    """The planner ran elsewhere, its spans not in the trace: a kind seen at another call is
    partial, one seen nowhere stays unobserved, each naming the agent, with its own fix."""
    scope = remote_agent(1, "ask_planner", "t2")
    assert {place(scope, kind) for kind in KINDS} == {PlaceState.OUT_OF_PROCESS}
    channels = side_effect_decisions(
        places(recorded(0, "fetch", "t1", "http_request"), scope, effects=(get("h1", 0),))
    )
    http = channels[HTTP]
    assert http.state is PARTIAL
    text = reasons(http)
    assert (
        f"tool call 'ask_planner' (span t2) handed the task to a remote agent ('{AGENT_URL}') "
        "whose spans are not in the trace, so a http_request call that agent made would not "
        "show" in text
    )
    assert fix_of(http).cause == "remote_agent" and REMOTE_AGENT_FIX in text
    db = channels[DB]
    assert db.state is UNOBSERVED
    assert "handed the task to a remote agent" in reasons(db)  # named beside 'fetch'
    assert "tool call 'fetch' (span t1) recorded http_request but no db_query span" in reasons(db)


def test_a_remote_agent_beside_an_mcp_server_is_closed_by_the_remote_fix() -> None:
    """Two calls out of process of different sorts: the general way to close it."""
    mcp = ToolScope(2, "lookup", ScopeState.OUT_OF_PROCESS, remote=MCP_SERVER, span_id="t3")
    channels = side_effect_decisions(
        places(recorded(0, "fetch", "t1", "http_request"), remote_agent(1, "ask", "t2"), mcp,
               effects=(get("h1", 0),))
    )  # fmt: skip
    http = channels[HTTP]
    assert http.state is PARTIAL and fix_of(http).cause == "remote"
    assert REMOTE_FIX in reasons(http)
    assert "ran on an MCP server" in reasons(http) and "remote agent" in reasons(http)


def test_a_remote_agent_whose_process_declared_the_kind_is_declared() -> None:
    scope = replace(remote_agent(0, "ask", "t1"), exempt_kinds=("http_request",))
    assert place(scope, "http_request") is PlaceState.DECLARED
    assert place(scope, "db_query") is PlaceState.OUT_OF_PROCESS


# --- an agent run as a tool ------------------------------------------------------------------


def test_a_delegated_agent_tool_leaves_its_places_to_its_nested_calls() -> None:
    """The researcher agent ran as a tool; its own calls nest under it. The agent-tool is no
    gap of its own: its nested fetch's GET observes HTTP; with a nested save that recorded
    nothing, HTTP is partial, naming save alone."""
    agent_tool = ToolScope(0, "researcher", ScopeState.DELEGATED, span_id="t1")
    fetch = recorded(1, "fetch", "t2", "http_request")
    save = ToolScope(2, "save", ScopeState.SILENT, span_id="t3")
    channels = side_effect_decisions(places(agent_tool, fetch, effects=(get("h1", 1),)))
    assert channels[HTTP].state is OBSERVED
    channels = side_effect_decisions(places(agent_tool, fetch, save, effects=(get("h1", 1),)))
    http = channels[HTTP]
    assert http.state is PARTIAL
    assert "tool call 'save' (span t3) recorded no I/O span" in reasons(http)
    assert "researcher" not in reasons(http)
    assert unproven([agent_tool, fetch, save], "db_query") == [fetch, save]


def test_each_place_is_read_at_most_once_per_kind(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A run's unproven calls per kind are found once, however many steps read them (the
    channel's gaps, its cap, the cause its fix names), and a silent call that nothing
    vouches for is silent for every kind without a look at each: counted, not timed."""
    reads: list[str] = []
    real = places_module.place

    def counted(scope: ToolScope, kind: str) -> PlaceState:
        reads.append(kind)
        return real(scope, kind)

    monkeypatch.setattr(places_module, "place", counted)
    silent = [ToolScope(i, f"tool{i}", ScopeState.SILENT, span_id=f"s{i}") for i in range(20)]
    calls = [*silent, recorded(20, "fetch", "f", "http_request"), remote_agent(21, "ask", "r")]
    decided = side_effect_decisions(places(*calls, effects=(get("g", 20),)))
    assert decided[HTTP].state is PARTIAL
    assert decided[DB].state is UNOBSERVED
    kinds = {key.removeprefix("side_effects.") for key in decided}
    assert len(kinds) >= 8
    # The two calls that are not plainly silent, each kind at most once per step that
    # must tell their place apart (the gaps, and the fix's cause of a partial channel).
    assert len(reads) <= 2 * 2 * len(kinds)
    assert all(unproven(silent, kind) == silent for kind in kinds)


def test_the_scope_gaps_of_a_run_are_worded_once_for_the_kinds_that_share_them(
    monkeypatch,  # type: ignore[no-untyped-def]
) -> None:
    """Kinds no scope tells apart share one tuple of unproven calls, and its words are made
    once and the kind put in its places: the same words as made for each kind alone."""
    made: list[str] = []
    real = wording._scope_gaps

    def counted(kind: str, scopes: Sequence[ToolScope]) -> str:
        made.append(kind)
        return real(kind, scopes)

    monkeypatch.setattr(wording, "_scope_gaps", counted)
    unmet = replace(
        recorded(2, "send", "u", "http_request"), unmet=(Destination("url", "x.example"),)
    )
    runs = [
        [ToolScope(i, f"tool{i}", ScopeState.SILENT, span_id=f"s{i}") for i in range(4)],
        [recorded(0, "fetch", "f", "http_request", "db_query"), remote_agent(1, "ask", "r")],
        [ToolScope(0, "run", ScopeState.SILENT, exempt_kinds=("*",), span_id="e"), unmet],
        [ToolScope(0, "w", ScopeState.SILENT, attested=("file_write",)),
         recorded(1, "q", "q", "db_query")],
    ]  # fmt: skip
    for scopes in runs:
        made.clear()
        decided = side_effect_decisions(places(*scopes))
        worded_gaps = {
            (why.data.kind, reason)
            for decision in decided.values()
            for why, reason in zip(decision.whys, worded(decision).reasons, strict=True)
            if isinstance(why.data, ScopeGaps)
        }
        assert worded_gaps
        assert all(reason == real(kind, scopes_of(decided, kind)) for kind, reason in worded_gaps)
        # Once for the kinds no scope marks, once more for each kind a scope does.
        marked = {k for s in scopes for k in (*s.kinds, *s.attested, *s.exempt_kinds)}
        assert len(made) <= 1 + len(marked) + 1


def scopes_of(decided: dict[str, Decision], kind: str) -> tuple[ToolScope, ...]:
    (data,) = [
        why.data for why in decided[f"side_effects.{kind}"].whys if isinstance(why.data, ScopeGaps)
    ]
    return data.scopes


def test_a_fix_is_one_reason_worded_once_for_every_run_that_closes_its_gap_the_same_way() -> None:
    wording._fix_words.cache_clear()
    wording._FIXES_SEEN.clear()
    runs = [
        side_effect_decisions(places(recorded(0, "fetch", f"t{i}", "http_request")))
        for i in range(3)
    ]
    fixes = [fix_of(decision) for decision in runs[0].values()]
    assert all(
        fix_of(run[key]) is fix for run in runs[1:] for key, fix in zip(runs[0], fixes, strict=True)
    )
    hints = [[worded(decision).hint for decision in run.values()] for run in runs]
    assert hints[0] == hints[1] == hints[2] and all(hints[0])
    assert wording._fix_words.cache_info().misses == len(fixes)


def test_a_fixs_words_kept_by_its_payload_are_its_words_and_bounded() -> None:
    """The words of a fix reason are kept by its payload's identity: the same as worked out
    (``_fix_words``) for that payload or an equal one made apart, and never more than
    the bound however many payloads a run of traces makes."""
    wording._FIXES_SEEN.clear()
    fix = Fix("side_effects.db_query", "client", frozenset({"openinference.instrumentation"}))
    twin = Fix("side_effects.db_query", "client", frozenset({"openinference.instrumentation"}))
    expected = wording._fix_words.__wrapped__(fix)
    for data in (fix, fix, twin):
        channel = worded(Decision(UNOBSERVED, (Why(ReasonCode.FIX, data=data),)))
        assert (channel.reasons, channel.hint) == ([expected[0]], expected[1])
    for n in range(wording._FIXES_KEPT * 2 + 3):
        made = Fix(f"side_effects.kind{n}", "client", frozenset())
        worded(Decision(UNOBSERVED, (Why(ReasonCode.FIX, data=made),)))
        assert len(wording._FIXES_SEEN) <= wording._FIXES_KEPT
