// The graph explorer: items by kind, filtered by agent and words; a node with its neighbours and provenance.
import { api, clear, errorBox, fields, graphWarning, h, q, table } from "./dom.js";
import { showClaims } from "./evidence.js";

const KINDS = ["sources", "claims", "entities", "relationships", "gaps", "contradictions"];

export async function graphView(session, root, state) {
  state.kind = state.kind || "claims";
  const list = h("ul", { class: "items loading", id: "items", "aria-label": "Items" });
  const detail = h("div", { class: "node", id: "node", tabindex: "-1" });
  const kinds = h("div", { class: "filters", role: "group", "aria-label": "Kind of item" });
  const agent = h("select", { id: "agent-filter", "aria-label": "Filter by agent" });
  const search = h("input", { type: "search", id: "graph-search", placeholder: "Words in the label or id",
    "aria-label": "Search items", value: state.query || "" });
  const total = h("p", { class: "muted small", role: "status" });
  const warning = h("div", { id: "graph-view-warning" });
  root.append(h("h2", {}, "Graph"), warning, kinds, h("div", { class: "filters" }, agent, search), total,
    h("div", { class: "explorer" }, h("div", {}, list), detail));

  async function load() {
    let data;
    try {
      data = await api(`/api/sessions/${q(session)}/graph?kind=${q(state.kind)}&agent=${q(state.agent || "")}` +
        `&q=${q(state.query || "")}`);
    } catch (error) {
      clear(list).append(errorBox(error));
      list.classList.remove("loading");
      return;
    }
    clear(warning).append(graphWarning(data.graph_warning) || "");
    clear(kinds);
    for (const kind of KINDS) {
      kinds.append(h("button", { type: "button", class: "btn", "aria-pressed": String(kind === state.kind),
        onclick: () => { state.kind = kind; load(); } }, `${kind} (${data.counts[kind] ?? 0})`));
    }
    if (agent.options.length !== data.agents.length + 1) {
      clear(agent).append(h("option", { value: "" }, "every agent"),
        data.agents.map((name) => h("option", { value: name }, name)));
    }
    agent.value = state.agent || "";
    total.textContent = `${data.total} ${data.kind}` + (data.total > data.items.length ? `, first ${data.items.length} shown` : "");
    clear(list);
    for (const item of data.items) {
      list.append(h("li", {}, h("button", { type: "button", "aria-current": String(item.id === state.node),
        onclick: () => { state.node = item.id; showNode(session, item.id, detail, state, load); } },
      item.label, h("span", { class: "id" }, item.id, item.verified === false ? " · not verified" : ""))));
    }
    if (!data.items.length) list.append(h("li", { class: "muted" }, "Nothing matches."));
    list.classList.remove("loading");
  }
  agent.addEventListener("change", () => { state.agent = agent.value; load(); });
  let typing = null;
  search.addEventListener("input", () => {
    clearTimeout(typing);
    typing = setTimeout(() => { state.query = search.value; load(); }, 200);
  });
  await load();
  if (state.node) await showNode(session, state.node, detail, state, load);
  else detail.append(h("p", { class: "muted" }, "Choose an item to see its neighbours and where it came from."));
}

async function showNode(session, id, root, state, reload) {
  clear(root);
  let node;
  try {
    node = await api(`/api/sessions/${q(session)}/node?id=${q(id)}`);
  } catch (error) {
    root.append(errorBox(error));
    return;
  }
  const item = node.item;
  const provenance = Array.isArray(item.provenance) ? item.provenance : item.provenance ? [item.provenance] : [];
  root.append(h("h3", {}, node.label), fields([["Id", h("code", {}, node.id)], ["Kind", node.kind],
    ["Agents", node.agents.join(", ")]]));
  if (node.kind === "claims") {
    root.append(h("button", { type: "button", class: "btn", onclick: () => showClaims(session, [node.id], "Claim") },
      "Show the evidence and its page"));
  }
  root.append(h("h4", {}, "Neighbours"));
  if (node.neighbours.length) {
    root.append(h("ul", {}, node.neighbours.map((n) => h("li", {}, `${n.relation}: `, n.kind
      ? h("button", { type: "button", class: "link", onclick: () => { state.node = n.id; state.kind = n.kind;
        reload().then(() => showNode(session, n.id, root, state, reload)); } }, n.label)
      : h("span", { class: "muted" }, `${n.label} (not in the graph)`)))));
  } else {
    root.append(h("p", { class: "muted" }, "None."));
  }
  root.append(h("h4", {}, "Provenance"), provenance.length ? table(["Agent", "File", "Pointer", "Attempt", "Merged"],
    provenance.map((p) => [p.agent || "", p.file || "", p.pointer || "", String(p.attempt ?? ""), p.merged_at || ""]))
    : h("p", { class: "muted" }, "Not recorded."));
  const shown = { ...item };
  delete shown.provenance;
  root.append(h("h4", {}, "Fields"), h("pre", { class: "json", tabindex: "0", "aria-label": "The item as JSON" },
    JSON.stringify(shown, null, 2)));
  root.focus();
}
