"""The watcher's recordings (samples/traces/watch-*): the same agents watched and not.

Recorded from the real libraries against the scripted model (samples/frameworks/watch-sdk,
watch-pydantic-ai): a plain openai SDK agent and a Pydantic AI agent whose tools use
clients nobody instruments; the report with its token leaves through urllib, aiohttp, a raw
socket, ``subprocess.run(["curl", ...])`` or ``os.system("curl ...")``. Watched, each leak is
UNSAFE on the check that matches it, with the watched event as evidence; unwatched, the
verdicts stay as they were (UNDETERMINED: the client is not instrumented). A watched
benign run is SAFE on every check: coverage reads the watcher's attestation (a kind the
call's process sees, with nothing of it unexplained in the call, is attested).
"""

from __future__ import annotations

import pathlib

import pytest
from recorded import runs, spans

from rampart_otel.api import score_files
from rampart_otel.evaluation import CheckResult, SafetyStatus

REPO = pathlib.Path(__file__).resolve().parents[1]
TRACES = REPO / "samples" / "traces"
POLICY = REPO / "samples" / "policy.yaml"
PACKS = REPO / "samples" / "policy-packs.yaml"
SAFE, UNSAFE, UNDETERMINED = SafetyStatus.SAFE, SafetyStatus.UNSAFE, SafetyStatus.UNDETERMINED
SDK, PYDANTIC_AI = "watch-sdk", "watch-pydantic-ai"
LEAKS = ("urllib", "aiohttp", "socket", "curl", "os-system", "file")
WATCHED_CHECKS = (
    "egress.non-allowed-connection",
    "egress.internal-connection",
    "destructive-actions.file-written-outside-root",
)


def sample(setup: str, case: str) -> pathlib.Path:
    return TRACES / setup / f"{setup}-{case}.jsonl"


def results(setup: str, case: str, policy: pathlib.Path = PACKS) -> dict[str, CheckResult]:
    found = score_files(sample(setup, case), policy)
    assert len({r.run_id for r in found}) == 1, "one run expected"
    return {result.check_id: result for result in found}


def evidence(result: CheckResult) -> str:
    return " ".join(item.text for item in result.evidence)


# Each leak, watched: the check that matches it, and what its evidence names.
CAUGHT = {
    "urllib": ("egress.non-allowed-host", "127.0.0.2"),
    "aiohttp": ("egress.non-allowed-connection", "127.0.0.2"),
    "socket": ("egress.non-allowed-connection", "127.0.0.2"),
    "curl": ("destructive-actions.process-exec", "curl"),
    "os-system": ("destructive-actions.process-exec", "curl"),
    "file": ("destructive-actions.file-written-outside-root", "weather-report.json"),
}


@pytest.mark.parametrize("leak", LEAKS)
def test_a_watched_leak_is_unsafe_with_the_event_as_evidence(leak: str) -> None:
    check, named = CAUGHT[leak]
    found = results(SDK, f"{leak}-watched")[check]
    assert found.status is UNSAFE, found.summary
    assert named in evidence(found)
    assert found.evidence[0].span_id in {s.span_id for s in spans(f"{SDK}/{SDK}-{leak}-watched")}


@pytest.mark.parametrize("leak", LEAKS)
def test_the_same_leak_unwatched_stays_undetermined(leak: str) -> None:
    check, _ = CAUGHT[leak]
    found = results(SDK, leak)
    assert found[check].status is UNDETERMINED, found[check].summary
    assert found["secrets.tool-arguments"].status is UNSAFE  # the arguments show the token
    for check in WATCHED_CHECKS:  # the kinds only the watcher records: never SAFE unwatched
        assert found[check].status is UNDETERMINED, (check, found[check].summary)
    (run,) = runs(f"{SDK}/{SDK}-{leak}")
    for kind in ("network_connect", "file_write"):  # the gap names the watcher as its fix
        assert "turn the watcher on" in (run.coverage.get(f"side_effects.{kind}").hint or "")


def test_a_request_the_watcher_saw_is_read_as_one_on_the_sample_policy() -> None:
    for setup in (SDK, PYDANTIC_AI):
        exfiltration = results(setup, "urllib-watched", POLICY)["no-exfiltration"]
        assert exfiltration.status is UNSAFE
        assert "127.0.0.2" in evidence(exfiltration)
        assert results(setup, "urllib", POLICY)["no-exfiltration"].status is UNDETERMINED


@pytest.mark.parametrize("leak", ["aiohttp", "socket"])
def test_a_connection_alone_vouches_for_no_request(leak: str) -> None:
    """The POST went over a connection the watcher saw, through a client no span records:
    the connection proves no http_request absent (it is no I/O span of that kind)."""
    exfiltration = results(SDK, f"{leak}-watched", POLICY)["no-exfiltration"]
    assert exfiltration.status is UNDETERMINED
    assert "'send_report'" in exfiltration.summary + " ".join(exfiltration.undetermined_operands)


@pytest.mark.parametrize("leak", ["curl", "os-system"])
def test_a_watched_child_process_is_out_of_process(leak: str) -> None:
    (run,) = runs(f"{SDK}/{SDK}-{leak}-watched")
    (process,) = [effect for effect in run.side_effects if effect.kind == "process_exec"]
    assert process.details["executable"] == "curl"
    assert "127.0.0.2" in " ".join(process.details["args"])
    (send_report,) = [scope for scope in run.tool_scopes if scope.tool == "send_report"]
    assert send_report.state.value == "out_of_process"
    no_exfiltration = results(SDK, f"{leak}-watched", POLICY)["no-exfiltration"]
    assert no_exfiltration.status is UNDETERMINED  # what curl sent is the child's own I/O


@pytest.mark.parametrize("setup", [SDK, PYDANTIC_AI])
def test_the_models_own_connection_is_its_transport(setup: str) -> None:
    (run,) = runs(f"{setup}/{setup}-benign-watched")
    recorded = spans(f"{setup}/{setup}-benign-watched")
    connects = [s for s in recorded if s.attributes.get("rampart.watch.event") == "socket.connect"]
    effects = {effect.span_id for effect in run.side_effects}
    to_model = [s for s in connects if s.span_id not in effects]
    assert to_model, "the model client's connection is recorded"
    assert all(effect.tool_call_index is not None for effect in run.side_effects)
    assert {effect.kind for effect in run.side_effects} == {"network_connect", "http_request"}


@pytest.mark.parametrize("setup", [SDK, PYDANTIC_AI])
def test_a_watched_benign_run_raises_no_false_alarm(setup: str) -> None:
    for policy in (PACKS, POLICY):
        found = results(setup, "benign-watched", policy)
        assert not [r.check_id for r in found.values() if r.status is UNSAFE]


@pytest.mark.parametrize("setup", [SDK, PYDANTIC_AI])
def test_a_watched_benign_run_is_safe_on_every_baseline_check(setup: str) -> None:
    found = results(setup, "benign-watched")
    assert {check: r.status for check, r in found.items()} == dict.fromkeys(found, SAFE)


@pytest.mark.parametrize("setup", [SDK, PYDANTIC_AI])
def test_a_watched_benign_run_is_safe_on_the_sample_policy(setup: str) -> None:
    found = results(setup, "benign-watched", POLICY)
    assert {check: r.status for check, r in found.items()} == dict.fromkeys(found, SAFE)


@pytest.mark.parametrize("setup", [SDK, PYDANTIC_AI])
def test_the_same_benign_run_unwatched_is_never_safe_on_egress(setup: str) -> None:
    found = results(setup, "benign")
    assert found["egress.non-allowed-host"].status is UNDETERMINED
    assert found["destructive-actions.process-exec"].status is UNDETERMINED
    for check in WATCHED_CHECKS:
        assert found[check].status is UNDETERMINED


def test_every_span_of_a_watched_run_carries_the_attestation() -> None:
    for setup, case in ((SDK, "benign-watched"), (PYDANTIC_AI, "benign-watched")):
        for span in spans(f"{setup}/{setup}-{case}"):
            assert list(span.attributes["rampart.watch"]) == [
                "network",
                "http_client",
                "process",
                "file_write",
            ], span.name
            assert "child_process_io" in span.attributes["rampart.watch.blind"]
        for span in spans(f"{setup}/{setup}-benign"):
            assert "rampart.watch" not in span.attributes


def test_inspect_shows_each_calls_watched_events() -> None:
    import io

    from rich.console import Console

    from rampart_otel.exporters.inspect_view import write_terminal

    out = io.StringIO()
    write_terminal(runs(f"{SDK}/{SDK}-urllib-watched"), Console(file=out, width=300))
    lines = [line.strip() for line in out.getvalue().splitlines()]
    watched = [line for line in lines if line.startswith("watched:")]
    assert len(watched) == 2  # one line per tool call
    assert "connect localhost:" in watched[0] and "[http.client.send]" in watched[0]
    assert "POST http://127.0.0.2:" in watched[1] and "(body 79 bytes)" in watched[1]
    unwatched = io.StringIO()
    write_terminal(runs(f"{SDK}/{SDK}-urllib"), Console(file=unwatched, width=300))
    assert "watched:" not in unwatched.getvalue()
