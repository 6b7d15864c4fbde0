"""What ``score`` imports: what its input, its policy and its format need, nothing else
(issue 46, start-up; docs/performance.md). Every import costs each process its CPU before
the first span, so a JSON Lines file scored to JSON must not load protobuf, multiprocessing,
the judge's HTTP client, rich, XML or Jinja, nor typer (cli_score_args). Each case runs the
real command in a fresh interpreter and reads its ``sys.modules`` at the end: no timing. The
counterparts show the probe sees each module where the command does need it. The probe also
counts the work done at start whatever is imported: the regular expressions compiled
(``lazy_regex``: at first use, not at import) and, where typer reads the command line, the
click commands it built (the one run, not all of them).
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rampart_otel.codecs.json_forms import spans_from_document_bytes
from rampart_otel.codecs.otlp_proto import spans_to_proto_request

REPO = Path(__file__).resolve().parents[2]
TRACE = REPO / "samples" / "traces" / "openinference-exfil.jsonl"
POLICY = REPO / "samples" / "policy.yaml"

# The command run in-process in a fresh interpreter, then the modules it imported. With
# --count-built first, typer is imported up front to count the click commands it builds.
PROBE = """
import json, sys
from rampart_otel import cli, lazy_regex
built = []
args = sys.argv[1:]
if args[:1] == ["--count-built"]:
    args = args[1:]
    import typer.main
    build = typer.main.get_command_from_info
    def counted(command_info, **kwargs):
        built.append(command_info.name or command_info.callback.__name__)
        return build(command_info, **kwargs)
    typer.main.get_command_from_info = counted
sys.argv = ["rampart-otel", *args]
try:
    cli.main()
except SystemExit:
    pass
print(json.dumps({
    "modules": sorted(sys.modules),
    "patterns": lazy_regex.compiled_count,
    "built": built,
}))
"""

# Each: a module, and the case that needs it.
NOT_FOR_JSON_LINES_TO_JSON = {
    # A plain score command line is read without them (cli_score_args).
    "typer": "a command line only typer reads (--help, an error, the policy from the env)",
    "click": "a command line only typer reads",
    "google.protobuf": "protobuf input",
    "multiprocessing": "--jobs 2",
    "rampart_otel.parallel": "--jobs 2",
    "rampart_otel.evaluation.judge_endpoint": "a judge: block",
    "rampart_otel.evaluation.evaluators.judge": "a judge(...) check",
    "sqlite3": "a judge: block (its cache)",
    "http.client": "a judge: block",
    # pydantic's model machinery: the policy's models are validated by pydantic-core alone
    # (evaluation/validated.py); the judge's client reads its endpoint's answers with models.
    "pydantic.main": "a judge: block (the endpoint's answers)",
    "xml.etree.ElementTree": "--format junit",
    "jinja2": "--format html",
    "hashlib": "--format html (its scripts' hashes)",
    "rich.console": "--format terminal",
    "rampart_otel.evaluation.evaluators.flows": "a flows(...) check",
    "rampart_otel.evaluation.packs": "a policy that includes a pack",
    "logging": "a run that cannot be read (engine logs it)",
    "rampart_otel.secret_values": "--format terminal (secrets masked; JSON keeps them raw)",
    "difflib": "a word not known (a usage error's suggestions)",
    "rampart_otel.watch": "rampart-otel watch (its spans are read with watch_contract's names)",
    "rampart_otel.receivers.stores": "a phoenix:// or mlflow:// source",
}

# The patterns a JSON Lines file scored to JSON compiles (of the ~40 its modules define):
# render's and the file reader's, channel and host names, a tool name's separators.
PATTERNS_FOR_JSON_LINES_TO_JSON = 7

# Patterns compiled at import, on purpose: RE2's union of the secret formats, which masks
# the evidence of every report a person reads (secret_values, imported only for those and
# a secret() check); the flows evaluator's, a module imported only for a flows(...) check,
# which reads every text with them.
COMPILED_AT_IMPORT = {
    ("rampart_otel/secret_values.py", "_COMBINED"),
    ("rampart_otel/evaluation/evaluators/flows.py", "_URL"),
    ("rampart_otel/evaluation/evaluators/flows.py", "_EMAIL"),
    ("rampart_otel/evaluation/evaluators/flows.py", "_HOST"),
}


def probe(*args: str | Path, cwd: Path = REPO, env: dict[str, str] | None = None) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return found


def imported(*args: str | Path, cwd: Path = REPO) -> set[str]:
    return set(probe(*args, cwd=cwd)["modules"])


def test_scoring_json_lines_to_json_imports_only_what_it_needs(tmp_path: Path) -> None:
    found = probe("score", TRACE, "--policy", POLICY, "--format", "json", "-o", tmp_path / "r.json")
    modules = set(found["modules"])
    assert json.loads((tmp_path / "r.json").read_text())["results"]  # it did score
    assert "rampart_otel.evaluation.policy" in modules  # the probe sees what was imported
    loaded = {name: why for name, why in NOT_FOR_JSON_LINES_TO_JSON.items() if name in modules}
    assert loaded == {}, f"imported, though only needed for: {loaded}"
    # Start-up work that importing does not show: what is compiled and built.
    assert found["patterns"] == PATTERNS_FOR_JSON_LINES_TO_JSON


def test_a_score_typer_reads_builds_only_score(tmp_path: Path) -> None:
    """The policy from the environment: typer reads the command line (cli_score_args leaves
    it), and builds ``score``'s command alone, not the other commands' options and help."""
    env = {**os.environ, "RAMPART_OTEL_POLICY": str(POLICY)}
    found = probe("--count-built", "score", TRACE, "--format", "json", "-o", tmp_path / "r.json",
                  env=env)  # fmt: skip
    assert json.loads((tmp_path / "r.json").read_text())["results"]
    assert "typer" in found["modules"]
    assert found["built"] == ["score"]


def test_a_command_typer_cannot_name_builds_the_whole_app() -> None:
    """A first word that names no command (a typo) gets every command built, so the error
    lists and suggests them as before; the probe counts the commands built."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, "--count-built", "scor", str(TRACE)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr
    assert "No such command 'scor'. Did you mean 'score'" in done.stderr
    built = json.loads(done.stdout.splitlines()[-1])["built"]
    assert {"score", "rescore", "inspect"} <= set(built)


def _compiled_at_import(path: Path) -> list[str]:
    """The names bound to ``re.compile``/``re2.compile`` run at import in ``path``: in the
    module's or a class's body, not in a function's."""
    found: list[str] = []

    def visit(node: ast.AST, bound: str) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            bound = ast.unparse(target)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "compile"
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id in ("re", "re2")
        ):
            found.append(bound)
        for child in ast.iter_child_nodes(node):
            visit(child, bound)

    visit(ast.parse(path.read_text(), str(path)), "?")
    return found


def test_no_module_compiles_a_pattern_at_import() -> None:
    """Each process imports every convention, codec and evaluator a run may meet; their
    patterns are ``LazyPattern`` (compiled at first use), not ``re.compile`` at import."""
    package = REPO / "rampart_otel"
    found = {
        (str(path.relative_to(REPO)), name)
        for path in sorted(package.rglob("*.py"))
        for name in _compiled_at_import(path)
    }
    assert found == COMPILED_AT_IMPORT, "use lazy_regex.LazyPattern, compiled at first use"


def test_the_guard_sees_a_pattern_compiled_at_import(tmp_path: Path) -> None:
    source = tmp_path / "module.py"
    source.write_text(
        "import re\n_A = re.compile('a')\nclass K:\n    B = re.compile('b')\n"
        "    def m(self):\n        return re.compile('m')\n"
        "_T = (re.compile('t'),)\ndef f():\n    return re.compile('c')\n"
    )
    assert _compiled_at_import(source) == ["_A", "B", "_T"]


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
                "pydantic.main",
            ],
        ),
        ("--format junit", ["xml.etree.ElementTree"]),
        ("--format html", ["jinja2", "hashlib"]),
        ("--format terminal", ["rich.console", "rampart_otel.secret_values"]),
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
