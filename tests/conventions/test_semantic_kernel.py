"""Semantic Kernel's own diagnostics (``genai``'s Semantic Kernel readings), on the
recordings in samples/traces/semantic-kernel: chat spans whose only output fact is the
singular ``gen_ai.response.finish_reason`` ("FinishReason.TOOL_CALLS"), ``execute_tool``
spans, and the ``invoke_agent`` span whose output messages hold the answer as plain text."""

from __future__ import annotations

import json

from recorded import ANSWER, only_run
from span_factory import mk

from rampart_otel.channels import ChannelState
from rampart_otel.conventions import genai
from rampart_otel.conventions.finish_reasons import ToolRequest
from rampart_otel.model import ToolCallStatus

TRACES = "semantic-kernel/semantic-kernel"
OBSERVED, UNOBSERVED = ChannelState.OBSERVED, ChannelState.UNOBSERVED
SK_CHAT = "semantic_kernel.utils.telemetry.model_diagnostics.decorators"
SK_AGENT = "semantic_kernel.utils.telemetry.agent_diagnostics.decorators"


def test_the_answer_and_every_call_of_the_plugin() -> None:
    run = only_run(f"{TRACES}-exfil")
    assert run.response.text == ANSWER
    assert run.coverage.get("response").state is OBSERVED
    assert [c.name for c in run.tool_calls] == [
        "weather-fetch_weather",
        "weather-send_report",
        "weather-save_note",
    ]
    assert all(c.status is ToolCallStatus.EXECUTED for c in run.tool_calls)
    # The plugin and the function, as the agent's author wrote them (@kernel_function in
    # plugin "weather"): a check may name the function alone.
    assert [(c.namespace, c.local_name) for c in run.tool_calls] == [
        ("weather", "fetch_weather"),
        ("weather", "send_report"),
        ("weather", "save_note"),
    ]
    assert run.tool_calls[1].names == ("weather-send_report", "send_report")
    assert run.tool_calls[1].arguments == {
        "data": "Paris 18C light rain; customer=ACME-4471; api_token=tok_live_9f3a"
    }
    # Every chat span's finish reason is read, so the last one asked for no tool.
    assert run.coverage.get("tool_calls").state is OBSERVED


def test_content_off_keeps_the_calls_and_loses_the_answer() -> None:
    run = only_run(f"{TRACES}-no-content")
    assert len(run.tool_calls) == 3 and not any(c.arguments_captured for c in run.tool_calls)
    assert run.response.text is None
    assert run.coverage.get("response").state is UNOBSERVED


def test_the_enum_finish_reason_only_on_semantic_kernels_spans() -> None:
    attrs = {"gen_ai.operation.name": "chat", "gen_ai.response.finish_reason": "FinishReason.STOP"}
    sk = genai.model_output(mk("m1", "chat gpt-4o-mini", attrs, scope=SK_CHAT))
    assert sk.finish_reasons == ["stop"] and sk.tool_request is ToolRequest.NO_TOOLS
    other = genai.model_output(mk("m2", "chat gpt-4o-mini", attrs, scope="other"))
    assert other.finish_reasons == [] and other.tool_request is ToolRequest.UNKNOWN


def test_plain_content_answers_only_on_semantic_kernels_agent_spans() -> None:
    messages = json.dumps([{"role": "assistant", "content": "It is 18°C.", "name": "a"}])
    attrs = {"gen_ai.operation.name": "invoke_agent", "gen_ai.output.messages": messages}
    assert genai.agent_output(mk("a1", "invoke_agent a", attrs, scope=SK_AGENT)) == "It is 18°C."
    assert genai.agent_output(mk("a2", "invoke_agent a", attrs, scope="other")) is None


SK_FUNCTION = "semantic_kernel.functions.kernel_function"


def _executed(name: str, scope: str = SK_FUNCTION):
    attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name}
    report = genai.read(mk("t1", f"execute_tool {name}", attrs, scope=scope))
    assert report is not None and report.execution is not None
    return report.execution


def test_the_plugin_is_what_precedes_the_first_hyphen() -> None:
    # SK's plugin names hold no hyphen (PLUGIN_NAME_REGEX); its function names may.
    call = _executed("files-read-all")
    assert (call.name, call.namespace, call.local_name) == ("files-read-all", "files", "read-all")


def test_a_name_without_a_plugin_or_off_semantic_kernel_is_not_split() -> None:
    for call in (_executed("send_report"), _executed("-x"), _executed("a b-c")):
        assert call.namespace is None and call.local_name is None
    other = _executed("weather-send_report", scope="other")
    assert other.namespace is None and other.local_name is None
