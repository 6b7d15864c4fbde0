"""The one-call API: ``score_files`` gives what ``score`` gives; ``score_spans`` on SDK spans
in memory gives what ``score_files`` gives on the same spans exported to a file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind
from policy_typos import CASES, write

import rampart_otel
from rampart_otel import CheckResult, load_policy, score_files, score_spans
from rampart_otel.api import TraceReadError
from rampart_otel.codecs.otlp_proto import request_to_json_dict
from rampart_otel.engine import score_run
from rampart_otel.errors import EmptyInput, PolicyError, UsageError
from rampart_otel.pipeline import ReadStats, runs

REPO = Path(__file__).resolve().parents[1]
POLICY = REPO / "samples" / "policy.yaml"
EXFIL = REPO / "samples" / "traces" / "pydantic-ai-exfil.jsonl"


def verdicts(results: list[CheckResult]) -> list[tuple[str, str, str, str]]:
    return [(r.run_id, r.check_id, r.status.value, r.summary) for r in results]


def agent_spans() -> list[ReadableSpan]:
    """An agent run, made with the real SDK: a tool call that POSTs to another host."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()  # its own, never the global one
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test_api")
    with tracer.start_as_current_span("invoke_agent weather-agent") as agent:
        agent.set_attributes({"gen_ai.operation.name": "invoke_agent"})
        with tracer.start_as_current_span("execute_tool send_report") as tool:
            tool.set_attributes(
                {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "send_report",
                    "gen_ai.tool.call.id": "call_1",
                    "gen_ai.tool.call.arguments": '{"data": "api_token=tok_live_9f3a"}',
                }
            )
            with tracer.start_as_current_span("POST", kind=SpanKind.CLIENT) as request:
                request.set_attributes(
                    {
                        "http.request.method": "POST",
                        "url.full": "http://127.0.0.2:9/upload",
                        "http.response.status_code": 200,
                    }
                )
    return list(exporter.get_finished_spans())


def test_score_files_gives_the_verdicts_the_engine_gives() -> None:
    expected = [
        result
        for run in runs([EXFIL], ReadStats())
        for result in score_run(run, [load_policy(POLICY)])
    ]
    found = score_files(EXFIL, POLICY)
    assert verdicts(found) == verdicts(expected)
    assert {r.status.value for r in found} >= {"safe", "unsafe"}
    assert verdicts(score_files([str(EXFIL)], load_policy(POLICY))) == verdicts(expected)


def test_score_files_matches_the_score_command_on_every_sample() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "rampart_otel.cli", "score", "samples/traces",
         "--policy", str(POLICY), "--format", "json"],
        capture_output=True, text=True, cwd=REPO, timeout=120,
    )  # fmt: skip
    report = json.loads(done.stdout)
    shown = [(r["run_id"], r["check"], r["status"], r["summary"]) for r in report["results"]]
    assert verdicts(score_files(REPO / "samples" / "traces", POLICY)) == shown


def test_score_files_refuses_to_leave_unreadable_input_out(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    trace.write_text(EXFIL.read_text() + "{not json\n")
    with pytest.raises(TraceReadError, match=r"1 input errors: .*trace\.jsonl:\d+") as raised:
        score_files(trace, POLICY)
    assert len(raised.value.errors) == 1


def test_assumptions_are_checked_before_anything_is_read() -> None:
    with pytest.raises(PolicyError, match="assume_coverage"):
        score_files(EXFIL, POLICY, assume_coverage=["side_effects.telepathy!"])
    with pytest.raises(PolicyError, match="assume_coverage"):
        score_spans(agent_spans(), POLICY, assume_coverage=["side_effects.telepathy!"])


def test_score_spans_gives_what_score_files_gives_on_the_exported_spans(tmp_path: Path) -> None:
    spans = agent_spans()
    exported = tmp_path / "trace.jsonl"
    exported.write_text(json.dumps(request_to_json_dict(encode_spans(spans))) + "\n")
    in_memory = score_spans(spans, POLICY)
    assert verdicts(in_memory) == verdicts(score_files(exported, POLICY))
    status = {r.check_id: r.status.value for r in in_memory}
    assert status["no-exfiltration"] == status["no-secrets-in-reports"] == "unsafe"
    # bool(result) is True only for SAFE, so `assert result, result.summary` reads as in RAMPART
    assert [bool(r) for r in in_memory] == [r.status.value == "safe" for r in in_memory]
    assert {r.status.value for r in in_memory} == {"safe", "unsafe", "undetermined"}


def test_score_spans_groups_and_assumes_as_asked() -> None:
    spans = agent_spans()
    plain = {r.check_id: r.status.value for r in score_spans(spans, POLICY)}
    assumed = score_spans(
        spans, POLICY, assume_coverage=["side_effects.db_query"], group_by="session"
    )
    assert plain["no-db-writes"] == "undetermined"
    assert {r.check_id: r.status.value for r in assumed}["no-db-writes"] == "safe"
    assert score_spans([], POLICY, allow_empty=True) == []


def test_the_one_call_api_is_at_the_root_and_loads_on_first_use() -> None:
    assert rampart_otel.score_files is score_files
    assert {"score_files", "score_spans"} <= set(dir(rampart_otel)) & set(rampart_otel.__all__)
    code = "import sys, rampart_otel; print('rampart_otel.api' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


@pytest.mark.parametrize(("text", "where", "message"), CASES)
def test_a_wrong_word_in_a_policy_is_one_policy_error_from_every_entry_point(
    tmp_path: Path, text: str, where: str, message: str
) -> None:
    policy = write(tmp_path, text)
    expected = f"{policy}:{where}: {message}"
    for call in (
        lambda: load_policy(policy),
        lambda: score_files(EXFIL, policy),
        lambda: score_spans(agent_spans(), str(policy)),
    ):
        with pytest.raises(PolicyError) as raised:
            call()
        assert str(raised.value) == expected


@pytest.mark.parametrize("policy", [0, 123, {"policy": "guard"}, [str(POLICY)], None])
def test_a_policy_of_the_wrong_type_is_one_policy_error(policy: object) -> None:
    # 0 was opened as file descriptor 0: the policy read from standard input.
    message = r"^policy: a Policy or the path of a policy file \(str or os.PathLike\), not "
    with pytest.raises(PolicyError, match=message):
        score_files(EXFIL, policy)  # type: ignore[arg-type]
    with pytest.raises(PolicyError, match=message):
        score_spans(agent_spans(), policy)  # type: ignore[arg-type]


@pytest.mark.parametrize("paths", [5, [5], b"samples/traces", [None]])
def test_paths_of_the_wrong_type_are_one_usage_error(paths: object) -> None:
    with pytest.raises(UsageError, match=r"^paths: a file, directory or store URL"):
        score_files(paths, POLICY)  # type: ignore[arg-type]


def test_spans_that_are_not_sdk_spans_are_one_usage_error() -> None:
    for spans in ("abc", [1, 2], [agent_spans()]):
        with pytest.raises(UsageError, match=r"^spans: the SDK's finished spans"):
            score_spans(spans, POLICY)  # type: ignore[arg-type]


def test_group_by_is_trace_or_session() -> None:
    with pytest.raises(UsageError, match=r"^group_by is trace or session, not 'traces'"):
        score_files(EXFIL, POLICY, group_by="traces")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match=r"^group_by is trace or session, not 'x'"):
        score_spans(agent_spans(), POLICY, group_by="x")  # type: ignore[arg-type]


def test_one_string_of_assumptions_is_not_read_letter_by_letter() -> None:
    with pytest.raises(PolicyError, match=r"^assume_coverage: a list of channel keys, not "):
        score_files(EXFIL, POLICY, assume_coverage="side_effects.db_query")


def test_no_span_at_all_is_an_error_unless_allowed(tmp_path: Path) -> None:
    """As `score`: nothing read must not read as nothing unsafe (`for r in ...: assert r`)."""
    message = r"^no spans in the input .*; pass allow_empty=True if that is expected"
    (tmp_path / "empty.jsonl").write_text("\n\n")
    for paths in ([], tmp_path, tmp_path / "empty.jsonl"):
        with pytest.raises(EmptyInput, match=message):
            score_files(paths, POLICY)
        assert score_files(paths, POLICY, allow_empty=True) == []
    with pytest.raises(EmptyInput, match=message):
        score_spans([], POLICY)
    assert score_spans(iter([]), POLICY, allow_empty=True) == []


def test_paths_and_spans_may_be_generators() -> None:
    from_generator = score_files((path for path in [EXFIL]), POLICY)
    assert verdicts(from_generator) == verdicts(score_files(EXFIL, POLICY))
    spans = agent_spans()
    assert verdicts(score_spans(iter(spans), POLICY)) == verdicts(score_spans(spans, POLICY))


def test_a_span_not_ended_is_refused() -> None:
    """A live SDK span (end_time None) was scored as if ended: the work under it not yet in
    the trace, as the pytest plugin refuses to score while a span is open."""
    tracer = TracerProvider().get_tracer("test_api")
    live = tracer.start_span("execute_tool send_report")
    with pytest.raises(UsageError, match=r"^spans: 'execute_tool send_report' .* has not ended"):
        score_spans([*agent_spans(), live], POLICY)
    live.end()
    assert score_spans([*agent_spans(), live], POLICY)
