"""The remote A2A agent: an a2a-sdk server on loopback whose executor runs its own tool loop.

Started by ``agent.py`` as a second process (``python remote.py MODE``); it binds
``127.0.0.1`` on a free port (addressed as ``localhost``), prints the port on its first
line of output, and serves the agent card (``GET /.well-known/agent-card.json``) and
JSON-RPC (``POST /``) until it is sent SIGTERM. Each request runs the hand-written openai
tool loop (``openai_tool_loop``) with the scripted model's script named by
``SAMPLE_REMOTE_SCRIPT`` (as the request's model) and the remote's own tools:
``fetch_weather``, ``send_report`` (a POST to the report host), ``run_sql`` (any statement
on the notes database) and ``run_shell`` (a command in a child process). MODE says what
the remote records:

- ``untraced``: nothing (no SDK, no instrumentation);
- ``unlinked``: its own spans (OpenInference's agent, tool and model spans, a2a-sdk's own
  server spans, requests and sqlite3), but no ASGI instrumentation, so no trace context is
  taken from the caller's request: its spans start a trace of their own;
- ``propagated``: the same with the Starlette (ASGI) instrumentation on the app, which
  takes the caller's ``traceparent``: the remote's spans join the caller's trace.

The A2A context id is the OpenInference session (``using_session``) of the remote's spans.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys

from samples.frameworks import openai_tool_loop as loop
from samples.frameworks import tools as task

MODES = ("untraced", "unlinked", "propagated")
QUESTION_PREFIX = "Task from a caller agent: "


def run_shell(command: str) -> str:
    """Run a shell command."""
    done = subprocess.run(["sh", "-c", command], capture_output=True, text=True, timeout=10)
    return done.stdout + done.stderr


TOOLS = [
    loop.Tool(
        "fetch_weather",
        task.FETCH_WEATHER_DOC,
        loop.string_parameter("city"),
        task.fetch_weather,
    ),
    loop.Tool("send_report", task.SEND_REPORT_DOC, loop.string_parameter("data"), task.send_report),
    loop.Tool("run_sql", task.RUN_SQL_DOC, loop.string_parameter("query"), task.run_sql),
    loop.Tool("run_shell", "Run a shell command.", loop.string_parameter("command"), run_shell),
]
REMOTE_SERVICE = "remote-ops-agent"


def build_app(mode: str, url: str) -> object:
    from a2a.server.agent_execution import AgentExecutor, RequestContext
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
    from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
    from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
    from starlette.applications import Starlette

    traced = mode != "untraced"

    class RemoteExecutor(AgentExecutor):
        async def execute(self, context: RequestContext, event_queue: object) -> None:
            from a2a.helpers.proto_helpers import new_task
            from a2a.types import TaskState

            task_id, context_id = context.task_id or "", context.context_id or ""
            if context.current_task is None:
                submitted = new_task(task_id, context_id, TaskState.TASK_STATE_SUBMITTED)
                await event_queue.enqueue_event(submitted)  # type: ignore[attr-defined]
            updater = TaskUpdater(event_queue, task_id, context_id)  # type: ignore[arg-type]
            await updater.start_work()
            question = QUESTION_PREFIX + context.get_user_input()
            answer = await asyncio.to_thread(self._answer, question, context_id)
            await updater.complete(updater.new_agent_message([_text_part(answer)]))

        def _answer(self, question: str, context_id: str) -> str:
            if not traced:
                return loop.run(question, TOOLS, spans=False)
            from openinference.instrumentation import using_session
            from opentelemetry import trace

            with using_session(context_id):
                answer = loop.run(question, TOOLS, agent=REMOTE_SERVICE)
            trace.get_tracer_provider().force_flush()  # type: ignore[attr-defined]
            return answer

        async def cancel(self, context: RequestContext, event_queue: object) -> None:
            raise NotImplementedError

    card = AgentCard(
        name=REMOTE_SERVICE,
        description="Files reports and tidies the notes database.",
        version="1.0.0",
        supported_interfaces=[AgentInterface(protocol_binding="JSONRPC", url=url)],
        capabilities=AgentCapabilities(streaming=False),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[
            AgentSkill(
                id="ops", name="ops", description="Reports and database chores.", tags=["ops"]
            )
        ],
    )
    handler = DefaultRequestHandler(
        agent_executor=RemoteExecutor(), task_store=InMemoryTaskStore(), agent_card=card
    )
    app = Starlette(routes=[*create_agent_card_routes(card), *create_jsonrpc_routes(handler, "/")])
    if mode == "propagated":
        from opentelemetry.instrumentation.starlette import StarletteInstrumentor

        StarletteInstrumentor.instrument_app(app)
    return app


def _text_part(text: str) -> object:
    from a2a.helpers.proto_helpers import new_text_part

    return new_text_part(text)


def main(argv: list[str]) -> int:
    (mode,) = argv
    if mode not in MODES:
        raise SystemExit(f"mode must be one of {MODES}")
    # The scripted model plays the remote's own script: it is chosen by the request's model.
    loop.MODEL = os.environ["SAMPLE_REMOTE_SCRIPT"]
    provider = None
    if mode != "untraced":
        provider = loop.setup(**{"service.name": REMOTE_SERVICE})
        from opentelemetry.instrumentation.requests import RequestsInstrumentor
        from opentelemetry.instrumentation.sqlite3 import SQLite3Instrumentor

        RequestsInstrumentor().instrument()
        SQLite3Instrumentor().instrument()
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    # Addressed as localhost, the sample policy's allowed host: a request to the remote agent
    # is no exfiltration of its own.
    app = build_app(mode, f"http://localhost:{port}/")
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    print(port, flush=True)
    server.run(sockets=[sock])
    if provider is not None:
        task.shutdown(provider)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
