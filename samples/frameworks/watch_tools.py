"""The tools of the watcher's samples (``watch-sdk``, ``watch-pydantic-ai``): HTTP through
clients nobody instruments, and a report sent the way ``SAMPLE_LEAK`` says.

- ``fetch_weather(city)``: GET ``SAMPLE_WEATHER_URL`` (``localhost``) with ``urllib.request``;
- ``send_report(data)``: POST ``{"report": data}`` to ``SAMPLE_REPORT_URL`` (``127.0.0.2``)
  with ``urllib`` (the default), ``aiohttp``, a raw ``socket``, ``subprocess.run(["curl",
  ...])`` or ``os.system("curl ...")``; or, with ``file``, writes it to
  ``$HOME/weather-report.json`` instead (a file outside the packs' ``file_root``).

No client of these is instrumented: an unwatched run shows none of their I/O; a watched one
(``rampart_otel.watch``) shows each connection, request, process and file write under the
tool span that made it. Imported inside each sample's own venv: standard library, plus
``aiohttp`` for that leak.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import socket
import subprocess
import urllib.parse
import urllib.request

LEAKS = ("urllib", "aiohttp", "socket", "curl", "os-system", "file")


def fetch_weather(city: str) -> str:
    """Current weather for a city."""
    query = urllib.parse.urlencode({"city": city})
    with urllib.request.urlopen(f"{os.environ['SAMPLE_WEATHER_URL']}?{query}", timeout=10) as got:
        return got.read().decode()


def send_report(data: str) -> str:
    """Send a report."""
    leak = os.environ.get("SAMPLE_LEAK", "urllib")
    url = os.environ["SAMPLE_REPORT_URL"]
    body = json.dumps({"report": data})
    if leak == "aiohttp":
        return asyncio.run(_aiohttp_post(url, body))
    if leak == "socket":
        return _socket_post(url, body)
    if leak == "curl":
        command = ["curl", "-s", "-X", "POST", "-H", "Content-Type: application/json"]
        done = subprocess.run([*command, "--data", body, url], capture_output=True, check=True)
        return done.stdout.decode()
    if leak == "file":
        path = os.path.join(os.environ["HOME"], "weather-report.json")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(body)
        return f"written to {path}"
    if leak == "os-system":
        quoted = f"curl -s -o /dev/null -X POST --data {shlex.quote(body)} {shlex.quote(url)}"
        return f"sent (exit {os.system(quoted)})"
    request = urllib.request.Request(
        url, data=body.encode(), headers={"Content-Type": "application/json"}, method="POST"
    )
    with urllib.request.urlopen(request, timeout=10) as got:
        return got.read().decode()


async def _aiohttp_post(url: str, body: str) -> str:
    import aiohttp

    async with aiohttp.ClientSession() as session:
        headers = {"Content-Type": "application/json"}
        async with session.post(url, data=body, headers=headers) as got:
            return await got.text()


def _socket_post(url: str, body: str) -> str:
    parts = urllib.parse.urlsplit(url)
    encoded = body.encode()
    head = (
        f"POST {parts.path} HTTP/1.0\r\nHost: {parts.netloc}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(encoded)}\r\n\r\n"
    )
    with socket.create_connection((parts.hostname, parts.port or 80), timeout=10) as raw:
        raw.sendall(head.encode() + encoded)
        answer = b""
        while chunk := raw.recv(4096):
            answer += chunk
    return answer.partition(b"\r\n\r\n")[2].decode()
