"""Writing the run's outputs from the validated graph: quality.json and the report files."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from orchestrator.commit.committed import read_committed
from orchestrator.graph.quality import plan_sub_questions, score_graph
from orchestrator.graph.quality_gate import gate
from orchestrator.model.clock import commit_time
from orchestrator.model.layout import SessionPaths
from orchestrator.model.problems import Problem
from orchestrator.run.missions import Mission
from orchestrator.session.atomic import atomic_write_json, atomic_write_text
from orchestrator.session.ledger import read_ledger
from orchestrator.session.record import load_session, update_session

REPORT_MARKDOWN = "mission-report.md"
REPORT_HTML = "mission-report.html"


def evaluate_quality(paths: SessionPaths, graph: dict[str, Any], mission: Mission,
                     view_sha256: str | None = None) -> dict[str, Any]:
    """Score the graph, gate it on the mission's criteria, and write quality.json (``view_sha256``: of the
    committed view scored, so ``status`` can tell a score of an earlier graph)."""
    report = score_graph(graph, plan_sub_questions(graph), now=commit_time(graph, read_ledger(paths.store_db)))
    question = str(load_session(paths).get("query") or "")
    result = gate(report, graph, mission.success_criteria.checked(), question=question)
    document = report.to_json(result)
    document["mission"] = mission.name
    if view_sha256 is not None:
        document["view_sha256"] = view_sha256
    atomic_write_json(paths.root / "quality.json", document, shared=True)
    return document


def outline_of(graph: dict[str, Any], mission: Mission) -> dict[str, Any] | None:
    for agent in mission.phases.synthesis:
        outline = graph.get(agent, {}).get("report_outline")
        if isinstance(outline, dict):
            return outline
    return None


def write_report(paths: SessionPaths, graph: dict[str, Any], mission: Mission, quality: dict[str, Any]) -> list[str]:
    """Render every output format the mission asks for from one report document; returns the file names written.

    The report's direct answer goes into session.json too (``answer``), where `run`, `batch` and
    other tools find it without reading the report.
    """
    from orchestrator.contract.stored_objects import object_reader
    from orchestrator.report.answer import direct_answer
    from orchestrator.report.bibliography import to_bibtex, to_csl_json
    from orchestrator.report.document import build_document
    from orchestrator.report.html import to_html
    from orchestrator.report.markdown import to_markdown

    session = load_session(paths)
    mission_data = {**mission.to_dict(), "source": str(mission.source)}
    document = build_document(graph, session=session, quality=quality, mission=mission_data,
                              outline=outline_of(graph, mission), ledger=read_ledger(paths.store_db),
                              objects=object_reader(paths))
    formats = set(mission.output.formats)
    outputs: list[tuple[str, str]] = []
    if "markdown" in formats:
        outputs.append((REPORT_MARKDOWN, to_markdown(document)))
    if "html" in formats:
        outputs.append((REPORT_HTML, to_html(document)))
    cited = cited_sources(graph)
    if "bibtex" in formats:
        outputs.append(("bibliography.bib", to_bibtex(cited)))
    if "csl-json" in formats:
        outputs.append(("references.json", json.dumps(to_csl_json(cited), indent=2, ensure_ascii=False) + "\n"))
    for name, text in outputs:
        atomic_write_text(paths.root / name, text, shared=True)  # for reading and sharing
    answer = direct_answer(document)

    def record(data: dict[str, Any]) -> None:
        data["answer"] = answer.to_json() if answer else None

    update_session(paths, record)
    return [name for name, _ in outputs]


def cited_sources(graph: dict[str, Any]) -> list[dict[str, Any]]:
    """Sources that back at least one verified evidence item: the report's bibliography."""
    used = {e["source_id"] for c in graph.get("claims", []) for e in c.get("evidence", [])
            if (e.get("verification") or {}).get("verified") is True}
    return [s for s in graph.get("sources", []) if s["id"] in used]


def recompute_quality(paths: SessionPaths, validate: Callable[[], list[Problem]]) -> None:
    """A finished run's quality.json, status reason and recommendations describe the graph as it now is."""

    from orchestrator.model.errors import CconductorError
    from orchestrator.run.iteration import final_status
    from orchestrator.run.missions import load_mission

    session = load_session(paths)
    if session.get("status") not in ("completed", "partial") or not session.get("mission"):
        return  # a run still going (or one that failed) keeps its own account
    try:
        mission = load_mission(str(session["mission"]))
    except CconductorError:
        return
    view = read_committed(paths)
    quality = evaluate_quality(paths, view.graph, mission, view.sha256)
    status, reason = final_status(quality, len([p for p in validate() if p.is_error]))

    def apply(data: dict[str, Any]) -> None:
        data["status"], data["status_reason"] = status, reason

    update_session(paths, apply)
