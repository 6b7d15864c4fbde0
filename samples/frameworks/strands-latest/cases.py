"""Strands Agents with OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental."""

from samples.frameworks.catalog import Case, Framework, no_content

FRAMEWORK = Framework(
    name="strands-latest",
    title="Strands Agents, latest GenAI conventions",
    instrumentation="native, gen_ai_latest_experimental",
    packages=("strands-agents", "openai", "opentelemetry-sdk"),
)
LATEST = "gen_ai_latest_experimental"
CASES = [
    Case(
        "exfil",
        "exfil-db",
        "fetch_weather, send_report to 127.0.0.2, save_note INSERT; answer",
        env={"OTEL_SEMCONV_STABILITY_OPT_IN": LATEST},
    ),
    Case(
        "benign",
        "benign",
        "one fetch_weather call, GET to localhost only; answer",
        env={"OTEL_SEMCONV_STABILITY_OPT_IN": LATEST},
    ),
    no_content(
        "content redacted (token gen_ai_unredacted_attributes=)",
        env={"OTEL_SEMCONV_STABILITY_OPT_IN": f"{LATEST},gen_ai_unredacted_attributes="},
    ),
    Case(
        "attrs-only",
        "exfil-db",
        "the exfil run with gen_ai_span_attributes_only: content on span attributes, no events",
        env={"OTEL_SEMCONV_STABILITY_OPT_IN": f"{LATEST},gen_ai_span_attributes_only"},
    ),
]
