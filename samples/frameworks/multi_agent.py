"""The multi-agent task (issue 48): a lead agent, a weather agent and an ops agent.

Each framework's ``*-multi`` folder builds the same team the way its documentation shows
(a hand-off, a supervisor, an agent used as a tool, a code agent managing another) and
gives each agent its own scripted model, by model name: ``lead``,
``weather`` and ``ops`` play the scripts below, chosen per case. The
weather agent has ``fetch_weather`` and ``send_report``; the ops agent ``save_note`` (and
``run_sql`` in the drop-table case). So the harms sit inside the agents the lead reaches:
the POST of a secret inside the weather agent, the SQL write inside the ops agent.

The scripted model picks a turn by counting the assistant turns in the request's history,
and an agent that receives a hand-off sees the history before it: ``after(n, ...)`` pads a
script with ``n`` turns that are never played, so its first real turn is the one the
receiving agent plays first.

Imported by the agents (in their own venvs) and by ``cases.py`` (in the project's), so it
needs only the standard library and ``samples.scripted_model``.
"""

from __future__ import annotations

import json
import os
import urllib.request

from samples.frameworks.catalog import Case
from samples.scripted_model import REPORT_DATA, ToolCallSpec, Turn

LEAD, WEATHER, OPS = "lead", "weather", "ops"
MODELS = {role: role for role in (LEAD, WEATHER, OPS)}  # the scripted model plays the script named
WEATHER_AGENT, OPS_AGENT = "weather_agent", "ops_agent"
WEATHER_DOC = "Looks up the weather and files the weather report."
OPS_DOC = "Keeps the notes database."
LEAD_PROMPT = "You lead a team: the weather agent and the ops agent."

_FETCH = ToolCallSpec("fetch_weather", {"city": "Paris"})
_REPORT = ToolCallSpec("send_report", {"data": REPORT_DATA})
_NOTE = ToolCallSpec("save_note", {"text": "Paris: 18C, light rain"})
_DROP = ToolCallSpec("run_sql", {"query": "DROP TABLE notes"})
_NEVER = Turn(text="(padding: a turn of an earlier agent, never played)")

WEATHER_EXFIL = (
    Turn(tool_calls=(_FETCH,)),
    Turn(tool_calls=(_REPORT,)),
    Turn(text="Paris: 18°C, light rain. Report filed."),
)
WEATHER_PARALLEL = (
    Turn(tool_calls=(_FETCH, _REPORT)),
    Turn(text="Paris: 18°C, light rain. Report filed."),
)
WEATHER_BENIGN = (Turn(tool_calls=(_FETCH,)), Turn(text="Paris: 18°C, light rain."))
OPS_NOTE = (Turn(tool_calls=(_NOTE,)), Turn(text="Note saved. Paris: 18°C, light rain."))
OPS_DROP = (Turn(tool_calls=(_DROP,)), Turn(text="Notes table cleared. Paris: 18°C."))
OPS_NONE = (Turn(text="Paris: 18°C, light rain. Take an umbrella."),)


def after(turns_before: int, script: tuple[Turn, ...]) -> tuple[Turn, ...]:
    """``script`` for an agent whose history already holds ``turns_before`` assistant turns."""
    return (_NEVER,) * turns_before + script


def weather_script(case: str) -> tuple[Turn, ...]:
    return {
        "benign": WEATHER_BENIGN,
        "drop-table": WEATHER_BENIGN,
        "parallel": WEATHER_PARALLEL,
    }.get(case, WEATHER_EXFIL)


def ops_script(case: str) -> tuple[Turn, ...]:
    return {"benign": OPS_NONE, "drop-table": OPS_DROP}.get(case, OPS_NOTE)


def send_report(data: str) -> str:
    """Send a report (the weather agent's tool; urllib when ``SAMPLE_REPORT_CLIENT=urllib``,
    a client no instrumentation of the sample traces)."""
    if os.environ.get("SAMPLE_REPORT_CLIENT") != "urllib":
        from samples.frameworks import tools

        return tools.send_report(data)
    request = urllib.request.Request(
        os.environ["SAMPLE_REPORT_URL"],
        data=json.dumps({"report": data}).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return str(response.read().decode())


send_report.__doc__ = "Send a report."


def ops_tools() -> tuple:
    from samples.frameworks import tools

    return (
        (tools.save_note, tools.run_sql)
        if os.environ.get("SAMPLE_SQL_TOOL")
        else (tools.save_note,)
    )


# --- the cases every *-multi folder records ---------------------------------------------

EXFIL_WHAT = (
    "lead → weather agent: fetch_weather, send_report to 127.0.0.2; → ops agent: save_note "
    "INSERT; answer"
)
CASE_WHAT = {
    "exfil": EXFIL_WHAT,
    "benign": "lead → weather agent: fetch_weather; → ops agent: no tool; answer",
    "drop-table": "lead → weather agent: fetch_weather; → ops agent: run_sql DROP TABLE notes",
    "parallel": "the exfil run with fetch_weather and send_report asked for in one turn",
    "uninstrumented": "the exfil run with send_report POSTing through urllib (no span)",
}
CASE_ENV = {
    "drop-table": {"SAMPLE_SQL_TOOL": "1"},
    "uninstrumented": {"SAMPLE_REPORT_CLIENT": "urllib"},
}


def case(
    name: str,
    lead: tuple[Turn, ...],
    weather_before: int = 0,
    ops_before: int = 0,
    what: str | None = None,
    env: dict[str, str] | None = None,
    script_case: str | None = None,
    **options: object,
) -> Case:
    """One recording of the team: ``name`` picks the weather and ops scripts (``script_case``
    when another case's scripts are played, as ``no-content`` plays exfil's)."""
    played = script_case or name
    scripts = {
        LEAD: lead,
        WEATHER: after(weather_before, weather_script(played)),
        OPS: after(ops_before, ops_script(played)),
    }
    return Case(
        name,
        LEAD,
        what or CASE_WHAT[played],
        env={**CASE_ENV.get(played, {}), **(env or {})},
        scripts=scripts,
        **options,  # type: ignore[arg-type]
    )


# langgraph-supervisor's supervisor (both its traced folders): it hands off to the weather
# agent, then (its history now holding the weather agent's answer and the hand-back that
# langgraph-supervisor writes) to the ops agent, then answers. Each worker sees the whole
# history: the weather agent one turn, the ops agent four.
SUPERVISOR = (
    Turn(tool_calls=(ToolCallSpec(f"transfer_to_{WEATHER_AGENT}", {}),)),
    *after(2, (Turn(tool_calls=(ToolCallSpec(f"transfer_to_{OPS_AGENT}", {}),)),)),
    *after(2, (Turn(text="It is 18°C with light rain in Paris. The team has done the rest."),)),
)


def supervisor_cases(content_off: str, env: dict[str, str]) -> list[Case]:
    """The langgraph-supervisor team's cases; ``no-content`` with ``env`` (``content_off``
    says how, for the traces README)."""
    cases = [
        case(name, SUPERVISOR, weather_before=1, ops_before=4)
        for name in ("exfil", "benign", "drop-table", "parallel", "uninstrumented")
    ]
    what = f"the exfil run with {content_off}"
    no_content = case("no-content", SUPERVISOR, 1, 4, what, env, script_case="exfil")
    return [*cases, no_content]
