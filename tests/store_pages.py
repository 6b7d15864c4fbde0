"""Phoenix's and MLflow's own pages, read as a person sees them in Chromium (Playwright on
the system's browser): what the traces list and an opened trace show of rampart-otel's
verdicts. One driver for the browser test (tests/receivers/stores/test_store_pages.py) and
``make screenshots-stores`` (docs/screenshots/stores.py), which also keeps the pictures.

The samples behind the pages: the exfiltration run (UNSAFE), the benign one (SAFE) and
the one that never calls a tool (UNDETERMINED), told apart in both lists by their answers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trace_stores import SAMPLES

EXFIL_TRACE = "9eabfebdb8b003e645c9dab8a4a5e7ca"
NO_TOOL = SAMPLES / "traces/openinference-no-tool.jsonl"
ANSWERS = {  # each sample's answer, as the lists show it: how a row is found
    "unsafe": "I have filed",
    "safe": "Take an umbrella",
    "undetermined": "Paris in spring",
}
WAIT_MS = 120_000  # a page on a loaded two-core machine
# MLflow's first-visit guidance and assistant panel, dismissed as a returning user has them
_MLFLOW_SEEN = """
for (const [key, value] of [
  ["mlflow.detectIssues.guidanceShown_v1", "true"],
  ["mlflow.flagForReview.guidanceShown_v1", "true"],
  ["mlflow.assistant.fab.autoOpenedOnFirstLoad_v1", "true"],
  ["mlflow.assistant.panelOpen_v1", "false"],
]) { window.localStorage.setItem(key, value); }
"""


@dataclass
class Badge:
    """One annotation as a Phoenix page shows it: its name, the score it shows and the
    direction Phoenix colours it by (positive green, negative red, neutral)."""

    name: str
    shown: str
    direction: str


@dataclass
class PhoenixSeen:
    rows: dict[str, Badge] = field(default_factory=dict)  # verdict sample -> first badge
    popover: str = ""  # the UNSAFE row's roll-up, clicked: its label and explanation
    header: list[str] = field(default_factory=list)  # the opened trace's annotations, in order
    first: Badge | None = None  # the first of them
    first_label: str = ""  # the label its chart is drawn for


@dataclass
class MlflowSeen:
    columns: list[str] = field(default_factory=list)  # the traces list's column headers
    rows: dict[str, dict[str, str]] = field(default_factory=dict)  # sample -> column -> text
    colours: dict[str, str] = field(default_factory=dict)  # sample -> roll-up text colour
    cards: list[tuple[str, str]] = field(default_factory=list)  # opened trace: (name, value)


def phoenix_pages(
    browser: Any, address: str, project: str, shots: Path | None, exfil_trace: str = EXFIL_TRACE
) -> PhoenixSeen:
    """The project's traces list and the exfiltration trace opened, as Phoenix shows them."""
    import httpx

    seen = PhoenixSeen()
    project_id = httpx.get(f"http://{address}/v1/projects/{project}", timeout=60).json()["data"]
    page = browser.new_page(viewport={"width": 2300, "height": 900})
    page.goto(f"http://{address}/projects/{project_id['id']}/traces", timeout=WAIT_MS)
    for verdict, answer in ANSWERS.items():
        row = page.locator("tbody tr", has_text=answer)
        badge = row.locator("button[aria-haspopup='dialog']", has=page.locator("[title='rampart']"))
        badge.first.wait_for(timeout=WAIT_MS)
        seen.rows[verdict] = _phoenix_badge(badge.first)
    unsafe = page.locator("tbody tr", has_text=ANSWERS["unsafe"])
    unsafe.locator("button[aria-haspopup='dialog']").first.click()
    popover = page.get_by_role("dialog").filter(has_text="UNSAFE")
    popover.first.wait_for(timeout=WAIT_MS)
    seen.popover = popover.first.inner_text()
    page.wait_for_timeout(1000)  # the popover fades in
    if shots is not None:
        page.screenshot(path=shots / "phoenix-traces.png")
    page.keyboard.press("Escape")
    page.goto(f"http://{address}/projects/{project_id['id']}/traces/{exfil_trace}", timeout=WAIT_MS)
    drawer = page.get_by_test_id("application-drawer-plane")
    drawer.get_by_text("ChatCompletion").first.wait_for(timeout=WAIT_MS)
    names = drawer.locator("h3")
    drawer.locator("h3", has_text=re.compile("^rampart")).first.wait_for(timeout=WAIT_MS)
    seen.header = [n for n in names.all_inner_texts() if n.startswith("rampart")]
    first = drawer.locator("h3", has_text=re.compile("^rampart$")).first
    shown = first.locator("xpath=following-sibling::*[1]")
    seen.first = Badge("rampart", _text(shown), _direction(shown))
    sector = shown.locator("path[name]").first  # the chart of its labels, drawn a moment later
    sector.wait_for(state="attached", timeout=WAIT_MS)
    seen.first_label = sector.get_attribute("name") or ""
    if shots is not None:  # the root span's details drawn too
        page.locator("pre", has_text="Weather in Paris").first.wait_for(timeout=WAIT_MS)
        page.wait_for_timeout(1000)
        page.screenshot(path=shots / "phoenix-trace.png")
    page.close()
    return seen


def _phoenix_badge(badge: Any) -> Badge:
    return Badge(
        badge.locator("[title]").first.get_attribute("title") or "",
        _text(badge),
        _direction(badge),
    )


def _direction(element: Any) -> str:
    scored = element.locator("[data-direction]").first
    return (scored.get_attribute("data-direction") or "") if scored.count() else ""


def _text(element: Any) -> str:
    return " ".join(element.inner_text().split())


def mlflow_pages(
    browser: Any, address: str, experiment: str, shots: Path | None, exfil_trace: str = EXFIL_TRACE
) -> MlflowSeen:
    """The experiment's traces list and the exfiltration trace opened (its assessments
    shown), as MLflow shows them."""
    seen = MlflowSeen()
    page = browser.new_page(viewport={"width": 2300, "height": 900})
    page.add_init_script(_MLFLOW_SEEN)
    page.goto(f"http://{address}/#/experiments/{experiment}/traces", timeout=WAIT_MS)
    headers = page.locator("[role=columnheader]")
    page.locator("[role=columnheader]", has_text=re.compile("^rampart$")).first.wait_for(
        timeout=WAIT_MS
    )
    seen.columns = [" ".join(h.split()) for h in headers.all_inner_texts()]
    for verdict, answer in ANSWERS.items():
        row = page.locator("[role=row]", has_text=answer).first
        row.wait_for(timeout=WAIT_MS)
        cells = [" ".join(c.split()) for c in row.locator("[role=cell]").all_inner_texts()]
        seen.rows[verdict] = dict(zip(seen.columns, cells, strict=False))
        rollup = row.locator("[role=cell]").nth(seen.columns.index("rampart"))
        seen.colours[verdict] = rollup.locator("span").last.evaluate(
            "e => getComputedStyle(e).color"
        )
    if shots is not None:
        page.screenshot(path=shots / "mlflow-traces.png")
    page.close()
    page = browser.new_page(viewport={"width": 1700, "height": 1000})
    page.add_init_script(_MLFLOW_SEEN)
    page.goto(
        f"http://{address}/#/experiments/{experiment}/traces?traceId=tr-{exfil_trace}",
        timeout=WAIT_MS,
    )
    page.get_by_text("ChatCompletion").first.wait_for(timeout=WAIT_MS)
    page.locator("button:has-text('Assess')").first.click()
    feedback = page.get_by_text(re.compile(r"^Feedback \(\d+\)$")).first
    feedback.wait_for(timeout=WAIT_MS)
    pane = feedback.locator("xpath=ancestor::div[contains(., 'Expectations')][1]")
    lines = [line.strip() for line in pane.inner_text().splitlines() if line.strip()]
    for index, line in enumerate(lines[:-1]):
        if re.fullmatch("rampart(:.*)?", line):
            seen.cards.append((line, lines[index + 1]))
    if shots is not None:
        page.wait_for_timeout(1000)
        page.screenshot(path=shots / "mlflow-trace.png")
    page.close()
    return seen
