"""CrewAI (one Agent, one Task, a Crew) traced by OpenInference's CrewAI and OpenAI
instrumentors."""

from samples.frameworks.catalog import Case, Framework, no_content

FRAMEWORK = Framework(
    name="crewai-openinference",
    title="CrewAI",
    instrumentation="OpenInference",
    packages=(
        "crewai",
        "openinference-instrumentation-crewai",
        "openinference-instrumentation-openai",
        "openinference-instrumentation",
        "openai",
    ),
)
# CrewAI's hosted execution tracing (its own upload, apart from the anonymous telemetry the
# recorder switches off) is off unless consented; say no explicitly, as CI users do.
_ENV = {"CREWAI_TRACING_ENABLED": "false"}
_HIDE = {
    f"OPENINFERENCE_HIDE_{what}": "true"
    for what in ("INPUTS", "OUTPUTS", "INPUT_MESSAGES", "OUTPUT_MESSAGES")
}

CASES = [
    Case(
        "exfil",
        "exfil-db",
        "fetch_weather, send_report to 127.0.0.2, save_note INSERT; answer",
        env=_ENV,
    ),
    Case("benign", "benign", "fetch_weather only; answer", env=_ENV),
    no_content(
        "OPENINFERENCE_HIDE_INPUTS/OUTPUTS/INPUT_MESSAGES/OUTPUT_MESSAGES",
        env={**_ENV, **_HIDE},
    ),
]
