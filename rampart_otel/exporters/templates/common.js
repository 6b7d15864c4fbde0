"use strict";
// Shared by rampart-otel's pages. Trace content reaches a page only through textContent
// and setAttribute on attributes that are never URLs, scripts or handlers.
function el(tag, props, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) if (child !== null && child !== undefined) node.append(child);
  return node;
}
// replaceChildren would write a null child as the text "null": optional parts are left out.
function replace(node, ...children) {
  node.replaceChildren(...children.filter((child) => child !== null && child !== undefined));
}
function table(headers, rows) {
  return el("table", {}, el("thead", {}, el("tr", {}, ...headers.map((h) => el("th", { text: h })))),
    el("tbody", {}, ...rows));
}
const pct = (x) => (x === null || x === undefined ? "–" : (100 * x).toFixed(1) + "%");
// A summary cut after the last whole word that fits in n characters, with an ellipsis.
function clipWords(text, n) {
  if (!text || text.length <= n) return text || "";
  let head = text.slice(0, n - 1);
  const space = head.lastIndexOf(" ");
  if (space > n / 2) head = head.slice(0, space);
  return head.replace(/[ ,;:]+$/, "") + "…";
}
// The verdicts of a set of results as one stacked bar: every status its share, undetermined
// (what the trace could not show) as visible as unsafe and never folded into safe.
const MIX = ["unsafe", "error", "undetermined", "safe"];
function mixBar(counts) {
  const total = MIX.reduce((sum, status) => sum + (counts[status] || 0), 0);
  const bar = el("div", { class: "mix", role: "img" });
  const parts = [];
  for (const status of MIX) {
    const n = counts[status] || 0;
    parts.push(`${status} ${n} (${pct(total ? n / total : null)})`);
    if (!n) continue;
    const seg = el("div", { class: "seg seg-" + status, "data-status": status, title: `${status}: ${n} of ${total}` });
    seg.style.width = (100 * n) / total + "%";
    bar.append(seg);
  }
  bar.setAttribute("aria-label", parts.join(", "));
  return bar;
}
