"""What closes a coverage gap, as data: the instrumentation that records each side-effect
kind's calls, and the setting that turns content capture on for each instrumentation that
records model and tool spans.

A run's instrumentation scope names tell which of them are in use: a kind whose client is
already instrumented has its gap in another client; content that is missing is turned on
where the spans that lack it were recorded. The words are ``wording``'s
(``fix_hint``); docs/coverage.md's tables are generated from these rows (``make docs``;
tests/conventions/test_fix_hints.py fails while they differ).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from rampart_otel.vocabulary import (
    DB_QUERY,
    FILE_WRITE,
    HTTP_REQUEST,
    MCP_REQUEST,
    MESSAGE_PUBLISH,
    NETWORK_CONNECT,
    PROCESS_EXEC,
    RPC_CALL,
)


@dataclass(frozen=True, slots=True)
class ClientInstrumentation:
    """One client library's instrumentation: the kind it records, how to switch it on."""

    kind: str
    library: str
    package: str
    scope: str  # the instrumentation scope name its spans carry
    call: str  # what switches it on, once, at the agent's start
    # What it does not record though switched on: said with every hint naming it, since a
    # user who has already switched it on needs that, not the call again.
    caveat: str = ""


@dataclass(frozen=True, slots=True)
class ContentSetting:
    """How one instrumentation is told to record message content on its spans."""

    instrumentation: str
    scope_prefixes: tuple[str, ...]  # its scope names start with one of these
    setting: str


def _otel(kind: str, library: str, instrumentor: str, module: str = "") -> ClientInstrumentation:
    module = module or library.replace("-", "_")
    return ClientInstrumentation(
        kind,
        library,
        f"opentelemetry-instrumentation-{library}",
        f"opentelemetry.instrumentation.{module}",
        f"{instrumentor}().instrument()",
    )


def _watcher(kind: str, library: str) -> ClientInstrumentation:
    """The watcher (docs/watch.md): Python's audit events, whatever library makes the call."""
    return ClientInstrumentation(
        kind,
        library,
        "rampart-otel",
        "rampart_otel.watch",
        "rampart_otel.watch() at the agent's start (or run it under rampart-otel watch --)",
    )


# The first row of each kind is the one named when no client of that kind is instrumented.
CLIENTS: tuple[ClientInstrumentation, ...] = (
    _otel(HTTP_REQUEST, "httpx", "HTTPXClientInstrumentor"),
    _otel(HTTP_REQUEST, "requests", "RequestsInstrumentor"),
    _otel(HTTP_REQUEST, "aiohttp-client", "AioHttpClientInstrumentor"),
    _otel(HTTP_REQUEST, "urllib3", "URLLib3Instrumentor"),
    _otel(HTTP_REQUEST, "urllib", "URLLibInstrumentor"),
    ClientInstrumentation(
        HTTP_REQUEST,
        "undici (Node.js fetch)",
        "@opentelemetry/instrumentation-undici",
        "@opentelemetry/instrumentation-undici",
        "new UndiciInstrumentation() in the NodeSDK's instrumentations",
    ),
    ClientInstrumentation(
        DB_QUERY,
        "sqlite3",
        "opentelemetry-instrumentation-sqlite3",
        "opentelemetry.instrumentation.sqlite3",
        "SQLite3Instrumentor().instrument()",
        "SQLite3Instrumentor traces SQL run through a cursor (connection.cursor().execute) "
        "only: Connection.execute, executemany and executescript are not traced, so run the "
        "tool's SQL through a cursor",
    ),
    _otel(DB_QUERY, "psycopg", "PsycopgInstrumentor"),
    _otel(DB_QUERY, "sqlalchemy", "SQLAlchemyInstrumentor"),
    _otel(DB_QUERY, "redis", "RedisInstrumentor"),
    _otel(DB_QUERY, "pymongo", "PymongoInstrumentor"),
    _otel(MESSAGE_PUBLISH, "kafka-python", "KafkaInstrumentor", "kafka"),
    _otel(MESSAGE_PUBLISH, "confluent-kafka", "ConfluentKafkaInstrumentor"),
    _otel(MESSAGE_PUBLISH, "pika", "PikaInstrumentor"),
    _otel(MESSAGE_PUBLISH, "celery", "CeleryInstrumentor"),
    _otel(RPC_CALL, "grpc", "GrpcInstrumentorClient"),
    _otel(RPC_CALL, "botocore", "BotocoreInstrumentor"),
    ClientInstrumentation(
        MCP_REQUEST,
        "mcp",
        "opentelemetry-instrumentation-mcp",
        "opentelemetry.instrumentation.mcp",
        "McpInstrumentor().instrument()",
    ),
    ClientInstrumentation(
        MCP_REQUEST,
        "mcp",
        "openinference-instrumentation-mcp",
        "openinference.instrumentation.mcp",
        "MCPInstrumentor().instrument()",
    ),
    _watcher(PROCESS_EXEC, "subprocess, os.system, os.exec*, os.fork"),
    ClientInstrumentation(
        PROCESS_EXEC,
        "subprocess",
        "",  # no instrumentation package: the agent's own span
        "",
        "a span with process.executable.name and process.command_args around each child "
        "process the tools start",
    ),
    _watcher(NETWORK_CONNECT, "any Python-level socket"),
    _watcher(FILE_WRITE, "open for writing, os.remove, os.rename, shutil.rmtree, ..."),
)

# A model span's scope decides which setting applies; the first match wins.
CONTENT_SETTINGS: tuple[ContentSetting, ...] = (
    ContentSetting(
        "OpenInference",
        ("openinference.instrumentation",),
        "leave OPENINFERENCE_HIDE_INPUTS, OPENINFERENCE_HIDE_OUTPUTS, "
        "OPENINFERENCE_HIDE_INPUT_MESSAGES and OPENINFERENCE_HIDE_OUTPUT_MESSAGES unset "
        "(or false), or TraceConfig(hide_inputs=False, hide_outputs=False)",
    ),
    # The GenAI utility's instrumentations (openai-v2 2.x) ignore the older value ``true``
    # under the latest conventions, and ``EVENT_ONLY`` writes content to log events only,
    # never to the spans a trace holds (recorded: samples/traces/openai-v2/).
    ContentSetting(
        "OpenTelemetry GenAI instrumentations",
        (
            "opentelemetry.util.genai",
            "opentelemetry.instrumentation.openai_v2",
            "opentelemetry.instrumentation.google_genai",
            "opentelemetry.instrumentation.vertexai",
        ),
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY (or SPAN_AND_EVENT) with "
        "OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental",
    ),
    ContentSetting("LiteLLM", ("litellm",), "litellm.turn_off_message_logging = False"),
    ContentSetting(
        "OpenLLMetry",
        ("opentelemetry.instrumentation.", "traceloop"),
        "TRACELOOP_TRACE_CONTENT=true (the default; false hides prompts and completions)",
    ),
    ContentSetting(
        "pydantic-ai",
        ("pydantic-ai", "logfire"),
        "Agent.instrument_all(InstrumentationSettings(include_content=True)) (the default)",
    ),
    ContentSetting("OpenLIT", ("openlit",), "openlit.init(capture_message_content=True)"),
    ContentSetting(
        "Google ADK", ("gcp.vertex.agent",), "ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS=true"
    ),
    ContentSetting(
        "Strands Agents",
        ("strands.telemetry",),
        "OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental with content capture on",
    ),
    ContentSetting(
        "Vercel AI SDK",
        ("ai",),
        "experimental_telemetry: {isEnabled: true, recordInputs: true, recordOutputs: true}",
    ),
    ContentSetting(
        "Claude Code",
        ("com.anthropic.claude_code",),
        "OTEL_LOG_USER_PROMPTS=1 and OTEL_LOG_TOOL_DETAILS=1",
    ),
)


def clients_of(kind: str) -> list[ClientInstrumentation]:
    """Every instrumentation that records ``kind``, the one to name first first."""
    return [client for client in CLIENTS if client.kind == kind]


def clients_in_use(kind: str, scope_names: Iterable[str]) -> list[ClientInstrumentation]:
    """The instrumentations of ``kind`` whose spans are in the run."""
    names = set(scope_names)
    return [
        client
        for client in clients_of(kind)
        if client.scope and any(name.startswith(client.scope) for name in names)
    ]


def content_settings(scope_names: Iterable[str]) -> list[ContentSetting]:
    """The content settings of the instrumentations whose spans are in the run, in table
    order, each once: a scope name counts for the first row it matches."""
    found: list[ContentSetting] = []
    clients = tuple(client.scope for client in CLIENTS if client.scope)
    for name in sorted(set(scope_names)):
        if name.startswith(clients):  # an I/O client's spans hold no messages
            continue
        for row in CONTENT_SETTINGS:
            if any(_matches(name, prefix) for prefix in row.scope_prefixes):
                if row not in found:
                    found.append(row)
                break
    return sorted(found, key=CONTENT_SETTINGS.index)


def _matches(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix if prefix.endswith(".") else prefix + ".")


def markdown_table() -> str:
    """The tables docs/coverage.md shows between its ``fix-hints`` markers."""
    lines = [
        "| side-effect kind | client | package | switched on with |",
        "|---|---|---|---|",
    ]
    for client in CLIENTS:
        package = f"`{client.package}`" if client.package else "none: the agent's own span"
        call = f"`{client.call}`" if client.package else client.call
        call += f" ({client.caveat})" if client.caveat else ""
        lines.append(f"| `{client.kind}` | {client.library} | {package} | {call} |")
    lines += [
        "",
        "| instrumentation | its spans' scope names start with | content capture on |",
        "|---|---|---|",
    ]
    for row in CONTENT_SETTINGS:
        prefixes = ", ".join(f"`{prefix}`" for prefix in row.scope_prefixes)
        lines.append(f"| {row.instrumentation} | {prefixes} | {row.setting} |")
    return "\n".join(lines)
