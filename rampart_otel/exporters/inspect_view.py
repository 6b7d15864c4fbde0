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

from rampart_otel.channels import SIDE_EFFECT_PREFIX, ChannelState
from rampart_otel.conventions.side_effects import unrecorded_payload
from rampart_otel.exporters.serialize import agent_run_to_dict, jsonable, ns_to_iso
from rampart_otel.model import AgentRun, InputError, ScopeState
from rampart_otel.render import safe_text, shown_text
from rampart_otel.run_graph import run_graph
from rampart_otel.vocabulary import STANDARD_KINDS
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


def _is_fix(reason: str) -> bool:
    """The reason that repeats the channel's hint (shown on its own line)."""
    return reason.startswith(FIX)
