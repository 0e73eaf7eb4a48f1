"""A paper as a document: its sections, figures, tables and captions as graph items, and their stored objects.

Sections come from the heading lines of the stored text. Figures and tables are looked for only on
pages whose text holds a caption line ("Figure 2:", "Table 1."), so a paper without any costs one
regular-expression pass over its text and never opens the PDF a second time; those pages are read
with pypdfium2 (``pdflayout``/``pdfstructure``). A caption's text is cut from the stored page text,
so it verifies like a snippet; each caption names the one figure or table it describes, which is
the ingester's reading of the layout that an agent may correct. Images (PNG) and cells (JSON) are
content-addressed objects the ingester stores beside the texts.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.offline.documents import Document
from agents.offline.pdfstructure import Found, is_caption_line, kind_of
from agents.offline.sections import heading_kind

__all__ = ["Structure", "caption_pages", "extract_structure", "find_sections"]

#: "3 Method", "3.2. Paper clustering", "IV. RESULTS": a numbered heading line.
_NUMBERED = re.compile(r"^((?:\d{1,2})(?:\.\d{1,2}){0,3})\.?\s+([A-Z][^\n]{1,80})$")
MAX_CAPTION_CHARS = 4000


@dataclass
class Structure:
    """The items of one document for sections.json, figures.json, tables.json and captions.json."""

    sections: list[dict[str, Any]] = field(default_factory=list)
    figures: list[dict[str, Any]] = field(default_factory=list)
    tables: list[dict[str, Any]] = field(default_factory=list)
    captions: list[dict[str, Any]] = field(default_factory=list)
    #: sha256 -> (bytes, suffix): the images and cells to store as sources/<sha256><suffix>
    objects: dict[str, tuple[bytes, str]] = field(default_factory=dict)


def _offsets(pages: Sequence[str]) -> list[int]:
    out, position = [], 0
    for page in pages:
        out.append(position)
        position += len(page) + 1  # the form feed
    return out


def find_sections(doc: Document) -> list[dict[str, Any]]:
    """Section items from heading lines: named ones (Abstract, Methods...) and numbered ones in increasing order."""
    found: list[dict[str, Any]] = []
    last_top = 0
    starts = _offsets(doc.pages)
    for number, page in enumerate(doc.pages, start=1):
        offset = 0
        for line in page.split("\n"):
            text = " ".join(line.split())
            kind = heading_kind(text)
            numbered = _NUMBERED.match(text)
            heading: dict[str, Any] | None = None
            if numbered and not text.endswith((".", ",", ";")) and len(text.split()) <= 10 \
                    and not re.search(r"(?<![\w.])\d+(?:[.,]\d+)?%?(?![\w.])", numbered.group(2)):
                # "3 The S2ORC dataset" is a heading; "3 Results 45.2 12%" is a table row
                top = int(numbered.group(1).split(".")[0])
                if last_top <= top <= last_top + 1 or (top == last_top and "." in numbered.group(1)):
                    last_top = top
                    heading = {"number": numbered.group(1), "level": numbered.group(1).count(".") + 1}
            elif kind is not None:
                heading = {}
            if heading is not None:
                index = len(found) + 1
                found.append({"id": f"{doc.id}-sec{index}", "source_id": doc.id, "title": text, **heading,
                              "page": number, "char_start": starts[number - 1] + offset})
                if kind == "references":
                    return found
            offset += len(line) + 1
    return found


def caption_pages(doc: Document) -> list[int]:
    """The pages whose stored text has a caption line: the only ones read for figures and tables."""
    return [n for n, page in enumerate(doc.pages, start=1)
            if any(is_caption_line(line) for line in page.split("\n"))]


def _caption_span(page: str, found: Found) -> tuple[int, int] | None:
    """Where the caption stands in the stored page text: its label line and the lines of its block."""
    lines = page.split("\n")
    offset = 0
    for i, line in enumerate(lines):
        m = is_caption_line(line)
        if m and kind_of(m.group("kind")) == found.kind and m.group("number") == found.number:
            end = offset + len(line)
            for nxt in lines[i + 1:i + found.line_count]:
                if not nxt.strip() or is_caption_line(nxt):
                    break
                end += 1 + len(nxt)
            start = offset + len(line) - len(line.lstrip())
            return start, min(end, start + MAX_CAPTION_CHARS)
        offset += len(line) + 1
    return None


def _store(structure: Structure, data: bytes, suffix: str) -> str:
    sha = hashlib.sha256(data).hexdigest()
    structure.objects[sha] = (data, suffix)
    return sha


def _table_bytes(label: str, header: list[str], rows: list[list[str]]) -> bytes:
    """Canonical JSON of a table's cells (the same cells always hash the same)."""
    data = {"label": label, "header": header, "rows": rows}
    return json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode("utf-8")


def _bbox(box: tuple[float, float, float, float]) -> list[float]:
    return [round(max(0.0, v), 1) for v in box]


def _add(structure: Structure, doc: Document, found: Found, page: int, span: tuple[int, int], base: int,
         section_at: Any, image: bytes | None, used: set[str]) -> None:
    short = "fig" if found.kind == "figure" else "tab"
    local = f"{doc.id}-{short}{found.number}"
    if local in used:  # "Table 2 (continued)" on the next page, or a label printed twice
        local = f"{local}-p{page}"
    used.add(local)
    item: dict[str, Any] = {"id": local, "source_id": doc.id,
                            "label": found.label + (" (continued)" if found.continued else ""), "page": page}
    if found.box is not None:
        item["bbox"] = _bbox(found.box)
    section = section_at(base + span[0])
    if section:
        item["section_id"] = section
    if found.kind == "figure":
        if image is not None:
            item["image_sha256"] = _store(structure, image, ".png")
        structure.figures.append(item)
    else:
        if found.table is not None:
            data = _table_bytes(item["label"], found.table.header, found.table.rows)
            item["data_sha256"] = _store(structure, data, ".json")
            item["columns"] = found.table.header
            item["row_count"] = len(found.table.rows)
        structure.tables.append(item)
    text = doc.pages[page - 1][span[0]:span[1]]
    structure.captions.append({"id": f"{local}-caption", "source_id": doc.id, "text": text, "page": page,
                               "describes": local, "char_start": base + span[0], "char_end": base + span[1]})


def extract_structure(doc: Document, pdf_path: Path | None, *, render: bool = True) -> Structure:
    """Sections of any document; figures, tables and captions of a PDF (``pdf_path``) on its caption pages."""
    structure = Structure(sections=find_sections(doc))
    pages = caption_pages(doc) if pdf_path is not None else []
    if not pages:
        return structure
    from agents.offline.pdflayout import open_pdf, page_layout, render_region
    from agents.offline.pdfstructure import find_objects

    starts = _offsets(doc.pages)
    section_starts = [s["char_start"] for s in structure.sections]

    def section_at(position: int) -> str | None:
        at = bisect.bisect_right(section_starts, position) - 1
        return str(structure.sections[at]["id"]) if at >= 0 else None

    used: set[str] = set()
    pdf = open_pdf(pdf_path)  # type: ignore[arg-type]  # pages is empty without a path
    try:
        if len(pdf) != len(doc.pages):
            return structure  # the stored text is not this PDF's page by page: pages would not match
        for page in pages:
            for found in find_objects(page_layout(pdf, page)):
                span = _caption_span(doc.pages[page - 1], found)
                if span is None:
                    continue  # a caption the stored text does not hold cannot be quoted
                image = render_region(pdf, page, found.box) if render and found.kind == "figure" and found.box \
                    else None
                _add(structure, doc, found, page, span, starts[page - 1], section_at, image, used)
    finally:
        pdf.close()
    return structure
