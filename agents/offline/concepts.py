"""The offline researcher's entities: the claims' key phrases as concepts, linked when one claim names two.

Apart from the researcher because it is its own judgement (what counts as a thing worth naming)
and its own vocabulary of generic words.
"""

from __future__ import annotations

import re
from itertools import combinations
from typing import Any

from agents.offline.corpus import Corpus
from agents.offline.keyphrases import key_phrases
from agents.offline.text import normalize_ws, wordlist
from orchestrator.model.terms import stem

__all__ = ["concept_entities"]

Items = list[dict[str, Any]]

MAX_RELATIONSHIPS = 150
#: Words that are never a concept on their own, however often they recur.
_GENERIC = frozenset(wordlist("""
    analysis approach associations aim aims case cases change changes compare control data day days effect
    effects example factor factors finding findings group groups increase level levels method methods model
    number objective objectives part people period process rate research response result role set studies
    study system time times type types value values way work year years
    allow allows apply based consist consists construct contain contains describe develop enable
    introduce include includes obtain present propose provide provides report require requires show
    shows suggest suggests support supports
"""))


def _phrase_pattern(phrase: str) -> re.Pattern[str]:
    words = [re.escape(w) for w in phrase.split()]
    return re.compile(r"(?<![\w'-])" + r"[\s\W]{1,3}".join(words) + r"(?![\w'-])", re.IGNORECASE)


def concept_entities(claims: Items, corpus: Corpus) -> tuple[Items, Items]:
    """Key phrases of the claims as concept entities, and their co-occurrence in one claim.

    A phrase counts as a concept when two claims use it or its source repeats it (three times or
    more): one-off word runs such as "demonstrated superior stay" are not things.
    """
    if not claims:
        return [], []
    statements = " . ".join(c["statement"] for c in claims)
    texts: dict[str, str] = {}
    entities: list[dict[str, Any]] = []
    members: dict[str, list[str]] = {}
    patterns: dict[str, re.Pattern[str]] = {}
    seen: set[tuple[str, ...]] = set()
    for phrase in key_phrases(statements, top_n=min(150, 6 * len(claims)), max_words=4):
        key = tuple(stem(w) for w in phrase.split())
        single = " " not in phrase
        if len(phrase) < 4 or any(ch.isdigit() for ch in phrase) or key in seen or (
                single and (phrase in _GENERIC or phrase.endswith(("ed", "ing", "ly")) or len(phrase) < 5)):
            continue
        pattern = _phrase_pattern(phrase)
        hits = [(c, m) for c, m in ((c, pattern.search(c["statement"])) for c in claims) if m]
        if not hits or re.match(r"\s+et al\b", hits[0][0]["statement"][hits[0][1].end():]):
            continue  # none, or an author cited as "Name et al."
        if len(hits) < 2:
            source_id = hits[0][0]["evidence"][0]["source_id"]
            if source_id not in texts:
                doc = corpus.documents.get(source_id)
                texts[source_id] = normalize_ws(doc.text) if doc else ""
            if len(pattern.findall(texts[source_id])) < (5 if single else 3):
                continue
        seen.add(key)
        entity_id = "E-" + re.sub(r"[^a-z0-9]+", "-", phrase.casefold()).strip("-")[:60]
        if entity_id in members:  # "heat-stress" and "heat stress" are one entity
            continue
        entities.append({"id": entity_id, "name": normalize_ws(hits[0][1].group()), "type": "concept",
                         "description": f"Key phrase of {len(hits)} claim(s) in this research."})
        members[entity_id] = [c["id"] for c, _ in hits]
        patterns[entity_id] = pattern
    by_claim: dict[str, list[str]] = {}
    for entity_id, claim_ids in members.items():
        for claim_id in claim_ids:
            by_claim.setdefault(claim_id, []).append(entity_id)
    pairs: dict[tuple[str, str], list[str]] = {}
    for claim in claims:
        ids = sorted(by_claim.get(claim["id"], []))[:6]
        if ids:
            claim["entity_ids"] = ids
        # a relationship rests on what the source says (the quoted snippets), not on the statement's wording
        quoted = " ".join(str(e.get("snippet") or "") for e in claim.get("evidence") or ())
        for a, b in combinations([i for i in ids if patterns[i].search(quoted)], 2):
            pairs.setdefault((a, b), []).append(claim["id"])
    ranked = sorted(pairs.items(), key=lambda p: (-len(p[1]), p[0]))[:MAX_RELATIONSHIPS]
    relationships = [
        {"id": f"R{n}", "subject": a, "predicate": "co-occurs-with", "object": b,
         "confidence": round(min(0.9, 0.5 + 0.1 * len(ids)), 2), "claim_ids": ids}
        for n, ((a, b), ids) in enumerate(ranked, start=1)
    ]
    return entities, relationships
