"""Haystack's own OpenTelemetry tracer (``opentelemetry-haystack``; scope ``haystack``, owned).

Haystack 3 writes its spans through its tracing interface; deepset's integration turns them
into OpenTelemetry spans under the scope ``haystack``. Content (the ``*.input`` /
``*.output`` keys) is there only with ``HAYSTACK_CONTENT_TRACING_ENABLED=true``; each
message is a ``ChatMessage.to_dict()``: ``{"role", "meta", "name", "content": [parts]}``,
a part ``{"text"}``, ``{"tool_call": {"tool_name", "arguments", "id"}}`` or
``{"tool_call_result": {"result", "origin": <its tool_call>, "error"}}``.

- ``haystack.agent.run``: the ``Agent`` component's run; ``haystack.agent.input`` the
  caller's messages, ``haystack.agent.output`` the whole conversation (the answer last).
- ``haystack.agent.step.llm``: one model call; ``…llm.input`` the messages sent (earlier
  calls and their results), ``…llm.output`` the ``replies`` (tool calls with their ids,
  text, ``meta.finish_reason``). Without content it records nothing: not readable.
- ``haystack.agent.step.tool``: one tool run, ``haystack.tool.name``; ``…tool.input`` its
  arguments and ``…tool.output`` its result (no call id: paired by name and order).
- ``haystack.pipeline.run``, ``haystack.async_pipeline.run``, ``haystack.component.run``,
  ``haystack.agent.step``: recognized, no role. A chat generator run as a pipeline
  component (``haystack.component.run`` of a ``*ChatGenerator``) is a model call this
  reader does not read: not understood. Any other span of the scope: not understood.
"""

from __future__ import annotations

from typing import Any

from rampart_otel.conventions import (
    Convention,
    History,
    ModelOutput,
    SpanReport,
    ToolReport,
    UserInput,
    as_str,
    load_json,
    parse_arguments,
    parse_result,
)
from rampart_otel.conventions.labels import HAYSTACK
from rampart_otel.model import Span

SCOPE = "haystack"
AGENT = "haystack.agent.run"
AGENT_INPUT, AGENT_OUTPUT = "haystack.agent.input", "haystack.agent.output"
LLM = "haystack.agent.step.llm"
TOOL = "haystack.agent.step.tool"
TOOL_NAME = "haystack.tool.name"
COMPONENT = "haystack.component.run"
COMPONENT_TYPE = "haystack.component.type"
NEUTRAL = frozenset(
    {"haystack.pipeline.run", "haystack.async_pipeline.run", COMPONENT, "haystack.agent.step"}
)


def read(span: Span) -> SpanReport | None:
    if span.scope.name != SCOPE:
        return None
    name = span.name
    if name == LLM:
        return SpanReport(HAYSTACK, model=True, output=model_output(span))
    if name == TOOL:
        return SpanReport(HAYSTACK, execution=tool_execution(span))
    if name == AGENT:
        return SpanReport(HAYSTACK, agent=True, answer=_answer(span))
    if name == COMPONENT and str(span.attributes.get(COMPONENT_TYPE, "")).endswith("Generator"):
        what = f"a Haystack generator component run ({span.attributes[COMPONENT_TYPE]})"
        return SpanReport(HAYSTACK, not_understood=[what])
    if name in NEUTRAL:
        return SpanReport(HAYSTACK)
    return SpanReport(HAYSTACK, not_understood=[f"a Haystack span {name!r}"])


def model_output(span: Span) -> ModelOutput:
    output = ModelOutput(readable=False, convention=HAYSTACK, source=SCOPE)
    raw = span.attributes.get(f"{LLM}.output")
    if raw is None:
        return output  # content tracing off: nothing of the reply is recorded
    decoded = load_json(raw)
    replies = decoded.get("replies") if isinstance(decoded, dict) else None
    if not isinstance(replies, list) or not all(isinstance(r, dict) for r in replies):
        output.not_understood.append(f"{LLM}.output (no list of replies)")
        return output
    texts: list[str] = []
    for reply in replies:
        meta = reply.get("meta")
        if isinstance(meta, dict) and as_str(meta.get("finish_reason")):
            output.finish_reasons.append(str(meta["finish_reason"]))
        for part in _parts(reply):
            if isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif isinstance(part.get("tool_call"), dict):
                call = part["tool_call"]
                output.requests.append(
                    ToolReport.requested(
                        span, HAYSTACK, call.get("tool_name"), call.get("id"),
                        call.get("arguments"), "arguments" in call,
                    )
                )  # fmt: skip
            else:
                output.not_understood.append(f"part {sorted(part)!r} in {LLM}.output")
    output.readable = not output.not_understood
    output.text, output.text_captured = "\n".join(texts), True
    return output


def tool_execution(span: Span) -> ToolReport:
    attrs = span.attributes
    arguments = attrs.get(f"{TOOL}.input")
    result = attrs.get(f"{TOOL}.output")
    return ToolReport.execution(
        span,
        HAYSTACK,
        attrs.get(TOOL_NAME),
        None,
        arguments=parse_arguments(arguments),
        arguments_captured=arguments is not None,
        result=parse_result(result) if result is not None else None,
        result_captured=result is not None,
    )


def input_history(span: Span) -> History:
    """Call id → arguments, result and name, from the messages a model call was sent."""
    arguments: dict[str, Any] = {}
    results: dict[str, Any] = {}
    names: dict[str, str] = {}
    if span.scope.name != SCOPE or span.name != LLM:
        return History(arguments, results)
    for message in _messages(span.attributes.get(f"{LLM}.input")):
        for part in _parts(message):
            call = part.get("tool_call")
            if isinstance(call, dict) and as_str(call.get("id")):
                call_id = str(call["id"])
                if as_str(call.get("tool_name")):
                    names.setdefault(call_id, str(call["tool_name"]))
                if "arguments" in call:
                    arguments.setdefault(call_id, parse_arguments(call["arguments"]))
            answered = part.get("tool_call_result")
            if not isinstance(answered, dict) or "result" not in answered:
                continue
            origin = answered.get("origin")
            if isinstance(origin, dict) and as_str(origin.get("id")):
                results.setdefault(str(origin["id"]), parse_result(answered["result"]))
    return History(arguments, results, names)


def user_input(span: Span) -> UserInput | None:
    """The user's messages: of a model call's input, or of the caller's agent input."""
    if span.scope.name != SCOPE or span.name not in (LLM, AGENT):
        return None
    key = f"{LLM}.input" if span.name == LLM else AGENT_INPUT
    if key not in span.attributes:
        return None
    found = UserInput()
    for message in _messages(span.attributes[key]):
        if message.get("role") != "user":
            continue
        for part in _parts(message):
            if isinstance(part.get("text"), str):
                found.texts.append(part["text"])
            else:
                found.not_understood.append(f"part {sorted(part)!r} in a user message of {key}")
    return found


def _answer(span: Span) -> str | None:
    """The last assistant message's text in the agent's output conversation."""
    for message in reversed(_messages(span.attributes.get(AGENT_OUTPUT))):
        if message.get("role") == "assistant":
            texts = [p["text"] for p in _parts(message) if isinstance(p.get("text"), str)]
            return "\n".join(texts) if texts else None
    return None


def _messages(raw: Any) -> list[dict[str, Any]]:
    decoded = load_json(raw)
    messages = decoded.get("messages") if isinstance(decoded, dict) else None
    return [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []


def _parts(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    return [p for p in content if isinstance(p, dict)] if isinstance(content, list) else []


CONVENTION = Convention(
    HAYSTACK,
    read,
    history=input_history,
    user_input=user_input,
    content_keys=("haystack.",),
    scopes=(SCOPE,),
)
