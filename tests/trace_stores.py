"""Real trace stores for the ``phoenix://`` and ``mlflow://`` tests: Arize Phoenix
(``phoenix serve``, its SQLite default) and MLflow (``mlflow server``, SQLite), each from a
virtualenv of its own (they are heavy and pin what they like), built by
``.ci/stores-venvs`` under ``~/.cache/rampart-otel-stores`` (``RAMPART_STORES_VENVS``
elsewhere). Each is started once per session in a temporary directory, on free ports (again
on fresh ones if a port was taken meanwhile), listening on 127.0.0.1 only; tests marked
``stores`` skip with one line when a venv is absent.

Phoenix binds its OTLP/gRPC receiver to every interface (``[::]``, not configurable): the
launcher below rebinds it to 127.0.0.1 and changes nothing else.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from ports import PortInUse, in_use, on_free_ports

VENVS = Path(os.environ.get("RAMPART_STORES_VENVS", Path.home() / ".cache/rampart-otel-stores"))
PHOENIX_PYTHON = VENVS / "phoenix/bin/python"
MLFLOW = VENVS / "mlflow/bin/mlflow"
START_TIMEOUT = 300.0
SAMPLES = Path(__file__).resolve().parents[1] / "samples"
POLICY = SAMPLES / "policy.yaml"
EXFIL = SAMPLES / "traces/openinference-exfil.jsonl"
BENIGN = SAMPLES / "traces/openinference-benign.jsonl"

_PHOENIX_LAUNCHER = """
import sys
import grpc.aio
_server = grpc.aio.server
def _loopback_server(*args, **kwargs):
    server = _server(*args, **kwargs)
    add = server.add_insecure_port
    server.add_insecure_port = lambda address: add(address.replace("[::]", "127.0.0.1"))
    return server
grpc.aio.server = _loopback_server
sys.argv = ["phoenix", "serve"]
from phoenix.server.main import main
sys.exit(main())
"""


def missing(what: str, path: Path) -> str:
    return f"{what} is not installed ({path} absent): run .ci/stores-venvs"


def _start(command: list[str], env: dict[str, str], health: str, root: Path) -> subprocess.Popen:
    """The server, once ``health`` answers 200; ``PortInUse`` when it could not bind."""
    log = root / "server.log"
    with log.open("wb") as out:
        process = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT, cwd=root)
    deadline = time.monotonic() + START_TIMEOUT
    try:
        while True:
            if process.poll() is not None:
                tail = log.read_text(errors="replace")[-2000:]
                failure = PortInUse if in_use(tail) else RuntimeError
                raise failure(f"{command[0]} exited ({process.returncode}): {tail}")
            try:
                if httpx.get(health, timeout=2).status_code == 200:
                    return process
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"{command[0]}: not healthy after {START_TIMEOUT:.0f}s")
            time.sleep(0.5)
    except BaseException:
        _stop(process)
        raise


def _stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


class PhoenixServer:
    """A Phoenix server keeping its data in ``root``: started on free ports, then stopped
    and started again on the same ones (a store that goes down and comes back)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.process: subprocess.Popen | None = None
        self.ports: tuple[int, int] | None = None

    @property
    def address(self) -> str:
        assert self.ports is not None
        return f"127.0.0.1:{self.ports[0]}"

    def start(self) -> str:
        """Its ``HOST:PORT``, once it answers."""
        if self.ports is None:
            self.process = on_free_ports(self._start, count=2)
        else:
            self.process = self._start(*self.ports)
        return self.address

    def stop(self) -> None:
        if self.process is not None:
            _stop(self.process)
            self.process = None

    def _start(self, port: int, grpc_port: int) -> subprocess.Popen:
        env = {
            **os.environ,
            "PHOENIX_WORKING_DIR": str(self.root),
            "PHOENIX_HOST": "127.0.0.1",
            "PHOENIX_PORT": str(port),
            "PHOENIX_GRPC_PORT": str(grpc_port),
            "PHOENIX_TELEMETRY_ENABLED": "false",
        }
        env.pop("PHOENIX_API_KEY", None)
        command = [str(PHOENIX_PYTHON), "-c", _PHOENIX_LAUNCHER]
        process = _start(command, env, f"http://127.0.0.1:{port}/healthz", self.root)
        self.ports = (port, grpc_port)
        return process


@contextmanager
def running_phoenix() -> Iterator[str]:
    """A Phoenix server for this process; its ``HOST:PORT``."""
    with phoenix_server_in_temp() as server:
        yield server.start()


@contextmanager
def phoenix_server_in_temp() -> Iterator[PhoenixServer]:
    """A :class:`PhoenixServer` in a temporary directory, stopped and removed at the end."""
    root = Path(tempfile.mkdtemp(prefix="rampart-phoenix-"))
    server = PhoenixServer(root)
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)


@contextmanager
def running_mlflow() -> Iterator[str]:
    """An MLflow tracking server for this process; its ``HOST:PORT``."""
    root = Path(tempfile.mkdtemp(prefix="rampart-mlflow-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}

    def start(port: int) -> tuple[subprocess.Popen, int]:
        command = [
            str(MLFLOW), "server", "--host", "127.0.0.1", "--port", str(port), "--workers", "1",
            "--backend-store-uri", f"sqlite:///{root}/mlflow.db",
            "--default-artifact-root", str(root / "artifacts"),
        ]  # fmt: skip
        return _start(command, env, f"http://127.0.0.1:{port}/health", root), port

    try:
        process, port = on_free_ports(start)
        try:
            yield f"127.0.0.1:{port}"
        finally:
            _stop(process)
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def phoenix_server() -> Iterator[str]:
    if not PHOENIX_PYTHON.is_file():
        pytest.skip(missing("arize-phoenix", PHOENIX_PYTHON))
    with running_phoenix() as address:
        yield address


@pytest.fixture(scope="session")
def mlflow_server() -> Iterator[str]:
    if not MLFLOW.is_file():
        pytest.skip(missing("mlflow", MLFLOW))
    with running_mlflow() as address:
        yield address


def send(path: Path, endpoint: str, headers: dict[str, str] | None = None) -> None:
    """The recorded trace sent over OTLP/HTTP by the real exporter (``rampart-otel replay``)."""
    from rampart_otel.replay import replay

    out = io.StringIO()
    code, _ = replay([path], endpoint, "http/protobuf", headers or {}, out, timeout=60)
    assert code == 0, out.getvalue()


def spans_in(path: Path) -> int:
    from rampart_otel.receivers.files import read_paths

    return sum(len(batch) for batch in read_paths([path]) if isinstance(batch, list))


def wait_for_spans(url: str, count: int, timeout: float = 60.0) -> None:
    """Until the store has ``count`` spans at ``url``: both insert what they receive a
    moment later, in the background."""
    from rampart_otel.receivers.stores import TraceStoreError, parse_store_url, read_store

    deadline = time.monotonic() + timeout
    while True:
        try:
            found = sum(len(batch) for batch in read_store(parse_store_url(url)))
        except TraceStoreError:  # a Phoenix project appears with its first span
            found = 0
        if found >= count:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"{url}: {found} of {count} spans after {timeout:.0f}s")
        time.sleep(0.5)


def in_phoenix_project(path: Path, project: str, out_dir: Path) -> Path:
    """A copy of the recorded trace whose spans go to Phoenix project ``project`` (Phoenix
    files a trace by its resource's ``openinference.project.name``)."""
    copy = out_dir / f"{project}-{path.name}"
    with copy.open("w") as out:
        for line in path.read_text().splitlines():
            request = json.loads(line)
            for spans in request["resourceSpans"]:
                spans["resource"]["attributes"].append(
                    {"key": "openinference.project.name", "value": {"stringValue": project}}
                )
            out.write(json.dumps(request) + "\n")
    return copy


def retraced_id(trace_id: str, tag: str) -> str:
    """The trace id :func:`retraced` gives ``trace_id`` under ``tag``."""
    return hashlib.sha256(f"{tag}:{trace_id}".encode()).hexdigest()[:32]


def retraced(path: Path, tag: str, out_dir: Path) -> Path:
    """A copy of the recorded trace under trace and span ids of its own (:func:`retraced_id`):
    a store files an id once, so a sample another test already sent to the same server would
    otherwise not be stored again (Phoenix keeps each span id once, MLflow each trace id)."""
    copy = out_dir / f"retraced-{tag}-{path.name}"
    with copy.open("w") as out:
        for line in path.read_text().splitlines():
            request = json.loads(line)
            for resource in request["resourceSpans"]:
                for scope in resource["scopeSpans"]:
                    for span in scope["spans"]:
                        span["traceId"] = retraced_id(span["traceId"], tag)
                        for key in ("spanId", "parentSpanId"):
                            if span.get(key):
                                span[key] = retraced_id(span[key], tag)[:16]
                        for link in span.get("links", ()):
                            link["traceId"] = retraced_id(link["traceId"], tag)
                            link["spanId"] = retraced_id(link["spanId"], tag)[:16]
            out.write(json.dumps(request) + "\n")
    return copy


def new_mlflow_experiment(address: str, name: str) -> str:
    """The id of a new MLflow experiment ``name``."""
    created = httpx.post(
        f"http://{address}/api/2.0/mlflow/experiments/create", json={"name": name}, timeout=60
    )
    created.raise_for_status()
    return str(created.json()["experiment_id"])
