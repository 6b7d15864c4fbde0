"""MCP semconv: tools/call is a tool execution; other client methods are side effects."""

from __future__ import annotations

from span_factory import span

from rampart_otel.conventions import mcp


def test_tools_call_is_an_execution() -> None:
    s = span(
        "tools/call read_file",
        {
            "mcp.method.name": "tools/call",
            "gen_ai.tool.name": "read_file",
            "gen_ai.tool.call.arguments": '{"path": "/etc/passwd"}',
            "gen_ai.tool.call.result": '{"content": [{"type": "text", "text": "root:x"}]}',
            "error.type": "tool_error",
        },
        kind="CLIENT",
    )
    report = mcp.tool_execution(s)
    assert report is not None and report.executed and report.error
    assert report.name == "read_file" and report.arguments == {"path": "/etc/passwd"}
    assert report.result == {"content": [{"type": "text", "text": "root:x"}]}
    assert mcp.side_effect(s) is None


def test_tool_name_from_span_name() -> None:
    report = mcp.tool_execution(span("tools/call search", {"mcp.method.name": "tools/call"}))
    assert report is not None and report.name == "search" and not report.arguments_captured


def test_other_client_methods_are_side_effects() -> None:
    read = span(
        "resources/read",
        {"mcp.method.name": "resources/read", "mcp.resource.uri": "file:///secrets.txt"},
        kind="CLIENT",
    )
    assert mcp.side_effect(read) == (
        "mcp_request",
        {"method": "resources/read", "target": "file:///secrets.txt"},
    )
    prompt = span("prompts/get p", {"mcp.method.name": "prompts/get", "gen_ai.prompt.name": "p"})
    assert mcp.side_effect(prompt) == ("mcp_request", {"method": "prompts/get", "target": "p"})
    assert mcp.tool_execution(read) is None


def test_server_side_is_not_a_side_effect() -> None:
    s = span("resources/read", {"mcp.method.name": "resources/read"}, kind="SERVER")
    assert mcp.side_effect(s) is None
