// The viewer's page: routes (#/ and #/s/<session>/<tab>), the live stream and the session header.
import { api, badge, clear, damagedNotes, errorBox, h, q, table } from "./dom.js";
import { closePanel, initPanel } from "./evidence.js";
import { graphView } from "./graph.js";
import { agentsView, contradictionsView, qualityView, reportView, timelineView } from "./views.js";

const TABS = [["timeline", "Timeline"], ["agents", "Agents"], ["quality", "Quality"],
  ["contradictions", "Contradictions"], ["report", "Report"], ["graph", "Graph"]];
const main = document.getElementById("main");
const liveBadge = document.getElementById("live");
const live = { source: null, session: null, onEvent: null, refresh: null, timer: null, poll: null };
const graphState = {};

function route() {
  const match = location.hash.match(/^#\/s\/([^/]+)(?:\/([a-z]+))?/);
  return match ? { session: decodeURIComponent(match[1]), tab: match[2] || "timeline" } : { session: null };
}

async function render() {
  closePanel();
  const { session, tab } = route();
  live.onEvent = null;
  live.refresh = null;
  if (!session) {
    stopLive();
    await sessionsView();
  } else {
    clearInterval(live.poll);
    startLive(session);
    await sessionView(session, tab);
  }
}

async function sessionsView() {
  document.title = "Sessions · cconductor viewer";
  clear(main);
  main.append(h("h1", {}, "Research sessions"));
  const list = h("div", { id: "sessions" });
  main.append(list);
  await fillSessions(list);
  live.refresh = null;
  clearInterval(live.poll);
  live.poll = setInterval(() => {  // a run started elsewhere appears without a reload
    const current = document.getElementById("sessions");
    if (current && !route().session && !current.contains(document.activeElement)) {
      const next = h("div", { id: "sessions" });
      fillSessions(next).then(() => { if (document.contains(current)) current.replaceWith(next); });
    }
  }, 5000);
}

async function fillSessions(main) {
  try {
    const data = await api("/api/sessions");
    main.append(h("p", { class: "muted small" }, data.sessions_dir));
    if (!data.sessions.length) {
      main.append(h("p", {}, "No sessions here yet. Start one with ", h("code", {}, 'cconductor run "question"'), "."));
      return;
    }
    main.append(table(["Session", "Status", "Score", "Mission", "Question", "Updated"], data.sessions.map((s) => [
      h("a", { href: `#/s/${q(s.id)}` }, s.id), badge(s.status), s.score === null || s.score === undefined ? "–" : String(s.score),
      s.mission || "–", s.query || "", s.updated_at || ""])));
  } catch (error) {
    main.append(errorBox(error));
  }
}

function header(session, overview, tab, summary) {
  const stats = overview.stats || {};
  const score = summary && summary.quality ? summary.quality.score : overview.recorded_score;
  const facts = [
    h("li", {}, badge(overview.status), overview.status_reason ? ` ${overview.status_reason}` : ""),
    overview.mission ? h("li", {}, `mission ${overview.mission}`) : null,
    h("li", {}, `iteration ${overview.iteration ?? 0}`),
    h("li", {}, `commit ${overview.commit_seq ?? "–"}`),
    score !== null && score !== undefined ? h("li", {}, `quality ${score}/100`) : null,
    h("li", {}, `${stats.sources_count ?? 0} sources · ${stats.claims_count ?? 0} claims · ${stats.entities_count ?? 0} entities`),
    h("li", {}, `evidence ${stats.evidence_verified ?? 0}/${stats.evidence_items ?? 0} verified`),
    overview.locks_pending.length ? h("li", {}, `waiting: ${overview.locks_pending.join(", ")}`) : null,
    overview.locks_errored.length ? h("li", { class: "unverified" }, `rejected: ${overview.locks_errored.join(", ")}`) : null,
    overview.cost_usd !== null && overview.cost_usd !== undefined ? h("li", {}, `cost $${Number(overview.cost_usd).toFixed(4)}`) : null,
  ];
  return h("div", { id: "overview", "data-tab": tab, "data-session": session },
    h("h1", {}, overview.query || session),
    overview.graph_warning ? h("p", { class: "unverified", role: "alert", id: "graph-warning" }, overview.graph_warning) : null,
    damagedNotes(overview.damaged),
    h("ul", { class: "facts", "aria-label": "Session facts" }, facts),
    growth(summary ? summary.growth : []),
    h("nav", { class: "tabs", "aria-label": "Session views" }, TABS.map(([id, label]) =>
      h("a", { href: `#/s/${q(session)}/${id}`, "aria-current": id === tab ? "page" : null }, label))));
}

function growth(points) {
  if (points.length < 2) return null;
  const series = [["claims", "#0b5cad"], ["entities", "#8250df"], ["sources", "#1a7f37"]];
  const top = Math.max(1, ...points.map((p) => Math.max(p.claims, p.entities, p.sources)));
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("viewBox", "0 0 300 60");
  svg.setAttribute("preserveAspectRatio", "none");
  svg.setAttribute("class", "spark");
  svg.setAttribute("role", "img");
  const last = points[points.length - 1];
  svg.setAttribute("aria-label", `Graph growth over ${points.length} merges: ${last.claims} claims, ${last.entities} entities, ${last.sources} sources`);
  for (const [key, colour] of series) {
    const line = document.createElementNS("http://www.w3.org/2000/svg", "polyline");
    line.setAttribute("points", points.map((p, i) => `${(i * 300) / (points.length - 1)},${58 - (p[key] * 56) / top}`).join(" "));
    line.setAttribute("stroke", colour);
    svg.append(line);
  }
  return h("figure", { class: "growth" }, svg, h("figcaption", { class: "legend" },
    series.map(([key, colour]) => { const s = h("span", {}, `${key} ${last[key]}`); s.style.color = colour; return s; }),
    h("span", { class: "muted" }, `after each of ${points.length} merges`)));
}

async function sessionView(session, tab) {
  clear(main);
  let overview;
  try {
    overview = await api(`/api/sessions/${q(session)}/overview`);
  } catch (error) {
    main.append(h("h1", {}, session), errorBox(error), h("p", {}, h("a", { href: "#/" }, "All sessions")));
    return;
  }
  document.title = `${overview.query || session} · cconductor viewer`;
  const body = h("div", { id: "tab", "data-tab": tab });
  main.append(header(session, overview, tab, null), body);
  // the header first; quality, contradictions and the growth curve need a pass over the graph
  const summary = api(`/api/sessions/${q(session)}/summary`);
  summary.then((s) => replaceHeader(session, overview, tab, s)).catch(() => {});
  try {
    await fill(session, tab, summary, body);
  } catch (error) {
    body.append(errorBox(error));
  }
  live.refresh = async (parts) => {
    const freshSummary = api(`/api/sessions/${q(session)}/summary`);
    const fresh = await api(`/api/sessions/${q(session)}/overview`);
    replaceHeader(session, fresh, tab, await freshSummary);
    const redraw = { agents: ["session", "locks"], quality: ["graph", "quality"], contradictions: ["graph"],
      report: ["graph", "session", "quality"], graph: ["graph"] }[tab] || [];
    const current = document.getElementById("tab");
    if (current && parts.some((p) => redraw.includes(p)) && !current.contains(document.activeElement)) {
      const next = h("div", { id: "tab", "data-tab": tab });
      await fill(session, tab, freshSummary, next);
      current.replaceWith(next);
    }
  };
}

function replaceHeader(session, overview, tab, summary) {
  const old = document.getElementById("overview");
  if (!old || old.dataset.tab !== tab || old.dataset.session !== session) return;  // the user moved on
  const focused = old.contains(document.activeElement) ? document.activeElement.getAttribute("href") : null;
  const fresh = header(session, overview, tab, summary);
  old.replaceWith(fresh);
  if (focused) {
    const again = [...fresh.querySelectorAll("a[href]")].find((a) => a.getAttribute("href") === focused);
    if (again) again.focus();
  }
}

async function fill(session, tab, summary, body) {
  if (tab === "agents") await agentsView(session, body);
  else if (tab === "quality") qualityView(await summary, body);
  else if (tab === "contradictions") contradictionsView(session, await summary, body);
  else if (tab === "report") await reportView(session, body);
  else if (tab === "graph") await graphView(session, body, graphState[session] || (graphState[session] = {}));
  else await timelineView(session, body, live);
}

function startLive(session) {
  if (live.session === session && live.source) return;
  stopLive();
  live.session = session;
  const source = new EventSource(`/api/sessions/${q(session)}/stream`);
  live.source = source;
  source.addEventListener("open", () => { liveBadge.className = "live on"; liveBadge.textContent = "live"; });
  source.addEventListener("error", () => { liveBadge.className = "live off"; liveBadge.textContent = "reconnecting"; });
  source.addEventListener("event", (message) => {
    if (live.onEvent) live.onEvent(JSON.parse(message.data));
  });
  source.addEventListener("problem", (message) => {  // events.jsonl cannot be read: said, the stream goes on
    liveBadge.className = "live off";
    liveBadge.textContent = JSON.parse(message.data).error;
  });
  source.addEventListener("gone", (message) => {  // the session was deleted: nothing more will come
    source.close();
    live.source = null;
    liveBadge.className = "live off";
    liveBadge.textContent = JSON.parse(message.data).error;
  });
  source.addEventListener("changed", (message) => {
    const parts = JSON.parse(message.data).parts || [];
    clearTimeout(live.timer);
    live.timer = setTimeout(() => { if (live.refresh) live.refresh(parts).catch(() => {}); }, 250);
  });
}

function stopLive() {
  if (live.source) live.source.close();
  live.source = null;
  live.session = null;
  liveBadge.className = "live";
  liveBadge.textContent = "";
}

initPanel();
window.addEventListener("hashchange", () => { render(); main.focus(); });
render();
