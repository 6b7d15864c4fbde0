"""Google ADK's own spans (scope ``gcp.vertex.agent``), schema v2 and v1.

ADK writes GenAI-looking keys whose meaning is its own, so it owns its scope:

- Model-side call ids (``fetch_weather_0``) are made up by ADK's serializer from the
  tool name and the part's index, repeat across turns and never equal the ``adk-<uuid>``
  id of the tool span (outside SSE streaming). They are dropped, so a requested call is
  paired with its ``execute_tool`` span by name and order; real ids are kept.
- ``gcp.vertex.agent`` models report Gemini's finish reasons whatever the model (``stop``
  also ends a turn that asked for tools), so the provider is read as ADK's.
- Schema v1 puts the model's reply in ``call_llm``'s ``gcp.vertex.agent.llm_response``
  (google-genai's response, snake_case) and tool content in ``tool_call_args`` /
  ``tool_response``; its ``generate_content`` child is the same request without content
  (read through ``call_llm``). ``"{}"`` there is ADK's "content off", so it is not
  taken as an empty input or result.
- A non-dict tool result is wrapped as ``{"result": x}``: unwrapped. ``<not specified>`` is
  the id of a tool that raised, not an id. ``execute_tool (merged)`` only gathers the
  responses of parallel calls already reported by their own spans: not a call.
- ``invoke_workflow`` (v2) and ``invocation`` (v1) are the run's root, or an
  ``AgentTool``'s nested run (``gen_ai.workflow.nested``): neutral.
- ``transfer_to_agent`` (``TransferToAgentTool``) is a hand-off (``conventions.handoffs``).
- With OpenInference's ADK instrumentor, its LLM reading is written onto ADK's own
  ``invoke_agent`` span (``openinference.span.kind=LLM``, the messages and the output in
  ``llm.*`` even with ``OPENINFERENCE_HIDE_INPUTS/OUTPUTS``): such a span is read as
  OpenInference's.
"""

from __future__ import annotations

from typing import Any

from rampart_otel.conventions import genai, handoffs, openinference
from rampart_otel.conventions.helpers import (
    as_str,
    as_str_list,
    indexed,
    load_json,
    parse_arguments,
    parse_result,
)
from rampart_otel.conventions.interface import (
    Convention,
    History,
    ModelOutput,
    SpanReport,
    ToolReport,
    UserInput,
)
from rampart_otel.conventions.labels import ADK
from rampart_otel.model import Span

SCOPE = "gcp.vertex.agent"
PREFIX = "gcp.vertex.agent."
LLM_RESPONSE = "gcp.vertex.agent.llm_response"
LLM_REQUEST = "gcp.vertex.agent.llm_request"
TOOL_CALL_ARGS = "gcp.vertex.agent.tool_call_args"
TOOL_RESPONSE = "gcp.vertex.agent.tool_response"
MERGED_TOOL = "(merged tools)"
MERGED_SPAN = "execute_tool (merged)"
NO_CALL_ID = "<not specified>"
CONTENT_OFF = "{}"  # v1 with ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS=false
# Finish reasons of every ADK model span are Gemini's (ADK maps other models' to them).
PROVIDER = SCOPE
ROOT_SPANS = frozenset({"invocation"})
# Part keys of google-genai's Part (snake_case) that hold neither a call nor answer text.
_PLAIN_PARTS = frozenset(
    {
        "inline_data",
        "file_data",
        "executable_code",
        "code_execution_result",
        "function_response",
        "video_metadata",
        "thought_signature",
        "thought",
        "media_resolution",
        "tool_call",
        "tool_response",
    }
)


def read(span: Span) -> SpanReport | None:
    if span.scope.name != SCOPE:
        return None
    if openinference.SPAN_KIND in span.attributes:
        return openinference.read(span)  # OpenInference's ADK instrumentor wrote onto it
    op = genai.operation(span)
    if op == "generate_content":
        return SpanReport(ADK, model=True, output=_generate_content(span))
    if op == "execute_tool":
        return _execute_tool(span)
    if op == "invoke_agent":
        return SpanReport(ADK, agent=True, answer=genai.agent_output(span))
    if op == "invoke_workflow":
        return SpanReport(ADK)
    if op is None and span.name == "call_llm":
        return SpanReport(ADK, model=True, output=call_llm_output(span))
    if op is None and span.name in ROOT_SPANS:
        return SpanReport(ADK)
    what = f"operation {op!r}" if op is not None else "span"
    return SpanReport(ADK, not_understood=[f"an ADK {what} {span.name!r}"])


# --- model spans -----------------------------------------------------------------------------


def _generate_content(span: Span) -> ModelOutput:
    """v2 (content in gen_ai.output.messages) or v1's content-less child of ``call_llm``."""
    output = genai.model_output(span)
    output.convention = ADK
    output.provider = PROVIDER
    for request in output.requests:
        request.convention = ADK
        if made_up_id(request.call_id, request.name):
            request.call_id = None
    return output


def made_up_id(call_id: str | None, name: str) -> bool:
    """ADK's stand-in for a missing id: ``<tool name>_<index of the part>``."""
    if not call_id or not call_id.startswith(name + "_"):
        return False
    return call_id[len(name) + 1 :].isdigit()


def call_llm_output(span: Span) -> ModelOutput:
    """Schema v1: the reply in ``gcp.vertex.agent.llm_response`` (google-genai, snake_case)."""
    attrs = span.attributes
    output = ModelOutput(
        readable=False,
        finish_reasons=as_str_list(attrs.get(genai.FINISH_REASONS)),
        convention=ADK,
        provider=PROVIDER,
    )
    raw = attrs.get(LLM_RESPONSE)
    if raw is None or raw == CONTENT_OFF:
        return output
    response = load_json(raw)
    if not isinstance(response, dict):
        output.not_understood.append(f"{LLM_RESPONSE} (not a JSON object)")
        return output
    reason = as_str(response.get("finish_reason"))
    if reason and reason.lower() not in (r.lower() for r in output.finish_reasons):
        output.finish_reasons.append(reason)
    content = response.get("content")
    if not isinstance(content, dict):
        output.not_understood.append(f"{LLM_RESPONSE} without content")
        return output
    output.readable = True
    texts: list[str] = []
    parts = content.get("parts")
    for part in parts if isinstance(parts, list) else ():
        if not isinstance(part, dict):
            continue
        call = part.get("function_call")
        if isinstance(call, dict):
            name = as_str(call.get("name")) or ""
            call_id = as_str(call.get("id"))
            request = ToolReport.requested(
                span,
                ADK,
                name,
                None if made_up_id(call_id, name) else call_id,
                call.get("args") if call.get("args") is not None else {},
                True,
            )
            output.requests.append(request)
        elif isinstance(part.get("text"), str):
            if not part.get("thought"):
                texts.append(part["text"])
        elif not set(part) <= _PLAIN_PARTS:
            keys = ", ".join(sorted(str(key) for key in set(part) - _PLAIN_PARTS)[:3])
            output.not_understood.append(f"part {keys!r} in {LLM_RESPONSE}")
    output.text, output.text_captured = "\n".join(texts), True
    return output


# --- tool spans ------------------------------------------------------------------------------


def _execute_tool(span: Span) -> SpanReport:
    attrs = span.attributes
    name = as_str(attrs.get(genai.TOOL_NAME))
    if name is None:
        name = span.name.removeprefix("execute_tool ")
    if name == MERGED_TOOL or span.name == MERGED_SPAN:
        return SpanReport(ADK)  # gathers the responses of calls reported by their own spans
    call_id = as_str(attrs.get(genai.TOOL_CALL_ID))
    arguments = attrs.get(genai.TOOL_CALL_ARGUMENTS)
    if arguments is None and attrs.get(TOOL_CALL_ARGS) != CONTENT_OFF:
        arguments = attrs.get(TOOL_CALL_ARGS)
    result = attrs.get(genai.TOOL_CALL_RESULT)
    if result is None and attrs.get(TOOL_RESPONSE) != CONTENT_OFF:
        result = attrs.get(TOOL_RESPONSE)
    report = ToolReport.execution(
        span,
        ADK,
        name,
        None if call_id == NO_CALL_ID else call_id,
        arguments=parse_arguments(arguments),
        arguments_captured=arguments is not None,
        result=unwrap_result(result) if result is not None else None,
        result_captured=result is not None,
        failed=genai.ERROR_TYPE in attrs,
    )
    return SpanReport(ADK, execution=report, handoff=handoffs.adk_transfer(span))


def history(span: Span) -> History:
    """The history an OpenInference LLM reading on ADK's span holds (ADK's own keep none).

    That reading writes Gemini's turns: the model's as role ``model``, its calls without
    ids, and each result as role ``tool`` named after its call. ADK's ``invoke_agent`` span
    spans every model turn of the agent but records the last one's reading, so the calls
    of earlier turns are in this history only: each is kept under ADK's own made-up id
    (``<name>_<n>``, as its serializer writes), a result paired with the first call of its
    name still without one."""
    if span.scope.name != SCOPE or openinference.SPAN_KIND not in span.attributes:
        return History({}, {})
    found = openinference.input_history(span)
    if found.arguments or found.results:
        return found
    arguments: dict[str, Any] = {}
    results: dict[str, Any] = {}
    names: dict[str, str] = {}
    waiting: dict[str, list[str]] = {}  # name → made-up ids of its calls with no result yet
    for _, message in indexed(span.attributes, openinference.INPUT_MESSAGES).items():
        role = message.get("message.role")
        if role == "model":
            for _, call in indexed(message, "message.tool_calls.").items():
                name = as_str(call.get("tool_call.function.name"))
                if not name:
                    continue
                call_id = f"{name}_{sum(1 for known in names.values() if known == name)}"
                names[call_id] = name
                waiting.setdefault(name, []).append(call_id)
                raw = call.get("tool_call.function.arguments")
                if openinference.captured(raw):
                    arguments[call_id] = parse_arguments(raw)
        elif role == "tool":
            name = as_str(message.get("message.name"))
            content = message.get("message.content")
            if name and waiting.get(name) and openinference.captured(content):
                results[waiting[name].pop(0)] = unwrap_result(content)
    return History(arguments, results, names)


def user_input(span: Span) -> UserInput | None:
    """The user's messages: v2's semconv ``gen_ai.input.messages`` (read by ``genai``), or
    v1's ``llm_request`` contents (google-genai, role ``user``; ``function_response`` parts
    are tool results, not the user's). ``"{}"`` is ADK's content off."""
    if span.scope.name != SCOPE:
        return None
    if openinference.SPAN_KIND in span.attributes:
        return openinference.user_input(span)
    if genai.INPUT_MESSAGES in span.attributes:
        return genai.user_input(span)
    raw = span.attributes.get(LLM_REQUEST)
    if raw is None:
        return None
    if raw == CONTENT_OFF:
        return UserInput(withheld=[f"{LLM_REQUEST} ({CONTENT_OFF}: content capture off)"])
    request = load_json(raw)
    contents = request.get("contents") if isinstance(request, dict) else None
    if not isinstance(contents, list):
        return UserInput(not_understood=[f"{LLM_REQUEST} (no list of contents)"])
    found = UserInput()
    where = f"user contents of {LLM_REQUEST}"
    for content in contents:
        if not isinstance(content, dict) or content.get("role") != "user":
            continue
        for part in content.get("parts") or ():
            if not isinstance(part, dict):
                continue
            if isinstance(part.get("text"), str):
                found.texts.append(part["text"])
            elif not part.get("function_response"):
                kinds = ", ".join(repr(k) for k, v in part.items() if v is not None)
                found.not_understood.append(f"part {kinds or '{}'} in {where}")
    return found


def unwrap_result(raw: Any) -> Any:
    """A tool's result without ADK's ``{"result": x}`` wrapper of non-dict returns."""
    value = parse_result(raw)
    if isinstance(value, dict) and len(value) == 1 and "result" in value:
        return parse_result(value["result"])
    return value


CONVENTION = Convention(
    ADK,
    read,
    history,
    user_input=user_input,
    content_keys=(PREFIX,),
    scopes=(SCOPE,),
)
