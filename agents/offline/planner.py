"""research-planner, offline: split the query into the question itself plus facet sub-questions.

Without a model the plan cannot understand the question, but it can aim the search: every
sub-question repeats the query's topic (so retrieval stays on topic) and adds the vocabulary its
facet is written in (methods sections say "we used", limitations say "however"). Deterministic:
the same query always gives the same plan.
"""

from __future__ import annotations

import json
import re
from typing import Any

from agents.offline.corpus import apply_retry
from agents.offline.text import STOPWORDS, key_phrases, normalize_ws, tokens, wordlist
from agents.runtime import AgentContext

__all__ = ["make_plan", "run"]

#: Verbs and words that carry no topic ("how does X affect Y": the topic is X and Y).
_LINKS = frozenset(wordlist(
    "affect affects affected impact impacts influence influences relate relates interact interacts "
    "change changes shape shapes"
))
_FILLER = _LINKS | frozenset(wordlist(
    "better worse best worst good bad compare compared comparison describe explain know known regarding "
    "role terms tell way ways work works"
))
_VERSUS = re.compile(r"(?i)\b(?:better|worse|more effective|less effective|faster|slower)\s+than\b")
_CLAUSE = re.compile(
    r"(?i)[,;]?\s+(?:and|but|or)\s+(?=(?:how|what|why|which|when|where|who|whether)\b)|[;:?]\s+"
)
_COMPARATIVE = re.compile(r"(?i)\b(?:vs\.?|versus|compared?|comparison|than|differ(?:s|ence|ent)?|between)\b")

#: facet -> (question template, priority, facet vocabulary)
_FACETS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "definitions": ("How are the key concepts of {topic} defined, and what mechanisms explain them?",
                    "medium", ("defined", "definition", "mechanism", "concept")),
    "evidence": ("What results and evidence have been reported on {topic}?", "high",
                 ("results", "showed", "significant", "found")),
    "methods": ("Which methods, data and study designs have been used to study {topic}?", "medium",
                ("method", "data", "analysis", "approach")),
    "limitations": ("What limitations, risks or open problems have been reported for {topic}?", "medium",
                    ("limitation", "challenge", "risk", "barrier")),
    "comparisons": ("How do findings on {topic} compare across approaches, settings or studies?", "low",
                    ("compared", "than", "outperform", "difference")),
}


def _words(text: str) -> list[str]:
    return [w for w in (w.strip("?!.,;:\"'()[]") for w in normalize_ws(text).split()) if w]


def _content(word: str) -> bool:
    low = word.casefold()
    return bool(tokens(low)) and low not in STOPWORDS and low not in _FILLER and len(low) > 1


def topic_of(query: str) -> str:
    """The query's topic as written: its first clause's first to last content word, linking verbs
    read as 'and' ("How does X affect Y, and why?" -> "X and Y")."""
    clauses = _CLAUSE.split(_VERSUS.sub("versus", query))
    words = next((w for w in map(_words, clauses) if any(_content(x) for x in w)), _words(query))
    content = [i for i, w in enumerate(words) if _content(w)]
    if not content:
        return normalize_ws(query).rstrip("?!.") or "the question"
    out: list[str] = []
    for word in words[content[0] : content[-1] + 1]:
        low = word.casefold()
        if low in _LINKS:
            word = "and"
        elif low in _FILLER:
            continue
        if not (word == "and" and out and out[-1] == "and"):
            out.append(word)
    if len(out) > 12:  # a long question: its key phrases say more than a clipped span
        return " and ".join(key_phrases(query, top_n=3, max_words=3)) or " ".join(out[:12])
    return " ".join(out)


def keywords_of(query: str, limit: int = 6) -> list[str]:
    """Key phrases of the query, then its remaining content words, de-duplicated."""
    out: list[str] = []
    for phrase in key_phrases(query, top_n=limit, max_words=3):
        for part in re.split(rf"\b(?:{'|'.join(sorted(_FILLER))})\b", phrase):
            part = normalize_ws(part)
            covered = {w for p in out for w in p.split()}
            if part and part not in out and not set(part.split()) <= covered:
                out.append(part)
    covered = {w for p in out for w in p.split()}
    for word in _words(query):
        low = word.casefold()
        if _content(low) and low not in covered and low not in out:
            out.append(low)
    return out[: limit + 2]


#: Words that show a topic is a clause ("cconductor checks that a claim ...") rather than a noun phrase.
_CLAUSE_WORDS = frozenset(wordlist("that is are was were does do did can could should will would to which"))


def _as_noun_phrase(topic: str) -> str:
    """Quote a clause-like topic so the facet templates stay grammatical around it."""
    return f"“{topic}”" if any(w.casefold() in _CLAUSE_WORDS for w in _words(topic)) else topic


def make_plan(query: str, depth: int = 1) -> dict[str, Any]:
    """The plan document (schemas/plan.schema.json) for ``query``."""
    query = normalize_ws(query)
    topic = topic_of(query)
    keywords = keywords_of(query)
    facets = ["definitions", "evidence", "methods", "limitations"]
    if _COMPARATIVE.search(query) or depth > 1:
        facets.append("comparisons")
    questions: list[dict[str, Any]] = [
        {"id": "Q1", "question": query if query.endswith("?") else query + "?", "priority": "high",
         "keywords": keywords, "facet": "overview"}
    ]
    for number, facet in enumerate(facets, start=2):
        template, priority, vocabulary = _FACETS[facet]
        questions.append({
            "id": f"Q{number}",
            "question": template.format(topic=_as_noun_phrase(topic)),
            "priority": priority,
            "keywords": [*keywords[:4], *vocabulary],
            "facet": facet,
        })
    strategy = (
        f"Answer '{query}' from the ingested documents: first the question as asked (Q1), then "
        f"{len(facets)} facets of '{topic}' ({', '.join(facets)}). Each sub-question is searched with "
        "BM25 over sentence passages; claims quote the best sentences verbatim with page numbers, the "
        "fact-checker looks for corroboration in other sources, and sub-questions without evidence "
        "become gaps for the next iteration."
    )
    return {"query": query, "sub_questions": questions, "strategy": strategy}


def _produce(context: AgentContext) -> dict[str, Any]:
    plan = make_plan(context.task.query, int(context.task.options.get("depth", 1) or 1))
    context.write_artifact("plan.json", plan)
    return plan


def run(context: AgentContext) -> None:
    notes = None
    if context.task.retry_instructions:
        notes = apply_retry(context, lambda: _produce(context), {})
        plan = json.loads((context.folder / "plan.json").read_text(encoding="utf-8"))
        count = len(plan.get("sub_questions", []))
    else:
        count = len(_produce(context)["sub_questions"])
    context.complete(
        "completed",
        f"Planned {count} sub-questions for the query: the question itself and facets of its topic.",
        notes,
    )
