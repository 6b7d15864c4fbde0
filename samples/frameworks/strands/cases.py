"""Strands Agents in its default (v1.36 GenAI) telemetry mode: content in span events."""

from samples.frameworks.catalog import EXFIL, Case, Framework

FRAMEWORK = Framework(
    name="strands",
    title="Strands Agents",
    instrumentation="native",
    packages=("strands-agents", "openai", "opentelemetry-sdk"),
)
# Strands' only content switch is redaction: the token ``gen_ai_unredacted_attributes=``
# (an empty allow-list) in OTEL_SEMCONV_STABILITY_OPT_IN replaces every message, prompt,
# tool input and tool result value with "[REDACTED]" (strands/telemetry/tracer.py).
REDACT_ALL = "gen_ai_unredacted_attributes="
CASES = [
    EXFIL,
    Case("benign", "benign", "one fetch_weather call, GET to localhost only; answer"),
    Case(
        "no-content",
        "exfil-db",
        f"the exfil run with OTEL_SEMCONV_STABILITY_OPT_IN={REDACT_ALL} (content redacted)",
        env={"OTEL_SEMCONV_STABILITY_OPT_IN": REDACT_ALL},
    ),
]
