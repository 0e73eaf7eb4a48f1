"""The page numbers printed on a document's pages, so a citation names the page a reader finds.

A paper from proceedings or a journal prints its own numbers (S2ORC's third PDF page is page
4971); the stored text counts PDF pages from 1. The printed number is read from the running
header or footer: a number standing at the start or end of one of a page's first or last lines
("4971", "Page 3 of 10", "3 / 21", "www.clinsci.org 307") whose difference from the PDF page
is the same on most pages. The PDF's own page labels (``/PageLabels``) come second: publishers
get them wrong (BioMed Central's start at 0 where the page says "Page 1 of 10").
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

__all__ = ["printed_labels"]

#: Lines at each end of a page searched for a running header or footer.
EDGE_LINES = 5
_START = re.compile(r"^\s*(\d{1,5})(?=\s|$)")
_END = re.compile(r"(?:^|\s)(\d{1,5})\s*$")
_OF = re.compile(r"(?i)(?:\bpage\s+)?(\d{1,5})\s*(?:/|\bof\b)\s*\d{1,5}\s*$")


def _candidates(page: str) -> set[int]:
    lines = [line for line in page.split("\n") if line.strip()]
    edge = lines[:EDGE_LINES] + lines[-EDGE_LINES:]
    found: set[int] = set()
    for line in edge:
        if len(line) > 160:
            continue
        of = _OF.search(line)
        if of:  # "3 / 21", "Page 3 of 10": the first number is the page, never the count
            found.add(int(of.group(1)))
            continue
        for pattern in (_START, _END):
            m = pattern.search(line)
            if m:
                found.add(int(m.group(1)))
    return found


def _running_offset(pages: Sequence[str]) -> int | None:
    """printed - PDF page, when one offset holds on at least half the pages (two at least)."""
    votes: Counter[int] = Counter()
    for index, page in enumerate(pages, start=1):
        votes.update({number - index for number in _candidates(page) if number >= 0})
    if not votes:
        return None
    offset, count = max(votes.items(), key=lambda kv: (kv[1], -abs(kv[0])))
    if count >= max(2, (len(pages) + 1) // 2) and offset >= 0:
        return offset
    return None


def printed_labels(pages: Sequence[str], pdf_labels: Sequence[str] | None = None) -> list[str] | None:
    """The printed page number of each page (page n is ``labels[n - 1]``), or None when the document prints none.

    ``pdf_labels``: the PDF's own ``/PageLabels``, used when no running number is found.
    """
    if len(pages) < 2:
        return None
    offset = _running_offset(pages)
    if offset is not None:
        return [str(n + offset) for n in range(1, len(pages) + 1)]
    if pdf_labels and len(pdf_labels) == len(pages) and all(label.strip() for label in pdf_labels):
        return [label.strip() for label in pdf_labels]
    return None
