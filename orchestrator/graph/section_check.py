"""A cited section must hold the quote: its heading stands in the stored text before the snippet.

A document without pages (Markdown, HTML, text) is cited by section ("§ Installation", see
:func:`orchestrator.graph.citations.evidence_section`), so the section an agent names in an
evidence locator is checked like a page: mechanically, against the stored source text, once the
snippet has been found there. The heading must be a line of that text at or before the snippet's
start (Markdown marks, a leading number and a trailing colon aside); where headings carry Markdown
levels ("## Fleet") it must also still be open there: no heading of its level or above between it
and the snippet. A wrong section in a document cited by section rejects the claim; in a PDF, which
is cited by its pages, it is a warning.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from orchestrator.graph.citations import paged
from orchestrator.model.problems import Problem, pointer_join
from orchestrator.model.textnorm import normalize

__all__ = ["section_problems"]

_ATX = re.compile(r"^(#{1,6})[ \t]+")
_NUMBER = re.compile(r"^(?:\d{1,2}(?:\.\d{1,2})*|[IVX]{1,4}|[A-H])\.?\s+")
#: A line longer than this is prose, not a heading.
_MAX_HEADING = 200


def _key(text: str) -> str:
    """A heading's words in normal form: case, whitespace, Markdown marks and a trailing colon aside."""
    return normalize(_ATX.sub("", text.strip())).strip().rstrip(":.").strip()


def _names(line: str, wanted: str) -> bool:
    """Whether a line is the heading ``wanted`` names: the heading, or its number ("3.2" for "3.2 Results")."""
    key = _key(line)
    numbered = key.startswith(wanted + " ") and _NUMBER.fullmatch(wanted + " ") is not None
    return key == wanted or _NUMBER.sub("", key) == wanted or numbered


def _level(line: str) -> int | None:
    match = _ATX.match(line)
    return len(match.group(1)) if match else None


def _lines_before(text: str, page: int, start: int) -> list[str] | None:
    """The lines of the stored text up to the one the snippet starts on (it may start with its own heading)."""
    pages = text.split("\f")
    if not 1 <= page <= len(pages) or not 0 <= start <= len(pages[page - 1]):
        return None
    here = pages[page - 1]
    end = here.find("\n", start)
    before = "\n".join([*pages[: page - 1], here[: len(here) if end < 0 else end]])
    return [line for line in before.split("\n") if line.strip() and len(line) <= _MAX_HEADING]


def _innermost(lines: list[str]) -> str | None:
    """The heading (with Markdown levels) the last line stands under, as printed."""
    open_: list[tuple[int, str]] = []
    for line in lines:
        level = _level(line)
        if level is not None:
            open_ = [h for h in open_ if h[0] < level] + [(level, _ATX.sub("", line).strip())]
    return open_[-1][1] if open_ else None


def _misplaced(section: str, lines: list[str]) -> str | None:
    """Why ``section`` does not hold the snippet after ``lines``, or None when it does."""
    wanted = _key(section)
    if not wanted:
        return "the section is empty"
    at = next((i for i in range(len(lines) - 1, -1, -1) if _names(lines[i], wanted)), None)
    if at is None:
        return "no heading line of that name stands before the quoted passage"
    level = _level(lines[at])
    closer = next((x for x in lines[at + 1:] if level is not None and (_level(x) or 7) <= level), None)
    if closer is not None:
        return f"that section ends before the quoted passage, at the heading {_ATX.sub('', closer).strip()!r}"
    return None


def section_problems(contribution: Mapping[str, Any], source_of: Callable[[str], Mapping[str, Any] | None],
                     text_of: Callable[[str], str | None]) -> list[Problem]:
    """A problem for each verified evidence item whose locator's ``section`` does not hold its snippet.

    Run after the evidence binding: the snippet's place is its verification's page and ``char_start``.
    An unverified snippet has its own problem, and a table or figure locator is checked elsewhere.
    """
    items = contribution["items"]
    own_sources = {s["id"]: s for s in items.get("sources") or ()}
    problems = []
    for claim in items.get("claims") or ():
        prov = claim.get("provenance") or {}
        for n, evidence in enumerate(claim.get("evidence") or ()):
            locator = evidence.get("locator")
            if not isinstance(locator, Mapping) or not isinstance(locator.get("section"), str) or \
                    "table" in locator or "figure" in locator:
                continue
            check = evidence.get("verification") or {}
            page, start = check.get("page"), check.get("char_start")
            if check.get("verified") is not True or not isinstance(page, int) or not isinstance(start, int):
                continue
            source_id = str(evidence.get("source_id", ""))
            source = own_sources.get(source_id) or source_of(source_id) or {}
            sha = source.get("content_sha256")
            text = text_of(sha) if isinstance(sha, str) else None
            lines = _lines_before(text, page, start) if text is not None else None
            if lines is None:
                continue
            section = locator["section"]
            why = _misplaced(section, lines)
            if why is None:
                continue
            actual = _innermost(lines)
            use = f"the heading it stands under, {actual!r}" if actual else "the heading it stands under"
            problems.append(Problem(
                str(prov.get("file")),
                pointer_join(*[p for p in str(prov.get("pointer", "")).split("/") if p], "evidence", n,
                             "locator", "section"),
                "evidence.section_mismatch",
                f"claim {claim.get('local_id', claim.get('id'))!r} cites section {section!r} of {source_id!r}, but "
                f"the quoted passage is not in it: {why} in the source's stored text (page {page})",
                f"set locator.section to {use}, as printed in the stored text, or leave 'section' out",
                "warning" if paged(source) else "error",
                {"section": section, "found": actual},
            ))
    return problems
