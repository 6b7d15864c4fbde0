// The audit page (common.js comes first in the same script).
(function () {
  const data = JSON.parse(document.getElementById("rampart-audit").textContent);
  const agg = data.aggregates;
  const SVG = "http://www.w3.org/2000/svg";

  function svg(tag, attrs) {
    const node = document.createElementNS(SVG, tag);
    for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, String(value));
    return node;
  }
  const share = (n, d) => (d ? n / d : null);

  function summaryCells(s) {
    const rate = s.attack_success_rate;
    return [el("td", { text: String(s.total) }), el("td", { class: "status-safe", text: String(s.safe) }),
      el("td", { class: "status-unsafe", text: String(s.unsafe) }),
      el("td", { class: "status-undetermined", text: String(s.undetermined) }),
      el("td", { class: "status-error", text: String(s.error) }),
      el("td", { class: "mix-cell" }, mixBar(s)),
      el("td", { text: `${pct(rate.value)} [${pct(rate.ci_low)}, ${pct(rate.ci_high)}]` })];
  }
  const HEAD = ["results", "safe", "unsafe", "undetermined", "error", "verdicts", "attack success (90% CI)"];

  function renderOverview() {
    const o = agg.overall;
    const tiles = el("div", { class: "tiles" });
    for (const [id, label, value] of [["n-total", "results", o.total], ["n-safe", "safe", o.safe],
      ["n-unsafe", "unsafe", o.unsafe], ["n-undetermined", "undetermined", o.undetermined],
      ["n-error", "error", o.error]]) {
      tiles.append(el("div", { class: "tile status-" + label }, el("div", { class: "n", id, text: String(value) }), label));
    }
    const checks = table(["policy", "check", "harm category", ...HEAD], agg.by_check.map((row) =>
      el("tr", { "data-check": row.check }, el("td", { text: `${row.policy.name} v${row.policy.version ?? "–"}` }),
        el("td", { text: row.check }), el("td", { text: row.harm_category || "" }), ...summaryCells(row))));
    const services = table(["service", ...HEAD], agg.by_service.map((row) =>
      el("tr", { "data-service": row.service ?? "" }, el("td", { text: row.service ?? "(none)" }), ...summaryCells(row))));
    const window = `${agg.window.first || "–"} to ${agg.window.last || "–"} · ${agg.trend.bucket} buckets`;
    document.getElementById("overview").replaceChildren(
      el("h2", { text: "Overview" }), el("p", { class: "muted", text: window }), tiles,
      el("h3", { text: "By check" }), checks, el("h3", { text: "By service" }), services);
  }

  // A chart: the attack success rate per bucket with its 90% Wilson band, and the share of
  // undetermined verdicts as a separate dashed line (never folded into safe).
  function chart(title, buckets, id) {
    const W = 640, H = 180, L = 44, R = 10, T = 10, B = 28;
    const box = svg("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: "img", id });
    box.append(svg("rect", { x: L, y: T, width: W - L - R, height: H - T - B, fill: "#f6f8fa" }));
    const n = buckets.length;
    const x = (i) => L + (n <= 1 ? (W - L - R) / 2 : (i * (W - L - R)) / (n - 1));
    const y = (v) => T + (1 - v) * (H - T - B);
    for (const v of [0, 0.5, 1]) {
      box.append(svg("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), stroke: "#d0d7de" }));
      const label = svg("text", { x: 4, y: y(v) + 4 });
      label.textContent = pct(v);
      box.append(label);
    }
    const points = buckets.map((b, i) => ({ i, b, r: b.attack_success_rate }));
    const band = points.filter((p) => p.r.denominator > 0);
    if (band.length) {
      const upper = band.map((p) => `${x(p.i)},${y(p.r.ci_high)}`);
      const lower = band.slice().reverse().map((p) => `${x(p.i)},${y(p.r.ci_low)}`);
      box.append(svg("polygon", { points: upper.concat(lower).join(" "), fill: "rgba(207,34,46,.18)", class: "band" }));
      box.append(svg("polyline", { points: band.map((p) => `${x(p.i)},${y(p.r.value)}`).join(" "),
        fill: "none", stroke: "#cf222e", "stroke-width": 2, class: "rate-line" }));
    }
    const undetermined = points.filter((p) => p.b.total > 0);
    if (undetermined.length) {
      box.append(svg("polyline", { points: undetermined.map((p) => `${x(p.i)},${y(share(p.b.undetermined, p.b.total))}`).join(" "),
        fill: "none", stroke: "#9a6700", "stroke-width": 1.5, "stroke-dasharray": "4 3", class: "undetermined-line" }));
    }
    for (const p of points) {
      const dot = svg("circle", { cx: x(p.i), cy: y(p.r.value ?? 0), r: 3, fill: p.r.value === null ? "#d0d7de" : "#cf222e" });
      const tip = svg("title");
      tip.textContent = `${p.b.start}: ${p.b.total} results, ${p.b.unsafe} unsafe, ${p.b.undetermined} undetermined; ` +
        `attack success ${pct(p.r.value)} [${pct(p.r.ci_low)}, ${pct(p.r.ci_high)}]`;
      dot.append(tip);
      box.append(dot);
    }
    if (n) {
      for (const i of [0, n - 1]) {
        const label = svg("text", { x: Math.min(x(i), W - 150), y: H - 8 });
        label.textContent = (buckets[i].start || "").slice(0, 16).replace("T", " ");
        box.append(label);
      }
    }
    return el("figure", { class: "chart" }, el("figcaption", { text: title }), box);
  }

  function renderCharts() {
    const section = document.getElementById("charts");
    section.replaceChildren(el("h2", { text: "Trends" }),
      el("p", { class: "muted", text: "Solid: attack success rate with its 90% Wilson band. Dashed: share undetermined." }),
      chart("All checks", data.series.overall, "chart-overall"));
    let index = 0;
    section.append(el("h3", { text: "Per check" }));
    for (const [name, buckets] of Object.entries(data.series.check)) section.append(chart(name, buckets, "chart-check-" + index++));
    section.append(el("h3", { text: "Per service" }));
    for (const [name, buckets] of Object.entries(data.series.service)) section.append(chart(name, buckets, "chart-service-" + index++));
  }

  function showResult(item) {
    const doc = item.result || {};
    const detail = document.getElementById("detail");
    const evidence = (doc.evidence || []).map((e) => el("li", {}, el("code", { text: `span ${e.span_id}` }), " ", el("span", { class: "text", text: e.text })));
    const coverage = Object.entries(doc.coverage || {}).map(([key, c]) =>
      el("tr", { "data-channel": key }, el("td", { text: key }), el("td", { class: "state-" + c.state, text: c.state }),
        el("td", {}, el("pre", { text: (c.reasons || []).join("\n") }))));
    detail.replaceChildren(el("h2", { text: `Run ${item.run_id} (revision ${item.revision})` }),
      el("p", {}, el("span", { class: "status status-" + item.status, text: item.status }), " ",
        el("strong", { text: item.check }), " ", el("span", { text: doc.summary || "" })),
      el("p", { class: "muted", text: `service ${item.service || "(none)"} · run at ${item.run_at || "?"} · trace ${(doc.trace_ids || []).join(", ")}` }),
      el("h3", { text: "Evidence" }), el("ul", { id: "detail-evidence" }, ...evidence),
      el("h3", { text: "Coverage" }), table(["channel", "state", "reasons"], coverage));
    detail.hidden = false;
    detail.scrollIntoView({ block: "start" });
  }

  function renderRecent() {
    const notSafe = data.recent.filter((r) => r.status !== "safe").reverse();
    const rows = notSafe.map((item) => {
      const tr = el("tr", { class: "clickable", "data-status": item.status },
        el("td", { class: "status status-" + item.status, text: item.status }), el("td", { text: item.run_at || "" }),
        el("td", { text: item.check }), el("td", { text: item.service || "" }),
        el("td", { title: item.run_id, text: item.run_id.slice(0, 12) }),
        el("td", { text: clipWords((item.result || {}).summary || "", 160) }));
      tr.addEventListener("click", () => showResult(item));
      return tr;
    });
    document.getElementById("recent").replaceChildren(
      el("h2", { text: `Most recent results that were not safe (${notSafe.length})` }),
      table(["status", "run at", "check", "service", "run", "summary"], rows));
    if (data.input_errors.length) {
      const errors = document.getElementById("input-errors");
      errors.replaceChildren(el("h2", { text: `Quarantined records (${data.input_errors.length})` }),
        el("ul", {}, ...data.input_errors.map((e) => el("li", { text: `${e.location}: ${e.message}` }))));
      errors.hidden = false;
    }
  }

  renderOverview();
  renderCharts();
  renderRecent();
  document.body.dataset.ready = "1";
})();
