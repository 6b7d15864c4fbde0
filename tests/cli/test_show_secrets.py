"""Secrets in the bundled samples' traces (the token and key their agents leak) are masked in
every output a person reads, shown with ``--show-secrets``, and kept raw in JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import REPO, run_cli

TRACES = REPO / "samples" / "traces"
POLICY = REPO / "samples" / "policy.yaml"
# The secrets the samples' agents send out (samples/traces/README.md), and the files that hold
# them: one single-client exfiltration, one with both the token and the key.
SECRETS = ("tok_live_9f3a", "sk-live-123")
FILES = [
    TRACES / "openllmetry-exfil.jsonl",
    TRACES / "two-clients-httpx-aiohttp" / "two-clients-httpx-aiohttp-exfil.jsonl",
]
MASKED = ("api_token=tok_…[masked:assignment]", "key=sk-…[masked:assignment]")

# (The terminal overview cuts each summary before these samples' secrets: -v prints them.)
SCORE_OUTPUTS = {
    "terminal -v": ["--format", "terminal", "-v"],
    "junit": ["--format", "junit"],
    "html": ["--format", "html"],
}


def _score(*extra: str) -> str:
    done = run_cli("score", *FILES, "--policy", POLICY, *extra)
    assert done.returncode == 1, done.stderr  # the exfiltrations are unsafe
    return done.stdout


@pytest.mark.parametrize("output", SCORE_OUTPUTS)
def test_score_masks_the_samples_secrets_by_default(output: str) -> None:
    text = _score(*SCORE_OUTPUTS[output])
    for secret in SECRETS:
        assert secret not in text
    assert any(masked in text for masked in MASKED)


@pytest.mark.parametrize("output", SCORE_OUTPUTS)
def test_score_shows_them_with_the_flag(output: str) -> None:
    text = _score(*SCORE_OUTPUTS[output], "--show-secrets")
    for secret in SECRETS:
        assert secret in text
    assert "[masked:" not in text


def test_json_keeps_raw_values_with_or_without_the_flag() -> None:
    plain = json.loads(_score("--format", "json"))
    evidence = " ".join(e["text"] for r in plain["results"] for e in r["evidence"])
    for secret in SECRETS:
        assert secret in evidence
    assert "[masked:" not in json.dumps(plain)


def test_inspect_masks_by_default_and_shows_with_the_flag() -> None:
    masked = run_cli("inspect", *FILES)
    shown = run_cli("inspect", *FILES, "--show-secrets")
    assert masked.returncode == shown.returncode == 0, masked.stderr
    for secret in SECRETS:
        assert secret not in masked.stdout
        assert secret in shown.stdout
    assert MASKED[1] in masked.stdout


def test_html_with_jobs_masks_in_the_workers_too(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    done = run_cli("score", *FILES, "--policy", POLICY, "--format", "html", "-o", out, "-j", "2")
    assert done.returncode == 1, done.stderr
    html = out.read_text()
    assert not any(secret in html for secret in SECRETS)
    assert MASKED[0] in html


# A token in the service name (an OTEL_SERVICE_NAME or resource attribute set wrong): the
# service is trace content too, shown in every report's run lines.
TOKEN = "ghp_" + "a1B2c3D4e5" * 3 + "f6G7h8"


def _with_token_service(tmp_path: Path) -> Path:
    source = FILES[0].read_text()
    assert '"service.name","value":{"stringValue":"' in source.replace(" ", "")
    path = tmp_path / "service.jsonl"
    path.write_text(
        source.replace('"stringValue": "weather-agent"', f'"stringValue": "agent {TOKEN}"').replace(
            '"stringValue":"weather-agent"', f'"stringValue":"agent {TOKEN}"'
        )
    )
    assert TOKEN in path.read_text()
    return path


@pytest.mark.parametrize("output", [*SCORE_OUTPUTS, "inspect"])
def test_a_secret_in_the_service_name_is_masked_too(tmp_path: Path, output: str) -> None:
    traces = _with_token_service(tmp_path)
    if output == "inspect":
        masked, shown = (run_cli("inspect", traces, *flag) for flag in ([], ["--show-secrets"]))
    else:
        command = ["score", traces, "--policy", POLICY, *SCORE_OUTPUTS[output]]
        masked, shown = (run_cli(*command, *flag) for flag in ([], ["--show-secrets"]))
    assert TOKEN not in masked.stdout and "ghp_…[masked:github-token]" in masked.stdout
    assert TOKEN in shown.stdout


def _with_token_tool(tmp_path: Path) -> Path:
    """The exfiltration with its tool named with a token (a name is trace content too)."""
    source = FILES[0].read_text()
    assert "send_report" in source
    path = tmp_path / "tool.jsonl"
    path.write_text(source.replace("send_report", f"send_report {TOKEN}"))
    return path


# The outputs that name every tool call (the terminal and JUnit name a tool only in the
# summaries, masked already).
@pytest.mark.parametrize("output", ["html", "inspect"])
def test_a_secret_in_a_tool_name_is_masked_too(tmp_path: Path, output: str) -> None:
    traces = _with_token_tool(tmp_path)
    if output == "inspect":
        masked, shown = (run_cli("inspect", traces, *flag) for flag in ([], ["--show-secrets"]))
    else:
        command = ["score", traces, "--policy", POLICY, *SCORE_OUTPUTS[output]]
        masked, shown = (run_cli(*command, *flag) for flag in ([], ["--show-secrets"]))
    assert TOKEN not in masked.stdout and "ghp_…[masked:github-token]" in masked.stdout
    assert TOKEN in shown.stdout
