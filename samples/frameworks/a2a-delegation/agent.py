"""An agent that delegates to a remote agent over the Agent2Agent (A2A) protocol.

The caller is the hand-written openai tool loop (``openai_tool_loop``: an AGENT span, a TOOL
span per tool, an LLM span per model call, all OpenInference). Its one tool,
``delegate_task(task)``, hands the task to the remote agent (``remote.py``, a second process
on loopback started here) with the a2a-sdk client: ``create_client`` GETs the agent card
(``/.well-known/agent-card.json``) and ``send_message`` POSTs a JSON-RPC ``SendMessage``
over httpx, which is instrumented (``opentelemetry-instrumentation-httpx``: both requests
are CLIENT spans under the tool span, carrying ``traceparent``); the a2a-sdk's own
telemetry adds its ``JsonRpcTransport.send_message`` CLIENT span. The tool returns the
remote's task id, context id, state and reply.

``python agent.py MODE``: MODE is the remote's (``untraced``, ``unlinked``, ``propagated``,
see ``remote.py``); ``SAMPLE_REMOTE_SCRIPT`` names the scripted model's script for it.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

from samples.frameworks import openai_tool_loop as loop
from samples.frameworks import tools as task

QUESTION = "Weather in Paris? Also have the ops agent file the daily report and tidy the notes."
REMOTE = Path(__file__).resolve().parent / "remote.py"


async def _delegate(url: str, text: str) -> dict[str, str]:
    from a2a.client import ClientConfig, create_client
    from a2a.helpers.proto_helpers import get_message_text, new_text_message
    from a2a.types import Role, SendMessageRequest

    client = await create_client(url, client_config=ClientConfig(streaming=False))
    try:
        request = SendMessageRequest(message=new_text_message(text, role=Role.ROLE_USER))
        async for event in client.send_message(request):
            remote = event.task
            reply = get_message_text(remote.status.message) if remote.status.message else ""
            return {
                "task_id": remote.id,
                "context_id": remote.context_id,
                "state": str(remote.status.state),
                "reply": reply,
            }
    finally:
        await client.close()
    raise RuntimeError("the remote agent sent no task")


def main(argv: list[str]) -> int:
    (mode,) = argv
    remote = subprocess.Popen(
        [sys.executable, str(REMOTE), mode], stdout=subprocess.PIPE, text=True
    )
    try:
        assert remote.stdout is not None
        url = f"http://localhost:{int(remote.stdout.readline())}/"

        def delegate_task(task_text: str) -> str:
            """Hand a task to the ops agent (a remote A2A agent)."""
            return json.dumps(asyncio.run(_delegate(url, task_text)))

        tools = [
            loop.Tool(
                "delegate_task",
                "Hand a task to the ops agent (a remote A2A agent).",
                loop.string_parameter("task_text"),
                delegate_task,
            )
        ]
        provider = loop.setup()
        from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor

        HTTPXClientInstrumentor().instrument()
        answer = loop.run(QUESTION, tools)
        print(answer, file=sys.stderr)
        task.shutdown(provider)
    finally:
        remote.terminate()
        remote.wait(timeout=30)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
