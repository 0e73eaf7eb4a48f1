"""The report as data for the page: the same document ``run`` renders, citations kept as claim ids.

:func:`orchestrator.report.document.build_document` is what the Markdown and HTML reports are
rendered from; here the document becomes plain JSON in which each citation names the claims it
cites, so a click on ``[1, p. 4]`` can open the claim, its quoted passage and the page. The page
builds its DOM from this with ``textContent`` only: no markup from the graph is ever parsed.
"""

from __future__ import annotations

import re
import threading
from typing import Any

from orchestrator.model.layout import SessionPaths
from orchestrator.report.blocks import (
    Block,
    Bullets,
    Cite,
    Emph,
    Line,
    Link,
    Missing,
    Para,
    Quote,
    References,
    Strong,
    Table,
    Text,
)
from orchestrator.report.document import build_document
from orchestrator.viewer import state
from orchestrator.viewer.files import remember, signature

_SAFE_URL = re.compile(r"https?://\S+")
_cache: dict[SessionPaths, tuple[Any, dict[str, Any]]] = {}
_lock = threading.Lock()


def inline(line: Line) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for part in line:
        if isinstance(part, Text):
            out.append({"t": "text", "v": part.text})
        elif isinstance(part, Strong):
            out.append({"t": "strong", "v": part.text})
        elif isinstance(part, Emph):
            out.append({"t": "em", "v": part.text})
        elif isinstance(part, Quote):
            out.append({"t": "quote", "v": part.text})
        elif isinstance(part, Link):
            out.append({"t": "link", "v": part.text, "url": part.url if _SAFE_URL.fullmatch(part.url) else None})
        elif isinstance(part, Cite):
            out.append({"t": "cite", "v": part.citation.label(), "claims": list(part.citation.claim_ids),
                        "refs": [{"number": r.number, "source_id": r.source_id, "pages": list(r.pages),
                                  "label": r.label()} for r in part.citation.refs]})
        elif isinstance(part, Missing):
            out.append({"t": "missing", "v": part.ref})
    return out


def block(item: Block) -> dict[str, Any]:
    if isinstance(item, Para):
        return {"t": "para", "line": inline(item.line)}
    if isinstance(item, Bullets):
        return {"t": "bullets", "items": [[inline(line) for line in lines] for lines in item.items]}
    if isinstance(item, Table):
        return {"t": "table", "header": list(item.header), "rows": [[inline(c) for c in row] for row in item.rows]}
    assert isinstance(item, References)
    return {"t": "references", "entries": [{"number": n, "line": inline(line)} for n, line in item.entries]}


def _outline(graph: dict[str, Any], agents: list[str]) -> tuple[dict[str, Any] | None, str]:
    for agent in agents:
        outline = (graph.get(agent) or {}).get("report_outline") if isinstance(graph.get(agent), dict) else None
        if isinstance(outline, dict):
            return outline, agent
    return None, agents[0] if agents else "synthesis-agent"


def report_document(paths: SessionPaths) -> dict[str, Any]:
    """The report of the committed graph as it stands (rebuilt only when the graph, session or quality change).

    Refused (:class:`~orchestrator.viewer.state.NotVouched`, a 409 naming the command that rebuilds the view)
    when the ledger does not vouch for the view: a report presents its findings as validated. A damaged
    session.json or quality.json does not stop it (the graph is what it is rendered from): ``damaged`` says so.
    """
    state.require_vouched(paths, "The report")
    return {**_document(paths), "damaged": state.damaged(paths)}


def _document(paths: SessionPaths) -> dict[str, Any]:
    key = (signature(paths.kg_json), signature(paths.session_json), signature(paths.root / "quality.json"))
    with _lock:
        cached = _cache.get(paths)
    if cached is not None and cached[0] == key:
        return cached[1]
    graph = state.graph(paths)
    if not graph:
        result: dict[str, Any] = {"empty": True, "title": state.session(paths).get("query") or paths.root.name,
                                  "sections": []}
    else:
        outline, agent = _outline(graph, state.synthesis_agents(paths))
        document = build_document(graph, session=state.session(paths), quality=state.recorded_quality(paths),
                                  mission=state.mission_of(paths), outline=outline, ledger=state.ledger(paths),
                                  outline_agent=agent)
        result = {
            "empty": False, "title": document.title, "byline": inline(document.byline),
            "lead": [block(b) for b in document.lead], "score": document.score, "band": document.band,
            "gate": document.gate,
            "sections": [{"heading": s.heading, "kind": s.kind, "anchor": s.anchor,
                          "blocks": [block(b) for b in s.blocks]} for s in document.sections],
            "commit_seq": graph.get("commit_seq"),
        }
    with _lock:
        remember(_cache, paths, (key, result))
    return result
