"""fact-checker, offline: corroborate every claim in other sources and find claims that disagree.

Corroboration means an independent source says the same thing, so passages of the claim's own
sources never count. A passage supports a claim when it shares most of the claim's rarer terms
(idf-weighted) and rapidfuzz's token-set similarity agrees; a passage that says the same thing
with the opposite polarity or direction supports nothing. Two claims conflict when they share
their terms but exactly one is negated, or they move in opposite directions (increase/decrease),
and they come from different sources (a paper contrasting its own conditions is not a conflict).
"""

from __future__ import annotations

import re
from itertools import combinations
from typing import Any

from rapidfuzz import fuzz

from agents.offline.corpus import Corpus, load_corpus
from agents.offline.retry_repair import complete_retry
from agents.offline.sentences import terms
from agents.offline.text import normalize_ws, wordlist
from agents.offline.vintage import vintages
from agents.runtime import AgentContext
from orchestrator.model.terms import stem

__all__ = ["conflict", "run", "support"]

SIMILARITY = 60.0  # rapidfuzz token_set_ratio a supporting sentence must reach
SHARED = 0.55  # idf-weighted share of the claim's terms it must contain
MAX_PASSAGES = 15

_NEGATION = re.compile(
    r"(?i)\b(?:not|no|never|none|neither|nor|without|cannot|fail(?:s|ed)? to|lack(?:s|ed)?)\b|n't\b"
)
_UP = frozenset(map(stem, wordlist("""
    increase increased increases increasing higher more greater rise rises rose gain gains improve improved
    improves improvement positive better enhance enhanced enhances larger faster strengthen strengthens
    outperform outperforms outperformed above
""")))
_DOWN = frozenset(map(stem, wordlist("""
    decrease decreased decreases decreasing lower less fewer smaller fall falls fell loss losses worsen
    worsened worsens deterioration negative worse reduce reduced reduces reduction slower weaken weakens
    underperform underperforms underperformed below decline declined declines
""")))


def _negated(text: str) -> bool:
    return bool(_NEGATION.search(text))


def _direction(found: set[str]) -> int:
    """+1 for 'increase'-type words only, -1 for 'decrease'-type only, 0 for none or both."""
    up, down = bool(found & _UP), bool(found & _DOWN)
    return (up and not down) - (down and not up)


def _share(corpus: Corpus, wanted: set[str], found: set[str]) -> float:
    weight = {t: max(corpus.idf(t), 0.05) for t in wanted}
    return sum(weight[t] for t in wanted & found) / (sum(weight.values()) or 1.0)


def conflict(a: str, b: str, ta: set[str] | None = None, tb: set[str] | None = None) -> str | None:
    """Why two statements about the same thing disagree, or None."""
    ta = terms(a) if ta is None else ta
    tb = terms(b) if tb is None else tb
    core_a, core_b = ta - _UP - _DOWN, tb - _UP - _DOWN
    shared = core_a & core_b
    if len(shared) < 3 or len(shared) < 0.5 * min(len(core_a), len(core_b)):
        return None
    if _negated(a) != _negated(b):
        return "one statement negates what the other asserts"
    da, db = _direction(ta), _direction(tb)
    if da and db and da != db:
        return "the statements report opposite directions of change"
    return None


def support(corpus: Corpus, claim: dict[str, Any], own: set[str]) -> tuple[list[dict[str, Any]], int]:
    """Sentences of other sources that say what the claim says, and how many looked contrary."""
    statement = str(claim.get("statement", ""))
    wanted = terms(statement)
    found: list[dict[str, Any]] = []
    contrary = 0
    if len(wanted) < 3:
        return found, contrary
    for hit in corpus.search(statement, limit=MAX_PASSAGES, exclude=own):
        for sentence in corpus.sentences(hit, strict=False):
            got = terms(sentence.text)
            if _share(corpus, wanted, got) < SHARED:
                continue
            similarity = fuzz.token_set_ratio(statement.casefold(), sentence.flat.casefold())
            if similarity < SIMILARITY:
                continue
            if conflict(statement, sentence.flat, wanted, got):
                contrary += 1
                continue
            found.append({"source_id": sentence.source_id, "page": sentence.page,
                          "snippet": sentence.flat[:300], "similarity": round(similarity, 1)})
    found.sort(key=lambda f: (-f["similarity"], f["source_id"], f["page"]))
    return found, contrary


def _verified(claim: dict[str, Any]) -> bool:
    return any((e.get("verification") or {}).get("verified") is True for e in claim.get("evidence") or ())


def assess(corpus: Corpus, claims: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Confidence scores for every claim and contradictions between claims."""
    contradictions: list[dict[str, Any]] = []
    contradicted: dict[str, list[str]] = {}
    claim_terms = {c["id"]: terms(str(c.get("statement", ""))) for c in claims}
    sources = {c["id"]: {str(e.get("source_id")) for e in c.get("evidence") or ()} for c in claims}
    for a, b in combinations(claims, 2):
        if sources[a["id"]] & sources[b["id"]] or a["statement"] == b["statement"]:
            continue  # a paper contrasting its own results is not a conflict between sources
        why = conflict(a["statement"], b["statement"], claim_terms[a["id"]], claim_terms[b["id"]])
        if why:
            contradictions.append({
                "id": f"X{len(contradictions) + 1}", "claim_ids": [a["id"], b["id"]], "status": "open",
                "description": f"{why}: \u201c{_clip(a['statement'])}\u201d vs "
                               f"\u201c{_clip(b['statement'])}\u201d",
            })
            contradicted.setdefault(a["id"], []).append(b["id"])
            contradicted.setdefault(b["id"], []).append(a["id"])
    scores = []
    for claim in claims:
        own = sources[claim["id"]]
        base = float(claim.get("confidence", 0.5))
        passages, contrary = support(corpus, claim, own)
        others = sorted({p["source_id"] for p in passages})
        if not _verified(claim):
            status, confidence = "unverified", base - 0.2
            rationale = "No evidence of this claim was verified against its source text."
        elif claim["id"] in contradicted:
            status, confidence = "contradicted", base - 0.2
            rationale = f"Conflicts with {', '.join(contradicted[claim['id']][:3])}."
        elif others:
            status, confidence = "corroborated", base + 0.1 + 0.05 * (len(others) - 1)
            best = passages[0]
            rationale = (f"Corroborated by {len(others)} other source(s), e.g. page {best['page']} of "
                         f"{corpus.title(best['source_id'])[:80]!r} (similarity {best['similarity']}).")
        else:
            status, confidence = "single-source", base - 0.05
            rationale = "Verified in its source, but no other source says the same."
        if contrary:
            rationale += f" {contrary} passage(s) elsewhere state the opposite."
        score: dict[str, Any] = {
            "claim_id": claim["id"], "confidence": round(min(0.95, max(0.05, confidence)), 3),
            "status": status, "rationale": rationale, "supporting_source_ids": sorted(own) + others,
        }
        if passages:
            score["extra"] = {"corroborating_passages": passages[:3]}
        scores.append(score)
    return scores, contradictions


def superseded(graph: dict[str, Any], start: int = 1) -> list[dict[str, Any]]:
    """Resolve the open contradictions (found by anyone) whose one side quotes an archived or superseded
    document and the other a current one: the current document's value stands, and the resolution says so."""
    sources = {s["id"]: s for s in graph.get("sources") or () if isinstance(s, dict) and "id" in s}
    found = vintages(sources)
    claims = {c["id"]: c for c in graph.get("claims") or () if isinstance(c, dict) and "id" in c}
    out: list[dict[str, Any]] = []
    for item in graph.get("contradictions") or ():
        ids = [i for i in item.get("claim_ids") or () if i in claims][:2]
        if item.get("status") != "open" or item.get("resolved") or len(ids) != 2:
            continue
        sides = [(i, str((claims[i].get("evidence") or [{}])[0].get("source_id", ""))) for i in ids]
        old = [(i, s) for i, s in sides if s in found and found[s].outdated]
        new = [(i, s) for i, s in sides if s in found and not found[s].outdated]
        if len(old) != 1 or len(new) != 1:
            continue
        (_, old_source), (_, new_source) = old[0], new[0]

        def named(source_id: str) -> str:
            date = found[source_id].date
            title = f"\u201c{sources[source_id].get('title', source_id)}\u201d"
            return f"{title} ({date.isoformat()})" if date else title

        out.append({"id": f"X{start + len(out)}", "claim_ids": ids, "status": "resolved",
                    "description": str(item.get("description") or "values differ")[:500],
                    "resolution": f"{named(new_source)} is the current document; {named(old_source)} is "
                                  + ("an older version it supersedes." if found[old_source].superseded_by
                                     else "an archived copy.")})
    return out


def _clip(text: str, limit: int = 120) -> str:
    text = normalize_ws(text)
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def _produce(context: AgentContext) -> dict[str, int]:
    graph = context.graph()
    corpus = load_corpus(context, graph)
    claims = [c for c in graph.get("claims") or () if isinstance(c, dict) and c.get("statement")]
    scores, contradictions = assess(corpus, claims)
    contradictions += superseded(graph, start=len(contradictions) + 1)
    corpus.close()
    if scores:
        context.write_items("confidence-scores", "confidence_scores", scores)
    context.write_items("contradictions", "contradictions", contradictions)
    counts = {s: sum(1 for x in scores if x["status"] == s)
              for s in ("corroborated", "single-source", "contradicted", "unverified")}
    return {"claims": len(claims), "contradictions": len(contradictions), **counts}


def run(context: AgentContext) -> None:
    resubmitted = "Re-submitted the assessments with the named problems fixed."
    if complete_retry(context, lambda: _produce(context), resubmitted):
        return
    stats = _produce(context)
    summary = (
        f"Assessed {stats['claims']} claim(s): {stats['corroborated']} corroborated by another source, "
        f"{stats['single-source']} single-source, {stats['contradicted']} contradicted, "
        f"{stats['unverified']} unverified; recorded {stats['contradictions']} contradiction(s)."
    )
    if not stats["claims"]:
        # confidence-scores.json is required: an empty assessment says there was nothing to check
        context.write_artifact("confidence-scores.json", {"confidence_scores": []})
    context.complete("completed", summary)
