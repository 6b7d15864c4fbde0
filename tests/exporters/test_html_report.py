"""``score --format html`` opened in a real browser: what a person sees, and that trace
content stays text however hostile it is."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from cli_runner import REPO, run_cli
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from sdk_traces import _provider, collector_json

SAMPLES = REPO / "samples" / "traces"
POLICY = REPO / "samples" / "policy.yaml"


def _score(paths: list[Path], out: Path, *extra: str) -> dict[str, Any]:
    """The HTML report written to ``out``, and the JSON report of the same input."""
    done = run_cli("score", *paths, "--policy", POLICY, "--format", "html", "-o", out, *extra)
    assert done.returncode in (0, 1), done.stderr
    done = run_cli("score", *paths, "--policy", POLICY, "--format", "json")
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def _open(browser: Any, path: Path) -> tuple[Any, list[str]]:
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on(
        "dialog", lambda dialog: (problems.append(f"dialog: {dialog.message}"), dialog.dismiss())
    )
    page.on(
        "request",
        lambda request: (
            None
            if request.url.startswith("file://")
            else problems.append(f"request: {request.url}")
        ),
    )
    page.on(
        "console",
        lambda message: (
            problems.append(f"console: {message.text}") if message.type == "error" else None
        ),
    )
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-ready='1']", timeout=30_000)
    return page, problems


@pytest.fixture(scope="module")
def samples_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("html") / "report.html"
    return out, _score([SAMPLES], out)


def test_the_summary_counts_are_the_json_reports(browser: Any, samples_report: Any) -> None:
    path, report = samples_report
    page, problems = _open(browser, path)
    overall = report["population_summary"]["overall"]
    runs = {result["run_id"] for result in report["results"]}
    assert page.text_content("#n-runs") == str(len(runs))
    for status in ("safe", "unsafe", "undetermined", "error"):
        assert page.text_content(f"#n-{status}") == str(overall[status])
    total = len(report["results"])
    assert page.text_content("#result-count").startswith(f"{total} of {total} results")
    assert page.locator("#result-table tbody tr").count() == min(total, 100)
    assert page.locator("#rates-by-check .rate").count() == len(
        report["population_summary"]["by_check"]
    )
    assert problems == []
    page.close()


def test_filters_narrow_the_table(browser: Any, samples_report: Any) -> None:
    path, report = samples_report
    page, problems = _open(browser, path)
    total = len(report["results"])
    unsafe = [r for r in report["results"] if r["status"] == "unsafe"]
    page.select_option("#f-status", "unsafe")
    assert page.text_content("#result-count").startswith(f"{len(unsafe)} of {total} results")
    statuses = page.locator("#result-table tbody tr").evaluate_all(
        "rows => rows.map(row => row.dataset.status)"
    )
    assert set(statuses) == {"unsafe"}
    check = unsafe[0]["check"]
    page.select_option("#f-check", check)
    both = [r for r in unsafe if r["check"] == check]
    assert page.text_content("#result-count").startswith(f"{len(both)} of {total} results")
    page.select_option("#f-status", "")
    page.select_option("#f-check", "")
    run_id = report["results"][0]["run_id"]
    page.fill("#f-text", run_id)
    of_run = [r for r in report["results"] if r["run_id"] == run_id]
    assert page.text_content("#result-count").startswith(f"{len(of_run)} of {total} results")
    assert problems == []
    page.close()


def _show_result(page: Any, run_id: str, check: str) -> None:
    page.fill("#f-text", run_id)
    page.select_option("#f-check", check)
    page.click("#result-table tbody tr >> nth=0")
    page.wait_for_selector("#waterfall")


def test_a_runs_waterfall_nests_its_spans_and_evidence_links_to_them(
    browser: Any, tmp_path: Path
) -> None:
    sample = SAMPLES / "openllmetry-exfil.jsonl"
    out = tmp_path / "exfil.html"
    report = _score([sample], out)
    unsafe = next(r for r in report["results"] if r["status"] == "unsafe" and r["evidence"])
    spans = [
        span
        for line in sample.read_text().splitlines()
        for rs in json.loads(line)["resourceSpans"]
        for ss in rs["scopeSpans"]
        for span in ss["spans"]
        if span["traceId"] == unsafe["trace_ids"][0]
    ]
    page, problems = _open(browser, out)
    _show_result(page, unsafe["run_id"], unsafe["check"])
    rows = page.locator("#waterfall .wf-row")
    assert rows.count() == len(spans)
    assert set(rows.evaluate_all("rows => rows.map(r => r.dataset.span)")) == {
        s["spanId"] for s in spans
    }
    indents = rows.evaluate_all("rows => rows.map(r => parseFloat(r.firstChild.style.paddingLeft))")
    assert indents[0] == min(indents) and max(indents) > min(indents)  # children sit deeper
    assert rows.locator(".wf-bar").count() == len(spans)
    evidence_span = unsafe["evidence"][0]["span_id"]
    page.click(f"#run-results .evidence-link[data-span='{evidence_span}']")
    highlighted = page.locator("#waterfall .wf-row.highlight")
    assert highlighted.count() == 1
    assert highlighted.get_attribute("data-span") == evidence_span
    assert page.text_content("#span-detail h3").endswith(f"({evidence_span})")
    stray = "[...document.querySelectorAll('#run, #span-detail')].flatMap(n => [...n.childNodes])"
    assert page.evaluate(f"{stray}.filter(n => n.nodeType === 3).length") == 0  # no 'null'
    assert problems == []
    page.close()


def test_an_undetermined_verdict_shows_the_gap_on_its_channel(browser: Any, tmp_path: Path) -> None:
    out = tmp_path / "gap.html"
    report = _score([SAMPLES / "openllmetry-no-http-instr.jsonl"], out)
    gap = next(r for r in report["results"] if r["check"] == "no-exfiltration")
    assert gap["status"] == "undetermined"
    page, problems = _open(browser, out)
    _show_result(page, gap["run_id"], gap["check"])
    row = page.locator("#run tr.gap[data-channel='side_effects.http_request']")
    assert row.count() == 1
    assert "unobserved" in row.text_content()
    assert "no http_request span in the run" in row.text_content()
    assert "gap on side_effects.http_request" in page.text_content("#run-results")
    observed = page.locator("#run tr[data-channel='tool_calls']")
    assert "gap" not in (observed.get_attribute("class") or "")
    assert problems == []
    page.close()


# ---- hostile trace content ----------------------------------------------------------

HOSTILE = [
    "<script>window.__pwned = 1</script>",
    '<img src=x onerror="window.__pwned = 2">',
    "javascript:window.__pwned = 3",
    "</style><style>body { display: none }</style>",
    "</script><script>window.__pwned = 4</script>",
    '"\'><svg onload="window.__pwned = 5">',
    "\u2028\u2029\u202egnp.exe <b>{{ 7*7 }}</b>",
]
HOSTILE_TEXT = " ".join(HOSTILE)


def _hostile_trace(path: Path) -> None:
    """An agent run recorded by the real SDK with attacker text everywhere it can go."""
    provider, exporter = _provider(HOSTILE[0])
    tracer = provider.get_tracer("hostile.agent")
    with tracer.start_as_current_span(f"invoke_agent {HOSTILE[1]}") as root:
        root.set_attribute("gen_ai.operation.name", "invoke_agent")
        root.set_attribute(HOSTILE[3], HOSTILE[4])
        with tracer.start_as_current_span(f"execute_tool {HOSTILE[4]}") as tool:
            tool.set_attribute("gen_ai.operation.name", "execute_tool")
            tool.set_attribute("gen_ai.tool.name", "send_report")
            tool.set_attribute("gen_ai.tool.call.id", HOSTILE[5])
            tool.set_attribute("gen_ai.tool.call.arguments", json.dumps({"data": HOSTILE_TEXT}))
            tool.set_attribute("gen_ai.tool.call.result", HOSTILE_TEXT)
            with tracer.start_as_current_span(
                "POST", kind=trace.SpanKind.CLIENT
            ) as http:  # an exfiltration to a javascript: URL
                http.set_attribute("http.request.method", "POST")
                http.set_attribute("url.full", HOSTILE[2])
                http.set_attribute("server.address", HOSTILE[6])
    request = encode_spans(exporter.get_finished_spans())
    path.write_text(json.dumps(collector_json(request)) + "\n")


def test_a_hostile_trace_renders_as_text_and_runs_no_script(browser: Any, tmp_path: Path) -> None:
    trace_file = tmp_path / "hostile.jsonl"
    _hostile_trace(trace_file)
    out = tmp_path / "hostile.html"
    report = _score([trace_file, SAMPLES / "openllmetry-benign.jsonl"], out)
    html = out.read_text()
    for text in HOSTILE:
        if "<" in text:  # no markup survives raw: "<" is escaped in every context
            assert text not in html
    assert re.search(r"<(a|img|svg|iframe|object|embed|base|link)\b", html, re.IGNORECASE) is None
    assert len(re.findall(r"<script\b", html)) == 3  # two JSON data blocks, the page's code
    page, problems = _open(browser, out)
    hostile = next(r for r in report["results"] if r["service"] == HOSTILE[0])
    _show_result(page, hostile["run_id"], hostile["check"])
    page.click("#waterfall .wf-row >> nth=0")
    assert page.evaluate("window.__pwned") is None
    assert page.evaluate("document.querySelectorAll('img, svg, iframe, object').length") == 0
    assert page.evaluate("document.scripts.length") == 3
    assert page.evaluate("getComputedStyle(document.body).display") != "none"
    names = page.locator("#waterfall .wf-name").all_text_contents()
    assert f"invoke_agent {HOSTILE[1]}" in names and f"execute_tool {HOSTILE[4]}" in names
    run_text = page.text_content("#run")
    assert HOSTILE_TEXT in run_text.replace("\\u2028", "\u2028")  # arguments and result
    assert HOSTILE[3] in page.text_content("#span-detail")  # an attribute key, as text
    tip_names = []
    for index in range(page.locator("#waterfall .wf-row").count()):  # each hover card: text
        page.hover(f"#waterfall .wf-row >> nth={index}")
        assert page.locator("#wf-tip *").evaluate_all(
            "nodes => nodes.every(n => ['DIV', 'SPAN'].includes(n.tagName))"
        )
        tip_names.append(page.text_content("#wf-tip .tip-name"))
    assert f"invoke_agent {HOSTILE[1]}" in tip_names and f"execute_tool {HOSTILE[4]}" in tip_names
    # The page still works: the filter narrows to the hostile service's results.
    page.fill("#f-text", "")
    page.select_option("#f-check", "")
    page.select_option("#f-service", HOSTILE[0])
    count = sum(1 for r in report["results"] if r["service"] == HOSTILE[0])
    assert page.text_content("#result-count").startswith(f"{count} of {len(report['results'])}")
    assert page.evaluate("window.__pwned") is None
    assert problems == []
    page.close()


# ---- issue #32: axis, hover, permalinks, sort, verdict bars, sources ----------------------


def _spans_of(sample: Path, trace_id: str) -> list[dict[str, Any]]:
    return [
        span
        for line in sample.read_text().splitlines()
        for rs in json.loads(line)["resourceSpans"]
        for ss in rs["scopeSpans"]
        for span in ss["spans"]
        if span["traceId"] == trace_id
    ]


def _ms(text: str) -> float:
    number, unit = text.rstrip("+").split()
    return float(number) * (1000 if unit == "s" else 1)


def test_the_waterfall_has_a_time_axis_durations_and_hover_details(
    browser: Any, tmp_path: Path
) -> None:
    sample = SAMPLES / "openllmetry-exfil.jsonl"
    out = tmp_path / "axis.html"
    report = _score([sample], out)
    unsafe = next(r for r in report["results"] if r["status"] == "unsafe")
    spans = {s["spanId"]: s for s in _spans_of(sample, unsafe["trace_ids"][0])}
    start = min(int(s["startTimeUnixNano"]) for s in spans.values())
    end = max(int(s["endTimeUnixNano"]) for s in spans.values())
    page, problems = _open(browser, out)
    _show_result(page, unsafe["run_id"], unsafe["check"])
    ticks = page.locator("#wf-axis .wf-tick").all_text_contents()
    assert len(ticks) == 5 and ticks[0] == "0"
    assert _ms(ticks[-1]) == pytest.approx((end - start) / 1e6, rel=0.01)  # the run's length
    for span_id, span in spans.items():
        row = page.locator(f"#waterfall .wf-row[data-span='{span_id}']")
        duration = (int(span["endTimeUnixNano"]) - int(span["startTimeUnixNano"])) / 1e6
        shown = _ms(row.locator(".wf-dur").text_content())
        assert shown == pytest.approx(duration, rel=0.01, abs=0.06)  # to the digits shown
    post = next(s for s in spans.values() if s["name"] == "POST")  # the exfiltration
    url = next(a["value"]["stringValue"] for a in post["attributes"] if a["key"] == "url.full")
    assert page.is_hidden("#wf-tip")
    page.hover(f"#waterfall .wf-row[data-span='{post['spanId']}']")
    assert page.is_visible("#wf-tip")
    lines = page.locator("#wf-tip > div").all_text_contents()
    assert lines[:2] == ["POST", "kind CLIENT · status UNSET"]
    assert lines[2].startswith("duration ")
    assert "http.request.method POST" in lines and f"url.full {url}" in lines  # key attributes
    page.mouse.move(0, 0)
    assert page.is_hidden("#wf-tip")
    assert problems == []
    page.close()


def test_permalinks_open_the_run_and_the_result_they_name(
    browser: Any, samples_report: Any
) -> None:
    path, report = samples_report
    page, problems = _open(browser, path)
    unsafe = next(r for r in report["results"] if r["status"] == "unsafe")
    _show_result(page, unsafe["run_id"], unsafe["check"])
    result_link = page.evaluate("location.hash")
    assert result_link == f"#result-{unsafe['run_id']}.{unsafe['check']}"
    run_link = f"#run-{unsafe['run_id']}"
    assert page.get_attribute("#run h2", "id") == run_link[1:]
    page.close()
    for link, selected in ((result_link, unsafe["check"]), (run_link, None)):
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(path.as_uri() + link)
        page.wait_for_selector("body[data-ready='1']")
        assert page.is_visible("#run")
        assert page.text_content("#run h2").startswith(f"Run {unsafe['run_id']}")
        chosen = page.locator("#run-results li.selected strong").all_text_contents()
        assert chosen == ([selected] if selected else [])
        page.close()
    assert problems == []


def test_an_attacker_supplied_run_id_gives_a_plain_anchor() -> None:
    from rampart_otel.exporters.html_report import anchor

    hostile = anchor("run", '"><script>x</script>', "javascript:alert(1)")
    assert re.fullmatch(r"run-h[0-9a-f]{16}\.h[0-9a-f]{16}", hostile)
    assert anchor("result", "4bf92f3577b34da6", "no-exfiltration") == (
        "result-4bf92f3577b34da6.no-exfiltration"
    )
    assert anchor("run", "a-b", "c") != anchor("run", "a", "b-c")


def test_results_sort_worst_first_and_the_tiles_filter_by_verdict(
    browser: Any, samples_report: Any
) -> None:
    path, report = samples_report
    page, problems = _open(browser, path)
    severity = {"unsafe": 0, "error": 1, "undetermined": 2, "safe": 3}
    statuses = page.locator("#result-table tbody tr").evaluate_all(
        "rows => rows.map(row => row.dataset.status)"
    )
    assert [severity[s] for s in statuses] == sorted(severity[s] for s in statuses)
    assert statuses[0] == "unsafe"
    page.select_option("#f-sort", "check")
    checks = page.locator("#result-table tbody tr td:nth-child(2)").all_text_contents()
    assert checks == sorted(checks)
    undetermined = sum(r["status"] == "undetermined" for r in report["results"])
    page.click("#tiles .tile[data-status='undetermined']")
    assert page.text_content("#result-count").startswith(f"{undetermined} of ")
    assert page.input_value("#f-status") == "undetermined"
    page.click("#tiles .tile[data-status='undetermined']")  # again: every verdict
    assert page.input_value("#f-status") == ""
    assert problems == []
    page.close()


def test_every_bar_shows_its_undetermined_share(browser: Any, samples_report: Any) -> None:
    path, report = samples_report
    page, problems = _open(browser, path)
    summaries = report["population_summary"]["by_check"]
    rows = page.locator("#rates-by-check .rate")
    assert rows.count() == len(summaries)
    for index, summary in enumerate(summaries.values()):
        row = rows.nth(index)
        share = summary["undetermined"] / summary["total"]
        segment = row.locator(".mix .seg-undetermined")
        assert segment.count() == (1 if summary["undetermined"] else 0)
        if summary["undetermined"]:
            width = segment.evaluate("s => s.getBoundingClientRect().width")
            whole = row.locator(".mix").evaluate("b => b.clientWidth")
            assert width / whole == pytest.approx(share, abs=0.02)
        assert (
            row.locator(".undetermined-share").text_content() == f"{100 * share:.1f}% undetermined"
        )
    assert page.locator("#rates-by-harm .rate .mix").count() == len(
        report["population_summary"]["by_harm_category"]
    )
    assert problems == []
    page.close()


def test_each_result_and_run_names_the_file_it_came_from(browser: Any, tmp_path: Path) -> None:
    sample = SAMPLES / "openllmetry-exfil.jsonl"
    out = tmp_path / "sources.html"
    report = _score([sample], out)
    result = report["results"][0]
    page, problems = _open(browser, out)
    assert set(page.locator("#result-table td.source").all_text_contents()) == {
        "openllmetry-exfil.jsonl:1"
    }
    _show_result(page, result["run_id"], result["check"])
    assert page.text_content("#run-sources") == "read from " + ", ".join(result["sources"])
    assert result["sources"] and result["sources"][0].endswith("openllmetry-exfil.jsonl:1")
    assert problems == []
    page.close()
