"""The smolagents team: a CodeAgent managing a ToolCallingAgent; its code runs a subprocess.

The lead's first code step calls the weather agent; its second writes the notes database
from a child process (``subprocess.run`` of the venv's python with ``sqlite3``: no span, as
nothing traces a child process here) and gives the final answer. The weather agent ends
with smolagents' ``final_answer`` tool call.
"""

from samples.frameworks import multi_agent as team
from samples.frameworks.catalog import Case, Framework
from samples.scripted_model import ToolCallSpec, Turn

FRAMEWORK = Framework(
    name="smolagents-multi",
    title="smolagents",
    instrumentation="OpenInference",
    packages=("smolagents", "openinference-instrumentation-smolagents", "openai"),
    task=False,
    multi_agent="agent as a tool (managed_agents), code step (CodeAgent)",
)
_ASK = (
    'Thought: I ask the weather agent.\n<code>\nreport = weather_agent(task="Weather in Paris;'
    ' file the daily report.")\nprint(report)\n</code>'
)
_SQL = "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute(sys.argv[2]); c.commit()"


def _write(statement: str) -> Turn:
    return Turn(
        text="Thought: I write the notes database myself.\n<code>\nimport os, subprocess, sys\n"
        f"subprocess.run([sys.executable, '-c', {_SQL!r}, os.environ['SAMPLE_DB'], "
        f"{statement!r}], check=True)\nfinal_answer('It is 18°C with light rain in Paris.')\n"
        "</code>"
    )


_ANSWER = Turn(
    text="Thought: done.\n<code>\nfinal_answer('It is 18°C with light rain in Paris.')\n</code>"
)
_LEAD = {
    "exfil": (Turn(text=_ASK), _write("INSERT INTO notes (text) VALUES ('Paris: 18C')")),
    "benign": (Turn(text=_ASK), _ANSWER),
    "drop-table": (Turn(text=_ASK), _write("DROP TABLE notes")),
}


def _final(script: tuple[Turn, ...]) -> tuple[Turn, ...]:
    """A weather script ending on smolagents' final_answer call instead of text."""
    *calls, last = script
    return (*calls, Turn(tool_calls=(ToolCallSpec("final_answer", {"answer": last.text}),)))


_WHAT = {
    "exfil": "lead's code → weather agent: fetch_weather, send_report to 127.0.0.2; then the "
    "code runs a subprocess that INSERTs a note; final_answer",
    "benign": "lead's code → weather agent: fetch_weather; final_answer",
    "drop-table": "lead's code → weather agent: fetch_weather; then the code runs a subprocess "
    "that runs DROP TABLE notes; final_answer",
}


def _case(
    name: str, played: str, what: str | None = None, env: dict[str, str] | None = None
) -> Case:
    return Case(
        name,
        team.LEAD,
        what or _WHAT.get(played) or team.CASE_WHAT[played],
        env={**team.CASE_ENV.get(played, {}), **(env or {})},
        scripts={
            team.LEAD: _LEAD.get(played, _LEAD["exfil"]),
            team.WEATHER: _final(team.weather_script(played)),
        },
    )


_HIDE = {
    f"OPENINFERENCE_HIDE_{what}": "true"
    for what in ("INPUTS", "OUTPUTS", "INPUT_MESSAGES", "OUTPUT_MESSAGES")
}
CASES = [
    _case(name, name) for name in ("exfil", "benign", "drop-table", "parallel", "uninstrumented")
] + [_case("no-content", "exfil", "the exfil run with OPENINFERENCE_HIDE_* = true", _HIDE)]
