"""The offline agents against the real orchestrator: every artifact set they write must merge.

One session runs the whole chain over the eight shared PDFs (planner, ingester, two researcher
instances, fact-checker, synthesis), each agent in-process with a hand-written task file and each
lock processed by the real ``Processor``; the tests then check what the graph holds. Smaller
sessions cover library ingestion, contradictions and retries.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from agents.offline import factchecker, ingester, planner, researcher, synthesis
from agents.runtime import AgentContext
from orchestrator.commit.processor import Processor
from orchestrator.commit.views import flush_views
from orchestrator.graph.citations import check_outline, claim_lookup, claim_resolver, find_markers
from orchestrator.model.layout import SessionPaths
from orchestrator.run.definitions import load_definitions
from orchestrator.session.record import create_session
from tests.helpers.data import ARXIV_LIBRARY, PAPERS

QUERY = "How does post-anthesis heat stress affect wheat metabolism?"
SECTIONS = ["Abstract", "Introduction", "Key Findings", "Evidence", "Research Gaps", "Quality Assessment",
            "Methodology", "Conclusion", "Bibliography"]
RUNNERS = {
    "research-planner": planner.run, "pdf-analyzer": ingester.run, "academic-researcher": researcher.run,
    "web-researcher": researcher.run, "fact-checker": factchecker.run, "synthesis-agent": synthesis.run,
}
DEFINITIONS = load_definitions()


def write_task(paths: SessionPaths, agent: str, definition: str, *, attempt: int = 1,
               sub_questions: list[dict[str, Any]] | None = None, inputs: dict[str, Any] | None = None,
               retry: dict[str, Any] | None = None, **extra: Any) -> Path:
    """A task file as the runner writes it (see orchestrator/dispatch.py, build_task)."""
    data = {
        "agent": agent, "definition": definition, "attempt": attempt, "max_attempts": 3,
        "session": str(paths.root), "query": json.loads(paths.session_json.read_text())["query"],
        "mission": "academic-research", "phase": DEFINITIONS[definition].phase, "iteration": 1,
        "backend": "offline", "sub_questions": sub_questions or [],
        "inputs": {"input_dirs": [], "libraries": [], "graph": str(paths.kg_json), **(inputs or {})},
        "retry_instructions": retry,
        "options": {"evidence_threshold": 90, "max_claims_per_question": 6, "depth": 1},
        "heartbeat_path": None, "required_files": list(DEFINITIONS[definition].required_files),
        "required_sections": SECTIONS, **extra,
    }
    paths.tasks.mkdir(exist_ok=True)
    target = paths.tasks / f"{agent}-{attempt}.json"
    target.write_text(json.dumps(data), encoding="utf-8")
    return target


@dataclass
class Session:
    """A session, its processor, and which definition each agent instance runs."""

    paths: SessionPaths
    kinds: dict[str, str] = field(default_factory=dict)
    processor: Processor = field(init=False)

    def __post_init__(self) -> None:
        self.processor = Processor(
            self.paths, required_files=lambda agent: DEFINITIONS[self.kinds[agent]].required_files
        )

    def run(self, agent: str, definition: str, **task: Any) -> str:
        """Run one agent in-process, then process its lock; returns the outcome status."""
        self.kinds[agent] = definition
        RUNNERS[definition](AgentContext(write_task(self.paths, agent, definition, **task)))
        outcomes = self.processor.process_pending()
        flush_views(self.processor)
        assert [o.agent for o in outcomes] == [agent]
        return outcomes[0].status

    def graph(self) -> dict[str, Any]:
        return dict(json.loads(self.paths.kg_json.read_text(encoding="utf-8")))

    def folder(self, agent: str) -> Path:
        return self.paths.agent_artifacts(agent)

    def sub_questions(self) -> list[dict[str, Any]]:
        plan = self.graph()["research-planner"]
        return [{**q, "id": f"research-planner:{q['id']}"} for q in plan["sub_questions"]]


def new_session(root: Path, query: str = QUERY) -> Session:
    return Session(create_session(root, query, "academic-research"))


@dataclass
class Chain:
    session: Session
    statuses: dict[str, str]
    before_check: dict[str, Any]  # the graph after research, before fact-checking
    graph: dict[str, Any]  # the graph after synthesis


@pytest.fixture(scope="module")
def pdf_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The eight shared PDFs (linked, never copied), without their SOURCES.md."""
    folder = tmp_path_factory.mktemp("pdfs")
    for pdf in sorted(PAPERS.glob("*.pdf")):
        (folder / pdf.name).symlink_to(pdf)
    assert len(list(folder.iterdir())) == 8
    return folder


@pytest.fixture(scope="module")
def chain(tmp_path_factory: pytest.TempPathFactory, pdf_dir: Path) -> Iterator[Chain]:
    session = new_session(tmp_path_factory.mktemp("chain"))
    statuses = {"research-planner": session.run("research-planner", "research-planner")}
    statuses["pdf-analyzer"] = session.run("pdf-analyzer", "pdf-analyzer",
                                           inputs={"input_dirs": [str(pdf_dir)]})
    questions = session.sub_questions()
    statuses["academic-researcher"] = session.run("academic-researcher", "academic-researcher",
                                                  sub_questions=questions[:3])
    statuses["academic-researcher-2"] = session.run("academic-researcher-2", "academic-researcher",
                                                    sub_questions=questions[3:])
    s2orc = {"id": "research-planner:Q1", "question": "What is the S2ORC corpus of academic papers?",
             "keywords": ["S2ORC", "corpus", "academic papers"], "facet": "overview"}
    statuses["web-researcher"] = session.run("web-researcher", "web-researcher", sub_questions=[s2orc])
    before = session.graph()
    statuses["fact-checker"] = session.run("fact-checker", "fact-checker")
    statuses["synthesis-agent"] = session.run("synthesis-agent", "synthesis-agent")
    yield Chain(session, statuses, before, session.graph())
    session.processor.close()


def claims_of(graph: dict[str, Any], agent: str) -> list[dict[str, Any]]:
    return [c for c in graph["claims"] if c["id"].startswith(f"{agent}:")]


def source_title(graph: dict[str, Any], source_id: str) -> str:
    return next(str(s["title"]) for s in graph["sources"] if s["id"] == source_id)


# --- the chain ---------------------------------------------------------------------------------


def test_every_agent_of_the_chain_is_merged(chain: Chain) -> None:
    assert chain.statuses == dict.fromkeys(chain.statuses, "merged")
    assert chain.graph["stats"]["agents"] == len(chain.statuses)
    assert not list(chain.session.paths.root.glob("*.kg.lock*"))


def test_planner_asks_the_query_itself_and_only_what_it_asks(chain: Chain, tmp_path: Path) -> None:
    plan = chain.graph["research-planner"]
    questions = plan["sub_questions"]
    assert plan["query"] == QUERY and questions[0]["question"] == QUERY
    assert len(questions) == 1  # one question, one part: no template facets
    assert all(q["keywords"] and "wheat metabolism" in q["keywords"] for q in questions)
    again = new_session(tmp_path)
    assert again.run("research-planner", "research-planner") == "merged"
    first = (chain.session.folder("research-planner") / "plan.json").read_bytes()
    assert (again.folder("research-planner") / "plan.json").read_bytes() == first
    again.processor.close()


def test_planner_decomposes_clauses_comparisons_and_named_aspects() -> None:
    from agents.offline.planner import make_plan

    def asked(query: str) -> list[str]:
        return [q["question"] for q in make_plan(query)["sub_questions"]]

    assert asked("What methods do these papers use and what are their limitations?") == [
        "What methods do these papers use and what are their limitations?", "What methods do these papers use?",
        "What are their limitations?"]
    assert asked("Is low molecular weight heparin better than compression devices?")[1:] == [
        "What is reported about low molecular weight heparin?", "What is reported about compression devices?"]
    parts = asked("What are the main results and limitations of the heart failure focus group study?")[1:]
    assert parts == ["What were the main results on heart failure focus group study?",
                     "What limitations were reported for heart failure focus group study?"]
    # a later clause names what its pronoun stands for, so it can be searched on its own
    assert asked("What is the S2ORC corpus and how many papers does it contain?")[1:] == [
        "What is the S2ORC corpus?", "How many papers does S2ORC corpus contain?"]
    assert asked("How does VESPA work and what are its limitations?")[2] == "What are VESPA's limitations?"
    assert asked("Is it safe and does it work?")[1:] == ["Is it safe?", "Does it work?"]
    for query in ("How many papers does S2ORC contain?", "Which methods were used to measure heat stress in wheat?"):
        assert asked(query) == [query]
    every = [q for query in ("What methods do these papers use?", "How does X affect Y, and why?")
             for q in asked(query)]
    assert not any("key concepts" in q or "{topic}" in q or "defined" in q for q in every)


def test_ingester_stores_every_pdf_text_under_its_hash(chain: Chain) -> None:
    sources = chain.graph["pdf-analyzer"]["sources"]
    assert len(sources) == 8
    for source in sources:
        data = chain.session.paths.source_text(source["content_sha256"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == source["content_sha256"]
        assert data.count(b"\f") >= 3 and Path(source["local_path"]).name.endswith(".pdf")
    assert any("wheat" in s["title"].lower() for s in sources)
    manifest = json.loads((chain.session.folder("pdf-analyzer") / "manifest.json").read_text())
    assert manifest["documents"] == 8 and manifest["skipped"] == [] and manifest["pages"] >= 100
    completion = json.loads((chain.session.folder("pdf-analyzer") / "completion.json").read_text())
    assert "Ingested 8 document(s)" in completion["summary"]


def test_researcher_quotes_verified_sentences_from_the_right_paper(chain: Chain) -> None:
    graph = chain.before_check
    claims = claims_of(graph, "academic-researcher") + claims_of(graph, "academic-researcher-2")
    assert len(claims) >= 10
    statements = [c["statement"] for c in claims]
    assert len(set(statements)) == len(statements)
    by_question: dict[str, list[dict[str, Any]]] = {}
    per_agent: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for claim in claims:
        by_question.setdefault(claim["sub_question_id"], []).append(claim)
        evidence = claim["evidence"][0]
        assert evidence["verification"]["verified"] is True
        assert evidence["verification"]["page"] == evidence["locator"]["page"]
        assert 0.4 <= claim["confidence"] <= 0.85
        assert "wheat" in source_title(graph, evidence["source_id"]).lower()
        if {"table", "caption"} & set(claim["tags"]):  # a table row or caption: quoted verbatim, told with headers
            assert {"table", "figure"} & set(evidence["locator"])
            assert all(cell.strip() in claim["statement"] for cell in evidence["snippet"].split(" | "))
            continue
        assert evidence["snippet"] == claim["statement"]
        per_agent.setdefault((claim["id"].split(":")[0], claim["sub_question_id"]), []).append(claim)
    for group in per_agent.values():  # each researcher quotes at most 6 sentences per question
        assert len(group) <= 6 and [c["priority"] for c in group].count("high") == 1
    q1 = by_question["research-planner:Q1"]
    assert q1[0]["priority"] == "high" and any("heat stress" in c["statement"] for c in q1)
    s2orc = claims_of(graph, "web-researcher")
    assert s2orc and all("S2ORC" in source_title(graph, c["evidence"][0]["source_id"]) for c in s2orc)
    assert all(c["evidence"][0]["verification"]["verified"] for c in s2orc)


def test_researcher_entities_and_relationships_come_from_the_claims(chain: Chain) -> None:
    space = chain.graph["academic-researcher"]
    names = {e["id"]: e["name"].lower() for e in space["entities"]}
    assert "heat stress" in names.values() and all(e["type"] == "concept" for e in space["entities"])
    claims = {c["id"]: c for c in space["claims"]}
    for claim in claims.values():
        for entity_id in claim.get("entity_ids", []):
            assert names[entity_id].split()[0] in claim["statement"].lower()
    assert space["relationships"]
    for rel in space["relationships"]:
        assert rel["predicate"] == "co-occurs-with"
        for claim_id in rel["claim_ids"]:
            assert {rel["subject"], rel["object"]} <= set(claims[claim_id]["entity_ids"])


def test_fact_checker_assesses_every_claim_and_changes_confidence(chain: Chain) -> None:
    before = {c["id"]: c for c in chain.before_check["claims"]}
    scores = {s["claim_id"]: s for s in chain.graph["fact-checker"]["confidence_scores"]}
    assert set(scores) == set(before)
    for claim_id, score in scores.items():
        assert score["status"] == "single-source"  # eight papers on eight topics: nothing repeats
        assert score["confidence"] == pytest.approx(before[claim_id]["confidence"] - 0.05)
        assert before[claim_id]["evidence"][0]["source_id"] in score["supporting_source_ids"]
    assessed = next(c for c in chain.graph["claims"] if c["id"] in scores)
    assert assessed["assessments"][0]["by"] == "fact-checker"


def test_synthesis_outline_cites_only_verified_claims(chain: Chain) -> None:
    graph = chain.graph
    space = graph["synthesis-agent"]
    outline = space["report_outline"]
    assert [s["heading"] for s in outline["sections"]] == ["Answer", *SECTIONS]
    texts = [outline["summary"], *(p["text"] for s in outline["sections"] for p in s["paragraphs"])]
    claims = {c["id"]: c for c in graph["claims"]}
    cited = {ref for text in texts for _, _, refs in find_markers(text) for ref in refs}
    assert len(cited) >= 5
    for ref in cited:
        assert any(e["verification"]["verified"] for e in claims[ref]["evidence"])
        assert any(normalize(claims[ref]["statement"]) + f" [@{ref}]" in normalize(t) for t in texts)
    problems = check_outline(outline, claim_resolver(graph, "synthesis-agent"), claim_lookup(graph),
                             "artifacts/synthesis-agent/report-outline.json", "")
    assert problems == []


def test_synthesis_findings_coverage_and_gaps_follow_the_plan(chain: Chain) -> None:
    space = chain.graph["synthesis-agent"]
    claims = {c["id"]: c for c in chain.graph["claims"]}
    for finding in space["key_findings"]:
        assert finding["statement"] == claims[finding["claim_ids"][0]]["statement"]
    plan_ids = {f"research-planner:{q['id']}" for q in chain.graph["research-planner"]["sub_questions"]}
    coverage = {e["sub_question_id"]: e for e in space["coverage"]}
    assert set(coverage) == plan_ids
    assert coverage["research-planner:Q1"]["status"] == "covered"
    open_questions = {g["sub_question_id"] for g in space.get("gaps", []) if "sub_question_id" in g}
    assert open_questions == {q for q, e in coverage.items() if e["status"] != "covered"}


def normalize(text: str) -> str:
    return " ".join(text.split())


# --- other sessions --------------------------------------------------------------------------


def test_library_ingestion_keeps_937_records_within_the_budget(tmp_path: Path) -> None:
    session = new_session(tmp_path)
    library = ARXIV_LIBRARY
    assert session.run("pdf-analyzer", "pdf-analyzer", inputs={"libraries": [str(library)]}) == "merged"
    sources = session.graph()["pdf-analyzer"]["sources"]
    assert len(sources) == 937 and all(len(s.get("abstract", "")) <= 600 for s in sources)
    assert all(s.get("arxiv_id") and s["url"].startswith("https://arxiv.org/abs/") for s in sources)
    files = list(session.folder("pdf-analyzer").glob("*.json"))
    assert len(files) > 2 and sum(f.stat().st_size for f in files) < 4 * 1024 * 1024
    assert all(f.stat().st_size <= 65_536 for f in files)
    assert all(session.paths.source_text(s["content_sha256"]).exists() for s in sources)
    session.processor.close()


def test_fact_checker_finds_corroboration_and_contradiction(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    texts = {
        "a.txt": "Regular aerobic exercise increased hippocampal volume in older adults over twelve months "
                 "of supervised training.\nParticipants walked three times a week under supervision.",
        "b.txt": "In an independent cohort, regular aerobic exercise increased hippocampal volume in older "
                 "adults after twelve months.\nVolumes were measured with magnetic resonance imaging.",
        "c.txt": "Daily caffeine intake decreased total sleep duration in healthy older adults during the "
                 "four week observation period.\nSleep was recorded with wrist-worn devices.",
        "d.txt": "Daily caffeine intake increased total sleep duration in healthy older adults during the "
                 "four week observation period.\nParticipants kept diaries of their coffee consumption.",
    }
    for name, text in texts.items():
        (docs / name).write_text(text, encoding="utf-8")
    session = new_session(tmp_path / "s", "How do aerobic exercise and caffeine intake affect older adults?")
    assert session.run("research-planner", "research-planner") == "merged"
    assert session.run("pdf-analyzer", "pdf-analyzer", inputs={"input_dirs": [str(docs)]}) == "merged"
    assert session.run("academic-researcher", "academic-researcher",
                       sub_questions=session.sub_questions()[:1]) == "merged"
    assert session.run("fact-checker", "fact-checker") == "merged"
    graph = session.graph()
    status: dict[str, list[str]] = {}
    for claim in graph["claims"]:
        status.setdefault(claim["statement"][:12], []).append(claim["assessments"][0]["status"])
    assert status["Regular aero"] == ["corroborated"] and status["In an indepe"] == ["corroborated"]
    assert status["Daily caffei"] == ["contradicted", "contradicted"]
    contradiction = graph["contradictions"][0]
    assert "opposite directions" in contradiction["description"]
    caffeine = {c["id"] for c in graph["claims"] if "caffeine" in c["statement"]}
    assert set(contradiction["claim_ids"]) == caffeine
    corroborated = next(c for c in graph["claims"] if c["statement"].startswith("Regular"))
    assert corroborated["assessments"][0]["confidence"] > corroborated["confidence"]
    session.processor.close()


def test_retry_corrects_a_misquoted_claim_and_drops_an_unsupported_one(chain: Chain) -> None:
    """A real rejection: two high-priority claims quote text the source does not hold."""
    session, agent = chain.session, "academic-researcher-retry"
    questions = [  # papers nobody in the chain has quoted yet; the plan has one question, these answer it
        {"id": "research-planner:Q2", "answers": "research-planner:Q1",
         "question": "How should human evaluation of faithfulness in long-form "
         "summarization be done?", "keywords": ["LongEval", "faithfulness", "summarization"]},
        {"id": "research-planner:Q3", "answers": "research-planner:Q1",
         "question": "What barriers hinder quality improvement at the hospital "
         "in Malawi?", "keywords": ["quality improvement", "barriers", "Malawi"]},
    ]
    context = AgentContext(write_task(session.paths, agent, "academic-researcher", sub_questions=questions))
    session.kinds[agent] = "academic-researcher"
    researcher.run(context)
    folder = session.folder(agent)
    original = json.loads((folder / "claims.json").read_text())["claims"]
    tampered = json.loads(json.dumps(original))
    highs = [i for i, c in enumerate(tampered) if c["priority"] == "high"]
    misquoted, invented = tampered[highs[0]], tampered[highs[1]]
    snippet = misquoted["evidence"][0]["snippet"]
    misquoted["evidence"][0]["snippet"] = snippet[: len(snippet) // 2] + " and nothing else was measured."
    # invented through and through: a statement that is not in the source either (a real statement with a bad
    # snippet may be re-quoted from the passage the check found closest, which can be its own sentence)
    nonsense = "Wheat plants sing loudly at night whenever the moon is full."
    invented["statement"] = invented["evidence"][0]["snippet"] = nonsense
    (folder / "claims.json").write_text(json.dumps({"claims": tampered}))
    # a relationship resting on either claim is not stated by a verified passage (relationship.unsupported:
    # support is read from the verified passage only): this test is about the two claims, so the tamper leaves
    # out the relationships they could no longer carry
    links = json.loads((folder / "relationships.json").read_text())["relationships"]
    kept = [r for r in links if not {invented["id"], misquoted["id"]} & set(r["claim_ids"])]
    (folder / "relationships.json").write_text(json.dumps({"relationships": kept}))
    assert [o.status for o in session.processor.process_pending()] == ["rejected"]
    instructions = json.loads(session.paths.retry_instructions(agent).read_text())
    assert {v["pointer"] for v in instructions["shacl_violations"]} == {f"/claims/{i}" for i in highs[:2]}
    # the runner sets the rejected files aside before the retry starts
    aside = session.paths.state / "attempts" / f"{agent}-1"
    aside.parent.mkdir(exist_ok=True)
    os.replace(folder, aside)
    folder.mkdir()
    session.paths.lock_error(agent).unlink()
    assert session.run(agent, "academic-researcher", attempt=2, sub_questions=questions,
                       retry=instructions) == "merged"
    retried = json.loads((folder / "claims.json").read_text())["claims"]
    assert [c["id"] for c in retried] == [c["id"] for c in original if c["id"] != invented["id"]]
    assert retried == [c for c in original if c["id"] != invented["id"]]  # the misquote is re-quoted
    notes = json.loads((folder / "completion.json").read_text())["notes"]
    assert f"corrected claims.json /claims/{highs[0]} ({misquoted['id']})" in notes
    assert f"dropped claims.json /claims/{highs[1]} ({invented['id']})" in notes
    relationships = json.loads((folder / "relationships.json").read_text())["relationships"]
    assert all(invented["id"] not in r["claim_ids"] for r in relationships)


def test_retry_drops_exactly_the_claim_a_hand_made_document_names(chain: Chain) -> None:
    session, agent = chain.session, "academic-researcher-3"
    questions = [{"id": "research-planner:Q4", "answers": "research-planner:Q1",
                  "keywords": ["VESPA", "selective pressure", "evolutionary"],
                  "question": "How does VESPA analyse selective pressure in evolutionary studies?"}]
    assert session.run(agent, "academic-researcher", sub_questions=questions) == "merged"
    folder = session.folder(agent)
    before = {p.name: json.loads(p.read_text()) for p in folder.glob("*.json") if p.name != "completion.json"}
    claims = before["claims.json"]["claims"]
    named = claims[2]
    instructions = {
        "agent": agent, "attempt": 1, "max_attempts": 3, "error_class": "evidence",
        "files": [{"path": f"artifacts/{agent}/claims.json", "size": 1, "problems": [{
            "file": f"artifacts/{agent}/claims.json", "pointer": "/claims/2/evidence/0/snippet",
            "rule": "evidence.unverified", "severity": "error", "message": "the snippet was not found",
            "hint": "quote the source verbatim"}]}],
        "shacl_violations": [], "action_required": "Fix the 1 problem listed under 'files'.",
        "created_at": "2026-01-01T00:00:00.000Z", "lock_file": f"{agent}.kg.lock.error",
        "artifact_dir": f"artifacts/{agent}/",
    }
    assert session.run(agent, "academic-researcher", attempt=2, sub_questions=questions,
                       retry=instructions) == "merged"
    after = {p.name: json.loads(p.read_text()) for p in folder.glob("*.json") if p.name != "completion.json"}
    assert after["claims.json"]["claims"] == [c for c in claims if c["id"] != named["id"]]
    for name in set(before) - {"claims.json", "relationships.json"}:
        assert after[name] == before[name]
    kept = [{**r, "claim_ids": [c for c in r["claim_ids"] if c != named["id"]]}
            for r in before["relationships.json"]["relationships"]]  # a relationship loses that support
    assert after["relationships.json"]["relationships"] == [r for r in kept if r["claim_ids"]]
    notes = json.loads((folder / "completion.json").read_text())["notes"]
    assert notes.startswith(f"Retry: dropped claims.json /claims/2 ({named['id']})")
    assert named["id"] not in {c["local_id"] for c in claims_of(session.graph(), agent)}


def test_agents_run_as_processes_through_the_package_entry_point(tmp_path: Path) -> None:
    session = new_session(tmp_path)
    task = write_task(session.paths, "research-planner", "research-planner")
    result = subprocess.run([sys.executable, "-m", "agents", "--task", str(task)], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    session.kinds["research-planner"] = "research-planner"
    assert [o.status for o in session.processor.process_pending()] == ["merged"]
    plan = json.loads((session.folder("research-planner") / "plan.json").read_text())
    assert plan == planner.make_plan(QUERY)
    session.processor.close()


def test_retry_of_the_synthesis_removes_a_named_reference_and_a_named_finding(chain: Chain) -> None:
    session, agent = chain.session, "synthesis-agent"
    folder = session.folder(agent)
    before = {p.name: json.loads(p.read_text()) for p in folder.glob("*.json") if p.name != "completion.json"}
    coverage = before["coverage.json"]["coverage"]
    assert len(coverage[0]["claim_ids"]) >= 2
    problem = {"severity": "error", "rule": "reference.unresolved", "message": "no such claim",
               "hint": "remove it"}
    instructions = {
        "agent": agent, "attempt": 1, "max_attempts": 3, "error_class": "reference", "shacl_violations": [],
        "files": [
            {"path": f"artifacts/{agent}/coverage.json", "size": 1, "problems": [
                {**problem, "file": f"artifacts/{agent}/coverage.json",
                 "pointer": "/coverage/0/claim_ids/1"}]},
            {"path": f"artifacts/{agent}/key-findings.json", "size": 1, "problems": [
                {**problem, "file": f"artifacts/{agent}/key-findings.json", "pointer": "/key_findings/0"}]},
        ],
        "action_required": "Fix the 2 problems listed under 'files'.",
        "created_at": "2026-01-01T00:00:00.000Z",
        "lock_file": f"{agent}.kg.lock.error", "artifact_dir": f"artifacts/{agent}/",
    }
    assert session.run(agent, "synthesis-agent", attempt=2, retry=instructions) == "merged"
    after = {p.name: json.loads(p.read_text()) for p in folder.glob("*.json") if p.name != "completion.json"}
    expected = json.loads(json.dumps(coverage))
    del expected[0]["claim_ids"][1]
    assert after["coverage.json"]["coverage"] == expected
    assert after["key-findings.json"]["key_findings"] == before["key-findings.json"]["key_findings"][1:]
    assert after["report-outline.json"] == before["report-outline.json"]


def test_a_question_about_named_sources_quotes_only_them_and_answers_its_plan_question(chain: Chain) -> None:
    graph = chain.session.graph()
    longeval = next(s["id"] for s in graph["sources"] if "longeval" in str(s.get("title", "")).lower())
    question = {"id": "source-longeval", "question": "What does LongEval report about human evaluation?",
                "keywords": ["human evaluation", "faithfulness", "annotators"], "source_ids": [longeval],
                "answers": "research-planner:Q1"}
    assert chain.session.run("academic-researcher-i9-1", "academic-researcher", sub_questions=[question]) == "merged"
    claims = claims_of(chain.session.graph(), "academic-researcher-i9-1")
    assert claims and all(c["evidence"][0]["source_id"] == longeval for c in claims)
    assert {c["sub_question_id"] for c in claims} == {"research-planner:Q1"}


def test_a_paper_that_does_not_answer_its_targeted_question_is_a_low_gap() -> None:
    from agents.offline.researcher import _gap

    targeted = {"id": "source-S3", "question": "What does “Paper” report about: q?", "source_ids": ["a:S3"],
                "answers": "research-planner:Q1"}
    assert _gap(targeted, 0, 8)["priority"] == "low"
    assert _gap(targeted, 0, 8)["sub_question_id"] == "research-planner:Q1"
    plain = {"id": "research-planner:Q2", "question": "How many papers?"}
    assert _gap(plain, 0, 8)["priority"] == "high" and _gap(plain, 1, 8)["priority"] == "medium"
