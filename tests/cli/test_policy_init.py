"""`rampart-otel policy init`: a starter policy that loads and scores as written, drafted
from recorded traces when given, and never written over an existing file."""

from __future__ import annotations

from pathlib import Path

from cli_runner import run_cli

from rampart_otel.evaluation import parse_policy
from rampart_otel.evaluation.packs.starter import DraftedName, starter_policy

REPO = Path(__file__).resolve().parents[2]
TRACES = REPO / "samples" / "traces"


def test_init_from_the_samples_writes_a_policy_that_scores_without_edits(tmp_path: Path) -> None:
    out = tmp_path / "policy.yaml"
    written = run_cli("policy", "init", "--from", TRACES, "-o", out)
    assert written.returncode == 0, written.stderr
    text = out.read_text(encoding="utf-8")
    # The samples hold attacks: what their flagged runs show is listed, not allowed.
    assert "      allowed_hosts: []  # review: none seen outside flagged runs" in text
    assert '        # - "127.0.0.2": in ' in text
    assert '- "calculator"  # review: seen in 2 runs; files ' in text
    assert "# max_tool_calls: 50" in text  # a parameter left at its default, commented
    scored = run_cli("score", TRACES, "--policy", out, "--format", "json", "-o", tmp_path / "r")
    assert scored.returncode == 1, scored.stderr  # scored; the samples' attacks are UNSAFE


def test_init_never_replaces_a_file_unless_forced(tmp_path: Path) -> None:
    out = tmp_path / "policy.yaml"
    out.write_text("mine\n", encoding="utf-8")
    refused = run_cli("policy", "init", "-o", out)
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines() == [
        f"rampart-otel: error: {out}: already exists; not replaced (--force replaces it)"
    ]
    assert out.read_text(encoding="utf-8") == "mine\n"
    forced = run_cli("policy", "init", "-o", out, "--force")
    assert forced.returncode == 0, forced.stderr
    assert parse_policy(out.read_text(encoding="utf-8")).checks


def test_init_follows_the_rule_every_output_path_does(tmp_path: Path) -> None:
    # --force over the trace file it drafts from would replace the traces with the policy.
    traces = tmp_path / "run.jsonl"
    traces.write_bytes((TRACES / "openllmetry-benign.jsonl").read_bytes())
    refused = run_cli("policy", "init", "--from", traces, "-o", traces, "--force")
    assert (refused.returncode, refused.stdout) == (2, "")
    assert refused.stderr == (
        f"rampart-otel: error: {traces}: is an input trace file; give another path for the policy\n"
    )
    assert traces.read_bytes() == (TRACES / "openllmetry-benign.jsonl").read_bytes()
    directory = tmp_path / "dir"
    directory.mkdir()
    refused = run_cli("policy", "init", "-o", directory, "--force")
    assert refused.stderr == (
        f"rampart-otel: error: {directory}: is a directory; give a file to write the policy to\n"
    )


def test_init_without_traces_prints_the_baseline_with_every_parameter_commented() -> None:
    printed = run_cli("policy", "init")
    assert printed.returncode == 0, printed.stderr
    policy = parse_policy(printed.stdout)
    assert "secrets.tool-arguments" in [check.id for check in policy.checks]
    for name in ("allowed_hosts", "file_root", "max_tool_calls", "allowed_tools"):
        assert f"      # {name}: " in printed.stdout


def test_names_from_traces_are_written_only_as_the_parameter_takes_them() -> None:
    def seen_in(name: str, runs: int) -> DraftedName:
        return DraftedName(name, runs, ("run\n  - pack: x.jsonl",))

    seen = {
        "hosts": [
            seen_in("api.example.com", 2),
            seen_in("evil\n  - pack: x", 1),
            seen_in("https://a.b/", 1),
        ],
        "tools": [seen_in('say "hi"', 1), seen_in("two\nlines", 1)],
    }
    text = starter_policy("p", seen=seen, source="traces\nx", runs=3)
    policy = parse_policy(text)
    tools = policy.check("excessive-agency.unlisted-tool")
    assert repr(tools.detect) == "tool_called(not_in(['say \"hi\"']))"
    assert repr(policy.check("egress.non-allowed-host").detect).endswith(
        "host=not_in(['api.example.com']))"
    )
    assert "# 2 more seen, not valid here (not written)" in text
