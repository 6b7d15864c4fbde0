"""Each convention's reader of the user's input, on the forms the samples do not show:
multimodal and non-text parts (not understood, never "no input"), tool results sent as
role user, content withheld, and the agent spans' record of the caller's input."""

from __future__ import annotations

import json

from span_factory import event, mk, span

from rampart_otel.channels import OBSERVED, PARTIAL, UNOBSERVED
from rampart_otel.conventions import (
    adk,
    claude_code,
    genai,
    openinference,
    openllmetry,
    strands,
    vercel_ai,
)
from rampart_otel.model import Run
from rampart_otel.normalize import normalize
from rampart_otel.wording import FIX, TRACE_FIX, UNREAD_FIX

ASK = "What is the weather in Paris?"


def messages(*items: dict) -> str:
    return json.dumps(list(items))


def user(*parts: dict) -> dict:
    return {"role": "user", "parts": list(parts)}


def text(content: str | None = None) -> dict:
    return {"type": "text", **({"content": content} if content is not None else {})}


# --- GenAI ---------------------------------------------------------------------------------


def chat(raw: str, **options) -> object:
    return span("chat", {"gen_ai.operation.name": "chat", "gen_ai.input.messages": raw}, **options)


def test_genai_reads_user_text_only() -> None:
    raw = messages(
        {"role": "system", "parts": [text("secret system prompt")]},
        user(text(ASK)),
        {"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "f"}]},
        user({"type": "tool_call_response", "id": "c1", "response": "tool says hi"}),
    )
    found = genai.user_input(chat(raw))
    assert found is not None
    assert (found.texts, found.withheld, found.not_understood) == ([ASK], [], [])


def test_genai_non_text_parts_are_not_understood() -> None:
    raw = messages(user(text(ASK), {"type": "image", "uri": "https://x/y.png"}))
    found = genai.user_input(chat(raw))
    assert found.texts == [ASK]
    assert found.not_understood == ["part type 'image' in a user message of gen_ai.input.messages"]


def test_genai_parts_without_content_are_withheld() -> None:
    found = genai.user_input(chat(messages(user(text()))))
    assert found.texts == []
    assert found.withheld == ["text parts without content in gen_ai.input.messages"]


def test_genai_input_messages_not_a_list_are_not_understood() -> None:
    found = genai.user_input(chat("Hello there"))
    assert found.not_understood == ["gen_ai.input.messages (not a JSON array of messages)"]


def test_genai_legacy_user_events_and_no_input() -> None:
    legacy = span(
        "chat",
        {"gen_ai.request.model": "m"},
        events=[event("gen_ai.user.message", {"content": ASK})],
    )
    assert genai.user_input(legacy).texts == [ASK]
    assert genai.user_input(span("chat", {"gen_ai.request.model": "m"})) is None


def test_pydantic_ai_agent_span_all_messages() -> None:
    agent = span(
        "invoke_agent a",
        {
            "gen_ai.operation.name": "invoke_agent",
            "pydantic_ai.all_messages": messages(user(text(ASK))),
        },
    )
    assert genai.user_input(agent).texts == [ASK]


# --- OpenInference ---------------------------------------------------------------------------


def llm(attributes: dict) -> object:
    return span("ChatCompletion", {"openinference.span.kind": "LLM", **attributes})


def test_openinference_contents_with_an_image_are_not_understood() -> None:
    found = openinference.user_input(
        llm(
            {
                "llm.input_messages.0.message.role": "system",
                "llm.input_messages.0.message.content": "system prompt",
                "llm.input_messages.1.message.role": "user",
                "llm.input_messages.1.message.contents.0.message_content.type": "text",
                "llm.input_messages.1.message.contents.0.message_content.text": ASK,
                "llm.input_messages.1.message.contents.1.message_content.type": "image",
                "llm.input_messages.1.message.contents.1.message_content.image.image.url": "x",
                "llm.input_messages.2.message.role": "tool",
                "llm.input_messages.2.message.content": "tool result",
            }
        )
    )
    assert found.texts == [ASK]
    assert found.not_understood == ["content type 'image' in user messages of llm.input_messages.*"]


def test_openinference_a_message_without_a_role_is_not_understood() -> None:
    """OpenInference always records a message's role; one without it may be the user's:
    its text is not read as someone else's (which would rule it out of the input)."""
    found = openinference.user_input(
        llm(
            {
                "llm.input_messages.0.message.role": "system",
                "llm.input_messages.0.message.content": "system prompt",
                "llm.input_messages.1.message.content": "api_token=tok_live_9f3a",
            }
        )
    )
    assert found.texts == []
    assert found.not_understood == ["a message without message.role in llm.input_messages.*"]


def test_a_message_lost_from_the_middle_of_the_flattened_list_is_named() -> None:
    """Message 1 lost whole (all its keys dropped) while message 2 remains: the indices
    show it, and it may have been the user's; the input is not fully read."""
    oi = openinference.user_input(
        llm(
            {
                "llm.input_messages.0.message.role": "system",
                "llm.input_messages.0.message.content": "system prompt",
                "llm.input_messages.2.message.role": "tool",
                "llm.input_messages.2.message.content": "tool result",
            }
        )
    )
    assert oi.not_understood == [
        "message 1 missing from llm.input_messages.* (its index is skipped)"
    ]
    ol = openllmetry.user_input(
        span(
            "openai.chat",
            {
                "gen_ai.prompt.0.role": "system",
                "gen_ai.prompt.0.content": "system prompt",
                "gen_ai.prompt.2.role": "user",
                "gen_ai.prompt.2.content": ASK,
            },
        )
    )
    assert ol.texts == [ASK]
    assert ol.not_understood == ["message 1 missing from gen_ai.prompt.* (its index is skipped)"]


def test_openinference_hidden_inputs_and_unread_input_value() -> None:
    hidden = openinference.user_input(llm({"input.value": "__REDACTED__"}))
    assert hidden.withheld == ["input.value (__REDACTED__)"] and hidden.texts == []
    raw = openinference.user_input(llm({"input.value": '{"messages": []}'}))
    assert raw.not_understood == ["input.value without llm.input_messages.*"]
    assert openinference.user_input(llm({})) is None


def test_openinference_agent_input_forms() -> None:
    def agent(value: str) -> object:
        return span("agent", {"openinference.span.kind": "AGENT", "input.value": value})

    assert openinference.user_input(agent(ASK)).texts == [ASK]
    assert openinference.user_input(agent(json.dumps({"task": ASK}))).texts == [ASK]
    state = {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": ASK}]}
    assert openinference.user_input(agent(json.dumps(state))).texts == [ASK]
    assert openinference.user_input(agent(json.dumps({"agent": {"role": "x"}}))) is None
    assert openinference.user_input(agent("__REDACTED__")) is None


# --- OpenLLMetry, Vercel AI, Strands, ADK, Claude Code ----------------------------------------


def test_openllmetry_prompt_parts() -> None:
    parts = [{"type": "text", "text": ASK}, {"type": "image_url", "image_url": {"url": "x"}}]
    found = openllmetry.user_input(
        span(
            "openai.chat",
            {
                "gen_ai.prompt.0.role": "system",
                "gen_ai.prompt.0.content": "system prompt",
                "gen_ai.prompt.1.role": "user",
                "gen_ai.prompt.1.content": json.dumps(parts),
                "gen_ai.prompt.2.role": "user",
                "gen_ai.prompt.2.content": '{"a user": "typed JSON"}',
            },
        )
    )
    assert found.texts == [ASK, '{"a user": "typed JSON"}']
    assert found.not_understood == ["a non-text part in gen_ai.prompt.*"]


def test_vercel_ai_prompt_messages_and_root_prompt() -> None:
    prompt = [
        {"role": "system", "content": "system prompt"},
        {"role": "user", "content": [{"type": "text", "text": ASK}, {"type": "file", "data": "x"}]},
        {"role": "tool", "content": [{"type": "tool-result", "toolCallId": "c"}]},
    ]
    model = span(
        "ai.generateText.doGenerate",
        {"ai.operationId": "ai.generateText.doGenerate", "ai.prompt.messages": json.dumps(prompt)},
    )
    found = vercel_ai.user_input(model)
    assert found.texts == [ASK]
    assert found.not_understood == ["part type 'file' in user messages of ai.prompt.messages"]
    root = span(
        "ai.generateText",
        {
            "ai.operationId": "ai.generateText",
            "ai.prompt": json.dumps({"system": "s", "prompt": ASK}),
        },
    )
    assert vercel_ai.user_input(root).texts == [ASK]


def test_strands_blocks() -> None:
    blocks = [{"text": ASK}, {"image": {"format": "png"}}, {"toolResult": {"toolUseId": "t"}}]
    found = strands.user_input(
        span(
            "chat",
            {"gen_ai.operation.name": "chat"},
            events=[event("gen_ai.user.message", {"content": json.dumps(blocks)})],
            scope=strands.SCOPE,
        )
    )
    assert found.texts == [ASK]
    assert found.not_understood == ["content block 'image' in gen_ai.user.message events"]


def test_adk_v1_request_parts() -> None:
    request = {
        "contents": [
            {"role": "user", "parts": [{"text": ASK}, {"inline_data": {"mime_type": "image/png"}}]},
            {"role": "user", "parts": [{"function_response": {"name": "f", "response": {}}}]},
        ]
    }
    found = adk.user_input(
        span("call_llm", {adk.LLM_REQUEST: json.dumps(request)}, scope=adk.SCOPE)
    )
    assert found.texts == [ASK]
    assert found.not_understood == [
        "part 'inline_data' in user contents of gcp.vertex.agent.llm_request"
    ]


def test_claude_code_new_context_user_parts() -> None:
    context = f"[USER]\n{ASK}\n[TOOL RESULT: toolu_1]\n{{}}"
    request = span("claude_code.llm_request", {"new_context": context}, scope=claude_code.SCOPE)
    assert claude_code.user_input(request).texts == [ASK]
    cut = span(
        "claude_code.llm_request",
        {"new_context": "[USER]\nWeath", "new_context_truncated": True},
        scope=claude_code.SCOPE,
    )
    assert claude_code.user_input(cut).not_understood == [
        "new_context cut at Claude Code's content limit"
    ]


# --- coverage ----------------------------------------------------------------------------------


def run_of(*spans: object) -> object:
    return normalize(Run("r", ["t"], list(spans)))


MODEL = {"gen_ai.operation.name": "chat"}


def test_a_form_not_understood_is_partial_never_no_input() -> None:
    image_only = messages(user({"type": "image", "uri": "x"}))
    run = run_of(mk("m1", "chat", {**MODEL, "gen_ai.input.messages": image_only}))
    coverage = run.coverage.get("input")
    assert coverage.state is PARTIAL and run.user_input == []
    assert coverage.reasons == [
        "input messages in a form not understood (part type 'image' in a user message of "
        "gen_ai.input.messages) on 'chat' (span m1)",
        FIX + UNREAD_FIX,  # the content is there, in a form not read: no setting turns it on
    ]


def test_one_model_call_unrecorded_makes_input_partial() -> None:
    run = run_of(
        mk("a", "invoke_agent", {"gen_ai.operation.name": "invoke_agent"}, end=100),
        mk(
            "m1",
            "chat",
            {**MODEL, "gen_ai.input.messages": messages(user(text(ASK)))},
            parent="a",
            start=1,
        ),
        mk("m2", "chat", MODEL, parent="a", start=50),
    )
    coverage = run.coverage.get("input")
    assert coverage.state is PARTIAL
    assert coverage.reasons[0] == "input messages read on 1 of 2 model calls"
    assert "1 model span recorded no input messages" in coverage.reasons[1]
    assert [(m.text, m.span_id) for m in run.user_input] == [(ASK, "m1")]


def test_no_model_span_is_unobserved_and_an_agent_input_alone_is_partial() -> None:
    tool = mk(
        "t", "execute_tool f", {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "f"}
    )
    assert run_of(tool).coverage.get("input").state is UNOBSERVED
    agent = mk("a", "agent", {"openinference.span.kind": "AGENT", "input.value": ASK})
    coverage = run_of(agent).coverage.get("input")
    assert coverage.state is PARTIAL
    assert "the run has no model-inference span" in coverage.reasons[0]


def test_dropped_attributes_on_a_model_span_cap_input() -> None:
    run = run_of(
        mk(
            "m1",
            "chat",
            {**MODEL, "gen_ai.input.messages": messages(user(text(ASK)))},
            dropped_attributes=3,
        )
    )
    coverage = run.coverage.get("input")
    assert coverage.state is PARTIAL and "dropped by the SDK's limits" in coverage.reasons[-2]
    assert coverage.reasons[-1] == FIX + TRACE_FIX


def test_a_fully_read_input_is_observed() -> None:
    run = run_of(mk("m1", "chat", {**MODEL, "gen_ai.input.messages": messages(user(text(ASK)))}))
    assert run.coverage.get("input").state is OBSERVED


def test_prompt_text_of_every_role_is_not_understood_never_not_recorded() -> None:
    older = span(
        "openai.chat",
        {"gen_ai.operation.name": "chat"},
        events=[event("gen_ai.content.prompt", {"gen_ai.prompt": f"system: s\nuser: {ASK}"})],
    )
    assert genai.user_input(older).not_understood == [
        "gen_ai.content.prompt (the prompt as one text of every role)"
    ]
    completion = llm({"llm.prompts": [ASK]})
    assert openinference.user_input(completion).not_understood == [
        "llm.prompts (a completion prompt, no roles)"
    ]
    legacy = span("openai.chat", {"llm.prompts.0.role": "user", "llm.prompts.0.content": ASK})
    assert openllmetry.user_input(legacy).texts == [ASK]


def test_vercel_ai_root_prompt_as_messages() -> None:
    def root(prompt: dict) -> object:
        attributes = {"ai.operationId": "ai.streamText", "ai.prompt": json.dumps(prompt)}
        return span("ai.streamText", attributes)

    listed = [{"role": "user", "content": [{"type": "text", "text": ASK}]}]
    assert vercel_ai.user_input(root({"prompt": listed})).texts == [ASK]
    assert vercel_ai.user_input(root({"messages": listed})).texts == [ASK]
    assert vercel_ai.user_input(root({"system": "s"})).not_understood == [
        "ai.prompt (no prompt text or list of messages)"
    ]
