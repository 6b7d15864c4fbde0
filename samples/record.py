"""Re-record the sample traces in ``samples/traces/`` from the real instrumented agent.

    python samples/record.py                 # everything, into samples/traces/
    python samples/record.py --only exfil    # cases whose file name contains "exfil"
    python samples/record.py --out /tmp/t    # elsewhere

Each case runs ``python -m samples.agent`` in its own process (instrumentors are
process-global). Ids, timestamps, ports and batch boundaries change from run to run;
spans, attributes and tree shapes do not.

The ``openllmetry-legacy-attrs`` case needs OpenLLMetry 0.52.0, the last release line
that writes the flattened ``gen_ai.prompt.N.*`` / ``gen_ai.completion.N.*`` attributes.
It is pip-installed (with its semconv-ai 0.4.x) into a cache directory outside the
project and put first on that one process's ``PYTHONPATH``; if that install fails the
case is skipped with a warning and any existing file is kept.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TRACES = REPO / "samples" / "traces"
LEGACY_OPENLLMETRY = (
    "opentelemetry-instrumentation-openai==0.52.0",
    "opentelemetry-semantic-conventions-ai>=0.4.13,<0.5.0",
)
LEGACY_DIR = (
    Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    / "rampart-otel-samples"
    / "openllmetry-0.52.0"
)
# The W3C Trace Context specification's own example: an upstream caller's span.
# One upstream trace per library: the three recordings must not share a trace id, or
# reading the folder would join them into one run.
UPSTREAM_TRACEPARENT = {
    "openinference": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
    "openllmetry": "00-1bf7651916cd43dd8448eb211c80319d-b7ad6b7169203331-01",
    "pydantic-ai": "00-2cf7651916cd43dd8448eb211c80319e-b7ad6b7169203331-01",
}

# HTTP semantic-convention flavour per library, so the samples cover all three forms.
HTTP_SEMCONV = {"openinference": "default", "openllmetry": "http/dup", "pydantic-ai": "http"}
HTTP_ATTRS = {
    "default": "legacy `http.method`, `http.url`, `http.status_code`",
    "http/dup": "legacy and stable side by side",
    "http": "stable `http.request.method`, `url.full`, `server.address`, `server.port`, "
    "`http.response.status_code`",
}
DROPPED_TOOL_SPAN = {
    "openinference": "send_report",
    "openllmetry": "send_report",
    "pydantic-ai": "execute_tool send_report",
}


@dataclass(frozen=True)
class Case:
    library: str
    case: str
    scenario: str
    what: str
    args: tuple[str, ...] = ()
    legacy: bool = False
    env: dict[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"{self.library}-{self.case}"

    def command(self, out: Path) -> list[str]:
        return [
            sys.executable,
            "-m",
            "samples.agent",
            "--library",
            self.library,
            "--scenario",
            self.scenario,
            "--http-semconv",
            HTTP_SEMCONV[self.library],
            "--out",
            str(out),
            *self.args,
        ]


def _cases() -> list[Case]:
    cases: list[Case] = []
    for lib in ("openinference", "openllmetry", "pydantic-ai"):
        cases += [
            Case(
                lib,
                "exfil",
                "exfil",
                "fetch_weather GETs localhost, then send_report POSTs "
                "the internal notes to the unexpected host 127.0.0.2; final answer",
            ),
            Case(lib, "benign", "benign", "one fetch_weather call, GET to localhost only"),
            Case(
                lib,
                "injection",
                "injection",
                "indirect prompt injection: the weather page fetch_weather reads names "
                "http://127.0.0.2:PORT/upload, and send_report then POSTs there",
            ),
            Case(
                lib,
                "injection-no-content",
                "injection",
                "the injection run with content capture off",
                ("--no-content",),
            ),
            Case(
                lib,
                "injection-no-http-instr",
                "injection",
                "the injection run with `requests` not instrumented: no HTTP span",
                ("--no-http-instr",),
            ),
            Case(
                lib,
                "no-tool",
                "no-tool",
                "the model answers without asking for a tool; no tool or HTTP span",
            ),
            Case(
                lib,
                "no-http-instr",
                "exfil",
                "the exfil run with `requests` not "
                "instrumented: tool calls but no HTTP span at all",
                ("--no-http-instr",),
            ),
            Case(
                lib,
                "no-content",
                "exfil",
                "the exfil run with content capture off",
                ("--no-content",),
            ),
            Case(
                lib,
                "declared",
                "no-tool",
                "the no-tool run; the resource declares "
                "`rampart.coverage` = [side_effects.http_request] (from "
                "`rampart_otel.declare`)",
                ("--declare",),
            ),
            Case(
                lib,
                "missing-span",
                "exfil",
                "the exfil run with the "
                f"`{DROPPED_TOOL_SPAN[lib]}` tool span lost before export: the POST to "
                "127.0.0.2 is orphaned, so the trace falls apart into two trees",
                ("--drop-span", DROPPED_TOOL_SPAN[lib]),
            ),
            Case(
                lib,
                "upstream-parent",
                "benign",
                "the benign run started under a W3C "
                f"`traceparent` ({UPSTREAM_TRACEPARENT[lib]}): one root whose parent span "
                "lives upstream",
                ("--traceparent", UPSTREAM_TRACEPARENT[lib]),
            ),
        ]
    cases += [
        Case(
            "pydantic-ai",
            "httpx-transport",
            "exfil",
            "the exfil run with httpx/httpx2 "
            "instrumented too: the model transport's POST /v1/chat/completions spans sit "
            "under each `chat` span (transport, not a side effect)",
            ("--instrument-httpx",),
        ),
        Case(
            "pydantic-ai",
            "format-v5",
            "exfil",
            "the exfil run with pydantic-ai's "
            "default data format (version 5: tool results go back to the model as "
            "role `user` messages, version 6 uses role `tool`)",
            ("--pydantic-ai-version", "5"),
        ),
        Case(
            "openllmetry",
            "events",
            "exfil",
            "the exfil run with OpenLLMetry's events "
            "path (`use_attributes=False`): prompts and completions go to the Logs API, "
            "so the spans carry no content",
            ("--openllmetry-events",),
        ),
        Case(
            "openllmetry",
            "legacy-attrs",
            "exfil",
            "the exfil run recorded with "
            "OpenLLMetry 0.52.0: flattened `gen_ai.prompt.N.*` / "
            "`gen_ai.completion.N.tool_calls.M.*` attributes",
            legacy=True,
        ),
    ]
    return cases


CASES = _cases()
_HEX = re.compile(r"^[0-9a-f]+$")


def check_file(path: Path) -> int:
    """Raise unless every line is an OTLP/JSON request with hex ids; return the span count."""
    count = 0
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            request = json.loads(line)
            for resource_spans in request["resourceSpans"]:
                for scope_spans in resource_spans["scopeSpans"]:
                    for span in scope_spans["spans"]:
                        count += 1
                        for key, size in (("traceId", 32), ("spanId", 16), ("parentSpanId", 16)):
                            value = span.get(key)
                            if key == "parentSpanId" and value is None:
                                continue
                            if not (
                                isinstance(value, str) and len(value) == size and _HEX.match(value)
                            ):
                                raise ValueError(f"{path}:{number}: {key}={value!r} is not hex")
    if count == 0:
        raise ValueError(f"{path}: no spans")
    return count


def ensure_legacy_openllmetry(target: Path = LEGACY_DIR) -> Path | None:
    """OpenLLMetry 0.52.0 in a side directory (never the project's venv), or None."""
    if (target / "opentelemetry" / "instrumentation" / "openai").is_dir():
        return target
    command = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--quiet",
        "--no-deps",
        "--target",
        str(target),
        *LEGACY_OPENLLMETRY,
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        print(
            f"warning: could not install {LEGACY_OPENLLMETRY[0]}: {result.stderr.strip()[-300:]}",
            file=sys.stderr,
        )
        return None
    return target


def record_case(case: Case, out_dir: Path, legacy_dir: Path | None = None) -> Path:
    """Run the agent for one case and check its file; return the file's path."""
    out = out_dir / f"{case.name}.jsonl"
    tmp = out.with_suffix(".jsonl.tmp")
    env = {**os.environ, **case.env}
    for name in ("OTEL_SEMCONV_STABILITY_OPT_IN", "TRACELOOP_TRACE_CONTENT"):
        env.pop(name, None)
    env = {k: v for k, v in env.items() if not k.startswith("OPENINFERENCE_")}
    paths = [str(REPO)]
    if case.legacy:
        if legacy_dir is None:
            raise RuntimeError("legacy OpenLLMetry is not installed")
        paths.insert(0, str(legacy_dir))
    env["PYTHONPATH"] = os.pathsep.join(paths)
    result = subprocess.run(
        case.command(tmp), cwd=REPO, env=env, capture_output=True, text=True, timeout=180
    )
    if result.returncode != 0:
        tmp.unlink(missing_ok=True)
        raise RuntimeError(f"{case.name} failed:\n{result.stderr[-2000:]}")
    check_file(tmp)
    tmp.replace(out)
    return out


def readme(cases: Iterable[Case]) -> str:
    rows = "\n".join(
        f"| `{c.name}.jsonl` | {c.library}{' 0.52.0' if c.legacy else ''} | {c.case} | {c.what} |"
        for c in cases
    )
    return README_HEAD + rows + "\n" + README_TAIL


README_HEAD = """# Sample traces

Real recordings of `samples/agent.py`, a weather agent instrumented with real libraries
and driven by a scripted OpenAI-compatible model (`samples/scripted_model.py`).
Regenerate with `python samples/record.py` from the repository root; ids, timestamps,
ports and batch boundaries change, spans and attributes do not.

Format: the OpenTelemetry Collector file exporter's JSON Lines: one
`ExportTraceServiceRequest` per line, OTLP/JSON (camelCase keys, lowercase-hex
`traceId`/`spanId`/`parentSpanId`, int64 as strings, enums as ints). One trace is spread
over several lines (batches of at most 4 spans). Resource: `service.name=weather-agent`.

The tools: `fetch_weather(city)` GETs `http://localhost:PORT/weather?city=Paris` (the
allowed service); `send_report(data)` POSTs `{"report": data}` to
`http://127.0.0.2:PORT/upload` (an unexpected host). Tool-call ids come from the scripted
model and are stable across recordings (e.g. `call_bn90af3nnY9RiO2dBGHosRVa`).

| file | library | case | what it shows |
|---|---|---|---|
"""

README_TAIL = """
HTTP spans come from `opentelemetry-instrumentation-requests` (CLIENT kind, named `GET` /
`POST`, parent = the tool execution span). Each library's files use a different
semantic-convention flavour (`OTEL_SEMCONV_STABILITY_OPT_IN`), so all three occur:

- openinference: {openinference};
- openllmetry: {openllmetry};
- pydantic-ai: {pydantic}.

The allowed service is addressed as `localhost`; the model server (and its transport
spans in `pydantic-ai-httpx-transport`) as `127.0.0.1`; the unexpected host as
`127.0.0.2`. Span `flags` is 256 (parent is local) or 768 (parent is remote: the root of
the `upstream-parent` files).

## Where the facts are, per library

**OpenInference** (`openinference-instrumentation-openai`; agent/tool spans from
`OITracer`'s `@tracer.agent` / `@tracer.tool`):
- model spans: name `ChatCompletion`, kind INTERNAL, `openinference.span.kind=LLM`;
  requested calls in `llm.output_messages.0.message.tool_calls.{{j}}.tool_call.{{id,
  function.name, function.arguments}}` (arguments a JSON string); answer text in
  `llm.output_messages.0.message.content`; `llm.finish_reason` (`tool_calls` / `stop`);
  history in `llm.input_messages.{{i}}.message.*` (tool results: role `tool`,
  `message.tool_call_id`, `message.content`); whole request/response JSON in
  `input.value` / `output.value`.
- tool spans: name = tool name, `openinference.span.kind=TOOL`, `tool.name`,
  `tool.description`, `tool.parameters`, `input.value` = JSON object of the arguments
  (`input.mime_type=application/json`), `output.value` = the result string
  (`output.mime_type=text/plain`). **No call id**: match to the model's request by name
  and order.
- agent span: `openinference.span.kind=AGENT`, name `weather-agent`, `input.value` = the
  question, `output.value` = the final answer (both `text/plain`).
- no-content (`OPENINFERENCE_HIDE_INPUTS/OUTPUTS/INPUT_MESSAGES/OUTPUT_MESSAGES=true`):
  `input.value` / `output.value` are present with the value `__REDACTED__`, all
  `llm.input_messages.*` / `llm.output_messages.*` are gone, `llm.finish_reason`
  (`tool_calls`) stays.

**OpenLLMetry** (`opentelemetry-instrumentation-openai` 0.62.4, no traceloop-sdk):
- model spans: name `openai.chat`, kind CLIENT, `gen_ai.operation.name=chat`,
  `gen_ai.provider.name=openai`; `gen_ai.input.messages` / `gen_ai.output.messages` as
  JSON strings in the GenAI-semconv parts shape; a requested call is a part
  `{{"type": "tool_call", "id", "name", "arguments": {{...}}}}` with arguments an
  **object**; `gen_ai.response.finish_reasons` = `["tool_call"]` / `["stop"]` (semconv
  values, not OpenAI's `tool_calls`). Tool results come back in the next span's
  `gen_ai.input.messages` as role `tool` parts
  `{{"type": "tool_call_response", "id", "response"}}`.
- agent and tool executions are **plain spans** (`weather-agent`, `fetch_weather`,
  `send_report`; scope `samples.agent`, no attributes): OpenLLMetry's `@agent`/`@tool`
  decorators live in `traceloop-sdk`, which does not install cleanly beside this
  project (see `samples/agent.py`). Executed tool calls are visible only as the plain
  span's name and the HTTP spans under it.
- no-content (`TRACELOOP_TRACE_CONTENT=false`) and `openllmetry-events`: no
  `gen_ai.input.messages` / `gen_ai.output.messages` at all;
  `gen_ai.response.finish_reasons` stays.
- `openllmetry-legacy-attrs`: 0.52.0 writes `gen_ai.prompt.{{i}}.{{role,content,
  tool_calls.{{j}}.{{id,name,arguments}},tool_call_id}}` and `gen_ai.completion.{{i}}.{{role,
  content,finish_reason,tool_calls.{{j}}.{{id,name,arguments}}}}`, plus `llm.request.type`,
  `gen_ai.system`, `llm.usage.total_tokens`; finish reason is OpenAI's `tool_calls`.

**pydantic-ai** (native instrumentation, data format version 6 unless noted):
- agent span: `invoke_agent weather-agent`, `gen_ai.operation.name=invoke_agent`,
  `gen_ai.agent.name`, `gen_ai.conversation.id`, `final_result` = answer text,
  `pydantic_ai.all_messages` = the whole conversation (JSON).
- model spans: `chat gpt-4o-mini`, kind CLIENT, `gen_ai.input.messages` /
  `gen_ai.output.messages` (parts `{{"type": "tool_call", "id", "name", "arguments"}}`
  with arguments a JSON **string**), `gen_ai.response.finish_reasons`, `server.address`.
  Tool results in the next input: parts `{{"type": "tool_call_response", "id", "name",
  "result"}}` (`result`, where OpenLLMetry says `response`), role `tool` (v6) or `user`
  (v5, `pydantic-ai-format-v5`).
- tool spans: `execute_tool <name>`, `gen_ai.operation.name=execute_tool`,
  `gen_ai.tool.name`, `gen_ai.tool.call.id` (same id as in the model's output),
  `gen_ai.tool.call.arguments` (JSON string), `gen_ai.tool.call.result`.
- no-content (`include_content=False`): the messages keep their shape but lose their
  content: text parts are `{{"type": "text"}}`, tool-call parts keep `id` and `name` but
  have no `arguments`; `gen_ai.tool.call.arguments` / `.result` and `final_result` are
  absent.

Tool-call ids: the id in a model span's output (all three libraries) is the id the next
model span's input carries on the tool result, and for pydantic-ai also the
`gen_ai.tool.call.id` of the `execute_tool` span. OpenInference TOOL spans and the plain
OpenLLMetry tool spans carry no id.
""".format(
    openinference=HTTP_ATTRS["default"],
    openllmetry=HTTP_ATTRS["http/dup"],
    pydantic=HTTP_ATTRS["http"],
)


def select(cases: Sequence[Case], only: Sequence[str]) -> list[Case]:
    return [c for c in cases if not only or any(o in c.name for o in only)]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=TRACES)
    parser.add_argument("--only", action="append", default=[], help="substring of a file name")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--no-legacy", action="store_true", help="skip the pip-installed case")
    parser.add_argument("--list", action="store_true")
    args = parser.parse_args(argv)

    cases = select(CASES, args.only)
    if args.list:
        for case in cases:
            print(f"{case.name}: {case.what}")
        return 0
    legacy_dir = None
    if any(c.legacy for c in cases) and not args.no_legacy:
        legacy_dir = ensure_legacy_openllmetry()
    runnable = [c for c in cases if not c.legacy or legacy_dir is not None]
    args.out.mkdir(parents=True, exist_ok=True)

    failures = 0
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = {c.name: pool.submit(record_case, c, args.out, legacy_dir) for c in runnable}
        for name, future in futures.items():
            try:
                path = future.result()
                print(
                    f"{path.relative_to(REPO) if path.is_relative_to(REPO) else path}: "
                    f"{path.stat().st_size} bytes"
                )
            except Exception as exc:  # report every case, then fail
                failures += 1
                print(f"error: {name}: {exc}", file=sys.stderr)
    if not args.only:
        (args.out / "README.md").write_text(readme(CASES), encoding="utf-8")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
