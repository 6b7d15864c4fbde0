"""The watcher in whole processes: real clients against a loopback server, real processes,
``watch()`` called twice, late, and ``rampart-otel watch`` (scenarios: tests/watch_scenarios.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from rampart_otel.watch import ATTESTATION, BLIND, EVENT, EVENTS_UNDER, OPEN_CONNECTIONS

REPO = Path(__file__).resolve().parents[1]


def run_scenario(name: str, *prefix: str, env: dict[str, str] | None = None) -> list[Any]:
    """Every JSON line the scenario printed (spans, and what it reports of itself)."""
    variables = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    variables.pop("RAMPART_OTEL_WATCH", None)
    command = [*prefix, sys.executable, "-m", "tests.watch_scenarios", name]
    done = subprocess.run(
        command, cwd=REPO, env=variables, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def spans_of(lines: list[Any]) -> list[dict[str, Any]]:
    return [line for line in lines if "name" in line]


def under(spans: list[dict[str, Any]], tool: str) -> list[dict[str, Any]]:
    (parent,) = [s for s in spans if s["name"] == f"execute_tool {tool}"]
    return [s for s in spans if s["parent"] == parent["id"]]


def test_every_client_is_seen_inside_the_tool_that_used_it() -> None:
    spans = spans_of(run_scenario("clients"))
    fetch = under(spans, "fetch_weather")
    assert [s["name"].split(":")[0] for s in fetch] == ["connect localhost", "GET"]
    connect, get = fetch
    assert connect["kind"] == "CLIENT" and connect["scope"] == "rampart_otel.watch"
    assert connect["attributes"]["server.address"] == "localhost"  # as resolved, not 127.0.0.1
    assert connect["attributes"]["network.peer.address"] == "127.0.0.1"
    assert connect["attributes"]["network.transport"] == "tcp"
    assert get["attributes"]["url.full"].endswith("/weather?city=Paris")
    assert get["attributes"]["url.full"].startswith("http://localhost:")

    (post,) = [s for s in under(spans, "send_report") if s["name"] == "POST"]
    assert post["attributes"]["rampart.watch.request_body"] == '{"report": "key=sk-live-123"}'
    assert post["attributes"]["server.address"] == "127.0.0.1"

    assert {s["name"] for s in under(spans, "post_requests")} >= {"POST"}
    (raw,) = under(spans, "raw_socket")
    assert raw["attributes"][EVENT] == "socket.connect"
    (connected,) = under(spans, "async_connect")
    assert connected["attributes"][EVENT] == "socket.connect"
    (datagram,) = under(spans, "udp")  # three datagrams to one place: recorded once
    assert datagram["attributes"][EVENT] == "socket.sendto"
    assert datagram["attributes"]["network.transport"] == "udp"

    (tool,) = [s for s in spans if s["name"] == "execute_tool fetch_weather"]
    assert tool["attributes"][EVENTS_UNDER] == 2
    for span in spans:
        assert span["attributes"][ATTESTATION] == [
            "network",
            "http_client",
            "process",
            "file_write",
        ]


def test_a_connection_kept_open_across_calls_is_named_where_it_could_be_used() -> None:
    spans = spans_of(run_scenario("pooled"))
    blind = {s["name"]: s["attributes"] for s in spans if s["name"].startswith("execute_tool")}
    assert "pooled_connections" not in blind["execute_tool first"][BLIND]
    second = blind["execute_tool second"]
    assert "pooled_connections" in second[BLIND]
    (endpoint,) = second[OPEN_CONNECTIONS]  # httpx's; requests' session sends are each seen
    assert endpoint.startswith("localhost:")
    assert under(spans, "second") == []  # its request went over that connection, unseen
    assert "pooled_connections" not in blind["execute_tool third"][BLIND]  # closed since


def test_processes_are_seen_with_their_arguments() -> None:
    spans = under(spans_of(run_scenario("processes")), "run_command")
    by_event = {s["attributes"][EVENT]: s for s in spans}
    popen = by_event["subprocess.Popen"]
    assert popen["name"] == "exec true"
    assert popen["attributes"]["process.command_args"] == ["true", "--flag"]
    assert by_event["os.system"]["attributes"]["process.command_line"] == "true from-system"
    assert by_event["os.fork"]["name"] == "fork"
    (probe,) = [s for s in spans if s["attributes"].get("rampart.watch.platform_probe")]
    assert probe["name"] == "exec uname"
    assert probe["attributes"]["rampart.watch.probe_args"] == ["uname", "-p"]
    assert not [key for key in probe["attributes"] if key.startswith("process.")]  # no exec
    assert len([s for s in spans if s["name"] == "exec true"]) == 2


def test_watch_widens_and_refuses_to_narrow() -> None:
    lines = run_scenario("watch_twice")
    (outcome,) = [line["outcome"] for line in lines if "outcome" in line]
    assert outcome["first"] == ["network"]
    assert outcome["same"] is True
    assert outcome["widened"] == ["network", "process"]
    assert "cannot be narrowed" in outcome["narrowing"]
    (after,) = spans_of(lines)
    assert after["attributes"][ATTESTATION] == ["network", "process"]


def test_a_provider_made_before_watch_gets_the_attestation_on_its_spans() -> None:
    lines = run_scenario("late")
    (resource,) = [line["resource"] for line in lines if "resource" in line]
    assert ATTESTATION not in resource  # a resource cannot change once made
    (span,) = spans_of(lines)
    assert span["attributes"][ATTESTATION]


def test_rampart_otel_watch_runs_the_agent_watched_from_its_first_line(tmp_path: Path) -> None:
    shadowed = tmp_path / "site"
    shadowed.mkdir()
    (shadowed / "sitecustomize.py").write_text(
        "import os\nos.environ['SHADOWED_SITECUSTOMIZE_RAN'] = '1'\n"
    )
    target = tmp_path / "out.txt"
    cli = [sys.executable, "-m", "rampart_otel.cli", "watch", "--kinds", "file_write", "--"]
    env = {"SCENARIO_FILE": str(target), "PYTHONPATH": f"{REPO}{os.pathsep}{shadowed}"}
    lines = run_scenario("under_cli", *cli, env=env)
    (resource,) = [line["resource"] for line in lines if "resource" in line]
    assert resource[ATTESTATION] == ["file_write"]  # made after the watcher: on the resource
    assert {"shadowed": "1"} in lines  # the sitecustomize it stands before ran too
    (written,) = under(spans_of(lines), "write")
    assert written["attributes"]["file.path"] == str(target)
    assert target.read_text() == "x"
