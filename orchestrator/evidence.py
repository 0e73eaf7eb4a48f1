"""Evidence binding: does each quoted snippet really occur in the cited source's text?

Mechanical bookkeeping done for every backend. The result is recorded on the evidence
item; whether an unverified snippet rejects a claim is decided by the SHACL shapes
(high-priority claims need verified evidence). Nothing is repaired by guessing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rapidfuzz import fuzz

DEFAULT_THRESHOLD = 90.0
PAGE_SEPARATOR = "\f"
_SPACE = re.compile(r"\s+")


def normalize(text: str) -> str:
    """Compare text the way a reader would: case and runs of whitespace don't matter."""
    return _SPACE.sub(" ", text).strip().lower()


@dataclass(frozen=True)
class Verification:
    verified: bool
    score: float
    matched_text: str
    page: int | None
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "verified": self.verified,
            "score": round(self.score, 1),
            "matched_text": self.matched_text,
            "page": self.page,
            "reason": self.reason,
        }


def _best_match(snippet: str, haystack: str) -> tuple[float, str]:
    if not haystack:
        return 0.0, ""
    if snippet in haystack:
        return 100.0, snippet
    alignment = fuzz.partial_ratio_alignment(snippet, haystack)
    if alignment is None:
        return 0.0, ""
    return alignment.score, _whole_words(haystack, alignment.dest_start, alignment.dest_end)


def _whole_words(text: str, start: int, end: int) -> str:
    """Widen a match to word boundaries, so the closest passage shown to an agent is quotable."""
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    while end < len(text) and not text[end].isspace():
        end += 1
    return text[start:end].strip()


def verify_snippet(snippet: str, text: str, page: int | None, threshold: float = DEFAULT_THRESHOLD) -> Verification:
    """Fuzzy-match ``snippet`` at the cited page (or anywhere when no page is given)."""
    wanted = normalize(snippet)
    pages = text.split(PAGE_SEPARATOR)
    if page is not None:
        if page > len(pages):
            score, matched = _best_match(wanted, normalize(text))
            return Verification(
                False, score, matched, None, f"page {page} does not exist: the source text has {len(pages)} page(s)"
            )
        score, matched = _best_match(wanted, normalize(pages[page - 1]))
        if score >= threshold:
            return Verification(True, score, matched, page, "found on the cited page")
        elsewhere = [(_best_match(wanted, normalize(p)), n) for n, p in enumerate(pages, 1) if n != page]
        best = max(elsewhere, key=lambda e: e[0][0], default=((0.0, ""), None))
        if best[0][0] >= threshold:
            return Verification(
                False, best[0][0], best[0][1], best[1], f"found on page {best[1]}, not on the cited page {page}"
            )
        return Verification(False, score, matched, page, "not found on the cited page")
    score, matched = _best_match(wanted, normalize(text))
    located = None
    if score >= threshold and len(pages) > 1:
        for number, content in enumerate(pages, 1):
            if matched and matched in normalize(content):
                located = number
                break
    verified = score >= threshold
    return Verification(verified, score, matched, located, "found in the source text" if verified else "not found")


def bind_evidence(
    contribution: dict[str, Any],
    source_of: Callable[[str], dict[str, Any] | None],
    text_of: Callable[[str], str | None],
    threshold: float = DEFAULT_THRESHOLD,
) -> int:
    """Record a verification on every evidence item whose source has a stored text.

    ``source_of`` maps a global source id to its item, ``text_of`` a sha256 to the text.
    Returns the number of evidence items checked.
    """
    own_sources = {s["id"]: s for s in contribution["items"]["sources"]}
    checked = 0
    for claim in contribution["items"]["claims"]:
        for evidence in claim.get("evidence", []):
            source = own_sources.get(evidence.get("source_id", "")) or source_of(evidence.get("source_id", ""))
            sha = source.get("content_sha256") if source else None
            text = text_of(sha) if isinstance(sha, str) else None
            if text is None:
                evidence["verification"] = {
                    "verified": False,
                    "score": 0.0,
                    "matched_text": "",
                    "page": None,
                    "reason": "the cited source has no stored text (content_sha256) to check against",
                }
                continue
            page = (evidence.get("locator") or {}).get("page")
            evidence["verification"] = verify_snippet(
                str(evidence.get("snippet", "")), text, page if isinstance(page, int) else None, threshold
            ).to_dict()
            checked += 1
    return checked
