"""Record every agent framework's traces from the real library, each in its own runtime.

    python samples/record_frameworks.py                   # every framework, every case
    python samples/record_frameworks.py --only strands    # frameworks or files matching
    python samples/record_frameworks.py --list            # what would be recorded

One folder per framework under ``samples/frameworks/`` holds ``cases.py`` (the framework
and its cases, see ``samples/frameworks/catalog.py``), the agent (``agent.py``, or a Node
script), and its pinned requirements (``requirements.txt`` or ``package.json`` with its
lock). The recorder builds that runtime once, outside the project (a venv under
``~/.cache/rampart-otel-samples/venvs/``, keyed by the requirements' hash; ``npm ci`` for
Node), then for each case starts, on loopback:

- the scripted model (``samples/scripted_model.py``: OpenAI Chat Completions and
  Responses, Anthropic Messages and Gemini, one script per case);
- the weather service (``localhost``), the unexpected report host (``127.0.0.2``) and a
  fresh SQLite file with a ``notes`` table (``samples/services.py``);
- an OTLP/HTTP sink (``samples/recording_sink.py``) that the agent's real OTLP exporter
  sends to,

runs the agent in its own process and writes what the sink received to
``samples/traces/<framework>/<framework>-<case>.jsonl`` (the Collector file exporter's
format), with a README listing the cases and the library versions recorded.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib.util
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from samples.frameworks.catalog import Case, Framework  # noqa: E402
from samples.record import check_file  # noqa: E402
from samples.recording_sink import RecordingSink  # noqa: E402
from samples.scripted_model import SCRIPTS, ScriptedModel  # noqa: E402
from samples.services import serve  # noqa: E402

FRAMEWORKS = REPO / "samples" / "frameworks"
TRACES = REPO / "samples" / "traces"
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "rampart-otel-samples"
API_KEY = "sk-scripted-0000"

# Settings every framework process gets; a case's own env comes on top.
BASE_ENV = {
    "OTEL_SERVICE_NAME": "weather-agent",
    "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
    "OTEL_TRACES_EXPORTER": "otlp",
    "OTEL_METRICS_EXPORTER": "none",
    "OTEL_LOGS_EXPORTER": "none",
    "OTEL_BSP_SCHEDULE_DELAY": "200",
    "OPENAI_API_KEY": API_KEY,
    "ANTHROPIC_API_KEY": API_KEY,
    "GOOGLE_API_KEY": API_KEY,
    "GEMINI_API_KEY": API_KEY,
    # Libraries that would phone home or fetch data at start: keep them local.
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "CREWAI_DISABLE_TELEMETRY": "true",
    "CREWAI_DISABLE_TRACKING": "true",
    "OTEL_SDK_DISABLED": "false",
    "ANONYMIZED_TELEMETRY": "False",
    "DO_NOT_TRACK": "1",
    "HF_HUB_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "PYTHONUNBUFFERED": "1",
}
# Inherited settings that would change what a library records.
_CLEARED_PREFIXES = ("OTEL_", "OPENINFERENCE_", "TRACELOOP_", "OPENLIT_", "LOGFIRE_")


class Entry:
    """One framework folder: its declaration, cases and runtime."""

    def __init__(self, folder: Path, module: ModuleType) -> None:
        self.folder = folder
        self.framework: Framework = module.FRAMEWORK
        self.cases: list[Case] = list(module.CASES)
        if self.framework.name != folder.name:
            raise ValueError(f"{folder}: FRAMEWORK.name must be {folder.name!r}")

    @property
    def name(self) -> str:
        return self.framework.name

    def file_name(self, case: Case) -> str:
        return f"{self.name}-{case.case}.jsonl"


def discover() -> list[Entry]:
    entries = []
    for cases_file in sorted(FRAMEWORKS.glob("*/cases.py")):
        spec = importlib.util.spec_from_file_location(
            f"samples_frameworks_{cases_file.parent.name.replace('-', '_')}", cases_file
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        entries.append(Entry(cases_file.parent, module))
    return entries


# --- runtimes ----------------------------------------------------------------------------


def _digest(*paths: Path) -> str:
    sha = hashlib.sha256()
    for path in paths:
        if path.exists():
            sha.update(path.read_bytes())
    return sha.hexdigest()[:12]


def ensure_runtime(entry: Entry) -> Path:
    """The venv (Python) or folder with node_modules (Node) the entry runs in."""
    if entry.framework.runtime == "node":
        lock = entry.folder / "package-lock.json"
        stamp = entry.folder / "node_modules" / ".rampart-stamp"
        digest = _digest(entry.folder / "package.json", lock)
        if not stamp.exists() or stamp.read_text() != digest:
            command = ["npm", "ci" if lock.exists() else "install", "--no-audit", "--no-fund"]
            _run(command, cwd=entry.folder, what=f"{entry.name}: npm")
            stamp.write_text(digest)
        return entry.folder
    requirements = entry.folder / "requirements.txt"
    venv = CACHE / "venvs" / f"{entry.name}-{_digest(requirements)}"
    python = venv / "bin" / "python"
    if not (venv / ".complete").exists():
        shutil.rmtree(venv, ignore_errors=True)
        base = os.environ.get("SAMPLES_PYTHON") or shutil.which("python3") or sys.executable
        _run([base, "-m", "venv", str(venv)], what=f"{entry.name}: venv")
        pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        _run([*pip, "-r", str(requirements)], what=f"{entry.name}: pip install")
        (venv / ".complete").write_text(requirements.read_text())
    return venv


def _run(command: list[str], what: str, cwd: Path | None = None) -> None:
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=3600)
    if result.returncode != 0:
        raise RuntimeError(f"{what} failed:\n{(result.stderr or result.stdout)[-3000:]}")


def installed_versions(entry: Entry, runtime: Path) -> dict[str, str]:
    versions: dict[str, str] = {}
    if entry.framework.runtime == "node":
        for package in entry.framework.packages:
            manifest = runtime / "node_modules" / package / "package.json"
            if manifest.exists():
                versions[package] = json.loads(manifest.read_text())["version"]
        return versions
    code = (
        "import importlib.metadata as m, json, sys\n"
        "print(json.dumps({p: m.version(p) for p in sys.argv[1:]}))"
    )
    result = subprocess.run(
        [str(runtime / "bin" / "python"), "-c", code, *entry.framework.packages],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if result.returncode == 0:
        versions.update(json.loads(result.stdout))
    return versions


# --- one recording -----------------------------------------------------------------------


def record_case(entry: Entry, case: Case, runtime: Path, out_dir: Path) -> tuple[Path, int]:
    """Run the agent for one case; return the file written and its span count."""
    out = out_dir / entry.file_name(case)
    scripts = {**SCRIPTS, **case.scripts}
    with contextlib.ExitStack() as stack:
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="rampart-rec-")))
        database = scratch / "notes.db"
        with sqlite3.connect(database) as connection:
            connection.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
        home = scratch / "home"
        home.mkdir()
        weather_port = stack.enter_context(serve("weather", "127.0.0.1"))
        weather = f"http://localhost:{weather_port}/weather"
        archive = f"http://localhost:{weather_port}/archive"
        report = f"http://127.0.0.2:{stack.enter_context(serve('sink', '127.0.0.2'))}/upload"
        variables = {
            "weather_url": weather,
            "report_url": report,
            "archive_url": archive,
            "db": str(database),
        }
        model = stack.enter_context(
            ScriptedModel(
                case.script, scripts=scripts, variables=variables, side_reply=case.side_reply
            )
        )
        sink = stack.enter_context(RecordingSink())
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(_CLEARED_PREFIXES) and "PROXY" not in key.upper()
        }
        env.update(BASE_ENV)
        env.update(
            {
                "HOME": str(home),
                "PYTHONPATH": str(REPO),
                "NO_PROXY": "*",
                "OTEL_EXPORTER_OTLP_ENDPOINT": sink.endpoint,
                "SAMPLE_MODEL_URL": model.root_url,
                "OPENAI_BASE_URL": model.base_url,
                "ANTHROPIC_BASE_URL": model.root_url,
                "GOOGLE_GEMINI_BASE_URL": model.root_url,
                "SAMPLE_WEATHER_URL": weather,
                "SAMPLE_REPORT_URL": report,
                "SAMPLE_ARCHIVE_URL": archive,
                "SAMPLE_DB": str(database),
                "SAMPLE_SCRIPT": case.script,
            }
        )
        env.update(case.env)
        if entry.framework.runtime == "node":
            command = ["node", str(entry.folder / entry.framework.entry), *case.args]
        else:
            python = runtime / "bin" / "python"
            command = [str(python), str(entry.folder / entry.framework.entry), *case.args]
            env["PATH"] = f"{runtime / 'bin'}{os.pathsep}{env.get('PATH', '')}"
        if case.watch:  # this checkout's command, as a user runs it: watched from line one
            command = [sys.executable, "-m", "rampart_otel.cli", "watch", "--", *command]
        result = subprocess.run(
            command,
            cwd=scratch,
            env=env,
            capture_output=True,
            text=True,
            timeout=case.timeout,
        )
        if result.returncode != 0:
            tail = (result.stderr or result.stdout)[-3000:]
            raise RuntimeError(f"{entry.file_name(case)}: exit {result.returncode}\n{tail}")
        time.sleep(0.5)  # a last export still in flight after the process flushed
        tmp = out.with_suffix(".jsonl.tmp")
        sink.write(tmp)
        try:
            spans = check_file(tmp)
        except Exception:
            tmp.unlink(missing_ok=True)
            raise
        tmp.replace(out)
        return out, spans


def readme(entry: Entry, versions: dict[str, str]) -> str:
    framework = entry.framework
    recorded = ", ".join(f"`{name}` {version}" for name, version in sorted(versions.items()))
    rows = "\n".join(
        f"| `{entry.file_name(case)}` | {case.case} | {case.what} |" for case in entry.cases
    )
    return (
        f"# {framework.title} ({framework.instrumentation})\n\n"
        f"Recorded from the real library by `python samples/record_frameworks.py --only "
        f"{entry.name}`; the agent is `samples/frameworks/{entry.name}/`, whose README says "
        "where each fact sits in these spans.\n\n"
        f"Recorded with: {recorded or 'versions unknown'}.\n\n"
        "| file | case | what it shows |\n|---|---|---|\n"
        + rows
        + "\n"
        + (f"\n{framework.traces_note}\n" if framework.traces_note else "")
    )


def record_framework(entry: Entry, cases: list[Case], out_root: Path) -> list[str]:
    out_dir = out_root / entry.name
    out_dir.mkdir(parents=True, exist_ok=True)
    runtime = ensure_runtime(entry)
    lines: list[str] = []
    for case in cases:
        path, spans = record_case(entry, case, runtime, out_dir)
        lines.append(f"{path.relative_to(REPO) if path.is_relative_to(REPO) else path}: {spans}")
    if len(cases) == len(entry.cases):
        versions = installed_versions(entry, runtime)
        (out_dir / "README.md").write_text(readme(entry, versions), encoding="utf-8")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=TRACES)
    parser.add_argument(
        "--only", action="append", default=[], help="substring of a framework or file name"
    )
    parser.add_argument("--jobs", type=int, default=2, help="frameworks recorded at once")
    parser.add_argument("--list", action="store_true")
    args = parser.parse_args(argv)

    plan: list[tuple[Entry, list[Case]]] = []
    for entry in discover():
        cases = [
            case
            for case in entry.cases
            if not args.only
            or any(o in entry.name or o in entry.file_name(case) for o in args.only)
        ]
        if cases:
            plan.append((entry, cases))
    if args.list:
        for entry, cases in plan:
            for case in cases:
                print(f"{entry.name}/{entry.file_name(case)}: {case.what}")
        return 0
    failures = 0
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = {e.name: pool.submit(record_framework, e, c, args.out) for e, c in plan}
        for name, future in futures.items():
            try:
                for line in future.result():
                    print(line)
            except Exception as exc:  # report every framework, then fail
                failures += 1
                print(f"error: {name}: {exc}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
