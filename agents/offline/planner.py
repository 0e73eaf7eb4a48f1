"""research-planner, offline: the query itself, then the parts it asks about.

Without a model the plan cannot understand the question, but it can take it apart: separate
clauses ("What methods ... and what are their limitations?"), the two sides of a comparison, and
the aspects the query names (methods, results, limitations), each asked about the query's topic.
A simple question stays one question; no sub-question asks what the query did not. Deterministic:
the same query always gives the same plan.
"""

from __future__ import annotations

import json
import re
from typing import Any

from agents.offline.keyphrases import key_phrases
from agents.offline.retry_repair import apply_retry
from agents.offline.text import normalize_ws, wordlist
from agents.runtime import AgentContext
from orchestrator.model.terms import SEARCH_STOPWORDS, search_words

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

#: Aspects a question may ask for: facet -> (words that ask for it, how the sub-question asks, priority).
_ASPECTS: dict[str, tuple[re.Pattern[str], str, str]] = {
    "methods": (re.compile(r"(?i)\b(?:methods?|methodolog\w*|study designs?|approach(?:es)?|how (?:was|were|is|are)"
                           r" \w+ (?:measured|studied|assessed|built|constructed|collected))\b"),
                "Which methods were used to study {topic}?", "medium"),
    "evidence": (re.compile(r"(?i)\b(?:results?|findings?|outcomes?|evidence)\b"),
                 "What were the main results on {topic}?", "high"),
    "limitations": (re.compile(r"(?i)\b(?:limitations?|weakness(?:es)?|shortcomings?|drawbacks?|caveats?|"
                               r"open problems?|risks?)\b"),
                    "What limitations were reported for {topic}?", "medium"),
}
_SPLIT = re.compile(r"(?i)\s*(?:[,;]\s*|\s)(?:and|but|or|as well as)\s+(?=(?:how|what|why|which|when|where|who|whether|"
                    r"do|does|did|is|are|was|were)\b)|[;?]\s+")
_PAIR = re.compile(r"(?i)\b(?:compare|comparing|between)\s+(.+?)\s+(?:and|with|to|versus|vs\.?)\s+(.+?)[?.!]*$|"
                   r"^(?:.*?\b(?:is|are|does|do)\s+)?(.+?)\s+(?:versus|vs\.?|better than|worse than)\s+(.+?)[?.!]*$")


def _words(text: str) -> list[str]:
    return [w for w in (w.strip("?!.,;:\"'()[]") for w in normalize_ws(text).split()) if w]


def _content(word: str) -> bool:
    low = word.casefold()
    return bool(search_words(low)) and low not in SEARCH_STOPWORDS and low not in _FILLER and len(low) > 1


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


def _as_question(text: str) -> str:
    text = normalize_ws(text).rstrip(" ,;:.!?")
    return (text[:1].upper() + text[1:] + "?") if text else ""


_EDGE = frozenset(wordlist("and or of the on in for about from with main key major their its these those this"))


def _bare_topic(query: str) -> str:
    """The query's topic without the aspect words ("main results and limitations of X" -> "X")."""
    topic = topic_of(query)
    for pattern, _, _ in _ASPECTS.values():
        topic = pattern.sub(" ", topic)
    words = normalize_ws(topic).split()
    while words and words[0].casefold() in _EDGE:
        words.pop(0)
    while words and words[-1].casefold() in _EDGE:
        words.pop()
    return " ".join(words) or "the question"


_PRONOUN = re.compile(r"(?i)\b(it|they|them|its|their)\b")


def _resolve_pronouns(clause: str, topic: str) -> str:
    """A later clause stands on its own: "how many papers does it contain" names what "it" is."""
    if not topic or any(w.casefold() in topic.casefold().split() for w in _words(clause) if _content(w)):
        return clause

    def name(match: re.Match[str]) -> str:
        return f"{topic}'s" if match.group(1).casefold() in ("its", "their") else topic

    return _PRONOUN.sub(name, clause, count=1)


def decompose(query: str) -> list[tuple[str, str]]:
    """The parts a query asks, as (question, facet): its clauses, the two sides of a comparison and
    the aspects (methods, results, limitations) it names; never a question it does not ask."""
    query = normalize_ws(query)
    parts: list[tuple[str, str]] = []
    clauses = [c for c in _SPLIT.split(query) if c and len(_words(c)) >= 2]
    if len(clauses) > 1:
        subject = _bare_topic(clauses[0])
        if _PRONOUN.search(clauses[0]) or _as_noun_phrase(subject) != subject or len(subject.split()) > 5:
            subject = ""  # no noun phrase to stand for the pronoun ("is it safe", "what do these papers use")
        parts += [(_as_question(c if n == 0 else _resolve_pronouns(c, subject)), "part") for n, c in enumerate(clauses)]
    pair = _PAIR.search(query)
    if pair:
        sides = [g for g in pair.groups() if g][:2]
        if len(sides) == 2 and all(any(_content(w) for w in _words(x)) for x in sides):
            parts += [(f"What is reported about {normalize_ws(x)}?", "comparisons") for x in sides]
    topic = _as_noun_phrase(_bare_topic(query))
    named = [facet for facet, (pattern, _, _) in _ASPECTS.items() if pattern.search(query)]
    if len(named) >= 2 and len(clauses) <= 1:  # "results and limitations of X": one question per aspect
        parts += [(_ASPECTS[facet][1].format(topic=topic), facet) for facet in named]
    seen = {query.casefold().rstrip("?")}
    out = []
    for question, facet in parts:
        key = question.casefold().rstrip("?")
        if key not in seen:
            seen.add(key)
            out.append((question, facet))
    return out[:4]


def make_plan(query: str, depth: int = 1) -> dict[str, Any]:
    """The plan document (schemas/plan.schema.json) for ``query``: the question, then its parts."""
    query = normalize_ws(query)
    keywords = keywords_of(query)
    questions: list[dict[str, Any]] = [
        {"id": "Q1", "question": query if query.endswith("?") else query + "?", "priority": "high",
         "keywords": keywords, "facet": "overview"}
    ]
    for number, (question, facet) in enumerate(decompose(query), start=2):
        priority = _ASPECTS[facet][2] if facet in _ASPECTS else "high"
        questions.append({"id": f"Q{number}", "question": question, "priority": priority,
                          "keywords": keywords_of(question), "facet": facet})
    parts = f"{len(questions) - 1} part(s) it asks about" if len(questions) > 1 else "no separate parts"
    strategy = (
        f"Answer '{query}' from the ingested documents: the question as asked (Q1) and {parts}. Each "
        "sub-question is searched with BM25 over sentence windows (query expanded with the documents' "
        "abbreviations and related terms); claims quote the best sentences verbatim with page numbers, the "
        "fact-checker looks for corroboration in other sources, and sub-questions without evidence become "
        "gaps for the next iteration."
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
        f"Planned {count} sub-question(s): the query itself and the parts it asks about.",
        notes,
    )
