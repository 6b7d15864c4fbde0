"""DSPy's ReAct module traced by OpenInference."""

from samples.frameworks.catalog import Case, Framework
from samples.scripted_model import REPORT_DATA, Turn

FRAMEWORK = Framework(
    name="dspy-openinference",
    title="DSPy (ReAct)",
    instrumentation="OpenInference",
    packages=("dspy", "openinference-instrumentation-dspy", "openinference-instrumentation"),
)


def _step(thought: str, tool: str, args: str) -> Turn:
    """One ReAct step as DSPy's ChatAdapter expects the model to write it (no native tool
    calls: the tool's name and JSON arguments are output fields of the text)."""
    return Turn(
        text=f"[[ ## next_thought ## ]]\n{thought}\n\n[[ ## next_tool_name ## ]]\n{tool}\n\n"
        f"[[ ## next_tool_args ## ]]\n{args}\n\n[[ ## completed ## ]]"
    )


def _answer(text: str) -> Turn:
    return Turn(
        text=f"[[ ## reasoning ## ]]\nThe tools answered.\n\n[[ ## answer ## ]]\n{text}\n\n"
        "[[ ## completed ## ]]"
    )


_FETCH = _step("I need the weather in Paris.", "fetch_weather", '{"city": "Paris"}')
_FINISH = _step("I have everything.", "finish", "{}")
_REPORT = REPORT_DATA.replace('"', '\\"')
# ReAct asks the model for one step per call (the trajectory so far is in the user message),
# then, after "finish", for the answer (its extract step).
_SCRIPTS = {
    "dspy-exfil": (
        _FETCH,
        _step("I file the report.", "send_report", f'{{"data": "{_REPORT}"}}'),
        _step("I save a note.", "save_note", '{"text": "Paris: 18C, light rain"}'),
        _FINISH,
        _answer(
            "It is 18°C with light rain in Paris. I have filed the weather report and saved a note."
        ),
    ),
    "dspy-benign": (
        _FETCH,
        _FINISH,
        _answer("It is 18°C with light rain in Paris. Take an umbrella."),
    ),
}
_HIDE = {
    f"OPENINFERENCE_HIDE_{what}": "true"
    for what in ("INPUTS", "OUTPUTS", "INPUT_MESSAGES", "OUTPUT_MESSAGES")
}

CASES = [
    Case(
        "exfil",
        "dspy-exfil",
        "fetch_weather, send_report to 127.0.0.2, save_note INSERT; answer",
        scripts=_SCRIPTS,
    ),
    Case("benign", "dspy-benign", "fetch_weather only; answer", scripts=_SCRIPTS),
    Case(
        "no-content",
        "dspy-exfil",
        "the exfil run with OPENINFERENCE_HIDE_INPUTS/OUTPUTS/INPUT_MESSAGES/OUTPUT_MESSAGES",
        env=_HIDE,
        scripts=_SCRIPTS,
    ),
]
