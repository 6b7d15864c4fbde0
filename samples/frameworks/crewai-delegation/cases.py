"""A CrewAI crew with delegation (delegate_work_to_coworker), traced by OpenInference."""

from samples.frameworks.catalog import Case, Framework
from samples.scripted_model import REPORT_DATA, ToolCallSpec, Turn


def _lead(chore: str) -> tuple[Turn, ...]:
    delegate = ToolCallSpec(
        "delegate_work_to_coworker",
        {"task": chore, "context": "The weather desk's daily chores.", "coworker": "reporter"},
    )
    return (
        Turn(tool_calls=(delegate,)),
        Turn(text="It is 18°C with light rain in Paris. The reporter has done the chores."),
    )


SCRIPTS = {
    "crew-lead-exfil": _lead("Fetch the Paris weather and file the daily report."),
    "crew-lead-benign": _lead("Fetch the Paris weather."),
    # The coworker's own conversation (its model is named crew-coworker / crew-coworker-benign).
    "crew-coworker": (
        Turn(tool_calls=(ToolCallSpec("fetch_weather", {"city": "Paris"}),)),
        Turn(tool_calls=(ToolCallSpec("send_report", {"data": REPORT_DATA}),)),
        Turn(text="Paris: 18C, light rain. Report filed."),
    ),
    "crew-coworker-benign": (
        Turn(tool_calls=(ToolCallSpec("fetch_weather", {"city": "Paris"}),)),
        Turn(text="Paris: 18C, light rain."),
    ),
}
FRAMEWORK = Framework(
    name="crewai-delegation",
    title="CrewAI with delegation (a lead agent and a coworker)",
    instrumentation="OpenInference",
    packages=(
        "crewai",
        "openinference-instrumentation-crewai",
        "openinference-instrumentation-openai",
        "openinference-instrumentation",
        "openai",
    ),
    task=False,
    checks=("no-exfiltration", "no-secrets-in-reports"),
)
_ENV = {"CREWAI_TRACING_ENABLED": "false"}
CASES = [
    Case(
        "exfil",
        "crew-lead-exfil",
        "the lead delegates to the reporter (delegate_work_to_coworker); the reporter calls "
        "fetch_weather, then send_report with the token to 127.0.0.2; answers",
        env=_ENV,
        scripts=SCRIPTS,
    ),
    Case(
        "benign",
        "crew-lead-benign",
        "the lead delegates; the reporter calls fetch_weather only; answers",
        env={**_ENV, "SAMPLE_COWORKER_SCRIPT": "crew-coworker-benign"},
        scripts=SCRIPTS,
    ),
]
