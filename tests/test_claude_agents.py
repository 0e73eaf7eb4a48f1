"""The Claude agents end to end: fake Messages API in, artifacts out, merged by the real pipeline."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agents.claude import factchecker, planner, researcher, synthesis
from agents.claude.client import ClaudeClient
from agents.claude.config import ClaudeConfig
from agents.claude.errors import EXIT_BUDGET_EXCEEDED
from agents.runtime import AgentContext
from orchestrator.model.clock import iso_timestamp
from orchestrator.model.layout import SessionPaths
from orchestrator.run.definitions import load_definitions
from orchestrator.session.agent_failures import EXIT_AGENT_FAILED, read_failure
from tests import fake_anthropic as fa
from tests.conftest import REPO, merge_pending, store_text, write_artifacts
from tests.test_claude_client import FakeScholar

KEY = "sk-ant-test-SECRET123"
QUESTION = {"id": "research-planner:Q1", "question": "Why is the sky blue?", "keywords": ["Rayleigh"]}
PAGE_2 = (
    "Rayleigh scattering makes the daytime sky appear blue to observers. Sunsets look red near the horizon."
)


def merge(paths: SessionPaths) -> dict[str, str]:
    definitions = load_definitions()
    return merge_pending(
        paths,
        required_files=lambda a: (
            definitions[a.split("-i")[0]].required_files if a.split("-i")[0] in definitions else ()
        ),
    )


def graph(paths: SessionPaths) -> dict[str, Any]:
    return dict(json.loads(paths.kg_json.read_text()))


def completion(agent: str) -> dict[str, Any]:
    return {"agent": agent, "status": "completed", "summary": "done", "completed_at": iso_timestamp()}


@pytest.fixture
def ingested(session: SessionPaths) -> SessionPaths:
    sha = store_text(session, "Sky optics, an introduction.\f" + PAGE_2)
    write_artifacts(
        session,
        "pdf-analyzer",
        {
            "sources.json": {
                "sources": [
                    {
                        "id": "S1",
                        "type": "journal-article",
                        "title": "Sky optics",
                        "year": 2001,
                        "content_sha256": sha,
                    }
                ]
            },
            "completion.json": completion("pdf-analyzer"),
        },
    )
    assert merge(session) == {"pdf-analyzer": "merged"}
    return session


def task(paths: SessionPaths, agent: str, definition: str, *, attempt: int = 1, **extra: Any) -> AgentContext:
    data = {
        "agent": agent,
        "definition": definition,
        "attempt": attempt,
        "max_attempts": 3,
        "session": str(paths.root),
        "query": "Why is the sky blue?",
        "phase": "research",
        "backend": "anthropic",
        "inputs": {"graph": str(paths.kg_json)},
        "sub_questions": [QUESTION],
        "options": {"evidence_threshold": 90.0, "max_claims_per_question": 6},
        "created_at": iso_timestamp(),
        **extra,
    }
    paths.tasks.mkdir(exist_ok=True)
    path = paths.tasks / f"{agent}-{attempt}.json"
    path.write_text(json.dumps(data))
    return AgentContext(path)


def client_for(context: AgentContext, fake: fa.FakeAnthropic, tier: str = "research") -> ClaudeClient:
    log = context.paths.logs / f"{context.task.agent}-{context.task.attempt}.log"
    log.parent.mkdir(exist_ok=True)
    return ClaudeClient.for_context(
        context,
        tier,
        config=ClaudeConfig(max_retries=1),
        http_client=fake.http_client(),
        api_key=KEY,
        log=log.open("a"),
    )


def claim(cid: str, source: str, snippet: str, page: int, **extra: Any) -> dict[str, Any]:
    return {
        "id": cid,
        "statement": f"{snippet}.",
        "confidence": 0.8,
        "priority": "high",
        "evidence": [{"source_id": source, "snippet": snippet, "locator": {"page": page}}],
        "sub_question_id": QUESTION["id"],
        **extra,
    }


def assert_no_secret(root: Path, *texts: str) -> None:
    for path in root.rglob("*"):
        if path.is_file():
            assert b"SECRET123" not in path.read_bytes(), f"the API key leaked into {path}"
    for text in texts:
        assert "SECRET123" not in text


# -- researchers --------------------------------------------------------------------------------


def test_academic_researcher_end_to_end_is_merged(
    ingested: SessionPaths, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = ingested
    system = (REPO / "agents" / "prompts" / "academic-researcher.md").read_text().strip()

    def first(request: dict[str, Any]) -> None:
        assert request["system"][0]["text"] == system and request["tool_choice"] == {"type": "auto"}
        brief = request["messages"][0]["content"][0]["text"]
        assert "pdf-analyzer:S1: Sky optics" in brief and "research-planner:Q1: Why is the sky blue?" in brief

    def after_passages(request: dict[str, Any]) -> None:
        content = fa.tool_results(request)[0]["content"]
        assert "source_id=pdf-analyzer:S1 page=2" in content and "Rayleigh scattering makes" in content

    submission = {
        "sources": [
            {
                "id": "P1",
                "type": "journal-article",
                "title": "On the colour of the sky",
                "venue": "Philosophical Magazine",
                "content_sha256": "0" * 64,
            }
        ],
        "claims": [
            claim("C1", "pdf-analyzer:S1", "Rayleigh scattering makes the daytime sky appear blue", 2),
            claim(
                "C2", "P1", "Small particles scatter blue light far more than red light", 2, entity_ids=["E1"]
            ),
        ],
        "entities": [{"id": "E1", "name": "Rayleigh scattering", "type": "concept"}],
        "relationships": [{"subject": "E1", "predicate": "explains", "object": "C1"}],
        "gaps": [
            {
                "description": "No measurements of sky colour at altitude.",
                "priority": "low",
                "sub_question_id": QUESTION["id"],
            }
        ],
    }
    fake = fa.FakeAnthropic(
        fa.calls("search_passages", {"query": "sky blue scattering"}, check=first),
        fa.calls("search_papers", {"query": "colour of the sky"}, check=after_passages),
        fa.calls("fetch_open_access_pdf", {"identifier": "10.1234/sky"}),
        fa.calls("submit_research", submission, use=fa.usage(5000, 900, cache_read=4000)),
    )
    context = task(paths, "academic-researcher", "academic-researcher")
    researcher.run(context, client=client_for(context, fake), backend=FakeScholar())
    fake.assert_done()
    completion = json.loads((context.folder / "completion.json").read_text())
    assert completion["status"] == "completed" and "2 claim(s) from 2 source(s)" in completion["summary"]
    assert merge(paths) == {"academic-researcher": "merged"}
    kg = graph(paths)
    claims = {c["id"]: c for c in kg["claims"]}
    assert claims["academic-researcher:C1"]["evidence"][0]["source_id"] == "pdf-analyzer:S1"
    assert all(c["evidence"][0]["verification"]["verified"] for c in claims.values())
    p1 = next(s for s in kg["academic-researcher"]["sources"] if s["id"] == "P1")
    assert p1["content_sha256"] != "0" * 64 and p1["venue"] == "Philosophical Magazine"  # text hash is ours
    lines = [json.loads(line) for line in (paths.root / "costs.jsonl").read_text().splitlines()]
    assert [line["agent"] for line in lines] == ["academic-researcher"] * 4
    assert all(line["request_id"].startswith("req_fake") for line in lines)
    log = (paths.logs / "academic-researcher-1.log").read_text()
    assert lines[-1]["request_id"] in log
    assert_no_secret(paths.root, *capsys.readouterr())


def test_researcher_fixes_a_misquoted_snippet_within_the_attempt(ingested: SessionPaths) -> None:
    wrong = {
        "claims": [claim("C1", "pdf-analyzer:S1", "Rayleigh scattering causes the blue colour of the sky", 2)]
    }
    right = {
        "claims": [claim("C1", "pdf-analyzer:S1", "Rayleigh scattering makes the daytime sky appear blue", 2)]
    }

    def reasked(request: dict[str, Any]) -> None:
        feedback = fa.tool_results(request)[0]
        assert feedback["is_error"] and "/claims/0/evidence/0/snippet" in feedback["content"]
        assert (
            'closest passage (page 2) is "Rayleigh scattering makes the daytime sky appear blue'
            in (feedback["content"])
        )

    fake = fa.FakeAnthropic(fa.calls("submit_research", wrong), fa.forced(right, check=reasked))
    context = task(ingested, "academic-researcher-i1-1", "academic-researcher")
    researcher.run(context, client=client_for(context, fake), backend=FakeScholar())
    fake.assert_done()
    assert merge(ingested) == {"academic-researcher-i1-1": "merged"}


def test_web_researcher_stores_fetched_pages_and_cites_them(ingested: SessionPaths) -> None:
    page = "Blue light is scattered more than other colours because it travels as shorter, smaller waves."
    fetched = [
        fa.server_tool_use("web_fetch", {"url": "https://science.example.gov/sky"}, "srvtoolu_9"),
        fa.web_fetch_result("srvtoolu_9", "https://science.example.gov/sky", page, "Why is the sky blue?"),
        fa.text("The page explains it."),
    ]
    answer = {
        "sources": [
            {
                "id": "W1",
                "type": "documentation",
                "title": "Why is the sky blue?",
                "publisher": "Example Science",
            }
        ],
        "claims": [claim("C1", "W1", "Blue light is scattered more than other colours", 1)],
    }

    def research(request: dict[str, Any]) -> dict[str, Any]:
        assert [t["name"] for t in request["tools"]] == [
            "web_search",
            "web_fetch",
            "search_passages",
            "read_source_page",
            "submit_research",
        ]
        return fa.message(fetched, "end_turn", use=fa.usage(900, 80, fetches=1))

    def submit(request: dict[str, Any]) -> None:
        # Sonnet 5.5 answers as structured output: a separate request, the research as plain text, no tools
        assert "source_id=W1" in fa.all_text(request) and page in fa.all_text(request)
        assert len(request["messages"]) == 1 and "tools" not in request

    fake = fa.FakeAnthropic(research, fa.forced(answer, check=submit))
    context = task(ingested, "web-researcher", "web-researcher")
    researcher.run(context, client=client_for(context, fake))
    fake.assert_done()
    assert merge(ingested) == {"web-researcher": "merged"}
    kg = graph(ingested)
    w1 = kg["web-researcher"]["sources"][0]
    assert (w1["url"], w1["type"], w1["publisher"]) == (
        "https://science.example.gov/sky",
        "documentation",
        "Example Science",
    )
    assert kg["claims"][0]["evidence"][0]["verification"]["verified"] is True


def test_retry_prompt_lists_the_problems_and_starts_from_the_previous_files(ingested: SessionPaths) -> None:
    agent = "academic-researcher-i1-1"
    paper = "On the colour of the sky.\fSmall particles scatter blue light far more than red light."
    p1 = {"id": "P1", "type": "journal-article", "title": "On the colour of the sky",
          "content_sha256": store_text(ingested, paper)}
    previous = {
        "claims": [
            claim("C1", "P1", "Small particles scatter blue light far more than red light", 2),
            claim("C2", "pdf-analyzer:S1", "Sunsets are green", 2),
        ]
    }
    aside = ingested.state / "attempts" / f"{agent}-1"
    aside.mkdir(parents=True)
    (aside / "claims.json").write_text(json.dumps(previous))
    (aside / "sources.json").write_text(json.dumps({"sources": [p1]}))
    instructions = {
        "agent": agent,
        "attempt": 1,
        "max_attempts": 3,
        "error_class": "shacl",
        "files": [],
        "action_required": "Quote the sources verbatim in the claims named below, then lock again.",
        "shacl_violations": [
            {
                "focus_node": f"{agent}:C2",
                "path": None,
                "file": f"artifacts/{agent}/claims.json",
                "pointer": "/claims/1",
                "severity": "error",
                "preview": None,
                "message": "high-priority claim C2 has no verified evidence; the closest passage is "
                '"sunsets look red near the horizon"',
                "hint": "quote the source verbatim or lower the priority",
            }
        ],
        "created_at": iso_timestamp(),
        "lock_file": f"{agent}.kg.lock",
        "artifact_dir": f"artifacts/{agent}",
    }
    fixed = {
        "claims": [
            previous["claims"][0],
            claim("C2", "pdf-analyzer:S1", "Sunsets look red near the horizon", 2),
        ]
    }

    def first(request: dict[str, Any]) -> None:
        brief = request["messages"][0]["content"][0]["text"]
        assert "# Retry: attempt 2 of 3" in brief and "Correct ONLY what the problems below name" in brief
        assert "claims.json at /claims/1: high-priority claim C2 has no verified evidence" in brief
        assert "Sunsets are green" in brief and "<previous-files>" in brief

    fake = fa.FakeAnthropic(fa.calls("submit_research", fixed, check=first))
    context = task(ingested, agent, "academic-researcher", attempt=2, retry_instructions=instructions)
    researcher.run(context, client=client_for(context, fake), backend=FakeScholar())
    fake.assert_done()
    assert merge(ingested) == {agent: "merged"}  # P1 was kept from the rejected attempt, not re-fetched
    kg = graph(ingested)
    assert [c["local_id"] for c in kg["claims"]] == ["C1", "C2"]
    assert kg[agent]["sources"] == [p1 | {"id": "P1"}]


# -- planner, fact-checker, synthesis ---------------------------------------------------------------


def test_planner_forces_the_plan_on_the_cheap_tier(session: SessionPaths) -> None:
    plan = {
        "query": "why blue",
        "strategy": "Physics first.",
        "sub_questions": [
            {
                "id": "Q1",
                "question": "What scatters light in air?",
                "priority": "high",
                "keywords": ["Rayleigh"],
            },
            {"id": "Q2", "question": "Why are sunsets red?", "priority": "medium"},
        ],
    }

    def check(request: dict[str, Any]) -> None:
        assert request["model"] == "claude-haiku-5-5" and "Key Findings" in fa.all_text(request)

    fake = fa.FakeAnthropic(fa.forced(plan, check=check))
    context = task(
        session,
        "research-planner",
        "research-planner",
        phase="planning",
        sub_questions=[],
        required_sections=["Key Findings"],
    )
    planner.run(context, client=client_for(context, fake, "cheap"))
    fake.assert_done()
    assert json.loads((context.folder / "plan.json").read_text())["query"] == "Why is the sky blue?"
    assert merge(session) == {"research-planner": "merged"}


def _researched(paths: SessionPaths) -> SessionPaths:
    write_artifacts(
        paths,
        "academic-researcher",
        {
            "claims.json": {
                "claims": [
                    claim("C1", "pdf-analyzer:S1", "Rayleigh scattering makes the daytime sky appear blue", 2)
                ]
            },
            "completion.json": completion("academic-researcher"),
        },
    )
    assert merge(paths) == {"academic-researcher": "merged"}
    return paths


def test_fact_checker_scores_the_graph_claims(ingested: SessionPaths) -> None:
    paths = _researched(ingested)
    scores = {
        "confidence_scores": [
            {
                "claim_id": "academic-researcher:C1",
                "confidence": 0.7,
                "status": "single-source",
                "rationale": "Only pdf-analyzer:S1 p.2 says so.",
                "supporting_source_ids": ["pdf-analyzer:S1"],
            }
        ]
    }

    def first(request: dict[str, Any]) -> None:
        text = fa.all_text(request)
        assert "academic-researcher:C1 [high" in text and "(verified)" in text

    fake = fa.FakeAnthropic(
        fa.calls("search_passages", {"query": "sky blue"}, check=first), fa.calls("submit_assessment", scores)
    )
    context = task(paths, "fact-checker", "fact-checker", phase="fact_check")
    factchecker.run(context, client=client_for(context, fake))
    fake.assert_done()
    assert merge(paths) == {"fact-checker": "merged"}
    assert graph(paths)["claims"][0]["assessments"][0]["status"] == "single-source"


def test_synthesis_cites_only_verified_claims(ingested: SessionPaths) -> None:
    paths = _researched(ingested)

    def outline(marker: str) -> dict[str, Any]:
        return {
            "key_findings": [
                {
                    "statement": "Rayleigh scattering explains the blue sky.",
                    "claim_ids": ["academic-researcher:C1"],
                    "importance": "high",
                }
            ],
            "coverage": [
                {
                    "sub_question_id": QUESTION["id"],
                    "status": "covered",
                    "claim_ids": ["academic-researcher:C1"],
                }
            ],
            "report_outline": {
                "title": "Why the sky is blue",
                "sections": [
                    {
                        "heading": "Key Findings",
                        "paragraphs": [{"text": f"Scattering makes it blue {marker}."}],
                    }
                ],
            },
        }

    def reasked(request: dict[str, Any]) -> None:
        # Sonnet 5.5 answers as structured output, so the problems come back as text, not a tool result
        content = json.dumps(fa.last_user_blocks(request))
        assert "citation.unresolved" in content and "nobody:C9" in content
        assert "Your JSON answer was not accepted" in content

    fake = fa.FakeAnthropic(
        fa.forced(outline("[@nobody:C9]")), fa.forced(outline("[@academic-researcher:C1]"), check=reasked)
    )
    context = task(
        paths, "synthesis-agent", "synthesis-agent", phase="synthesis", required_sections=["Key Findings"]
    )
    synthesis.run(context, client=client_for(context, fake))
    fake.assert_done()
    assert merge(paths) == {"synthesis-agent": "merged"}
    assert "[@academic-researcher:C1]" in json.dumps(graph(paths)["synthesis-agent"]["report_outline"])


# -- budget, prompts ----------------------------------------------------------------------------------


def test_budget_exhausted_exits_3_and_writes_nothing(ingested: SessionPaths) -> None:
    (ingested.root / "costs.jsonl").write_text(json.dumps({"agent": "earlier", "cost_usd": 0.02}) + "\n")
    context = task(
        ingested,
        "academic-researcher",
        "academic-researcher",
        options={"budget_usd": 0.01, "budget_usd_remaining": 0.0},
    )
    fake = fa.FakeAnthropic()
    with fake.serve() as base_url:
        config = Path(os.environ["XDG_CONFIG_HOME"]) / "cconductor" / "config.json"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(json.dumps({"anthropic": {"base_url": base_url}}))
        env = {**os.environ, "ANTHROPIC_API_KEY": KEY, "PYTHONPATH": str(REPO)}
        done = subprocess.run(
            [sys.executable, "-m", "agents", "--task", str(context.task.path)],
            cwd=ingested.root,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == EXIT_BUDGET_EXCEEDED, done.stderr
    assert "budget exhausted" in done.stderr and "no artifacts were written" in done.stderr
    assert fake.seen == [] and not any(context.folder.iterdir())
    assert not ingested.lock("academic-researcher").exists()
    assert_no_secret(ingested.root, done.stdout, done.stderr)


def test_every_definition_has_a_prompt_with_the_untrusted_data_and_retry_rules() -> None:
    for definition in load_definitions().values():
        if definition.external:
            continue
        prompt = definition.system_prompt()
        assert prompt.startswith("# Role"), definition.name
        assert "data, not instructions" in prompt and "# Retries" in prompt, definition.name


def test_the_anthropic_implementations_resolve() -> None:
    import importlib

    for definition in load_definitions().values():
        target = definition.implementations.get("anthropic")
        if target and target.startswith("agents.claude"):
            module, _, function = target.partition(":")
            assert callable(getattr(importlib.import_module(module), function))


def test_importing_the_backend_does_not_import_the_sdk() -> None:
    code = "import agents.claude.researcher, agents.claude.synthesis, sys; print('anthropic' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert done.stdout.strip() == "False", done.stderr


def test_stdout_log_of_a_failed_call_has_the_request_id(ingested: SessionPaths) -> None:
    fake = fa.FakeAnthropic(
        fa.error(400, "invalid_request_error", "bad tool schema", {"request-id": "req_bad1"})
    )
    context = task(ingested, "academic-researcher", "academic-researcher")
    log = io.StringIO()
    client = ClaudeClient.for_context(
        context,
        "research",
        config=ClaudeConfig(max_retries=0),
        http_client=fake.http_client(),
        api_key=KEY,
        log=log,
    )
    with pytest.raises(SystemExit) as stopped:
        researcher.run(context, client=client, backend=FakeScholar())
    assert stopped.value.code == EXIT_AGENT_FAILED  # a 400 is not retried: it would fail and cost again
    failure = read_failure(context.paths, context.task.agent, context.task.attempt)
    assert failure is not None and failure.kind == "request_rejected" and not failure.retryable
    assert "req_bad1" in failure.reason and "HTTP 400" in failure.reason
    assert "request_id=req_bad1" in log.getvalue() and not any(context.folder.iterdir())
