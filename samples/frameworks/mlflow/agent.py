"""The weather agent traced with MLflow Tracing, exported over OTLP.

As MLflow's docs show: ``mlflow.openai.autolog()`` for the model calls and ``@mlflow.trace``
on the agent function (``span_type="AGENT"``) and each tool (``span_type="TOOL"``). With
``OTEL_EXPORTER_OTLP_ENDPOINT`` set (the recorder's sink) MLflow exports its spans with the
OTLP/HTTP exporter from its own, isolated tracer provider; no tracking server is involved.
``MLFLOW_TRACE_PROPAGATE_TO_OTEL_CONTEXT=true`` puts MLflow's active span into the global
OpenTelemetry context, so the tools' ``requests`` / ``sqlite3`` spans (the application's
global provider, same sink) nest under the tool spans. MLflow's GenAI-semantic-conventions
switch is left off, as it is by default: its spans carry ``mlflow.spanType``,
``mlflow.spanInputs`` and ``mlflow.spanOutputs`` (JSON).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from samples.frameworks import tools

MODEL = "gpt-4o-mini"
MAX_STEPS = 6


def tool_schemas() -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": fn.__name__,
                "description": fn.__doc__,
                "parameters": tools.TOOL_PARAMETERS[fn.__name__],
            },
        }
        for fn in tools.TOOLS
    ]


def main() -> int:
    # MLflow's documented setting, the traces endpoint; the base endpoint would also turn
    # on its OTLP metrics, which this SDK cannot record without a tracking server.
    base = os.environ.pop("OTEL_EXPORTER_OTLP_ENDPOINT").rstrip("/")
    os.environ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = f"{base}/v1/traces"
    os.environ.setdefault("MLFLOW_TRACE_PROPAGATE_TO_OTEL_CONTEXT", "true")
    # A local tracking URI named up front: MLflow would otherwise probe ./mlruns for one,
    # which needs the full tracking store's dependencies. Nothing is written there: the
    # traces go to the OTLP endpoint.
    os.environ.setdefault("MLFLOW_TRACKING_URI", "file:./mlruns")
    os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
    os.environ.setdefault("MLFLOW_EXPERIMENT_ID", "0")  # no experiment lookup in a store
    provider = tools.tracer_provider()
    tools.instrument_clients()

    import mlflow
    import openai

    mlflow.openai.autolog()
    client = openai.OpenAI(base_url=os.environ["OPENAI_BASE_URL"], max_retries=0)
    traced = {fn.__name__: mlflow.trace(fn, span_type="TOOL") for fn in tools.TOOLS}

    @mlflow.trace(name="weather-agent", span_type="AGENT")
    def run(question: str) -> str:
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": tools.SYSTEM_PROMPT},
            {"role": "user", "content": question},
        ]
        for _ in range(MAX_STEPS):
            response = client.chat.completions.create(
                model=MODEL, messages=messages, tools=tool_schemas()
            )
            message = response.choices[0].message
            calls = message.tool_calls or []
            assistant: dict[str, Any] = {"role": "assistant", "content": message.content}
            if calls:
                assistant["tool_calls"] = [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.function.name, "arguments": c.function.arguments},
                    }
                    for c in calls
                ]
            messages.append(assistant)
            if not calls:
                return message.content or ""
            for call in calls:
                arguments = json.loads(call.function.arguments or "{}")
                result = traced[call.function.name](**arguments)
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
        raise RuntimeError(f"no final answer after {MAX_STEPS} model calls")

    answer = run(tools.QUESTION)
    print(answer, file=sys.stderr)
    mlflow.flush_trace_async_logging() if hasattr(mlflow, "flush_trace_async_logging") else None
    from mlflow.tracing.provider import provider as mlflow_provider

    tools.shutdown(mlflow_provider.get())
    tools.shutdown(provider)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
