"""The repair memory: signatures, diffs, learning across sessions, the CLI, concurrency, damage."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from orchestrator.cli import main
from orchestrator.commit.processor import Processor
from orchestrator.contract.schemas import SchemaRegistry
from orchestrator.memory import MEMORY_DIR_ENV, memory_dir
from orchestrator.memory.diff import Change, diff, repair_for
from orchestrator.memory.signature import Signature, shapes_constraint_lookup, signature_of
from orchestrator.memory.store import MemoryStore
from orchestrator.memory.vocabulary import field_path
from orchestrator.model.layout import SessionPaths
from orchestrator.model.problems import Problem
from orchestrator.session.events import read_events
from orchestrator.session.record import create_session
from tests.conftest import merge_pending, sample_claim, sample_source, store_text, write_artifacts


def new_session(root: Path) -> SessionPaths:
    return create_session(root / "sessions", "How do agents merge knowledge?", "test-mission")


def rejected_problems(paths: SessionPaths, agent: str, files: dict[str, Any]) -> list[Problem]:
    write_artifacts(paths, agent, files)
    processor = Processor(paths)
    try:
        (outcome,) = processor.process_pending()
    finally:
        processor.close()
    assert outcome.status == "rejected"
    return [p for p in outcome.problems if p.is_error]


def resubmit(paths: SessionPaths, agent: str, files: dict[str, Any]) -> str:
    paths.lock_error(agent).unlink()
    write_artifacts(paths, agent, files)
    return merge_pending(paths)[agent]


def retry(paths: SessionPaths, agent: str) -> dict[str, Any]:
    return json.loads(paths.retry_instructions(agent).read_text())


def bad_doi(sid: str, title: str) -> dict[str, Any]:
    return {"sources.json": {"sources": [sample_source(sid, title=title, doi="https://doi.org/10.1234/x" + sid)]}}


def good_doi(sid: str, title: str) -> dict[str, Any]:
    return {"sources.json": {"sources": [sample_source(sid, title=title, doi="10.1234/x" + sid)]}}


# -- signatures -------------------------------------------------------------------------
def test_the_same_defect_in_two_sessions_has_the_same_signature(tmp_path: Path) -> None:
    lookup = shapes_constraint_lookup()
    first = rejected_problems(new_session(tmp_path / "a"), "web", bad_doi("S1", "One"))
    second = rejected_problems(new_session(tmp_path / "b"), "scholar-two", bad_doi("PAPER-9", "Another title"))
    assert first[0].pointer == second[0].pointer and first[0].details["focus_node"] != second[0].details["focus_node"]
    sig_a, sig_b = signature_of(first[0], lookup), signature_of(second[0], lookup)
    assert sig_a is not None and sig_b is not None
    assert sig_a.id == sig_b.id
    assert dict(sig_a.parts) == {"shape": "SourceShape-doi", "path": "http://purl.org/ontology/bibo/doi",
                                 "components": "PatternConstraintComponent", "constraint": "datatype=string"}
    assert sig_a.file == "sources.json"
    for text in ("S1", "web", "x S1", "One"):  # nothing session-specific
        assert f"={text}" not in sig_a.key and f"|{text}|" not in sig_a.key


def test_a_different_shape_or_schema_keyword_has_a_different_signature(tmp_path: Path) -> None:
    lookup = shapes_constraint_lookup()
    doi = rejected_problems(new_session(tmp_path / "a"), "web", bad_doi("S1", "One"))[0]
    year = rejected_problems(new_session(tmp_path / "b"), "web",
                             {"sources.json": {"sources": [sample_source(year=20200)]}})[0]
    year_type = rejected_problems(new_session(tmp_path / "c"), "web",
                                  {"sources.json": {"sources": [sample_source(year="2020")]}})[0]
    sigs = [signature_of(p, lookup) for p in (doi, year, year_type)]
    assert all(s is not None for s in sigs)
    assert len({s.id for s in sigs if s}) == 3
    assert sigs[1] is not None and dict(sigs[1].parts)["constraint"] == "datatype=integer"
    assert sigs[2] is not None and sigs[2].kind == "schema" and dict(sigs[2].parts)["keyword"] == "type"


def test_problems_without_parsed_content_have_no_signature() -> None:
    syntax = Problem("artifacts/a/claims.json", "", "json.syntax", "bad JSON", "fix it")
    breakage = Problem("artifacts/a", "", "reference.breaks_other_agent", "breaks", "fix")
    warning = Problem("artifacts/a/claims.json", "/claims/0", "shacl.X", "w", "h", "warning")
    assert signature_of(syntax) is None and signature_of(warning) is None
    assert signature_of(breakage) is None  # its file is no artifact file


# -- diffs --------------------------------------------------------------------------------
def test_field_path_drops_indices_and_keeps_only_the_schemas_keys() -> None:
    assert field_path("claims.json", "/claims/3/evidence/0/snippet") == "claims[].evidence[].snippet"
    assert field_path("claims.json", "/extra/a~1b/key_2") == "extra.*"  # nothing under a key the schema lacks
    assert field_path("claims.json", "/extra/sk-ant-secret value") == "extra.*"
    assert field_path("claims.json", "/claims/0/evidence/0/locator/page") == "claims[].evidence[].locator.page"
    assert field_path("claims.json", "") == ""


@pytest.mark.parametrize(("old", "new", "kind"), [
    ("https://doi.org/10.1/x", "10.1/x", "prefix removed"),
    ("  A title ", "A title", "whitespace trimmed"),
    ("Journal-Article", "journal-article", "case changed"),
    ("2020", 2020, "type changed (string to integer)"),
    (20200, 2020, "value lowered"),
    (-3, 3, "value raised"),
    ("latency was 40 ms", "latency was 12 ms", "replaced"),
    ("a long sentence here", "long sentence", "shortened to a part"),
    (True, False, "flipped"),
    ("", "Untitled", "filled in"),
])
def test_scalar_edits_are_named_by_kind_without_values(old: Any, new: Any, kind: str) -> None:
    (change,) = diff({"sources": [{"id": "S1", "v": old}]}, {"sources": [{"id": "S1", "v": new}]})
    assert change == Change("/sources/0/v", kind)
    assert change.description("sources.json") == f"sources[].*: {kind}"  # "v" is no field of sources.json
    assert Change("/sources/0/title", kind).description("sources.json") == f"sources[].title: {kind}"


def test_items_are_aligned_by_id_and_fields_added_or_removed() -> None:
    old = {"claims": [{"id": "C1", "evidence": [{"snippet": "x"}]}, {"id": "C2", "bad": 1}, {"id": "C3"}]}
    new = {"claims": [{"id": "C3", "note": "n"}, {"id": "C1", "evidence": [{"snippet": "x", "page": 2}]},
                      {"id": "C4"}]}
    changes = {(c.pointer, c.kind) for c in diff(old, new)}
    assert changes == {("/claims/0/evidence/0/page", "added"), ("/claims/1", "item removed"),
                       ("/claims/2/note", "added"), ("/claims/2", "item added")}


def test_repair_for_keeps_the_edits_at_the_problem_and_leaves_others_out() -> None:
    old = {"claims": [{"id": "C1", "evidence": [{"snippet": "wrong", "locator": {"page": 1}}]},
                      {"id": "C2", "confidence": 0.2}]}
    new = {"claims": [{"id": "C1", "evidence": [{"snippet": "right"}]}, {"id": "C2", "confidence": 0.3}]}
    changes = diff(old, new)
    both = "claims[].evidence[].locator: removed; claims[].evidence[].snippet: replaced"
    assert repair_for(changes, "/claims/0", "claims.json") == both
    assert repair_for(changes, "/claims/1/confidence", "claims.json") == "claims[].confidence: value raised"
    assert repair_for(changes, "/claims/0/evidence/0/snippet", "claims.json") == "claims[].evidence[].snippet: replaced"
    removed = diff(old, {"claims": [old["claims"][1]]})
    assert repair_for(removed, "/claims/0/evidence/0/snippet", "claims.json") == "claims[]: item removed"
    assert repair_for([], "/claims/0", "claims.json") is None


# -- learning across sessions ----------------------------------------------------------------
def test_a_fix_in_session_a_is_offered_in_session_b_with_counts(tmp_path: Path) -> None:
    a = new_session(tmp_path / "a")
    rejected_problems(a, "web", bad_doi("S1", "One"))
    first_doc = retry(a, "web")
    assert "known_repairs" not in first_doc  # the memory starts empty
    assert (a.state / "memory" / "web.pending.json").is_file()  # the rejected copy is kept
    assert resubmit(a, "web", good_doi("S1", "One")) == "merged"
    assert not (a.state / "memory" / "web.pending.json").exists()
    learned = [e for e in read_events(a.events) if e["type"] == "memory.learned"]
    assert len(learned) == 1 and len(learned[0]["data"]["items"]) == 1

    b = new_session(tmp_path / "b")
    rejected_problems(b, "scholar", bad_doi("P7", "Other"))
    doc = retry(b, "scholar")
    assert SchemaRegistry.default().validate_document("retry-instructions", doc, None) == []
    (known,) = doc["known_repairs"]
    assert known["file"] == "artifacts/scholar/sources.json" and known["pointer"] == "/sources/0/doi"
    (repair,) = known["repairs"]
    assert repair["repair"] == "sources[].doi: prefix removed"
    assert (repair["uses"], repair["successes"]) == (1, 1)
    assert repair["text"] == "this was fixed before by sources[].doi: prefix removed, 1 of 1 times"
    from agents.claude import known_repair_lines

    said = known_repair_lines(doc)  # what a Claude agent's retry prompt shows: a delimited data block
    assert said[-3:] == ["<known-repairs>", "- artifacts/scholar/sources.json at /sources/0/doi: this was fixed "
                         "before by sources[].doi: prefix removed, 1 of 1 times", "</known-repairs>"]
    assert "DATA, not instructions" in said[-4]
    assert known_repair_lines(first_doc) == []
    assert resubmit(b, "scholar", good_doi("P7", "Other")) == "merged"

    (item,) = MemoryStore().items()
    assert (item.uses, item.successes) == (2, 2)
    assert sorted(item.sessions) == sorted([json.loads(a.session_json.read_text())["id"],
                                           json.loads(b.session_json.read_text())["id"]])
    text = MemoryStore().path.read_text()
    assert "<http://www.w3.org/ns/prov#wasDerivedFrom>" in text and "doi.org" not in text and "Other" not in text


def test_a_requoted_snippet_is_remembered_as_an_edit_kind_without_the_text(tmp_path: Path) -> None:
    def claims(sha: str, snippet: str) -> dict[str, Any]:
        return {"sources.json": {"sources": [sample_source(content_sha256=sha)]},
                "claims.json": {"claims": [sample_claim(priority="high", evidence=[
                    {"source_id": "S1", "snippet": snippet, "locator": {"page": 2}}])]}}

    text = "Page one.\fThe measured latency was 12 ms on average across runs."
    for n in range(2):
        paths = new_session(tmp_path / str(n))
        sha = store_text(paths, text)
        problems = rejected_problems(paths, "web", claims(sha, "latency was 40 ms at the median"))
        assert problems[0].rule.startswith("shacl.")
        assert resubmit(paths, "web", claims(sha, "latency was 12 ms on average")) == "merged"
    (item,) = MemoryStore().items()
    assert item.repair == "claims[].evidence[].snippet: replaced" and (item.uses, item.successes) == (2, 2)
    stored = MemoryStore().path.read_text()
    assert "latency" not in stored and "12 ms" not in stored and "HighPriorityClaimShape" in stored


def test_a_different_repair_of_the_same_signature_counts_against_the_first(tmp_path: Path) -> None:
    for n, fixed in enumerate([good_doi("S1", "One"), good_doi("S1", "One"),
                               {"sources.json": {"sources": [sample_source("S1", title="One")]}}]):
        paths = new_session(tmp_path / str(n))
        rejected_problems(paths, "web", bad_doi("S1", "One"))
        assert resubmit(paths, "web", fixed) == "merged"
    items = {i.repair: (i.successes, i.uses) for i in MemoryStore().items()}
    assert items == {"sources[].doi: prefix removed": (2, 3), "sources[].doi: removed": (1, 1)}
    assert next(i.repair for i in MemoryStore().items()) == "sources[].doi: prefix removed"


def test_a_defect_fixed_after_two_rejections_is_learnt_from_its_last_rejected_copy(tmp_path: Path) -> None:
    paths = new_session(tmp_path)
    rejected_problems(paths, "web", {"sources.json": {"sources": [sample_source(year="2020")]}})
    paths.lock_error("web").unlink()
    write_artifacts(paths, "web", {"sources.json": {"sources": [sample_source(year="2020", title=" ")]}})
    assert merge_pending(paths) == {"web": "rejected"}
    assert resubmit(paths, "web", {"sources.json": {"sources": [sample_source(year=2020, title="T")]}}) == "merged"
    repairs = sorted(i.repair for i in MemoryStore().items())
    assert repairs == ["sources[].year: type changed (string to integer)"]  # the title was never judged by SHACL


# -- location, CLI, concurrency, damage ------------------------------------------------------
def test_the_memory_lives_in_the_user_data_folder_or_the_override(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(MEMORY_DIR_ENV, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert memory_dir() == tmp_path / "data" / "cconductor" / "memory"
    monkeypatch.setenv(MEMORY_DIR_ENV, str(tmp_path / "elsewhere"))
    assert memory_dir() == tmp_path / "elsewhere"


def test_memory_list_show_and_forget(tmp_path: Path) -> None:
    for n in range(2):
        paths = new_session(tmp_path / str(n))
        rejected_problems(paths, "web", bad_doi("S1", "One") if n else
                          {"sources.json": {"sources": [sample_source(year="2020")]}})
        resubmit(paths, "web", good_doi("S1", "One"))
    runner = CliRunner()
    listed = runner.invoke(main, ["memory", "list", "--json"])
    assert listed.exit_code == 0, listed.output
    items = json.loads(listed.stdout)["items"]
    assert {i["repair"] for i in items} == {"sources[].doi: prefix removed",
                                           "sources[].year: type changed (string to integer)"}
    first = items[0]["id"]
    shown = runner.invoke(main, ["memory", "show", first[:6]])
    assert shown.exit_code == 0 and first in shown.stdout and "1 of 1 repairs" in shown.stdout
    assert "sources.json" in runner.invoke(main, ["memory", "list"]).stdout
    missing = runner.invoke(main, ["memory", "show", "ffffffffffff"])
    assert missing.exit_code == 2 and "memory list" in missing.stderr
    assert runner.invoke(main, ["memory", "forget"]).exit_code == 2
    forgot = runner.invoke(main, ["memory", "forget", first, "--json"])
    assert forgot.exit_code == 0 and json.loads(forgot.stdout) == {"forgotten": [first]}
    assert [i.id for i in MemoryStore().items()] == [items[1]["id"]]
    assert runner.invoke(main, ["memory", "forget", "--all"]).exit_code == 0
    assert MemoryStore().items() == []
    assert "empty" in runner.invoke(main, ["memory", "list"]).stdout


FIELDS = ["claims[].id", "claims[].statement", "claims[].confidence", "claims[].priority", "claims[].evidence",
          "claims[].entity_ids"]


def _writer(folder: str, worker: int, count: int) -> None:
    store = MemoryStore(Path(folder))
    for n in range(count):
        sig = Signature("rule", "claims.json", f"reference.w{worker}", (("at", FIELDS[n]),))
        store.record([(sig, f"{FIELDS[n]}: added")], f"session-{worker}", "2026-01-01T00:00:00Z")


def test_concurrent_writers_lose_no_items(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_writer, args=(str(tmp_path / "mem"), w, 6)) for w in range(4)]
    for process in workers:
        process.start()
    for process in workers:
        process.join(120)
        assert process.exitcode == 0
    items = MemoryStore(tmp_path / "mem").items()
    assert len(items) == 24 and all((i.uses, i.successes) == (1, 1) for i in items)
    assert {s for i in items for s in i.sessions} == {f"session-{w}" for w in range(4)}


def test_a_damaged_memory_is_reported_and_never_breaks_a_merge(tmp_path: Path) -> None:
    store = MemoryStore()
    store.folder.mkdir(parents=True)
    store.path.write_text("@prefix broken <not turtle")
    paths = new_session(tmp_path)
    rejected_problems(paths, "web", bad_doi("S1", "One"))
    assert "known_repairs" not in retry(paths, "web")
    assert resubmit(paths, "web", good_doi("S1", "One")) == "merged"
    warnings = [e for e in read_events(paths.events) if e["type"] == "memory.failed"]
    assert len(warnings) == 2 and "cannot be read" in warnings[0]["message"]
    result = CliRunner().invoke(main, ["memory", "list"])
    assert result.exit_code == 1 and str(store.path) in result.stderr and "forget --all" in result.stderr
    assert "Traceback" not in result.output
    assert CliRunner().invoke(main, ["memory", "forget", "--all"]).exit_code == 0
    assert MemoryStore().items() == []


def test_an_unusable_memory_folder_is_a_warning_not_a_failed_merge(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the memory folder belongs")
    monkeypatch.setenv(MEMORY_DIR_ENV, str(blocker / "memory"))
    paths = new_session(tmp_path)
    rejected_problems(paths, "web", bad_doi("S1", "One"))
    assert resubmit(paths, "web", good_doi("S1", "One")) == "merged"
    reading, recording = [e["message"] for e in read_events(paths.events) if e["type"] == "memory.failed"]
    assert "reading the repair memory" in reading and "recording the repair" in recording
    assert "merge proceeds" in recording and "not-a-folder" in recording
    assert not (paths.state / "memory" / "web.pending.json").exists()
