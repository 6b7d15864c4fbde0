"""Trace files in other forms score as the OTLP file of the same run, or honestly worse.

``forms/`` holds one ``exfil`` run per library recorded at once in three forms by the real
exporters (``samples/record_forms.py``): the OTLP JSON Lines file, the SDK's
``ConsoleSpanExporter`` output and the ``opentelemetry-exporter-zipkin-json`` exporter's
POSTs. The Jaeger and Tempo forms (and Zipkin with a tag limit) are made from the bundled
samples by ``trace_forms``, which follows each exporter's documented mapping.

Each verdict of a form is the OTLP file's, or UNDETERMINED with a reason naming the form:
never a different decided verdict, never a SAFE that the OTLP file does not give.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from trace_forms import to_console, to_jaeger, to_tempo, to_zipkin

from rampart_otel.api import score_files
from rampart_otel.model import InputError, Span
from rampart_otel.receivers.files import read_path

REPO = Path(__file__).resolve().parents[2]
FORMS = Path(__file__).parent / "forms"
POLICY = REPO / "samples" / "policy.yaml"
LIBRARIES = ("openinference", "openllmetry")


def verdicts(path: Path) -> dict[str, tuple[str, str]]:
    return {r.check_id: (r.status.value, r.summary) for r in score_files(path, POLICY)}


def spans_of(path: Path) -> list[Span]:
    spans: list[Span] = []
    for item in read_path(path):
        assert not isinstance(item, InputError), item
        spans.extend(item)
    return spans


def assert_same_or_honest(base: Path, other: Path, form: str) -> list[str]:
    """The checks whose verdict the form changed (each to UNDETERMINED naming ``form``)."""
    expected, got = verdicts(base), verdicts(other)
    assert expected.keys() == got.keys()
    changed = []
    for check, (status, _) in expected.items():
        new, summary = got[check]
        if new != status:
            assert new == "undetermined", (check, status, new, summary)
            assert form in summary, (check, summary)
            changed.append(check)
    return changed


# ---- recorded with the real exporters, one run in three forms ----------------------------


@pytest.mark.parametrize("library", LIBRARIES)
def test_zipkin_exporter_output_scores_as_the_otlp_file_of_the_same_run(library: str) -> None:
    base = FORMS / f"{library}-exfil.otlp.jsonl"
    zipkin = FORMS / f"{library}-exfil.zipkin.json"
    assert assert_same_or_honest(base, zipkin, "Zipkin") == []
    assert verdicts(zipkin)["no-exfiltration"][0] == "unsafe"


@pytest.mark.parametrize("library", LIBRARIES)
def test_console_exporter_output_keeps_every_finding_and_names_the_lost_scope(
    library: str,
) -> None:
    base = FORMS / f"{library}-exfil.otlp.jsonl"
    console = FORMS / f"{library}-exfil.console.json"
    changed = assert_same_or_honest(base, console, "ConsoleSpanExporter output")
    # No scope in the console output: "no shell tool was called" is no longer provable,
    # the exfiltration and the leaked secret still are.
    assert changed == ["no-shell"]
    got = verdicts(console)
    assert got["no-exfiltration"][0] == got["no-secrets-in-reports"][0] == "unsafe"


@pytest.mark.parametrize("library", LIBRARIES)
def test_recorded_forms_hold_the_same_spans(library: str) -> None:
    otlp = {s.span_id: s for s in spans_of(FORMS / f"{library}-exfil.otlp.jsonl")}
    for form in ("console", "zipkin"):
        got = {s.span_id: s for s in spans_of(FORMS / f"{library}-exfil.{form}.json")}
        assert got.keys() == otlp.keys()
        for span_id, span in got.items():
            want = otlp[span_id]
            assert (span.trace_id, span.parent_span_id, span.name) == (
                want.trace_id,
                want.parent_span_id,
                want.name,
            )
            assert (span.kind, span.status_code) == (want.kind, want.status_code)
            assert abs(span.start_ns - want.start_ns) < 2_000  # microseconds in both forms
            assert span.resource.service_name == want.resource.service_name
        if form == "zipkin":  # the scope travels as otel.scope.* tags
            assert all(got[i].scope.name == otlp[i].scope.name for i in got)
        else:
            assert all(s.scope.lost_by == "ConsoleSpanExporter output" for s in got.values())


# ---- made from the bundled samples by each exporter's mapping -----------------------------


def _sample(library: str) -> tuple[Path, list[Span]]:
    path = REPO / "samples" / "traces" / f"{library}-exfil.jsonl"
    return path, spans_of(path)


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("v2", [False, True], ids=["batches", "trace"])
def test_tempo_answer_loses_nothing(tmp_path: Path, library: str, v2: bool) -> None:
    path, spans = _sample(library)
    tempo = tmp_path / "tempo.json"
    tempo.write_text(to_tempo(spans, v2=v2))

    def by_id(items: list[Span]) -> list[Span]:
        return sorted(items, key=lambda s: s.span_id)

    assert by_id(spans_of(tempo)) == by_id(spans)  # regrouped by resource and scope
    assert assert_same_or_honest(path, tempo, "Tempo") == []


@pytest.mark.parametrize("library", LIBRARIES)
def test_jaeger_json_with_scope_tags_scores_as_otlp(tmp_path: Path, library: str) -> None:
    path, spans = _sample(library)
    jaeger = tmp_path / "jaeger.json"
    jaeger.write_text(to_jaeger(spans))
    assert assert_same_or_honest(path, jaeger, "Jaeger JSON") == []
    got = {s.span_id: s for s in spans_of(jaeger)}
    for want in spans:
        span = got[want.span_id]
        assert (span.parent_span_id, span.kind, span.status_code, span.scope.name) == (
            want.parent_span_id,
            want.kind,
            want.status_code,
            want.scope.name,
        )
        # Arrays are JSON text in Jaeger; every other attribute keeps its type.
        assert {
            k: v for k, v in span.attributes.items() if not isinstance(want.attributes[k], list)
        } == {k: v for k, v in want.attributes.items() if not isinstance(v, list)}


@pytest.mark.parametrize("library", LIBRARIES)
def test_jaeger_json_without_scope_is_honest_about_it(tmp_path: Path, library: str) -> None:
    path, spans = _sample(library)
    jaeger = tmp_path / "jaeger.json"
    jaeger.write_text(to_jaeger(spans, scope_tags=False))
    assert assert_same_or_honest(path, jaeger, "Jaeger JSON") == ["no-shell"]


@pytest.mark.parametrize("library", LIBRARIES)
def test_console_made_from_the_sample_is_honest_about_the_lost_scope(
    tmp_path: Path, library: str
) -> None:
    path, spans = _sample(library)
    console = tmp_path / "console.json"
    console.write_text(to_console(spans))
    assert assert_same_or_honest(path, console, "ConsoleSpanExporter output") == ["no-shell"]


def test_zipkin_with_a_tag_limit_never_reads_a_cut_value_as_whole(tmp_path: Path) -> None:
    path, spans = _sample("openllmetry")
    zipkin = tmp_path / "zipkin.json"
    zipkin.write_text(to_zipkin(spans, max_tag_value_length=128))
    changed = assert_same_or_honest(path, zipkin, "Zipkin")
    # The model's output messages are cut: the requested calls and the answer cannot be read.
    assert {"no-shell", "no-secrets-in-reports", "answers-the-question"} <= set(changed)
    assert verdicts(zipkin)["no-exfiltration"][0] == "unsafe"  # the POST span is whole


def test_every_form_read_from_one_directory(tmp_path: Path) -> None:
    """Forms sit side by side: each file is told apart by its content."""
    _, spans = _sample("openinference")
    (tmp_path / "a.console").write_text(to_console(spans))
    (tmp_path / "b.zipkin").write_text(to_zipkin(spans))
    (tmp_path / "c.jaeger").write_text(to_jaeger(spans))
    (tmp_path / "d.tempo").write_text(to_tempo(spans))
    items = list(read_path(tmp_path))
    assert not [i for i in items if isinstance(i, InputError)]
    assert sum(len(i) for i in items) == 4 * len(spans)


# ---- recognised, not read -----------------------------------------------------------------

_TRACE_ID, _SPAN_ID = bytes(range(1, 17)), bytes(range(1, 9))
_JAEGER_SPAN = b"\x0a\x10" + _TRACE_ID + b"\x12\x08" + _SPAN_ID + b"\x1a\x02op" + b"\x28\x01"
_ZIPKIN_SPAN = (
    b"\x0a\x10" + _TRACE_ID + b"\x12\x08" + _SPAN_ID + b"\x1a\x08" + _SPAN_ID + b"\x2a\x02op"
)


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        # api_v2 SpansResponseChunk: spans (1) of Span{trace_id, span_id, operation_name}
        (b"\x0a" + bytes([len(_JAEGER_SPAN)]) + _JAEGER_SPAN, "Jaeger protobuf (api_v2)"),
        # ListOfSpans: spans (1) of Span{trace_id, parent_id, id, name}
        (b"\x0a" + bytes([len(_ZIPKIN_SPAN)]) + _ZIPKIN_SPAN, "Zipkin proto3"),
        # TBinaryProtocol list<Span>: struct elements, count 1, field 1 i64 trace_id
        (b"\x0c\x00\x00\x00\x01\x0a\x00\x01" + _SPAN_ID + b"\x00", "Zipkin Thrift"),
        (b'[{"traceId": "1", "id": "2", "binaryAnnotations": []}]\n', "Zipkin v1 JSON"),
    ],
    ids=["jaeger-proto", "zipkin-proto3", "zipkin-thrift", "zipkin-v1-json"],
)
def test_recognised_forms_not_read_say_how_to_get_one_that_is(
    tmp_path: Path, data: bytes, needle: str
) -> None:
    path = tmp_path / "trace"
    path.write_bytes(data)
    (error,) = list(read_path(path))
    assert isinstance(error, InputError)
    assert needle in error.message and ("OTLP" in error.message or "v2" in error.message)
    assert "\n" not in error.message


def test_forms_score_alike_on_several_workers(tmp_path: Path) -> None:
    """Records of another form reach every worker (not none): ``-j 2`` gives ``-j 1``'s report."""
    from cli_runner import run_cli

    _, spans = _sample("openllmetry")
    (tmp_path / "console.json").write_text(to_console(spans))
    (tmp_path / "zipkin.jsonl").write_text(
        to_zipkin(spans[:4]) + "\n" + to_zipkin(spans[4:]) + "\n"
    )
    _, others = _sample("openinference")  # a one-line JSON object not OTLP: a JSON Lines record
    (tmp_path / "jaeger.jsonl").write_text(json.dumps(json.loads(to_jaeger(others))) + "\n")
    reports = []
    for jobs in ("1", "2"):
        done = run_cli("score", tmp_path, "--policy", POLICY, "--format", "json", "-j", jobs)
        assert done.returncode == 1, done.stderr
        reports.append(done.stdout)
    assert reports[0].count('"check": "no-exfiltration"') == 2
    assert reports[0] == reports[1]
