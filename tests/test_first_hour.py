"""A researcher's first hour: answering from one's own documents, one file or many, the answer everywhere."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from orchestrator.cli import main
from orchestrator.model.question import MAX_QUESTION_CHARS
from tests.helpers.data import PAPERS

SLEEP = ("# Sleep and memory\n\nSleep deprivation reduces working memory performance in adults, according to "
         "several controlled studies of young volunteers.\n\nEight hours of sleep improved recall by a large "
         "margin compared with four hours of sleep in the same participants.\n")
WHEAT = ("# Wheat under heat\n\nPost-anthesis heat stress lowered the grain weight of every wheat genotype in the "
         "field trial.\n\nThe heat-tolerant lines kept more sucrose in their flag leaves during grain filling.\n")
QUESTION = "How does sleep deprivation affect working memory?"


def cconductor(env: dict[str, str], *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "orchestrator.cli", *args], capture_output=True, text=True,
                          env=env, timeout=timeout)


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    home = tmp_path_factory.mktemp("home")
    environment = {**os.environ, "HOME": str(home), "CCONDUCTOR_SESSIONS_DIR": str(home / "sessions"),
                   "XDG_CONFIG_HOME": str(home / "config"), "XDG_CACHE_HOME": str(home / "cache")}
    environment.pop("ANTHROPIC_API_KEY", None)
    return environment


@pytest.fixture(scope="module")
def folder_run(env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A folder with one relevant and one unrelated document, researched with the default mission."""
    docs = tmp_path_factory.mktemp("docs")
    (docs / "sleep.md").write_text(SLEEP)
    (docs / "wheat.md").write_text(WHEAT)
    out = cconductor(env, "run", QUESTION, "--input-dir", str(docs), "--quiet")
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    root = Path(next(line for line in out.stdout.splitlines() if line.startswith("session: ")).split(": ", 1)[1])
    return {"out": out, "root": root, "session": json.loads((root / "session.json").read_text()), "docs": docs}


def test_a_folder_of_documents_gets_the_local_documents_mission_and_a_good_answer_completes(
        folder_run: dict[str, Any]) -> None:
    session = folder_run["session"]
    assert session["mission"] == "local-documents"
    assert session["status"] == "completed", session["status_reason"]
    quality = json.loads((folder_run["root"] / "quality.json").read_text())
    assert {c["criterion"] for c in quality["checks"]} == {
        "all_claims_cited", "min_verified_evidence_ratio", "min_answered_sub_questions", "contradictions_surfaced"}
    assert not any("peer" in r or "more distinct sources" in r for r in quality["recommendations"])


def test_no_research_round_or_advice_is_about_the_unrelated_document(folder_run: dict[str, Any]) -> None:
    root = folder_run["root"]
    asked = [json.loads(line) for line in (root / "events.jsonl").read_text().splitlines()]
    questions = " ".join(json.dumps(e.get("data", {})) for e in asked if e["type"].startswith("research"))
    assert "Wheat under heat" not in questions
    report = (root / "mission-report.md").read_text()
    assert "wheat" not in report.split("## Gaps", 1)[1].split("## Bibliography", 1)[0].casefold()


def test_quiet_prints_the_answer_and_session_json_keeps_it(folder_run: dict[str, Any]) -> None:
    lines = folder_run["out"].stdout.splitlines()
    assert lines[0].startswith("answer: ") and "working memory" in lines[0] and "[Sleep and memory" in lines[0]
    answer = folder_run["session"]["answer"]
    assert lines[0] == f"answer: {answer['text']}"
    assert answer["text"].startswith(answer["first_sentence"]) and answer["first_sentence"].endswith("]")
    assert answer["top_citation"].startswith("Sleep and memory")


def test_report_files_are_readable_by_others_and_rerendered_byte_for_byte(
        folder_run: dict[str, Any], env: dict[str, str]) -> None:
    root = folder_run["root"]
    names = ("mission-report.md", "mission-report.html", "bibliography.bib", "references.json")
    for name in names:
        assert stat.S_IMODE((root / name).stat().st_mode) == 0o644, name
    for view in ("knowledge-graph.json", "knowledge-graph.trig"):  # the graph is for people and tools too
        assert stat.S_IMODE((root / view).stat().st_mode) == 0o644, view
    before = {name: (root / name).read_bytes() for name in names}
    (root / "knowledge-graph.json").unlink()  # the view is rebuilt: a new write time, the same graph
    assert cconductor(env, "report", str(root)).returncode == 0
    assert {name: (root / name).read_bytes() for name in names} == before


def test_ask_all_lists_hits_first_then_counts_the_rest(folder_run: dict[str, Any], env: dict[str, str],
                                                       tmp_path: Path) -> None:
    wheat = tmp_path / "wheat.md"
    wheat.write_text(WHEAT)
    assert cconductor(env, "run", "What does heat stress do to wheat grain?", "--input", str(wheat),
                      "--quiet").returncode == 0
    out = cconductor(env, "ask", "--all", QUESTION)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"Q: {QUESTION}") and "working memory" in out.stdout
    assert out.stdout.count("Not found") == 0 and out.stdout.rstrip().endswith(
        "1 other session(s) hold no answer to this question.")


@pytest.mark.slow  # a whole run: the slow group (CI runs it) keeps the everyday suite under 10 min
def test_one_pdf_is_researched_like_a_folder_of_them(env: dict[str, str]) -> None:
    paper = PAPERS / "acl-2020-main-447_s2orc.pdf"
    out = cconductor(env, "run", "How many papers does the S2ORC corpus contain?", "--input", str(paper), "--quiet")
    assert out.returncode == 0, out.stderr[-2000:]
    answer = out.stdout.splitlines()[0]
    assert answer.startswith("answer: ") and "81.1M" in answer and "[S2ORC, p. 4969]" in answer  # printed page
    assert "None of the 1 ingested source" not in answer


def _invoke(tmp_path: Path, *args: str) -> Any:
    return CliRunner().invoke(main, ["--sessions-dir", str(tmp_path / "sessions"), *args])


def test_a_question_past_the_limit_is_a_usage_error_naming_it(tmp_path: Path) -> None:
    long = "Why " + "x" * MAX_QUESTION_CHARS
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text(SLEEP)
    (tmp_path / "questions.txt").write_text(f"{QUESTION}\n{long}\n")
    for args in (["run", long, "--input-dir", str(tmp_path / "docs")], ["new", long],
                 ["batch", str(tmp_path / "questions.txt"), "--input-dir", str(tmp_path / "docs")]):
        result = _invoke(tmp_path, *args)
        assert result.exit_code == 2, (args[0], result.output)
        assert "the limit is 4,000" in result.stderr, args[0]
    assert "questions.txt:2" in result.stderr
    assert not (tmp_path / "sessions").exists() or not any((tmp_path / "sessions").iterdir())


def test_a_question_at_the_limit_is_researched(env: dict[str, str], tmp_path: Path) -> None:
    (tmp_path / "sleep.md").write_text(SLEEP)
    question = (QUESTION + " ") * (MAX_QUESTION_CHARS // (len(QUESTION) + 1))
    out = cconductor(env, "run", question, "--input", str(tmp_path / "sleep.md"), "--quiet")
    assert out.returncode == 0 and "status: completed" in out.stdout, out.stdout[-1500:] + out.stderr[-1500:]


def _commands(group: click.Group, prefix: str = "cconductor") -> list[tuple[str, click.Command]]:
    found: list[tuple[str, click.Command]] = []
    for name, command in sorted(group.commands.items()):
        found.append((f"{prefix} {name}", command))
        if isinstance(command, click.Group):
            found += _commands(command, f"{prefix} {name}")
    return found


def test_help_groups_commands_and_names_every_exit_code() -> None:
    text = CliRunner().invoke(main, ["--help"]).output
    for heading in ("Research:", "Inspect a session:", "Drive the artifact pipeline", "Catalogues:"):
        assert heading in text
    for code, meaning in (("0", "ok"), ("1", "rejected"), ("2", "usage error"), ("3", "budget"),
                          ("130", "interrupted")):
        assert any(line.split()[:1] == [code] and meaning in line for line in text.splitlines()), code
    listed = text.split("Research:", 1)[1]
    assert all(f"  {name.split()[-1]} " in listed for name, _ in _commands(main) if name.count(" ") == 1)


@pytest.mark.parametrize("name", [name for name, _ in _commands(main)])
def test_every_command_shows_an_example(name: str) -> None:
    words = name.split()[1:]
    text = CliRunner().invoke(main, [*words, "--help"]).output
    assert "Example" in text and f"\n    {name}" in text, text
    for option in dict(_commands(main))[name].params:
        if isinstance(option, click.Option) and not option.hidden and option.name != "help":
            assert option.help, f"{name} {option.opts[0]} has no help text"


def test_a_users_own_files_are_cited_by_name_without_a_missing_date(folder_run: dict[str, Any]) -> None:
    root = folder_run["root"]
    report = (root / "mission-report.md").read_text()
    bibliography = report.split("## Bibliography", 1)[1].split("\n## ", 1)[0]
    assert "Sleep and memory" in bibliography and "n.d." not in bibliography
    assert str(folder_run["docs"]) not in report and f"{folder_run['docs'].name}/sleep.md" in bibliography
    assert "@misc{sleep," in (root / "bibliography.bib").read_text()


def test_citation_keys_of_authorless_sources_are_words_that_tell_them_apart() -> None:
    from orchestrator.report.bibliography import bibtex_keys

    keys = bibtex_keys([{"id": "a", "title": "How cconductor works"},
                        {"id": "b", "title": "Data model: artifact files"},
                        {"id": "c", "title": "Data sharing in practice", "year": 2020},
                        {"id": "d", "title": "Notes", "local_path": "/home/x/docs/data-model.md"}])
    assert keys == {"a": "cconductorworks", "b": "datamodel", "c": "datasharing2020", "d": "datamodelb"}


def test_the_header_says_how_many_mission_criteria_are_met(folder_run: dict[str, Any]) -> None:
    html = (folder_run["root"] / "mission-report.html").read_text()
    assert 'href="#sec-quality-assessment">all 4 mission criteria met</a>' in html
    assert "quality gate" not in html


def test_the_report_says_each_thing_once(folder_run: dict[str, Any]) -> None:
    """Gaps and Contradictions each said what the other said ("no contradiction is open") before their own line."""
    report = (folder_run["root"] / "mission-report.md").read_text()
    paragraphs = [" ".join(p.split()) for p in report.split("\n\n")]
    prose = [p for p in paragraphs if len(p) > 40 and not p.startswith(("|", "#", "-", "*", "["))]
    assert prose and len(prose) == len(set(prose)), [p for p in prose if prose.count(p) > 1][:3]
    contradictions = report.split("## Contradictions", 1)[1].split("\n## ", 1)[0]
    assert len([p for p in contradictions.split("\n\n") if p.strip()]) == 1, contradictions


def test_the_evidence_list_quotes_an_offline_claim_once(folder_run: dict[str, Any]) -> None:
    """An offline claim is its quote: the list showed the same sentence as the statement and as the quote."""
    report = (folder_run["root"] / "mission-report.md").read_text()
    evidence = report.split("## Evidence", 1)[1].split("\n## ", 1)[0]
    bullets = [b for b in evidence.split("\n- ") if b.startswith("**")]
    assert bullets
    for bullet in bullets:
        quote = bullet.split("\u201c*", 1)[1].split("*\u201d", 1)[0]
        assert " ".join(bullet.split()).count(" ".join(quote.split())) == 1, bullet
