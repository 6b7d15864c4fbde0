"""The weather agent on Strands Agents, traced by Strands' own telemetry.

Strands writes its spans itself (``strands.telemetry``); ``StrandsTelemetry`` sets up the
global provider with the OTLP exporter from ``OTEL_EXPORTER_OTLP_*``, as its docs show.
``OTEL_SEMCONV_STABILITY_OPT_IN`` picks the convention and redaction (set by the case:
``gen_ai_latest_experimental`` for the latest GenAI conventions, used by
``samples/frameworks/strands-latest/``; ``gen_ai_unredacted_attributes=`` to redact content).
"""

from __future__ import annotations

import os
import sys

from samples.frameworks import tools


def main() -> int:
    from strands import Agent, tool
    from strands.models.openai import OpenAIModel
    from strands.telemetry import StrandsTelemetry

    telemetry = StrandsTelemetry()
    telemetry.setup_otlp_exporter()
    tools.instrument_clients()

    model = OpenAIModel(
        client_args={"base_url": os.environ["OPENAI_BASE_URL"], "api_key": "sk-scripted-0000"},
        model_id="gpt-4o-mini",
    )
    agent = Agent(
        name=tools.SERVICE_NAME,
        model=model,
        system_prompt=tools.SYSTEM_PROMPT,
        tools=[tool(t) for t in tools.TOOLS],
        callback_handler=None,
    )
    answer = agent(tools.QUESTION)
    print(answer, file=sys.stderr)
    telemetry.tracer_provider.force_flush()
    telemetry.tracer_provider.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
