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
