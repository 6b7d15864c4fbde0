"""The weather tools as an MCP server (``MCPServer`` of the ``mcp`` SDK 2.x) on stdio.

Started by ``agent.py`` as its own process. The SDK traces every inbound request itself
(its ``OpenTelemetryMiddleware``, on by default, through the global tracer provider) and
continues the trace context the client sends in the request's ``_meta``; this process only
sets up the provider with the OTLP exporter and instruments the tools' HTTP and SQL.
"""

from __future__ import annotations

import os

from samples.frameworks import tools

SERVER_NAME = "weather-tools"
SERVICE = "weather-mcp-server"
STATIONS_URI = "weather://stations"


def main() -> int:
    # SAMPLE_MCP_SERVER_UNTRACED (the mcp-stdio sample's server-untraced case): a server
    # process with no tracing at all, no provider and no instrumentation.
    traced = not os.environ.get("SAMPLE_MCP_SERVER_UNTRACED")
    provider = tools.tracer_provider(**{"service.name": SERVICE}) if traced else None
    if traced:
        tools.instrument_clients()

    from mcp.server.mcpserver import MCPServer

    server = MCPServer(SERVER_NAME)
    for function in tools.TOOLS:
        server.tool()(function)

    @server.resource(STATIONS_URI, description="Cities the weather service covers.")
    def stations() -> str:
        """Cities the weather service covers."""
        return "Paris, London, Tokyo"

    server.run("stdio")
    if provider is not None:
        tools.shutdown(provider)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
