"""Claude Code's own spans (scope ``com.anthropic.claude_code.tracing``).

``claude_code.interaction`` is the agent, ``claude_code.llm_request`` one model turn,
``claude_code.tool`` one tool call with two children: ``tool.blocked_on_user`` (the
permission check) and ``tool.execution`` (the run: success, error). The tool span holds
what was asked for, so it reports the call as requested; only the execution child says
it ran (a call refused at the permission check has none).

- Model spans never list the calls asked for (in any mode), so calls are read from the
  tool spans, matched by ``tool_use_id``; the finish reasons (``tool_use``/``end_turn``)
  say which turns asked. Detailed beta tracing adds ``response.has_tool_call`` and, on a
  turn with no call, the text ``response.model_output``: only then is an output readable.
- Arguments: ``tool_input`` (detailed, ``[TOOL INPUT: <tool>]`` + JSON), else
  ``full_command`` (the Bash input's ``command``), else ``file_path``; all behind
  ``OTEL_LOG_TOOL_DETAILS``. Results: the ``tool.output`` event (Bash: stdout), else the
  tool span's detailed ``new_context``; the next request's ``new_context`` holds what the
  model saw, by call id (history).
- The trace has no HTTP/DB span for what Bash's children do: the Bash call itself is the
  ``process_exec`` side effect (``bash_argv0`` always; the arguments with the command).
  The exit code is not recorded (``success`` follows Claude Code's reading of it).
- ``"<REDACTED>"`` is Claude Code's placeholder for content not logged; values cut at
  the content limit say so in ``<key>_truncated``: a cut value is not read as whole.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from rampart_otel.conventions.helpers import as_str, as_str_list, parse_arguments, parse_result
from rampart_otel.conventions.interface import (
    Convention,
    History,
    ModelOutput,
    SideEffectDetails,
    SpanReport,
    ToolReport,
    UserInput,
)
from rampart_otel.conventions.labels import CLAUDE_CODE
from rampart_otel.conventions.side_effects import PROCESS
from rampart_otel.lazy_regex import LazyPattern
from rampart_otel.model import Span

SCOPE = "com.anthropic.claude_code.tracing"
SPAN_TYPE = "span.type"
NAME_PREFIX = "claude_code."
TOOL_USE_ID = "tool_use_id"
CALL_ID = "gen_ai.tool.call.id"
TOOL_NAME_KEYS = ("tool_name", "gen_ai.tool.name", "tool_name_safe")
FULL_COMMAND = "full_command"
TOOL_INPUT = "tool_input"
FILE_PATH = "file_path"
NEW_CONTEXT = "new_context"
NEW_CONTEXT_COUNT = "new_context_message_count"
USER_PROMPT = "user_prompt"
MODEL_OUTPUT = "response.model_output"
HAS_TOOL_CALL = "response.has_tool_call"
FINISH_REASONS = "gen_ai.response.finish_reasons"
STOP_REASON = "stop_reason"
OUTPUT_EVENT = "tool.output"
OUTPUT_KEYS = ("output", "content", "diff")  # Bash/MCP/web tools; Read/Write; Edit
BASH = "Bash"
ARGV0 = "bash_argv0"
REDACTED = "<REDACTED>"
TRUNCATED = "_truncated"

_INPUT_HEADER = LazyPattern(r"\[TOOL INPUT: [^\]\n]*\]\n")
_RESULT_HEADER = LazyPattern(r"\[TOOL RESULT: [^\]\n]*\]\n")
# One part of a request's new_context: "[USER]", "[TOOL RESULT: toolu_…]", ... on its line.
_PART_HEADER = LazyPattern(r"^\[([A-Z][A-Z _]*(?:: [^\]\n]+)?)\]$", re.MULTILINE)


def read(span: Span) -> SpanReport | None:
    if span.scope.name != SCOPE:
        return None
    kind = as_str(span.attributes.get(SPAN_TYPE)) or span.name.removeprefix(NAME_PREFIX)
    if kind == "interaction":
        return SpanReport(CLAUDE_CODE, agent=True)
    if kind == "llm_request":
        return SpanReport(CLAUDE_CODE, model=True, output=model_output(span))
    if kind == "tool":
        return _tool(span)
    if kind == "tool.execution":
        return SpanReport(CLAUDE_CODE, execution=_execution(span))
    if kind == "tool.blocked_on_user":
        return SpanReport(CLAUDE_CODE)  # the permission check; its outcome shows as execution
    return SpanReport(CLAUDE_CODE, not_understood=[f"a Claude Code span of type {kind!r}"])


# --- model turns -----------------------------------------------------------------------------


def model_output(span: Span) -> ModelOutput:
    """A turn's finish reasons; readable only when detailed tracing says it asked for no tool."""
    attrs = span.attributes
    finish = as_str_list(attrs.get(FINISH_REASONS))
    stop = as_str(attrs.get(STOP_REASON))
    if stop and stop not in finish:
        finish.append(stop)
    provider = as_str(attrs.get("gen_ai.provider.name")) or as_str(attrs.get("gen_ai.system"))
    output = ModelOutput(
        readable=False, finish_reasons=finish, convention=CLAUDE_CODE, provider=provider
    )
    if attrs.get(HAS_TOOL_CALL) is not False:
        return output  # the calls asked for are not listed: read from the tool spans
    output.readable = True
    text = _content(attrs, MODEL_OUTPUT, output.not_understood)
    if isinstance(text, str):
        output.text, output.text_captured = text, True
    return output


def _content(attrs: dict[str, Any], key: str, notes: list[str]) -> Any:
    """A content attribute, None when not logged; a value cut at the limit is noted."""
    value = attrs.get(key)
    if value is None or value == REDACTED:
        return None
    if attrs.get(key + TRUNCATED) is True:
        notes.append(f"{key} cut at Claude Code's content limit")
        return None
    return value


def history(span: Span) -> History:
    """Call id → the result the model was sent, from a request's detailed ``new_context``."""
    raw = span.attributes.get(NEW_CONTEXT)
    if not isinstance(raw, str) or "[TOOL RESULT: " not in raw:
        return History({}, {})
    if span.attributes.get(NEW_CONTEXT + TRUNCATED) is True:
        return History({}, {})
    results: dict[str, Any] = {}
    for label, text in _context_parts(raw):
        if label.startswith("TOOL RESULT: "):
            results.setdefault(label.removeprefix("TOOL RESULT: "), parse_result(text))
    return History({}, results)


def _context_parts(raw: str) -> list[tuple[str, str]]:
    """(label, text) of each part of a ``new_context``: ``[USER]``, ``[TOOL RESULT: id]``..."""
    parts: list[tuple[str, str]] = []
    headers = list(_PART_HEADER.finditer(raw))
    for index, header in enumerate(headers):
        # The text runs to the next part's header; parts are joined with "\n".
        end = headers[index + 1].start() - 1 if index + 1 < len(headers) else len(raw)
        parts.append((header.group(1), raw[header.end() + 1 : end] if end > header.end() else ""))
    return parts


def user_input(span: Span) -> UserInput | None:
    """The interaction's ``user_prompt``; a request's detailed ``new_context`` ``[USER]``
    parts (tool results are not the user's). ``<REDACTED>``, or a message count with no
    context, is Claude Code's content not logged."""
    if span.scope.name != SCOPE:
        return None
    attrs = span.attributes
    if USER_PROMPT in attrs:
        prompt = attrs[USER_PROMPT]
        if prompt == REDACTED:
            return UserInput(withheld=[f"{USER_PROMPT} is {REDACTED!r}: not logged"])
        found = UserInput()
        found.add(prompt, USER_PROMPT)
        return found
    raw = attrs.get(NEW_CONTEXT)
    if raw is None or raw == REDACTED:
        if NEW_CONTEXT_COUNT in attrs or raw == REDACTED:
            return UserInput(withheld=[f"{NEW_CONTEXT} (not logged: content capture off)"])
        return None
    if attrs.get(NEW_CONTEXT + TRUNCATED) is True or not isinstance(raw, str):
        return UserInput(not_understood=[f"{NEW_CONTEXT} cut at Claude Code's content limit"])
    return UserInput(texts=[text for label, text in _context_parts(raw) if label == "USER"])


# --- tool calls ------------------------------------------------------------------------------


def _tool(span: Span) -> SpanReport:
    attrs = span.attributes
    name = next((v for k in TOOL_NAME_KEYS if (v := as_str(attrs.get(k)))), "")
    notes: list[str] = []
    if not name:
        notes.append("a Claude Code tool span without a tool name")
    arguments = _arguments(attrs, notes)
    result, captured = _result(span, notes)
    report = ToolReport.execution(
        span,
        CLAUDE_CODE,
        name,
        _call_id(attrs),
        arguments=arguments,
        arguments_captured=arguments is not None,
        result=result,
        result_captured=captured,
        ran=False,  # asked for; ``tool.execution`` says it ran
    )
    bash = name == BASH or ARGV0 in attrs  # bash_argv0 is written for Bash only
    effects: list[SideEffectDetails] = (
        [(PROCESS, _process(attrs, arguments), CLAUDE_CODE, {})] if bash else []
    )
    return SpanReport(CLAUDE_CODE, execution=report, effects=effects, not_understood=notes)


def _execution(span: Span) -> ToolReport:
    attrs = span.attributes
    return ToolReport.execution(
        span,
        CLAUDE_CODE,
        "",  # the parent tool span names it; the id joins them
        _call_id(attrs),
        arguments=None,
        arguments_captured=False,
        result=None,
        result_captured=False,
        failed=attrs.get("success") is False or "error.type" in attrs,
    )


def _call_id(attrs: dict[str, Any]) -> str | None:
    return as_str(attrs.get(TOOL_USE_ID)) or as_str(attrs.get(CALL_ID)) or None


def _arguments(attrs: dict[str, Any], notes: list[str]) -> dict[str, Any] | str | None:
    detailed = _content(attrs, TOOL_INPUT, notes)
    if isinstance(detailed, str):
        return parse_arguments(_INPUT_HEADER.sub("", detailed, count=1))
    command = _content(attrs, FULL_COMMAND, notes)
    if isinstance(command, str):
        return {"command": command}
    path = _content(attrs, FILE_PATH, notes)
    if isinstance(path, str):
        return {"file_path": path}
    return None


def _result(span: Span, notes: list[str]) -> tuple[Any, bool]:
    for event in span.events:
        if event.name != OUTPUT_EVENT:
            continue
        for key in OUTPUT_KEYS:
            value = _content(event.attributes, key, notes)
            if value is not None:
                return parse_result(value), True
    detailed = _content(span.attributes, NEW_CONTEXT, notes)
    if isinstance(detailed, str) and _RESULT_HEADER.match(detailed):
        return parse_result(_RESULT_HEADER.sub("", detailed, count=1)), True
    return None, False


def _process(attrs: dict[str, Any], arguments: Any) -> dict[str, Any]:
    """The Bash call as a process run: executable, argv when the command was logged."""
    command = arguments.get("command") if isinstance(arguments, dict) else None
    args: list[str] | None = None
    if isinstance(command, str):
        try:
            args = shlex.split(command)
        except ValueError:  # unbalanced quotes: the shell would refuse it too
            args = command.split()
    executable = as_str(attrs.get(ARGV0)) or (args[0] if args else None)
    return {"executable": executable, "args": args, "exit_code": None}


CONVENTION = Convention(
    CLAUDE_CODE,
    read,
    history,
    user_input,
    content_keys=(
        FULL_COMMAND,
        TOOL_INPUT,
        NEW_CONTEXT,
        MODEL_OUTPUT,
        USER_PROMPT,
        "user_system_prompt",
        "system_prompt_preview",
    ),
    content_events=(OUTPUT_EVENT,),
    scopes=(SCOPE,),
)
