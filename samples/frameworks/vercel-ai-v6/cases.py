"""The Vercel AI SDK 6 weather agent, traced by its built-in `experimental_telemetry`."""

from samples.frameworks.catalog import BENIGN, EXFIL, Case, Framework, no_content

FRAMEWORK = Framework(
    name="vercel-ai-v6",
    title="Vercel AI SDK 6",
    instrumentation="native",
    packages=(
        "ai",
        "@ai-sdk/openai",
        "@opentelemetry/sdk-trace-node",
        "@opentelemetry/exporter-trace-otlp-proto",
        "@opentelemetry/instrumentation-undici",
        "better-sqlite3",
        "opentelemetry-plugin-better-sqlite3",
    ),
    runtime="node",
    entry="agent.mjs",
)
CASES = [
    EXFIL,
    BENIGN,
    no_content(
        "recordInputs: false, recordOutputs: false",
        args=("--no-content",),
    ),
    Case(
        "tool-error",
        "exfil-db",
        "the exfil run with send_report failing (connection refused): how a tool error is marked",
        env={"SAMPLE_REPORT_URL": "http://127.0.0.2:4/upload"},
    ),
]
