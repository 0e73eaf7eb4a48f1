"""academic-researcher / web-researcher, offline: answer sub-questions with sentences quoted verbatim.

A claim is a sentence of a source, never a paraphrase: with no model to check a paraphrase, only
a quotation can be verified. Sentences are ranked by the BM25 score of their passage and by how
much of the sub-question's topic they mention; reference lists, captions and running headers are
never quoted (see ``corpus.informative``). Entities are the claims' key phrases and relationships
their co-occurrence in one claim (``concepts.py``). Sub-questions nothing answers become gaps.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rapidfuzz import fuzz

from agents.offline.concepts import concept_entities
from agents.offline.corpus import Corpus, load_corpus, plan_questions
from agents.offline.document_parts import PartPassage, document_passages, search_parts
from agents.offline.retrieval import retriever_for
from agents.offline.retry_repair import complete_retry
from agents.offline.sections import heading_above
from agents.offline.sentences import Sentence
from agents.offline.text import normalize_ws, sentence_spans
from agents.runtime import AgentContext

__all__ = ["Pick", "claim_record", "fix_claim", "run", "select"]

Items = list[dict[str, Any]]

MIN_SCORE = 0.3
SUPPORTS = 80.0  # token-set similarity a re-quoted sentence needs with the claim it replaces
MIN_TOPIC = 0.25  # share of the topic's (idf-weighted) terms a sentence must mention
@dataclass(frozen=True)
class Pick:
    """A chosen sentence and its score (0..1): passage BM25 relevance, topic and facet terms."""

    sentence: Sentence
    score: float
    section: str = ""  # the part of the document it is in (results, methods...): tagged on the claim
    heading: str = ""  # the heading it stands under, in a document without pages: its locator's section


def heading_of(corpus: Corpus, sentence: Sentence) -> str:
    """The heading a sentence of a document without pages (Markdown, HTML, text) stands under, else ''.

    Such a document is one page, so "p. 1" tells a reader nothing; "§ Installation" does. A PDF
    is cited by its pages, even a one-page one.
    """
    doc = corpus.documents.get(sentence.source_id)
    if doc is None or len(doc.pages) != 1 or str(doc.source.get("local_path", "")).lower().endswith(".pdf"):
        return ""
    return heading_above(doc.pages[0], sentence.start)


def locator(sentence: Sentence, heading: str) -> dict[str, Any]:
    return {"page": sentence.page, **({"section": heading} if heading else {})}


def _local(ref: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "-", ref.rpartition(":")[2]) or "Q"


_ASKED_RE = re.compile(r"^.*?\b(?:answers|address|report about):\s*", re.IGNORECASE | re.DOTALL)


def search_text(question: dict[str, Any], query: str) -> str:
    """What to search for: the sub-question itself; for the orchestrator's follow-up questions ("What
    does <title> report about: <query>", "No passage ... answers: <question>") the question they carry."""
    text = normalize_ws(str(question.get("question", ""))) or query
    return _ASKED_RE.sub("", text) or text


def select(corpus: Corpus, question: dict[str, Any], query: str, depth: int, limit: int,
           used: set[str]) -> tuple[list[Pick], int]:
    """The best quotable sentences for one sub-question, and how many candidate sentences were ranked.

    Ranking is :class:`agents.offline.retrieval.Retriever` (BM25 over sentence windows with query
    expansion and answer typing); the research query is context for a sub-question. Sentences
    already in ``used`` (quoted by another researcher) are skipped, and chosen ones are added.
    """
    text = search_text(question, query)
    only = {str(s) for s in question.get("source_ids") or ()} or None  # a question about named sources
    context = query if normalize_ws(query).casefold() != text.casefold() else ""
    answers = retriever_for(corpus).search(text, limit=limit * depth, context=context, only=only, exclude=used)
    picks = []
    for answer in answers[:limit]:
        used.add(answer.sentence.flat.casefold())
        picks.append(Pick(answer.sentence, max(0.0, answer.score), answer.section,
                          heading_of(corpus, answer.sentence)))
    return picks, len(answers)


def claim_record(pick: Pick, question: dict[str, Any] | None, number: int, local: str) -> dict[str, Any]:
    sentence = pick.sentence
    facet = str((question or {}).get("facet") or "finding")
    claim: dict[str, Any] = {
        "id": f"{local}-C{number}",
        "statement": sentence.statement,
        "confidence": round(0.4 + 0.45 * min(1.0, pick.score / 1.4), 3),  # keeps the retrieval order
        "priority": "high" if number == 1 else "medium" if number <= 3 else "low",
        "evidence": [
            {"source_id": sentence.source_id, "snippet": sentence.flat, "locator": locator(sentence, pick.heading)}
        ],
        "category": facet,
        "tags": [facet, "extractive", *([f"section:{pick.section}"] if pick.section else [])],
    }
    if question and question.get("id"):  # a question about one source answers a plan question
        claim["sub_question_id"] = str(question.get("answers") or question["id"])
    return claim


#: Share of a sub-question's terms a caption or table row must hold to become a claim of its own.
PART_SHARE = 0.6


def _part_claims(parts: list[PartPassage], question: dict[str, Any], query: str, corpus: Corpus, local: str,
                 used: set[str], sentences: Sequence[dict[str, Any]] = ()) -> list[dict[str, Any]]:
    """The table row or caption that answers the sub-question, as a claim naming its headers, table and page.

    A sentence of the text that already states a number for it ranks first: the row comes after it.
    """
    numeric = [float(c["confidence"]) for c in sentences if any(ch.isdigit() for ch in str(c["statement"]))]
    out = []
    for passage, score in search_parts(parts, search_text(question, query), limit=1):
        doc = corpus.documents.get(passage.source_id)
        labels = (doc.source.get("page_labels") if doc else None) or []
        label = labels[passage.page - 1] if 0 < passage.page <= len(labels) else None
        statement = passage.statement(label)
        if score < PART_SHARE or statement.casefold() in used:
            continue
        used.add(statement.casefold())
        facet = str(question.get("facet") or "finding")
        claim: dict[str, Any] = {
            "id": f"{local}-{'T' if passage.part == 'table' else 'F'}1", "statement": statement,
            "confidence": round(min(0.85, 0.4 + 0.35 * score, *(c - 0.01 for c in numeric[:1])), 3),
            "priority": "medium",
            "evidence": [passage.evidence()], "category": facet,
            "tags": [facet, "extractive", "table" if passage.kind == "table-row" else "caption"]}
        if question.get("id"):
            claim["sub_question_id"] = str(question.get("answers") or question["id"])
        out.append(claim)
    return out


def _gap(question: dict[str, Any], found: int, sources: int) -> dict[str, Any]:
    keywords = [str(k) for k in question.get("keywords") or ()]
    text = str(question.get("question", ""))
    queries = [" ".join(keywords[:3]), " ".join(keywords[3:6]), text]
    gap: dict[str, Any] = {
        "id": f"gap-{_local(str(question.get('id', 'Q')))}",
        "description": (f"No passage in the {sources} ingested source(s) answers: {text}" if not found else
                        f"Only {found} passage(s) in the {sources} ingested source(s) address: {text}"),
        # A question aimed at one paper that the paper does not answer is a finding about that paper
        # (it is off topic), not a hole in the research: it must not hold the run back as a high gap.
        "priority": "low" if question.get("source_ids") else "high" if not found else "medium",
        "suggested_queries": [q for q in dict.fromkeys(queries) if q.strip()],
    }
    if question.get("id"):
        gap["sub_question_id"] = str(question.get("answers") or question["id"])
    return gap


def _questions(context: AgentContext, graph: dict[str, Any]) -> list[dict[str, Any]]:
    """The assigned sub-questions; run by hand without any, the plan's or the query itself."""
    return context.task.sub_questions or plan_questions(graph) or [
        {"id": "", "question": context.task.query, "keywords": [], "facet": "overview"}]


def _produce(context: AgentContext) -> dict[str, int]:
    graph = context.graph()
    corpus = load_corpus(context, graph)
    options = context.task.options
    depth = max(1, int(options.get("depth", 1) or 1))
    limit = max(1, int(options.get("max_claims_per_question", 6) or 6))
    agent = context.task.agent
    # sentences other researchers already quote are not new findings (own ones: a re-run is the same)
    used = {normalize_ws(str(c.get("statement", ""))).casefold() for c in graph.get("claims") or ()
            if isinstance(c, dict) and not str(c.get("id", "")).startswith(f"{agent}:")}
    claims: list[dict[str, Any]] = []
    gaps: list[dict[str, Any]] = []
    log = []
    parts = document_passages(graph, context.stored_object_text)
    for question in _questions(context, graph):
        picks, read = select(corpus, question, context.task.query, depth, limit, used)
        local = _local(str(question.get("id") or "Q0"))
        found = [claim_record(p, question, n, local) for n, p in enumerate(picks, start=1)]
        claims += found + _part_claims(parts, question, context.task.query, corpus, local, used, found)
        if len(picks) < 2 and not question.get("source_ids"):  # a paper that is about something else is no gap
            gaps.append(_gap(question, len(picks), len(corpus.documents)))
        log.append({"sub_question_id": question.get("id"), "passages_read": read, "claims": len(picks)})
    entities, relationships = concept_entities(claims, corpus)
    corpus.close()
    context.write_items("claims", "claims", claims)
    for name, items in (("entities", entities), ("relationships", relationships), ("gaps", gaps)):
        if items:
            context.write_items(name, name, items)
    context.write_artifact("search-log.json", {"depth": depth, "source_count": len(corpus.documents),
                                               "searches": log})
    return {"claims": len(claims), "gaps": len(gaps), "questions": len(log), "sources": len(corpus.documents),
            "sources_cited": len({c["evidence"][0]["source_id"] for c in claims})}


def locate(corpus: Corpus, source_id: str, text: str) -> Sentence | None:
    """The sentence of ``source_id`` that holds the longest sentence-piece of ``text``, in original case.

    Used on retries: a passage quoted in a retry message is lower-cased, may be clipped and may
    start inside the previous sentence, so it is trusted only when all of it is in the stored text,
    and then the page's own sentence is quoted rather than the message's copy.
    """
    doc = corpus.documents.get(source_id)
    wanted = normalize_ws(text.rstrip("\u2026")).casefold()
    split = {wanted, *re.split(r"(?<=[.!?])\s+", wanted)}
    split |= {" ".join(p.split()[k:]) for p in split for k in (1, 2, 3)}  # after a heading ("Abstract While ...")
    pieces = sorted(split, key=lambda p: (-len(p), p))
    pieces = [p.rstrip(".") for p in pieces if len(p) >= 20]
    if doc is None or not pieces:
        return None
    for number, page in enumerate(doc.pages, start=1):
        if wanted not in normalize_ws(page).casefold():
            continue
        spans = [(a, b, normalize_ws(page[a:b]).casefold()) for a, b in sentence_spans(page)]
        for piece in pieces:
            for a, b, flat in spans:
                if piece in flat or (flat in piece and len(flat) >= 0.6 * len(piece)):
                    return Sentence(source_id, number, a, b, page[a:b])
    return None


def fix_claim(corpus: Corpus, claim: dict[str, Any], messages: list[str]) -> dict[str, Any] | None:
    """Re-quote a rejected claim from its source, or None to drop it.

    Candidates are the claim's own snippet and any passage a retry message quotes as the closest
    match; one is used only when it is really in the source, and then the page's own sentence is
    quoted with its page, and only if it still says what the claim says. Otherwise, or if nothing
    would change, the claim is dropped rather than re-sent.
    """
    quoted = re.findall(r'closest passage in that source is "(.*?)" \(match score', " ".join(messages))
    statement = normalize_ws(str(claim.get("statement", "")))
    for evidence in claim.get("evidence") or ():
        old = normalize_ws(str(evidence.get("snippet", "")))
        page = (evidence.get("locator") or {}).get("page")
        for candidate in [old, *quoted]:
            found = locate(corpus, str(evidence.get("source_id", "")), candidate)
            if found is None or (found.flat == old and found.page == page):
                continue
            said = statement.rsplit("\u2026 ", 1)[-1]  # a list item's or row's own words, after its context
            if fuzz.token_set_ratio(said.casefold(), found.flat.casefold()) < SUPPORTS or \
                    len(found.flat) < len(said) / 2:
                continue  # in the source, but it does not say what the claim says
            if statement == old:
                claim["statement"] = found.flat
            claim["evidence"] = [{**evidence, "snippet": found.flat,
                                  "locator": locator(found, heading_of(corpus, found))}]
            return claim
    return None


def run(context: AgentContext) -> None:
    state: dict[str, Corpus] = {}

    def fixer(claim: dict[str, Any], messages: list[str]) -> dict[str, Any] | None:
        corpus = state.get("corpus") or state.setdefault("corpus", load_corpus(context))
        return fix_claim(corpus, claim, messages)

    resubmitted = "Re-submitted the claims; rejected ones corrected or dropped."
    if complete_retry(context, lambda: _produce(context), resubmitted, {"claims": fixer}):
        return
    stats = _produce(context)
    summary = (
        f"Answered {stats['questions']} sub-question(s) with {stats['claims']} claim(s) quoted verbatim from "
        f"{stats['sources_cited']} of {stats['sources']} source(s); {stats['gaps']} sub-question(s) left as "
        "gaps."
    )
    status = "completed" if stats["claims"] else "partial"
    context.complete(status, summary, None if stats["sources"] else "No graph source has a stored text.")
