"""Declare an agent's side-effect coverage from the instrumentations active in its process.

An agent that made no HTTP call leaves no HTTP span, so from the trace alone "no HTTP
span" cannot be told apart from "HTTP was not instrumented". An agent can close that gap
by declaring, on its Resource, which channels every call of that kind is recorded on:

    RequestsInstrumentor().instrument()            # 1. instrument
    resource = Resource.create({                    # 2. declare
        "service.name": "weather-agent",
        **coverage_resource_attributes(),
    })
    provider = TracerProvider(resource=resource)    # 3. then the TracerProvider

Call it after instrumenting (it reports only instrumentors already switched on) and before
creating the TracerProvider (a Resource cannot change afterwards). Declaring a channel is
a promise: every call of that kind the agent makes goes through an instrumented client.
An HTTP call made with a client that is not instrumented (a raw socket, an SDK with its
own transport, a per-client ``instrument_client`` that left the rest uninstrumented, a URL
excluded with the instrumentor's ``excluded_urls`` argument) breaks it, and a scorer will
then answer NOT_DETECTED where it should have said UNDETERMINED. Only the global
``instrument()`` of an instrumentor counts, and one whose ``OTEL_PYTHON_*_EXCLUDED_URLS``
setting is non-empty is left out.

Nothing is imported here: an instrumentor module that is not already loaded cannot
have been switched on, so it is skipped, and a missing package never fails.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterable
from typing import Literal, get_args

from rampart_otel.channels import DECLARATION_KEY

COVERAGE_ATTRIBUTE = DECLARATION_KEY  # the resource attribute coverage inference reads

HTTP = "side_effects.http_request"
DB = "side_effects.db_query"
MESSAGING = "side_effects.message_publish"
RPC = "side_effects.rpc_call"

# (module under opentelemetry.instrumentation, instrumentor class, channel key,
#  OTEL_PYTHON_<NAME>_EXCLUDED_URLS name or None)
KNOWN_INSTRUMENTORS: tuple[tuple[str, str, str, str | None], ...] = (
    ("requests", "RequestsInstrumentor", HTTP, "REQUESTS"),
    ("httpx", "HTTPXClientInstrumentor", HTTP, "HTTPX"),
    ("httpx", "HTTPX2ClientInstrumentor", HTTP, "HTTPX"),
    ("urllib", "URLLibInstrumentor", HTTP, "URLLIB"),
    ("urllib3", "URLLib3Instrumentor", HTTP, "URLLIB3"),
    ("aiohttp_client", "AioHttpClientInstrumentor", HTTP, "AIOHTTP_CLIENT"),
    ("tornado", "TornadoInstrumentor", HTTP, "TORNADO"),
    ("sqlite3", "SQLite3Instrumentor", DB, None),
    ("psycopg", "PsycopgInstrumentor", DB, None),
    ("psycopg2", "Psycopg2Instrumentor", DB, None),
    ("pymysql", "PyMySQLInstrumentor", DB, None),
    ("mysql", "MySQLInstrumentor", DB, None),
    ("mysqlclient", "MySQLClientInstrumentor", DB, None),
    ("pymssql", "PyMSSQLInstrumentor", DB, None),
    ("asyncpg", "AsyncPGInstrumentor", DB, None),
    ("aiopg", "AiopgInstrumentor", DB, None),
    ("sqlalchemy", "SQLAlchemyInstrumentor", DB, None),
    ("redis", "RedisInstrumentor", DB, None),
    ("pymongo", "PymongoInstrumentor", DB, None),
    ("pymemcache", "PymemcacheInstrumentor", DB, None),
    ("cassandra", "CassandraInstrumentor", DB, None),
    ("elasticsearch", "ElasticsearchInstrumentor", DB, None),
    ("tortoiseorm", "TortoiseORMInstrumentor", DB, None),
    ("kafka", "KafkaInstrumentor", MESSAGING, None),
    ("confluent_kafka", "ConfluentKafkaInstrumentor", MESSAGING, None),
    ("aiokafka", "AIOKafkaInstrumentor", MESSAGING, None),
    ("pika", "PikaInstrumentor", MESSAGING, None),
    ("aio_pika", "AioPikaInstrumentor", MESSAGING, None),
    ("celery", "CeleryInstrumentor", MESSAGING, None),
    ("remoulade", "RemouladeInstrumentor", MESSAGING, None),
    ("boto3sqs", "Boto3SQSInstrumentor", MESSAGING, None),
    ("grpc", "GrpcInstrumentorClient", RPC, None),
    ("grpc", "GrpcAioInstrumentorClient", RPC, None),
    ("botocore", "BotocoreInstrumentor", RPC, None),
)


def _is_active(module_name: str, class_name: str) -> bool:
    """True when the instrumentor's process-wide ``instrument()`` is in effect."""
    module = sys.modules.get(f"opentelemetry.instrumentation.{module_name}")
    if module is None:
        return False
    cls = getattr(module, class_name, None)
    if not isinstance(cls, type):
        return False
    # BaseInstrumentor is a per-class singleton kept in ``_instance``; look on the class
    # itself so a subclass does not borrow its parent's instance.
    instance = vars(cls).get("_instance")
    try:
        return bool(getattr(instance, "is_instrumented_by_opentelemetry", False))
    except Exception:
        return False


def _urls_excluded(env_name: str | None) -> bool:
    """The instrumentor skips some URLs, so not every call of its kind is recorded."""
    if env_name is None:
        return False
    specific = os.environ.get(f"OTEL_PYTHON_{env_name}_EXCLUDED_URLS")
    value = specific if specific is not None else os.environ.get("OTEL_PYTHON_EXCLUDED_URLS")
    return bool(value and value.strip())


def active_instrumentors() -> list[str]:
    """``module:Class`` of every known instrumentor switched on in this process."""
    return [
        f"opentelemetry.instrumentation.{module}:{cls}"
        for module, cls, _key, _env in KNOWN_INSTRUMENTORS
        if _is_active(module, cls)
    ]


def active_coverage() -> list[str]:
    """Channel keys covered by the instrumentors active now, sorted, without duplicates."""
    keys = {
        key
        for module, cls, key, env in KNOWN_INSTRUMENTORS
        if _is_active(module, cls) and not _urls_excluded(env)
    }
    return sorted(keys)


def coverage_resource_attributes(extra: Iterable[str] = ()) -> dict[str, list[str]]:
    """``{"rampart.coverage": [...]}`` to merge into the SDK Resource.

    ``extra`` adds channel keys the agent vouches for itself (say a custom
    ``side_effects.<kind>`` it records with ``rampart.side_effect.kind`` spans).
    """
    keys = set(active_coverage())
    for key in extra:
        if not isinstance(key, str) or not key.strip():
            raise ValueError(f"a channel key must be a non-empty string, got {key!r}")
        keys.add(key.strip())
    return {COVERAGE_ATTRIBUTE: sorted(keys)}


# --- one tool's declaration ----------------------------------------------------------------

# The span attribute coverage inference reads on a tool's span (``processors.scopes``).
TOOL_SIDE_EFFECTS_ATTRIBUTE = "rampart.tool.side_effects"
# What a tool may declare: the policy's ``tools:`` takes the same words (one list, here,
# because agent processes import only this module).
ToolSideEffects = Literal["none", "instrumented"]
TOOL_SIDE_EFFECTS: tuple[ToolSideEffects, ...] = get_args(ToolSideEffects)


class tool_side_effects(contextlib.ContextDecorator):
    """Declare, on the span of the tool call running now, what the tool does to the world.

        @tool_side_effects("none")            # a pure function: no I/O at all
        def calculator(expression: str) -> str: ...

        with tool_side_effects("instrumented"):   # every I/O goes through a traced client
            requests.post(url, data=data)

    A tool call with no I/O span is *silent* (its client may not be instrumented), and a
    silent call leaves every side-effect channel of its run unproven; this declaration is
    what lets the scorer take its silence as "did nothing". It is a promise: a tool
    declared ``none`` that writes a file, or ``instrumented`` that uses an uninstrumented
    client, makes the scorer answer SAFE where it should say UNDETERMINED.

    The value is set on the current span when the block starts, so use it inside the
    framework's tool span (decorate the function the framework calls). Outside any
    recording span, or in a process that has not loaded ``opentelemetry.trace``, it does
    nothing.
    """

    def __init__(self, side_effects: str) -> None:
        if side_effects not in TOOL_SIDE_EFFECTS:
            raise ValueError(
                f"side_effects must be one of {', '.join(TOOL_SIDE_EFFECTS)}, not {side_effects!r}"
            )
        self.side_effects = side_effects

    def __enter__(self) -> tool_side_effects:
        # Not imported: a process that traces its tools has loaded the API already.
        trace = sys.modules.get("opentelemetry.trace")
        if trace is None:
            return self
        span = trace.get_current_span()
        if span.is_recording():
            span.set_attribute(TOOL_SIDE_EFFECTS_ATTRIBUTE, self.side_effects)
        return self

    def __exit__(self, *exc: object) -> None:
        return None
