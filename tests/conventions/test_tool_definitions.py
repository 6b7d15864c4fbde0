"""tool_definitions: the tools a model request offered, with their parameters' names, read
from every form the recorded samples hold."""

from __future__ import annotations

import pytest
from recorded import spans

from rampart_otel.conventions.tool_definitions import tool_parameters

TASK = {"fetch_weather": ("city",), "send_report": ("data",), "save_note": ("text",)}


@pytest.mark.parametrize(
    ("sample", "span_name"),
    [
        ("litellm/litellm-exfil", "raw_gen_ai_request"),  # llm.openai.tools (Python repr)
        ("litellm/litellm-exfil", "weather-agent run"),  # llm.request.functions.<i>.*
        ("mlflow/mlflow-exfil", "Completions"),  # mlflow.chat.tools
        ("langfuse/langfuse-exfil", "OpenAI-generation"),  # langfuse.observation.input
        ("openinference-exfil", "ChatCompletion"),  # llm.tools.<i>.tool.json_schema
    ],
)
def test_every_recorded_form(sample: str, span_name: str) -> None:
    span = next(s for s in spans(sample) if s.name == span_name)
    expected = TASK if "/" in sample else {k: TASK[k] for k in ("fetch_weather", "send_report")}
    assert tool_parameters(span) == expected  # the top-level samples offer two tools
