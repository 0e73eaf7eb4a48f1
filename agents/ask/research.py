"""A question the run never asked: quote new passages from the session's own documents, as an agent would.

The offline ``cconductor ask`` searches every document the session ingested with the same
retrieval as the run (:mod:`agents.offline.retrieval`: BM25 fused with embeddings, over
sentences, list items and table rows). A chosen passage that a verified claim already quotes is
that claim; the others are written as the claims of a new agent, ``ask-researcher-<n>``,
through the ordinary protocol (``artifacts/<agent>/claims.json``, ``completion.json``, then the
lock). The orchestrator then validates and merges them like any agent's claims: schema, the
evidence check of every quote at its page, SHACL. Only what merged can be cited, so a passage
that does not verify never reaches an answer, and the graph keeps the new claims (a later
``ask`` or ``report`` sees them too).
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.offline.corpus import load_corpus
from agents.offline.researcher import claim_record, select
from agents.offline.text import normalize_ws
from agents.runtime import AgentContext
from orchestrator.answers.confidence import DROP_BELOW
from orchestrator.answers.graph import NodeIndex
from orchestrator.answers.relevance import focus_of
from orchestrator.commit.committed import read_committed
from orchestrator.graph.relation_words import Stemmed
from orchestrator.model.errors import SessionDamaged, UsageError
from orchestrator.model.layout import SessionPaths

__all__ = ["AGENT_PREFIX", "Researched", "research"]

AGENT_PREFIX = "ask-researcher"
MAX_PASSAGES = 3
RELATIVE = 0.8  # a further passage is quoted when it scores at least this share of the best one


def _next_agent(paths: SessionPaths, graph: dict[str, Any]) -> str:
    """``ask-researcher-<n>``, the first number no namespace, artifact folder or lock uses yet."""
    n = 1
    while (f"{AGENT_PREFIX}-{n}" in graph or paths.agent_artifacts(f"{AGENT_PREFIX}-{n}").exists()
           or paths.lock(f"{AGENT_PREFIX}-{n}").exists()):
        n += 1
    return f"{AGENT_PREFIX}-{n}"


@dataclass(frozen=True)
class Researched:
    """What the session's documents hold for a question: claims already in the graph that quote the
    chosen passages, and the agent whose lock offers the others as new claims (None when all were known)."""

    existing: tuple[str, ...] = ()
    agent: str | None = None
    local_ids: tuple[str, ...] = field(default=())

    @property
    def found(self) -> bool:
        return bool(self.existing or self.agent)


def _quoted(graph: dict[str, Any]) -> list[tuple[str, int | None, str, str]]:
    """(source id, page, normalised snippet, claim id) of every verified evidence item of the graph."""
    out = []
    for claim in graph.get("claims") or ():
        for evidence in claim.get("evidence") or ():
            if (evidence.get("verification") or {}).get("verified") is True:
                out.append((str(evidence.get("source_id")), (evidence.get("locator") or {}).get("page"),
                            _norm(str(evidence.get("snippet", ""))), str(claim["id"])))
    return out


def _norm(text: str) -> str:
    return normalize_ws(text).casefold().rstrip(" .")


def _claim_quoting(quoted: list[tuple[str, int | None, str, str]], source_id: str, page: int, text: str) -> str | None:
    """The claim whose verified snippet is this passage (or holds it, or lies within it), at its page."""
    wanted = _norm(text)
    for sid, at, snippet, claim_id in quoted:
        if sid == source_id and at in (page, None) and snippet and (wanted in snippet or snippet in wanted):
            return claim_id
    return None


def _with_other_names(question: str, topics: tuple[tuple[str, ...], ...]) -> str:
    """``question``, followed by the other names of each entity it names that it does not write itself."""
    asked = Stemmed(question)
    others = [name for names in topics for name in names if not asked.names([name])]
    return f"{question} ({'; '.join(dict.fromkeys(others))})" if others else question


def research(session_root: Path, question: str) -> Researched | None:
    """The best passages of the session's documents for ``question``: those a verified claim already quotes
    by id, the others written as a new agent's claims and its lock (nothing written when none is new).
    None when the session stores no document text to search (its graph is searched instead)."""
    paths = SessionPaths(session_root)
    try:  # never the view file as it lies on disk: a claim edited to verified there must not be quoted
        graph = read_committed(paths).graph
    except SessionDamaged:
        raise
    except UsageError:  # no graph yet
        return None
    stored = [s for s in graph.get("sources") or () if isinstance(s, dict) and s.get("content_sha256")
              and paths.source_text(str(s["content_sha256"])).is_file()]
    if not stored:
        return None
    agent = _next_agent(paths, graph)
    paths.tasks.mkdir(exist_ok=True)
    task_path = paths.tasks / f"{agent}-1.json"
    # the graph's entities the question names, by any of their names: the documents may use another one
    # ("What cools the LR-40 plant?" is answered by a passage on "the Lumen reactor", its other name)
    focus = focus_of(question, NodeIndex.build(graph))
    asked: dict[str, Any] = {"id": "", "question": _with_other_names(question, focus.topics), "keywords": [],
                             "facet": "ask"}
    task = {"agent": agent, "definition": "academic-researcher", "attempt": 1, "session": str(paths.root),
            "query": question, "backend": "offline", "phase": "ask", "sub_questions": [asked]}
    task_path.write_text(json.dumps(task, indent=2), encoding="utf-8")
    context = AgentContext(task_path)
    corpus = load_corpus(context, graph)
    try:
        picks, _ = select(corpus, asked, question, depth=1, limit=MAX_PASSAGES, used=set())
    finally:
        corpus.close()
    picks = [p for p in picks if p.score >= RELATIVE * picks[0].score]  # the answer, not its neighbours
    # only passages the answer check would keep (they name what the question names and say some of what it
    # asks): a passage that merely shares the question's words must not become a claim of the graph
    picks = [p for p in picks if focus.part(p.sentence.flat).confidence >= DROP_BELOW]
    quoted = _quoted(graph)
    found = [(p, _claim_quoting(quoted, p.sentence.source_id, p.sentence.page, p.sentence.flat)) for p in picks]
    existing = [claim_id for _, claim_id in found if claim_id]
    new = [p for p, claim_id in found if claim_id is None]
    if not new:
        task_path.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            context.folder.rmdir()
        return Researched(tuple(existing))
    claims = [claim_record(pick, None, number, "ask") for number, pick in enumerate(new, start=1)]
    for claim in claims:
        claim["tags"] = ["ask", *claim["tags"][1:]]
    context.write_items("claims", "claims", claims)
    context.complete("completed", f"Quoted {len(claims)} passage(s) of the session's documents for a question "
                                  f"asked later with `cconductor ask`: {question[:300]}")
    return Researched(tuple(existing), agent, tuple(c["id"] for c in claims))
