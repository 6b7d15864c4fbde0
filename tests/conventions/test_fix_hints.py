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
