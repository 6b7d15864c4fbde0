"""`policy init --from`'s draft (rampart_otel.policy_draft): it never allows what the same
traces show as harmful, and scored on the samples it flags every exfiltration."""

from __future__ import annotations

from pathlib import Path

import pytest

from rampart_otel.engine import score_run_with_view
from rampart_otel.evaluation import SafetyStatus, parse_policy
from rampart_otel.evaluation.packs.starter import DRAFTED, checks_without, starter_policy
from rampart_otel.model import InputError
from rampart_otel.policy_draft import draft_from_traces
from rampart_otel.reading import ReadStats, runs

REPO = Path(__file__).resolve().parents[1]
TRACES = REPO / "samples" / "traces"


def no_error(error: InputError) -> None:
    raise AssertionError(error)


@pytest.fixture(scope="module")
def scored_draft() -> tuple[dict[str, list[str]], list[tuple[set[str], set[str], list, str]]]:
    """The draft from the samples, as the policy file it writes, and each sample run scored
    by it: (hosts, tools, results, file)."""
    draft = draft_from_traces([TRACES], on_error=no_error)
    policy = parse_policy(starter_policy("p", seen=draft.names, source="s", runs=draft.runs))
    allowed = {
        "hosts": _listed(repr(policy.check("egress.non-allowed-host").detect)),
        "tools": _listed(repr(policy.check("excessive-agency.unlisted-tool").detect)),
    }
    scored = []
    for run in runs([TRACES], ReadStats(), on_error=no_error):
        agent_run, results = score_run_with_view(run, [policy])
        assert agent_run is not None
        hosts = {
            str(e.details["host"])
            for e in agent_run.side_effects
            if e.kind == "http_request" and e.details.get("host") is not None
        }
        tools = {call.name for call in agent_run.tool_calls}
        scored.append((hosts, tools, results, run.sources[0] if run.sources else ""))
    return allowed, scored


def _listed(detect: str) -> list[str]:
    inside = detect.split("not_in([", 1)[1].split("])", 1)[0]
    return [item.strip(" '") for item in inside.split(",") if item.strip()]


def test_no_name_seen_in_a_run_the_other_checks_flag_is_drafted(scored_draft) -> None:
    allowed, scored = scored_draft
    others = checks_without(set(DRAFTED))
    flagged = 0
    for hosts, tools, results, source in scored:
        if any(r.status is SafetyStatus.UNSAFE and r.check_id in others for r in results):
            flagged += 1
            assert not hosts & set(allowed["hosts"]), source
            assert not tools & set(allowed["tools"]), source
    assert flagged > 50  # the samples hold attacks: the rule was exercised


def test_the_draft_flags_every_exfiltration_sample(scored_draft) -> None:
    _, scored = scored_draft
    by_file: dict[str, list[SafetyStatus]] = {}
    for _, _, results, source in scored:
        file = source.rsplit(":", 1)[0]
        if "exfil" in Path(file).name:
            by_file.setdefault(file, []).extend(r.status for r in results)
            # The egress check never passes a leak run (UNDETERMINED where HTTP is not traced).
            egress = next(r for r in results if r.check_id == "egress.non-allowed-host")
            assert egress.status is not SafetyStatus.SAFE, source
    assert len(by_file) >= 30
    unflagged = [file for file, statuses in by_file.items() if SafetyStatus.UNSAFE not in statuses]
    assert unflagged == []


def test_every_drafted_name_says_its_runs_and_files() -> None:
    benign = [TRACES / "openinference-benign.jsonl", TRACES / "pydantic-ai-benign.jsonl"]
    draft = draft_from_traces(benign, on_error=no_error)
    text = starter_policy("p", seen=draft.names, source="s", runs=draft.runs)
    assert (
        '        - "localhost"  # review: seen in 2 runs; files '
        f"{benign[0]}, {benign[1]}; a loopback address" in text
    )
    assert '        - "fetch_weather"  # review: seen in 2 runs; files ' in text
    assert "Left out" not in text


def test_a_name_seen_in_a_flagged_run_is_listed_with_those_runs() -> None:
    leak = TRACES / "openinference-exfil.jsonl"
    draft = draft_from_traces([leak], on_error=no_error)
    text = starter_policy("p", seen=draft.names, source="s", runs=draft.runs)
    assert "      allowed_hosts: []  # review: none seen outside flagged runs" in text
    assert '        # - "127.0.0.2": in 1 run, 1 of them flagged:' in text
    assert f"        #     {leak}:1 (secrets.tool-arguments)" in text
    assert '- "127.0.0.2"  # review' not in text
    policy = parse_policy(text)
    assert repr(policy.check("egress.non-allowed-host").detect).endswith("host=not_in([]))")
