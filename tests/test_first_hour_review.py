"""Cases from a review briefed to break issue #21 (a researcher's first hour): each was a defect first."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from orchestrator.graph.citations import Citation, Ref
from orchestrator.report.answer import direct_answer
from orchestrator.report.blocks import Cite, Document, Para, Section, Text

TITLES = {1: "S2ORC: The Semantic Scholar Open Research Corpus", 2: "LONGEVAL: Guidelines for Human Evaluation"}


def _cite(number: int, page: int) -> Cite:
    return Cite(Citation(("a:C1",), (Ref(number, f"S{number}", (page,)),)))


def _first(*parts: str | Cite) -> str:
    line = tuple(Text(p) if isinstance(p, str) else p for p in parts)
    found = direct_answer(Document("T", (), [], [Section("Answer", "answer", [Para(line)])], None, None,
                                   titles=TITLES))
    assert found is not None
    return found.first_sentence


@pytest.mark.parametrize(("parts", "first"), [
    (("Models, e.g. BERT and GPT, work well. ", _cite(1, 2), " Next one."),
     "Models, e.g. BERT and GPT, work well. [S2ORC, p. 2]"),
    (("As Fig. 2 shows, it works. ", _cite(1, 2), " Next one."), "As Fig. 2 shows, it works. [S2ORC, p. 2]"),
    (("Smith et al. Found it first. ", _cite(1, 3), " Then more."), "Smith et al. Found it first. [S2ORC, p. 3]"),
    (("The U.S. Army used it. ", _cite(1, 3), " Then more."), "The U.S. Army used it. [S2ORC, p. 3]"),
    (("It is 3.5 times faster than v. 2 of it. ", _cite(1, 4), " Then."),
     "It is 3.5 times faster than v. 2 of it. [S2ORC, p. 4]"),
    (("The effect was significant (p < 0.05). ", _cite(1, 5), " Then."),
     "The effect was significant (p < 0.05). [S2ORC, p. 5]"),
    # a citation written before the full stop, as Claude's synthesis does ("... rose [@C1].")
    (("Accuracy rose to 81.1%", _cite(1, 6), ". Recall fell", _cite(2, 7), "."),
     "Accuracy rose to 81.1% [S2ORC, p. 6]."),
    (("It holds 81.1M papers. ", _cite(1, 1), " ", _cite(2, 2), " It is large."),
     "It holds 81.1M papers. [S2ORC, p. 1] [LONGEVAL, p. 2]"),
    (("One sentence only", _cite(1, 1)), "One sentence only [S2ORC, p. 1]"),
])
def test_the_first_sentence_of_the_answer_is_a_whole_sentence_with_its_citations(
        parts: tuple[str | Cite, ...], first: str) -> None:
    assert _first(*parts) == first


@pytest.mark.parametrize(("text", "kept"), [
    ("a probability in [0, 1] was assigned", "a probability in [0, 1] was assigned"),
    ("values in [0,1] only", "values in [0,1] only"),
    ("the array x[0] is empty", "the array x[0] is empty"),
    ("the entry A[1,2] is zero", "the entry A[1,2] is zero"),
    ("see Table [1] for the doses", "see Table [1] for the doses"),
    ("as Eq. [3] gives", "as Eq. [3] gives"),
    ("over the interval [1, 10] of days", "over the interval [1, 10] of days"),
    ("in [2020] we", "in [2020] we"),
    ("[3H]thymidine uptake rose", "[3H]thymidine uptake rose"),
    ("[Ca2+] rose", "[Ca2+] rose"),
    ("a[1][2] was read", "a[1][2] was read"),
])
def test_real_content_in_brackets_is_not_taken_for_a_source_reference_marker(text: str, kept: str) -> None:
    from orchestrator.report.blocks import quote_without_source_markers, without_source_markers

    assert without_source_markers(text) == kept
    assert quote_without_source_markers(text) == kept


@pytest.mark.parametrize(("text", "plain"), [
    ("quality improvement [79].", "quality improvement."),
    ("shown before [4, 12] and since [3-5].", "shown before and since."),
    ("as described in [12], the", "as described in, the"),
    ("as shown[7] by", "as shown by"),
])
def test_the_sources_own_reference_markers_still_leave_the_report(text: str, plain: str) -> None:
    from orchestrator.report.blocks import without_source_markers

    assert without_source_markers(text) == plain


@pytest.mark.parametrize("question", ["?", " \u200b ", "...", "\U0001f914"])
def test_a_question_without_a_word_is_a_usage_error(question: str) -> None:
    from orchestrator.model.errors import UsageError
    from orchestrator.model.question import checked_question

    with pytest.raises(UsageError, match="no word"):
        checked_question(question)
    assert checked_question(" 是什么? ") == "是什么?"


def test_a_question_that_is_not_utf8_is_a_usage_error_not_a_crash() -> None:
    from orchestrator.model.errors import UsageError
    from orchestrator.model.question import checked_question

    garbled = b"\xff\xfe what is S2ORC?".decode("utf-8", "surrogateescape")  # how Python hands such argv over
    with pytest.raises(UsageError, match="UTF-8"):
        checked_question(garbled)


def test_resume_refuses_a_session_whose_question_is_over_the_limit(tmp_path: Path) -> None:
    from orchestrator.cli import main
    from orchestrator.model.question import MAX_QUESTION_CHARS
    from orchestrator.session.record import create_session, load_session

    paths = create_session(tmp_path / "sessions", "What is S2ORC? " + "word " * MAX_QUESTION_CHARS,
                           "local-documents", {"input_dirs": [str(tmp_path)]})
    out = CliRunner().invoke(main, ["--sessions-dir", str(tmp_path / "sessions"), "resume", "--quiet"])
    assert out.exit_code == 2, out.output
    assert f"{MAX_QUESTION_CHARS:,}" in out.output and "cconductor run" in out.output
    assert load_session(paths)["status"] == "created" and not paths.lock("research-planner").exists()


def test_a_batch_question_that_starts_with_a_dash_reaches_run_as_the_question(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import subprocess

    from orchestrator.cli import main
    from orchestrator.run import session_jobs

    seen: list[list[str]] = []

    class Recorded:
        def __init__(self, argv: list[str], **_: object) -> None:
            seen.append(argv)

        def poll(self) -> int:
            return 0

    monkeypatch.setattr(subprocess, "Popen", Recorded)
    question = "-40 degrees: how do batteries behave?"
    job = session_jobs.SessionJob("q0001-x", question, "local-documents", ("--max-minutes", "5"), (str(tmp_path),))
    session_jobs.run_session_job(job)
    argv = seen[0][seen[0].index("run") + 1:]
    context = main.commands["run"].make_context("run", argv)
    assert context.params["query"] == question and context.params["input_dirs"] == (tmp_path,)
    assert context.params["max_minutes"] == 5


def test_shared_files_follow_the_users_umask_and_private_ones_stay_private(tmp_path: Path) -> None:
    import os
    import stat
    import subprocess
    import sys

    # a fresh process, so the umask it starts with is the one the module reads
    code = ("import sys; from pathlib import Path; from orchestrator.session.atomic import atomic_write_text as w;"
            "d = Path(sys.argv[1]); w(d / 'shared.md', 'x', shared=True); w(d / 'private.json', 'x')")
    for umask, expected in ((0o022, 0o644), (0o077, 0o600), (0o027, 0o640)):
        folder = tmp_path / f"u{umask:o}"
        folder.mkdir()
        subprocess.run([sys.executable, "-c", code, str(folder)], check=True,
                       preexec_fn=lambda m=umask: os.umask(m))  # type: ignore[misc]
        assert stat.S_IMODE((folder / "shared.md").stat().st_mode) == expected
        assert stat.S_IMODE((folder / "private.json").stat().st_mode) == 0o600


def test_batch_summaries_are_readable_say_why_a_question_failed_and_name_the_report_absolutely(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import json
    import stat

    from orchestrator.run.batch import BatchState, read_questions

    monkeypatch.chdir(tmp_path)
    questions = tmp_path / "q.txt"
    questions.write_text("What is S2ORC?\n")
    state = BatchState(Path("out"), read_questions(questions), {})
    [question] = state.questions
    state.record(question, {"qid": question.qid, "session": None, "status": "error",
                            "reason": "the run ended without a result (see output)", "wall_seconds": 1.0})
    state.write_summary({question.qid: state.rows.get(question.qid) or {
        "status": "error", "reason": "the run ended without a result (see output)"}})
    for name in ("summary.csv", "summary.json"):
        assert stat.S_IMODE((tmp_path / "out" / name).stat().st_mode) & 0o044 == 0o044, name
    [row] = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert row["reason"] == "the run ended without a result (see output)"
    assert "reason" in (tmp_path / "out" / "summary.csv").read_text().splitlines()[0]


def test_a_batch_row_names_its_report_by_an_absolute_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from orchestrator.run import batch_runner
    from orchestrator.run.batch import Question
    from orchestrator.run.session_jobs import SessionResult

    monkeypatch.chdir(tmp_path)
    folder = Path("sessions") / "20261127T000000000Z-0000000000"
    folder.mkdir(parents=True)
    (folder / "mission-report.md").write_text("# R\n")
    monkeypatch.setattr(batch_runner, "publish", lambda *_: folder)
    result = SessionResult("q1", "completed", None, folder.name, b"bundle", 1.0)
    row = batch_runner._row(Question("q1", 1, "What?"), result, Path("sessions"), ())
    assert row["report"] == str(tmp_path / folder / "mission-report.md")


def test_an_input_keeps_its_name_and_a_single_file_stays_a_file_on_a_worker(tmp_path: Path) -> None:
    """On Dask the bibliography read '0/data-model.md' (the scratch folder's number), and a README given by
    name became a folder holding a note, which the worker's ingester skipped: 0 sources."""
    from orchestrator.run.jobs import staged_inputs
    from orchestrator.run.session_jobs import SessionJob, _materialise

    papers = tmp_path / "papers"
    (papers / "sub").mkdir(parents=True)
    (papers / "a.md").write_text("# A\n")
    (papers / "sub" / "b.md").write_text("# B\n")
    (papers / ".hidden.md").write_text("# H\n")
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "README.md").write_text("# Notes\n")
    assert staged_inputs(papers) == ("papers", [("papers/a.md", papers / "a.md"),
                                                ("papers/sub/b.md", papers / "sub" / "b.md")])
    assert staged_inputs(notes / "README.md") == ("notes/README.md", [("notes/README.md", notes / "README.md")])

    from orchestrator.run.dask_batch import DaskSessionPool

    pool = DaskSessionPool.__new__(DaskSessionPool)  # its input naming only, without a cluster
    from orchestrator.run.jobs import BlobIndex

    pool._blobs, pool._sent = BlobIndex(), {}
    job = pool.prepare(SessionJob("q1", "What?", "local-documents", (), (str(papers), str(notes / "README.md"))))
    blobs = {sha: pool._blobs.read(sha) for sha in job.inputs.values()}
    scratch = tmp_path / "scratch"
    dirs = [Path(d) for d in _materialise(job, blobs, scratch)]
    assert dirs == [scratch / "inputs" / "0" / "papers", scratch / "inputs" / "1" / "notes" / "README.md"]
    assert dirs[1].read_text() == "# Notes\n" and (dirs[0] / "sub" / "b.md").is_file()


def test_no_sessions_messages_say_where_the_folder_came_from(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from orchestrator.cli import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CCONDUCTOR_SESSIONS_DIR", raising=False)
    given = CliRunner().invoke(main, ["--sessions-dir", str(tmp_path / "elsewhere"), "status"])
    assert given.exit_code == 2 and "--sessions-dir" in given.output
    assert "unless you pass --sessions-dir" not in given.output  # the user did pass it
    monkeypatch.setenv("CCONDUCTOR_SESSIONS_DIR", str(tmp_path / "fromenv"))
    from_env = CliRunner().invoke(main, ["export"])
    assert from_env.exit_code == 2 and "$CCONDUCTOR_SESSIONS_DIR" in from_env.output
    assert "./research-sessions of the current folder unless" not in from_env.output
    monkeypatch.delenv("CCONDUCTOR_SESSIONS_DIR")
    default = CliRunner().invoke(main, ["resume"])
    assert default.exit_code == 2 and "--sessions-dir" in default.output
    assert "$CCONDUCTOR_SESSIONS_DIR" in default.output


def test_run_names_only_the_report_files_it_wrote(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from orchestrator.cli.research_commands import _finish

    (tmp_path / "mission-report.md").write_text("# R\n")
    _finish({"session": str(tmp_path), "status": "completed"}, "quiet")
    out = capsys.readouterr().out
    assert "mission-report.md" in out and "mission-report.html" not in out


def test_a_single_input_file_that_is_not_a_document_is_named_as_such(tmp_path: Path) -> None:
    from orchestrator.cli import main

    data = tmp_path / "data.csv"
    data.write_text("a,b\n")
    out = CliRunner().invoke(main, ["--sessions-dir", str(tmp_path / "s"), "run", "What?", "--input", str(data)])
    assert out.exit_code == 2
    assert "data.csv is not a document" in out.output and "holds 1 file" not in out.output


def test_relevance_keeps_what_it_cannot_judge_and_a_long_question_does_not_rule_out_every_source() -> None:
    from orchestrator.graph.relevance import bears_on

    question = "How does sleep deprivation affect working memory?"
    assert not bears_on({"title": "Wheat under heat", "abstract": "Grain weight fell in the field trial."}, question)
    assert bears_on({"title": "Sleep and memory"}, question)
    # nothing to judge by (a web page or record without a title, abstract or keywords): not ruled out
    assert bears_on({"id": "web:S1", "url": "https://example.org/a"}, question)
    assert bears_on({"title": "   "}, question)
    long = ("How does sleep deprivation affect working memory, attention, reaction time, mood, glucose "
            "metabolism, immune response and blood pressure in shift workers, students and older adults, and "
            "which interventions such as naps, caffeine or light therapy reduce these effects?")
    assert bears_on({"title": "Sleep deprivation and working memory in shift workers"}, long)
    assert not bears_on({"title": "Wheat under heat", "abstract": "Grain weight fell in the field trial."}, long)


def test_a_gap_two_research_rounds_reported_alike_is_listed_once() -> None:
    from orchestrator.report.document import build_document
    from orchestrator.report.markdown import to_markdown

    gap = {"description": "No passage in the 1 ingested source(s) answers: What?", "priority": "high",
           "sub_question_id": "research-planner:Q1", "suggested_queries": ["what"]}
    graph = {"sources": [], "claims": [], "gaps": [{**gap, "id": "document-researcher-i1-1:g1"},
                                                   {**gap, "id": "document-researcher-i2-1:g1"},
                                                   {**gap, "priority": "medium", "id": "x:g2",
                                                    "description": "Another gap."}]}
    text = to_markdown(build_document(graph, session={"query": "What?"}, quality=None, mission=None, outline=None,
                                      ledger=[]))
    assert text.count("No passage in the 1 ingested source(s) answers: What?") == 1
    assert "Another gap." in text and text.index("No passage in the 1") < text.index("Another gap.")


def test_a_sub_question_counts_as_answered_only_by_a_claim_with_verified_evidence() -> None:
    """The schema says so: a claim whose snippet was not found in its source answers nothing."""
    from orchestrator.graph.quality import score_graph
    from orchestrator.graph.quality_gate import gate

    def claim(cid: str, question: str, verified: bool) -> dict[str, object]:
        return {"id": cid, "statement": "s", "confidence": 0.8, "sub_question_id": question,
                "evidence": [{"source_id": "a:S1", "snippet": "s", "verification": {"verified": verified}}]}

    graph = {"sources": [{"id": "a:S1", "title": "T"}],
             "claims": [claim(f"a:C{n}", "p:Q1", True) for n in range(10)] + [claim("a:C10", "p:Q2", False)]}
    questions = [{"id": "p:Q1", "question": "First?"}, {"id": "p:Q2", "question": "Second?"}]
    report = score_graph(graph, questions)
    result = gate(report, graph, {"min_answered_sub_questions": 1.0, "min_verified_evidence_ratio": 0.9})
    check = next(c for c in result.checks if c["criterion"] == "min_answered_sub_questions")
    assert check["passed"] is False and check["actual"] == 0.5
    assert "Q2 (Second?)" in " ".join(result.recommendations)


def test_a_report_without_an_answer_records_none_rather_than_its_placeholder() -> None:
    """A failed run's report says 'No section "Answer" was written ...': that is not an answer to print."""
    from orchestrator.report.document import build_document

    document = build_document({"sources": [], "claims": []}, session={"query": "What?"}, quality=None,
                              mission={"success_criteria": {"required_sections": ["Answer", "Bibliography"]}},
                              outline=None, ledger=[])
    assert direct_answer(document) is None


def test_a_folder_that_only_links_to_another_folder_says_links_are_not_followed(tmp_path: Path) -> None:
    from orchestrator.cli import main

    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "a.md").write_text("# A\n\nText.\n")
    (tmp_path / "input").mkdir()
    (tmp_path / "input" / "linked").symlink_to(tmp_path / "real", target_is_directory=True)
    out = CliRunner().invoke(main, ["--sessions-dir", str(tmp_path / "s"), "run", "What?", "--input-dir",
                                    str(tmp_path / "input")])
    assert out.exit_code == 2
    assert "linked" in out.output and "not followed" in out.output and str(tmp_path / "real") in out.output


def test_no_advice_to_add_a_doi_to_a_users_own_notes() -> None:
    from orchestrator.graph.quality import score_graph

    graph = {"sources": [{"id": "a:S1", "type": "local-document", "title": "My notes", "local_path": "/x/n.md"},
                         {"id": "a:S2", "type": "journal-article", "title": "A paper"}], "claims": []}
    assert score_graph(graph, []).sources_without_identifier == ("a:S2",)


def test_the_local_documents_report_has_one_contradictions_section() -> None:
    """It had "Gaps and Contradictions" and then "Contradictions", two headings for one subject."""
    from orchestrator.report.document import build_document
    from orchestrator.run.missions import load_mission

    mission = load_mission("local-documents").to_dict()
    document = build_document({"sources": [], "claims": []}, session={"query": "What?"}, quality=None,
                              mission=mission, outline=None, ledger=[])
    headings = [s.heading for s in document.sections]
    assert sum("contradiction" in h.casefold() for h in headings) == 1, headings
    assert "Gaps" in headings and "Contradictions" in headings
