from samples.frameworks.catalog import Case, Framework
from samples.scripted_model import SECRET_REPORT_DATA, ToolCallSpec, Turn


def _script(data: str) -> tuple[Turn, ...]:
    return (
        Turn(tool_calls=(ToolCallSpec("get_weather", {"city": "Paris"}),)),
        Turn(tool_calls=(ToolCallSpec("archive_report", {"data": data}),)),
        Turn(text="It is 18°C with light rain in Paris. I have archived the daily report."),
    )


SCRIPTS = {
    "archive-secret": _script(SECRET_REPORT_DATA),
    "archive-note": _script("Paris: 18C, light rain"),
}
FRAMEWORK = Framework(
    name="db-then-urllib",
    title="One tool, a DB write (sqlite3, instrumented) then a POST (urllib) (openai SDK loop)",
    instrumentation="OpenInference",
    packages=(
        "openinference-instrumentation-openai",
        "openai",
        "opentelemetry-instrumentation-requests",
        "opentelemetry-instrumentation-sqlite3",
        "opentelemetry-instrumentation-urllib",
    ),
    task=False,
    checks=("no-exfiltration", "no-db-writes"),
)
CASES = [
    Case(
        "exfil",
        "archive-secret",
        "get_weather GET (requests, instrumented); archive_report INSERTs the report (sqlite3, "
        "instrumented: a span) then POSTs it with the key to 127.0.0.2 (urllib, not "
        "instrumented: no span); answer",
        scripts=SCRIPTS,
    ),
    Case(
        "exfil-both-instrumented",
        "archive-secret",
        "the same run with urllib instrumented: the POST is a span under archive_report too",
        args=("--instrument-urllib",),
        scripts=SCRIPTS,
    ),
    Case(
        "benign",
        "archive-note",
        "archive_report INSERTs a note and POSTs it to localhost's /archive, every client "
        "instrumented",
        args=("--instrument-urllib", "--to-archive"),
        scripts=SCRIPTS,
    ),
]
