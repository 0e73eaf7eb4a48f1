"""`cconductor ask --backend anthropic`: Claude writes from the retrieved context, the validator judges.

The Messages API is the scripted fake (tests/fake_anthropic.py) reached through the real SDK: in
process through the SDK's ``http_client``, and over 127.0.0.1 from the command line (config
``anthropic.base_url``). The fake answers with one well-cited sentence, one sentence citing a node
the graph does not have, and one fabricated sentence citing a real claim.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agents.ask.claude import ClaudeComposer
from agents.claude.config import load_config, user_config_path
from orchestrator.answers.service import ask
from orchestrator.cli import main
from orchestrator.contract.schemas import SchemaRegistry
from orchestrator.model.layout import SessionPaths
from tests import fake_anthropic as fa
from tests.helpers.ask_session import A, reactor_session

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:rdflib.*")
QUESTION = "How is the Lumen reactor cooled?"
KEY = "sk-ant-test-SECRET-ask-42"
ANSWER = (f"The Lumen reactor is cooled by molten salt that circulates through the core [@{A}:C2]. "
          f"Its salt loop was designed in 1962 by a naval team [@{A}:C404]. "
          f"The Lumen reactor burns coal to heat water for turbines [@{A}:C2].")


def answer_step(seen: list[dict[str, Any]]) -> fa.Step:
    def step(request: dict[str, Any]) -> dict[str, Any]:
        seen.append(request)
        return fa.message([fa.text(ANSWER)], use=fa.usage(900, 120))

    return step


def check_request(request: dict[str, Any]) -> None:
    text = fa.all_text(request)
    assert "ONLY the context items" in text
    assert f"[@{A}:C2] (claim)" in text and "cooled by molten salt" in text  # the node and its verified passage
    assert "<untrusted-data" in text  # the context is quoted as data
    assert QUESTION in text
    assert "tool_choice" not in request and request["model"] == "claude-sonnet-5-5"


def check_document(doc: dict[str, Any]) -> None:
    assert SchemaRegistry.default().validate_document("answer", doc, None) == []
    assert doc["backend"] == "anthropic" and doc["model"] == "claude-sonnet-5-5" and doc["draft"] == ANSWER
    by_ref = {c["ref"]: c for c in doc["citations"]}
    assert by_ref[f"{A}:C404"]["match"] == "unknown-node" and by_ref[f"{A}:C404"]["number"] is None
    assert [s["status"] for s in doc["sentences"]] == ["ok", "dropped", "dropped"]
    assert doc["answer"].startswith("The Lumen reactor is cooled by molten salt that circulates through the core [1].")
    assert "1962" not in doc["answer"] and "coal" not in doc["answer"]
    assert "2 unsupported sentence(s) were dropped" in doc["answer"]
    assert doc["confidence"] == 1.0 and doc["found"] is True


def test_claude_answer_through_the_sdk_is_validated_marker_by_marker(tmp_path: Path) -> None:
    paths = reactor_session(tmp_path / "sessions")
    seen: list[dict[str, Any]] = []
    fake = fa.FakeAnthropic(answer_step(seen))
    composer = ClaudeComposer(paths.root, http_client=fake.http_client(), api_key=KEY)
    doc = ask(paths, QUESTION, composer)
    fake.assert_done()
    check_request(seen[0])
    check_document(doc)
    cost = [json.loads(line) for line in (paths.root / "costs.jsonl").read_text().splitlines()]
    assert [(c["agent"], c["input_tokens"], c["output_tokens"]) for c in cost] == [("ask", 900, 120)]
    assert KEY not in (paths.root / doc["record"]).read_text()


def test_a_not_found_reply_from_claude_is_not_found(tmp_path: Path) -> None:
    paths = reactor_session(tmp_path / "sessions")
    fake = fa.FakeAnthropic(fa.message([fa.text("NOT FOUND")]))
    doc = ask(paths, "Who designed the Lumen reactor's cooling loop?", ClaudeComposer(
        paths.root, http_client=fake.http_client(), api_key=KEY))
    fake.assert_done()
    assert doc["found"] is False and doc["answer"] == "Not found in this session." and doc["citations"] == []


def test_the_command_line_uses_claude_when_a_key_is_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sessions = tmp_path / "sessions"
    paths: SessionPaths = reactor_session(sessions)
    seen: list[dict[str, Any]] = []
    fake = fa.FakeAnthropic(answer_step(seen), fa.error(400, "invalid_request_error", "bad request"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    with fake.serve() as base_url:
        user_config_path().parent.mkdir(parents=True, exist_ok=True)
        user_config_path().write_text(json.dumps({"anthropic": {"base_url": base_url}}))
        assert load_config({}).base_url == base_url
        runner = CliRunner()
        result = runner.invoke(main, ["--sessions-dir", str(sessions), "ask", paths.root.name, QUESTION, "--json"])
        assert result.exit_code == 0, result.output
        check_request(seen[0])
        check_document(json.loads(result.stdout))
        # a request the API rejects is one clear error line, not a traceback
        result = runner.invoke(main, ["--sessions-dir", str(sessions), "ask", paths.root.name, QUESTION])
        assert result.exit_code == 1
        assert result.stderr.startswith("Error: Claude could not answer") and "Traceback" not in result.stderr
        assert KEY not in result.stderr
        log = (paths.logs / "ask.log").read_text()
        assert "answer: HTTP 400" in log and KEY not in log
    fake.assert_done()


def test_backend_anthropic_without_a_key_is_a_usage_error(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    paths = reactor_session(sessions)
    result = CliRunner().invoke(main, ["--sessions-dir", str(sessions), "ask", paths.root.name, QUESTION,
                                       "--backend", "anthropic"])
    assert result.exit_code == 2 and "ANTHROPIC_API_KEY" in result.stderr
