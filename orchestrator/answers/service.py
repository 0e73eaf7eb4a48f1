"""One question to one session: retrieve, compose (a backend), validate, keep in ``answers/``."""

from __future__ import annotations

from typing import Any

from orchestrator.answers.graph import NodeIndex
from orchestrator.answers.ground import ground
from orchestrator.answers.model import Composer
from orchestrator.answers.retrieve import Retriever
from orchestrator.answers.sparql import DEFAULT_ENGINE, Engine
from orchestrator.answers.store import save_answer
from orchestrator.answers.validate import Validator
from orchestrator.commit.committed import read_committed
from orchestrator.model.errors import UsageError
from orchestrator.model.layout import SessionPaths


def ask(paths: SessionPaths, question: str, composer: Composer, *, engine: Engine = DEFAULT_ENGINE,
        keep: bool = True) -> dict[str, Any]:
    """The grounded answer document; the backend is called only when the graph holds something relevant."""
    if not question.strip():
        raise UsageError('the question is empty: ask something, e.g. cconductor ask latest "What limits X?"')
    view = read_committed(paths, trig=True)  # only what the ledger vouches for is read, cited or scored
    index = NodeIndex.build(view.graph)
    retrieved = Retriever(paths, index, engine, view.trig).retrieve(question)
    draft = composer.compose(retrieved) if retrieved.found else None
    checked = Validator(index, question).check(draft.text) if draft else []
    document = ground(index.session or paths.root.name, retrieved, draft, checked, index)
    if keep:
        document["record"] = paths.rel(save_answer(paths, document))
    return document
