"""Sentences of a page as the researchers quote them, and the filters that keep findings only.

A claim quoted from a reference list, a caption or a running header is not a finding: these
filters decide what may be quoted; the quoted characters are always the page's own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agents.offline.text import normalize_ws, wordlist
from orchestrator.model.terms import search_terms

# --- terms -----------------------------------------------------------------------------------


def terms(text: str) -> set[str]:
    """Stemmed content words (no numbers): what two sentences must share to be about the same thing."""
    return set(search_terms(text, numbers=False, shortest=3))


# --- sentence filters ------------------------------------------------------------------------

_CAPTION_RE = re.compile(
    r"(?i)^(?:supplementary\s+|suppl\.\s*)?(?:s\d+\s+)?(?:fig(?:ure)?s?|tab(?:le)?s?|chart|scheme|plate|box)"
    r"\.?\s*(?:[A-Z]?\d+|[IVX]+)\b"
)
_BOILERPLATE_RE = re.compile(
    r"(?i)©|\bcopyright\b|creative commons|licen[cs]ed under|\bopen access\b|\breceived:|\baccepted:|"
    r"correspond(?:ence|ing author)|e-?mail|https?://|www\.|\bdoi\b|\bthank|\bgrateful|funded by|"
    r"\bgrant (?:no|number)|acknowledg|competing interests|conflicts? of interest|authors?'? contributions?|"
    r"\bpublished by\b|\barxiv preprint\b|\bin proceedings\b|\bfunding\b|\bsupported by\b|cite this article|"
    r"\b(?:table|figure|fig\.)\s*[a-z]?\d+\s*:"  # a caption inside the "sentence": a table ran into it
)
_HEADING_START_RE = re.compile(r"^[A-Z]{4,} [A-Z]{4,}\b")  # "CLINICAL PERSPECTIVES The N-domain ..."
_JOINED_RE = re.compile(r"\b([A-Za-z]{3,})\. [a-z]")
_ABBREV = frozenset(wordlist("approx etc fig figs resp vs viz incl eqs refs sect suppl"))
_INITIALS_RE = re.compile(r"\b[A-Z]\.\s?(?:[A-Z]\.\s?)?,")
_YEAR_RE = re.compile(r"\(?(?:19|20)\d{2}[a-z]?\)?[.,;:]")
_VENUE_RE = re.compile(
    r"\b(?:[Jj]ournal|J\.|[Pp]roc\.|[Pp]roceedings|[Cc]onference|pp\.|[Vv]ol\.|[Pp]ress)\s"
)
_REF_START_RE = re.compile(r"^(?:\[\d+\]|\d{1,3}\.\s+[A-Z][a-zA-Z'-]+,?\s+[A-Z]{1,3}\b)")
_ENDING_RE = re.compile(r"[.!?][\"'\u201d\u2019)\]]*(?:\s?\[\d+(?:\s*[,\u2013-]\s*\d+)*\])?$")
REF_HEADING_RE = re.compile(
    r"(?i)^(?:\d+\.?\s*)?(?:references|bibliography|literature cited|works cited)\s*$"
)
AFTER_REF_RE = re.compile(
    r"(?i)^(?:[A-Z]\s+|\d+\s+)?(?:appendix|appendices|supplementary|supporting information)\b"
)


def reference_like(text: str) -> bool:
    """A reference-list entry: numbered or with several initials, a year and a venue."""
    if _REF_START_RE.match(text):
        return True
    initials = len(_INITIALS_RE.findall(text)) >= 2
    signals = initials + bool(_YEAR_RE.search(text)) + bool(_VENUE_RE.search(text))
    return signals >= 2 or text.count(" et al.") >= 2


def informative(text: str) -> bool:
    """A complete, quotable sentence of prose (not a caption, reference, header or table row)."""
    flat = normalize_ws(text)
    words = flat.split()
    if not 60 <= len(flat) <= 450 or not 9 <= len(words) <= 80:
        return False
    if not (flat[0].isupper() or flat[0] in "\"'\u201c(") or not _ENDING_RE.search(flat):
        return False
    if _CAPTION_RE.match(flat) or _HEADING_START_RE.match(flat) or _BOILERPLATE_RE.search(flat):
        return False
    if reference_like(flat) or any(m.group(1).casefold() not in _ABBREV for m in _JOINED_RE.finditer(flat)):
        return False  # _JOINED_RE: "... of runs. tecting inline ...", two columns or a footnote run together
    visible = flat.replace(" ", "")
    letters = sum(ch.isalpha() for ch in visible)
    digits = sum(ch.isdigit() for ch in visible)
    if letters < 0.75 * len(visible) or digits > 0.12 * len(visible):
        return False
    single = sum(1 for w in words if len(w.strip(".,;:()[]")) == 1 and w.lower() not in ("a", "i"))
    return single <= 0.15 * len(words) and len(terms(flat)) >= 4


def _cells(line: str) -> list[str]:
    """The cells of a ``|``-separated table line ("| a | b |" -> ["a", "b"]); [] for any other line."""
    if line.count("|") < 1:
        return []
    return [c.strip() for c in line.strip().strip("|").split("|")]


#: The marks of a Markdown heading line ("## Quarterly revenue"), left out of what a claim says.
_ATX_MARK = re.compile(r"^#{1,6} ")


def line_key(line: str) -> str:
    return re.sub(r"\d+", "#", normalize_ws(line)).casefold()


@dataclass(frozen=True)
class Sentence:
    """A verbatim sentence of one page: ``page_text[start:end] == text``; ``context`` is the lead-in or
    table header a list item or table row needs to be understood (shown, never quoted)."""

    source_id: str
    page: int
    start: int
    end: int
    text: str
    context: str = ""

    @property
    def flat(self) -> str:
        return normalize_ws(self.text)

    @property
    def statement(self) -> str:
        """What a claim says: the quote after its context ("Key figures for 2024: … Revenue: $48.2 million"); a
        table row's cells named by its header ("Service: Standard delivery; Price per delivery: $6.50")."""
        lines = [_ATX_MARK.sub("", normalize_ws(x)) for x in self.context.split("\n") if x.strip()]
        own = [_ATX_MARK.sub("", normalize_ws(x)) for x in self.text.split("\n") if x.strip()]
        table = [x for x in own if "|" in x]
        if not lines and len(table) >= 2:  # a short row quoted with its header: caption, header, ..., the row
            lines, own = [x for x in own[: own.index(table[0])] if "|" not in x] + [table[0]], [own[-1]]
        if not lines:
            return self.flat
        header, row = _cells(lines[-1]), _cells(own[-1])
        if len(header) >= 2 and len(header) == len(row):
            named = "; ".join(f"{h}: {c}" for h, c in zip(header, row, strict=True))
            caption = " ".join(lines[:-1]).rstrip(" :")
            return f"{caption}: {named}" if caption else named
        return f"{' '.join(lines).rstrip(' :')}: \u2026 {self.flat}"
