"""A cited PDF page as an image, and where on it the cited passage is (pypdfium2).

The image is the page rendered plain, cached in the user cache folder (never in the session)
under the PDF's sha256; what to mark on it is returned apart, as rectangles in fractions of the
page, so one cached image serves every citation of the page and the browser draws the marks.

Marks come from *locators*, one function per kind of locator in :data:`LOCATORS`: today the
quoted passage, found in the page's text layer (pypdfium2 gives every character's box). A
figure or table locator (a region of the page rather than words) is one more function there
returning its :class:`Mark`; the page view draws any kind.
"""

from __future__ import annotations

import hashlib
import os
import struct
import tempfile
import threading
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.contract.safe_read import open_regular
from orchestrator.model.textnorm import normalize_mapped
from orchestrator.viewer.files import as_dict

SCALE = 1.5  # 72 dpi points -> 108 dpi: a page ~900 px wide, sharp enough to read the passage
FUZZY_MIN = 88.0  # rapidfuzz alignment score a passage needs when the text layers differ

#: pdfium is not thread-safe: every call into it goes through this lock.
PDFIUM = threading.Lock()


@dataclass(frozen=True)
class Mark:
    """Something to point at on a page: ``rects`` are (left, top, right, bottom), fractions of the page."""

    kind: str  # "passage" now; "figure" / "table" when the graph gets their locators
    label: str
    rects: tuple[tuple[float, float, float, float], ...]
    exact: bool = True

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "label": self.label, "exact": self.exact,
                "rects": [[round(v, 5) for v in r] for r in self.rects]}


@dataclass
class PageText:
    """The text layer of one page: its characters and their boxes in page fractions."""

    text: str
    boxes: list[tuple[float, float, float, float] | None] = field(default_factory=list)


def cache_dir() -> Path:
    import platformdirs

    return platformdirs.user_cache_path("cconductor") / "viewer" / "pages"


_digests: dict[tuple[str, int, int], str] = {}


def pdf_digest(path: Path) -> str:
    info = path.stat()
    key = (str(path), info.st_size, info.st_mtime_ns)
    if key not in _digests:
        with os.fdopen(open_regular(path, str(path)), "rb") as handle:  # never blocked by a FIFO put in its place
            _digests[key] = hashlib.file_digest(handle, "sha256").hexdigest()
    return _digests[key]


def png(width: int, height: int, stride: int, rgb: bytes) -> bytes:
    """An RGB image as PNG: rows with filter 0, deflated (zlib is all a PNG needs)."""
    rows = b"".join(b"\x00" + rgb[y * stride: y * stride + width * 3] for y in range(height))

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 6)) + chunk(b"IEND", b"")


def page_count(path: Path) -> int:
    import pypdfium2

    with PDFIUM:
        document = pypdfium2.PdfDocument(path)
        try:
            return len(document)
        finally:
            document.close()


def rendered_page(path: Path, page: int) -> bytes:
    """PNG of 1-based ``page`` of the PDF at ``path``, from the cache when rendered before."""
    target = cache_dir() / f"{pdf_digest(path)}-{page}-{SCALE}.png"
    try:
        return target.read_bytes()
    except OSError:
        pass
    import pypdfium2

    with PDFIUM:
        document = pypdfium2.PdfDocument(path)
        try:
            if not 1 <= page <= len(document):
                raise IndexError(f"the PDF has {len(document)} pages, not {page}")
            bitmap = document[page - 1].render(scale=SCALE, rev_byteorder=True)
            width, height, stride = bitmap.width, bitmap.height, bitmap.stride
            raw = bytes(bitmap.buffer)
        finally:
            document.close()
    data = png(width, height, stride, raw)
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=target.parent, delete=False, suffix=".part") as out:
        out.write(data)
    os.replace(out.name, target)
    return data


def page_text(path: Path, page: int) -> PageText:
    import pypdfium2

    with PDFIUM:
        document = pypdfium2.PdfDocument(path)
        try:
            pdf_page = document[page - 1]
            left, bottom, right, top = pdf_page.get_cropbox()
            width, height = (right - left) or 1.0, (top - bottom) or 1.0
            textpage = pdf_page.get_textpage()
            count = textpage.count_chars()
            text = textpage.get_text_range()
            if len(text) != count:  # pdfium may expand a character: read them one by one
                text = "".join(textpage.get_text_range(i, 1)[:1] or " " for i in range(count))
            boxes: list[tuple[float, float, float, float] | None] = []
            for i in range(count):
                x0, y0, x1, y1 = textpage.get_charbox(i)
                boxes.append(None if x1 <= x0 or y1 <= y0 else
                             ((x0 - left) / width, (top - y1) / height, (x1 - left) / width, (top - y0) / height))
        finally:
            document.close()
    return PageText(text, boxes)


def _compact(text: str) -> tuple[str, list[int]]:
    """``text`` in normal form without whitespace, and each character's offset in ``text``."""
    normal = normalize_mapped(text)
    chars, origin = [], []
    for i, char in enumerate(normal.text):
        if not char.isspace():
            chars.append(char)
            origin.append(normal.origin[i])
    return "".join(chars), origin


def find_span(layer: str, quoted: str) -> tuple[int, int, bool] | None:
    """[start, end) of ``quoted`` in ``layer`` (original offsets) and whether it matched exactly.

    Two extractions of one PDF differ in spaces, line-break hyphens and ligatures, so both are
    compared in normal form without whitespace; failing that, the best fuzzy alignment counts
    when it is close (``FUZZY_MIN``).
    """
    page, origin = _compact(layer)
    target, _ = _compact(quoted)
    if not target or not page:
        return None
    at = page.find(target)
    if at >= 0:
        return origin[at], origin[at + len(target) - 1] + 1, True
    from rapidfuzz import fuzz

    found = fuzz.partial_ratio_alignment(target, page, score_cutoff=FUZZY_MIN)
    if found is None or found.dest_end <= found.dest_start:
        return None
    return origin[found.dest_start], origin[found.dest_end - 1] + 1, False


def line_rects(boxes: list[tuple[float, float, float, float] | None]) -> list[tuple[float, float, float, float]]:
    """Character boxes merged into one rectangle per line of text."""
    rects: list[list[float]] = []
    for box in boxes:
        if box is None:
            continue
        middle = (box[1] + box[3]) / 2
        if rects and rects[-1][1] <= middle <= rects[-1][3] and box[0] >= rects[-1][0] - 0.01:
            current = rects[-1]
            current[0], current[1] = min(current[0], box[0]), min(current[1], box[1])
            current[2], current[3] = max(current[2], box[2]), max(current[3], box[3])
        else:
            rects.append(list(box))
    return [(r[0], r[1], r[2], r[3]) for r in rects]


def passage_mark(evidence: dict[str, Any], layer: PageText) -> Mark | None:
    verification = as_dict(evidence.get("verification"))
    quoted = verification.get("matched_text") or evidence.get("snippet")
    if not isinstance(quoted, str):
        return None
    span = find_span(layer.text, quoted)
    if span is None:
        return None
    start, end, exact = span
    return Mark("passage", "quoted passage", tuple(line_rects(layer.boxes[start:end])), exact)


#: One function per kind of locator; each returns the mark it can place on the page, or None.
LOCATORS: list[Callable[[dict[str, Any], PageText], Mark | None]] = [passage_mark]


def page_marks(path: Path, page: int, evidence: dict[str, Any]) -> list[Mark]:
    layer = page_text(path, page)
    return [mark for locate in LOCATORS if (mark := locate(evidence, layer)) is not None and mark.rects]
