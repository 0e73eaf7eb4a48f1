"""A session at a glance: header, locks, graph counts (cheap); quality, contradictions, growth (the summary).

The overview is what the page draws first, so it reads the session and the graph's own stats
and nothing that needs a pass over every item; the summary (live quality score, contradictions
with both sides, the growth curve) comes in a second request, cached per graph.
"""


from __future__ import annotations

import contextlib
import threading
from datetime import UTC, datetime
from typing import Any

from orchestrator.contradictions.summary import summary as contradiction
from orchestrator.graph.citations import evidence_section
from orchestrator.graph.quality import plan_sub_questions, score_graph
from orchestrator.graph.quality_gate import gate
from orchestrator.model.clock import commit_time
from orchestrator.model.errors import CconductorError
from orchestrator.model.layout import SessionPaths
from orchestrator.viewer import state
from orchestrator.viewer.explorer import growth
from orchestrator.viewer.files import remember, signature
from orchestrator.viewer.lookup import GraphIndex, graph_index
from orchestrator.viewer.trusted import shown

_quality_cache: dict[SessionPaths, tuple[object, dict[str, Any]]] = {}
_lock = threading.Lock()


def quality(paths: SessionPaths, index: GraphIndex) -> dict[str, Any] | None:
    """``quality.json`` when it describes the graph as it is; else the score computed from the graph now.

    A run writes ``quality.json`` after each research round; while agents keep merging (or in a
    ``watch`` session, which has none) the score shown is computed from the committed graph, with
    the mission's success criteria when the session has a mission.
    """
    graph = index.graph
    # quality.json scored the view as it was: a view the ledger no longer vouches for as it is (edited, or a
    # stored text deleted or altered since) is scored again from the committed state shown
    recorded = state.recorded_quality(paths) if index.warning is None else None
    if not graph.get("claims") and not graph.get("sources"):
        return recorded
    committed = commit_time(graph, state.ledger(paths))
    if recorded and committed and _stamp(recorded.get("computed_at")) >= committed:  # scored at this commit or later
        return {**recorded, "origin": "quality.json"}
    key = (id(graph), signature(paths.root / "quality.json"))
    with _lock:
        cached = _quality_cache.get(paths)
    if cached is not None and cached[0] == key:
        return cached[1]
    # as `run` scores it (orchestrator/run/outputs.py evaluate_quality), without writing quality.json
    report = score_graph(graph, plan_sub_questions(graph), now=commit_time(graph, state.ledger(paths)))
    criteria = state.criteria_of(paths)
    question = str(state.session(paths).get("query") or "")
    document = {**report.to_json(gate(report, graph, criteria, question=question) if criteria else None),
                "origin": "computed from the committed graph" + _why_computed(paths, recorded, index.warning)}
    with _lock:
        remember(_quality_cache, paths, (key, document))
    return document


def _why_computed(paths: SessionPaths, recorded: dict[str, Any] | None, warning: str | None) -> str:
    if recorded is not None:
        return ""
    if warning is not None:
        return " (quality.json scored a view the ledger does not vouch for as it is now)"
    if signature(paths.root / "quality.json") is not None:
        return " (quality.json cannot be read: see the note on damaged files)"
    return " (no quality.json yet)"


def _stamp(value: object) -> datetime:
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return datetime.min.replace(tzinfo=UTC)


def _side(index: GraphIndex, side: dict[str, Any]) -> dict[str, Any]:
    found = index.item(str(side.get("claim_id")))
    claim = found[1] if found and found[0] == "claims" else {}
    evidence = next((e for e in claim.get("evidence") or () if isinstance(e, dict)), {})
    source = index.source(str(evidence.get("source_id"))) or {}
    return {**side, "statement": claim.get("statement"), "snippet": evidence.get("snippet"),
            "page": (evidence.get("verification") or {}).get("page") or (evidence.get("locator") or {}).get("page"),
            "section": evidence_section(evidence, source)}  # shown instead of the page of a document without pages


def contradictions(index: GraphIndex) -> list[dict[str, Any]]:
    """Every contradiction with both sides' statements and quoted snippets, open ones first."""
    items = [contradiction(c) for c in index.graph.get("contradictions") or () if isinstance(c, dict)]
    for item in items:
        item["sides"] = [_side(index, s) for s in item["sides"]]
    return sorted(items, key=lambda s: (not s["counted"], s["status"] == "resolved", str(s["id"])))


def skipped_inputs(graph: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"path": s.get("path"), "reason": s.get("reason")}
            for value in graph.values() if isinstance(value, dict) and "documents" in value
            and isinstance(value.get("skipped"), list) for s in value["skipped"] if isinstance(s, dict)]


def overview(paths: SessionPaths) -> dict[str, Any]:
    data = state.session(paths)
    try:
        current = shown(paths)
    except CconductorError:  # the header needs no graph: the note in "damaged" says what is wrong
        graph, warning = {}, state.graph_warning(paths)
    else:
        graph, warning = current.graph, current.warning
    locks = state.lock_states(paths)
    recorded = state.recorded_quality(paths)
    return {
        "id": paths.root.name,
        "query": data.get("query"),
        "mission": data.get("mission"),
        "status": data.get("status"),
        "status_reason": data.get("status_reason"),
        "iteration": data.get("iteration"),
        "created_at": data.get("created_at"),
        "updated_at": data.get("updated_at"),
        "cost_usd": data.get("cost_usd"),
        "locks_pending": sorted(a for a, s in locks.items() if s in ("pending", "claimed")),
        "locks_errored": sorted(a for a, s in locks.items() if s == "errored"),
        "commit_seq": graph.get("commit_seq"),
        "generated_at": graph.get("generated_at"),
        "stats": graph.get("stats") or {},
        "recorded_score": (recorded or {}).get("score"),
        "has_report": (paths.root / "mission-report.md").is_file(),
        "graph_warning": warning,
        "damaged": state.damaged(paths),
    }


_summaries: dict[SessionPaths, tuple[object, Any, dict[str, Any]]] = {}
_summary_locks: dict[SessionPaths, threading.Lock] = {}


def summary_of(paths: SessionPaths) -> dict[str, Any]:
    """The summary, computed once per change of the graph, session.json or quality.json.

    A 50 MB graph takes about half a second of CPU to summarise: requests that arrive together
    (or while :func:`warm_up` works) wait for one computation instead of each doing it.
    """
    with _lock:
        session_lock = _summary_locks.setdefault(paths, threading.Lock())
    with session_lock:
        index = graph_index(paths)
        inputs = (signature(paths.session_json), signature(paths.root / "quality.json"))
        with _lock:
            cached = _summaries.get(paths)
        if cached is not None and cached[0] is index.graph and cached[1] == inputs:
            return cached[2]
        document = {
            "quality": quality(paths, index),
            "contradictions": contradictions(index),
            "skipped_inputs": skipped_inputs(index.graph),
            "growth": growth(index, state.session(paths).get("agents") or {}),
        }
        with _lock:
            remember(_summaries, paths, (index.graph, inputs, document))  # the graph kept: `is` stays sound
        return document


def warm_up(paths: SessionPaths) -> None:
    """Read and summarise a session before its page asks (``cconductor view SESSION`` starts this as it
    announces the address, while the browser starts); a session it cannot read is left to the page to report."""
    with contextlib.suppress(CconductorError):
        overview(paths)
        summary_of(paths)
