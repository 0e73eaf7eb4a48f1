"""How the report's Answer opens: the decision on a yes/no question, and the current value before any older one.

Pure helpers of the synthesis agent. A claim from an archived or superseded document, or one that
states the same kind of figure as a claim from a newer document (for a question about the value in
force), is history: it follows the current value and is labelled as outdated, with its document's
title and date and what supersedes it.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping
from typing import Any

from agents.offline.sentences import terms
from agents.offline.stance import MIXED, NO, UNCLEAR, YES, decide, is_yes_no, signals
from agents.offline.vintage import Vintage, asks_for_current

__all__ = ["DECISIONS", "deciding_claims", "decision_lead", "outdated_label", "split_current"]

Item = dict[str, Any]
#: How a yes/no question's answer opens, by the decision on its quoted evidence (agents/offline/stance.py).
DECISIONS = {YES: "Yes.", NO: "No.", MIXED: "The evidence is mixed.",
             UNCLEAR: "The quoted evidence does not settle it either way."}


#: Sections whose sentences report what a study found; its background, aims and methods decide only without them.
_FINDING_SECTIONS = frozenset({"section:results", "section:conclusion", "section:discussion"})


def _reports_findings(claim: Item) -> bool:
    return bool(_FINDING_SECTIONS & set(claim.get("tags") or ()))


def decision_lead(query: str, claims: list[Item]) -> str:
    """"Yes." / "No." / ... for a yes/no question answered by ``claims``; "" for any other question.

    A study's results decide (claims tagged ``section:results`` or its conclusion), its aims and methods only
    without them: background sentences report what others found, not what this study found."""
    if not is_yes_no(query) or not claims:
        return ""
    results = [c for c in claims if _reports_findings(c)]
    return DECISIONS[decide(query, [c["statement"] for c in results or claims])]


def deciding_claims(query: str, quoted: list[Item], candidates: list[Item], room: int,
                    source_of: Callable[[Item], str]) -> list[Item]:
    """Up to ``room`` more claims to quote for a yes/no question: results of the study quoted first (the source
    of ``quoted[0]``) that state a finding or its absence, in ``candidates``' order. The decision reads the
    quoted sentences only, so a results sentence that decides must be quoted, not the study's sample size."""
    if not is_yes_no(query) or not quoted or room <= 0:
        return []
    study = source_of(quoted[0])
    return [c for c in candidates if c not in quoted and source_of(c) == study and _reports_findings(c)
            and signals(c["statement"]).any][:room]


def split_current(claims: list[Item], vintage: Mapping[str, Vintage], query: str,
                  source_of: Callable[[Item], str]) -> tuple[list[Item], list[Item]]:
    """(current claims, outdated claims), each in the given order."""
    def outdated(claim: Item) -> bool:
        found = vintage.get(source_of(claim))
        return bool(found and found.outdated)

    current = [c for c in claims if not outdated(c)]
    older = [c for c in claims if outdated(c)]
    if not asks_for_current(query):
        return current, older

    def date(claim: Item) -> dt.date | None:
        found = vintage.get(source_of(claim))
        return found.date if found else None

    keep: list[Item] = []
    earlier: list[Item] = []
    for claim in current:  # the same kind of figure stated by an older document is history too
        figure, when = terms(claim["statement"]), date(claim)
        newer = [k for k in current if k is not claim and when and (other := date(k)) and other > when
                 and _has_number(k["statement"]) and _has_number(claim["statement"])
                 and len(figure & terms(k["statement"])) >= 2]
        (earlier if newer else keep).append(claim)
    return keep, earlier + older


def outdated_label(source_id: str, vintage: Mapping[str, Vintage], sources: Mapping[str, Item]) -> str:
    """"Outdated, not the current value (“title”, dated ..., superseded by “title”): " for an older claim."""
    found = vintage.get(source_id)
    source = sources.get(source_id, {})
    newer = sources.get(found.superseded_by or "", {}) if found else {}
    when = f", dated {found.date.isoformat()}" if found and found.date else ""
    why = (f"superseded by \u201c{newer.get('title')}\u201d" if newer else "an archived copy"
           if found and found.archived else "a newer document states the figure above")
    return f"Outdated, not the current value (\u201c{source.get('title', '')}\u201d{when}, {why}): "


def _has_number(text: str) -> bool:
    return re.search(r"\d", text) is not None
