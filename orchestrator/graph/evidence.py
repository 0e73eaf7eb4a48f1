"""Evidence binding: does each quoted snippet really occur in the cited source's text, at the cited page?

Mechanical bookkeeping done for every backend. A snippet is verified when, in normal form
(:mod:`orchestrator.model.textnorm`: case, whitespace, hyphenation, ligatures, quotes, dashes), it
occurs in the page's text; an approximate match counts only when every number, unit, negation
and word of the snippet is in the matched passage, so "52 percent" never verifies a source
saying 25 and "did not reduce" never verifies "reduced". The record keeps the source's own
passage and its offsets, not the agent's wording. Whether an unverified snippet rejects a claim
is decided by the SHACL shapes (high-priority claims need verified evidence).

The work the checks of one submission may do is counted (graph/evidence_budget.py), never timed: a
verdict depends on the submission and its texts only, the same on an idle and on a saturated core.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from orchestrator.graph.evidence_budget import CUT_SHORT, Budget, alignment_cost
from orchestrator.graph.relation_scope import explain, quote_reasons
from orchestrator.model.terms import critical_tokens, words
from orchestrator.model.textnorm import Normalized, normalize_mapped

DEFAULT_THRESHOLD = 90.0
PAGE_SEPARATOR = "\f"
#: A snippet must be long enough to say something: "at" or "the results" would verify anything.
MIN_SNIPPET_CHARS = 20
MIN_SNIPPET_WORDS = 4
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
    #: the work limit stopped part of the search (the reason says so)
    cut_short: bool = False
    #: found, but its sentence in the source negates, asks, supposes or only reports it: how, in words
    governed: str = ""

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
        if self.cut_short:
            result["cut_short"] = True
        if self.governed:
            result["governed"] = self.governed
        return result


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
        self.key = (hash(text), len(text))
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


@dataclass
class _Search:
    """One snippet's search in one text, paying each step from the submission's budget."""

    wanted: str
    source: _Source
    threshold: float
    budget: Budget
    #: a step did not fit the budget
    cut_short: bool = False

    def page(self, number: int) -> Normalized | None:
        """The page in normal form, its exact search paid for; None if that does not fit."""
        if self.budget.take_page(self.source.key, number, len(self.source.raw_pages[number - 1])):
            return self.source.page(number)
        self.cut_short = True
        return None

    def aligned(self, page: Normalized, needle: str, per_block: int = 4) -> bool:
        """Whether an alignment of ``needle`` over the page fits (and is paid for)."""
        if self.budget.take(alignment_cost(len(page.text), len(needle), per_block=per_block)):
            return True
        self.cut_short = True
        return False

    def on_page(self, number: int) -> tuple[_Found, str] | None:
        page = self.page(number)
        if page is None:
            return None
        found = _exact(self.wanted, page)
        if found:
            return found, "exact"
        if not set(words(self.wanted)) <= _word_set(page.text):
            return None  # a word the page never uses cannot be in the passage: no alignment needed
        if self.aligned(page, self.wanted):
            found = _approximate(self.wanted, page, self.threshold)
            if found:
                return found, "approximate"
        return None

    def closest(self, numbers: list[int]) -> tuple[_Found, int] | None:
        """The most similar passage on these pages, for the agent's feedback, as far as the budget goes."""
        needle = self.wanted[:_FEEDBACK_NEEDLE]
        best: tuple[_Found, int] | None = None
        for number in numbers:
            page = self.page(number)
            if page is None or not self.aligned(page, needle, per_block=16):
                break
            found = _closest(needle, page)
            if found and (best is None or found.score > best[0].score):
                best = (found, number)
        return best


def verify_snippet(
    snippet: str,
    text: str,
    page: int | None,
    threshold: float = DEFAULT_THRESHOLD,
    budget: Budget | None = None,
) -> Verification:
    """Check ``snippet`` against the stored ``text`` at ``page`` (anywhere when no page is given).

    ``budget``: the submission's, shared by its checks (else this check has a budget of its own).
    """
    budget = budget or Budget()
    wanted = normalize_mapped(snippet).text
    if len(wanted) < MIN_SNIPPET_CHARS or len(words(wanted)) < MIN_SNIPPET_WORDS:
        return Verification(
            False, 0.0, "", page,
            f"the snippet is too short to verify anything: quote at least {MIN_SNIPPET_CHARS} characters and "
            f"{MIN_SNIPPET_WORDS} words of the source verbatim",
        )
    if budget.exhausted():
        return Verification(False, 0.0, "", page, "not checked: " + CUT_SHORT, cut_short=True)
    source = _Source(text)
    count = len(source.raw_pages)
    if page is not None and not 1 <= page <= count:
        return Verification(False, 0.0, "", None, f"page {page} does not exist: the source text has {count} page(s)")
    search = _Search(wanted, source, threshold, budget)
    order = [page] if page is not None else []
    order += [n for n in range(1, count + 1) if n != page]
    for number in order:
        hit = search.on_page(number)
        if hit is None:
            continue
        found, how = hit
        if page is None or number == page:
            reason = "found on the cited page" if page is not None else "found in the source text"
            framed = quote_reasons(source.page(number).text, found.start, found.end)
            if framed:  # "never reduced mortality" quoted as "reduced mortality": the words are there, not the claim
                governed = f"the source's sentence {explain(framed[0])}"
                refused = source.verification(number, found, False, f"{reason}, but {governed}: the quote leaves out "
                                              "what governs it. Quote the clause with those words and state the claim "
                                              "as the source does, or drop the claim", how)
                return replace(refused, governed=governed)
            if how == "approximate":
                reason += " (approximately: only spacing or punctuation differ)"
            return source.verification(number, found, True, reason, how)
        return source.verification(number, found, False, f"found on page {number}, not on the cited page {page}", how)
    return _not_found(search, page)


def _not_found(search: _Search, page: int | None) -> Verification:
    reason = "not found on the cited page" if page is not None else "not found in the source text"
    best = search.closest([page] if page is not None else list(range(1, len(search.source.raw_pages) + 1)))
    if search.cut_short:
        reason += "; " + CUT_SHORT
    if best is None:
        return Verification(False, 0.0, "", page, reason, cut_short=search.cut_short)
    closest = search.source.verification(best[1], best[0], False, reason, None)
    return Verification(False, closest.score, closest.matched_text, closest.page, reason, cut_short=search.cut_short)


def bind_evidence(
    contribution: Mapping[str, Any],
    source_of: Callable[[str], dict[str, Any] | None],
    text_of: Callable[[str], str | None],
    threshold: float = DEFAULT_THRESHOLD,
    budget: Budget | None = None,
) -> int:
    """Record a verification on every evidence item whose source has a stored text.

    ``source_of`` maps a global source id to its item, ``text_of`` a sha256 to the text. Every check
    of the contribution shares one ``budget`` (a new :class:`Budget` if none is given), spent in the
    order of its claims and evidence items. Returns the number of evidence items checked.
    """
    own_sources = {s["id"]: s for s in contribution["items"]["sources"]}
    budget = budget or Budget()
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
            text = text_of(sha) if isinstance(sha, str) else None
            if text is None:
                evidence["verification"] = unchecked()
                continue
            verification = verify_snippet(str(evidence.get("snippet", "")), text, page, threshold, budget).to_dict()
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
