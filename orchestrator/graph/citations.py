"""Inline claim markers (``[@C3]``, ``[@C1; @agent:C2]``) and their numbered citations.

A report may cite only claims whose evidence was verified against the stored source text,
so an outline is checked marker by marker (with problems the synthesis agent can act on),
and the :class:`Citer` numbers sources by first appearance and never cites anything else.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from orchestrator.model.problems import Problem, pointer_join

_REF = r"(?:[a-z][a-z0-9-]{0,63}:)?[A-Za-z0-9][A-Za-z0-9._-]{0,127}"
MARKER_RE = re.compile(rf"\[@({_REF})((?:\s*;\s*@{_REF})*)\]")
_LOOSE_RE = re.compile(r"\[@[^\[\]]*\]")
_SPLIT_RE = re.compile(r"\s*;\s*@")


def find_markers(text: str) -> list[tuple[int, int, list[str]]]:
    """Every well-formed marker in ``text`` as (start, end, [claim refs])."""
    found = []
    for match in MARKER_RE.finditer(text):
        rest = [r for r in _SPLIT_RE.split(match.group(2)) if r]
        found.append((match.start(), match.end(), [match.group(1), *rest]))
    return found


def malformed_markers(text: str) -> list[tuple[int, int]]:
    """Spans that look like markers (``[@...]``) but do not follow the marker syntax."""
    good = {(start, end) for start, end, _ in find_markers(text)}
    return [(m.start(), m.end()) for m in _LOOSE_RE.finditer(text) if (m.start(), m.end()) not in good]


def claim_resolver(graph: Mapping[str, Any], agent: str) -> Callable[[str], str | None]:
    """Resolve a claim reference written by ``agent``: its own namespace first, then a unique local id."""
    ids = {c["id"] for c in graph.get("claims") or () if isinstance(c, dict)}
    by_local: dict[str, list[str]] = defaultdict(list)
    for claim_id in sorted(ids):
        by_local[claim_id.rpartition(":")[2]].append(claim_id)

    def resolve(ref: str) -> str | None:
        if ":" in ref:
            return ref if ref in ids else None
        if f"{agent}:{ref}" in ids:
            return f"{agent}:{ref}"
        candidates = by_local.get(ref, [])
        return candidates[0] if len(candidates) == 1 else None

    return resolve


def claim_lookup(graph: Mapping[str, Any]) -> Callable[[str], dict[str, Any] | None]:
    claims = {c["id"]: c for c in graph.get("claims") or () if isinstance(c, dict)}
    return claims.get


def is_verified(evidence: Mapping[str, Any]) -> bool:
    return (evidence.get("verification") or {}).get("verified") is True


def evidence_page(evidence: Mapping[str, Any]) -> int | None:
    """The page the snippet was found on, else the page the agent gave."""
    page = (evidence.get("verification") or {}).get("page") or (evidence.get("locator") or {}).get("page")
    return page if isinstance(page, int) else None


def paged(source: Mapping[str, Any]) -> bool:
    """A PDF, cited by its pages; a document without pages (Markdown, HTML, text, web page) is cited by section."""
    path = source.get("local_path")
    return bool(source.get("page_labels") or source.get("pdf_url") or pdf_document(source)) or (
        isinstance(path, str) and path.lower().endswith(".pdf"))


def evidence_section(evidence: Mapping[str, Any], source: Mapping[str, Any]) -> str | None:
    """The heading a citation names instead of a page ("§ Installation"): the locator's ``section``, for a
    document without pages (its one "page" tells a reader nothing); None for a PDF or without a section."""
    locator = evidence.get("locator")
    section = locator.get("section") if isinstance(locator, Mapping) else None
    if not isinstance(section, str) or not section.strip() or paged(source):
        return None
    return " ".join(section.lstrip("#").split())


def _outline_texts(outline: Mapping[str, Any], base: str) -> Iterator[tuple[str, str]]:
    if isinstance(outline.get("summary"), str):
        yield pointer_join("summary"), outline["summary"]
    for s, section in enumerate(outline.get("sections") or ()):
        for p, paragraph in enumerate(section.get("paragraphs") or () if isinstance(section, dict) else ()):
            if isinstance(paragraph, dict) and isinstance(paragraph.get("text"), str):
                yield pointer_join("sections", s, "paragraphs", p, "text"), paragraph["text"]


def check_outline(
    outline: Mapping[str, Any],
    resolve: Callable[[str], str | None],
    claim: Callable[[str], dict[str, Any] | None],
    file: str,
    base_pointer: str,
) -> list[Problem]:
    """Every marker must name a claim of the graph with at least one verified evidence item.

    ``outline`` is the ``report_outline`` object (a whole ``report-outline.json`` document is
    accepted too) and ``base_pointer`` its location in ``file``.
    """
    if isinstance(outline.get("report_outline"), dict):
        outline, base_pointer = outline["report_outline"], base_pointer + pointer_join("report_outline")
    problems = []
    for pointer, text in _outline_texts(outline, base_pointer):
        where = base_pointer + pointer
        for start, end in malformed_markers(text):
            problems.append(Problem(
                file, where, "citation.malformed",
                f"{text[start:end]!r} looks like a citation marker but is not one",
                "write markers as [@C3], [@academic-researcher:C3] or [@C1; @C2] "
                "(each reference starts with @, references are separated by ';')",
            ))
        for start, end, refs in find_markers(text):
            marker = text[start:end]
            for ref in refs:
                problems.extend(_check_ref(ref, marker, resolve, claim, file, where))
    return problems


def _check_ref(ref: str, marker: str, resolve: Callable[[str], str | None],
               claim: Callable[[str], dict[str, Any] | None], file: str, where: str) -> list[Problem]:
    claim_id = resolve(ref)
    found = claim(claim_id) if claim_id else None
    if found is None:
        return [Problem(
            file, where, "citation.unresolved",
            f"the marker {marker!r} cites {ref!r}, which names no claim in the knowledge graph "
            "(or is ambiguous between agents)",
            "cite a claim id listed under 'claims' in knowledge-graph.json, in the full form "
            "'<agent>:<id>' when several agents use the same id, or remove the marker",
            details={"ref": ref},
        )]
    evidence = [e for e in found.get("evidence") or () if isinstance(e, dict)]
    if any(is_verified(e) for e in evidence):
        return []
    reasons = sorted({str((e.get("verification") or {}).get("reason") or "not checked") for e in evidence})
    return [Problem(
        file, where, "citation.unverified",
        f"the marker {marker!r} cites claim {claim_id!r}, which has no verified evidence"
        + (f" ({'; '.join(reasons)})" if reasons else " (it has no evidence at all)"),
        f"cite a claim whose evidence snippet was verified against the stored source text, have the claim's "
        f"author quote {claim_id!r}'s source verbatim so it verifies, or remove the marker",
        details={"ref": ref, "claim_id": claim_id},
    )]


def printed_page(source: Mapping[str, Any], page: int) -> str:
    """The number printed on PDF page ``page`` of ``source`` (its ``page_labels``), else the page itself."""
    labels = source.get("page_labels")
    if isinstance(labels, list) and 1 <= page <= len(labels) and isinstance(labels[page - 1], str):
        return labels[page - 1]
    return str(page)


def pdf_document(source: Mapping[str, Any]) -> str | None:
    """Where the source's PDF opens (a local file or its PDF URL), for links to a page; None for other documents."""
    path = source.get("local_path")
    if isinstance(path, str) and path.lower().endswith(".pdf") and path.startswith("/"):
        return "file://" + quote(path)
    for key in ("pdf_url", "url"):
        url = source.get(key)
        if isinstance(url, str) and re.match(r"^https?://\S+$", url) and (
                key == "pdf_url" or url.lower().split("?")[0].endswith(".pdf")):
            return url.split("#")[0]
    return None


@dataclass(frozen=True)
class Ref:
    """One numbered source in a citation, with the pages (or, without pages, sections) the cited snippets are in.

    ``pages`` count the stored text's (PDF) pages; ``printed`` are the numbers printed on those
    pages (the source's ``page_labels``), which is what a reader looks for: the label shows them.
    ``sections`` are the headings cited in a document without pages (Markdown, HTML): "§ Fleet".
    """

    number: int
    source_id: str
    pages: tuple[int, ...] = ()
    printed: tuple[str, ...] = ()
    document: str | None = None  # the PDF a page link opens (``#page=N`` is appended), when there is one
    sections: tuple[str, ...] = ()

    def section_text(self) -> str:
        """``§ Fleet`` or ``§§ Fleet, Outlook``; '' without sections."""
        if not self.sections:
            return ""
        return f"{'§' if len(self.sections) == 1 else '§§'} {', '.join(self.sections)}"

    def page_texts(self) -> tuple[str, ...]:
        return self.printed if len(self.printed) == len(self.pages) else tuple(map(str, self.pages))

    def page_prefix(self) -> str:
        return "p." if len(self.pages) == 1 else "pp."

    def page_links(self) -> tuple[tuple[str, str | None], ...]:
        """Each cited page as (text shown, link to that PDF page or None)."""
        return tuple((text, f"{self.document}#page={page}" if self.document else None)
                     for text, page in zip(self.page_texts(), self.pages, strict=True))

    def label(self) -> str:
        places = [f"{self.page_prefix()} {', '.join(self.page_texts())}"] if self.pages else []
        places += [self.section_text()] if self.sections else []
        return ", ".join([str(self.number), *places])


@dataclass(frozen=True)
class Citation:
    """What one marker becomes: the claims it names and their numbered sources."""

    claim_ids: tuple[str, ...]
    refs: tuple[Ref, ...]

    def label(self) -> str:
        return "[" + "; ".join(r.label() for r in self.refs) + "]"


@dataclass(frozen=True)
class CitedEvidence:
    claim_id: str
    ref: Ref
    evidence: dict[str, Any]
    source: dict[str, Any]


class Citer:
    """Numbers sources in order of first citation; cites only verified evidence."""

    def __init__(self, graph: Mapping[str, Any]) -> None:
        self.sources: dict[str, dict[str, Any]] = {}
        for source in graph.get("sources") or ():
            for alias in (source["id"], *(source.get("aliases") or ())):
                self.sources.setdefault(alias, source)
        self.claims: dict[str, dict[str, Any]] = {c["id"]: c for c in graph.get("claims") or ()}
        self.numbers: dict[str, int] = {}
        self.cited: dict[str, list[CitedEvidence]] = {}

    def supported(self, claim_id: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        """The claim's verified evidence items whose source is in the graph, with that source."""
        claim = self.claims.get(claim_id) or {}
        return [
            (e, self.sources[e["source_id"]])
            for e in claim.get("evidence") or ()
            if is_verified(e) and e.get("source_id") in self.sources
        ]

    def cite(self, *claim_ids: str) -> Citation | None:
        """Cite the claims together; None when none of them has verified evidence."""
        pages: dict[str, set[int]] = {}
        sections: dict[str, dict[str, None]] = {}  # in order of citation
        cited = []
        for claim_id in claim_ids:
            items = self.supported(claim_id)
            if not items:
                continue
            cited.append(claim_id)
            entries = []
            for evidence, source in items:
                number = self.numbers.setdefault(source["id"], len(self.numbers) + 1)
                section = evidence_section(evidence, source)
                page = None if section else evidence_page(evidence)
                pages.setdefault(source["id"], set()).update([page] if page else [])
                sections.setdefault(source["id"], {}).update({section: None} if section else {})
                entries.append(CitedEvidence(claim_id, self._ref(number, source["id"], (page,) if page else (),
                                                                 (section,) if section else ()), evidence, source))
            self.cited.setdefault(claim_id, entries)
        if not cited:
            return None
        refs = sorted((self._ref(self.numbers[s], s, tuple(sorted(p)), tuple(sections[s])) for s, p in pages.items()),
                      key=lambda ref: ref.number)
        return Citation(tuple(cited), tuple(refs))

    def _ref(self, number: int, source_id: str, pages: tuple[int, ...], sections: tuple[str, ...] = ()) -> Ref:
        source = self.sources.get(source_id) or {}
        return Ref(number, source_id, pages, tuple(printed_page(source, p) for p in pages), pdf_document(source),
                   sections)

    def printed_pages(self) -> bool:
        """Whether a cited page is shown by its printed number rather than its PDF page (the report says so once)."""
        return any(ref.printed != tuple(map(str, ref.pages))
                   for entries in self.cited.values() for ref in (e.ref for e in entries))

    def bibliography(self) -> list[tuple[int, dict[str, Any]]]:
        by_id = {s["id"]: s for s in self.sources.values()}
        return sorted(((n, by_id[s]) for s, n in self.numbers.items()), key=lambda item: item[0])
