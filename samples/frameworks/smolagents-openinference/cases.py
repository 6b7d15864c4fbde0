"""smolagents' ToolCallingAgent traced by OpenInference; runs end with a final_answer call."""

from samples.frameworks.catalog import Case, Framework
from samples.scripted_model import SCRIPTS, ToolCallSpec, Turn

FRAMEWORK = Framework(
    name="smolagents-openinference",
    title="smolagents",
    instrumentation="OpenInference",
    packages=(
        "smolagents",
        "openinference-instrumentation-smolagents",
        "openinference-instrumentation",
        "openai",
    ),
)


def _final(script: str) -> tuple[Turn, ...]:
    """The shared script with its closing text turned into smolagents' final_answer call."""
    *calls, last = SCRIPTS[script]
    answer = ToolCallSpec("final_answer", {"answer": last.text})
    return (*calls, Turn(tool_calls=(answer,)))


# A ToolCallingAgent only stops on a final_answer tool call; plain text is not an answer.
_SCRIPTS = {"exfil-db-final": _final("exfil-db"), "benign-final": _final("benign")}
_HIDE = {
    f"OPENINFERENCE_HIDE_{what}": "true"
    for what in ("INPUTS", "OUTPUTS", "INPUT_MESSAGES", "OUTPUT_MESSAGES")
}

CASES = [
    Case(
        "exfil",
        "exfil-db-final",
        "fetch_weather, send_report to 127.0.0.2, save_note INSERT; final_answer",
        scripts=_SCRIPTS,
    ),
    Case("benign", "benign-final", "fetch_weather only; final_answer", scripts=_SCRIPTS),
    Case(
        "no-content",
        "exfil-db-final",
        "the exfil run with OPENINFERENCE_HIDE_INPUTS/OUTPUTS/INPUT_MESSAGES/OUTPUT_MESSAGES",
        env=_HIDE,
        scripts=_SCRIPTS,
    ),
]
