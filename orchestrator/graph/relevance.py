"""Which sources bear on the question (pure): the only ones worth a research round or a recommendation.

A folder of papers usually holds papers about other things too. A source the run did not cite
is worth another look only when its title, abstract or keywords share enough of the question's
content terms; advice to read (or cite) an unrelated paper is advice to pad the report.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from orchestrator.model.terms import content_terms

#: Share of the question's distinct content terms a source's description must use ...
MIN_SHARE = 0.34
#: ... but never more than this many: a title shares only a few words with a question of thirty.
MAX_NEEDED = 3


def _description(source: Mapping[str, Any]) -> str:
    parts = [source.get("title"), source.get("abstract"), *(source.get("keywords") or ())]
    return " ".join(str(p) for p in parts if isinstance(p, str))


def bears_on(source: Mapping[str, Any], question: str) -> bool:
    """True when the source's title, abstract and keywords use enough of the question's terms.

    Without a question (an empty one), or a source without a description (no title, abstract or
    keywords), every source counts: there is nothing to judge by, and dropping it could lose the answer.
    """
    wanted = set(content_terms(question))
    described = set(content_terms(_description(source)))
    if not wanted or not described:
        return True
    return len(wanted & described) >= max(1, min(MAX_NEEDED, round(MIN_SHARE * len(wanted))))


def relevant(sources: Iterable[Mapping[str, Any]], question: str) -> list[Mapping[str, Any]]:
    """The sources that bear on ``question``, in their order."""
    return [s for s in sources if bears_on(s, question)]
