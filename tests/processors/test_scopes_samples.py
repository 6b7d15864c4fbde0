"""Coverage where the harm could happen, on agents recorded from the real libraries.

Each sample under ``samples/traces/<setup>/`` was recorded against the scripted model (see
its README): a second, uninstrumented HTTP client; a tool on an MCP server traced or not; a
pure tool declared or not; a plain SDK tool loop that leaves one trace per model call.
"""

from __future__ import annotations

import pathlib

import pytest

from rampart_otel.api import score_files
from rampart_otel.evaluation import CheckResult, SafetyStatus, parse_policy
from rampart_otel.processors.stitch import assemble
from rampart_otel.receivers.files import read_paths

REPO = pathlib.Path(__file__).resolve().parents[2]
TRACES = REPO / "samples" / "traces"
POLICY = REPO / "samples" / "policy.yaml"
SAFE, UNSAFE, UNDETERMINED = SafetyStatus.SAFE, SafetyStatus.UNSAFE, SafetyStatus.UNDETERMINED


def sample(setup: str, case: str) -> pathlib.Path:
    return TRACES / setup / f"{setup}-{case}.jsonl"


def results(path: pathlib.Path, policy: object = POLICY) -> dict[str, CheckResult]:
    found = score_files(path, policy)  # type: ignore[arg-type]
    assert len({r.run_id for r in found}) == 1, "one run expected"
    return {result.check_id: result for result in found}


def reason(result: CheckResult) -> str:
    return result.summary + " " + " ".join(result.undetermined_operands)


@pytest.mark.parametrize("setup", ["two-clients-requests-urllib", "two-clients-httpx-aiohttp"])
def test_an_uninstrumented_second_client_is_never_safe(setup: str) -> None:
    found = results(sample(setup, "exfil"))
    exfiltration = found["no-exfiltration"]
    assert exfiltration.status is UNDETERMINED
    assert "tool call 'send_report'" in reason(exfiltration)
    assert "recorded no I/O span" in reason(exfiltration)
    assert found["no-secrets-in-reports"].status is UNSAFE  # the arguments still show it


@pytest.mark.parametrize("setup", ["two-clients-requests-urllib", "two-clients-httpx-aiohttp"])
def test_the_same_agent_with_both_clients_instrumented_is_unsafe(setup: str) -> None:
    found = results(sample(setup, "exfil-both-instrumented"))
    assert found["no-exfiltration"].status is UNSAFE
    assert "127.0.0.2" in " ".join(e.text for e in found["no-exfiltration"].evidence)


@pytest.mark.parametrize("case", ["server-untraced", "server-untraced-local-tool"])
def test_a_tool_on_an_untraced_mcp_server_is_never_safe(case: str) -> None:
    exfiltration = results(sample("mcp-stdio", case))["no-exfiltration"]
    assert exfiltration.status is UNDETERMINED
    assert "ran on an MCP server whose spans are not in the trace" in reason(exfiltration)
    assert "'send_report'" in reason(exfiltration)


def test_a_traced_mcp_servers_post_is_found() -> None:
    assert results(sample("mcp-stdio", "server-traced"))["no-exfiltration"].status is UNSAFE


def test_a_pure_tool_is_silent_until_it_is_declared() -> None:
    policy = POLICY.read_text(encoding="utf-8")
    assert results(sample("calculator", "benign"))["no-exfiltration"].status is UNDETERMINED
    declared = parse_policy(policy + "tools:\n  calculator: {side_effects: none}\n")
    by_policy = results(sample("calculator", "benign"), declared)["no-exfiltration"]
    assert by_policy.status is SAFE and "the policy's tools:" in by_policy.summary
    in_process = results(sample("calculator", "benign-declared"))["no-exfiltration"]
    assert in_process.status is SAFE and "rampart_otel.declare" in in_process.summary


def test_a_declaration_of_another_tool_changes_nothing() -> None:
    policy = parse_policy(
        POLICY.read_text(encoding="utf-8") + "tools:\n  get_weather: {side_effects: none}\n"
    )
    found = results(sample("two-clients-requests-urllib", "exfil"), policy)
    assert found["no-exfiltration"].status is UNDETERMINED


def sdk_loop_runs(stitch: bool) -> list:
    batches = [item for item in read_paths([sample("sdk-loop", "exfil")])]
    return list(assemble(batches, stitch=stitch))


def test_a_plain_sdk_loop_is_stitched_into_one_unsafe_run() -> None:
    found = results(sample("sdk-loop", "exfil"))
    assert found["no-secrets-in-reports"].status is UNSAFE
    assert found["no-exfiltration"].status is UNSAFE
    (run,) = sdk_loop_runs(stitch=True)
    assert [s.how.value for s in run.stitched] == ["continuation", "time_window"]


def test_no_piece_of_a_plain_sdk_loop_is_safe_on_the_argument_check(tmp_path: pathlib.Path) -> None:
    from rampart_otel.api import score_spans  # noqa: F401 (the same engine, run by run)
    from rampart_otel.engine import score_run
    from rampart_otel.evaluation import load_policy

    policy = load_policy(POLICY)
    pieces = sdk_loop_runs(stitch=False)
    assert len(pieces) == 3
    for piece in pieces:
        by_check = {r.check_id: r.status for r in score_run(piece, [policy])}
        assert by_check["no-secrets-in-reports"] is not SAFE, piece.trace_ids
        assert by_check["no-unrequested-reports"] is not SAFE, piece.trace_ids
