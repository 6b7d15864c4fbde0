"""The sample recorder produces real OTLP/JSON lines, and the agent's exporter is pluggable."""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import openai
import pytest

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from samples.record import CASES, check_file, record_case  # noqa: E402
from samples.scripted_model import ScriptedModel  # noqa: E402

HEX32 = re.compile(r"^[0-9a-f]{32}$")
HEX16 = re.compile(r"^[0-9a-f]{16}$")


def _value(v: dict[str, Any]) -> Any:
    for key in ("stringValue", "boolValue", "intValue", "doubleValue"):
        if key in v:
            return v[key]
    if "arrayValue" in v:
        return [_value(x) for x in v["arrayValue"].get("values", [])]
    return v


def _spans(path: Path) -> list[dict[str, Any]]:
    spans = []
    for line in path.read_text(encoding="utf-8").splitlines():
        for rs in json.loads(line)["resourceSpans"]:
            resource = {a["key"]: _value(a["value"]) for a in rs["resource"]["attributes"]}
            for ss in rs["scopeSpans"]:
                for span in ss["spans"]:
                    attrs = {a["key"]: _value(a["value"]) for a in span.get("attributes", [])}
                    spans.append({**span, "attrs": attrs, "resource": resource})
    return spans


def test_recorder_writes_otlp_json_lines_with_hex_ids(tmp_path: Path) -> None:
    case = next(c for c in CASES if c.name == "openinference-exfil")
    path = record_case(case, tmp_path)
    assert check_file(path) == 8
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) >= 2  # one trace over several export batches
    spans = _spans(path)
    assert {s["traceId"] for s in spans} and all(HEX32.match(s["traceId"]) for s in spans)
    assert all(HEX16.match(s["spanId"]) for s in spans)
    ids = {s["spanId"] for s in spans}
    assert all(s["parentSpanId"] in ids for s in spans if "parentSpanId" in s)
    assert all(
        isinstance(s["startTimeUnixNano"], str) and isinstance(s["kind"], int) for s in spans
    )
    assert spans[0]["resource"]["service.name"] == "weather-agent"

    tools = {s["attrs"]["tool.name"]: s for s in spans if s["attrs"].get("tool.name")}
    assert set(tools) == {"fetch_weather", "send_report"}
    assert json.loads(tools["fetch_weather"]["attrs"]["input.value"]) == {"city": "Paris"}
    posts = [s for s in spans if s["attrs"].get("http.method") == "POST"]
    assert len(posts) == 1 and posts[0]["attrs"]["http.url"].startswith("http://127.0.0.2:")
    assert posts[0]["parentSpanId"] == tools["send_report"]["spanId"]
    requested = [
        v
        for s in spans
        for k, v in s["attrs"].items()
        if k.endswith("tool_call.function.name") and k.startswith("llm.output_messages")
    ]
    assert requested == ["fetch_weather", "send_report"]


def test_pydantic_ai_drop_and_upstream_parent(tmp_path: Path) -> None:
    out = tmp_path / "t.jsonl"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "samples.agent",
            "--library",
            "pydantic-ai",
            "--scenario",
            "exfil",
            "--http-semconv",
            "http",
            "--drop-span",
            "execute_tool send_report",
            "--traceparent",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            "--out",
            str(out),
        ],
        cwd=REPO,
        check=True,
        capture_output=True,
        timeout=60,
    )
    spans = _spans(out)
    assert {s["traceId"] for s in spans} == {"0af7651916cd43dd8448eb211c80319c"}
    names = [s["name"] for s in spans]
    assert "execute_tool send_report" not in names and "execute_tool fetch_weather" in names
    ids = {s["spanId"] for s in spans}
    orphans = [s for s in spans if s.get("parentSpanId") not in ids]
    assert sorted(s["name"] for s in orphans) == ["POST", "invoke_agent weather-agent"]
    root = next(s for s in orphans if s["name"].startswith("invoke_agent"))
    assert root["parentSpanId"] == "b7ad6b7169203331"
    post = next(s for s in orphans if s["name"] == "POST")
    assert post["attrs"]["url.full"].startswith("http://127.0.0.2:")
    call = next(s for s in spans if s["name"] == "execute_tool fetch_weather")
    assert call["attrs"]["gen_ai.tool.call.id"].startswith("call_")


class _Receiver(BaseHTTPRequestHandler):
    bodies: list[bytes] = []

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        type(self).bodies.append(body)
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()


@pytest.fixture
def otlp_receiver() -> Iterator[tuple[str, list[bytes]]]:
    handler = type("Receiver", (_Receiver,), {"bodies": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", handler.bodies
    server.shutdown()
    server.server_close()


def test_agent_sends_with_the_real_otlp_http_exporter(
    otlp_receiver: tuple[str, list[bytes]],
) -> None:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    endpoint, bodies = otlp_receiver
    subprocess.run(
        [
            sys.executable,
            "-m",
            "samples.agent",
            "--library",
            "openllmetry",
            "--scenario",
            "no-tool",
            "--otlp-endpoint",
            endpoint,
            "--otlp-protocol",
            "http",
        ],
        cwd=REPO,
        check=True,
        capture_output=True,
        timeout=60,
    )
    names = []
    for body in bodies:
        request = ExportTraceServiceRequest.FromString(body)
        for rs in request.resource_spans:
            for ss in rs.scope_spans:
                names += [s.name for s in ss.spans]
    assert sorted(names) == ["openai.chat", "weather-agent"]


def test_scripted_model_plays_its_script_and_streams() -> None:
    with ScriptedModel("benign") as model:
        client = openai.OpenAI(base_url=model.base_url, api_key="x", max_retries=0)
        messages: list[dict[str, Any]] = [{"role": "user", "content": "weather?"}]
        first = client.chat.completions.create(model="gpt-4o-mini", messages=messages)
        choice = first.choices[0]
        assert choice.finish_reason == "tool_calls"
        call = choice.message.tool_calls[0]
        assert call.function.name == "fetch_weather"
        assert json.loads(call.function.arguments) == {"city": "Paris"}
        assert first.usage is not None and first.usage.total_tokens > 0
        messages += [
            {"role": "assistant", "content": None, "tool_calls": [call.model_dump()]},
            {"role": "tool", "tool_call_id": call.id, "content": "18C"},
        ]
        stream = client.chat.completions.create(
            model="gpt-4o-mini",
            messages=messages,
            stream=True,
            stream_options={"include_usage": True},
        )
        chunks = list(stream)
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        assert text.startswith("It is 18°C")
        assert chunks[-1].usage is not None
        # The request's model picks another script.
        other = client.chat.completions.create(model="scripted/exfil", messages=messages[:1])
        assert other.choices[0].message.tool_calls[0].function.name == "fetch_weather"
        assert len(model.requests) == 3


def test_scripted_model_follows_a_history_that_merges_tool_call_turns() -> None:
    """The AI SDK 5 (Mastra 0.24) sends consecutive tool-call turns as one assistant message:
    the turn is the one after those whose calls the history holds, not the assistant count."""
    with ScriptedModel("exfil-db") as model:

        def call(call_id: str, name: str) -> dict[str, Any]:
            return {
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": "{}"},
            }

        merged = [
            {"role": "user", "content": "weather?"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [call("a", "fetch_weather"), call("b", "send_report")],
            },
            {"role": "tool", "tool_call_id": "a", "content": "18C"},
            {"role": "tool", "tool_call_id": "b", "content": "ok"},
        ]
        reply = model.completion({"model": "gpt-4o-mini", "messages": merged, "tools": [{}]})
        (asked,) = reply["choices"][0]["message"]["tool_calls"]
        assert asked["function"]["name"] == "save_note"
    with ScriptedModel("parallel") as model:  # one turn of two calls stays one turn
        reply = model.completion({"model": "x", "messages": merged, "tools": [{}]})
        (asked,) = reply["choices"][0]["message"]["tool_calls"]
        assert asked["function"]["name"] == "save_note"
