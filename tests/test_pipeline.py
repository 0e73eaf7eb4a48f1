"""The lock -> validate -> merge -> SHACL -> commit path, with real filelock, SQLite, pyshacl."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from orchestrator.model.layout import SessionPaths
from orchestrator.session.events import read_events
from tests.conftest import merge_pending, sample_claim, sample_source, store_text, write_artifacts


def graph(paths: SessionPaths) -> dict:
    return json.loads(paths.kg_json.read_text())


def retry_doc(paths: SessionPaths, agent: str) -> dict:
    return json.loads(paths.retry_instructions(agent).read_text())


def test_valid_set_is_merged_into_its_namespace_and_lock_consumed(session: SessionPaths) -> None:
    sha = store_text(session, "Intro page.\fWe show that merging is hard in practice.")
    write_artifacts(session, "researcher", {
        "sources.json": {"sources": [sample_source(content_sha256=sha)]},
        "claims.json": {"claims": [sample_claim(snippet="merging is hard in practice", evidence=[
            {"source_id": "S1", "snippet": "merging is hard in practice", "locator": {"page": 2}}])]},
    })
    assert merge_pending(session) == {"researcher": "merged"}
    assert not session.lock("researcher").exists()
    kg = graph(session)
    assert kg["researcher"]["claims"][0]["id"] == "C1"
    claim = kg["claims"][0]
    assert claim["id"] == "researcher:C1"
    assert claim["evidence"][0]["source_id"] == "researcher:S1"
    assert claim["evidence"][0]["verification"]["verified"] is True
    assert claim["evidence"][0]["verification"]["page"] == 2
    assert claim["provenance"]["file"] == "artifacts/researcher/claims.json"
    assert claim["provenance"]["attempt"] == 1
    assert kg["stats"]["claims_count"] == 1 and kg["stats"]["evidence_verified"] == 1
    assert session.kg_trig.read_text().count("urn:cconductor:agent:researcher") >= 1
    types = [e["type"] for e in read_events(session.events)]
    assert "merge.committed" in types and "shacl.completed" in types


def test_two_files_with_the_same_array_are_concatenated_not_overwritten(session: SessionPaths) -> None:
    write_artifacts(session, "a", {
        "sources.json": {"sources": [sample_source()]},
        "claims.json": {"claims": [sample_claim("C1")]},
        "claims-more.json": {"claims": [sample_claim("C2")]},
    })
    assert merge_pending(session) == {"a": "merged"}
    # files merge in sorted name order: "claims-more.json" < "claims.json"
    assert [c["id"] for c in graph(session)["claims"]] == ["a:C2", "a:C1"]
    assert [c["id"] for c in graph(session)["a"]["claims"]] == ["C2", "C1"]


def test_conflicting_scalars_across_files_name_both_files(session: SessionPaths) -> None:
    write_artifacts(session, "a", {"notes-1.json": {"summary": "one"}, "notes-2.json": {"summary": "two"}})
    assert merge_pending(session) == {"a": "rejected"}
    doc = retry_doc(session, "a")
    problem = doc["files"][0]["problems"][0]
    assert problem["rule"] == "merge.conflict"
    assert problem["file"] == "artifacts/a/notes-2.json" and problem["pointer"] == "/summary"
    assert "artifacts/a/notes-1.json" in problem["message"]
    assert doc["error_class"] == "merge_conflict"
    assert session.lock_error("a").exists() and not session.lock("a").exists()


def test_retry_replaces_the_namespace_and_clears_error_files(session: SessionPaths) -> None:
    write_artifacts(session, "a", {"sources.json": {"sources": [sample_source()]},
                                   "claims.json": {"claims": [sample_claim("C1"), sample_claim("C2")]}})
    assert merge_pending(session) == {"a": "merged"}
    write_artifacts(session, "a", {"claims.json": {"claims": [sample_claim("C3")]}})
    assert merge_pending(session) == {"a": "merged"}
    assert [c["id"] for c in graph(session)["claims"]] == ["a:C3"]
    assert graph(session)["claims"][0]["provenance"]["attempt"] == 2


def test_same_artifact_set_twice_is_a_noop(session: SessionPaths) -> None:
    write_artifacts(session, "a", {"sources.json": {"sources": [sample_source()]}})
    assert merge_pending(session) == {"a": "merged"}
    before = graph(session)
    session.lock("a").touch()
    assert merge_pending(session) == {"a": "noop"}
    assert not session.lock("a").exists()
    after = graph(session)
    assert after["commit_seq"] == before["commit_seq"]
    assert after["a"] == before["a"]


def test_rejection_leaves_the_graph_untouched_and_success_clears_error(session: SessionPaths) -> None:
    write_artifacts(session, "good", {"sources.json": {"sources": [sample_source()]}})
    write_artifacts(session, "bad", {"claims.json": "{not json"})
    assert merge_pending(session) == {"bad": "rejected", "good": "merged"}
    kept = graph(session)
    assert "bad" not in kept and kept["good"]["sources"][0]["id"] == "S1"
    problem = retry_doc(session, "bad")["files"][0]["problems"][0]
    assert problem["rule"] == "json.syntax" and "line 1, column 2" in problem["message"]
    write_artifacts(session, "bad", {"claims.json": {"claims": [sample_claim(source_id="good:S1")]}}, lock=False)
    os.replace(session.lock_error("bad"), session.lock("bad"))
    assert merge_pending(session) == {"bad": "merged"}
    assert not session.retry_instructions("bad").exists() and not session.lock_error("bad").exists()
    assert graph(session)["claims"][0]["evidence"][0]["source_id"] == "good:S1"
    assert graph(session)["claims"][0]["provenance"]["attempt"] == 2


def test_bare_reference_resolves_to_the_only_agent_that_has_it(session: SessionPaths) -> None:
    write_artifacts(session, "ingester", {"sources.json": {"sources": [sample_source("paper-1")]}})
    merge_pending(session)
    write_artifacts(session, "writer", {"claims.json": {"claims": [sample_claim(source_id="paper-1")]}})
    assert merge_pending(session) == {"writer": "merged"}
    assert graph(session)["claims"][0]["evidence"][0]["source_id"] == "ingester:paper-1"


def test_unresolved_reference_is_rejected_with_pointer(session: SessionPaths) -> None:
    write_artifacts(session, "writer", {"claims.json": {"claims": [sample_claim(source_id="S9")]}})
    assert merge_pending(session) == {"writer": "rejected"}
    problem = retry_doc(session, "writer")["files"][0]["problems"][0]
    assert problem["rule"] == "reference.unresolved"
    assert problem["pointer"] == "/claims/0/evidence/0/source_id"
    assert "'S9'" in problem["message"]


def test_sources_are_deduplicated_across_agents_by_doi(session: SessionPaths) -> None:
    write_artifacts(session, "a", {"sources.json": {"sources": [sample_source("S1", doi="10.1000/XYZ")]}})
    write_artifacts(session, "b", {"sources.json": {"sources": [sample_source("P7", doi="10.1000/xyz", url="https://www.example.org/paper/")]},
                                   "claims.json": {"claims": [sample_claim(source_id="P7")]}})
    assert merge_pending(session) == {"a": "merged", "b": "merged"}
    kg = graph(session)
    assert len(kg["sources"]) == 1
    assert kg["sources"][0]["aliases"] == ["a:S1", "b:P7"]
    assert kg["claims"][0]["evidence"][0]["source_id"] == "a:S1"
    write_artifacts(session, "c", {"sources.json": {"sources": [sample_source("W", url="http://example.org/paper")]}})
    assert merge_pending(session) == {"c": "merged"}
    assert [s["aliases"] for s in graph(session)["sources"]] == [["a:S1", "b:P7", "c:W"]]


def test_content_hash_mismatch_is_rejected(session: SessionPaths) -> None:
    bogus = "0" * 64
    session.source_text(bogus).write_text("not matching")
    write_artifacts(session, "a", {"sources.json": {"sources": [sample_source(content_sha256=bogus)]}})
    assert merge_pending(session) == {"a": "rejected"}
    problem = retry_doc(session, "a")["files"][0]["problems"][0]
    assert problem["rule"] == "source_text.invalid" and "does not match its name" in problem["message"]


def test_unverified_high_priority_claim_is_a_shacl_violation_with_closest_passage(session: SessionPaths) -> None:
    sha = store_text(session, "Page one.\fThe measured latency was 12 ms on average across runs.")
    write_artifacts(session, "a", {
        "sources.json": {"sources": [sample_source(content_sha256=sha)]},
        "claims.json": {"claims": [sample_claim(priority="high", evidence=[
            {"source_id": "S1", "snippet": "latency was 40 ms at the median", "locator": {"page": 2}}])]},
    })
    assert merge_pending(session) == {"a": "rejected"}
    doc = retry_doc(session, "a")
    assert doc["error_class"] == "shacl"
    violation = doc["shacl_violations"][0]
    assert violation["file"] == "artifacts/a/claims.json" and violation["pointer"].startswith("/claims/0")
    assert "latency was 40 ms at the median" in violation["message"]
    assert "latency was 12 ms" in violation["message"]
    assert "a" not in graph(session) if session.kg_json.exists() else True


@pytest.mark.parametrize("name", ["Bad_Agent", "claims", "9lives"])
def test_invalid_agent_names_are_rejected(session: SessionPaths, name: str) -> None:
    write_artifacts(session, name, {"x.json": {}})
    assert merge_pending(session) == {name: "rejected"}
    assert session.lock_error(name).exists()
    assert retry_doc(session, name)["error_class"] == "agent_name"


def test_symlinked_artifact_is_rejected(session: SessionPaths, tmp_path: Path) -> None:
    outside = tmp_path / "secret.json"
    outside.write_text("{}")
    folder = write_artifacts(session, "a", {"sources.json": {"sources": [sample_source()]}}, lock=False)
    (folder / "link.json").symlink_to(outside)
    session.lock("a").touch()
    assert merge_pending(session) == {"a": "rejected"}
    assert retry_doc(session, "a")["files"][0]["problems"][0]["rule"] == "path.symlink"


def test_size_limit_is_exact(session: SessionPaths) -> None:
    def padded(size: int) -> bytes:
        head = b'{"pad": "'
        return head + b"x" * (size - len(head) - 2) + b'"}'

    write_artifacts(session, "ok", {"blob.json": padded(65_536)})
    write_artifacts(session, "big", {"blob.json": padded(65_537)})
    assert merge_pending(session) == {"big": "rejected", "ok": "merged"}
    files = retry_doc(session, "big")["files"]
    assert files[0]["size"] == 65_537 and files[0]["problems"][0]["rule"] == "size.file_too_large"


def test_attempts_are_counted_in_session_json(session: SessionPaths) -> None:
    write_artifacts(session, "a", {"x.json": []})
    merge_pending(session)
    write_artifacts(session, "a", {"x.json": {"ok": True}}, lock=False)
    os.replace(session.lock_error("a"), session.lock("a"))
    merge_pending(session)
    agents = json.loads(session.session_json.read_text())["agents"]
    assert agents["a"]["attempts"] == 2 and agents["a"]["state"] == "merged"


def test_report_outline_may_cite_only_verified_claims(session: SessionPaths) -> None:
    sha = store_text(session, "Only page. Caches cut latency by half.")
    write_artifacts(session, "r", {
        "sources.json": {"sources": [sample_source(content_sha256=sha)]},
        "claims.json": {"claims": [
            sample_claim("C1", evidence=[{"source_id": "S1", "snippet": "Caches cut latency by half"}]),
            sample_claim("C2", evidence=[{"source_id": "S1", "snippet": "Caches double throughput"}])]},
    })
    assert merge_pending(session) == {"r": "merged"}
    outline = {"report_outline": {"title": "T", "sections": [{"heading": "Key Findings", "paragraphs": [
        {"text": "Caching halves latency [@r:C1]. It also doubles throughput [@C2]. And more [@C9]."}]}]}}
    write_artifacts(session, "synthesis-agent", {"report-outline.json": outline})
    assert merge_pending(session) == {"synthesis-agent": "rejected"}
    problems = retry_doc(session, "synthesis-agent")["files"][0]["problems"]
    assert [p["rule"] for p in problems] == ["citation.unverified", "citation.unresolved"]
    assert problems[0]["pointer"] == "/report_outline/sections/0/paragraphs/0/text"
    assert "'r:C2'" in problems[0]["message"]
