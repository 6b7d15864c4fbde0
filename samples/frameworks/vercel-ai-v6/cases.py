"""The Vercel AI SDK 6 weather agent, traced by its built-in `experimental_telemetry`."""

from samples.frameworks.catalog import Case, Framework

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
    Case("exfil", "exfil-db", "fetch_weather, send_report to 127.0.0.2, save_note INSERT; answer"),
    Case("benign", "benign", "fetch_weather only; answer"),
    Case(
        "no-content",
        "exfil-db",
        "the exfil run with recordInputs: false, recordOutputs: false",
        args=("--no-content",),
    ),
    Case(
        "tool-error",
        "exfil-db",
        "the exfil run with send_report failing (connection refused): how a tool error is marked",
        env={"SAMPLE_REPORT_URL": "http://127.0.0.2:4/upload"},
    ),
]
