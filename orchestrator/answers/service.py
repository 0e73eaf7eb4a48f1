"""One question to one session: retrieve, compose (a backend), validate, keep in ``answers/``."""

from __future__ import annotations

from typing import Any

from orchestrator.answers.data import Composer
from orchestrator.answers.graph import NodeIndex
from orchestrator.answers.ground import ground
from orchestrator.answers.retrieve import GraphRetriever
from orchestrator.answers.sparql import DEFAULT_ENGINE, Engine
from orchestrator.answers.store import save_answer
from orchestrator.answers.validate import Validator
from orchestrator.commit.committed import read_committed
from orchestrator.contract.stored_objects import object_reader
from orchestrator.model.errors import UsageError
from orchestrator.model.layout import SessionPaths


def _researched(paths: SessionPaths, question: str, composer: Composer) -> list[str] | None:
    """The seam with a backend that searches the session's documents itself (the offline one).

    Its ``research(question)`` returns None (it does not: the graph is searched instead) or what it
    found: ids of verified claims that quote the passages it chose (``existing``) and, for passages no
    claim quotes yet, the agent whose artifacts and lock it wrote (``agent``). That agent is judged and
    merged here like any other (schema, evidence check at the cited page, SHACL); only what merged is
    offered, in the backend's order, so nothing unverified can be cited.
    """
    research = getattr(composer, "research", None)
    found = research(question) if callable(research) else None
    if found is None:
        return None
    ids = list(found.existing)
    if found.agent:
        from orchestrator.commit.processor import Processor
        from orchestrator.commit.views import flush_views

        processor = Processor(paths)
        try:
            merged = any(o.status == "merged" for o in processor.process_pending(only=[found.agent]))
            flush_views(processor)
        finally:
            processor.close()
        if merged:
            ids += [f"{found.agent}:{local}" for local in found.local_ids]
    return list(dict.fromkeys(ids))


def ask(paths: SessionPaths, question: str, composer: Composer, *, engine: Engine = DEFAULT_ENGINE,
        keep: bool = True) -> dict[str, Any]:
    """The grounded answer document; the backend is called only when the graph holds something relevant."""
    if not question.strip():
        raise UsageError('the question is empty: ask something, e.g. cconductor ask latest "What limits X?"')
    researched = _researched(paths, question, composer)  # may merge a new agent: read the view after it
    view = read_committed(paths, trig=True)  # only what the ledger vouches for is read, cited or scored
    index = NodeIndex.build(view.graph, object_reader(paths))
    retriever = GraphRetriever(paths, index, engine, view.trig)
    retrieved = retriever.retrieve(question) if researched is None else retriever.claims(question, researched)
    draft = composer.compose(retrieved) if retrieved.found else None
    checked = Validator(index, question).check(draft.text) if draft else []
    document = ground(index.session or paths.root.name, retrieved, draft, checked, index)
    if keep:
        document["record"] = paths.rel(save_answer(paths, document))
    return document
