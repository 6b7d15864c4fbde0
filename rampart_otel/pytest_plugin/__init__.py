"""The pytest plugin (entry point ``rampart``): score what an agent did, inside its tests.

- fixture ``agent_trace``: the spans the code under test finishes during the test, its
  runs, ``score(policy)`` and ``assert_safe(policy)``; it turns the watcher on
  (``rampart_otel.watch``, docs/watch.md) unless ``--rampart-no-watch`` is given;
- mark ``@pytest.mark.rampart(policy="policy.yaml")``: the policy they use by default;
- at the end, a summary of every scored result; ``--rampart-report PATH`` writes them all
  as one report@1 document; ``--rampart-fail-on`` fails tests on their results too;
- under pytest-xdist each worker hands its results to the controller, which alone
  summarizes and writes the report.

pytest imports this module in every session of every project that installs rampart-otel,
so it imports only pytest and the standard library: the capture, the scorer and the
reports (the SDK, pydantic, yaml) load when a test first uses them.
"""

from __future__ import annotations

import pickle
from collections.abc import Generator, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from rampart_otel.api import PolicySource
    from rampart_otel.evaluation import CheckResult, Policy
    from rampart_otel.pytest_plugin.capture import AgentTrace

WORKER_RESULTS = "rampart_otel_results"  # the key of a worker's results in its workeroutput
WORKER_ERROR = "rampart_otel_error"  # and of the error that stopped it (a policy's)
FAIL_ON = {
    "unsafe": frozenset({"unsafe", "error"}),
    "undetermined": frozenset({"unsafe", "error", "undetermined"}),
}
MARK_USAGE = '@pytest.mark.rampart takes one policy: rampart(policy="policy.yaml")'


@dataclass
class SessionResults:
    """Every result scored in this process by test; a controller's holds its workers' too."""

    fail_on: str | None
    report_path: Path | None
    policies: dict[Path, Policy] = field(default_factory=dict)  # parsed once per session
    # The one-line error that stopped this process's session (a policy that cannot be
    # used); under pytest-xdist, the controller's holds its workers', to say them once.
    errors: list[str] = field(default_factory=list)
    worker_errors: list[str] = field(default_factory=list)
    # test node id → (policy, version, run, check) → the latest result scored for it
    _by_test: dict[str, dict[tuple[Any, ...], CheckResult]] = field(default_factory=dict)

    def record(self, node_id: str, results: Iterable[CheckResult]) -> None:
        found = self._by_test.setdefault(node_id, {})
        for result in results:
            found[(result.policy, result.policy_version, result.run_id, result.check_id)] = result

    def scored(self) -> list[tuple[str, CheckResult]]:
        """(test node id, result), by node id, so the order is the same with or without -n."""
        return [
            (node_id, result)
            for node_id in sorted(self._by_test)
            for result in self._by_test[node_id].values()
        ]

    def results_of(self, node_id: str) -> list[CheckResult]:
        return list(self._by_test.get(node_id, {}).values())

    @property
    def failing_statuses(self) -> frozenset[str]:
        """The statuses that fail a test under ``--rampart-fail-on`` (none without it)."""
        return FAIL_ON.get(self.fail_on or "", frozenset())


_SESSION = pytest.StashKey[SessionResults]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("rampart-otel", "rampart-otel: safety verdicts from agents' traces")
    group.addoption(
        "--rampart-report",
        metavar="PATH",
        help="Write every result scored in the session to PATH, as one rampart-otel/report@1 "
        "JSON document.",
    )
    group.addoption(
        "--rampart-fail-on",
        choices=sorted(FAIL_ON),
        help="Also fail a test whose scored results hold an unsafe or error verdict (unsafe), "
        "or an undetermined one too (undetermined). Default: the test's own asserts decide.",
    )
    group.addoption(
        "--rampart-no-watch",
        action="store_true",
        help="Do not turn the watcher on for agent_trace (rampart_otel.watch: every connection, "
        "HTTP request, process and file write of the test process recorded as a span, "
        "docs/watch.md). It is on by default and, once on, stays on for the session.",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "rampart(policy): the policy agent_trace.score() and assert_safe() use by default: a "
        "Policy, or a policy file (a relative path is read from the test file's directory).",
    )
    report = config.getoption("rampart_report")
    config.stash[_SESSION] = SessionResults(
        fail_on=config.getoption("rampart_fail_on"),
        report_path=Path(report).absolute() if report else None,
    )


@pytest.fixture
def agent_trace(request: pytest.FixtureRequest) -> Iterator[AgentTrace]:
    """Every span the code under test finishes during the test, to score (docs/pytest.md)."""
    # Here, not at the top: it loads the SDK and the scorer, which most sessions never use.
    from rampart_otel.pytest_plugin.capture import AgentTrace, capturing

    session = request.config.stash[_SESSION]
    node_id = request.node.nodeid
    default_policy = _marked_policy(request.node)
    if not request.config.getoption("rampart_no_watch"):
        from rampart_otel import watch

        watch.watch()  # before the capture's provider is made: it attests on every span
    with capturing() as capture:
        yield AgentTrace(
            capture,
            test_dir=request.path.parent,
            default_policy=default_policy,
            policies=session.policies,
            record=lambda results: session.record(node_id, results),
            stopped=session.errors.append,
            run_id=f"test:{node_id}",
            node_id=node_id,
        )


def _marked_policy(node: pytest.Item) -> PolicySource | None:
    mark = node.get_closest_marker("rampart")
    if mark is None:
        return None
    if set(mark.kwargs) - {"policy"} or len(mark.args) + len(mark.kwargs) != 1:
        pytest.fail(f"rampart-otel: error: {MARK_USAGE}", pytrace=False)
    return mark.kwargs["policy"] if mark.kwargs else mark.args[0]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    session = item.config.stash.get(_SESSION, None)
    if session is None or report.when != "call" or not report.passed:
        return report
    results = session.results_of(item.nodeid)
    failing = [result for result in results if result.status in session.failing_statuses]
    if failing:
        # Only reached once results exist, so the scorer is loaded already.
        from rampart_otel.pytest_plugin.report import failure_lines

        why = f"fail under --rampart-fail-on {session.fail_on}"
        report.outcome = "failed"
        report.longrepr = "\n".join(failure_lines(results, failing, why, item.nodeid))
    return report


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    results = config.stash.get(_SESSION, None)
    if results is None:
        return
    if _is_worker(config):
        # The controller unpickles this: it comes from its own worker processes.
        config.workeroutput[WORKER_RESULTS] = pickle.dumps(results.scored())  # type: ignore[attr-defined]
        config.workeroutput[WORKER_ERROR] = results.errors[:1]  # type: ignore[attr-defined]
        return
    if results.report_path is not None:
        # Asked for with --rampart-report: loads the report writer.
        from rampart_otel.pytest_plugin.report import write_json_report

        write_json_report(results.report_path, results.scored())


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """pytest-xdist: a worker is done; take its results."""
    output = getattr(node, "workeroutput", {})
    results = node.config.stash[_SESSION]
    for message in output.get(WORKER_ERROR) or ():
        if isinstance(message, str) and message not in results.worker_errors:
            results.worker_errors.append(message)
    data = output.get(WORKER_RESULTS)
    if data is None:
        return
    for node_id, result in pickle.loads(data):
        results.record(node_id, [result])


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    results = config.stash.get(_SESSION, None)
    if results is None or _is_worker(config):
        return
    if getattr(config, "workerinput", None) is None:
        for message in results.worker_errors:  # what stopped the workers, said once
            terminalreporter.write_line(message, red=True)
    scored = results.scored()
    if scored:
        from rampart_otel.pytest_plugin.report import write_terminal_summary  # results exist

        write_terminal_summary(
            terminalreporter, scored, results.report_path, results.fail_on == "undetermined"
        )


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")
