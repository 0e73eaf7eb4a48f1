"""research-planner, offline: split the query into the question itself plus facet sub-questions.

Without a model the plan cannot understand the question, but it can aim the search: every
sub-question repeats the query's topic (so retrieval stays on topic) and adds the vocabulary its
facet is written in (methods sections say "we used", limitations say "however"). Deterministic:
the same query always gives the same plan.
"""

from __future__ import annotations

import re
from typing import Any

from agents.offline.corpus import apply_retry
from agents.offline.text import STOPWORDS, key_phrases, normalize_ws, tokens
from agents.runtime import AgentContext

__all__ = ["make_plan", "run"]

#: Question words and verbs that carry no topic ("how does X affect Y": the topic is X and Y).
_FILLER = frozenset(
    "affect affects affected compare compared comparison describe difference differences explain "
    "impact impacts influence influences know known regarding role relate related relationship tell "
    "work works".split()
)
_COMPARATIVE = re.compile(r"(?i)\b(?:vs\.?|versus|compare[ds]?|comparison|than|differ(?:s|ence|ent)?|between|or)\b")

#: facet -> (question template, priority, facet vocabulary)
_FACETS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "definitions": ("What is {topic}, and what mechanisms or principles explain it?", "medium",
                    ("defined", "definition", "mechanism", "concept")),
    "evidence": ("What results and evidence have been reported about {topic}?", "high",
                 ("results", "showed", "significant", "found")),
    "methods": ("Which methods, data and study designs are used to study {topic}?", "medium",
                ("method", "data", "analysis", "approach")),
    "limitations": ("What limitations, risks or open problems are reported for {topic}?", "medium",
                    ("limitation", "challenge", "risk", "barrier")),
    "comparisons": ("How does {topic} compare with alternative approaches or settings?", "low",
                    ("compared", "than", "outperform", "difference")),
}


def _content(word: str) -> bool:
    low = word.casefold()
    return bool(tokens(low)) and low not in STOPWORDS and low not in _FILLER and len(low) > 1


def topic_of(query: str) -> str:
    """The query's topic as written: from its first to its last content word, filler dropped."""
    words = [w.strip("?!.,;:\"'()") for w in normalize_ws(query).split()]
    words = [w for w in words if w]
    content = [i for i, w in enumerate(words) if _content(w)]
    if not content:
        return normalize_ws(query).rstrip("?!.") or "the question"
    span = words[content[0] : content[-1] + 1]
    # drop filler verbs inside the span ("heat stress affect wheat" -> "heat stress ... wheat")
    trimmed = [w for w in span if w.casefold() not in _FILLER]
    if len(trimmed) > 10:
        phrases = key_phrases(query, top_n=3, max_words=3)
        return " and ".join(phrases) if phrases else " ".join(trimmed[:10])
    return " ".join(trimmed)


def keywords_of(query: str, limit: int = 6) -> list[str]:
    """Key phrases of the query, then its remaining content words, de-duplicated."""
    out: list[str] = []
    for phrase in key_phrases(query, top_n=limit, max_words=2):
        words = [w for w in phrase.split() if w not in _FILLER]
        if words and " ".join(words) not in out:
            out.append(" ".join(words))
    covered = {w for p in out for w in p.split()}
    for word in tokens(query):
        if _content(word) and word not in covered and word not in out:
            out.append(word)
    return out[: limit + 2]


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
            "question": template.format(topic=topic),
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
        plan = context.folder / "plan.json"
        count = plan.read_text(encoding="utf-8").count('"question":') if plan.exists() else 0
    else:
        count = len(_produce(context)["sub_questions"])
    context.complete(
        "completed",
        f"Planned {count} sub-questions for the query: the question itself and facets of its topic.",
        notes,
    )
