"""Sentences of an answer and the node markers (``[@node-id]``) each one carries.

Markers are the report's syntax (:mod:`orchestrator.graph.citations`), extended from claims to
every citable node. A marker group written after a sentence's full stop still belongs to that
sentence. Common abbreviations ("e.g.", "et al.") and initials do not end a sentence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from orchestrator.graph.citations import MARKER_RE, find_markers, malformed_markers

_END = re.compile(r"[.!?][\"')\]\u201d\u2019]*\s+")
_ABBREVIATIONS = frozenset(
    {"e.g", "i.e", "al", "etc", "fig", "figs", "eq", "no", "vs", "cf", "dr", "mr", "mrs", "ms", "st", "approx",
     "ca", "p", "pp", "vol", "sec", "ref", "refs"}
)
_LEADING_MARKERS = re.compile(r"^(?:\[@[^\[\]]*\]\s*)+[.;,]?\s*")
#: A marker with the space before it, so "true [@C1]." reads "true."
_WITH_SPACE = re.compile(r"\s*" + MARKER_RE.pattern)


@dataclass(frozen=True)
class MarkedSentence:
    text: str  # without markers
    refs: tuple[str, ...]  # node references in the order written
    malformed: tuple[str, ...] = ()


def _ends_here(before: str, after: str) -> bool:
    last = before.split()[-1] if before.split() else ""
    last = re.sub(r"^\W+", "", last).lower().rstrip(".!?")
    if last in _ABBREVIATIONS or (len(last) == 1 and last.isalpha()):
        return False
    return bool(after) and (after[0].isupper() or after[0].isdigit() or after[0] in "\"'[(\u201c")


def split_sentences(text: str) -> list[str]:
    """Split prose into sentences; marker groups opening a piece go back to the sentence before."""
    pieces: list[str] = []
    for line in text.splitlines():
        start = 0
        for match in _END.finditer(line):
            if _ends_here(line[start:match.start()], line[match.end():]):
                pieces.append(line[start:match.end()].strip())
                start = match.end()
        if line[start:].strip():
            pieces.append(line[start:].strip())
    out: list[str] = []
    for piece in pieces:
        lead = _LEADING_MARKERS.match(piece)
        if lead and out:
            out[-1] = f"{out[-1]} {lead.group().strip()}"
            piece = piece[lead.end():]
        if piece.strip():
            out.append(piece.strip())
    return out


def strip_markers(text: str) -> str:
    """The sentence as a reader sees it, without markers."""
    for start, end in reversed(malformed_markers(text)):
        text = text[:start] + text[end:]
    plain = _WITH_SPACE.sub("", text)
    return " ".join(plain.split())


def parse(text: str) -> list[MarkedSentence]:
    """Every sentence of ``text`` with its node references (malformed markers kept apart)."""
    parsed = []
    for piece in split_sentences(text):
        refs = tuple(ref for _, _, group in find_markers(piece) for ref in group)
        bad = tuple(piece[start:end] for start, end in malformed_markers(piece))
        plain = strip_markers(piece)
        if plain.strip(" .;,") or refs or bad:
            parsed.append(MarkedSentence(plain, refs, bad))
    return parsed
