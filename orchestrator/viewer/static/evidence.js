// The evidence panel: a claim, each quoted passage highlighted in its source text, and the page it is on.
import { api, append, clear, errorBox, fields, graphWarning, h, q } from "./dom.js";

const panel = () => document.getElementById("panel");
let opener = null;

export function initPanel() {
  document.getElementById("panel-close").addEventListener("click", closePanel);
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && !panel().hidden) closePanel();
  });
}

export function closePanel() {
  panel().hidden = true;
  if (opener && document.contains(opener)) opener.focus();
  opener = null;
}

function openPanel(title) {
  opener = document.activeElement;
  document.getElementById("panel-title").textContent = title;
  const body = clear(document.getElementById("panel-body"));
  panel().hidden = false;
  document.getElementById("panel-title").focus();
  return body;
}

export async function showClaims(session, claimIds, title) {
  const body = openPanel(title || "Evidence");
  body.append(h("p", { class: "muted" }, "Loading…"));
  try {
    const claims = await Promise.all(claimIds.map((id) => api(`/api/sessions/${q(session)}/claim?id=${q(id)}`)));
    clear(body);
    for (const detail of claims) body.append(claimView(session, detail));
  } catch (error) {
    clear(body).append(errorBox(error));
  }
}

function claimView(session, detail) {
  const claim = detail.claim;
  const section = h("section", { class: "claim" },
    h("h3", {}, claim.statement || claim.id),
    graphWarning(detail.graph_warning),
    fields([["Claim", h("code", {}, claim.id)], ["Confidence", claim.confidence], ["Priority", claim.priority],
      ["Agent", (claim.provenance || {}).agent], ["Artifact", (claim.provenance || {}).file
        ? `${claim.provenance.file} ${claim.provenance.pointer || ""}` : null]]));
  for (const item of detail.evidence) section.append(evidenceView(session, claim, item));
  return section;
}

function evidenceView(session, claim, item) {
  const v = item.verification || {};
  const source = item.source || {};
  const page = item.passage.page;
  const where = item.passage.section ? `, § ${item.passage.section}` : page ? `, page ${page}` : "";
  const box = h("div", { class: "evidence" },
    h("h4", {}, source.title || item.source_id || "Source", where),
    h("p", {}, h("span", { class: item.verified ? "verified" : "unverified" },
      item.verified ? `verified (${v.match || "match"}${v.score !== undefined ? `, ${v.score}%` : ""})`
        : item.verified_in_view ? "not vouched for: the view file says verified, the ledger does not confirm it"
          : `not verified${v.reason ? `: ${v.reason}` : ""}`)),
    h("blockquote", { class: "snippet" }, h("q", {}, item.snippet || "")));
  box.append(passageView(item.passage));
  const holder = h("div", { class: "page-holder" });
  box.append(holder);
  if (item.page_view) {
    loadPage(holder, item.page_view, page);
  } else if (item.no_page_view) {
    holder.append(h("p", { class: "muted small" }, `No page image: ${item.no_page_view}.`));
  }
  return box;
}

function passageView(passage) {
  if (!passage.page_text) {
    return h("p", { class: "muted small" }, passage.why || "No stored text to show.");
  }
  const text = passage.page_text;
  const view = h("div", { class: "passage", tabindex: "0", role: "region",
    "aria-label": passage.page ? `Stored text of page ${passage.page}` : "Stored text around the passage" });
  if (passage.highlight) {
    const [start, end] = passage.highlight;
    const mark = h("mark", {}, text.slice(start, end));
    append(view, [text.slice(0, start), mark, text.slice(end)]);
    requestAnimationFrame(() => { view.scrollTop = Math.max(0, mark.offsetTop - view.offsetTop - 40); });
  } else {
    view.append(text);
  }
  const where = passage.section ? ` (§ ${passage.section})` : passage.page ? ` (page ${passage.page}` +
    (passage.pages ? ` of ${passage.pages})` : ")") : "";
  const wrap = h("div", {}, h("h5", {}, "In the stored source text", where), view);
  if (passage.why) wrap.append(h("p", { class: "muted small" }, passage.why));
  return wrap;
}

async function loadPage(holder, url, page) {
  holder.append(h("p", { class: "muted small" }, "Rendering the page…"));
  try {
    const view = await api(url);
    clear(holder);
    const frame = h("div", { class: "pageview" },
      h("img", { src: view.image, alt: `Page ${view.page} of the source PDF, with the quoted passage marked`,
        loading: "lazy" }));
    for (const mark of view.marks) {
      for (const [left, top, right, bottom] of mark.rects) {
        frame.append(h("div", { class: `mark ${mark.kind}${mark.exact ? "" : " approx"}`, title: mark.label,
          dataset: { kind: mark.kind } }));
        const div = frame.lastChild;
        div.style.left = `${left * 100}%`;
        div.style.top = `${top * 100}%`;
        div.style.width = `${(right - left) * 100}%`;
        div.style.height = `${(bottom - top) * 100}%`;
      }
    }
    holder.append(h("h5", {}, `Page ${view.page} of ${view.pages} in the PDF`), frame);
    if (view.why) holder.append(h("p", { class: "muted small" }, view.why));
  } catch (error) {
    clear(holder).append(errorBox(error));
  }
}
