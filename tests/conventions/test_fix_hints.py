"""The fix-hint tables: what closes each gap, as data, and the docs generated from it."""

from __future__ import annotations

import pathlib

from rampart_otel.conventions.fix_hints import (
    clients_in_use,
    clients_of,
    content_settings,
    markdown_table,
)
from rampart_otel.wording import fix_hint

DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs" / "coverage.md"


def test_the_docs_tables_are_the_code_tables() -> None:
    text = DOCS.read_text(encoding="utf-8")
    between = text.split("<!-- fix-hints -->\n", 1)[1].split("\n<!-- /fix-hints -->", 1)[0]
    assert between == markdown_table()


def test_every_standard_kind_has_a_client_to_name() -> None:
    from rampart_otel.vocabulary import STANDARD_KINDS

    assert [kind for kind in STANDARD_KINDS if not clients_of(kind)] == []


def test_the_scopes_in_use_say_which_client_is_instrumented() -> None:
    names = {"opentelemetry.instrumentation.requests", "openinference.instrumentation.openai"}
    assert [c.library for c in clients_in_use("http_request", names)] == ["requests"]
    assert clients_in_use("db_query", names) == []
    hint = fix_hint("side_effects.http_request", names)
    assert hint is not None and "come from opentelemetry.instrumentation.requests" in hint
    assert "opentelemetry-instrumentation-httpx" in hint  # another client to instrument


def test_no_http_scope_names_the_install_line() -> None:
    assert fix_hint("side_effects.http_request", {"pydantic-ai"}) == (
        "install opentelemetry-instrumentation-httpx (or -requests, -aiohttp-client, -urllib3) "
        "and call HTTPXClientInstrumentor().instrument(), or declare the tools (tools: in the "
        "policy, or rampart_otel.declare in the agent)"
    )


def test_content_settings_follow_the_model_spans_instrumentation() -> None:
    def named(*names: str) -> list[str]:
        return [row.instrumentation for row in content_settings(names)]

    assert named("openinference.instrumentation.openai") == ["OpenInference"]
    assert named("opentelemetry.instrumentation.openai.v1") == ["OpenLLMetry"]
    assert named("opentelemetry.instrumentation.openai_v2") == [
        "OpenTelemetry GenAI instrumentations"
    ]
    # An I/O client's scope is no content recorder, whatever its prefix.
    assert named("opentelemetry.instrumentation.requests") == []
    assert named("aio") == []  # "ai" is the Vercel AI SDK's scope, not any prefix
    hint = fix_hint("input", {"opentelemetry.instrumentation.openai_v2"})
    # openai-v2 2.x ignores the old value `true` under the latest conventions (recorded).
    assert hint is not None and "CAPTURE_MESSAGE_CONTENT=SPAN_ONLY" in hint
    assert "gen_ai_latest_experimental" in hint


def test_a_silent_sqlite3_tool_with_sqlite3_instrumented_is_told_about_connection_execute() -> None:
    """The user already called SQLite3Instrumentor().instrument(): its spans are in the run,
    and a tool's SQL still did not show. Repeating "instrument sqlite3" does not fit; what
    the instrumentation leaves out (Connection.execute) does, recorded from the library."""
    import sqlite3

    from opentelemetry.instrumentation.sqlite3 import SQLite3Instrumentor
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from rampart_otel.api import span_runs
    from rampart_otel.normalize import normalize

    exporter = InMemorySpanExporter()
    provider = TracerProvider(shutdown_on_exit=False)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("agent")
    SQLite3Instrumentor().instrument(tracer_provider=provider)
    try:
        db = sqlite3.connect(":memory:")
        agent = {"gen_ai.operation.name": "invoke_agent"}
        with tracer.start_as_current_span("invoke_agent notes", attributes=agent):
            for name, run in (
                ("make_table", lambda: db.cursor().execute("CREATE TABLE notes (t TEXT)")),
                ("drop_table", lambda: db.execute("DROP TABLE notes")),  # not traced
            ):
                tool = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name}
                with tracer.start_as_current_span(f"execute_tool {name}", attributes=tool):
                    run()
    finally:
        SQLite3Instrumentor().uninstrument()
    (run,) = span_runs(exporter.get_finished_spans())
    channel = normalize(run).coverage.get("side_effects.db_query")
    assert channel.state.value == "partial"
    assert channel.hint is not None
    assert "come from opentelemetry.instrumentation.sqlite3: SQLite3Instrumentor traces" in (
        channel.hint
    )
    assert "Connection.execute, executemany and executescript are not traced" in channel.hint
    # With no sqlite3 span at all, the install line says it too.
    assert "Connection.execute" in (fix_hint("side_effects.db_query", set()) or "")
