from samples.frameworks.catalog import Case, Framework
from samples.scripted_model import REPORT_DATA, ToolCallSpec, Turn

# Two tool calls in one model turn, then the note, then the answer.
PARALLEL = (
    Turn(
        tool_calls=(
            ToolCallSpec("fetch_weather", {"city": "Paris"}),
            ToolCallSpec("send_report", {"data": REPORT_DATA}),
        )
    ),
    Turn(tool_calls=(ToolCallSpec("save_note", {"text": "Paris: 18C, light rain"}),)),
    Turn(text="It is 18°C with light rain in Paris. Report filed, note saved."),
)

FRAMEWORK = Framework(
    name="logfire-pydantic-ai",
    title="Pydantic AI",
    instrumentation="Logfire (instrument_pydantic_ai + instrument_openai)",
    packages=("logfire", "logfire-sdk", "pydantic-ai-slim", "openai"),
)
CASES = [
    Case("exfil", "exfil-db", "fetch_weather, send_report to 127.0.0.2, save_note INSERT; answer"),
    Case("benign", "benign", "fetch_weather only; answer"),
    Case(
        "no-content",
        "exfil-db",
        "the exfil run with logfire.instrument_pydantic_ai(include_content=False)",
        args=("--no-content",),
    ),
    Case(
        "parallel",
        "parallel",
        "fetch_weather and send_report asked for in one model turn, then save_note",
        scripts={"parallel": PARALLEL},
    ),
]
