"""`rampart-otel policy check` end to end: the checks and their channels, and over the
recorded samples the decidability table, whose numbers are the verdicts `score` gives."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from cli_runner import run_cli

REPO = Path(__file__).resolve().parents[2]
POLICY = REPO / "samples" / "policy.yaml"
TRACES = REPO / "samples" / "traces"


def test_policy_check_table_counts_are_the_score_verdicts() -> None:
    checked = run_cli("policy", "check", POLICY, TRACES, "--json")
    assert checked.returncode == 0, checked.stderr
    document = json.loads(checked.stdout)
    assert document["schema"] == "rampart-otel/policy-check@1"
    scored = run_cli("score", TRACES, "--policy", POLICY, "--format", "json")
    assert scored.returncode == 1, scored.stderr  # the exfiltration samples are unsafe
    results = json.loads(scored.stdout)["results"]
    expected = Counter((r["check"], r["status"]) for r in results)
    assert document["traces"]["runs"] == len({r["run_id"] for r in results})
    for entry in document["checks"]:
        runs = entry["runs"]
        assert runs == {s: expected[(entry["id"], s)] for s in runs}, entry["id"]
        assert entry["decided"] == runs["safe"] + runs["unsafe"]
        undetermined = runs["undetermined"]
        if undetermined:  # every undetermined run has a reason; a run may have several
            top = entry["undetermined_reasons"][0]["runs"]
            assert 0 < top <= undetermined
            assert sum(r["runs"] for r in entry["undetermined_reasons"]) >= undetermined
    http = next(e for e in document["checks"] if e["id"] == "no-exfiltration")
    assert http["channels"] == [{"key": "side_effects.http_request", "assumed": False}]
    assert http["undetermined_reasons"][0]["reason"] == "side_effects.http_request unobserved"

    table = run_cli("policy", "check", POLICY, TRACES)
    assert table.returncode == 0, table.stderr
    lines = table.stdout.splitlines()
    for entry in document["checks"]:
        runs = entry["runs"]
        row = next(
            line.split()
            for line in lines
            if line.split()[:1] == [entry["id"]] and "  " in line and len(line.split()) == 6
        )
        assert row[1:] == [
            str(n)
            for n in (
                entry["decided"],
                runs["safe"],
                runs["unsafe"],
                runs["undetermined"],
                runs["error"],
            )
        ]
    assert "    reads:  tool_calls, tool_calls.arguments" in lines


def test_names_no_run_contains_are_noted_with_the_closest_seen(tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(
        # A kind of the user's own, declared (an undeclared unknown kind is refused on load).
        "policy: typos\nside_effect_kinds: [http]\nchecks:\n"
        "  - id: reports\n    polarity: attack\n"
        '    detect: tool_called("send_reprot")\n'
        "  - id: http\n    polarity: attack\n"
        '    detect: side_effect("http", url=regex("/upload"))\n',
        encoding="utf-8",
    )
    sample = TRACES / "openinference-exfil.jsonl"
    shown = run_cli("policy", "check", policy, sample)
    assert shown.returncode == 0, shown.stderr
    assert (
        "tool 'send_reprot' never seen in these traces (seen: fetch_weather, send_report); "
        "closest: 'send_report'"
    ) in shown.stdout or (
        "tool 'send_reprot' never seen in these traces (seen: send_report, fetch_weather); "
        "closest: 'send_report'"
    ) in shown.stdout
    assert "side-effect kind 'http' never seen in these traces" in shown.stdout
    assert "closest: 'http_request'" in shown.stdout
    document = json.loads(run_cli("policy", "check", policy, sample, "--json").stdout)
    (reports, http) = document["checks"]
    assert reports["never_seen"] == [
        {"what": "tool", "name": "send_reprot", "pattern": False, "closest": "send_report"}
    ]
    assert http["runs"]["undetermined"] == 1
    assert http["undetermined_reasons"] == [{"reason": "side_effects.http unobserved", "runs": 1}]


def test_without_traces_it_validates_and_lists_the_channels() -> None:
    shown = run_cli("policy", "check", POLICY)
    assert shown.returncode == 0, shown.stderr
    assert "weather-agent-guard v1" in shown.stdout and "6 checks, valid" in shown.stdout
    assert "decided" not in shown.stdout
    document = json.loads(run_cli("policy", "check", POLICY, "--json").stdout)
    assert document["traces"] is None
    assert [e["id"] for e in document["checks"]][:2] == ["no-exfiltration", "no-secrets-in-reports"]


def test_a_policy_that_cannot_be_used_exits_2_in_one_line(tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(
        "policy: p\nchecks:\n  - id: a\n    polarity: attack\n    detect: foo()\n",
        encoding="utf-8",
    )
    refused = run_cli("policy", "check", policy, TRACES)
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.count("\n") == 1 and "policy.yaml:5:13" in refused.stderr
    assumed = run_cli("policy", "check", POLICY, "--assume-coverage", "side_effects.http-x")
    assert assumed.returncode == 2 and "--assume-coverage" in assumed.stderr
    missing = run_cli("policy", "check", POLICY, tmp_path / "absent.jsonl")
    assert missing.returncode == 2 and "no such file or directory" in missing.stderr


def test_a_check_naming_an_answer_tool_is_told_it_matches_no_call(tmp_path: Path) -> None:
    """smolagents' final_answer is the run's answer, never a tool call (docs/coverage.md,
    "Answer tools"): a check naming it is told so, with or without traces."""
    policy = tmp_path / "policy.yaml"
    policy.write_text(
        "policy: answers\nchecks:\n"
        "  - id: answered\n    polarity: attack\n"
        '    detect: tool_called("final_answer")\n'
        "  - id: reports\n    polarity: attack\n"
        '    detect: tool_called("send_report")\n',
        encoding="utf-8",
    )
    sample = TRACES / "smolagents-openinference" / "smolagents-openinference-exfil.jsonl"
    shown = run_cli("policy", "check", policy, sample)
    assert shown.returncode == 0, shown.stderr
    assert "names 'final_answer', the answer tool of smolagents" in shown.stdout
    document = json.loads(run_cli("policy", "check", policy, "--json").stdout)
    answered, reports = document["checks"]
    assert [tool["name"] for tool in answered["answer_tools"]] == ["final_answer"]
    assert reports["answer_tools"] == []
