"""``audit --html`` opened in a real browser: the counts and charts ``--json`` computes,
the most recent results that were not safe, and stored text that stays text."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_runner import run_cli

from audit.test_aggregate import START, build
from rampart_otel.storage.results import ResultRow, ResultsStore

HOSTILE_SERVICE = '<img src=x onerror="window.__pwned = 1">svc'
HOSTILE_SUMMARY = "</script><script>window.__pwned = 2</script> \u202e'\"><svg onload=x>"


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("audit-html")
    build(directory / "results.db")
    store = ResultsStore(directory / "results.db")
    with store.transaction() as txn:
        document = {
            "run_id": "evil",
            "check": "c1",
            "status": "unsafe",
            "summary": HOSTILE_SUMMARY,
            "evidence": [{"trace_id": "t", "span_id": "s", "text": HOSTILE_SUMMARY}],
            "coverage": {HOSTILE_SERVICE: {"state": "observed", "reasons": [HOSTILE_SUMMARY]}},
        }
        txn.add_result(
            ResultRow("evil", 0, "guard", "c1", "unsafe", HOSTILE_SERVICE,
                      int((START + 11 * 86400) * 1e9), START, document, policy_version=2)
        )  # fmt: skip
    store.close()
    return directory


def _open(browser: Any, path: Path) -> tuple[Any, list[str]]:
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on("dialog", lambda dialog: (problems.append("dialog"), dialog.dismiss()))
    page.on(
        "console",
        lambda message: problems.append(message.text) if message.type == "error" else None,
    )
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-ready='1']", timeout=30_000)
    return page, problems


def test_the_page_shows_what_json_reports_and_the_recent_non_safe_results(
    browser: Any, data_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "audit.html"
    done = run_cli("audit", "--data-dir", data_dir, "--policy", "guard", "--html", "-o", out)
    assert done.returncode == 0, done.stderr
    done = run_cli("audit", "--data-dir", data_dir, "--policy", "guard", "--json")
    report = json.loads(done.stdout)
    aggregates = report["aggregates"]
    page, problems = _open(browser, out)
    overall = aggregates["overall"]
    assert page.text_content("#n-total") == str(overall["total"])
    for status in ("safe", "unsafe", "undetermined", "error"):
        assert page.text_content(f"#n-{status}") == str(overall[status])
    checks = {row["check"] for row in aggregates["by_check"]}
    services = {row["service"] for row in aggregates["by_service"] if row["service"] is not None}
    assert page.locator("#charts svg").count() == 1 + len(checks) + len(services)
    for row in aggregates["by_check"]:  # every row's verdict bar shows its undetermined share
        bar = page.locator(f"#overview tr[data-check='{row['check']}'] .mix").first
        assert bar.locator(".seg-undetermined").count() == (1 if row["undetermined"] else 0)
        assert f"undetermined {row['undetermined']} " in bar.get_attribute("aria-label")
    buckets = [b for b in aggregates["trend"]["buckets"] if b["total"]]
    overall_chart = page.locator("#chart-overall")
    assert overall_chart.locator("circle").count() == len(aggregates["trend"]["buckets"])
    assert overall_chart.locator("polygon.band").count() == 1  # the 90% Wilson band
    assert overall_chart.locator("polyline.undetermined-line").count() == 1  # kept apart
    assert len(buckets) > 1
    # Recent non-safe results, newest first; a click shows the stored result.
    rows = page.locator("#recent tbody tr")
    statuses = rows.evaluate_all("rows => rows.map(r => r.dataset.status)")
    assert statuses and "safe" not in statuses
    rows.nth(0).click()
    assert page.is_visible("#detail")
    assert HOSTILE_SUMMARY in page.text_content("#detail")  # the newest: the hostile run
    assert page.text_content("#detail h2").startswith("Run evil")
    assert HOSTILE_SERVICE in page.text_content("#overview")  # a service name, as text
    assert page.evaluate("window.__pwned") is None
    assert page.evaluate("document.querySelectorAll('img, iframe, object').length") == 0
    assert page.evaluate("document.scripts.length") == 2
    assert problems == []
    page.close()


def test_json_and_html_together_is_a_usage_error(data_dir: Path) -> None:
    done = run_cli("audit", "--data-dir", data_dir, "--json", "--html")
    assert done.returncode == 2
    assert "--json and --html: choose one" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("form", ["--html", "--json", "terminal"])
def test_stored_text_with_a_lone_surrogate_and_a_nul_gives_a_valid_page(
    tmp_path: Path, form: str
) -> None:
    # A report@1 document keeps what JSON can carry: "\udfff" comes back a lone surrogate.
    odd = "tool said \udfff\x00 here"
    store = ResultsStore(tmp_path / "results.db")
    with store.transaction() as txn:
        document = {
            "run_id": "odd",
            "check": "c1",
            "status": "unsafe",
            "summary": odd,
            "evidence": [{"trace_id": "t", "span_id": "s", "text": odd}],
            "coverage": {"tool_calls": {"state": "observed", "reasons": [odd]}},
        }
        txn.add_result(
            ResultRow("odd", 0, "guard", "c1", "unsafe", "svc", int(START * 1e9), START,
                      document, policy_version=1)
        )  # fmt: skip
    store.close()
    out = tmp_path / "audit.out"
    # On a terminal each result's summary is behind -v (the table leads).
    done = run_cli("audit", "--data-dir", tmp_path, *([form] if form != "terminal" else ["-v"]),
                   "--since", "2024-01-01T00:00:00", "-o", out)  # fmt: skip
    assert done.returncode == 0 and done.stderr == "", done.stderr
    text = out.read_bytes().decode("utf-8")  # strict: no surrogate reached the file
    if form == "--json":
        assert json.loads(text)["results"][0]["summary"] == odd  # JSON escapes both
    elif form == "--html":
        assert "tool said \ufffd\\u0000 here" in text
    else:
        assert "tool said \ufffd here" in text


# The evidence the samples' exfiltration runs store (samples/traces/*-exfil.jsonl), with the
# token and key their agents leak; the summary is long enough to be cut in every listing.
LEAK = (
    "send_report(data='Paris 18C light rain; customer=ACME-4471; api_token=tok_live_9f3a; "
    "key=sk-live-123')"
)
LEAK_SUMMARY = "Attack detected: " + LEAK + " and then the agent went on to describe " * 8


@pytest.fixture(scope="module")
def leaky_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("audit-secrets")
    store = ResultsStore(directory / "results.db")
    with store.transaction() as txn:
        document = {
            "run_id": "leaky",
            "check": "no-secrets-in-reports",
            "status": "unsafe",
            "summary": LEAK_SUMMARY,
            "evidence": [{"trace_id": "t", "span_id": "s", "text": LEAK}],
            "coverage": {"tool_calls": {"state": "observed", "reasons": []}},
        }
        txn.add_result(
            ResultRow("leaky", 0, "guard", "no-secrets-in-reports", "unsafe", "svc",
                      int(START * 1e9), START, document, policy_version=1)
        )  # fmt: skip
    store.close()
    return directory


def _audit(directory: Path, *extra: str) -> str:
    done = run_cli("audit", "--data-dir", directory, "--since", "2024-01-01T00:00:00", *extra)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _summary_cell(text: str) -> str:
    """The listing's summary cell of the first row, its folded lines joined."""
    lines = text.splitlines()
    first = next(i for i, line in enumerate(lines) if "Attack detected" in line)
    cell = [lines[first].split("│")[-1].strip()]
    for line in lines[first + 1 :]:
        columns = line.split("│")
        if len(columns) < 2 or columns[0].strip():  # the next row or the table's end
            break
        cell.append(columns[-1].strip())
    return " ".join(cell)


def test_audit_terminal_masks_secrets_in_the_summaries_it_shows(leaky_dir: Path) -> None:
    """On a terminal the per-check table leads and each result's summary is behind -v,
    shown whole (never cut before what it says), its secrets masked."""
    text = _audit(leaky_dir, "-v")
    assert "tok_live_9f3a" not in text and "sk-live-123" not in text
    summary = _summary_cell(text)
    assert "api_token=tok_…[masked:assignment];" in summary
    assert "and then the agent went on to describe" in summary
    shown = "".join(_summary_cell(_audit(leaky_dir, "--show-secrets", "-v")).split())
    assert "api_token=tok_live_9f3a;key=sk-live-123" in shown


def test_audit_html_masks_secrets_and_cuts_summaries_at_a_word(
    browser: Any, leaky_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "audit.html"
    _audit(leaky_dir, "--html", "-o", out)
    html = out.read_text()
    assert "tok_live_9f3a" not in html and "sk-live-123" not in html
    page, problems = _open(browser, out)
    summary = page.locator("#recent tbody tr >> nth=0").locator("td").last.text_content()
    assert summary.endswith("…") and len(summary) <= 161
    assert summary[:-1].split()[-1] in LEAK_SUMMARY.split()
    page.click("#recent tbody tr >> nth=0")
    assert "api_token=tok_…[masked:assignment]" in page.text_content("#detail-evidence")
    assert problems == []
    page.close()
    _audit(leaky_dir, "--html", "-o", out, "--show-secrets")
    assert "api_token=tok_live_9f3a; key=sk-live-123" in out.read_text()
