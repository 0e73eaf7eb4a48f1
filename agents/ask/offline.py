"""The offline answer: extractive, one verbatim sentence of a verified passage per cited claim.

It never writes a word the sources did not: each sentence is the passage sentence that shares
most terms with the question, so every citation it makes validates as an exact match. Without a
relevant claim it states the relationships, then the entities, that the graph links to the question.
What it may cite comes from :meth:`OfflineComposer.research`: the session's documents searched with
the run's own retrieval, new passages written as a new agent's claims, which the orchestrator
validates before any is cited.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from orchestrator.answers.data import ContextItem, Draft, Retrieved
from orchestrator.answers.sentences import split_sentences
from orchestrator.model.terms import content_terms

if TYPE_CHECKING:
    from agents.ask.research import Researched

MAX_SENTENCES = 3
MIN_WORDS = 4
#: A claim joins the answer when its sentence shares this share of the best sentence's question terms.
RELATIVE_OVERLAP = 0.75


def _best_sentence(item: ContextItem, wanted: set[str]) -> tuple[int, str] | None:
    """The passage sentence sharing most question terms (the shorter on a tie), with that count."""
    best: tuple[int, int, str] | None = None
    for passage in item.passages:
        for sentence in split_sentences(" ".join(passage.text.split())):
            if len(sentence.split()) < MIN_WORDS or "[@" in sentence:
                continue
            overlap = len(wanted & set(content_terms(sentence)))
            if best is None or (overlap, -len(sentence)) > (best[0], best[1]):
                best = (overlap, -len(sentence), sentence)
    return (best[0], best[2]) if best else None


class OfflineComposer:
    name = "offline"

    def __init__(self, session_root: Path | None = None) -> None:
        self.session_root = session_root

    def research(self, question: str) -> Researched | None:
        """The session's documents searched for ``question`` (:mod:`agents.ask.research`): claims that already
        quote the best passages, and the agent whose lock offers the new ones for the orchestrator to judge."""
        if self.session_root is None:
            return None
        from agents.ask.research import research

        return research(self.session_root, question)

    def compose(self, retrieved: Retrieved) -> Draft:
        wanted = set(content_terms(retrieved.question))
        lines: list[str] = []
        seen: set[str] = set()
        candidates = [(found, item) for item in retrieved.items if item.kind == "claim"
                      for found in [_best_sentence(item, wanted)] if found]
        top = max((found[0] for found, _ in candidates), default=0)
        for (overlap, sentence), item in candidates:
            if overlap >= RELATIVE_OVERLAP * top and sentence not in seen:
                seen.add(sentence)
                lines.append(f"{sentence.rstrip('.')} [@{item.id}].")
            if len(lines) >= MAX_SENTENCES:
                break
        if not lines:
            for item in [i for i in retrieved.items if i.kind == "relationship"][:MAX_SENTENCES]:
                lines.append(f"{item.text} [@{item.id}].")
        if not lines:
            for item in [i for i in retrieved.items if i.kind == "entity"][:MAX_SENTENCES]:
                lines.append(f"The session's verified claims discuss {item.text} [@{item.id}].")
        return Draft(" ".join(lines), self.name)
