"""Frameworks' built-in pseudo-tools: a documented table, applied only to the framework's spans."""

from __future__ import annotations

import pathlib

from span_factory import span

from rampart_otel.conventions.pseudo_tools import markdown_table, pseudo_tool

DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs" / "coverage.md"


def test_the_docs_table_is_the_code_table() -> None:
    text = DOCS.read_text(encoding="utf-8")
    between = text.split("<!-- pseudo-tools -->\n", 1)[1].split("\n<!-- /pseudo-tools -->", 1)[0]
    assert between == markdown_table()


def test_a_pseudo_tool_only_on_its_frameworks_spans() -> None:
    handoff = span("transfer_to_billing", scope="openinference.instrumentation.openai_agents")
    assert pseudo_tool("transfer_to_billing", handoff) is not None
    assert pseudo_tool("transfer_to_billing", span("x", scope="my.own.tracer")) is None
    assert pseudo_tool("final_result", span("x", scope="pydantic-ai")) is not None
    assert pseudo_tool("final_results", span("x", scope="pydantic-ai")) is None
    assert pseudo_tool("final_result", None) is None  # no execution span: nothing to check
