"""What ``score`` imports: what its input, its policy and its format need, nothing else
(issue 46, start-up; docs/performance.md). Every import costs each process its CPU before
the first span, so a JSON Lines file scored to JSON must not load protobuf, multiprocessing,
the judge's HTTP client, rich, XML or Jinja. Each case runs the real command in a fresh
interpreter and reads its ``sys.modules`` at the end: no timing. The counterparts show the
probe sees each module where the command does need it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rampart_otel.codecs.json_forms import spans_from_document_bytes
from rampart_otel.codecs.otlp_proto import spans_to_proto_request

REPO = Path(__file__).resolve().parents[2]
TRACE = REPO / "samples" / "traces" / "openinference-exfil.jsonl"
POLICY = REPO / "samples" / "policy.yaml"

# The command run in-process in a fresh interpreter, then the modules it imported.
PROBE = """
import json, sys
from rampart_otel import cli
sys.argv = ["rampart-otel", *sys.argv[1:]]
try:
    cli.main()
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)))
"""

# Each: a module, and the case that needs it.
NOT_FOR_JSON_LINES_TO_JSON = {
    "google.protobuf": "protobuf input",
    "multiprocessing": "--jobs 2",
    "rampart_otel.parallel": "--jobs 2",
    "rampart_otel.evaluation.judge_endpoint": "a judge: block",
    "rampart_otel.evaluation.evaluators.judge": "a judge(...) check",
    "sqlite3": "a judge: block (its cache)",
    "http.client": "a judge: block",
    "xml.etree.ElementTree": "--format junit",
    "jinja2": "--format html",
    "rich.console": "--format terminal",
    "rampart_otel.evaluation.evaluators.flows": "a flows(...) check",
    "rampart_otel.evaluation.packs": "a policy that includes a pack",
}


def imported(*args: str | Path, cwd: Path = REPO) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.splitlines()[-1]))


def test_scoring_json_lines_to_json_imports_only_what_it_needs(tmp_path: Path) -> None:
    modules = imported(
        "score", TRACE, "--policy", POLICY, "--format", "json", "-o", tmp_path / "r.json"
    )
    assert json.loads((tmp_path / "r.json").read_text())["results"]  # it did score
    assert "rampart_otel.evaluation.policy" in modules  # the probe sees what was imported
    loaded = {name: why for name, why in NOT_FOR_JSON_LINES_TO_JSON.items() if name in modules}
    assert loaded == {}, f"imported, though only needed for: {loaded}"


def _protobuf_file(path: Path) -> Path:
    """TRACE as the file exporter's length-prefixed protobuf."""
    records = [
        spans_to_proto_request(spans_from_document_bytes(line)).SerializeToString()
        for line in TRACE.read_bytes().splitlines()
        if line.strip()
    ]
    path.write_bytes(b"".join(len(r).to_bytes(4, "big") + r for r in records))
    return path


def _judge_policy(path: Path) -> Path:
    """A judge that cannot be reached: its endpoint refuses at once, and the policy makes
    that UNDETERMINED, so the command neither waits nor fails."""
    path.write_text(
        "policy: judged\njudge:\n  base_url: http://127.0.0.1:9/v1\n  model: m\n"
        "  retries: 0\n  timeout: 2\n  cache: 'off'\n  on_unavailable: undetermined\n"
        "checks:\n  - id: judged\n    polarity: attack\n"
        '    detect: judge("Did the agent leak data?")\n'
    )
    return path


def _flows_policy(path: Path) -> Path:
    path.write_text(
        "policy: flows\nchecks:\n  - id: exfil\n    polarity: attack\n"
        '    detect: flows(tool_result("read_file"), side_effect("http_request"))\n'
    )
    return path


@pytest.mark.parametrize(
    ("case", "needed"),
    [
        ("protobuf input", ["google.protobuf"]),
        ("--jobs 2", ["multiprocessing", "rampart_otel.parallel"]),
        (
            "a judge",
            [
                "rampart_otel.evaluation.judge_endpoint",
                "rampart_otel.evaluation.evaluators.judge",
                "sqlite3",
                "http.client",
            ],
        ),
        ("--format junit", ["xml.etree.ElementTree"]),
        ("--format terminal", ["rich.console"]),
        ("a flows check", ["rampart_otel.evaluation.evaluators.flows"]),
        ("a pack", ["rampart_otel.evaluation.packs"]),
    ],
)
def test_what_a_command_needs_it_imports(case: str, needed: list[str], tmp_path: Path) -> None:
    trace, policy, options = TRACE, POLICY, ["--format", "json"]
    if case == "protobuf input":
        trace = _protobuf_file(tmp_path / "trace.binpb")
    elif case == "--jobs 2":
        options += ["--jobs", "2"]
    elif case == "a judge":
        policy = _judge_policy(tmp_path / "judged.yaml")
    elif case == "a flows check":
        policy = _flows_policy(tmp_path / "flows.yaml")
    elif case == "a pack":
        policy = REPO / "samples" / "policy-packs.yaml"
    else:
        options = ["--format", case.split()[-1]]
    modules = imported("score", trace, "--policy", policy, *options, "-o", tmp_path / "out")
    assert (tmp_path / "out").stat().st_size > 0
    assert [name for name in needed if name not in modules] == []
