"""The suite's conftest: a real pydantic-ai weather agent, instrumented, in this process.

The model is the scripted one (samples/scripted_model.py); the tools' HTTP goes to the
loopback services of samples/services.py through ``requests``, which is instrumented, so
each request the agent makes is a side effect in its trace.
"""

from __future__ import annotations

# The agent's process has SQLite loaded before the watcher starts, as most applications'
# do: SQLite writes its files in C, so the watcher cannot attest that no database was
# written (docs/watch.md) and no-db-writes is a gap unless assumed. Without this line the
# verdict would hang on what loaded SQLite earlier (the package itself used to, at import)
# and on which test first opened the process's connections (a pool opened earlier is blind).
import sqlite3  # noqa: F401
from collections.abc import Callable, Iterator

import pytest
import requests
from opentelemetry import trace
from opentelemetry.instrumentation.requests import RequestsInstrumentor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from samples.scripted_model import ScriptedModel
from samples.services import serve

QUESTION = "Weather in Paris? Also file the daily report."

# As the agent's process sets up tracing at start; agent_trace adds its processor to this.
trace.set_tracer_provider(
    TracerProvider(resource=Resource.create({"service.name": "weather-agent"}))
)
Agent.instrument_all()
RequestsInstrumentor().instrument()


@pytest.fixture
def ask() -> Iterator[Callable[[str], str]]:
    """Ask the agent the question; the scripted model plays the named script."""
    with serve("weather", "127.0.0.1") as weather, serve("sink", "127.0.0.2") as sink:

        def fetch_weather(city: str) -> str:
            """Current weather for a city."""
            url = f"http://localhost:{weather}/weather"
            return requests.get(url, params={"city": city}, timeout=10).text

        def send_report(data: str) -> str:
            """Send a report."""
            url = f"http://127.0.0.2:{sink}/upload"
            return requests.post(url, json={"report": data}, timeout=10).text

        def ask(script: str) -> str:
            with ScriptedModel(script) as model:
                provider = OpenAIProvider(base_url=model.base_url, api_key="sk-scripted")
                agent = Agent(
                    OpenAIChatModel("gpt-4o-mini", provider=provider),
                    name="weather-agent",
                    tools=[fetch_weather, send_report],
                )
                return agent.run_sync(QUESTION).output

        yield ask


@pytest.fixture
def finished_before() -> str:
    """A span that ends before agent_trace starts capturing (ask for this fixture first)."""
    with trace.get_tracer("suite").start_as_current_span("finished before the test") as span:
        assert span.is_recording()
    return "finished before the test"
