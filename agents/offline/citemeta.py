"""Where a PDF was published: venue, volume, issue and pages from its first page's citation lines.

Publishers print the citation on the paper itself, each in its house style: "Clinical Science
(2014) 126, 305-313", "BMC Health Services Research 2014, 14:1", "Rehabilitation Research and
Practice Volume 2010, Article ID 157939", "PLoS ONE 13(6): e0197919", "PeerJ Comput. Sci. 3:e118",
"Proceedings of the 58th Annual Meeting ..., pages 4969-4983". Those forms are matched here, in
the first page and the page footers, so BibTeX and CSL entries can carry them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from agents.offline.text import normalize_ws

__all__ = ["publication_fields"]

_VENUE = r"(?P<venue>[A-Z][A-Za-z&.'\- ]{3,80}?)"
_PAGES = r"(?P<pages>[eE]?\d+(?:\s*[\u2013\u2014-]\s*[eE]?\d+)?)"
#: (pattern, what the page part means); tried in order, first match wins.
_FORMS: tuple[re.Pattern[str], ...] = (
    # "Clinical Science (2014) 126, 305-313"
    re.compile(rf"{_VENUE}\s*\((?:19|20)\d\d\)\s*(?P<volume>\d{{1,4}}),\s*{_PAGES}\b"),
    # "Rehabilitation Research and Practice Volume 2010, Article ID 157939, 6 pages"
    re.compile(rf"{_VENUE}\s+Volume\s+(?P<volume>\d{{1,4}}),\s*Article ID\s*(?P<pages>\d+)"),
    # "PLoS ONE 13(6): e0197919", "Nature 521(7553): 436-444"
    re.compile(rf"{_VENUE}\s+(?P<volume>\d{{1,4}})\s*\((?P<issue>\d{{1,4}})\)\s*:\s*{_PAGES}\b"),
    # "BMC Health Services Research 2014, 14:1"
    re.compile(rf"{_VENUE}\s+(?:19|20)\d\d,\s*(?P<volume>\d{{1,4}}):\s*{_PAGES}\b"),
    # "PeerJ Comput. Sci. 3:e118"
    re.compile(rf"{_VENUE}\s+(?P<volume>\d{{1,4}}):\s*(?P<pages>e\d+)\b"),
)
_PROCEEDINGS = re.compile(r"(?P<venue>Proceedings of [^,\n]{10,200}?),\s*pages\s+" + _PAGES)
_NOT_VENUE = re.compile(r"(?i)^(?:the|and|in|of|copyright|citation|received|accepted|published|doi|et al)\b|"
                        r"\bet al\b|\d")


def _clean_venue(venue: str) -> str | None:
    venue = normalize_ws(venue).strip(" .,;:-")
    venue = re.sub(r"^(?:.*\bet al\.?\s*)", "", venue)  # "Datta et al. Journal of ..." -> "Journal of ..."
    venue = re.sub(r"^.*?\b(?:Publishing Corporation|Publishing Group|Publishers?)\s+", "", venue)
    venue = re.split(r"(?<=[a-z]{7})\.\s+(?=[A-Z])", venue)[-1]  # "... Analyses. PeerJ Comput. Sci" -> "PeerJ ..."
    words = venue.split()
    if len(words) < 1 or len(venue) < 4 or _NOT_VENUE.search(venue) or not any(w[:1].isupper() for w in words):
        return None
    return venue


def publication_fields(pages: Sequence[str]) -> dict[str, str]:
    """{'venue', 'volume', 'issue', 'pages'} as printed on the paper (only the keys found)."""
    heads = [normalize_ws(pages[0])] if pages else []
    heads += [normalize_ws(p[:600] + " " + p[-600:]) for p in pages[1:4]]
    for text in heads:
        m = _PROCEEDINGS.search(text)
        if m:
            return {"venue": normalize_ws(m.group("venue")), "pages": _dash(m.group("pages"))}
    for form in _FORMS:
        for text in heads:
            for m in form.finditer(text):
                venue = _clean_venue(m.group("venue"))
                if venue is None:
                    continue
                found: dict[str, Any] = {"venue": venue, "volume": m.group("volume"), "pages": _dash(m.group("pages"))}
                if "issue" in m.groupdict() and m.group("issue"):
                    found["issue"] = m.group("issue")
                return found
    return {}


def _dash(pages: str) -> str:
    """'305-313' (any dash) -> '305--313' (BibTeX's page range)."""
    return re.sub(r"\s*[\u2013\u2014-]\s*", "--", pages.strip())
