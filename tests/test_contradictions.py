"""Contradictions across agents and sources, end to end: hand-made agents, the real pipeline.

Each agent stores its own source text and quotes it, exactly as a real agent does; the
processor merges with filelock, SQLite and pyshacl, and the views are what a user reads.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
from typing import Any

import pytest
from rdflib import Dataset, Literal, URIRef

from orchestrator.commit.processor import Processor
from orchestrator.commit.rollback import rollback_session
from orchestrator.commit.views import conflict_rows_kind, flush_views
from orchestrator.contradictions import contradictions_touching
from orchestrator.graph.quality import score_graph
from orchestrator.model.layout import SessionPaths
from orchestrator.rdf.contradictions import GRAPH_IRI
from orchestrator.rdf.state import RdfState
from orchestrator.rdf.vocabulary import CC
from orchestrator.report.markdown import render_markdown
from orchestrator.session.events import read_events
from orchestrator.session.ledger import Ledger, read_ledger
from orchestrator.session.record import load_session
from tests.conftest import cconductor, merge_pending, store_text, write_artifacts

VACCINE_40 = "The vaccine reduced hospital admissions by 40% in adults over 65."
VACCINE_12 = "In adults over 65, the vaccine reduced hospital admissions by 12%."
DRUG_YES = "Metformin lowers the risk of colorectal cancer in diabetic patients."
DRUG_NO = "Metformin does not lower the risk of colorectal cancer in diabetic patients."


def agent(session: SessionPaths, name: str, statements: list[str], *, url: str | None = None,
          entity_ids: list[list[str]] | None = None, **files: Any) -> None:
    """An agent with one source (its own text, holding every statement on page 2) and one claim per statement."""
    text = f"{name} notes, title page.\f" + " ".join(statements)
    sha = store_text(session, text)
    claims = []
    for n, statement in enumerate(statements, 1):
        claim: dict[str, Any] = {
            "id": f"C{n}", "statement": statement, "confidence": 0.8, "priority": "medium",
            "evidence": [{"source_id": "S1", "snippet": statement.rstrip("."), "locator": {"page": 2}}]}
        if entity_ids is not None and entity_ids[n - 1]:
            claim["entity_ids"] = entity_ids[n - 1]
        claims.append(claim)
    source = {"id": "S1", "type": "journal-article", "title": f"Study of {name}", "year": 2024,
              "url": url or f"https://example.org/{name}", "content_sha256": sha}
    write_artifacts(session, name, {"sources.json": {"sources": [source]}, "claims.json": {"claims": claims},
                                    **{f"{k.replace('_', '-')}.json": v for k, v in files.items()}})


def kg(session: SessionPaths) -> dict[str, Any]:
    return json.loads(session.kg_json.read_text())


def detected(session: SessionPaths) -> list[dict[str, Any]]:
    return [c for c in kg(session)["contradictions"] if c.get("detected")]


def test_numeric_conflict_between_two_agents_is_recorded_with_both_sides(session: SessionPaths) -> None:
    agent(session, "alpha", [VACCINE_40])
    agent(session, "beta", [VACCINE_12])
    assert merge_pending(session) == {"alpha": "merged", "beta": "merged"}
    [found] = detected(session)
    assert found["kind"] == "numeric" and found["claim_ids"] == ["alpha:C1", "beta:C1"]
    assert found["status"] == "open" and found["resolved"] is False
    assert [(s["agent"], s["source_ids"], s["value"]) for s in found["sides"]] == [
        ("alpha", ["alpha:S1"], "40%"), ("beta", ["beta:S1"], "12%")]
    assert found["compared"] == {"unit": "%", "values": [40.0, 12.0], "texts": ["40%", "12%"],
                                 "relative_difference": 0.7, "tolerance": 0.1}
    assert "“40%” vs “12%”" in found["description"]
    assert kg(session)["stats"]["open_contradictions"] == 1


def test_polarity_conflict_is_detected(session: SessionPaths) -> None:
    agent(session, "alpha", [DRUG_YES])
    agent(session, "beta", [DRUG_NO])
    merge_pending(session)
    [found] = detected(session)
    assert (found["kind"], found["description"]) == ("polarity", "one statement negates what the other asserts")
    assert {s["agent"] for s in found["sides"]} == {"alpha", "beta"}


def test_explicit_contradicts_relationship_from_an_agent(session: SessionPaths) -> None:
    agent(session, "alpha", ["Solar panels in Norway produce most of their energy in summer months."])
    agent(session, "beta", ["Wind turbines along the coast deliver steady output through the winter."])
    merge_pending(session)
    assert detected(session) == []  # unrelated statements
    write_artifacts(session, "reviewer", {"relationships.json": {"relationships": [
        {"id": "R1", "subject": "alpha:C1", "predicate": "contradicts", "object": "beta:C1"}]}})
    assert merge_pending(session) == {"reviewer": "merged"}
    [found] = detected(session)
    assert found["kind"] == "explicit" and found["claim_ids"] == ["alpha:C1", "beta:C1"]
    assert found["relationships"] == [{"id": "reviewer:R1", "agent": "reviewer", "predicate": "contradicts"}]
    assert found["description"] == "reviewer stated that these claims contradict each other"


NEAR_MISSES: dict[str, tuple[str, str]] = {
    "same number written differently": ("Revenue of the Orbit platform grew 12.5% during the fiscal year.",
                                        "During the fiscal year, revenue of the Orbit platform grew 12.5 percent."),
    "different quantities and units": ("The Falcon classifier reaches 90% accuracy on the ImageNet benchmark.",
                                       "The Falcon classifier reaches 90 ms latency on the ImageNet benchmark."),
    "different years": ("Coffee exports from Kenya rose 8% in 2019 after the reform.",
                        "Coffee exports from Kenya rose 15% in 2021 after the reform."),
    "paraphrase without negation": ("Regular exercise improves sleep quality in older adults.",
                                    "In older adults, sleep quality is improved by regular exercise."),
    "within tolerance": ("The harbour survey counted 120 grey seals on the northern beaches.",
                         "The harbour survey counted 124 grey seals on the northern beaches."),
    "double negation": ("The new alloy resists corrosion in salt water.",
                        "The new alloy does not fail to resist corrosion in salt water."),
    "a bound, not a value": ("More than 10% of the glacier mass in the Alps disappeared since 2000.",
                             "Some 15% of the glacier mass in the Alps disappeared since 2000."),
    "unit conversion": ("Median page load of the checkout service is 250 ms under peak traffic.",
                        "Median page load of the checkout service is 0.25 s under peak traffic."),
}


def test_look_alikes_are_not_flagged(session: SessionPaths) -> None:
    for n, (first, second) in enumerate(NEAR_MISSES.values()):
        agent(session, f"left-{n}", [first])
        agent(session, f"right-{n}", [second])
    # the same source repeating itself, and two values in one source (its own contexts): not a conflict
    shared = "https://example.org/one-paper"
    agent(session, "reader-a", ["The pilot plant converts 30% of the feedstock into ethanol each day."], url=shared)
    agent(session, "reader-b", ["The pilot plant converts 30% of the feedstock into ethanol each day.",
                                "The pilot plant converts 45% of the feedstock into ethanol each day."], url=shared)
    # the same sentence about two different entities
    agent(session, "models", ["The model scores 86% on the reading benchmark."], entity_ids=[["E1"]],
          entities={"entities": [{"id": "E1", "name": "GPT-4", "type": "model"}]})
    agent(session, "others", ["The model scores 69% on the reading benchmark."], entity_ids=[["E1"]],
          entities={"entities": [{"id": "E1", "name": "Llama 2", "type": "model"}]})
    outcomes = merge_pending(session)
    assert set(outcomes.values()) == {"merged"} and len(outcomes) == 2 * len(NEAR_MISSES) + 4
    assert detected(session) == []
    assert kg(session)["stats"]["open_contradictions"] == 0


def test_a_retry_that_changes_the_claim_removes_the_contradiction(session: SessionPaths) -> None:
    agent(session, "alpha", [VACCINE_40])
    agent(session, "beta", [VACCINE_12])
    merge_pending(session)
    [found] = detected(session)
    agent(session, "beta", ["In adults over 65, the vaccine reduced hospital admissions by 41%."])
    assert merge_pending(session) == {"beta": "merged"}
    assert detected(session) == [] and kg(session)["stats"]["open_contradictions"] == 0
    # the audit trail says when it appeared and when it went away
    events = [e for e in read_events(session.events) if e["type"].startswith("contradiction.")]
    assert [(e["type"], e["data"]["id"]) for e in events] == [
        ("contradiction.detected", found["id"]), ("contradiction.cleared", found["id"])]
    assert events[0]["data"]["agents"] == ["alpha", "beta"] and events[0]["data"]["kind"] == "numeric"


def test_rollback_removes_and_restores_it_and_views_equal_a_rebuild(session: SessionPaths) -> None:
    agent(session, "alpha", [VACCINE_40])
    merge_pending(session)
    agent(session, "beta", [VACCINE_12])
    merge_pending(session)
    assert len(detected(session)) == 1
    assert str(GRAPH_IRI) in session.kg_trig.read_text()
    rollback_session(session, 1)
    assert detected(session) == [] and str(GRAPH_IRI) not in session.kg_trig.read_text()
    rollback_session(session, 2)
    assert len(detected(session)) == 1
    assert len(read_ledger(session.store_db)) == 4
    before_json, before_trig = kg(session), session.kg_trig.read_text()
    before_json.pop("generated_at")
    store = Ledger(session.store_db)
    saved = {agent: json.loads(body) for agent, (_, body) in store.derived(conflict_rows_kind()).items()}
    store.close()
    assert saved["alpha"]["conflicts"][0][:3] == ["alpha:C1", "beta:C1", "numeric"]
    # a rebuild from the ledger: reusing the last search, without it, and with a damaged one
    for cache in ("kept", "removed", "damaged"):
        session.kg_json.unlink()
        session.kg_trig.unlink()
        if cache != "kept":
            with sqlite3.connect(session.store_db) as db:
                if cache == "removed":
                    db.execute("DELETE FROM derived WHERE kind = ?", (conflict_rows_kind(),))
                else:
                    db.execute("UPDATE derived SET body = ? WHERE kind = ?",
                               ('{"claims": [["x"]', conflict_rows_kind()))
        processor = Processor(session)
        try:
            flush_views(processor, force=True)
        finally:
            processor.close()
        rebuilt = kg(session)
        rebuilt.pop("generated_at")
        assert rebuilt == before_json and session.kg_trig.read_text() == before_trig, cache


def test_rdf_has_the_detected_node_and_conforms_to_the_shapes(session: SessionPaths) -> None:
    agent(session, "alpha", [VACCINE_40])
    agent(session, "beta", [VACCINE_12])
    merge_pending(session)
    ds = Dataset()
    ds.parse(data=session.kg_trig.read_text(), format="trig")
    graph = ds.graph(GRAPH_IRI)
    [node] = list(graph.subjects(CC.conflictKind, None))
    assert set(graph.objects(node, CC.involvesClaim)) == {
        URIRef("urn:cconductor:claim:alpha:C1"), URIRef("urn:cconductor:claim:beta:C1")}
    assert {str(v) for v in graph.objects(node, CC.comparedValue)} == {"40.0", "12.0"}
    assert str(graph.value(node, CC.comparedUnit)) == "%" and graph.value(node, CC.resolved) == Literal(False)
    # the union of the agents' graphs and the derived one passes every shape (cc:Contradiction's too)
    processor = Processor(session)
    try:
        from orchestrator.rdf.contradictions import contradiction_graph

        state = RdfState()
        for agent_graph in processor.rdf.agent_graphs().values():
            state.replace_agent(agent_graph)
        state.replace_agent(contradiction_graph(kg(session)["contradictions"]))
        assert state.validate_full() == []
    finally:
        processor.close()
    exported = subprocess.run([*cconductor(), "export", str(session.root), "--format", "nquads"],
                              capture_output=True, text=True, check=True).stdout
    assert f"<{GRAPH_IRI}> ." in exported
    verdict = json.loads(subprocess.run([*cconductor(), "validate", str(session.root), "--json"],
                                        capture_output=True, text=True, check=True).stdout)
    assert verdict["conforms"] is True and verdict["problems"] == []


def test_an_agent_resolves_it_and_an_open_record_is_the_same_contradiction(session: SessionPaths) -> None:
    agent(session, "alpha", [VACCINE_40])
    agent(session, "beta", [VACCINE_12])
    write_artifacts(session, "fact-checker", {"contradictions.json": {"contradictions": [
        {"id": "X1", "claim_ids": ["alpha:C1", "beta:C1"], "description": "admissions figures differ",
         "status": "open"}]}})
    merge_pending(session)
    graph = kg(session)
    [found] = detected(session)
    assert found["recorded_by"] == ["fact-checker:X1"] and found["status"] == "open"
    assert graph["stats"]["open_contradictions"] == 1  # one conflict, counted once
    report = score_graph(graph)
    assert report.open_contradictions == ("fact-checker:X1",)
    write_artifacts(session, "fact-checker", {"contradictions.json": {"contradictions": [
        {"id": "X1", "claim_ids": ["alpha:C1", "beta:C1"], "description": "admissions figures differ",
         "status": "resolved", "resolution": "beta's figure is for one season only"}]}})
    merge_pending(session)
    [found] = detected(session)
    assert found["resolved"] is True and found["status"] == "resolved"
    assert found["resolved_by"] == "fact-checker:X1" and found["resolution"] == "beta's figure is for one season only"
    assert kg(session)["stats"]["open_contradictions"] == 0
    assert score_graph(kg(session)).penalties[0].points == 0


def test_status_lists_them_in_text_and_json(session: SessionPaths) -> None:
    agent(session, "alpha", [VACCINE_40, DRUG_YES])
    agent(session, "beta", [VACCINE_12, DRUG_NO])
    merge_pending(session)
    out = subprocess.run([*cconductor(), "status", str(session.root)], capture_output=True, text=True, check=True)
    assert "conflicts 2 contradiction(s), 2 unresolved" in out.stdout
    assert "numeric" in out.stdout and "alpha:C1 (alpha, 40%) vs beta:C1 (beta, 12%)" in out.stdout
    assert "polarity" in out.stdout and "alpha:C2 (alpha) vs beta:C2 (beta)" in out.stdout
    data = json.loads(subprocess.run([*cconductor(), "status", str(session.root), "--json"],
                                     capture_output=True, text=True, check=True).stdout)
    kinds = sorted((c["kind"], c["status"], c["counted"]) for c in data["contradictions"])
    assert kinds == [("numeric", "open", True), ("polarity", "open", True)]
    assert {s["source_ids"][0] for c in data["contradictions"] for s in c["sides"]} == {"alpha:S1", "beta:S1"}


def test_report_section_quotes_both_sides_with_citations(session: SessionPaths) -> None:
    agent(session, "alpha", [VACCINE_40])
    agent(session, "beta", [VACCINE_12])
    merge_pending(session)
    markdown = render_markdown(kg(session), session=load_session(session), quality=None, mission=None,
                               outline=None, ledger=read_ledger(session.store_db))
    section = markdown.split("## Contradictions", 1)[1].split("\n## ", 1)[0]
    assert "1 contradiction between claims, 1 unresolved" in section
    assert f"“{VACCINE_40}” — alpha, claim C1 [1, p. 2]" in section
    assert f"“{VACCINE_12}” — beta, claim C1 [2, p. 2]" in section
    assert "different numbers" in section and "“40%” vs “12%”" in section


def test_quality_counts_unresolved_contradictions_as_a_visible_penalty(session: SessionPaths) -> None:
    agent(session, "alpha", [VACCINE_40, DRUG_YES])
    agent(session, "beta", [VACCINE_12, DRUG_NO])
    merge_pending(session)
    report = score_graph(kg(session))
    assert report.counts["open_contradictions"] == 2
    [penalty] = report.penalties
    assert penalty.points == 6.0 and "2 unresolved contradictions" in penalty.detail
    assert report.score == round(sum(c.weighted for c in report.components) - 6.0, 1)
    data = report.to_json()
    assert data["penalties"][0]["points"] == -6.0
    markdown = render_markdown(kg(session), session=load_session(session), quality=data, mission=None,
                               outline=None, ledger=[])
    assert "| Unresolved contradictions |   |   | -6.0 | 2 unresolved contradictions" in markdown


def test_contradictions_touching_finds_them_by_claim_entity_source_or_relationship(session: SessionPaths) -> None:
    agent(session, "alpha", [VACCINE_40], entity_ids=[["E1"]],
          entities={"entities": [{"id": "E1", "name": "Influenza vaccine", "type": "product"}]})
    agent(session, "beta", [VACCINE_12])
    agent(session, "gamma", ["Cats sleep for most of the day in warm rooms of the house."])
    merge_pending(session)
    graph = kg(session)
    [found] = detected(session)
    for ids in (["alpha:C1"], ["beta:C1"], ["alpha:E1"], ["beta:S1"], [found["id"]]):
        assert [c["id"] for c in contradictions_touching(graph, ids)] == [found["id"]], ids
    assert contradictions_touching(graph, ["gamma:C1", "gamma:S1"]) == []


@pytest.mark.parametrize("distinct_sources", [True, False])
def test_only_claims_resting_on_different_sources_conflict(session: SessionPaths, distinct_sources: bool) -> None:
    first, second = "https://example.org/a", "https://example.org/b"
    agent(session, "alpha", [VACCINE_40], url=first)
    agent(session, "beta", [VACCINE_12], url=second if distinct_sources else first)  # one URL: one source
    merge_pending(session)
    assert len(detected(session)) == (1 if distinct_sources else 0)


def test_views_of_other_rules_are_rebuilt(session: SessionPaths, monkeypatch: pytest.MonkeyPatch) -> None:
    """A session merged while the rules found something else shows what the current rules find, not the
    old findings the ledger vouched for then (orchestrator.contradictions.RULES_VERSION)."""
    import orchestrator.commit.views as views
    import orchestrator.commit.vouched as vouched
    import orchestrator.graph.unified_parts as parts

    with monkeypatch.context() as older:  # "version 1" of the rules found no contradiction here
        older.setattr(views, "RULES_VERSION", 1)
        older.setattr(vouched, "RULES_VERSION", 1)
        older.setattr(parts, "detect", lambda *args, **kwargs: [])
        agent(session, "alpha", [VACCINE_40])
        agent(session, "beta", [VACCINE_12])
        assert merge_pending(session) == {"alpha": "merged", "beta": "merged"}
        assert detected(session) == []
    data = json.loads(subprocess.run([*cconductor(), "status", str(session.root), "--json"],
                                     capture_output=True, text=True, check=True).stdout)
    assert [c["kind"] for c in data["contradictions"]] == ["numeric"]
    assert len(detected(session)) == 1  # the view on disk was rebuilt with the current rules
    assert json.loads(session.view_marker.read_text())["contradiction_rules"] == views.RULES_VERSION
    store = Ledger(session.store_db)
    try:
        assert set(store.derived(conflict_rows_kind())) == {"alpha", "beta"}  # saved under the current rules
    finally:
        store.close()
    merge_pending(session)  # a processor finds the views current now: nothing is rewritten
    assert len(detected(session)) == 1
