"""Checks on a document's structure: captions stand on their page, and evidence citing a table or figure holds.

Bookkeeping done by code, like a snippet's: a caption's ``text`` must be found on its ``page`` of
the source's stored text; evidence whose locator names a ``table`` is verified against that table's
stored cells (and caption), one that names a ``figure`` against the captions describing the figure.
Which caption describes which figure, and which value supports which claim, stay the agent's
judgement; the messages say what to quote instead.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from orchestrator.graph.evidence import verify_snippet
from orchestrator.graph.evidence_budget import Budget
from orchestrator.model.problems import Problem, pointer_join
from orchestrator.model.textnorm import normalize_mapped

__all__ = ["Lookups", "bind_document_evidence", "caption_problems", "names_document_part", "table_pages"]

Item = dict[str, Any]


def names_document_part(evidence: Mapping[str, Any]) -> bool:
    """Evidence whose locator names a table or a figure (checked here, not against the page text)."""
    locator = evidence.get("locator")
    return isinstance(locator, Mapping) and ("table" in locator or "figure" in locator)


class Lookups:
    """What the checks read from the graph: items by global id, stored texts and tables, a figure's captions."""

    def __init__(self, contribution: Mapping[str, Any], item: Callable[[str, str], Item | None],
                 text: Callable[[str], str | None], table: Callable[[str], Any | None],
                 captions_of_owner: Callable[[str], list[Item]]):
        self._own = {c: {i["id"]: i for i in contribution["items"].get(c) or ()} for c in
                     ("sources", "figures", "tables", "captions")}
        self._item, self.text, self.table, self._captions_of_owner = item, text, table, captions_of_owner
        self._agent = str(contribution.get("agent", ""))

    def get(self, collection: str, gid: str) -> Item | None:
        return self._own[collection].get(gid) or self._item(collection, gid)

    def captions_of(self, gid: str) -> list[str]:
        """Texts of the captions describing ``gid``: the contribution's own, and those of the figure's author."""
        own = list(self._own["captions"].values())
        owner = gid.partition(":")[0]
        theirs = self._captions_of_owner(owner) if owner != self._agent else []
        return [str(c.get("text", "")) for c in own + theirs if c.get("describes") == gid]


def _on_page(text: str, quoted: str, page: int, budget: Budget) -> dict[str, Any]:
    """A verification of ``quoted`` on ``page``; a short caption ("Table 2 (continued)") by plain containment."""
    result = verify_snippet(quoted, text, page, budget=budget).to_dict()
    if not result["verified"] and "too short" in result["reason"]:
        pages = text.split("\f")
        if 1 <= page <= len(pages) and normalize_mapped(quoted).text in normalize_mapped(pages[page - 1]).text:
            return {**result, "verified": True, "score": 100.0, "reason": "found on the cited page"}
    return result


def caption_problems(contribution: Mapping[str, Any], lookups: Lookups, budget: Budget) -> list[Problem]:
    """Each caption's text must stand on its page of its source's stored text (when the source has one)."""
    problems = []
    for caption in contribution["items"].get("captions") or ():
        source = lookups.get("sources", str(caption.get("source_id", "")))
        sha = source.get("content_sha256") if source else None
        text = lookups.text(sha) if isinstance(sha, str) else None
        page = caption.get("page")
        if text is None or not isinstance(page, int):
            continue
        found = _on_page(text, str(caption.get("text", "")), page, budget)
        if found["verified"]:
            continue
        prov = caption.get("provenance") or {}
        if found.get("cut_short"):  # the work limit was reached (many captions): unchecked is not wrong
            problems.append(Problem(
                str(prov.get("file")), pointer_join(*[p for p in str(prov.get("pointer", "")).split("/") if p], "text"),
                "caption.unchecked", f"caption {caption['id']!r} was not checked: {found['reason']}",
                "nothing to fix if the caption is quoted verbatim; submit fewer captions at a time to have each "
                "checked", severity="warning"))
            continue
        closest = f"; the closest passage there is {found['matched_text'][:200]!r}" if found["matched_text"] else ""
        problems.append(Problem(
            str(prov.get("file")), pointer_join(*[p for p in str(prov.get("pointer", "")).split("/") if p], "text"),
            "caption.not_found",
            f"caption {caption['id']!r} is not on page {page} of {caption.get('source_id')!r}: {found['reason']}",
            f"quote the caption verbatim from page {page} of the source's stored text in 'text' (or correct "
            f"'page'){closest}",
        ))
    return problems


def table_pages(table: Any, caption: str | None) -> list[str]:
    """The texts a table snippet is checked against, as pages: the caption, the header (row 0), each row."""
    return [caption or "", *table.lines()]


def _short_in(snippet: str, text: str) -> dict[str, Any] | None:
    """A short quote of a table ("No title | 20k") checked as a whole-word run of the cells it names."""
    wanted = normalize_mapped(snippet).text.strip()
    haystack = normalize_mapped(text)
    at = f" {haystack.text} ".find(f" {wanted} ") if wanted else -1
    if at < 0:
        return None
    start, end = haystack.span(at, at + len(wanted))
    return {"verified": True, "score": 100.0, "matched_text": text[start:end], "page": None,
            "reason": "found", "match": "exact"}


def _table_verification(evidence: Item, item: Item, lookups: Lookups, budget: Budget) -> dict[str, Any]:
    data = lookups.table(str(item.get("data_sha256"))) if isinstance(item.get("data_sha256"), str) else None
    if data is None:
        return _failed(f"table {item['id']!r} has no stored cells (data_sha256) to check against", item)
    captions = lookups.captions_of(item["id"])
    pages = table_pages(data, captions[0] if captions else None)
    locator = evidence.get("locator") or {}
    rows = locator.get("rows")
    snippet = str(evidence.get("snippet", ""))
    if isinstance(rows, list) and len(rows) == 2 and all(isinstance(r, int) for r in rows):
        first, last = rows
        if not 0 <= first <= last < len(pages) - 1:
            return _failed(f"rows {first}-{last} do not exist: {item.get('label')} has rows 0 (header) to "
                           f"{len(pages) - 2}", item)
        quoted = "\n".join(pages[first + 1:last + 2])
        found = verify_snippet(snippet, quoted, None, budget=budget).to_dict()
        if not found["verified"] and "too short" in found["reason"]:  # the rows say which cells: a value will do
            found = _short_in(snippet, quoted) or {**found, "reason": "not found"}
        where = f"rows {first}-{last}" if first != last else f"row {first}"
    else:
        found = verify_snippet(snippet, "\f".join(pages), None, budget=budget).to_dict()
        short = not found["verified"] and "too short" in found["reason"]
        if short and " | " in snippet:  # whole cells of one row, however short
            hits = [(n, hit) for n, page in enumerate(pages, start=1) if (hit := _short_in(snippet, page))]
            found = {**hits[0][1], "page": hits[0][0]} if hits else {**found, "reason": "not found"}
        where = "the table"
        if found["verified"] and isinstance(found["page"], int):
            where = "its caption" if found["page"] == 1 else f"row {found['page'] - 2}"
        elif not short:  # a quote across rows
            found = verify_snippet(snippet, "\n".join(pages), None, budget=budget).to_dict()
    label = item.get("label") or item["id"]
    reason = (f"found in {label} ({where})" if found["verified"]
              else f"{found['reason']}, or quote whole cells of one row ('a | b') and name it in 'rows': [n, n]"
              if "too short" in found["reason"] else f"not found in the cells or caption of {label}")
    return {**_located(found), "page": item.get("page"), "reason": reason, "table": item["id"],
            "data_sha256": item.get("data_sha256")}


def _figure_verification(evidence: Item, item: Item, lookups: Lookups, budget: Budget) -> dict[str, Any]:
    captions = lookups.captions_of(item["id"])
    if not captions:
        return _failed(f"figure {item['id']!r} has no caption to check against: cite the figure with a quote of "
                       "its caption, after a caption that describes it is merged", item)
    found = verify_snippet(str(evidence.get("snippet", "")), "\f".join(captions), None, budget=budget).to_dict()
    label = item.get("label") or item["id"]
    reason = f"found in the caption of {label}" if found["verified"] else f"not found in the caption of {label}"
    return {**_located(found), "page": item.get("page"), "reason": reason, "figure": item["id"]}


def _located(found: dict[str, Any]) -> dict[str, Any]:
    """A match's offsets are in the table's or caption's text, not in the source's: they are not kept."""
    return {k: v for k, v in found.items() if k not in ("char_start", "char_end")}


def _failed(reason: str, item: Item) -> dict[str, Any]:
    return {"verified": False, "score": 0.0, "matched_text": "", "page": item.get("page"), "reason": reason}


def bind_document_evidence(contribution: Mapping[str, Any], lookups: Lookups, budget: Budget) -> int:
    """Record a verification on every evidence item whose locator names a table or figure; returns how many."""
    checked = 0
    for claim in contribution["items"].get("claims") or ():
        for evidence in claim.get("evidence", []):
            if not names_document_part(evidence):
                continue
            locator = evidence["locator"]
            kind = "tables" if "table" in locator else "figures"
            gid = str(locator.get("table" if kind == "tables" else "figure", ""))
            item = lookups.get(kind, gid)
            source = lookups.get("sources", str(evidence.get("source_id", "")))
            if item is None:
                result = _failed(f"{kind[:-1]} {gid!r} is not in the graph", {})
            elif item.get("source_id") != evidence.get("source_id"):
                result = _failed(f"{kind[:-1]} {gid!r} belongs to {item.get('source_id')!r}, not to the cited "
                                 f"source {evidence.get('source_id')!r}", item)
            else:
                verify = _table_verification if kind == "tables" else _figure_verification
                result = verify(evidence, item, lookups, budget)
                page = locator.get("page")
                if result["verified"] and isinstance(page, int) and page != item.get("page"):
                    result = {**result, "verified": False,
                              "reason": f"{result['reason']}, but {item.get('label') or gid} is on page "
                                        f"{item.get('page')}, not on the cited page {page}"}
            if source is not None and isinstance(source.get("content_sha256"), str):
                result["text_sha256"] = source["content_sha256"]
            evidence["verification"] = result
            checked += 1
    return checked
