// The score report page (common.js comes first in the same script).
(function () {
  const runs = JSON.parse(document.getElementById("rampart-runs").textContent);
  const meta = JSON.parse(document.getElementById("rampart-summary").textContent);
  const PAGE = 100;
  const STATUSES = ["unsafe", "undetermined", "error", "safe"];

  const clip = (text, n) => (text && text.length > n ? text.slice(0, n) + "…" : text || "");
  const statusCell = (status) => el("td", { class: "status status-" + status, text: status });

  // ---- population summary --------------------------------------------------------------
  function rateRow(label, summary) {
    const rate = summary.attack_success_rate;
    const bar = el("div", { class: "bar", title: "90% Wilson interval" });
    const band = el("div", { class: "ci" });
    band.style.left = 100 * rate.ci_low + "%";
    band.style.width = 100 * (rate.ci_high - rate.ci_low) + "%";
    bar.append(band);
    if (rate.value !== null) {
      const point = el("div", { class: "point" });
      point.style.left = 100 * rate.value + "%";
      bar.append(point);
    }
    const text = `${pct(rate.value)} [${pct(rate.ci_low)}, ${pct(rate.ci_high)}]` +
      (rate.low_support ? " low support" : "");
    return el("div", { class: "rate" },
      el("span", { text: `${label} (${summary.total}: ${summary.unsafe} unsafe, ` +
        `${summary.undetermined} undetermined)` }),
      bar, el("span", { class: "muted", text }));
  }

  function renderSummary() {
    const overall = meta.population.overall;
    const section = document.getElementById("summary");
    const tiles = el("div", { class: "tiles", id: "tiles" },
      el("div", { class: "tile" }, el("div", { class: "n", id: "n-runs", text: String(runs.length) }), "runs"));
    for (const status of ["safe", "unsafe", "undetermined", "error"]) {
      tiles.append(el("div", { class: "tile status-" + status },
        el("div", { class: "n", id: "n-" + status, text: String(overall[status]) }), status));
    }
    const byCheck = el("div", { id: "rates-by-check" });
    for (const [check, summary] of Object.entries(meta.population.by_check)) {
      byCheck.append(rateRow(check, summary));
    }
    const byHarm = el("div", { id: "rates-by-harm" });
    for (const [harm, summary] of Object.entries(meta.population.by_harm_category)) {
      byHarm.append(rateRow(harm, summary));
    }
    section.replaceChildren(
      el("h2", { text: "Summary" }), tiles,
      el("p", { class: "muted", text: "Attack success rate (unsafe among results not in error) " +
        "with its 90% Wilson interval; undetermined results are counted apart, never as safe." }),
      el("h3", { text: "By check" }), byCheck, el("h3", { text: "By harm category" }), byHarm);
    if (meta.input_errors.length) {
      const errors = document.getElementById("input-errors");
      const list = el("ul");
      for (const error of meta.input_errors) list.append(el("li", { text: `${error.location}: ${error.message}` }));
      errors.replaceChildren(el("h2", { text: `Input errors (${meta.input_errors.length})` }), list);
      errors.hidden = false;
    }
  }

  // ---- results table ------------------------------------------------------------------
  const rows = [];
  runs.forEach((run, runIndex) => {
    run.results.forEach((result, resultIndex) => {
      rows.push({
        runIndex, resultIndex, status: result.status, check: result.check,
        service: run.service || "", harm: result.harm || "",
        text: (run.id + " " + (result.summary || "")).toLowerCase(),
      });
    });
  });
  const filters = {
    status: document.getElementById("f-status"), check: document.getElementById("f-check"),
    service: document.getElementById("f-service"), harm: document.getElementById("f-harm"),
  };
  const textFilter = document.getElementById("f-text");
  let page = 0;
  let shown = rows;

  function fillSelect(select, values) {
    for (const value of values) select.append(el("option", { value, text: value || "(none)" }));
  }
  fillSelect(filters.status, STATUSES.filter((s) => rows.some((r) => r.status === s)));
  for (const key of ["check", "service", "harm"]) {
    fillSelect(filters[key], [...new Set(rows.map((r) => r[key]))].sort());
  }

  function applyFilters() {
    const wanted = {};
    for (const [key, select] of Object.entries(filters)) wanted[key] = select.value;
    const text = textFilter.value.trim().toLowerCase();
    shown = rows.filter((row) =>
      (!wanted.status || row.status === wanted.status) &&
      (!wanted.check || row.check === wanted.check) &&
      (!wanted.service || row.service === wanted.service) &&
      (!wanted.harm || row.harm === wanted.harm) &&
      (!text || row.text.includes(text)));
    page = 0;
    renderTable();
  }

  function renderTable() {
    const body = document.querySelector("#result-table tbody");
    const start = page * PAGE;
    const slice = shown.slice(start, start + PAGE);
    body.replaceChildren(...slice.map((row) => {
      const run = runs[row.runIndex];
      const result = run.results[row.resultIndex];
      const tr = el("tr", { class: "clickable", "data-status": row.status },
        statusCell(row.status), el("td", { text: row.check }),
        el("td", { title: run.id, text: clip(run.id, 12) }), el("td", { text: row.service }),
        el("td", { text: row.harm }), el("td", { text: clip(result.summary, 160) }));
      tr.addEventListener("click", () => showRun(row.runIndex, row.resultIndex));
      return tr;
    }));
    document.getElementById("result-count").textContent =
      `${shown.length} of ${rows.length} results` +
      (shown.length > PAGE ? `, showing ${start + 1}–${start + slice.length}` : "");
    const pager = document.getElementById("pager");
    const pages = Math.max(1, Math.ceil(shown.length / PAGE));
    const prev = el("button", { type: "button", text: "previous" });
    const next = el("button", { type: "button", text: "next" });
    prev.disabled = page === 0;
    next.disabled = page >= pages - 1;
    prev.addEventListener("click", () => { page -= 1; renderTable(); });
    next.addEventListener("click", () => { page += 1; renderTable(); });
    pager.replaceChildren(prev, el("span", { text: `page ${page + 1} of ${pages}` }), next);
  }

  // ---- one run --------------------------------------------------------------------------
  function waterfall(run, spanRows, showSpan) {
    // The spans come in the run graph's tree order, each with its depth (html_report.py).
    const ordered = run.spans.map((span) => [span, span.depth]);
    const total = Math.max(1e-6, ...run.spans.map((s) => s.end ?? s.start ?? 0));
    const box = el("div", { class: "waterfall", id: "waterfall" });
    for (const [span, depth] of ordered) {
      const name = el("div", { class: "wf-name", title: span.name, text: span.name });
      name.style.paddingLeft = 4 + 14 * Math.min(depth, 30) + "px";
      const bar = el("div", { class: "wf-bar" + (span.status === "ERROR" ? " error" : "") +
        (span.end === null ? " open" : "") });
      const start = span.start ?? 0;
      const end = span.end ?? total;
      bar.style.left = (100 * start) / total + "%";
      bar.style.width = (100 * Math.max(end - start, 0)) / total + "%";
      bar.title = `${(end - start).toFixed(1)} ms` + (span.end === null ? " (never ended)" : "");
      const row = el("div", { class: "wf-row", "data-span": span.id }, name,
        el("div", { class: "wf-track" }, bar));
      row.addEventListener("click", () => showSpan(span.id));
      spanRows.set(span.id, row);
      box.append(row);
    }
    return box;
  }

  function showRun(runIndex, resultIndex) {
    const run = runs[runIndex];
    const section = document.getElementById("run");
    const spanRows = new Map();
    const detail = el("div", { id: "span-detail" });
    const showSpan = (spanId) => {
      for (const row of spanRows.values()) row.classList.remove("highlight");
      const row = spanRows.get(spanId);
      const span = run.spans.find((s) => s.id === spanId);
      if (!row || !span) {
        detail.replaceChildren(el("p", { class: "muted", text: `span ${spanId} is not in this run's trace` }));
        return;
      }
      row.classList.add("highlight");
      row.scrollIntoView({ block: "center" });
      replace(detail, el("h3", { text: `Span ${span.name} (${span.id})` }),
        table(["attribute", "value"], span.attributes.map(([key, value]) =>
          el("tr", { class: "attrs" }, el("td", { text: key }), el("td", {}, el("pre", { text: value ?? "" }))))),
        span.more_attributes ? el("p", { class: "muted", text: `${span.more_attributes} more attributes not shown` }) : null);
    };
    const gaps = new Set(run.results.flatMap((r) => r.gaps));
    const results = run.results.map((result, index) => {
      const item = el("li", { class: index === resultIndex ? "selected" : "" },
        el("span", { class: "status status-" + result.status, text: result.status }), " ",
        el("strong", { text: result.check }), " ", el("span", { text: result.summary || "" }));
      if (result.rationale) item.append(el("div", { class: "muted", text: result.rationale }));
      if (result.gaps.length) {
        item.append(el("div", { class: "gap-label", text: "gap on " + result.gaps.join(", ") }));
      }
      for (const evidence of result.evidence) {
        const link = el("button", { type: "button", class: "evidence-link", "data-span": evidence.span || "",
          text: `span ${evidence.span || "?"}` });
        link.addEventListener("click", () => showSpan(evidence.span));
        item.append(el("div", { class: "evidence" }, link, " ", el("span", { class: "text", text: evidence.text })));
      }
      if (result.error) item.append(el("div", { class: "status-error", text: result.error }));
      return item;
    });
    const coverage = table(["channel", "state", "source", "reasons"], run.coverage.map((c) =>
      el("tr", { class: gaps.has(c.channel) ? "gap" : "", "data-channel": c.channel },
        el("td", { text: c.channel }), el("td", { class: "state-" + c.state, text: c.state }),
        el("td", { text: c.source }), el("td", {}, el("pre", { text: c.reasons.join("\n") })))));
    const calls = table(["tool", "status", "arguments", "result", "spans"], run.calls.map((call) =>
      el("tr", {}, el("td", { text: call.name }), el("td", { text: call.status }),
        el("td", {}, el("pre", { text: call.arguments_captured ? call.arguments : "(not captured)" })),
        el("td", {}, el("pre", { text: call.result_captured ? call.result : "(not captured)" })),
        el("td", { text: call.spans.join(" ") }))));
    const effects = table(["kind", "details", "tool", "span"], run.effects.map((effect) =>
      el("tr", {}, el("td", { text: effect.kind }),
        el("td", {}, el("pre", { text: JSON.stringify(effect.details, null, 1) })),
        el("td", { text: effect.tool || "(not attributed)" }), el("td", { text: effect.span_id }))));
    replace(section,
      el("h2", { text: `Run ${run.id}` }),
      el("p", { class: "muted", text: `service ${run.service || "(none)"} · started ${run.started || "?"} · ` +
        `observability ${run.level || "?"} · ${run.spans.length} spans` }),
      el("h3", { text: "Verdicts" }), el("ul", { id: "run-results" }, ...results),
      el("h3", { text: "Coverage" }), coverage,
      el("h3", { text: "Span waterfall" }), waterfall(run, spanRows, showSpan), detail,
      el("h3", { text: `Tool calls (${run.calls.length})` }), calls,
      el("h3", { text: `Side effects (${run.effects.length})` }), effects,
      el("h3", { text: "User input" }), el("pre", { id: "run-input", text: run.input.map((t) => t ?? "(not captured)").join("\n---\n") }),
      el("h3", { text: "Response" }), el("pre", { id: "run-response", text: run.response ?? "(not captured)" }),
      run.integrity.length ? el("h3", { text: "Integrity" }) : null,
      run.integrity.length ? el("ul", {}, ...run.integrity.map((m) => el("li", { text: m }))) : null);
    section.hidden = false;
    section.scrollIntoView({ block: "start" });
  }

  for (const select of Object.values(filters)) select.addEventListener("change", applyFilters);
  textFilter.addEventListener("input", applyFilters);
  document.getElementById("filters").addEventListener("submit", (event) => event.preventDefault());
  renderSummary();
  renderTable();
  document.body.dataset.ready = "1";
})();
