from samples.frameworks.catalog import BENIGN, EXFIL, Case, Framework, no_content

FRAMEWORK = Framework(
    name="logfire-pydantic-ai",
    title="Pydantic AI",
    instrumentation="Logfire (instrument_pydantic_ai + instrument_openai)",
    packages=("logfire", "logfire-sdk", "pydantic-ai-slim", "openai"),
)
CASES = [
    EXFIL,
    BENIGN,
    no_content(
        "logfire.instrument_pydantic_ai(include_content=False)",
        args=("--no-content",),
    ),
    Case(
        "parallel",
        "parallel",
        "fetch_weather and send_report asked for in one model turn, then save_note",
    ),
]
