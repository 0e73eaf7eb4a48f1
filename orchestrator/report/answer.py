"""The report's direct answer as terminal text: its "Answer" section with citations spelled out.

`cconductor run` ends by printing the answer the way the reader needs it on a console: each
numbered citation ("[1, p. 6]") becomes the source's short title and page ("[S2ORC, p. 6]"), so
the answer can be read without opening the report. Read from the rendered Markdown, so it shows
exactly what the report says.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["direct_answer", "short_title"]

_SECTION = re.compile(r"(?ms)^## (?:Answer|Direct answer|Short answer)\s*\n(.*?)(?=^## |\Z)")
_REF = re.compile(r"(\d+)(, pp?\. [\d, \u2013-]+)?")
_MARKER = re.compile(r"\[(\d+(?:, pp?\. [\d, \u2013-]+)?(?:; \d+(?:, pp?\. [\d, \u2013-]+)?)*)\]")
_ENTRY = re.compile(r"(?m)^(?:<a id=\"ref-\d+\"></a>)?\[(\d+)\] .*?\*(.+?)\*")
_LINK = re.compile(r"\[([^\]]+)\]\(#ref-\d+\)")


def short_title(title: str, words: int = 6) -> str:
    """'S2ORC: The Semantic Scholar ...' -> 'S2ORC'; a long title without a colon -> its first words."""
    head = title.split(":", 1)[0].strip()
    if ":" in title and 2 <= len(head) <= 40:
        return head
    parts = title.split()
    return " ".join(parts[:words]) + ("\u2026" if len(parts) > words else "")


def direct_answer(markdown: str) -> str | None:
    """The Answer section's text with citations resolved to short titles and pages (None: no section)."""
    found = _SECTION.search(markdown)
    if not found:
        return None
    titles = {int(n): short_title(re.sub(r"\\(.)", r"\1", t)) for n, t in _ENTRY.findall(markdown)}
    text = " ".join(_LINK.sub(r"\1", found.group(1)).split())

    def resolve(m: re.Match[str]) -> str:
        refs = []
        for part in m.group(1).split("; "):
            ref = _REF.match(part)
            if ref is None:
                return m.group(0)
            number = int(ref.group(1))
            refs.append(titles.get(number, str(number)) + (ref.group(2) or ""))
        return "[" + "; ".join(refs) + "]"

    return _MARKER.sub(resolve, text).replace("\\", "") or None


def answer_of(report: Path) -> str | None:
    """:func:`direct_answer` of a report file (None when it is missing or unreadable)."""
    try:
        return direct_answer(report.read_text(encoding="utf-8"))
    except OSError:
        return None
