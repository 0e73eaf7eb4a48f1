"""The web researcher on every current model, against a fake API that refuses what the real one does:
structured outputs together with citations (web search results always carry them), forced tool use
on the models that refuse it. The final answer is a separate request that carries the research as
plain text wherever it must be structured output."""

from __future__ import annotations

from typing import Any

import pytest

from agents.claude import researcher
from agents.claude.client import ClaudeClient
from agents.claude.config import ClaudeConfig, ModelSettings
from agents.claude.errors import ModelRequestRejected
from orchestrator.model.layout import SessionPaths
from tests import fake_anthropic as fa
from tests.test_claude_agents import KEY, claim, graph, ingested, merge, task
from tests.test_claude_client import make_client

__all__ = ["ingested"]  # the fixture, used by name

PAGE = "Blue light is scattered more than other colours because it travels as shorter, smaller waves."
URL = "https://science.example.gov/sky"
CURRENT = ("claude-fable-5-2", "claude-mythos-5-2", "claude-opus-5-5", "claude-sonnet-5-5", "claude-haiku-5-5")


def research_turn(request: fa.Body) -> fa.Body:
    assert [t["name"] for t in request["tools"]][:2] == ["web_search", "web_fetch"]
    cited = {"type": "web_search_result_location", "url": URL, "title": "Why is the sky blue?",
             "encrypted_index": "Eo8BCioIAhgBIiQyYjQ0OWJmZi1lNm", "cited_text": "Blue light is scattered more"}
    return fa.message([
        fa.server_tool_use("web_search", {"query": "why is the sky blue"}, "srvtoolu_s1"),
        fa.web_search_result("srvtoolu_s1", [(URL, "Why is the sky blue?")]),
        {"type": "text", "text": "Blue light is scattered more than red.", "citations": [cited]},
        fa.server_tool_use("web_fetch", {"url": URL}, "srvtoolu_f1"),
        fa.web_fetch_result("srvtoolu_f1", URL, PAGE, "Why is the sky blue?"),
        fa.text("The page explains it."),
    ], "end_turn", model=request["model"], use=fa.usage(900, 80, searches=1, fetches=1))


ANSWER = {
    "sources": [{"id": "W1", "type": "documentation", "title": "Why is the sky blue?"}],
    "claims": [claim("C1", "W1", "Blue light is scattered more than other colours", 1)],
}


def researcher_client(context: Any, fake: fa.FakeAnthropic, model: str) -> ClaudeClient:
    config = ClaudeConfig(tiers={"research": ModelSettings(model, 8192), "cheap": ModelSettings(model, 4096)},
                          max_retries=0, discover_capabilities=False)
    return ClaudeClient.for_context(context, "research", config=config, http_client=fake.http_client(),
                                    api_key=KEY, log=open(context.paths.root / "client.log", "a"))


def test_the_current_lineup_includes_the_default_models() -> None:
    assert {s.model for s in ClaudeConfig().tiers.values()} <= set(CURRENT)


@pytest.mark.parametrize("model", CURRENT)
def test_the_web_researcher_answers_on_every_current_model(ingested: SessionPaths, model: str) -> None:
    forcing = not fa.refuses_forcing(model)

    def submit(request: fa.Body) -> None:
        text = fa.all_text(request)
        assert "source_id=W1" in text and PAGE in text
        if forcing:  # a forced tool call may follow cited content: the conversation goes on
            assert "output_config" not in request and request["messages"][1]["role"] == "assistant"
        else:  # structured output: a separate request, the research as plain text, no citations, no tools
            assert len(request["messages"]) == 1 and "tools" not in request
            assert "web_search_tool_result" not in text and '"citations"' not in text
            assert f"<{URL}>" in text and f"[cited: {URL}]" in text

    fake = fa.FakeAnthropic(research_turn, fa.forced(ANSWER, check=submit))
    context = task(ingested, "web-researcher", "web-researcher")
    researcher.run(context, client=researcher_client(context, fake, model))
    fake.assert_done()
    assert merge(ingested) == {"web-researcher": "merged"}
    evidence = graph(ingested)["claims"][0]["evidence"][0]
    assert evidence["verification"]["verified"] is True


def test_the_fake_refuses_structured_outputs_with_citations_as_the_api_does(tmp_path: Any) -> None:
    cited = research_turn({"tools": [{"name": "web_search"}, {"name": "web_fetch"}], "model": "claude-sonnet-5-5"})
    fake = fa.FakeAnthropic()
    messages = [{"role": "user", "content": "q"}, {"role": "assistant", "content": cited["content"]},
                {"role": "user", "content": "answer now"}]
    with pytest.raises(ModelRequestRejected, match="Citations are not supported with structured outputs") as failed:
        make_client(tmp_path, fake).create(purpose="final", messages=messages,
                                           output_format={"type": "json_schema", "schema": {"type": "object"}})
    assert failed.value.kind == "request_rejected" and len(fake.requests) == 1
