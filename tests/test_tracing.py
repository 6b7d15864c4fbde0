"""rampart_otel.setup(): one call traces an agent — provider, exporter, the instrumentations
of the libraries present — says what it did, and flushes at exit. Each agent runs in a
process of its own, as a real one would (the global tracer provider is set once)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from otlp_sink import RunningSink

from rampart_otel import score_files
from rampart_otel.errors import UsageError
from rampart_otel.reading import ReadStats, agent_runs
from rampart_otel.tracing import JsonLinesFileExporter, _traces_url, setup

REPO = Path(__file__).resolve().parents[1]


def run_agent(code: str, tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "agent.py"
    script.write_text(textwrap.dedent(code), encoding="utf-8")
    return subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), **env},
    )


SQL_TOOL = """
    import sqlite3

    from opentelemetry import trace

    import rampart_otel

    tracing = rampart_otel.setup({where}, service_name="notes-agent")
    tracer = trace.get_tracer("agent")
    db = sqlite3.connect(":memory:")
    agent = {{"gen_ai.operation.name": "invoke_agent"}}
    tool = {{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "run_sql"}}
    with tracer.start_as_current_span("invoke_agent notes", attributes=agent):
        with tracer.start_as_current_span("execute_tool run_sql", attributes=tool):
            db.cursor().execute("CREATE TABLE notes (text TEXT)")
    print(sorted(item.library for item in tracing.instrumented))
"""


def test_a_file_gets_every_span_and_says_what_was_instrumented(tmp_path: Path) -> None:
    done = run_agent(SQL_TOOL.format(where='file="run.jsonl"'), tmp_path)
    assert done.returncode == 0, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("rampart-otel: tracing to run.jsonl; instrumented: ")
    assert "sqlite3 (cursors only: Connection.execute is not traced)" in line
    assert line.endswith("; model content capture on")
    libraries = eval(done.stdout)  # the returned Tracing says the same
    assert {"sqlite3", "requests", "httpx", "openai"} <= set(libraries)
    (run,) = agent_runs(tmp_path / "run.jsonl", ReadStats())
    assert run.service == "notes-agent"
    assert [(e.kind, e.details.get("operation")) for e in run.side_effects] == [
        ("db_query", "CREATE")
    ]


def test_an_endpoint_gets_the_batched_spans_at_exit(tmp_path: Path) -> None:
    sink = RunningSink()
    try:
        code = SQL_TOOL.format(where=f'endpoint="{sink.sink.http_url}"')
        done = run_agent(code, tmp_path)
        assert done.returncode == 0, done.stderr
        assert f"tracing to {sink.sink.http_url}/v1/traces;" in done.stderr
        names = [span.name for _, _, span in sink.sink.spans()]
        assert {"invoke_agent notes", "execute_tool run_sql"} <= set(names)
        assert any("CREATE" in name for name in names), names  # the sqlite3 cursor's span
    finally:
        sink.stop()


def test_the_environment_names_the_file(tmp_path: Path) -> None:
    code = "import rampart_otel\nrampart_otel.setup(instrument=False)\n"
    done = run_agent(code, tmp_path, RAMPART_OTEL_FILE="from-env.jsonl")
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith("rampart-otel: tracing to from-env.jsonl; instrumented: nothing")
    assert (tmp_path / "from-env.jsonl").exists()


def test_disabled_instrumentations_are_left_alone(tmp_path: Path) -> None:
    code = "import rampart_otel\nrampart_otel.setup(file='t.jsonl')\n"
    done = run_agent(code, tmp_path, OTEL_PYTHON_DISABLED_INSTRUMENTATIONS="sqlite3,requests")
    assert done.returncode == 0, done.stderr
    listed = done.stderr.split("instrumented: ", 1)[1]
    assert "sqlite3" not in listed and "requests" not in listed
    assert "httpx" in listed


def test_nowhere_to_send_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "RAMPART_OTEL_FILE",
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    ):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(UsageError, match=r"^setup\(\): where should spans go\? file="):
        setup()
    with pytest.raises(UsageError, match="not both"):
        setup(file="a.jsonl", endpoint="http://127.0.0.1:4318")
    with pytest.raises(UsageError, match="is not an http"):
        _traces_url("127.0.0.1:4318")


def test_an_unwritable_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=rf"^setup\(\): {tmp_path}: Is a directory$"):
        JsonLinesFileExporter(tmp_path)


def test_an_endpoint_without_a_path_gets_the_traces_path() -> None:
    assert _traces_url("http://127.0.0.1:4318") == "http://127.0.0.1:4318/v1/traces"
    assert _traces_url("http://h:1/") == "http://h:1/v1/traces"
    assert _traces_url("https://h/otlp/v1/traces") == "https://h/otlp/v1/traces"


def test_the_file_is_otlp_json_lines_that_score_reads(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text("", encoding="utf-8")
    exporter = JsonLinesFileExporter(path)
    provider = TracerProvider(shutdown_on_exit=False)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("t")
    with tracer.start_as_current_span("invoke_agent a"), tracer.start_as_current_span("child"):
        pass
    provider.shutdown()
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2  # one request per span, written as it ended
    assert '"traceId":"' in lines[0] and "=" not in lines[0].split('"traceId":"')[1][:32]
    (result,) = score_files(path, "builtin:consumption")[:1]
    assert result.run_id
