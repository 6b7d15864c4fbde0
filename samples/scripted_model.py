"""A scripted OpenAI-compatible Chat Completions server on loopback.

Real instrumentation libraries only produce real traces when a real client talks to a
server that answers like OpenAI. This one plays a fixed script per scenario, so sample
traces are reproducible without network access or a model.

The turn to play is the number of assistant messages already in the request's history,
so the server keeps no conversation state. The script is chosen by the request's
``model`` when it names a script (``exfil`` or ``scripted/exfil``), else by the
constructor's ``script``.

    with ScriptedModel("benign") as model:
        client = openai.OpenAI(base_url=model.base_url, api_key="test")
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

SYSTEM_FINGERPRINT = "fp_scripted01"


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
        Turn(
            tool_calls=(
                ToolCallSpec(
                    "send_report",
                    {"data": "Paris 18C light rain; customer=ACME-4471; api_token=tok_live_9f3a"},
                ),
            )
        ),
        Turn(text="It is 18°C with light rain in Paris. I have filed the weather report."),
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


class ScriptedModel:
    """Threaded loopback server answering ``/v1/chat/completions`` from a script."""

    def __init__(
        self,
        script: str = "benign",
        host: str = "127.0.0.1",
        port: int = 0,
        scripts: dict[str, tuple[Turn, ...]] | None = None,
    ) -> None:
        self.scripts = dict(SCRIPTS if scripts is None else scripts)
        if script not in self.scripts:
            raise ValueError(f"unknown script {script!r}; have {sorted(self.scripts)}")
        self.default_script = script
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer((host, port), _make_handler(self))
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """What an OpenAI client takes as ``base_url``."""
        return f"http://{self._server.server_address[0]}:{self.port}/v1"

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

    # -- answering ---------------------------------------------------------------

    def select(self, request: dict[str, Any]) -> tuple[str, int, Turn]:
        """The script, turn index and turn that answer this request."""
        model = str(request.get("model", ""))
        name = model.removeprefix("scripted/")
        script_name = name if name in self.scripts else self.default_script
        script = self.scripts[script_name]
        messages = request.get("messages") or []
        index = sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "assistant")
        return script_name, index, script[min(index, len(script) - 1)]

    def record(self, request: dict[str, Any]) -> int:
        with self._lock:
            self.requests.append(request)
            return len(self.requests)

    def completion(self, request: dict[str, Any]) -> dict[str, Any]:
        """A non-streaming ``chat.completion`` object."""
        script_name, index, turn = self.select(request)
        message: dict[str, Any] = {
            "role": "assistant",
            "content": turn.text,
            "refusal": None,
            "annotations": [],
        }
        if turn.tool_calls:
            message["tool_calls"] = [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
                }
                for call_id, call in self._calls(script_name, index, turn)
            ]
        return {
            "id": _stable_id("chatcmpl-", script_name, index, "completion", length=29),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": str(request.get("model", "gpt-4o-mini")),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": turn.finish_reason,
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

    def _calls(self, script_name: str, index: int, turn: Turn) -> list[tuple[str, ToolCallSpec]]:
        return [
            (_stable_id("call_", script_name, index, i, call.name), call)
            for i, call in enumerate(turn.tool_calls)
        ]

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
            self.end_headers()
            self.wfile.write(data)

        def _error(self, status: int, message: str) -> None:
            body = {"error": {"message": message, "type": "invalid_request_error", "code": None}}
            self._send_json(status, body)

        def do_GET(self) -> None:
            if self.path.rstrip("/").endswith("/models"):
                data = [{"id": n, "object": "model", "owned_by": "scripted"} for n in model.scripts]
                self._send_json(200, {"object": "list", "data": data})
            else:
                self._error(404, f"no route {self.path}")

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._error(404, f"no route {self.path}")
                return
            try:
                request = json.loads(raw or b"{}")
            except json.JSONDecodeError as exc:
                self._error(400, f"body is not JSON: {exc}")
                return
            if not isinstance(request, dict):
                self._error(400, "body must be a JSON object")
                return
            model.record(request)
            if request.get("stream"):
                self._stream(request)
            else:
                self._send_json(200, model.completion(request))

        def _stream(self, request: dict[str, Any]) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            for chunk in model.chunks(request):
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
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
