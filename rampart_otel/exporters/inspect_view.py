"""`rampart-otel inspect` output: a readable terminal view and the complete JSON form.

The JSON document (schema ``rampart-otel/inspect@1``, see docs/inspect-json.md) is written
run by run, so inspecting a large input never holds every run in memory.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import IO

from rich.console import Console
from rich.text import Text

from rampart_otel import watch
from rampart_otel.channels import SIDE_EFFECT_PREFIX, ChannelState
from rampart_otel.conventions.side_effects import unrecorded_payload
from rampart_otel.exporters.serialize import agent_run_to_dict, jsonable, ns_to_iso
from rampart_otel.model import AgentRun, InputError, PlaceState, ScopeState, ToolScope
from rampart_otel.places import place
from rampart_otel.render import safe_text, shown_text
from rampart_otel.run_graph import run_graph
from rampart_otel.vocabulary import STANDARD_KINDS
from rampart_otel.watch import EVENT as WATCH_EVENT
from rampart_otel.watch import REQUEST_BODY_SIZE
from rampart_otel.watch import SCOPE as WATCH_SCOPE
from rampart_otel.wording import FIX, scope_in_words, stitch_in_words

INSPECT_SCHEMA = "rampart-otel/inspect@1"

_SCOPE_STYLE = {
    ScopeState.RECORDED: "green",
    ScopeState.DECLARED: "blue",
    ScopeState.SILENT: "yellow",
    ScopeState.OUT_OF_PROCESS: "yellow",
}
_STATE_STYLE = {
    ChannelState.OBSERVED: "green",
    ChannelState.PARTIAL: "yellow",
    ChannelState.UNOBSERVED: "red",
}


def write_json(runs: Iterable[AgentRun], errors: list[InputError], out: IO[str]) -> int:
    """Stream the document; ``errors`` is read after the runs, so it may fill meanwhile."""
    out.write(f'{{"schema": "{INSPECT_SCHEMA}", "runs": [')
    count = 0
    for run in runs:
        out.write(",\n" if count else "\n")
        out.write(json.dumps(agent_run_to_dict(run), ensure_ascii=True))
        count += 1
    out.write('\n], "input_errors": ')
    out.write(
        json.dumps([jsonable({"location": e.location, "message": e.message}) for e in errors])
    )
    out.write("}\n")
    return count


def write_terminal(runs: Iterable[AgentRun], console: Console) -> int:
    count = 0
    for run in runs:
        if count:
            console.print()
        _print_run(run, console)
        count += 1
    if count == 0:
        console.print(Text("No runs found.", style="yellow"))
    return count


def _line(*parts: tuple[str, str] | str) -> Text:
    return Text.assemble(*parts)


# How each place state is shown (a place left unproven in yellow).
_PLACE_STYLE = {
    PlaceState.RECORDED: "green",
    PlaceState.ATTESTED: "green",
    PlaceState.DECLARED: "blue",
    PlaceState.DELEGATED: "blue",
    PlaceState.UNMET: "yellow",
    PlaceState.SILENT: "yellow",
    PlaceState.OUT_OF_PROCESS: "yellow",
}


def _places(scope: ToolScope) -> list[str | tuple[str, str]]:
    """Each standard side-effect kind's place at this call: ``http_request recorded, ...``."""
    parts: list[str | tuple[str, str]] = []
    for position, kind in enumerate(STANDARD_KINDS):
        state = place(scope, kind)
        parts.append(("" if position == 0 else ", ") + kind + " ")
        parts.append((state.value, _PLACE_STYLE.get(state, "")))
    return parts


def _watched(run: AgentRun, index: int) -> str:
    """What the watcher attests at this call's span, and the events it recorded there."""
    scope = next((s for s in run.tool_scopes if s.call_index == index), None)
    if scope is None or scope.span_id is None:
        return ""
    span = next((s for s in run.run.spans if s.span_id == scope.span_id), None)
    if span is None:
        return ""
    sees = span.attributes.get(watch.ATTESTATION)
    if not isinstance(sees, (list, tuple)):
        return ""
    blind = [str(b) for b in span.attributes.get(watch.BLIND) or () if isinstance(b, str)]
    text = f"the process sees {', '.join(str(k) for k in sees)}"
    if blind:
        text += f"; blind to {', '.join(safe_text(b, 40) for b in blind[:4])}"
    attested = ", ".join(scope.attested)
    return text + (f"; attests {attested}" if attested else "; attests nothing here")


def _print_input(run: AgentRun, console: Console) -> None:
    """The user's messages, escaped and cut like the response, with the channel's state."""
    state = run.coverage.get("input").state
    console.print(
        _line(
            f"  input ({len(run.user_input)}, ",
            (state.value, _STATE_STYLE[state]),
            "):" if run.user_input else "): none read",
        )
    )
    for message in run.user_input:
        text = shown_text(message.text) if message.text is not None else None
        console.print(
            _line(
                "    - ",
                text if text is not None else ("content not captured", "dim"),
                (f"  span {message.span_id}", "dim") if message.span_id else "",
            )
        )


def _derived_note(derived: dict[str, str], key: str) -> str:
    """`` (derived from db.statement)`` for a detail the span did not record itself."""
    source = derived.get(key)
    return f" (derived from {safe_text(source, 120)})" if source is not None else ""


def _print_run(run: AgentRun, console: Console) -> None:
    revision = f" (revision {run.run.revision})" if run.run.revision else ""
    console.print(_line(("Run ", "bold"), (safe_text(run.run_id), "bold cyan"), revision))
    console.print(_line("  traces:   ", ", ".join(safe_text(t) for t in run.trace_ids)))
    if run.run.sources:
        console.print(_line("  read at:  ", ", ".join(safe_text(s) for s in run.run.sources)))
    for stitch in run.run.stitched:
        console.print(
            _line(
                "  stitched: ",
                f"trace {safe_text(stitch.trace_id)} — ",
                safe_text(stitch_in_words(stitch.how, stitch.via)),
            )
        )
    console.print(_line("  service:  ", shown_text(run.service or "-")))
    console.print(_line("  started:  ", ns_to_iso(run.started_at_ns) or "-"))
    console.print(_line("  level:    ", (run.coverage.level.value, "bold")))
    if run.fragment is not None:
        console.print(
            _line(
                "  kind:     ",
                ("fragment", "bold yellow"),
                " — ",
                safe_text(run.fragment.message.split(": ", 1)[-1]),
            )
        )
    read = ", ".join(
        f"{safe_text(n)} {u.spans}" for n, u in sorted(run.conventions.items()) if u.spans
    )
    unread = ", ".join(
        f"{safe_text(n)} {u.not_understood}"
        for n, u in sorted(run.conventions.items())
        if u.not_understood
    )
    console.print(
        _line(
            "  spans:    ",
            f"{len(run_graph(run.run))}; read by {read or 'no convention'}",
            ("; not understood: " + unread, "yellow") if unread else "",
        )
    )
    _print_input(run, console)
    response = run.response.text
    console.print(
        _line(
            "  response: ",
            shown_text(response) if response is not None else ("not captured", "dim"),
        )
    )

    console.print(Text(f"  tool calls ({len(run.tool_calls)}):", style="bold"))
    scopes = {scope.call_index: scope for scope in run.tool_scopes}
    watched = _watched_events(run)
    for index, call in enumerate(run.tool_calls):
        args = shown_text(json.dumps(jsonable(call.arguments))) if call.arguments_captured else None
        result = shown_text(jsonable(call.result), 120) if call.result_captured else None
        console.print(
            _line(
                "    - ",
                (shown_text(call.name), "cyan"),
                f" [{call.status.value}] span {','.join(call.span_ids)}",
                (" (read from model input history)", "yellow") if call.from_history else "",
            )
        )
        scope = scopes.get(index)
        if scope is not None:
            style = _SCOPE_STYLE.get(scope.state, "")
            console.print(_line("      scope:  ", (scope_in_words(scope), style)))
            console.print(_line("      places: ", *_places(scope)))
            attestation = _watched(run, index)
            if attestation:
                console.print(_line("      watcher:", (f" {attestation}", "dim")))
        if index in watched:
            console.print(_line("      watched: ", "; ".join(watched[index])))
        console.print(
            _line("      args:   ", args if args is not None else ("not captured", "dim"))
        )
        console.print(
            _line("      result: ", result if result is not None else ("not captured", "dim"))
        )

    console.print(Text(f"  side effects ({len(run.side_effects)}):", style="bold"))
    for effect in run.side_effects:
        details = " ".join(
            f"{safe_text(key, 40)}={shown_text(value, 120)}" + _derived_note(effect.derived, key)
            for key, value in effect.details.items()
            if value is not None
        )
        enclosing = ""
        if effect.tool_call_index is not None:
            name = shown_text(run.tool_calls[effect.tool_call_index].name)
            enclosing = f" in tool call #{effect.tool_call_index} {name}"
        console.print(
            _line(
                "    - ",
                (safe_text(effect.kind), "magenta"),
                f" {details} span {effect.span_id}{enclosing}",
            )
        )
        unrecorded = unrecorded_payload(effect.kind, effect.details, effect.derived)
        if unrecorded:
            console.print(
                _line(
                    "        ",
                    (f"not recorded: {', '.join(unrecorded)}", "dim"),
                    ("  (a value that left through it cannot be read)", "dim"),
                )
            )

    console.print(Text("  coverage:", style="bold"))
    for key, channel in sorted(run.coverage.channels.items()):
        source = f" ({channel.source.value})" if channel.source.value != "inferred" else ""
        console.print(
            _line(
                f"    {key:<28} ",
                (channel.state.value + source, _STATE_STYLE[channel.state]),
                ("  " + "; ".join(shown_text(r) for r in channel.reasons if not _is_fix(r)), "dim"),
            )
        )
        if channel.hint is not None:
            console.print(_line(f"    {'':<28} ", ("fix: " + safe_text(channel.hint), "cyan")))
    unseen = [
        kind for kind in STANDARD_KINDS if SIDE_EFFECT_PREFIX + kind not in run.coverage.channels
    ]
    if unseen:
        console.print(
            _line(
                f"    {'side_effects.' + '|'.join(unseen)}  ",
                ("unobserved", _STATE_STYLE[ChannelState.UNOBSERVED]),
                ("  no span of these kinds in the run, and none declared", "dim"),
            )
        )
    if run.integrity:
        console.print(Text("  integrity:", style="bold"))
        for finding in run.integrity:
            console.print(
                _line("    - ", (finding.kind, "yellow"), " ", shown_text(finding.message))
            )


def _watched_events(run: AgentRun) -> dict[int, list[str]]:
    """Per tool call, the side effects the watcher recorded in it (rampart_otel.watch), as
    one short text each: its span's name, an HTTP request's URL and the size of its body."""
    graph = run_graph(run.run)
    found: dict[int, list[str]] = {}
    for effect in run.side_effects:
        span = graph.span(effect.span_id)
        if effect.tool_call_index is None or span is None or span.scope.name != WATCH_SCOPE:
            continue
        text = shown_text(span.name, 80)
        url = effect.details.get("url")
        if url:
            text = f"{text} {shown_text(url, 120)}"
        size = span.attributes.get(REQUEST_BODY_SIZE)
        if isinstance(size, int):
            text += f" (body {size} bytes)"
        event = span.attributes.get(WATCH_EVENT)
        text += f" [{safe_text(event, 40)}]" if isinstance(event, str) else ""
        found.setdefault(effect.tool_call_index, []).append(text)
    return found


def _is_fix(reason: str) -> bool:
    """The reason that repeats the channel's hint (shown on its own line)."""
    return reason.startswith(FIX)
