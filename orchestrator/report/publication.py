"""Volume, issue and pages of a source, for BibTeX and CSL-JSON.

The Source schema has no fields for them, so ingestion keeps them under ``extra`` (``volume``,
``issue``, ``pages`` as printed on the PDF) or leaves arXiv's ``journal_ref`` there ("European
Journal of Combinatorics 31 (2010) 379-400", "Phys.Rev.D80:084030,2009"); this module reads both.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["publication"]

_REFS = (
    re.compile(r"^(?P<venue>[^\d]+?)\s*(?P<volume>\d+)\s*\((?:19|20)\d\d\)\s*(?P<pages>\d+(?:\s*[-\u2013]+\s*\d+)?)"),
    re.compile(r"^(?P<venue>[^\d]+?)\s*(?P<volume>\d+)\s*\((?P<issue>\d+)\)\s*[:,]\s*(?P<pages>\w+(?:-+\w+)?)"),
    re.compile(r"^(?P<venue>[A-Za-z. ]+?)\s*(?P<volume>\d+)\s*:\s*(?P<pages>\w+(?:-+\w+)?)\s*,\s*(?:19|20)\d\d"),
)


def publication(source: Mapping[str, Any]) -> dict[str, str]:
    """{'venue', 'volume', 'issue', 'pages'} known for ``source`` (pages as a BibTeX range 'a--b')."""
    raw = source.get("extra")
    extra: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    out = {k: str(extra[k]) for k in ("volume", "issue", "pages") if extra.get(k)}
    if source.get("venue"):
        out["venue"] = str(source["venue"])
    ref = extra.get("journal_ref")
    if isinstance(ref, str) and "volume" not in out:
        for pattern in _REFS:
            m = pattern.match(ref.strip())
            if m:
                found = {k: v.strip(" .,") for k, v in m.groupdict().items() if v}
                out = {**found, **out}
                break
    if "pages" in out:
        out["pages"] = re.sub(r"\s*(?:--|[-\u2013\u2014])\s*", "--", out["pages"])
    return out
