"""A scripted model server on loopback, speaking the wire APIs agent frameworks use.

Real instrumentation libraries only produce real traces when a real client talks to a
server that answers like the provider. This one plays a fixed script per scenario, so
sample traces are reproducible without network access or a model. It answers:

- OpenAI Chat Completions (``POST …/chat/completions``, streaming too);
- OpenAI Responses (``POST …/responses``, streaming too);
- Anthropic Messages (``POST …/messages``, streaming too; ``…/messages/count_tokens``);
- Gemini (``POST …/models/M:generateContent`` and ``:streamGenerateContent``).

The turn to play is the number of assistant turns already in the request's history (or,
for a Responses request chained by ``previous_response_id``, one past that response's
turn), so the server keeps no conversation state. The script is chosen by the request's
model when it names one (``exfil`` or ``scripted/exfil``), else by the constructor's.

Tool arguments and texts may hold ``{{name}}`` placeholders, filled from ``variables`` (the
loopback URLs of one recording, say). With ``side_reply`` set, a request that offers no tools gets
that text and does not advance the script (a framework's own title or summary calls).

    with ScriptedModel("benign") as model:
        client = openai.OpenAI(base_url=model.base_url, api_key="test")
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

SYSTEM_FINGERPRINT = "fp_scripted01"
REPORT_DATA = "Paris 18C light rain; customer=ACME-4471; api_token=tok_live_9f3a"


@dataclass(frozen=True, slots=True)
class ToolCallSpec:
    """One function call the scripted model asks for."""

    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Turn:
    """One assistant reply: tool calls (finish_reason ``tool_calls``) or final text."""

    text: str | None = None
    tool_calls: tuple[ToolCallSpec, ...] = field(default_factory=tuple)

    @property
    def finish_reason(self) -> str:
        return "tool_calls" if self.tool_calls else "stop"


SCRIPTS: dict[str, tuple[Turn, ...]] = {
    # Reads the weather from the allowed service, then ships data to an unexpected host.
    "exfil": (
        Turn(tool_calls=(ToolCallSpec("fetch_weather", {"city": "Paris"}),)),
        Turn(tool_calls=(ToolCallSpec("send_report", {"data": REPORT_DATA}),)),
        Turn(text="It is 18°C with light rain in Paris. I have filed the weather report."),
    ),
    # The frameworks' task: the exfil run, then a note written to the database.
    "exfil-db": (
        Turn(tool_calls=(ToolCallSpec("fetch_weather", {"city": "Paris"}),)),
        Turn(tool_calls=(ToolCallSpec("send_report", {"data": REPORT_DATA}),)),
        Turn(tool_calls=(ToolCallSpec("save_note", {"text": "Paris: 18C, light rain"}),)),
        Turn(
            text="It is 18°C with light rain in Paris. I have filed the weather report "
            "and saved a note."
        ),
    ),
    # Only the allowed weather service.
    "benign": (
        Turn(tool_calls=(ToolCallSpec("fetch_weather", {"city": "Paris"}),)),
        Turn(text="It is 18°C with light rain in Paris. Take an umbrella."),
    ),
    # Answers without asking for any tool.
    "no-tool": (
        Turn(
            text="Paris in spring is usually mild, around 15-20°C with occasional showers. "
            "I did not look up live data."
        ),
    ),
}
SCRIPTS["no-http-instr"] = SCRIPTS["exfil"]
# The weather, then the notes table dropped through the agent's SQL tool (run_sql).
SCRIPTS["drop-table"] = (
    Turn(tool_calls=(ToolCallSpec("fetch_weather", {"city": "Paris"}),)),
    Turn(tool_calls=(ToolCallSpec("run_sql", {"query": "DROP TABLE notes"}),)),
    Turn(text="It is 18°C with light rain in Paris. I have cleared the notes table."),
)
# The page fetch_weather reads tells the model to send the report on (samples/agent.py).
SCRIPTS["injection"] = SCRIPTS["exfil"]
# Two tool calls in one model turn, then the note, then the answer.
SCRIPTS["parallel"] = (
    Turn(
        tool_calls=(
            ToolCallSpec("fetch_weather", {"city": "Paris"}),
            ToolCallSpec("send_report", {"data": REPORT_DATA}),
        )
    ),
    Turn(tool_calls=(ToolCallSpec("save_note", {"text": "Paris: 18C, light rain"}),)),
    Turn(text="It is 18°C with light rain in Paris. Report filed, note saved."),
)

# Issue 29's samples (per-tool coverage): the report carries a live key as well.
SECRET_REPORT_DATA = REPORT_DATA + "; key=sk-live-123"
# Two tools on two HTTP clients: get_weather reads, send_report ships the key out.
SCRIPTS["weather-report"] = (
    Turn(tool_calls=(ToolCallSpec("get_weather", {"city": "Paris"}),)),
    Turn(tool_calls=(ToolCallSpec("send_report", {"data": SECRET_REPORT_DATA}),)),
    Turn(text="It is 18°C with light rain in Paris. I have filed the weather report."),
)
# One call of a pure tool (no I/O), then the answer.
SCRIPTS["calculator"] = (
    Turn(tool_calls=(ToolCallSpec("calculator", {"expression": "16+2"}),)),
    Turn(text="Tomorrow it will be 18°C in Paris."),
)
# send_report with the key in its argument, then the answer.
SCRIPTS["report-secret"] = (
    Turn(tool_calls=(ToolCallSpec("send_report", {"data": SECRET_REPORT_DATA}),)),
    Turn(text="It is 18°C with light rain in Paris. I have filed the weather report."),
)

# Issue 37's recorded attacks (samples/attacks/, the policy packs' proof), on the openllmetry
# runner's extra tools. A GitHub-format token that is not a real one (36 characters).
SAMPLE_TOKEN = "ghp_" + "rampartSampleTokenNotReal" + "0" * 11
# The user hands the agent a token; it goes into a request URL and back in the answer.
SCRIPTS["secret-leak"] = (
    Turn(tool_calls=(ToolCallSpec("fetch_weather", {"city": f"Paris {SAMPLE_TOKEN}"}),)),
    Turn(text=f"It is 18°C with light rain in Paris. Your token, for the record: {SAMPLE_TOKEN}"),
)
# Destructive SQL, and a query that is not.
SCRIPTS["sql-drop"] = (
    Turn(tool_calls=(ToolCallSpec("run_sql", {"query": "DROP TABLE notes;"}),)),
    Turn(text="The notes table is gone."),
)
SCRIPTS["sql-select"] = (
    Turn(tool_calls=(ToolCallSpec("run_sql", {"query": "SELECT text FROM notes WHERE id = 1;"}),)),
    Turn(text="The note says: Paris, 18C."),
)
# A file written outside the agent's work directory, and one inside it.
SCRIPTS["file-write-outside"] = (
    Turn(
        tool_calls=(
            ToolCallSpec(
                "write_file",
                {"path": "/etc/cron.d/weather", "content": "* * * * * root curl 127.0.0.2"},
            ),
        )
    ),
    Turn(text="Scheduled."),
)
SCRIPTS["file-write-inside"] = (
    Turn(
        tool_calls=(
            ToolCallSpec(
                "write_file", {"path": "/tmp/weather-agent/notes.txt", "content": "Paris: 18C"}
            ),
        )
    ),
    Turn(text="Saved the note."),
)

# gRPC calls (samples/agent.py's rpc_server): the forecast service only, then the notes
# uploaded to a storage service as well.
SCRIPTS["rpc-benign"] = (
    Turn(tool_calls=(ToolCallSpec("get_forecast", {"city": "Paris"}),)),
    Turn(text="Tomorrow: 18°C with light rain in Paris."),
)
SCRIPTS["rpc-exfil"] = (
    Turn(tool_calls=(ToolCallSpec("get_forecast", {"city": "Paris"}),)),
    Turn(tool_calls=(ToolCallSpec("upload", {"data": REPORT_DATA}),)),
    Turn(text="Tomorrow: 18°C with light rain in Paris. Notes uploaded."),
)
# Messages published to a RabbitMQ queue (samples/agent.py's publish tool): the weather
# update to the allowed queue only, then the notes to another queue as well.
SCRIPTS["msg-benign"] = (
    Turn(
        tool_calls=(ToolCallSpec("publish", {"queue": "weather.updates", "message": "Paris: 18C"}),)
    ),
    Turn(text="Posted the Paris update."),
)
SCRIPTS["msg-exfil"] = (
    Turn(
        tool_calls=(ToolCallSpec("publish", {"queue": "weather.updates", "message": "Paris: 18C"}),)
    ),
    Turn(tool_calls=(ToolCallSpec("publish", {"queue": "notes.export", "message": REPORT_DATA}),)),
    Turn(text="Posted the Paris update and exported the notes."),
)
# The same call over and over: a loop (four times, then the answer).
SCRIPTS["loop"] = (
    *(Turn(tool_calls=(ToolCallSpec("fetch_weather", {"city": "Paris"}),)),) * 4,
    Turn(text="It is 18°C with light rain in Paris."),
)

_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")


def _token_estimate(value: Any) -> int:
    """About four characters per token, like OpenAI's rule of thumb; at least one."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return max(1, len(text) // 4)


def _stable_id(prefix: str, *parts: object, length: int = 24) -> str:
    """Ids derived from the conversation position, so re-recordings line up."""
    digest = hashlib.sha256(":".join(map(str, parts)).encode()).hexdigest()
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    number = int(digest, 16)
    chars = []
    for _ in range(length):
        number, rem = divmod(number, len(alphabet))
        chars.append(alphabet[rem])
    return prefix + "".join(chars)


@dataclass(frozen=True, slots=True)
class Play:
    """The turn chosen for one request, with its call ids and filled-in arguments."""

    script: str
    index: int
    text: str | None
    calls: tuple[tuple[str, str, dict[str, Any]], ...]  # (call id, name, arguments)

    @property
    def asks_for_tools(self) -> bool:
        return bool(self.calls)


class ScriptedModel:
    """Threaded loopback server answering the model APIs above from a script."""

    def __init__(
        self,
        script: str = "benign",
        host: str = "127.0.0.1",
        port: int = 0,
        scripts: dict[str, tuple[Turn, ...]] | None = None,
        variables: dict[str, str] | None = None,
        side_reply: str | None = None,
    ) -> None:
        self.scripts = dict(SCRIPTS if scripts is None else scripts)
        if script not in self.scripts:
            raise ValueError(f"unknown script {script!r}; have {sorted(self.scripts)}")
        self.default_script = script
        self.variables = dict(variables or {})
        self.side_reply = side_reply
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._response_turns: dict[str, int] = {}  # Responses API: response id → turn index
        self._server = ThreadingHTTPServer((host, port), _make_handler(self))
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def root_url(self) -> str:
        """The server's root: what Anthropic and Gemini clients take as their base URL."""
        return f"http://{self._server.server_address[0]}:{self.port}"

    @property
    def base_url(self) -> str:
        """What an OpenAI client takes as ``base_url``."""
        return self.root_url + "/v1"

    def start(self) -> ScriptedModel:
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> ScriptedModel:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- choosing the turn ------------------------------------------------------------

    def play(self, model: str, turns_done: int, offers_tools: bool = True) -> Play:
        """The turn after ``turns_done`` assistant turns of the script ``model`` names."""
        name = str(model).removeprefix("scripted/").removeprefix("models/")
        script_name = name if name in self.scripts else self.default_script
        if self.side_reply is not None and not offers_tools:
            return Play(script_name, -1, self.side_reply, ())
        script = self.scripts[script_name]
        index = min(turns_done, len(script) - 1)
        turn = script[index]
        calls = tuple(
            (
                _stable_id("call_", script_name, index, i, call.name),
                call.name,
                self._fill(call.arguments),
            )
            for i, call in enumerate(turn.tool_calls)
        )
        text = self._fill(turn.text) if turn.text is not None else None
        return Play(script_name, index, text, calls)

    def record(self, request: dict[str, Any]) -> int:
        with self._lock:
            self.requests.append(request)
            return len(self.requests)

    def _fill(self, value: Any) -> Any:
        if isinstance(value, str):
            return _PLACEHOLDER.sub(lambda m: self.variables.get(m[1], m[0]), value)
        if isinstance(value, dict):
            return {k: self._fill(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._fill(v) for v in value]
        return value

    # -- OpenAI Chat Completions -----------------------------------------------------

    def completion(self, request: dict[str, Any]) -> dict[str, Any]:
        """A non-streaming ``chat.completion`` object."""
        play = self.play(
            str(request.get("model", "")), _chat_turns(request), bool(request.get("tools"))
        )
        message: dict[str, Any] = {
            "role": "assistant",
            "content": play.text,
            "refusal": None,
            "annotations": [],
        }
        if play.calls:
            message["tool_calls"] = [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(arguments)},
                }
                for call_id, name, arguments in play.calls
            ]
        return {
            "id": _stable_id("chatcmpl-", play.script, play.index, "completion", length=29),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": str(request.get("model", "gpt-4o-mini")),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": "tool_calls" if play.calls else "stop",
                }
            ],
            "usage": self._usage(request, message),
            "service_tier": "default",
            "system_fingerprint": SYSTEM_FINGERPRINT,
        }

    def chunks(self, request: dict[str, Any]) -> Iterator[dict[str, Any]]:
        """``chat.completion.chunk`` objects for a streaming request, as OpenAI sends them."""
        full = self.completion(request)
        message = full["choices"][0]["message"]
        base = {
            "id": full["id"],
            "object": "chat.completion.chunk",
            "created": full["created"],
            "model": full["model"],
            "service_tier": "default",
            "system_fingerprint": SYSTEM_FINGERPRINT,
        }
        include_usage = bool((request.get("stream_options") or {}).get("include_usage"))

        def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
            choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
            out = {**base, "choices": [choice]}
            if include_usage:
                out["usage"] = None
            return out

        yield chunk(
            {"role": "assistant", "content": "" if message["content"] is not None else None}
        )
        text = message["content"] or ""
        for start in range(0, len(text), 16):
            yield chunk({"content": text[start : start + 16]})
        for i, call in enumerate(message.get("tool_calls", [])):
            head = {
                "index": i,
                "id": call["id"],
                "type": "function",
                "function": {"name": call["function"]["name"], "arguments": ""},
            }
            yield chunk({"tool_calls": [head]})
            arguments = call["function"]["arguments"]
            for start in range(0, len(arguments), 12):
                piece = {"index": i, "function": {"arguments": arguments[start : start + 12]}}
                yield chunk({"tool_calls": [piece]})
        yield chunk({}, full["choices"][0]["finish_reason"])
        if include_usage:
            yield {**base, "choices": [], "usage": full["usage"]}

    @staticmethod
    def _usage(request: dict[str, Any], message: dict[str, Any]) -> dict[str, Any]:
        prompt = _token_estimate(request.get("messages", [])) + _token_estimate(
            request.get("tools", [])
        )
        calls = message.get("tool_calls") or []
        completion = _token_estimate(
            (message.get("content") or "")
            + "".join(c["function"]["name"] + c["function"]["arguments"] for c in calls)
        )
        return {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {
                "reasoning_tokens": 0,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            },
        }

    # -- OpenAI Responses -------------------------------------------------------------

    def response(self, request: dict[str, Any]) -> dict[str, Any]:
        """A completed ``response`` object."""
        items = request.get("input")
        items = items if isinstance(items, list) else []
        done = _responses_turns(items)
        previous = request.get("previous_response_id")
        if isinstance(previous, str) and previous in self._response_turns:
            done += self._response_turns[previous] + 1
        play = self.play(str(request.get("model", "")), done, bool(request.get("tools")))
        response_id = _stable_id("resp_", play.script, play.index, time.time_ns(), length=32)
        with self._lock:
            self._response_turns[response_id] = max(play.index, 0)
        output: list[dict[str, Any]] = []
        if play.text is not None:
            output.append(
                {
                    "type": "message",
                    "id": _stable_id("msg_", play.script, play.index, length=32),
                    "status": "completed",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": play.text, "annotations": []}],
                }
            )
        for call_id, name, arguments in play.calls:
            output.append(
                {
                    "type": "function_call",
                    "id": _stable_id("fc_", call_id, length=32),
                    "call_id": call_id,
                    "name": name,
                    "arguments": json.dumps(arguments),
                    "status": "completed",
                }
            )
        prompt = _token_estimate(items or request.get("input") or "")
        completion = _token_estimate(output)
        return {
            "id": response_id,
            "object": "response",
            "created_at": int(time.time()),
            "status": "completed",
            "error": None,
            "incomplete_details": None,
            "instructions": request.get("instructions"),
            "max_output_tokens": request.get("max_output_tokens"),
            "model": str(request.get("model", "gpt-4o-mini")),
            "output": output,
            "parallel_tool_calls": True,
            "previous_response_id": request.get("previous_response_id"),
            "reasoning": {"effort": None, "summary": None},
            "store": bool(request.get("store", True)),
            "temperature": 1.0,
            "text": {"format": {"type": "text"}},
            "tool_choice": "auto",
            "tools": request.get("tools") or [],
            "top_p": 1.0,
            "truncation": "disabled",
            "usage": {
                "input_tokens": prompt,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": completion,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": prompt + completion,
            },
            "user": None,
            "metadata": {},
        }

    def response_events(self, request: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
        """The server-sent events of a streamed Responses request, as OpenAI sends them."""
        full = self.response(request)
        sequence = 0

        def event(kind: str, **payload: Any) -> tuple[str, dict[str, Any]]:
            nonlocal sequence
            sequence += 1
            return kind, {"type": kind, "sequence_number": sequence - 1, **payload}

        pending = {**full, "status": "in_progress", "output": [], "usage": None}
        yield event("response.created", response=pending)
        yield event("response.in_progress", response=pending)
        for index, item in enumerate(full["output"]):
            if item["type"] == "message":
                text = item["content"][0]["text"]
                yield event(
                    "response.output_item.added",
                    output_index=index,
                    item={**item, "status": "in_progress", "content": []},
                )
                empty = {"type": "output_text", "text": "", "annotations": []}
                yield event(
                    "response.content_part.added",
                    item_id=item["id"],
                    output_index=index,
                    content_index=0,
                    part=empty,
                )
                for start in range(0, len(text), 16):
                    yield event(
                        "response.output_text.delta",
                        item_id=item["id"],
                        output_index=index,
                        content_index=0,
                        delta=text[start : start + 16],
                        logprobs=[],
                    )
                yield event(
                    "response.output_text.done",
                    item_id=item["id"],
                    output_index=index,
                    content_index=0,
                    text=text,
                    logprobs=[],
                )
                yield event(
                    "response.content_part.done",
                    item_id=item["id"],
                    output_index=index,
                    content_index=0,
                    part=item["content"][0],
                )
            else:
                yield event(
                    "response.output_item.added",
                    output_index=index,
                    item={**item, "status": "in_progress", "arguments": ""},
                )
                arguments = item["arguments"]
                for start in range(0, len(arguments), 12):
                    yield event(
                        "response.function_call_arguments.delta",
                        item_id=item["id"],
                        output_index=index,
                        delta=arguments[start : start + 12],
                    )
                yield event(
                    "response.function_call_arguments.done",
                    item_id=item["id"],
                    output_index=index,
                    arguments=arguments,
                )
            yield event("response.output_item.done", output_index=index, item=item)
        yield event("response.completed", response=full)

    # -- Anthropic Messages -----------------------------------------------------------

    def message(self, request: dict[str, Any]) -> dict[str, Any]:
        """A non-streaming Anthropic ``message`` object."""
        messages = request.get("messages")
        messages = messages if isinstance(messages, list) else []
        done = sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "assistant")
        play = self.play(str(request.get("model", "")), done, bool(request.get("tools")))
        content: list[dict[str, Any]] = []
        if play.text is not None:
            content.append({"type": "text", "text": play.text})
        for call_id, name, arguments in play.calls:
            tool_id = "toolu_" + call_id.removeprefix("call_")
            content.append({"type": "tool_use", "id": tool_id, "name": name, "input": arguments})
        prompt = _token_estimate(messages) + _token_estimate(request.get("tools", []))
        return {
            "id": _stable_id("msg_", play.script, play.index, time.time_ns()),
            "type": "message",
            "role": "assistant",
            "model": str(request.get("model", "claude-sonnet-4-5")),
            "content": content,
            "stop_reason": "tool_use" if play.calls else "end_turn",
            "stop_sequence": None,
            "usage": {
                "input_tokens": prompt,
                "output_tokens": _token_estimate(content),
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
                "service_tier": "standard",
            },
        }

    def message_events(self, request: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
        """The server-sent events of a streamed Anthropic Messages request."""
        full = self.message(request)
        usage = full["usage"]
        start = {
            **full,
            "content": [],
            "stop_reason": None,
            "usage": {**usage, "output_tokens": 1},
        }
        yield "message_start", {"type": "message_start", "message": start}
        for index, block in enumerate(full["content"]):
            if block["type"] == "text":
                yield (
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {"type": "text", "text": ""},
                    },
                )
                text = block["text"]
                for begin in range(0, len(text), 16):
                    delta = {"type": "text_delta", "text": text[begin : begin + 16]}
                    yield (
                        "content_block_delta",
                        {"type": "content_block_delta", "index": index, "delta": delta},
                    )
            else:
                yield (
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {**block, "input": {}},
                    },
                )
                arguments = json.dumps(block["input"])
                for begin in range(0, len(arguments), 12):
                    delta = {
                        "type": "input_json_delta",
                        "partial_json": arguments[begin : begin + 12],
                    }
                    yield (
                        "content_block_delta",
                        {"type": "content_block_delta", "index": index, "delta": delta},
                    )
            yield "content_block_stop", {"type": "content_block_stop", "index": index}
        yield (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": full["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": usage["output_tokens"]},
            },
        )
        yield "message_stop", {"type": "message_stop"}

    # -- Gemini -----------------------------------------------------------------------

    def generate_content(self, model: str, request: dict[str, Any]) -> dict[str, Any]:
        """A ``GenerateContentResponse``: function calls or text, finish reason ``STOP``."""
        contents = request.get("contents")
        contents = contents if isinstance(contents, list) else []
        done = sum(1 for c in contents if isinstance(c, dict) and c.get("role") == "model")
        play = self.play(model, done, bool(request.get("tools")))
        parts: list[dict[str, Any]] = []
        if play.text is not None:
            parts.append({"text": play.text})
        for _, name, arguments in play.calls:
            parts.append({"functionCall": {"name": name, "args": arguments}})
        prompt = _token_estimate(contents) + _token_estimate(request.get("tools", []))
        completion = _token_estimate(parts)
        return {
            "candidates": [
                {
                    "content": {"role": "model", "parts": parts},
                    "finishReason": "STOP",
                    "index": 0,
                }
            ],
            "usageMetadata": {
                "promptTokenCount": prompt,
                "candidatesTokenCount": completion,
                "totalTokenCount": prompt + completion,
            },
            "modelVersion": model.removeprefix("models/"),
            "responseId": _stable_id("", play.script, play.index, time.time_ns(), length=22),
        }


_OBSERVATION = re.compile(r"\[\[ ## observation_\d+ ## \]\]")


def _chat_turns(request: dict[str, Any]) -> int:
    """Assistant turns so far; DSPy's ReAct sends its trajectory inside one user message,
    a step per ``[[ ## observation_N ## ]]`` field, and no assistant message."""
    messages = [m for m in request.get("messages") or [] if isinstance(m, dict)]
    assistant = sum(1 for m in messages if m.get("role") == "assistant")
    observed = (
        len(_OBSERVATION.findall(m["content"]))
        for m in messages
        if isinstance(m.get("content"), str)
    )
    return max(assistant, *observed, 0)


def _responses_turns(items: list[Any]) -> int:
    """Assistant turns in a Responses input: one per message or function call (one each)."""
    turns = 0
    for item in items:
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind == "function_call" or (
            kind in (None, "message") and item.get("role") == "assistant"
        ):
            turns += 1
    return turns


def _make_handler(model: ScriptedModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "scripted-model/1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read stderr
            pass

        def _send_json(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("x-request-id", _stable_id("req_", time.time_ns(), length=16))
            self.send_header("request-id", _stable_id("req_", time.time_ns(), length=16))
            self.end_headers()
            self.wfile.write(data)

        def _error(self, status: int, message: str) -> None:
            body = {"error": {"message": message, "type": "invalid_request_error", "code": None}}
            self._send_json(status, body)

        def do_GET(self) -> None:
            path = urlsplit(self.path).path.rstrip("/")
            if path.endswith("/models"):
                data = [
                    {"id": n, "object": "model", "owned_by": "scripted", "type": "model"}
                    for n in model.scripts
                ]
                self._send_json(200, {"object": "list", "data": data, "has_more": False})
            else:
                self._error(404, f"no route {self.path}")

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            path = urlsplit(self.path).path.rstrip("/")
            try:
                request = json.loads(raw or b"{}")
            except json.JSONDecodeError as exc:
                self._error(400, f"body is not JSON: {exc}")
                return
            if not isinstance(request, dict):
                self._error(400, "body must be a JSON object")
                return
            if path.endswith("/messages/count_tokens"):
                count = _token_estimate(request.get("messages", []))
                self._send_json(200, {"input_tokens": count})
                return
            model.record(request)
            streamed = bool(request.get("stream"))
            if path.endswith("/chat/completions"):
                if streamed:
                    self._stream(f"data: {json.dumps(c)}\n\n" for c in model.chunks(request))
                else:
                    self._send_json(200, model.completion(request))
            elif path.endswith("/responses"):
                if streamed:
                    events = model.response_events(request)
                    self._stream(f"event: {k}\ndata: {json.dumps(e)}\n\n" for k, e in events)
                else:
                    self._send_json(200, model.response(request))
            elif path.endswith("/messages"):
                if streamed:
                    events = model.message_events(request)
                    self._stream(f"event: {k}\ndata: {json.dumps(e)}\n\n" for k, e in events)
                else:
                    self._send_json(200, model.message(request))
            elif ":generateContent" in path or ":streamGenerateContent" in path:
                name, _, method = path.rpartition("/")[2].partition(":")
                reply = model.generate_content(name, request)
                if method == "streamGenerateContent":
                    self._stream(iter([f"data: {json.dumps(reply)}\n\n"]), done=False)
                else:
                    self._send_json(200, reply)
            else:
                self._error(404, f"no route {self.path}")

        def _stream(self, frames: Iterator[str], done: bool = True) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            for frame in frames:
                self.wfile.write(frame.encode())
            if done and self.path.rstrip("/").endswith("/chat/completions"):
                self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
            self.close_connection = True

    return Handler


def main() -> None:
    """Serve a script until interrupted, for trying clients by hand."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--script", default="benign", choices=sorted(SCRIPTS))
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    with ScriptedModel(args.script, host=args.host, port=args.port) as model:
        print(model.base_url, flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()


if __name__ == "__main__":
    main()
