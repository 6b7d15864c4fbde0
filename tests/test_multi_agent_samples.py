"""The multi-agent samples (issue 48: samples/frameworks/*-multi, langgraph-supervisor-*).

Each team (``samples/frameworks/multi_agent.py``) was recorded from the real libraries
against the scripted model, so what each agent asked for is known from the case's scripts.
Every harm is UNSAFE where the trace records it and UNDETERMINED where it does not (never
SAFE); a benign run is SAFE where every place of harm is recorded; each tool call is listed
once. Where a verdict waits on a coverage rule of the places model (the lead's), the case is
``xfail(strict=True)`` with the rule named, so it fails loudly the day the rule lands.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

from rampart_otel.conventions.openinference_dialects import CODE_TOOL, smolagents_code

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from rampart_otel.api import score_files  # noqa: E402
from rampart_otel.evaluation import SafetyStatus  # noqa: E402
from rampart_otel.model import AgentRun  # noqa: E402
from rampart_otel.pipeline import ReadStats, agent_runs  # noqa: E402
from samples.frameworks import multi_agent as team  # noqa: E402
from samples.frameworks.catalog import Case  # noqa: E402
from samples.record_frameworks import discover  # noqa: E402

TRACES = REPO / "samples" / "traces"
POLICY = REPO / "samples" / "policy.yaml"
SAFE, UNSAFE, UNDETERMINED = SafetyStatus.SAFE, SafetyStatus.UNSAFE, SafetyStatus.UNDETERMINED

TEAMS = {entry.name: entry for entry in discover() if entry.framework.multi_agent}
SAMPLES = [
    (name, case)
    for name, entry in TEAMS.items()
    for case in entry.cases
    if (TRACES / name / entry.file_name(case)).exists()
]
# The framework's tool that delivers an agent's answer: the answer, not a call (see
# docs/coverage.md, "Answer tools").
ANSWER_TOOLS = {"final_answer"}
# The team whose lead runs model-written code (smolagents' CodeAgent): its database writes
# run in a child process the code starts, which no span records.
CODE_STEPS = {"smolagents-multi"}
# samples/policy.yaml's attack checks (its probe, answers-the-question, is task quality).
ATTACKS = (
    "no-exfiltration",
    "no-secrets-in-reports",
    "no-unrequested-reports",
    "no-shell",
    "no-db-writes",
)


def played(case: Case) -> str:
    """The scripts a case plays: its own, or exfil's for the content-off variants."""
    return case.case if case.case in team.CASE_WHAT else "exfil"


def asked_for(case: Case) -> Counter[str]:
    """Every tool call the case's agents asked for, answer tools aside; and each code step a
    code agent wrote (a call of ``python_interpreter`` with its code: a place of its own)."""
    asked = Counter(
        call.name
        for turns in case.scripts.values()
        for turn in turns
        for call in turn.tool_calls
        if call.name not in ANSWER_TOOLS
    )
    asked[CODE_TOOL] += sum(
        1
        for turns in case.scripts.values()
        for turn in turns
        if turn.text is not None and smolagents_code(turn.text) is not None
    )
    return +asked


def runs_of(name: str, case: Case) -> list[AgentRun]:
    return list(agent_runs([TRACES / name / f"{name}-{case.case}.jsonl"], ReadStats()))


def team_run(name: str, case: Case) -> AgentRun:
    """The team's run. OpenLLMetry records each ``create_react_agent`` that runs before the
    supervisor starts as a one-span trace of its own (``create_agent <name>``): agent
    definitions, read as runs with nothing in them, which the team's run is not."""
    return max(runs_of(name, case), key=lambda run: len(run.run.spans))


def verdicts(name: str, case: Case) -> dict[str, SafetyStatus]:
    """Each check's status on the team's run."""
    run_id = team_run(name, case).run_id
    return {
        result.check_id: result.status
        for result in score_files(TRACES / name / f"{name}-{case.case}.jsonl", POLICY)
        if result.run_id == run_id
    }


def test_every_team_is_recorded() -> None:
    assert set(TEAMS) >= {
        "openai-agents-multi",
        "adk-multi",
        "langgraph-supervisor-openinference",
        "langgraph-supervisor-openllmetry",
        "smolagents-multi",
    }
    for name in TEAMS:
        recorded = {case.case for n, case in SAMPLES if n == name}
        assert recorded >= {"exfil", "benign", "drop-table", "no-content"}, name


def _harms(case: Case) -> dict[str, bool]:
    """The harms' checks and whether the case's agents did that harm."""
    script = played(case)
    exfil = script in ("exfil", "parallel", "uninstrumented")
    harms = {"no-exfiltration": exfil, "no-unrequested-reports": exfil}
    if script != "benign":  # a run that touches no database records no db_query span
        harms["no-db-writes"] = True
    return harms


def _expected(name: str, case: Case) -> dict[str, SafetyStatus]:
    """What samples/policy.yaml must say of a run, by what the case's agents did: a harm is
    UNSAFE where its span is recorded (the urllib POST of ``uninstrumented``, the code's
    subprocess writes are not); a harm not done is SAFE only where every place of it is
    recorded (a code step that runs model-written code is a place no span covers)."""
    unrecorded = {
        "no-exfiltration": played(case) == "uninstrumented",
        "no-db-writes": name in CODE_STEPS,
        "no-unrequested-reports": False,
    }
    expected: dict[str, SafetyStatus] = {}
    for check, happened in _harms(case).items():
        if not happened:
            # a code step's I/O is a side effect no span may show; a tool call it is not
            side_effect = check != "no-unrequested-reports"
            # the SQL tool records a DB span, none of HTTP: evidence is per kind, so its HTTP
            # is a place no span covers
            sql_tool = check == "no-exfiltration" and played(case) == "drop-table"
            unwatched = (name in CODE_STEPS and side_effect) or sql_tool
            expected[check] = UNDETERMINED if unwatched else SAFE
        else:
            expected[check] = UNDETERMINED if unrecorded[check] else UNSAFE
    return expected


# (team, case, check) → the coverage rule of the places model the verdict waits on. None
# now: an agent used as a tool (OpenAI Agents' as_tool, ADK's AgentTool) is delegated where
# its nested agent's run is in the trace, its nested calls the places (conventions.agent_tools).
NEEDS_PLACES: dict[tuple[str, str, str], str] = {}


def _verdict_params() -> list[object]:
    params = []
    for name, case in SAMPLES:
        for check, want in _expected(name, case).items():
            rule = NEEDS_PLACES.get((name, case.case, check))
            marks = [pytest.mark.xfail(strict=True, reason=f"needs places: {rule}")] if rule else []
            params.append(
                pytest.param(name, case, check, want, id=f"{name}-{case.case}-{check}", marks=marks)
            )
    return params


@pytest.mark.parametrize(("name", "case", "check", "want"), _verdict_params())
def test_harms_and_benign_runs(name: str, case: Case, check: str, want: SafetyStatus) -> None:
    got = verdicts(name, case)[check]
    assert got is want, f"{check}: {got.value}, want {want.value}"


@pytest.mark.parametrize(
    ("name", "case"), [pytest.param(n, c, id=f"{n}-{c.case}") for n, c in SAMPLES]
)
def test_never_safe_where_a_harm_happened(name: str, case: Case) -> None:
    """Whatever a rule still waits on: a check that a harm of the run matches is never SAFE."""
    found = verdicts(name, case)
    for check, happened in _harms(case).items():
        if happened:
            assert found[check] is not SAFE, check


@pytest.mark.parametrize(
    ("name", "case"),
    [pytest.param(n, c, id=f"{n}-{c.case}") for n, c in SAMPLES if c.case == "benign"],
)
def test_a_benign_run_is_never_unsafe(name: str, case: Case) -> None:
    found = verdicts(name, case)
    assert [check for check in ATTACKS if found[check] is UNSAFE] == []


@pytest.mark.parametrize(
    ("name", "case"), [pytest.param(n, c, id=f"{n}-{c.case}") for n, c in SAMPLES]
)
def test_each_tool_call_is_listed_once(name: str, case: Case) -> None:
    run = team_run(name, case)
    listed = Counter(call.name for call in run.tool_calls)
    asked = asked_for(case)
    if case.case in team.CASE_WHAT:
        assert listed == asked
    else:  # content off: a call may not be read, but none is listed twice
        assert listed & asked == listed, listed - asked
