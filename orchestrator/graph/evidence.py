"""Evidence binding: does each quoted snippet really occur in the cited source's text, at the cited page?

Mechanical bookkeeping done for every backend. A snippet is verified when, in normal form
(:mod:`orchestrator.model.textnorm`: case, whitespace, hyphenation, ligatures, quotes, dashes), it
occurs in the page's text; an approximate match counts only when every number, unit, negation
and word of the snippet is in the matched passage, so "52 percent" never verifies a source
saying 25 and "did not reduce" never verifies "reduced". The record keeps the source's own
passage and its offsets, not the agent's wording. Whether an unverified snippet rejects a claim
is decided by the SHACL shapes (high-priority claims need verified evidence).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from orchestrator.model.textnorm import Normalized, critical_tokens, normalize_mapped, words

DEFAULT_THRESHOLD = 90.0
PAGE_SEPARATOR = "\f"
#: A snippet must be long enough to say something: "at" or "the results" would verify anything.
MIN_SNIPPET_CHARS = 20
MIN_SNIPPET_WORDS = 4
#: Wall-clock budget for the evidence checks of one artifact set; past it only exact matches are tried.
DEFAULT_TIME_BUDGET_S = 3.0
#: The closest-passage search for feedback compares at most this much of the snippet.
_FEEDBACK_NEEDLE = 300


@dataclass(frozen=True)
class Verification:
    verified: bool
    score: float
    matched_text: str
    page: int | None
    reason: str
    char_start: int | None = None
    char_end: int | None = None
    match: str | None = None  # exact | approximate

    def to_dict(self) -> dict[str, Any]:
        result: dict[str, Any] = {
            "verified": self.verified,
            "score": round(self.score, 1),
            "matched_text": self.matched_text,
            "page": self.page,
            "reason": self.reason,
        }
        if self.char_start is not None:
            result.update(char_start=self.char_start, char_end=self.char_end, match=self.match)
        return result


class Deadline:
    """Shared by the checks of one artifact set, so no submission holds the merge mutex for long.

    Past the budget only exact matches are tried; past twice the budget nothing more is checked.
    """

    def __init__(self, seconds: float = DEFAULT_TIME_BUDGET_S):
        self.started = time.monotonic()
        self.seconds = seconds

    @classmethod
    def resumed(cls, spent: float, seconds: float = DEFAULT_TIME_BUDGET_S) -> Deadline:
        """The budget of checks that already spent ``spent`` seconds of it (in another process, say)."""
        deadline = cls(seconds)
        deadline.started -= spent
        return deadline

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def expired(self) -> bool:
        return time.monotonic() - self.started >= self.seconds

    def exhausted(self) -> bool:
        return time.monotonic() - self.started >= 2 * self.seconds


@dataclass(frozen=True)
class _Found:
    score: float
    start: int  # offsets in the page's normal form
    end: int


@lru_cache(maxsize=512)
def _word_set(normal_text: str) -> frozenset[str]:
    return frozenset(words(normal_text))


def _widen(text: str, start: int, end: int) -> tuple[int, int]:
    """Widen a match to word boundaries, so the passage shown is quotable."""
    while start > 0 and text[start - 1] != " ":
        start -= 1
    while end < len(text) and text[end] != " ":
        end += 1
    return start, end


def _exact(wanted: str, page: Normalized) -> _Found | None:
    """The first occurrence that starts and ends on word boundaries ("creased" is not in "increased")."""
    text = page.text
    at = text.find(wanted)
    while at >= 0:
        end = at + len(wanted)
        cut_before = at > 0 and text[at - 1].isalnum() and wanted[0].isalnum()
        cut_after = end < len(text) and text[end].isalnum() and wanted[-1].isalnum()
        if not (cut_before or cut_after):
            return _Found(100.0, at, end)
        at = text.find(wanted, at + 1)
    return None


def _approximate(wanted: str, page: Normalized, threshold: float) -> _Found | None:
    """A near-verbatim quote: same words, numbers, units and negations; only small differences between."""
    wanted_words = words(wanted)
    if not set(wanted_words) <= _word_set(page.text):
        return None  # prefilter: a word the page never uses cannot be in the passage
    from rapidfuzz import fuzz  # only when a quote is not verbatim: most merges never import it

    alignment = fuzz.partial_ratio_alignment(wanted, page.text, score_cutoff=threshold)
    if alignment is None or alignment.score < threshold:
        return None
    start, end = _widen(page.text, alignment.dest_start, alignment.dest_end)
    passage = page.text[start:end]
    if critical_tokens(passage) != critical_tokens(wanted):
        return None
    if not set(wanted_words) <= set(words(passage)):
        return None
    return _Found(alignment.score, start, end)


def _closest(wanted: str, page: Normalized) -> _Found | None:
    """The most similar passage, for the feedback an agent needs to quote correctly."""
    from rapidfuzz import fuzz

    needle = wanted[:_FEEDBACK_NEEDLE]
    alignment = fuzz.partial_ratio_alignment(needle, page.text)
    if alignment is None or not page.text:
        return None
    start, end = _widen(page.text, alignment.dest_start, alignment.dest_end)
    return _Found(alignment.score, start, end)


class _Source:
    """A stored text split into pages, each normalised once."""

    def __init__(self, text: str):
        self.raw_pages = text.split(PAGE_SEPARATOR)
        self.offsets: list[int] = []
        position = 0
        for raw in self.raw_pages:
            self.offsets.append(position)
            position += len(raw) + len(PAGE_SEPARATOR)

    def page(self, number: int) -> Normalized:
        return normalize_mapped(self.raw_pages[number - 1])

    def verification(self, number: int, found: _Found, verified: bool, reason: str, match: str | None) -> Verification:
        page = self.page(number)
        start, end = page.span(found.start, found.end)
        passage = self.raw_pages[number - 1][start:end]
        base = self.offsets[number - 1]
        return Verification(verified, found.score, passage, number, reason, base + start, base + end, match)


def _search(
    wanted: str, source: _Source, number: int, threshold: float, deadline: Deadline
) -> tuple[_Found, str] | None:
    page = source.page(number)
    found = _exact(wanted, page)
    if found:
        return found, "exact"
    if not deadline.expired():
        found = _approximate(wanted, page, threshold)
        if found:
            return found, "approximate"
    return None


def verify_snippet(
    snippet: str,
    text: str,
    page: int | None,
    threshold: float = DEFAULT_THRESHOLD,
    deadline: Deadline | None = None,
) -> Verification:
    """Check ``snippet`` against the stored ``text`` at ``page`` (anywhere when no page is given)."""
    deadline = deadline or Deadline()
    wanted = normalize_mapped(snippet).text
    if len(wanted) < MIN_SNIPPET_CHARS or len(words(wanted)) < MIN_SNIPPET_WORDS:
        return Verification(
            False, 0.0, "", page,
            f"the snippet is too short to verify anything: quote at least {MIN_SNIPPET_CHARS} characters and "
            f"{MIN_SNIPPET_WORDS} words of the source verbatim",
        )
    if deadline.exhausted():
        return Verification(
            False, 0.0, "", page,
            "not checked: the evidence checks of this submission ran out of time; cite fewer or shorter passages "
            "per submission",
        )
    source = _Source(text)
    count = len(source.raw_pages)
    if page is not None and not 1 <= page <= count:
        return Verification(False, 0.0, "", None, f"page {page} does not exist: the source text has {count} page(s)")
    order = [page] if page is not None else []
    order += [n for n in range(1, count + 1) if n != page]
    for number in order:
        hit = _search(wanted, source, number, threshold, deadline)
        if hit is None:
            continue
        found, how = hit
        if page is None or number == page:
            reason = "found on the cited page" if page is not None else "found in the source text"
            if how == "approximate":
                reason += " (approximately: only spacing or punctuation differ)"
            return source.verification(number, found, True, reason, how)
        return source.verification(number, found, False, f"found on page {number}, not on the cited page {page}", how)
    return _not_found(wanted, source, page, deadline)


def _not_found(wanted: str, source: _Source, page: int | None, deadline: Deadline) -> Verification:
    reason = "not found on the cited page" if page is not None else "not found in the source text"
    if deadline.expired():
        return Verification(False, 0.0, "", page, reason + " (closest passage not searched: time limit reached)")
    candidates = [page] if page is not None else range(1, len(source.raw_pages) + 1)
    best: tuple[_Found, int] | None = None
    for number in candidates:
        if deadline.expired():
            break
        found = _closest(wanted, source.page(number))
        if found and (best is None or found.score > best[0].score):
            best = (found, number)
    if best is None:
        return Verification(False, 0.0, "", page, reason)
    closest = source.verification(best[1], best[0], False, reason, None)
    return Verification(False, closest.score, closest.matched_text, closest.page, reason)


def bind_evidence(
    contribution: dict[str, Any],
    source_of: Callable[[str], dict[str, Any] | None],
    text_of: Callable[[str], str | None],
    threshold: float = DEFAULT_THRESHOLD,
    time_budget_s: float = DEFAULT_TIME_BUDGET_S,
    checked_before: Callable[[str, str, int | None], dict[str, Any] | None] | None = None,
    deadline: Deadline | None = None,
) -> int:
    """Record a verification on every evidence item whose source has a stored text.

    ``source_of`` maps a global source id to its item, ``text_of`` a sha256 to the text.
    ``checked_before(snippet, sha256, page)``: this very check's result computed earlier (by the
    read-ahead helper) while the text is still usable, or None. ``deadline``: the submission's
    budget when checks made earlier spent part of it (else a budget of ``time_budget_s`` starts).
    Returns the number of evidence items checked.
    """
    own_sources = {s["id"]: s for s in contribution["items"]["sources"]}
    deadline = deadline or Deadline(time_budget_s)
    checked = 0
    for claim in contribution["items"]["claims"]:
        for evidence in claim.get("evidence", []):
            locator = evidence.get("locator")
            if isinstance(locator, dict) and ("table" in locator or "figure" in locator):
                continue  # checked against the table's cells or the figure's caption (graph/document_evidence.py)
            source = own_sources.get(evidence.get("source_id", "")) or source_of(evidence.get("source_id", ""))
            sha = source.get("content_sha256") if source else None
            page = (evidence.get("locator") or {}).get("page")
            page = page if isinstance(page, int) else None
            snippet = str(evidence.get("snippet", ""))
            earlier = checked_before(snippet, sha, page) if checked_before and isinstance(sha, str) else None
            text = text_of(sha) if earlier is None and isinstance(sha, str) else None
            if earlier is None and text is None:
                evidence["verification"] = unchecked()
                continue
            verification = earlier or verify_snippet(snippet, text or "", page, threshold, deadline).to_dict()
            verification["text_sha256"] = sha
            evidence["verification"] = verification
            checked += 1
    return checked


def unchecked() -> dict[str, Any]:
    return {
        "verified": False,
        "score": 0.0,
        "matched_text": "",
        "page": None,
        "reason": "the cited source has no stored text (content_sha256) to check against",
    }
