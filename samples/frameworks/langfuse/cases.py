from samples.frameworks.catalog import BENIGN, DROP_TABLE, EXFIL, Case, Framework, no_content

FRAMEWORK = Framework(
    name="langfuse",
    title="Langfuse SDK (observe decorators, OpenAI drop-in)",
    instrumentation="Langfuse",
    packages=("langfuse", "openai"),
)
CASES = [
    EXFIL,
    BENIGN,
    no_content("a Langfuse mask that withholds every input and output", args=("--no-content",)),
    Case(
        "parallel",
        "parallel",
        "fetch_weather and send_report asked for in one model turn, then save_note",
    ),
    DROP_TABLE,
]
