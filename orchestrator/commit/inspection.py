"""Read-only looks at a session: status summary, full validation, export."""

from __future__ import annotations

import copy
import json
from collections import defaultdict
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from orchestrator.commit import locks
from orchestrator.commit.committed import read_committed
from orchestrator.commit.outcomes import recorded_seq, show_decisions
from orchestrator.contract.sourcetexts import TextStore
from orchestrator.contradictions.summary import summary
from orchestrator.graph.relation_support import relationship_problem
from orchestrator.model.errors import SessionDamaged, StoreError, UsageError
from orchestrator.model.layout import SessionPaths
from orchestrator.model.problems import Problem
from orchestrator.session.ledger import Ledger
from orchestrator.session.record import load_session

if TYPE_CHECKING:  # rdflib is imported only by the commands that need it
    from orchestrator.commit.processor import Processor
    from orchestrator.rdf.convert import AgentGraph


def errored_agents(paths: SessionPaths) -> list[str]:
    """The agents whose last submission was rejected and waits for a fix: its ``.kg.lock.error`` is there and
    the ledger's last decision for it is a rejection. A leftover ``.kg.lock.error`` (a folder the processor
    could not remove, a file restored by hand) of an agent merged since does not count."""
    signals = set(locks.errored(paths))
    if not signals:
        return []
    store = Ledger(paths.store_db)
    try:
        rejected = store.rejected_last()
    finally:
        store.close()
    return locks.errored_among(signals, rejected)


def ledger_view(paths: SessionPaths, session: dict[str, Any]) -> tuple[dict[str, Any], list[str], list[str]]:
    """The agents as the ledger has judged them (``session.json``'s entries with the decisions it does not show
    yet: a processor killed between its commit and its update leaves some), the locks still waiting, and the
    agents whose decision the ledger holds but whose lock was not yet renamed or consumed (the next sweep does
    it). The ledger is the truth; without one (or where it cannot be opened) ``session.json`` is shown as is."""
    agents = dict(session.get("agents") or {})
    waiting = locks.waiting(paths)
    if not paths.store_db.is_file():
        return agents, waiting, []
    try:
        store = Ledger(paths.store_db)
    except StoreError:
        return agents, waiting, []
    try:
        shown = copy.deepcopy(session)
        show_decisions(shown, store.decisions_after(recorded_seq(session)))
        last = store.last_decisions()
    finally:
        store.close()
    unsettled = locks.decided_claims(paths, {agent: detail.get("claim") for agent, (_, _, _, detail) in last.items()})
    pending = set(locks.pending(paths))
    return (dict(shown.get("agents") or {}), [a for a in waiting if a in pending or a not in unsettled],
            unsettled)


def session_status(paths: SessionPaths) -> dict[str, Any]:
    session = load_session(paths)
    agents, waiting, unsettled = ledger_view(paths, session)
    stats: dict[str, Any] = {}
    commit_seq = None
    skipped: list[dict[str, Any]] = []
    contradictions: list[dict[str, Any]] = []
    graph_problem = view_sha256 = None
    try:
        view = read_committed(paths)  # never the view file as it lies on disk: only what the ledger vouches for
    except UsageError as exc:  # no graph yet, or one that cannot be trusted nor rebuilt here
        graph_problem = str(exc) if isinstance(exc, SessionDamaged) else None
    else:
        graph, view_sha256 = view.graph, view.sha256
        stats, commit_seq = graph.get("stats", {}), graph.get("commit_seq")
        skipped = skipped_inputs(graph)
        contradictions = [summary(c) for c in graph.get("contradictions") or () if isinstance(c, dict)]
    quality = None
    quality_path = paths.root / "quality.json"
    if quality_path.exists():
        quality = json.loads(quality_path.read_text(encoding="utf-8"))
        scored = quality.get("view_sha256") if isinstance(quality, dict) else None
        if isinstance(quality, dict) and scored is not None and view_sha256 is not None:
            quality["current"] = scored == view_sha256  # scored from the graph as it is now
    return {
        "session": str(paths.root),
        "id": session.get("id"),
        "query": session.get("query"),
        "mission": session.get("mission"),
        "status": session.get("status"),
        "status_reason": session.get("status_reason"),
        "iteration": session.get("iteration"),
        "agents": agents,
        "locks_pending": waiting,
        "locks_errored": sorted(set(errored_agents(paths)) | {
            a for a in unsettled if agents.get(a, {}).get("state") == "rejected"}),
        "locks_unsettled": unsettled,
        "graph_commit_seq": commit_seq,
        "stats": stats,
        "quality": quality,
        "cost_usd": session.get("cost_usd"),
        "skipped_inputs": skipped,
        "contradictions": contradictions,
        "graph_problem": graph_problem,
    }


def skipped_inputs(graph: dict[str, Any]) -> list[dict[str, Any]]:
    """Input files the ingestion agents did not use, with their reasons (from their manifests)."""
    found = []
    for value in graph.values():
        if isinstance(value, dict) and isinstance(value.get("skipped"), list) and "documents" in value:
            found += [{"path": s.get("path"), "reason": s.get("reason")}
                      for s in value["skipped"] if isinstance(s, dict)]
    return found


def validate_session(paths: SessionPaths) -> list[Problem]:
    """Re-check every merged file against its schema, run SHACL on the whole graph, check every stored
    text against its sha256 and every relationship against its supporting claims' passages."""
    from orchestrator.commit.processor import Processor

    processor = Processor(paths, cached_records=False)
    try:
        problems: list[Problem] = view_problems(paths, processor)
        for agent in sorted(processor.state.records):
            record = processor.state.records[agent]
            for file in record["files"]:
                problems += processor.registry.validate_artifact(file["name"], record["raw"][file["name"]], file["rel"])
        for derived in _derived_graphs(processor):  # detected contradictions: checked by the same shapes
            processor.rdf.replace_agent(derived)
        problems += processor.rdf.validate_full()
        records = processor.state.records.load_all()
        problems += stored_text_problems(processor.texts, records)
        problems += relationship_support_problems(records)
        for agent in locks.waiting(paths):
            problems.append(Problem(f"{agent}.kg.lock", "", "lock.pending", "this lock has not been processed yet",
                                    "run `cconductor process SESSION` (or keep `cconductor watch` running)",
                                    "warning"))
        for agent in errored_agents(paths):
            problems.append(Problem(paths.lock_error(agent).name, "", "lock.errored",
                                    "this agent's last artifacts were rejected and are not in the graph",
                                    f"read {paths.retry_instructions(agent).name}, fix the files, then run "
                                    f"`cconductor retry SESSION {agent}`", "warning"))
        return problems
    finally:
        processor.close()


def view_problems(paths: SessionPaths, processor: Processor) -> list[Problem]:
    """The views as every reader treats them (orchestrator/commit/committed.py): one the ledger does not vouch for
    (edited by hand, deleted, behind the ledger) is rebuilt from the ledger, and said (a warning); one that cannot
    be rebuilt here is an error that says what to run. Never checked as found, never left in place silently."""
    try:
        view = read_committed(paths, trig=True, processor=processor)
    except SessionDamaged as exc:
        return [Problem(paths.kg_json.name, "", "view.untrusted", str(exc),
                        f"run `cconductor process {paths.root.name}` where the session folder can be written")]
    except UsageError:  # nothing merged yet: no view to check
        return []
    if view.rebuilt is None:
        return []
    edited = paths.kg_trig.name if view.rebuilt.startswith(paths.kg_trig.name) else paths.kg_json.name
    return [Problem(edited, "", "view.rebuilt",
                    f"{view.rebuilt}; rebuilt from the ledger, the one source of truth (the edit is gone; the event "
                    "log records it as views.rebuilt)",
                    "edit nothing in knowledge-graph.json or .trig: change the graph through the agents' artifacts "
                    "and locks (or `cconductor rollback`)", "warning")]


def relationship_support_problems(records: Mapping[str, Any]) -> list[Problem]:
    """Every merged relationship between entities, checked again against its supporting claims' verified
    passages: a graph merged before the check existed (or edited since) may hold one that nothing states."""
    claims: dict[str, Any] = {}
    entities: dict[str, Any] = {}
    for record in records.values():
        items = record["contribution"]["items"]
        claims.update((c["id"], c) for c in items["claims"])
        entities.update((e["id"], e) for e in items["entities"])
    problems = []
    for agent in sorted(records):
        for rel in records[agent]["contribution"]["items"].get("relationships") or ():
            problem = relationship_problem(rel, claims.get, entities.get)
            if problem is not None:
                problems.append(problem)
    return problems


def stored_text_problems(texts: TextStore, records: Mapping[str, Any]) -> list[Problem]:
    """Every stored text a source names, checked against its sha256: a missing or altered one is reported
    with the claims whose evidence rests on it (the views stop counting that evidence as verified)."""
    named: dict[str, set[str]] = defaultdict(set)  # sha256 -> the global ids of the sources naming it
    resting: dict[str, list[str]] = defaultdict(list)  # source id -> claims with evidence verified against it
    for record in records.values():
        items = record["contribution"]["items"]
        for source in items["sources"]:
            if isinstance(source.get("content_sha256"), str):
                named[source["content_sha256"]].add(source["id"])
        for claim in items["claims"]:
            for evidence in claim.get("evidence") or ():
                check = evidence.get("verification") or {}
                if check.get("verified") is True and isinstance(check.get("text_sha256"), str):
                    resting[check["text_sha256"]].append(str(claim["id"]))
    problems = []
    for sha in sorted(named):
        text, reason = texts.check(sha)
        if text is not None:
            continue
        claims = sorted(set(resting.get(sha, ())))
        missing = "does not exist" in str(reason)
        shown = ", ".join(claims[:10]) + (f" and {len(claims) - 10} more" if len(claims) > 10 else "")
        problems.append(Problem(
            f"sources/{sha}.txt", "", "source_text.missing" if missing else "source_text.altered",
            f"{reason}; named by source(s) {', '.join(sorted(named[sha]))}"
            + (f"; claims resting on it: {shown}, whose evidence no longer counts as verified (ask, report, "
               "quality, status)" if claims else ""),
            "restore the original text under the same name (its name is its content's sha256), from a backup or "
            "the source itself; or have the agents quote a new stored text and submit again",
            details={"sha256": sha, "claim_ids": claims, "source_ids": sorted(named[sha])}))
    return problems


def _derived_graphs(processor: Processor) -> list[AgentGraph]:
    """The named graphs derived from the current state (the detected contradictions), when not empty."""
    from orchestrator.graph.unified import build_views
    from orchestrator.rdf.contradictions import contradiction_graph

    view = build_views(processor.state.records.load_all(), processor.session_id, processor.state.head_seq, "",
                       namespaces=False)  # only the contradictions are read: no namespace fetched
    derived = contradiction_graph(view["contradictions"])
    return [derived] if derived.triples else []


def export_graph(paths: SessionPaths, fmt: str) -> str:
    """The graph in ``fmt``, its evidence counted as the committed view counts it (a verification resting on
    a stored text deleted or altered since is exported as not verified, as everywhere else)."""
    from orchestrator.commit.processor import Processor
    from orchestrator.graph.current_evidence import current_contribution, verification_overrides
    from orchestrator.rdf.convert import contribution_to_graph
    from orchestrator.rdf.write import serialize_graphs

    processor = Processor(paths)
    try:
        view = read_committed(paths, processor=processor)  # rebuilt first if a stored text moved since
        processor.refresh()
        records = processor.state.records.load_all()
        overrides = verification_overrides(records, view.graph.get("claims") or [])
        graphs = [contribution_to_graph(processor.session_id,
                                        current_contribution(records[agent]["contribution"], overrides[agent]),
                                        kind_of=processor.state.kind_of)
                  if agent in overrides and agent in records else graph
                  for agent, graph in processor.rdf.agent_graphs().items()]
        return serialize_graphs([*graphs, *_derived_graphs(processor)], processor.session_id, fmt)
    finally:
        processor.close()
