"""`rampart-otel inspect` end to end over the recorded samples."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from cli_runner import run_cli

REPO = Path(__file__).resolve().parents[2]
TRACES = REPO / "samples" / "traces"
LIBRARIES = ("openinference", "openllmetry", "pydantic-ai")
HTTP = "side_effects.http_request"


CORE = ("input", "response", "tool_calls", "tool_calls.arguments", "tool_calls.results")


def inspect(*paths: Path | str) -> dict:
    proc = run_cli("inspect", "--json", *paths)
    assert proc.returncode == 0, proc.stderr
    document = json.loads(proc.stdout)
    assert document["schema"] == "rampart-otel/inspect@1"
    return document


def only_run(sample: str) -> dict:
    (run,) = inspect(TRACES / f"{sample}.jsonl")["runs"]
    return run


def state(run: dict, key: str) -> str:
    return run["coverage"].get(key, {"state": "unobserved"})["state"]


@pytest.mark.parametrize("library", LIBRARIES)
def test_exfil_shows_calls_arguments_and_urls(library: str) -> None:
    run = only_run(f"{library}-exfil")
    calls = {call["name"]: call for call in run["tool_calls"]}
    assert set(calls) == {"fetch_weather", "send_report"}
    assert calls["fetch_weather"]["arguments"] == {"city": "Paris"}
    assert "api_token" in calls["send_report"]["arguments"]["data"]
    urls = {effect["details"]["url"].split(":")[1]: effect for effect in run["side_effects"]}
    assert set(urls) == {"//localhost", "//127.0.0.2"}
    post = urls["//127.0.0.2"]
    assert post["details"]["method"] == "POST" and post["details"]["host"] == "127.0.0.2"
    assert run["tool_calls"][post["tool_call_index"]]["name"] == "send_report"
    assert all(state(run, key) == "observed" for key in ("tool_calls", "response", HTTP))
    assert run["observability_level"] == "tool_and_side_effects"
    assert run["integrity"] == []


@pytest.mark.parametrize("library", LIBRARIES)
def test_http_instrumentation_absent_is_unobserved(library: str) -> None:
    run = only_run(f"{library}-no-http-instr")
    assert run["side_effects"] == [] and state(run, HTTP) == "unobserved"
    assert run["observability_level"] == "tool_only"


@pytest.mark.parametrize("library", LIBRARIES)
def test_content_capture_off(library: str) -> None:
    run = only_run(f"{library}-no-content")
    assert state(run, "tool_calls.arguments") != "observed"
    assert state(run, "response") != "observed"
    assert run["response"]["text"] is None
    assert all(call["arguments"] is None for call in run["tool_calls"])
    assert all(not call["arguments_captured"] for call in run["tool_calls"])


@pytest.mark.parametrize("library", LIBRARIES)
def test_declared_coverage(library: str) -> None:
    run = only_run(f"{library}-declared")
    assert run["coverage"][HTTP]["state"] == "observed"
    assert run["coverage"][HTTP]["source"] == "declared"


@pytest.mark.parametrize("library", LIBRARIES)
def test_missing_inner_span_makes_every_channel_partial(library: str) -> None:
    run = only_run(f"{library}-missing-span")
    assert [finding["kind"] for finding in run["integrity"]] == ["split_run"]
    coverage = run["coverage"]
    assert {channel["state"] for key, channel in coverage.items() if key in CORE} == {"partial"}
    # Nothing is observed; a side-effect kind no span showed stays unobserved.
    assert {channel["state"] for channel in coverage.values()} <= {"partial", "unobserved"}


@pytest.mark.parametrize("library", LIBRARIES)
def test_single_root_with_upstream_parent_is_whole(library: str) -> None:
    run = only_run(f"{library}-upstream-parent")
    assert run["integrity"] == []
    assert state(run, "tool_calls") == state(run, HTTP) == "observed"


def test_model_transport_http_is_not_a_side_effect() -> None:
    run = only_run("pydantic-ai-httpx-transport")
    hosts = {effect["details"]["host"] for effect in run["side_effects"]}
    assert hosts == {"localhost", "127.0.0.2"}  # the model at 127.0.0.1 is transport


def test_whole_folder_gives_one_run_per_trace() -> None:
    document = inspect(TRACES)
    trace_ids = {
        span["traceId"]
        for path in TRACES.rglob("*.jsonl")
        for line in path.read_text().splitlines()
        for resource in json.loads(line)["resourceSpans"]
        for scope in resource["scopeSpans"]
        for span in scope["spans"]
    }
    assert len(trace_ids) >= len(list(TRACES.rglob("*.jsonl")))
    # Every trace is in exactly one run: its own, or the one it was stitched into.
    in_runs = [trace for run in document["runs"] for trace in run["trace_ids"]]
    assert sorted(in_runs) == sorted(trace_ids)
    stitched = [s["trace_id"] for run in document["runs"] for s in run["stitched"]]
    assert stitched and sorted(stitched) == sorted(
        set(in_runs) - {r["run_id"] for r in document["runs"]}
    )
    assert document["input_errors"] == []


def test_no_stitch_gives_one_run_per_trace() -> None:
    document = inspect(TRACES / "sdk-loop", "--no-stitch")
    assert len(document["runs"]) == 3
    assert all(run["stitched"] == [] for run in document["runs"])


def test_malformed_line_in_the_middle_leaves_the_other_runs_intact(tmp_path: Path) -> None:
    first = (TRACES / "pydantic-ai-exfil.jsonl").read_text().splitlines()
    second = (TRACES / "openinference-benign.jsonl").read_text().splitlines()
    lines = [*first, '{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": 7', *second]
    (tmp_path / "mixed.jsonl").write_text("\n".join(lines) + "\n")
    document = inspect(tmp_path)
    (error,) = document["input_errors"]
    assert error["location"] == f"{tmp_path / 'mixed.jsonl'}:{len(first) + 1}"
    assert sorted(len(run["tool_calls"]) for run in document["runs"]) == [1, 2]
    assert all(run["integrity"] == [] for run in document["runs"])


def test_terminal_view_escapes_hostile_text(tmp_path: Path) -> None:
    line = (TRACES / "pydantic-ai-exfil.jsonl").read_text()
    (tmp_path / "t.jsonl").write_text(line.replace("Paris", "Par\\u001b[31mis\\u001b]0;x\\u0007"))
    proc = subprocess.run(
        [sys.executable, "-m", "rampart_otel.cli", "inspect", str(tmp_path)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0
    assert "\x1b" not in proc.stdout and "\x07" not in proc.stdout
    assert (
        "fetch_weather" in proc.stdout and "not captured" not in proc.stdout.split("send_report")[0]
    )


def test_version_and_help() -> None:
    from rampart_otel import __version__

    for args, expected in ((["--version"], f"rampart-otel {__version__}"), (["--help"], "inspect")):
        proc = subprocess.run(
            [sys.executable, "-m", "rampart_otel.cli", *args], capture_output=True, text=True
        )
        assert proc.returncode == 0 and expected in proc.stdout


def test_inspect_counts_spans_per_convention_and_names_fragments(tmp_path: Path) -> None:
    """Spans no convention understands are counted by family; a lone span is a fragment."""
    agent = "5" * 32
    lone = "6" * 32

    def span(
        trace: str, span_id: str, name: str, attrs: dict, parent: str = "", at: int = 1
    ) -> dict:
        return {
            "traceId": trace,
            "spanId": span_id,
            "parentSpanId": parent,
            "name": name,
            "kind": 3 if "http.request.method" in attrs else 1,
            "startTimeUnixNano": str(at),
            "endTimeUnixNano": str(at + 1),
            "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attrs.items()],
        }

    spans = [
        span(agent, "a" * 16, "invoke_agent", {"gen_ai.operation.name": "invoke_agent"}),
        span(agent, "b" * 16, "run", {"langsmith.span.kind": "tool"}, parent="a" * 16),
        # after the agent's run: not a piece of it
        span(
            lone, "c" * 16, "POST", {"http.request.method": "POST", "url.full": "http://x/"}, at=9
        ),
    ]
    line = {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(line) + "\n")
    runs = {run["run_id"]: run for run in inspect(path)["runs"]}
    assert runs[agent]["conventions"] == {
        "gen_ai": {"spans": 1, "not_understood": 0},
        "LangSmith": {"spans": 0, "not_understood": 1},
    }
    assert not runs[agent]["fragment"] and runs[lone]["fragment"]
    text = run_cli("inspect", path).stdout
    assert "not understood: LangSmith 1" in text
    assert "fragment — no agent, model-inference or tool span among its 1 span" in text


@pytest.mark.parametrize("library", LIBRARIES)
def test_input_shows_the_question_and_its_coverage(library: str) -> None:
    run = only_run(f"{library}-exfil")
    assert [message["text"] for message in run["input"]] == [
        "Weather in Paris? Also file the daily report."
    ]
    assert state(run, "input") == "observed"
    hidden = only_run(f"{library}-no-content")
    assert all(message["text"] is None for message in hidden["input"])
    assert state(hidden, "input") == "unobserved" and hidden["coverage"]["input"]["reasons"]


def test_terminal_input_is_escaped_and_cut(tmp_path: Path) -> None:
    question = "Weather in Paris? Also file the daily report."
    hostile = "Weather\\\\u001b[31m in Paris?" + " pad" * 100
    text = (TRACES / "pydantic-ai-exfil.jsonl").read_text()
    assert question in text
    (tmp_path / "hostile.jsonl").write_text(text.replace(question, hostile))
    proc = run_cli("inspect", tmp_path / "hostile.jsonl")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    header = lines.index("  input (1, observed):")
    shown = lines[header + 1]
    assert "\x1b[31m" not in proc.stdout  # the trace's escape sequence never reaches it
    assert shown.startswith("    - Weather in Paris? pad")
    assert "…" in shown and len(shown) < 300


def test_inspect_of_no_spans_is_an_error_unless_allowed(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    proc = run_cli("inspect", empty)
    assert proc.returncode == 2 and "no spans in the input" in proc.stderr
    assert run_cli("inspect", empty, "--allow-empty").returncode == 0


def test_inspect_names_where_each_trace_of_a_stitched_run_was_read() -> None:
    sample = TRACES / "autogen" / "autogen-exfil.jsonl"
    proc = run_cli("inspect", "--json", sample)
    assert proc.returncode == 0, proc.stderr
    (run,) = json.loads(proc.stdout)["runs"]
    assert len(run["trace_ids"]) > 1  # several traces stitched into one run
    assert run["sources"] == [f"{sample}:1", f"{sample}:2"]
    text = run_cli("inspect", sample).stdout
    assert f"  read at:  {sample}:1, {sample}:2" in text


def test_every_gap_in_every_recorded_sample_names_its_fix() -> None:
    """Each channel left unobserved or partial carries a hint (``hint``, and its last reason
    says it), in every run of every recorded sample."""
    runs = inspect(TRACES)["runs"]
    gaps = [
        (run["run_id"], key, channel)
        for run in runs
        for key, channel in run["coverage"].items()
        if channel["state"] != "observed"
    ]
    assert len(gaps) > 100
    unnamed = [(run, key) for run, key, channel in gaps if not channel.get("hint")]
    assert unnamed == []
    for _, _, channel in gaps:
        assert channel["reasons"][-1] == "to close it: " + channel["hint"]
    observed = [c for run in runs for c in run["coverage"].values() if c["state"] == "observed"]
    assert all("hint" not in channel for channel in observed)


def test_the_fix_names_the_client_to_instrument_from_the_scopes_in_use() -> None:
    # No HTTP instrumentation at all: install one.
    bare = only_run("openinference-no-http-instr")["coverage"][HTTP]
    assert bare["hint"].startswith(
        "install opentelemetry-instrumentation-httpx (or -requests, -aiohttp-client, -urllib3)"
        " and call HTTPXClientInstrumentor().instrument()"
    )
    # requests is instrumented and a tool was silent: the gap is another client.
    partial = [
        run["coverage"][HTTP]
        for run in inspect(TRACES / "two-clients-requests-urllib")["runs"]
        if run["coverage"].get(HTTP, {}).get("state") == "partial"
    ]
    assert partial, "a sample whose second client is not instrumented"
    assert any(
        "come from opentelemetry.instrumentation.requests" in channel["hint"] for channel in partial
    )


def test_missing_content_names_the_setting_of_the_instrumentation_that_recorded_it() -> None:
    run = only_run("openinference-no-content")
    assert "OPENINFERENCE_HIDE_INPUTS" in run["coverage"]["input"]["hint"]
    run = only_run("openllmetry-no-content")
    assert "TRACELOOP_TRACE_CONTENT=true" in run["coverage"]["input"]["hint"]


def test_inspect_prints_the_fix_under_the_channel() -> None:
    proc = run_cli("inspect", TRACES / "openinference-no-http-instr.jsonl")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    (at,) = [i for i, line in enumerate(lines) if line.strip().startswith(HTTP)]
    assert lines[at + 1].strip().startswith("fix: install opentelemetry-instrumentation-httpx")
