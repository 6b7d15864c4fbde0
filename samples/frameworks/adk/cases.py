"""Google ADK with its native telemetry: the default schema, content capture, schema v1.

ADK 2.x records the OpenTelemetry GenAI schema ("v2") by default, with no message content
on spans; ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` moves content onto spans
(``SPAN_ONLY``) or onto log records only (``true``, read as ``EVENT_ONLY``).
``ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN=1`` brings back the 1.x format (``call_llm`` spans
and ``gcp.vertex.agent.*`` JSON), whose content switch ``ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS``
defaults on.
"""

from samples.frameworks.catalog import Case, Framework
from samples.scripted_model import REPORT_DATA, ToolCallSpec, Turn

FRAMEWORK = Framework(
    name="adk",
    title="Google ADK",
    instrumentation="native",
    packages=("google-adk", "google-genai", "opentelemetry-sdk"),
)
_TASK = "fetch_weather, send_report to 127.0.0.2, save_note INSERT; answer"
_CAPTURE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
_SCHEMA = "ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN"
# Two calls of one tool in one model turn: ADK runs them in parallel and adds a span
# for the merged responses; shows how ids are made up when the model gives none.
_PARALLEL = {
    "parallel": (
        Turn(
            tool_calls=(
                ToolCallSpec("fetch_weather", {"city": "Paris"}),
                ToolCallSpec("fetch_weather", {"city": "London"}),
            )
        ),
        Turn(tool_calls=(ToolCallSpec("send_report", {"data": REPORT_DATA}),)),
        Turn(text="Paris 18C light rain, London too. I have filed the weather report."),
    )
}
CASES = [
    Case("exfil", "exfil-db", f"{_TASK}; ADK's defaults (schema v2, no content on spans)"),
    Case("benign", "benign", "fetch_weather only; answer; ADK's defaults"),
    Case(
        "content-capture",
        "exfil-db",
        f"{_TASK}; {_CAPTURE}=SPAN_ONLY: messages, arguments and results on spans",
        env={_CAPTURE: "SPAN_ONLY"},
    ),
    Case(
        "capture-true",
        "exfil-db",
        f"{_TASK}; {_CAPTURE}=true (EVENT_ONLY): content goes to log records, spans as default",
        env={_CAPTURE: "true"},
    ),
    Case(
        "stream",
        "exfil-db",
        f"{_TASK}; SSE streaming (streamGenerateContent), {_CAPTURE}=SPAN_ONLY",
        args=("--stream",),
        env={_CAPTURE: "SPAN_ONLY"},
    ),
    Case(
        "legacy",
        "exfil-db",
        f"{_TASK}; {_SCHEMA}=1: call_llm spans, gcp.vertex.agent.* JSON (content on by default)",
        env={_SCHEMA: "1"},
    ),
    Case(
        "legacy-no-content",
        "exfil-db",
        f"{_TASK}; {_SCHEMA}=1 with ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS=false",
        env={_SCHEMA: "1", "ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS": "false"},
    ),
    Case(
        "parallel",
        "parallel",
        f"fetch_weather x2 in one turn (parallel), send_report; answer; {_CAPTURE}=SPAN_ONLY",
        env={_CAPTURE: "SPAN_ONLY"},
        scripts=_PARALLEL,
    ),
    Case(
        "legacy-parallel",
        "parallel",
        f"fetch_weather x2 in one turn (parallel), send_report; answer; {_SCHEMA}=1",
        env={_SCHEMA: "1"},
        scripts=_PARALLEL,
    ),
    Case(
        "tool-error",
        "exfil-db",
        "fetch_weather, then send_report raises (connection refused): ADK ends the run; "
        f"{_CAPTURE}=SPAN_ONLY",
        args=("--tool-error",),
        env={_CAPTURE: "SPAN_ONLY", "SAMPLE_REPORT_URL": "http://127.0.0.2:9/upload"},
    ),
]
