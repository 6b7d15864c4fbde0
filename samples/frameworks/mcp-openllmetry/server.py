"""The weather tools as an MCP server (FastMCP of the ``mcp`` SDK 1.x) on stdio.

Started by ``agent.py`` as its own process. It traces like the client: the global provider
with the OTLP exporter, OpenLLMetry's ``McpInstrumentor`` (which picks up the trace context
the client sends in each request's ``_meta``), and the tools' HTTP and SQL instrumented.
"""

from __future__ import annotations

from samples.frameworks import tools

SERVER_NAME = "weather-tools"
SERVICE = "weather-mcp-server"
STATIONS_URI = "weather://stations"


def main() -> int:
    provider = tools.tracer_provider(**{"service.name": SERVICE})
    from opentelemetry.instrumentation.mcp import McpInstrumentor

    McpInstrumentor().instrument()
    tools.instrument_clients()

    from mcp.server.fastmcp import FastMCP

    server = FastMCP(SERVER_NAME)
    for function in tools.TOOLS:
        server.tool()(function)

    @server.resource(STATIONS_URI, description="Cities the weather service covers.")
    def stations() -> str:
        """Cities the weather service covers."""
        return "Paris, London, Tokyo"

    server.run("stdio")
    tools.shutdown(provider)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
