"""Scholarly identifiers in one canonical form, and grouping of records that share one.

Used both where providers normalise what they fetch and where the graph de-duplicates
sources across agents, so "the same DOI" means the same thing in both places.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit, urlunsplit

_DOI = re.compile(r"10\.\d{4,9}/\S+")
_ARXIV_NEW = re.compile(r"^(\d{4}\.\d{4,5})(v\d+)?$")
_ARXIV_OLD = re.compile(r"^([a-z-]+(?:\.[A-Z]{2})?/\d{7})(v\d+)?$")


def clean_doi(value: Any) -> str | None:
    """Bare lowercase DOI from a DOI, ``doi:`` string or resolver URL."""
    if not value:
        return None
    match = _DOI.search(str(value).strip())
    if not match:
        return None
    return match.group().rstrip(".,;").lower()


def clean_arxiv_id(value: Any) -> str | None:
    """arXiv identifier without URL, ``arXiv:`` prefix or version (``2401.01234``, ``hep-th/9901001``)."""
    if not value:
        return None
    text = str(value).strip()
    text = re.sub(r"(?i)^(https?://)?(export\.)?arxiv\.org/(abs|pdf)/", "", text)
    text = re.sub(r"(?i)^(arxiv:|10\.48550/arxiv\.)", "", text)
    text = re.sub(r"(?i)\.pdf$", "", text)
    for pattern in (_ARXIV_NEW, _ARXIV_OLD):
        match = pattern.match(text)
        if match:
            return match.group(1)
    return None


def clean_url(value: Any) -> str | None:
    """A URL compared without scheme, ``www.``, fragment or trailing slash."""
    if not isinstance(value, str) or not value.strip():
        return None
    parts = urlsplit(value.strip())
    host = parts.netloc.lower().removeprefix("www.")
    return urlunsplit(("", host, parts.path.rstrip("/") or "/", parts.query, ""))


class DisjointSets:
    """Union-find over ``0..n-1``; the smallest index of a group is its representative."""

    def __init__(self, size: int):
        self._parent = list(range(size))

    def find(self, item: int) -> int:
        parent = self._parent
        while parent[item] != item:
            parent[item] = parent[parent[item]]
            item = parent[item]
        return item

    def union(self, a: int, b: int) -> int:
        """Join the groups of ``a`` and ``b``; return the representative of the joined group."""
        ra, rb = self.find(a), self.find(b)
        low, high = min(ra, rb), max(ra, rb)
        self._parent[high] = low
        return low
