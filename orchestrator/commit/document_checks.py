"""The document checks of one submission: stored images and cells, captions on their page, table and figure evidence.

Kept apart from commit/checks.py, which calls :func:`stored_problems` with the source-text
checks and :func:`document_problems` after the evidence binding; both do nothing for a submission
that has no figures, tables, captions or evidence citing them.
"""

from __future__ import annotations

from typing import Any

from orchestrator.contract.artifacts import ArtifactSet
from orchestrator.contract.sourcetexts import TextStore
from orchestrator.contract.stored_objects import TableData, parse_table, stored_object_problems
from orchestrator.graph.document_evidence import Lookups, bind_document_evidence, caption_problems, names_document_part
from orchestrator.graph.evidence_budget import Budget
from orchestrator.graph.state import GraphState
from orchestrator.model.problems import Problem
from orchestrator.model.records import Contribution

__all__ = ["document_problems", "stored_problems"]


def stored_problems(artifact_set: ArtifactSet, texts: TextStore) -> list[Problem]:
    return stored_object_problems(artifact_set, texts)


def _table(texts: TextStore, sha: str) -> TableData | None:
    text, _ = texts.stored(sha, ".json")
    try:
        return parse_table(text) if text is not None else None
    except ValueError:
        return None


def _captions(state: GraphState, owner: str) -> list[dict[str, Any]]:
    record = state.records.get(owner)
    return list(record["contribution"]["items"].get("captions") or ()) if record else []


def document_problems(contribution: Contribution, state: GraphState, texts: TextStore,
                      budget: Budget | None = None) -> list[Problem]:
    """Captions must stand on their page; evidence naming a table or figure gets its verification.

    ``budget``: the submission's, shared with the snippet checks (graph/evidence_budget.py).
    """
    items = contribution["items"]
    cites = any(names_document_part(e) for c in items.get("claims") or () for e in c.get("evidence", []))
    if not items.get("captions") and not cites:
        return []
    lookups = Lookups(contribution, state.item, texts.text, lambda sha: _table(texts, sha),
                      lambda owner: _captions(state, owner))
    budget = budget or Budget()
    problems = caption_problems(contribution, lookups, budget)
    bind_document_evidence(contribution, lookups, budget)
    return problems
