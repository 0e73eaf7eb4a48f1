"""--describe-figures: each figure's image, caption and nearby text go to a vision model through the real SDK."""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agents.claude import figures
from agents.claude.client import ClaudeClient
from agents.claude.config import ClaudeConfig
from agents.runtime import AgentContext
from orchestrator.model.clock import iso_timestamp
from orchestrator.model.layout import SessionPaths
from tests import fake_anthropic as fa
from tests.conftest import merge_pending
from tests.helpers.data import PAPERS

KEY = "sk-ant-test-SECRET123"


def _task(paths: SessionPaths, folder: Path, attempt: int, **options: Any) -> AgentContext:
    data = {"agent": "pdf-analyzer", "definition": "pdf-analyzer", "attempt": attempt, "max_attempts": 3,
            "session": str(paths.root), "query": "What do the figures show?", "phase": "ingestion",
            "backend": "anthropic", "inputs": {"input_dirs": [str(folder)], "graph": str(paths.kg_json)},
            "sub_questions": [], "options": {"budget_usd": 5.0, **options}, "created_at": iso_timestamp()}
    paths.tasks.mkdir(exist_ok=True)
    path = paths.tasks / f"pdf-analyzer-{attempt}.json"
    path.write_text(json.dumps(data))
    return AgentContext(path)


def _client(context: AgentContext, fake: fa.FakeAnthropic) -> ClaudeClient:
    return ClaudeClient.for_context(context, "cheap", config=ClaudeConfig(max_retries=1),
                                    http_client=fake.http_client(), api_key=KEY)


def _describes(request: dict[str, Any]) -> dict[str, Any]:
    image, prompt = request["messages"][0]["content"]
    assert image["type"] == "image" and image["source"]["media_type"] == "image/png"
    assert base64.b64decode(image["source"]["data"]).startswith(b"\x89PNG")
    assert prompt["type"] == "text" and "Caption: Figure" in prompt["text"] and "Text near the figure" in prompt["text"]
    label = prompt["text"].split(" of the paper")[0]
    return fa.message([fa.text(f"A chart for {label}: bars rise from left to right.")],
                      use=fa.usage(input_tokens=1500, output_tokens=40))


@pytest.fixture()
def paper(tmp_path: Path) -> Path:
    folder = tmp_path / "papers"
    folder.mkdir()
    shutil.copy(PAPERS / "acl-2020-main-447_s2orc.pdf", folder)
    return folder


def test_each_figure_is_described_priced_cached_and_merged(session: SessionPaths, paper: Path,
                                                           tmp_path: Path) -> None:
    fake = fa.FakeAnthropic(*([_describes] * 4))
    context = _task(session, paper, 1, describe_figures=True)
    figures.run(context, client=_client(context, fake), cache=tmp_path / "cache")
    fake.assert_done()
    assert len(fake.requests) == 4  # Figures 1-4 of the paper
    written = json.loads((session.agent_artifacts("pdf-analyzer") / "figures.json").read_text())["figures"]
    for figure in written:
        assert figure["description"] == f"A chart for {figure['label']}: bars rise from left to right."
        assert figure["description_by"]["image_sha256"] == figure["image_sha256"]
    costs = [json.loads(line) for line in (session.root / "costs.jsonl").read_text().splitlines()]
    assert len(costs) == 4 and all(c["agent"] == "pdf-analyzer" and c["cost_usd"] > 0 for c in costs)
    assert merge_pending(session) == {"pdf-analyzer": "merged"}
    graph = json.loads(session.kg_json.read_text())
    assert all(f["description"].startswith("A chart for Figure") for f in graph["figures"])
    assert "SECRET123" not in (session.root / "costs.jsonl").read_text()

    again = fa.FakeAnthropic()  # the same images: every description comes from the cache, nothing is paid
    context = _task(session, paper, 2, describe_figures=True)
    figures.run(context, client=_client(context, again), cache=tmp_path / "cache")
    assert again.requests == []
    assert len((session.root / "costs.jsonl").read_text().splitlines()) == 4


def test_a_failed_description_costs_that_description_not_the_ingestion(session: SessionPaths, paper: Path,
                                                                       tmp_path: Path) -> None:
    refused = fa.error(400, "invalid_request_error", "image could not be processed")
    fake = fa.FakeAnthropic(refused, _describes, _describes, _describes)
    context = _task(session, paper, 1, describe_figures=True)
    figures.run(context, client=_client(context, fake), cache=tmp_path / "cache")
    written = json.loads((session.agent_artifacts("pdf-analyzer") / "figures.json").read_text())["figures"]
    assert [("description" in f) for f in written] == [False, True, True, True]
    manifest = json.loads((session.agent_artifacts("pdf-analyzer") / "manifest.json").read_text())
    assert any("figure not described: Figure 1" in n["reason"] for n in manifest["structure_notes"])
    assert merge_pending(session) == {"pdf-analyzer": "merged"}


def test_without_the_option_no_model_is_called(session: SessionPaths, paper: Path) -> None:
    context = _task(session, paper, 1)
    figures.run(context, make_client=lambda c: pytest.fail("no client without --describe-figures"))
    written = json.loads((session.agent_artifacts("pdf-analyzer") / "figures.json").read_text())["figures"]
    assert len(written) == 4 and not any("description" in f for f in written)


def test_the_option_needs_claude_and_is_priced_in_the_dry_run(paper: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from orchestrator.cli import main

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    offline = CliRunner().invoke(main, ["run", "q?", "--input-dir", str(paper), "--backend", "offline",
                                        "--describe-figures"])
    assert offline.exit_code == 2 and "--describe-figures needs a vision model" in offline.output
    dry = CliRunner().invoke(main, ["run", "q?", "--input-dir", str(paper), "--backend", "anthropic", "--dry-run",
                                    "--describe-figures", "--json"])
    assert dry.exit_code == 0, dry.output
    plan = json.loads(dry.output)["plan"]
    line = next(p for p in plan if p.strip().startswith("figures"))
    assert "2-8 description(s) of 1 PDF(s)" in line
