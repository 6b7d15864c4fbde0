"""The conventions' labels, in one place: a ``Convention``'s name, and what its reports say
they were read by (``SpanReport.convention``, ``ToolCall.conventions``,
``SideEffect.convention``, the report's ``conventions`` counts). A new family adds its label
here (``tests/conventions/test_interface.py`` checks every registered one is).
"""

from __future__ import annotations

# The families (``registry.CONVENTIONS``).
GEN_AI = "gen_ai"
OPENINFERENCE = "openinference"
OPENLLMETRY = "openllmetry"
MCP = "mcp"
VERCEL_AI = "vercel_ai"
ADK = "adk"
STRANDS = "strands"
OPENLIT = "openlit"
CLAUDE_CODE = "claude_code"
ANTHROPIC = "anthropic"
LITELLM = "litellm"
LANGFUSE = "langfuse"
MLFLOW = "mlflow"
MASTRA = "mastra"
A2A = "a2a"  # Agent2Agent: a call handed to a remote agent
WATCH = "watch"  # rampart_otel.watch's spans: connections and file writes
SEMCONV = "semconv"  # the general side-effect conventions, as one reader

# The side effects the general conventions record, each by its own convention's label.
DB_SEMCONV = "db"
MESSAGING_SEMCONV = "messaging"
RPC_SEMCONV = "rpc"
HTTP_SEMCONV = "http"
PROCESS_SEMCONV = "process"
RAMPART_SIDE_EFFECT = "rampart"  # ``rampart.side_effect.*``: declared by the trace itself

FAMILIES = (
    GEN_AI,
    OPENINFERENCE,
    OPENLLMETRY,
    MCP,
    VERCEL_AI,
    ADK,
    STRANDS,
    OPENLIT,
    CLAUDE_CODE,
    ANTHROPIC,
    LITELLM,
    LANGFUSE,
    MLFLOW,
    MASTRA,
    A2A,
    WATCH,
    SEMCONV,
)
