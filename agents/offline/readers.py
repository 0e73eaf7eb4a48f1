"""Reading one local file into Source fields and page texts: PDF, Markdown, HTML and plain text.

Markdown and HTML are reduced to their visible text with the block structure kept, and their
metadata (front matter, ``<title>``, citation meta tags) fills the Source fields. Headings stay
Markdown ATX lines ("## Fleet", also for HTML ``<h2>``), so a claim can cite the section its
quote sits under and the orchestrator can find that heading in the stored text; inline code
keeps its backticks and characters (``**kwargs`` is not emphasis), as a reader quoting it would. A reader raises
:class:`~agents.offline.documents.CannotIngest` with the reason when a file cannot be read.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from agents.offline.documents import CannotIngest
from agents.offline.pdfmeta import UnreadablePdf, clean_doi, doi_fields, read_pdf
from agents.offline.text import normalize_ws, wordlist
from agents.offline.vintage import parse_date, stated_date

#: A text reader: (path, decoded content) -> (Source fields, page texts).
Reader = Callable[[Path, str], tuple[dict[str, Any], list[str]]]


def decode_text(data: bytes) -> str:
    """UTF-8 (with or without a BOM), else cp1252; binary content is refused."""
    if b"\x00" in data[:8192]:
        raise CannotIngest("binary content in a text file")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace")


def read_pdf_file(path: Path) -> tuple[dict[str, Any], list[str]]:
    """A PDF's bibliographic fields (see ``pdfmeta``) and its pages."""
    try:
        return read_pdf(path)
    except UnreadablePdf as exc:
        raise CannotIngest(str(exc)) from None


# Markdown ----------------------------------------------------------------------------------

_MD_INLINE = [
    (re.compile(r"!\[([^\]]*)\]\([^)]*\)"), r"\1"),  # images -> alt text
    (re.compile(r"\[([^\]]+)\]\([^)]*\)"), r"\1"),  # links -> text
    (re.compile(r"\[([^\]]+)\]\[[^\]]*\]"), r"\1"),  # reference links
    (re.compile(r"<(https?://[^>\s]+)>"), r"\1"),  # autolinks
    (re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>"), ""),  # inline HTML tags
    (re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1"), r"\2"),
    (re.compile(r"(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])"), r"\1"),
    (re.compile(r"(?<![\w_])_(?=\S)([^_\n]+?)(?<=\S)_(?![\w_])"), r"\1"),
    (re.compile(r"~~(?=\S)(.+?)(?<=\S)~~"), r"\1"),
]
_MD_DROP_LINE = re.compile(
    r"^\s*(?:```.*|~~~.*|[-*_](?:\s*[-*_]){2,}|=+|\|?[\s:|-]*-{3,}[\s:|-]*\|?|\[[^\]]+\]:\s+\S.*)$"
)
_MD_ATX = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$")


_MD_CODE = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)")


def _md_inline(text: str) -> str:
    """Links, images, inline HTML and emphasis reduced to their text; code spans kept verbatim."""
    codes: list[str] = []

    def hold(match: re.Match[str]) -> str:
        codes.append(match.group())
        return f"\x00{len(codes) - 1}\x00"

    text = _MD_CODE.sub(hold, text)
    for pattern, repl in _MD_INLINE:
        text = pattern.sub(repl, text)
    return re.sub("\x00(\\d+)\x00", lambda m: codes[int(m.group(1))], text)


def _front_matter(text: str) -> tuple[dict[str, str], str]:
    """Simple ``key: value`` YAML front matter (title, author, date); the rest is the body."""
    m = re.match(r"---[ \t]*\n(.*?)\n(?:---|\.\.\.)[ \t]*(?:\n|$)", text, re.S)
    if not m:
        return {}, text
    meta = {}
    for line in m.group(1).splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() and not key.startswith((" ", "\t", "-")):
            meta[key.strip().lower()] = value.strip().strip("'\"")
    return meta, text[m.end() :]


def _read_markdown(path: Path, raw: str) -> tuple[dict[str, Any], list[str]]:
    meta, body = _front_matter(raw.replace("\r\n", "\n"))
    lines = body.split("\n")
    title = meta.get("title", "")
    out: list[str] = []
    for i, line in enumerate(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        atx = _MD_ATX.match(line)
        setext = (
            line.strip() and re.fullmatch(r"\s*(=+|-+)\s*", nxt) and not line.lstrip().startswith(("-", "*"))
        )
        if atx or setext:
            heading = _md_inline(atx.group(2) if atx else line.strip())
            title = title or heading
            level = len(atx.group(1)) if atx else 1 if nxt.strip().startswith("=") else 2
            out.append(f"{'#' * level} {heading}")
            continue
        if _MD_DROP_LINE.match(line):
            continue
        line = re.sub(r"^\s{0,3}>\s?", "", line)  # blockquotes
        line = re.sub(r"^(\s*)[*+]\s+", r"\1- ", line)  # one bullet style
        out.append(_md_inline(line))
    fields = _text_fields(path, "\n".join(out), title)
    if meta.get("author") or meta.get("authors"):
        names = re.split(
            r"\s*(?:;|,|\band\b)\s*", (meta.get("author") or meta.get("authors", "")).strip("[]")
        )
        fields["authors"] = [n.strip().strip("'\"") for n in names if n.strip().strip("'\"")]
    _dated(fields, meta.get("date", ""))
    return fields, ["\n".join(out)]


# HTML --------------------------------------------------------------------------------------

_HTML_SKIP = frozenset({"script", "style", "nav", "noscript", "template", "svg"})
_HTML_BLOCK = frozenset(
    wordlist(
        """
    address article aside blockquote br caption dd details div dl dt figcaption figure footer form h1 h2 h3
    h4 h5 h6 header hr li main ol p pre section summary table tr ul
        """
    )
)


_HTML_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})


class _HTMLText(HTMLParser):
    """Visible text with block structure; ``<title>``, first ``<h1>`` and citation meta tags."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skip_depth = 0
        self.pre_depth = 0
        self.title = ""
        self.h1 = ""
        self.in_title = False
        self.in_h1 = False
        self.meta: dict[str, list[str]] = {}
        self.cells = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k.lower(): (v or "") for k, v in attrs}
        if tag == "meta":
            name = (a.get("name") or a.get("property") or "").lower()
            if name and a.get("content"):
                self.meta.setdefault(name, []).append(a["content"].strip())
            return
        if tag == "title":
            self.in_title = True
        if tag in _HTML_SKIP:
            self.skip_depth += 1
        if tag == "pre":
            self.pre_depth += 1
        if tag == "h1" and not self.h1:
            self.in_h1 = True
        if tag in _HTML_BLOCK:
            self.parts.append("\n")
        if tag in _HTML_HEADINGS and not self.pre_depth:
            self.parts.append("#" * int(tag[1]) + " ")  # a heading stays findable: "## Fleet"
        if tag == "tr":
            self.cells = 0
        if tag in ("td", "th"):  # a table row stays one line: "Standard delivery | $6.50 | within 4 hours"
            self.parts.append(" | " if self.cells else "")
            self.cells += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
        if tag in _HTML_SKIP and self.skip_depth:
            self.skip_depth -= 1
        if tag == "pre" and self.pre_depth:
            self.pre_depth -= 1
        if tag == "h1":
            self.in_h1 = False
        if tag in _HTML_BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title += data
            return
        if self.skip_depth:
            return
        if self.in_h1:
            self.h1 += data
        if not self.pre_depth and self.cells and not data.strip():
            return  # whitespace between table cells
        self.parts.append(data if self.pre_depth else re.sub(r"\s+", " ", data))


def _read_html(path: Path, raw: str) -> tuple[dict[str, Any], list[str]]:
    parser = _HTMLText()
    parser.feed(raw)
    parser.close()
    body = "".join(parser.parts)
    meta = parser.meta
    title = normalize_ws((meta.get("citation_title") or [""])[0] or parser.title or parser.h1)
    fields = _text_fields(path, body, title)
    authors = meta.get("citation_author") or meta.get("dc.creator") or meta.get("author") or []
    if authors:
        fields["authors"] = [normalize_ws(a) for a in authors if a.strip()]
    for key in ("citation_publication_date", "citation_date", "dc.date", "article:published_time", "date"):
        if _dated(fields, (meta.get(key) or [""])[0]):
            break
    doi = clean_doi((meta.get("citation_doi") or [""])[0].removeprefix("doi:"))
    if doi:
        fields.update(doi_fields(doi))
    if meta.get("citation_journal_title") or meta.get("citation_conference_title"):
        fields["venue"] = normalize_ws(
            (meta.get("citation_journal_title") or meta["citation_conference_title"])[0]
        )
    return fields, [body]


# Plain text --------------------------------------------------------------------------------


def _dated(fields: dict[str, Any], value: str) -> bool:
    """Set ``published`` (a full date) and ``year`` from a metadata value; True when it held a year."""
    date = parse_date(value)
    if date is not None:
        fields["published"], fields["year"] = date.isoformat(), date.year
        return True
    year = re.search(r"\b\d{4}\b", value)
    if year:
        fields["year"] = int(year.group())
    return year is not None


def _text_fields(path: Path, body: str, title: str) -> dict[str, Any]:
    """Fields shared by text-like files; the title falls back to a short first line, then the name; a
    date stated at the top ("Updated: 2025-02-01") is the publication date until metadata says otherwise."""
    if not title:
        first = next((normalize_ws(x) for x in body.splitlines() if x.strip()), "")
        title = first if 0 < len(first) <= 150 else path.stem.replace("_", " ").replace("-", " ")
    fields: dict[str, Any] = {"type": "local-document", "title": normalize_ws(title)}
    date = stated_date([body])
    if date is not None:
        fields["published"], fields["year"] = date.isoformat(), date.year
    return fields


def _read_txt(path: Path, raw: str) -> tuple[dict[str, Any], list[str]]:
    pages = raw.split("\f")  # a form feed already means "new page"
    return _text_fields(path, pages[0], ""), pages


#: Text readers by file suffix (PDFs are read by :func:`read_pdf_file`).
TEXT_READERS: dict[str, Reader] = {
    ".md": _read_markdown,
    ".markdown": _read_markdown,
    ".txt": _read_txt,
    ".html": _read_html,
    ".htm": _read_html,
}
