// The session's tabs: timeline, agents, quality, contradictions, report, graph.
import { api, append, badge, clear, errorBox, fields, h, problemList, q, table, time } from "./dom.js";
import { showClaims } from "./evidence.js";

// -- timeline ------------------------------------------------------------------------------
export function eventRow(event, fresh) {
  const data = event.data || {};
  const problems = event.type === "merge.rejected" ? problemList(data.problems) : null;
  return h("li", { class: fresh ? "new" : null, dataset: { type: event.type || "", offset: event.offset } },
    time(event.timestamp), h("span", { class: "type" }, event.type || ""),
    h("span", {}, event.message || "", problems));
}

export async function timelineView(session, root, live) {
  const data = await api(`/api/sessions/${q(session)}/events?count=200`);
  const list = h("ol", { class: "timeline", id: "timeline", reversed: true, "aria-live": "polite",
    "aria-label": "Events, newest first" });
  for (const event of data.events.slice().reverse()) list.append(eventRow(event, false));
  let earliest = data.start;
  const more = h("button", { type: "button", class: "btn", id: "earlier" }, "Show earlier events");
  more.addEventListener("click", async () => {
    const older = await api(`/api/sessions/${q(session)}/events?count=200&before=${earliest}`);
    for (const event of older.events.slice().reverse()) list.append(eventRow(event, false));
    earliest = older.start;
    if (!older.events.length || earliest === 0) more.remove();
  });
  append(root, [h("h2", {}, "Timeline"), h("p", { class: "muted small" },
    "events.jsonl as it is written: newest first, live while the page is open."), list,
  data.start > 0 ? more : null]);
  live.onEvent = (event) => list.prepend(eventRow(event, true));
}

// -- agents ----------------------------------------------------------------------------------
export async function agentsView(session, root) {
  const data = await api(`/api/sessions/${q(session)}/agents`);
  root.append(h("h2", {}, "Agents"));
  if (!data.agents.length) {
    root.append(h("p", { class: "muted" }, "No agent has submitted anything yet."));
    return;
  }
  const cards = h("div", { class: "cards" });
  for (const agent of data.agents) {
    const details = h("div", { class: "agent-detail" });
    const toggle = h("button", { type: "button", class: "btn", "aria-expanded": "false" }, "History");
    toggle.addEventListener("click", async () => {
      const open = toggle.getAttribute("aria-expanded") === "true";
      toggle.setAttribute("aria-expanded", String(!open));
      clear(details);
      if (!open) await agentDetail(session, agent.agent, details);
    });
    cards.append(h("article", { class: "card", dataset: { agent: agent.agent } },
      h("h3", {}, agent.agent),
      h("div", { class: "row" }, badge(agent.state), h("span", {}, `attempts ${agent.attempts || 0}`),
        agent.lock ? h("span", { class: "muted" }, `lock: ${agent.lock}`) : null,
        agent.last_commit_seq ? h("span", { class: "muted" }, `commit ${agent.last_commit_seq}`) : null, toggle),
      agent.last_event ? h("p", { class: "muted small" }, agent.last_event) : null,
      problemList(agent.problems), details));
  }
  root.append(cards);
}

async function agentDetail(session, name, root) {
  try {
    const agent = await api(`/api/sessions/${q(session)}/agent?name=${q(name)}`);
    const retry = agent.retry_instructions;
    if (retry) {
      root.append(h("h4", {}, "Retry instructions"), h("p", {}, retry.action_required || retry.unreadable || ""));
      for (const file of retry.files || []) root.append(problemList(file.problems));
      root.append(problemList((retry.shacl_violations || []).map((v) => ({ ...v, file: v.file || v.focus_node }))));
    }
    for (const failure of agent.failures) {
      root.append(h("p", { class: "unverified" }, `attempt ${failure.attempt} failed (${failure.kind}): ${failure.reason}`));
    }
    root.append(h("h4", {}, "History"),
      h("ol", { class: "timeline" }, agent.history.slice().reverse().map((item) => h("li", {},
        time(item.timestamp), h("span", { class: "type" }, item.type),
        h("span", {}, item.message || "", item.type === "merge.rejected" ? problemList(item.problems) : null)))));
  } catch (error) {
    root.append(errorBox(error));
  }
}

// -- quality ------------------------------------------------------------------------------
export function qualityView(overview, root) {
  const quality = overview.quality;
  root.append(h("h2", {}, "Quality"));
  if (!quality) {
    root.append(h("p", { class: "muted" }, "No quality score yet: the graph is empty."));
    return;
  }
  root.append(h("p", {}, h("strong", {}, `${quality.score}/100`), ` ${quality.band || ""}`,
    quality.passed === undefined ? "" : quality.passed ? " · criteria met" : " · criteria not met",
    h("span", { class: "muted small" }, ` (${quality.origin || "quality.json"})`)));
  root.append(table(["Component", "Score", "Weight", "Why"], (quality.breakdown || []).map((c) => [
    c.label, h("div", {}, `${c.score}`, h("div", { class: "bar", role: "img", "aria-label": `${c.score} of 100` },
      barFill(c.score))), `${c.weight}`, c.detail])));
  for (const penalty of quality.penalties || []) {
    if (penalty.points) root.append(h("p", { class: "unverified" }, `${penalty.points} ${penalty.label}: ${penalty.detail}`));
  }
  if (quality.checks) {
    root.append(h("h3", {}, "Success criteria"), h("ul", {}, quality.checks.map((c) =>
      h("li", { class: c.passed ? "pass" : "fail" }, c.message))));
  }
  if ((quality.recommendations || []).length) {
    root.append(h("h3", {}, "What is missing"), h("ul", {}, quality.recommendations.map((r) => h("li", {}, r))));
  }
  const flags = Object.entries(quality.flags || {}).filter(([, ids]) => ids && ids.length);
  if (flags.length) {
    root.append(h("h3", {}, "Flagged items"), fields(flags.map(([name, ids]) => [name.replaceAll("_", " "),
      h("span", {}, ids.slice(0, 30).map((id) => [h("code", {}, id), " "]), ids.length > 30 ? `and ${ids.length - 30} more` : "")])));
  }
}

function barFill(score) {
  const fill = h("span");
  fill.style.width = `${Math.max(0, Math.min(100, Number(score) || 0))}%`;
  return fill;
}

// -- contradictions -----------------------------------------------------------------------
export function contradictionsView(session, overview, root) {
  root.append(h("h2", {}, "Contradictions"));
  const items = overview.contradictions || [];
  if (!items.length) {
    root.append(h("p", { class: "muted" }, "No contradiction was found between claims of different agents or sources."));
    return;
  }
  for (const item of items) {
    root.append(h("article", { class: "card" },
      h("div", { class: "row" }, badge(item.status), h("span", {}, item.kind), h("code", {}, item.id),
        item.counted ? h("span", { class: "unverified small" }, "costs quality points") : null),
      item.description ? h("p", {}, item.description) : null,
      h("div", { class: "sides" }, item.sides.map((side) => h("div", { class: "side" },
        h("p", {}, side.statement || side.claim_id, side.value ? h("strong", {}, ` (${side.value})`) : null),
        side.snippet ? h("blockquote", {}, h("q", {}, side.snippet), side.section ? ` § ${side.section}` : side.page ? ` p. ${side.page}` : "") : null,
        h("button", { type: "button", class: "link", onclick: () => showClaims(session, [side.claim_id], "Contradiction side") },
          `Evidence for ${side.claim_id}`))))));
  }
}

// -- report ---------------------------------------------------------------------------------
function inline(session, parts) {
  return parts.map((part) => {
    switch (part.t) {
      case "strong": return h("strong", {}, part.v);
      case "em": return h("em", {}, part.v);
      case "quote": return h("q", {}, part.v);
      case "link": return part.url ? h("a", { href: part.url, rel: "noreferrer noopener", target: "_blank" }, part.v) : part.v;
      case "cite": return h("button", { type: "button", class: "cite", dataset: { claims: part.claims.join(" ") },
        "aria-label": `Citation ${part.v}: show the quoted passage and its page`,
        onclick: () => showClaims(session, part.claims, `Citation ${part.v}`) }, part.v);
      case "missing": return h("span", { class: "missing" }, `[citation needed: ${part.v}]`);
      default: return part.v;
    }
  });
}

function block(session, item) {
  if (item.t === "para") return h("p", {}, inline(session, item.line));
  if (item.t === "bullets") return h("ul", {}, item.items.map((lines) => h("li", {}, lines.map((line, i) =>
    [i ? h("br") : null, inline(session, line)]))));
  if (item.t === "table") {
    return h("div", { class: "table-wrap" }, table(item.header, item.rows.map((row) => row.map((cell) =>
      h("span", {}, inline(session, cell)))), item.header));
  }
  return h("ol", { class: "references" }, item.entries.map((entry) => h("li", { value: entry.number,
    id: `ref-${entry.number}` }, inline(session, entry.line))));
}

export async function reportView(session, root) {
  const doc = await api(`/api/sessions/${q(session)}/report`);
  if (doc.empty) {
    root.append(h("h2", {}, "Report"), h("p", { class: "muted" }, "The graph is empty: no report yet."));
    return;
  }
  const article = h("article", { class: "report" }, h("h2", {}, doc.title),
    h("p", { class: "muted small" }, inline(session, doc.byline || [])),
    h("p", { class: "muted small" }, "Rendered from the committed graph (commit ", String(doc.commit_seq ?? "–"),
      "). Every citation opens its claim, the quoted passage in the source text and the page it is on."));
  for (const item of doc.lead) article.append(block(session, item));
  for (const section of doc.sections) {
    article.append(h("section", { id: section.anchor }, h("h3", {}, section.heading),
      section.blocks.map((b) => block(session, b))));
  }
  root.append(article);
}
