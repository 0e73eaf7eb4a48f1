"""A claim with each evidence item's passage: the quoted snippet shown in its source's stored text.

The stored text (``sources/<sha256>.txt``, pages separated by form feeds) is the text the
snippet was verified against; the verification recorded the passage's offsets in it and the
page it is on. The page's text is returned with the passage's offsets relative to the page, so
the browser highlights exactly what the orchestrator matched, and, when the source is a PDF on
this machine, where to fetch the rendered page with the passage marked
(:mod:`orchestrator.viewer.pages`).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import quote

from orchestrator.contract.safe_read import UnsafeFile, open_regular
from orchestrator.graph.citations import evidence_page, evidence_section, is_verified
from orchestrator.model.errors import CconductorError
from orchestrator.model.layout import SessionPaths
from orchestrator.viewer.files import as_dict, read_bytes
from orchestrator.viewer.lookup import GraphIndex

TEXT_LIMIT = 256 << 20
PAGE_BREAK = "\f"
_SHA = re.compile(r"[0-9a-f]{64}")


def stored_text(paths: SessionPaths, sha: object) -> str | None:
    """A stored source text by its sha256 name, or None (no text, not a name, unreadable)."""
    if not isinstance(sha, str) or not _SHA.fullmatch(sha):
        return None
    try:
        return read_bytes(paths, paths.source_text(sha), TEXT_LIMIT).decode("utf-8", "replace")
    except CconductorError:
        return None


def page_bounds(text: str, page: int) -> tuple[int, int] | None:
    """[start, end) of 1-based ``page`` in a stored text (one page when it has no form feed)."""
    start = 0
    for _ in range(page - 1):
        found = text.find(PAGE_BREAK, start)
        if found < 0:
            return None
        start = found + 1
    end = text.find(PAGE_BREAK, start)
    return start, len(text) if end < 0 else end


def page_count(text: str) -> int:
    return text.count(PAGE_BREAK) + 1


def pdf_path(source: dict[str, Any]) -> Path | None:
    """The source's own PDF on this machine (its ``local_path``), when it is a regular PDF file."""
    local = source.get("local_path")
    if not isinstance(local, str) or not local.lower().endswith(".pdf"):
        return None
    path = Path(local)
    try:
        if path.is_symlink() or not path.is_file():
            return None
        with os.fdopen(open_regular(path, str(path)), "rb") as handle:  # a FIFO swapped in never blocks
            return path if b"%PDF-" in handle.read(1024) else None
    except (OSError, UnsafeFile):
        return None


def passage(paths: SessionPaths, source: dict[str, Any] | None, evidence: dict[str, Any]) -> dict[str, Any]:
    """Where the evidence's snippet sits: the page's stored text and the passage's offsets in it."""
    verification = as_dict(evidence.get("verification"))
    page = evidence_page(evidence)
    sha = verification.get("text_sha256") or (source or {}).get("content_sha256")
    text = stored_text(paths, sha)
    found: dict[str, Any] = {"page": page, "has_text": text is not None, "page_text": None, "highlight": None,
                             "section": evidence_section(evidence, source or {})}  # shown instead of a page
    if text is None:
        found["why"] = "no stored text for this source" if not sha else "the stored source text is not in the session"
        return found
    pages = page_count(text)
    found["pages"] = pages
    bounds = page_bounds(text, page) if page else None
    start, end = verification.get("char_start"), verification.get("char_end")
    if bounds is None and isinstance(start, int):  # no page: the passage's surroundings
        bounds = (max(0, start - 1500), min(len(text), (end if isinstance(end, int) else start) + 1500))
    if bounds is None:
        found["why"] = "the evidence names no page and no passage"
        return found
    found["page_text"] = text[bounds[0]:bounds[1]]
    if isinstance(start, int) and isinstance(end, int) and bounds[0] <= start < end <= bounds[1]:
        found["highlight"] = [start - bounds[0], end - bounds[0]]
    elif is_verified(evidence):
        found["why"] = "the recorded passage is not on this page of the stored text"
    return found


def claim_detail(paths: SessionPaths, index: GraphIndex, session_id: str, claim_id: str) -> dict[str, Any] | None:
    """The claim and each evidence item's passage and page, verified as the committed state counts it now;
    ``verified_in_view`` keeps what the view file claims (it differs where the file was edited or a stored
    text changed since: ``graph_warning`` says why)."""
    found = index.item(claim_id)
    if found is None or found[0] != "claims":
        return None
    claim = found[1]
    in_view = _in_view(index, claim)
    items = []
    for number, evidence in enumerate(e for e in claim.get("evidence") or () if isinstance(e, dict)):
        source = index.source(str(evidence.get("source_id")))
        where = passage(paths, source, evidence)
        pdf = pdf_path(source) if source else None
        page = where.get("page")
        items.append({
            "number": number,
            "source_id": evidence.get("source_id"),
            "source": _source_summary(source),
            "snippet": evidence.get("snippet"),
            "locator": evidence.get("locator"),
            "verification": evidence.get("verification"),
            "verified": is_verified(evidence),
            "verified_in_view": in_view[number] if number < len(in_view) else False,
            "passage": where,
            "page_view": (f"/api/sessions/{quote(session_id)}/page?claim={quote(claim_id, safe='')}"
                          f"&evidence={number}" if pdf and page else None),
            "no_page_view": None if pdf and page else _why_no_image(source, pdf, page),
        })
    return {"claim": {k: v for k, v in claim.items() if k != "evidence"}, "evidence": items,
            "graph_warning": index.warning}


def _in_view(index: GraphIndex, claim: dict[str, Any]) -> list[bool]:
    """Whether the view file shows each evidence item of ``claim`` verified (its own claim of the same id)."""
    if index.view is index.graph or not index.view:
        items = claim.get("evidence") or ()
    else:
        same = next((c for c in index.view.get("claims") or ()
                     if isinstance(c, dict) and c.get("id") == claim.get("id")), {})
        items = same.get("evidence") or ()
    flags = []
    for item in (e for e in items if isinstance(e, dict)):
        check = item.get("verification")
        check = check if isinstance(check, dict) else {}
        flags.append(check.get("verified_in_view", check.get("verified")) is True)
    return flags


def _source_summary(source: dict[str, Any] | None) -> dict[str, Any] | None:
    if source is None:
        return None
    keep = ("id", "title", "authors", "year", "venue", "type", "doi", "url", "pdf_url", "arxiv_id", "peer_reviewed")
    return {k: source[k] for k in keep if k in source}


def _why_no_image(source: dict[str, Any] | None, pdf: Path | None, page: int | None) -> str:
    if source is None:
        return "the cited source is not in the graph"
    if not page:
        return "the evidence names no page"
    if pdf is None:
        return ("the source's PDF is not on this machine (only its stored text is in the session)"
                if not source.get("local_path") else "the source's local file is not a readable PDF")
    return ""
