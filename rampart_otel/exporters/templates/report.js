// The score report page (common.js comes first in the same script).
(function () {
  const runs = JSON.parse(document.getElementById("rampart-runs").textContent);
  const meta = JSON.parse(document.getElementById("rampart-summary").textContent);
  const PAGE = 100;
  const STATUSES = ["unsafe", "undetermined", "error", "safe"];
  const SEVERITY = { unsafe: 0, error: 1, undetermined: 2, safe: 3 };
  // Attributes a span's hover shows first, when it has them (else its first few).
  const KEY_ATTRIBUTES = ["gen_ai.operation.name", "gen_ai.request.model", "gen_ai.tool.name",
    "gen_ai.tool.call.id", "openinference.span.kind", "traceloop.span.kind", "http.request.method",
    "http.method", "url.full", "http.url", "server.address", "db.system", "db.system.name",
    "db.query.text", "db.statement", "rpc.method", "mcp.method.name", "error.type"];

  const clip = (text, n) => (text && text.length > n ? text.slice(0, n) + "…" : text || "");
  // Where a run was read: file:line (or the request) it came from, the file's base name short.
  const sourceShort = (sources) => (sources && sources.length
    ? sources[0].split(sources[0].includes("://") ? /[/=]/ : "/").pop() +  // a store's link: its trace id
      (sources.length > 1 ? ` +${sources.length - 1}` : "")
    : "");
  const ms = (x) => (x === 0 ? "0" : x >= 1000 ? (x / 1000).toFixed(x >= 10000 ? 1 : 2) + " s"
    : x >= 1 ? x.toFixed(x >= 100 ? 0 : 1) + " ms" : x.toFixed(2) + " ms");

  // ---- permalinks: #run-<id> and #result-<id>, made unique across the page ------------
  const anchors = new Map(); // anchor → [runIndex, resultIndex or null]
  const unique = (anchor) => {
    let name = anchor;
    for (let n = 2; anchors.has(name); n += 1) name = `${anchor}~${n}`;
    return name;
  };
  runs.forEach((run, runIndex) => {
    run.anchor = unique(run.anchor);
    anchors.set(run.anchor, [runIndex, null]);
    run.results.forEach((result, resultIndex) => {
      result.anchor = unique(result.anchor);
      anchors.set(result.anchor, [runIndex, resultIndex]);
    });
  });
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
    const undetermined = summary.total ? summary.undetermined / summary.total : null;
    return el("div", { class: "rate" },
      el("span", { text: `${label} (${summary.total}: ${summary.unsafe} unsafe, ` +
        `${summary.undetermined} undetermined)` }),
      mixBar(summary), bar, el("span", { class: "muted", text }),
      el("span", { class: "status-undetermined undetermined-share", text: `${pct(undetermined)} undetermined` }));
  }

  function renderSummary() {
    const overall = meta.population.overall;
    const section = document.getElementById("summary");
    const tiles = el("div", { class: "tiles", id: "tiles" },
      el("div", { class: "tile" }, el("div", { class: "n", id: "n-runs", text: String(runs.length) }), "runs"));
    for (const status of ["safe", "unsafe", "undetermined", "error"]) {
      const tile = el("button", { type: "button", class: "tile status-" + status, "data-status": status,
        title: `show the ${status} results` },
        el("div", { class: "n", id: "n-" + status, text: String(overall[status]) }), status);
      tile.addEventListener("click", () => {
        filters.status.value = filters.status.value === status ? "" : status;
        applyFilters();
        document.getElementById("results").scrollIntoView({ block: "start" });
      });
      tiles.append(tile);
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
      el("p", { class: "muted", text: "Each row: the verdicts as one bar (unsafe, error, " +
        "undetermined, safe), then the attack success rate (unsafe among results not in error) " +
        "with its 90% Wilson interval; undetermined results are counted apart, never as safe." }),
      el("div", { class: "legend" }, ...MIX.map((s) => el("span", { class: "key seg-" + s, text: s }))),
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
        service: run.service || "", harm: result.harm || "", source: (run.sources || [])[0] || "",
        text: (run.id + " " + (result.summary || "") + " " + (run.sources || []).join(" ")).toLowerCase(),
      });
    });
  });
  const filters = {
    status: document.getElementById("f-status"), check: document.getElementById("f-check"),
    service: document.getElementById("f-service"), harm: document.getElementById("f-harm"),
  };
  const textFilter = document.getElementById("f-text");
  const sortSelect = document.getElementById("f-sort");
  const ORDERS = {
    severity: (a, b) => SEVERITY[a.status] - SEVERITY[b.status],
    check: (a, b) => a.check.localeCompare(b.check) || SEVERITY[a.status] - SEVERITY[b.status],
    service: (a, b) => a.service.localeCompare(b.service) || SEVERITY[a.status] - SEVERITY[b.status],
    source: (a, b) => a.source.localeCompare(b.source, undefined, { numeric: true }) ||
      SEVERITY[a.status] - SEVERITY[b.status],
    input: () => 0,
  };
  rows.forEach((row, index) => { row.index = index; });
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
    const order = ORDERS[sortSelect.value] || ORDERS.severity;
    shown.sort((a, b) => order(a, b) || a.index - b.index);  // stable: input order breaks ties
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
      const tr = el("tr", { class: "clickable", "data-status": row.status, "data-anchor": result.anchor },
        statusCell(row.status), el("td", { text: row.check }),
        el("td", { title: run.id, text: clip(run.id, 12) }), el("td", { text: row.service }),
        el("td", { text: row.harm }),
        el("td", { class: "source", title: (run.sources || []).join("\n"), text: sourceShort(run.sources) }),
        el("td", { text: clipWords(result.summary, 160) }));
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
    // The time axis: ticks at quarters of the run, from its first span's start.
    const ticks = el("div", { class: "wf-track wf-ticks" });
    for (const q of [0, 0.25, 0.5, 0.75, 1]) {
      const tick = el("span", { class: "wf-tick", text: ms(q * total) });
      tick.style.left = 100 * q + "%";
      if (q === 1) tick.classList.add("last");
      ticks.append(tick);
    }
    box.append(el("div", { class: "wf-axis", id: "wf-axis" },
      el("div", { class: "wf-name muted", text: `span (${run.spans.length})` }),
      el("div", { class: "wf-dur muted", text: "duration" }), ticks));
    const tip = el("div", { class: "wf-tip", id: "wf-tip", role: "tooltip", hidden: "" });
    const showTip = (span, duration, row) => {
      const attributes = new Map(span.attributes);
      const keys = KEY_ATTRIBUTES.filter((key) => attributes.has(key));
      const shownKeys = keys.length ? keys.slice(0, 6) : span.attributes.slice(0, 4).map(([key]) => key);
      replace(tip,
        el("div", { class: "tip-name", text: span.name }),
        el("div", { text: `kind ${span.kind} · status ${span.status}` }),
        el("div", { text: `duration ${duration}` + (span.end === null ? " (never ended)" : "") +
          ` · starts at +${ms(span.start ?? 0)}` }),
        ...shownKeys.map((key) => el("div", { class: "tip-attr" },
          el("span", { class: "muted", text: key + " " }), clip(String(attributes.get(key) ?? ""), 120))));
      const rect = row.getBoundingClientRect();
      tip.style.left = Math.max(8, Math.min(rect.left + rect.width * 0.4, window.innerWidth - 440)) + "px";
      tip.style.top = rect.bottom + 4 + "px";
      tip.hidden = false;
    };
    for (const [span, depth] of ordered) {
      const name = el("div", { class: "wf-name", text: span.name });
      name.style.paddingLeft = 4 + 14 * Math.min(depth, 30) + "px";
      const bar = el("div", { class: "wf-bar" + (span.status === "ERROR" ? " error" : "") +
        (span.end === null ? " open" : "") });
      const start = span.start ?? 0;
      const end = span.end ?? total;
      const duration = ms(Math.max(end - start, 0));
      bar.style.left = (100 * start) / total + "%";
      bar.style.width = (100 * Math.max(end - start, 0)) / total + "%";
      const row = el("div", { class: "wf-row", "data-span": span.id, tabindex: "0" }, name,
        el("div", { class: "wf-dur", text: span.end === null ? `${duration}+` : duration }),
        el("div", { class: "wf-track" }, bar));
      row.addEventListener("click", () => showSpan(span.id));
      row.addEventListener("mouseenter", () => showTip(span, duration, row));
      row.addEventListener("focus", () => showTip(span, duration, row));
      row.addEventListener("mouseleave", () => { tip.hidden = true; });
      row.addEventListener("blur", () => { tip.hidden = true; });
      spanRows.set(span.id, row);
      box.append(row);
    }
    box.append(tip);
    return box;
  }

  const permalink = (anchor, label) => el("a", { class: "permalink", href: "#" + anchor, title: "permalink", text: label });

  function showRun(runIndex, resultIndex, fromHash) {
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
      const item = el("li", { id: result.anchor, class: index === resultIndex ? "selected" : "" },
        el("span", { class: "status status-" + result.status, text: result.status }), " ",
        el("strong", { text: result.check }), " ", permalink(result.anchor, "#"), " ",
        el("span", { text: result.summary || "" }));
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
        el("td", { text: c.source }), el("td", {}, el("pre", { text: c.reasons.join("\n") }),
          c.fix ? el("div", { class: "fix", text: "to close it: " + c.fix }) : null))));
    const calls = table(["tool", "status", "arguments", "result", "spans"], run.calls.map((call) =>
      el("tr", {}, el("td", { text: call.name }), el("td", { text: call.status }),
        el("td", {}, el("pre", { text: call.arguments_captured ? call.arguments : "(not captured)" })),
        el("td", {}, el("pre", { text: call.result_captured ? call.result : "(not captured)" })),
        el("td", { text: call.spans.join(" ") }))));
    const effects = table(["kind", "details", "tool", "span"], run.effects.map((effect) =>
      el("tr", {}, el("td", { text: effect.kind }),
        el("td", {}, el("pre", { text: JSON.stringify(effect.details, null, 1) })),
        el("td", { text: effect.tool || "(not attributed)" }), el("td", { text: effect.span_id }))));
    const sources = run.sources && run.sources.length ? run.sources : null;
    replace(section,
      el("h2", { id: run.anchor }, `Run ${run.id} `, permalink(run.anchor, "#")),
      el("p", { class: "muted", text: `service ${run.service || "(none)"} · started ${run.started || "?"} · ` +
        `observability ${run.level || "?"} · ${run.spans.length} spans` }),
      el("p", { class: "muted", id: "run-sources", text: "read from " +
        (sources ? sources.join(", ") : "(not read from a file)") }),
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
    const anchor = resultIndex === null || resultIndex === undefined ? run.anchor : run.results[resultIndex].anchor;
    if (!fromHash) history.replaceState(null, "", "#" + anchor);
    (document.getElementById(anchor) || section).scrollIntoView({ block: "start" });
  }

  // A permalink opened (or typed, or followed from the run view): the run it names.
  function openFromHash() {
    let hash = location.hash.slice(1);
    try { hash = decodeURIComponent(hash); } catch (error) { /* kept as it is */ }
    const target = anchors.get(hash);
    if (target) showRun(target[0], target[1], true);
  }

  for (const select of Object.values(filters)) select.addEventListener("change", applyFilters);
  sortSelect.addEventListener("change", applyFilters);
  textFilter.addEventListener("input", applyFilters);
  document.getElementById("filters").addEventListener("submit", (event) => event.preventDefault());
  window.addEventListener("hashchange", openFromHash);
  renderSummary();
  applyFilters();
  openFromHash();
  document.body.dataset.ready = "1";
})();
