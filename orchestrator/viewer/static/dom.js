// DOM helpers: every string goes in as text (textContent), never as markup.

export function h(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key.startsWith("on") && typeof value === "function") node.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(node.dataset, value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  append(node, children);
  return node;
}

export function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
  return node;
}

export async function api(path) {
  const response = await fetch(path, { headers: { accept: "application/json" }, cache: "no-store" });
  const body = await response.json().catch(() => ({ error: `the viewer answered ${response.status}` }));
  if (!response.ok) throw new Error(body.error || `the viewer answered ${response.status}`);
  return body;
}

export function q(value) {
  return encodeURIComponent(value);
}

export function badge(state) {
  const text = state === null || state === undefined ? "–" : String(state);
  return h("span", { class: `badge s-${text.replace(/[^a-z_-]/gi, "")}` }, text);
}

export function time(stamp) {
  if (!stamp) return h("time", {}, "");
  const text = String(stamp);
  return h("time", { datetime: text, title: text }, text.slice(11, 19) || text);
}

export function errorBox(error) {
  return h("p", { class: "unverified", role: "alert" }, String(error.message || error));
}

export function problemList(problems) {
  if (!problems || !problems.length) return null;
  return h("ul", { class: "problems" }, problems.map((p) => h("li", {},
    p.file ? h("code", {}, p.file) : null, p.pointer ? [" at ", h("code", {}, p.pointer)] : null,
    p.rule ? [" ", h("span", { class: "badge" }, p.rule)] : null, " ", p.message || "",
    p.hint ? h("div", { class: "muted" }, "Fix: ", p.hint) : null)));
}

export function fields(entries) {
  const list = h("dl", { class: "fields" });
  for (const [label, value] of entries) {
    if (value === null || value === undefined || value === "") continue;
    list.append(h("dt", {}, label), h("dd", {}, value instanceof Node ? value : String(value)));
  }
  return list;
}

export function table(header, rows, labels = header) {
  return h("table", { class: "stack" },
    h("thead", {}, h("tr", {}, header.map((title) => h("th", { scope: "col" }, title)))),
    h("tbody", {}, rows.map((row) => h("tr", {}, row.map((cell, i) => h("td", { "data-label": labels[i] }, cell))))));
}

// Session files that cannot be shown as they are (damaged, a link, a FIFO): what is wrong and how to fix it.
export function damagedNotes(notes) {
  if (!notes || !notes.length) return null;
  return h("ul", { class: "problems damaged", role: "note", "aria-label": "Damaged session files" },
    notes.map((n) => h("li", {}, h("code", {}, n.file), " ", n.problem,
      n.fix ? h("div", { class: "muted" }, "Fix: ", n.fix) : null)));
}

// The view the page shows is not the one the ledger vouches for: nothing in it counts as validated.
export function graphWarning(text) {
  return text ? h("p", { class: "unverified", role: "alert" }, "Not vouched for by the ledger: ", text) : null;
}
