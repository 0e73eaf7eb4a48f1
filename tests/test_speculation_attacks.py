"""Cases built to break the helpers' judging: processing with helpers equals processing without, byte for byte.

The harness is tests/helpers/judging.py. The first cases are what a review briefed to break the
change found (each failed before its fix); the others are what it tried that held.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from orchestrator.commit import evaluation, readahead
from orchestrator.commit.processor import Processor
from orchestrator.model.layout import SessionPaths
from tests.conftest import sample_claim, sample_source, store_text, write_artifacts
from tests.helpers.judging import QUOTE, TEXT, alone_files, both_ways, commit_pending, plan_files


def _aaa_writes_before_each_folder_check(patch: pytest.MonkeyPatch) -> None:
    """'aaa' writes one more (ignored, non-JSON) file each time just before the processor compares its folder."""
    unchanged = evaluation.Evaluation.folder_unchanged

    def writing(self: evaluation.Evaluation, pending: Any) -> bool:
        if pending.name == "aaa":
            folder = self.paths.agent_artifacts("aaa")
            (folder / f"notes-{len(list(folder.iterdir()))}.txt").write_text("late")
        return unchanged(self, pending)

    patch.setattr(evaluation.Evaluation, "folder_unchanged", writing)


def test_an_adopted_graph_a_later_citer_installed_goes_with_the_take_back(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """'aaa' (a plan, alone) is adopted; 'xxx' names aaa:Q1, so staging xxx installs aaa's graph from its record.
    aaa's folder changes before its folder check: aaa is deferred and taken back, and its graph must leave the
    union with it (LazyRdf.unstage), else xxx, judged again, misses its 'not in any plan' SHACL warning."""
    def stage(session: SessionPaths) -> None:
        write_artifacts(session, "aaa", plan_files("Q1"))
        write_artifacts(session, "xxx", alone_files("xxx", sub_question_id="aaa:Q1"))

    _aaa_writes_before_each_folder_check(monkeypatch)
    both_ways(tmp_path, monkeypatch, stage)


def _rewrite_keeping_key(path: Path, data: bytes) -> None:
    """Rewrite a file in place (same inode) with bytes of the same size, and put its mtime back.

    What two writes within one mtime tick do (coarse timestamps: FAT/exFAT 2 s, NFS/SMB, ext4's jiffy clock).
    """
    info = os.stat(path)
    assert len(data) == info.st_size
    with open(path, "r+b") as handle:
        handle.write(data)
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert (os.stat(path).st_size, os.stat(path).st_mtime_ns, os.stat(path).st_ino) == (
        info.st_size, info.st_mtime_ns, info.st_ino)


def test_a_text_rewritten_with_its_size_and_mtime_after_the_helper_judged(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A text's file key holds its change time too, which putting the modification time back cannot hide."""
    def stage(session: SessionPaths) -> None:
        sha = store_text(session, TEXT)
        os.utime(session.source_text(sha), ns=(1, 1))  # an old, settled file
        write_artifacts(session, "alone-a", alone_files("alone-a", sha, priority="high"))

    def corrupt(session: SessionPaths) -> None:
        for path in session.sources.glob("*.txt"):
            _rewrite_keeping_key(path, TEXT.replace("52", "25").encode())

    both_ways(tmp_path, monkeypatch, stage, between=corrupt)


def test_an_artifact_rewritten_with_its_size_and_mtime_after_the_helper_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder's fingerprint holds each entry's change time too (artifacts.folder_fingerprint)."""
    def stage(session: SessionPaths) -> None:
        sha = store_text(session, TEXT)
        write_artifacts(session, "alone-a", alone_files("alone-a", sha))

    def rewrite(session: SessionPaths) -> None:
        path = session.agent_artifacts("alone-a") / "claims.json"
        _rewrite_keeping_key(path, path.read_bytes().replace(b"merging is hard", b"merging is easy"))

    both_ways(tmp_path, monkeypatch, stage, between=rewrite)


def test_an_adopted_shacl_warning_on_a_blank_node_path_reads_as_the_processors(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SourceShape-locator's sh:path is a blank node (sh:alternativePath), named in Problem.details["path"]:
    every process must name it alike (rdf/shacl.parse_turtle numbers blank nodes in file order)."""
    def stage(session: SessionPaths) -> None:
        files = alone_files("no-locator")
        del files["sources.json"]["sources"][0]["url"]  # no doi/url/arxiv/local_path/content_sha256: a warning
        write_artifacts(session, "no-locator", files)

    got, _ = both_ways(tmp_path, monkeypatch, stage)
    assert got["adopted"] == ["no-locator"]


def test_bare_ids_of_an_adopted_agent_cited_by_later_and_earlier_agents(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    def stage(session: SessionPaths) -> None:
        sha = store_text(session, TEXT)
        mid = alone_files("mmm", sha)
        mid["sources.json"]["sources"][0]["id"] = "SM"
        mid["claims.json"]["claims"][0].update(id="CM", evidence=[{"source_id": "SM", "snippet": QUOTE}])
        mid["entities.json"] = {"entities": [{"id": "EM", "name": "Water", "type": "substance"}]}
        write_artifacts(session, "mmm", mid)
        for agent in ("aaa", "zzz"):  # before and after mmm: bare ids only mmm has
            files = alone_files(agent, sha)
            files["claims.json"]["claims"].append(sample_claim("C2", "SM", QUOTE) | {"entity_ids": ["EM"]})
            files["relationships.json"] = {"relationships": [
                {"id": "R1", "subject": "CM", "predicate": "supports", "object": "EM"}]}
            files["key-findings.json"] = {"key_findings": [{"id": "K1", "statement": "x", "claim_ids": ["CM"]}]}
            write_artifacts(session, agent, files)

    got, _ = both_ways(tmp_path, monkeypatch, stage)
    assert got["adopted"] == ["mmm"]


def test_bare_sub_question_ids_resolving_to_an_adopted_plan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def stage(session: SessionPaths) -> None:
        sha = store_text(session, TEXT)
        # before the plan: kept as written; after it: resolves to ppp:Q7
        write_artifacts(session, "aaa", alone_files("aaa", sha, sub_question_id="Q7"))
        write_artifacts(session, "ppp", plan_files("Q7", "Q8"))
        write_artifacts(session, "qqq", alone_files("qqq", sha, sub_question_id="Q7"))
        write_artifacts(session, "rrr", alone_files("rrr", sha, sub_question_id="ppp:Q8"))
        gaps = {"gaps": [{"id": "G1", "description": "?", "priority": "low", "sub_question_id": "Q8"}],
                "coverage": [{"id": "V1", "sub_question_id": "Q7", "status": "partial", "claim_ids": ["C1"]}]}
        write_artifacts(session, "sss", alone_files("sss", sha) | {"gaps.json": gaps})

    got, _ = both_ways(tmp_path, monkeypatch, stage)
    assert "ppp" in got["adopted"]


def test_report_outlines_citing_own_and_other_claims(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def outline(*refs: str) -> dict[str, Any]:
        return {"report-outline.json": {"report_outline": {"title": "T", "summary": f"S [@{refs[0]}].", "sections": [
            {"heading": "H", "paragraphs": [{"text": "P " + " ".join(f"[@{r}]" for r in refs)}]}]}}}

    def stage(session: SessionPaths) -> None:
        sha = store_text(session, TEXT)
        write_artifacts(session, "aaa", alone_files("aaa", sha) | outline("C1", "aaa:C1"))
        write_artifacts(session, "bbb", alone_files("bbb", sha) | outline("C1", "aaa:C1"))
        write_artifacts(session, "ccc", outline("bbb:C1"))
        write_artifacts(session, "ddd", alone_files("ddd", sha) | outline("zzz:C1"))
        unverified = alone_files("eee", sha)
        unverified["claims.json"]["claims"][0]["evidence"][0]["snippet"] = "not in the text at all, really not"
        write_artifacts(session, "eee", unverified | outline("C1"))
        write_artifacts(session, "zzz", alone_files("zzz", sha))

    got, _ = both_ways(tmp_path, monkeypatch, stage)
    assert got["adopted"] == ["aaa", "zzz"]  # bbb names aaa:C1 in its outline


def test_entities_relationships_contradictions_and_detected_contradictions(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    def stage(session: SessionPaths) -> None:
        sha = store_text(session, TEXT)
        for agent, statement in (("aaa", "Coffee improves memory."), ("bbb", "Coffee does not improve memory.")):
            files = alone_files(agent, sha)
            claims = files["claims.json"]["claims"]
            claims[0]["statement"] = statement
            claims.append(sample_claim("C2", "S1", QUOTE) | {"statement": "Tea improves memory."})
            files["entities.json"] = {"entities": [{"id": "E1", "name": "Coffee", "type": "substance"},
                                                   {"id": "E2", "name": "Memory", "type": "concept"}]}
            files["relationships.json"] = {"relationships": [
                {"id": "R1", "subject": "E1", "predicate": "improves", "object": "E2",
                 **({"claim_ids": ["C1"]} if agent == "aaa" else {})},  # bbb's C1 says it does not
                {"id": "R2", "subject": "C1", "predicate": "contradicts", "object": "C2"}]}
            files["contradictions.json"] = {"contradictions": [
                {"id": "X1", "claim_ids": ["C1", "C2"], "description": "d", "status": "open"}]}
            files["confidence-scores.json"] = {"confidence_scores": [
                {"claim_id": "C1", "confidence": 0.5, "status": "single-source",
                 "supporting_source_ids": ["S1"]}]}
            write_artifacts(session, agent, files)
        write_artifacts(session, "ccc", {"contradictions.json": {"contradictions": [
            {"id": "X1", "claim_ids": ["aaa:C1", "bbb:C1"], "description": "d", "status": "open"}]}})
        write_artifacts(session, "ddd", {"contradictions.json": {"contradictions": [  # one claim only: violation
            {"id": "X1", "claim_ids": ["aaa:C1", "aaa:C1"], "description": "d", "status": "open"}]}})

    got, _ = both_ways(tmp_path, monkeypatch, stage)

    assert {"aaa", "bbb"} <= set(got["adopted"])


def test_sources_shared_by_doi_url_and_text_across_agents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def stage(session: SessionPaths) -> None:
        sha = store_text(session, TEXT)
        other = store_text(session, TEXT + " More.")
        write_artifacts(session, "early", alone_files("early", other))
        assert commit_pending(session) == [("early", "merged")]
        for n, agent in enumerate(("aaa", "bbb", "ccc", "ddd")):
            files = alone_files(agent, sha if n % 2 else other)
            source = files["sources.json"]["sources"][0]
            source["url"] = "https://x.org/shared" if n < 2 else f"https://x.org/{agent}"
            if n >= 2:
                source["doi"] = "10.1000/shared"
            write_artifacts(session, agent, files)

    got, _ = both_ways(tmp_path, monkeypatch, stage)
    assert len(got["adopted"]) == 4


def test_texts_missing_appearing_or_removed_between_helper_and_batch(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    late_text = TEXT + " Late."

    def stage(session: SessionPaths) -> None:
        sha = store_text(session, TEXT)
        import hashlib

        late = hashlib.sha256(late_text.encode()).hexdigest()
        write_artifacts(session, "appears", alone_files("appears", late))
        write_artifacts(session, "removed", alone_files("removed", store_text(session, TEXT + " Gone.")))
        write_artifacts(session, "touched", alone_files("touched", sha))
        write_artifacts(session, "nosha", alone_files("nosha"))

    def change(session: SessionPaths) -> None:
        store_text(session, late_text)
        import hashlib

        session.source_text(hashlib.sha256((TEXT + " Gone.").encode()).hexdigest()).unlink()
        for path in session.sources.glob("*.txt"):
            os.utime(path, ns=(10**18, 10**18))  # a new key, same bytes

    got, _ = both_ways(tmp_path, monkeypatch, stage, between=change)
    assert sorted(got["adopted"]) == ["nosha", "touched"]


def test_folder_changed_between_helper_read_and_claim(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def stage(session: SessionPaths) -> None:
        sha = store_text(session, TEXT)
        write_artifacts(session, "aaa", alone_files("aaa", sha))
        write_artifacts(session, "bbb", alone_files("bbb", sha))

    def change(session: SessionPaths) -> None:
        write_artifacts(session, "aaa", {"claims.json": {"claims": [sample_claim("C1", "S9", QUOTE)]}}, lock=False)

    got, _ = both_ways(tmp_path, monkeypatch, stage, between=change)
    assert got["adopted"] == ["bbb"]


def test_rejected_before_and_lock_re_seen_after_a_crash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """'crashed' was rejected (its text missing); the lock comes back with the same files (attempt kept), the text
    is there now; 'again' was rejected and resubmits other files (attempt 2); 'third' is on attempt 3."""
    def stage(session: SessionPaths) -> None:
        import hashlib

        missing = hashlib.sha256(TEXT.encode()).hexdigest()
        write_artifacts(session, "crashed", alone_files("crashed", missing))
        write_artifacts(session, "again", {"claims.json": {"claims": [sample_claim("C1", "S9", QUOTE)]}})
        write_artifacts(session, "third", {"claims.json": {"claims": [sample_claim("C1", "S9", QUOTE)]}})
        assert {s for _, s in commit_pending(session)} == {"rejected"}
        write_artifacts(session, "third", {"claims.json": {"claims": [sample_claim("C1", "S8", QUOTE)]}})
        assert commit_pending(session) == [("third", "rejected")]
        store_text(session, TEXT)
        os.replace(session.lock_error("crashed"), session.lock("crashed"))  # as if the rename was lost
        for agent in ("again", "third"):
            os.unlink(session.lock_error(agent))
            shutil.rmtree(session.agent_artifacts(agent))
            write_artifacts(session, agent, alone_files(agent, missing))

    got, _ = both_ways(tmp_path, monkeypatch, stage)
    assert {a: at for a, _, at, *_ in got["outcomes"]} == {"again": 2, "crashed": 1, "third": 3}
    assert sorted(got["adopted"]) == ["again", "crashed", "third"]


def test_rolled_back_then_resubmitted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from orchestrator.commit.rollback import rollback_session

    def stage(session: SessionPaths) -> None:
        sha = store_text(session, TEXT)
        write_artifacts(session, "aaa", alone_files("aaa", sha) | plan_files("Q1"))
        assert commit_pending(session) == [("aaa", "merged")]
        write_artifacts(session, "bbb", alone_files("bbb", sha, sub_question_id="aaa:Q1"))
        write_artifacts(session, "ccc", alone_files("ccc", sha))
        assert sorted(commit_pending(session)) == [("bbb", "merged"), ("ccc", "merged")]
        rollback_session(session, 1)  # ccc and bbb gone
        rollback_session(session, 0)  # aaa gone
        write_artifacts(session, "aaa", alone_files("aaa", sha, priority="high") | plan_files("Q1"))
        write_artifacts(session, "ccc", alone_files("ccc", sha, priority="high"))
        write_artifacts(session, "ddd", alone_files("ddd", sha, sub_question_id="aaa:Q1"))

    got, _ = both_ways(tmp_path, monkeypatch, stage)
    assert sorted(got["adopted"]) == ["aaa", "ccc"]


def test_rolled_back_agent_still_cited_by_a_committed_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """bbb names aaa:Q1 before aaa exists (kept as written); aaa merges, is rolled back alone, resubmits."""
    from orchestrator.commit.rollback import rollback_session

    def stage(session: SessionPaths) -> None:
        sha = store_text(session, TEXT)
        write_artifacts(session, "bbb", alone_files("bbb", sha, sub_question_id="aaa:Q1"))
        assert commit_pending(session) == [("bbb", "merged")]
        write_artifacts(session, "aaa", plan_files("Q1"))
        assert commit_pending(session) == [("aaa", "merged")]
        rollback_session(session, 1)
        write_artifacts(session, "aaa", plan_files("Q2"))

    got, _ = both_ways(tmp_path, monkeypatch, stage)
    assert got["adopted"] == []


def test_invalid_names_folder_locks_and_duplicate_ids_in_a_chunk(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    def stage(session: SessionPaths) -> None:
        sha = store_text(session, TEXT)
        write_artifacts(session, "aaa", alone_files("aaa", sha))
        (session.root / "Bad_Name.kg.lock").touch()
        (session.root / ("x" * 80 + ".kg.lock")).touch()
        write_artifacts(session, "bbb", alone_files("bbb", sha), lock=False)
        session.lock("bbb").mkdir()
        dup = alone_files("ccc", sha)
        dup["claims.json"]["claims"].append(dup["claims.json"]["claims"][0])
        write_artifacts(session, "ccc", dup)
        write_artifacts(session, "ddd", alone_files("ddd", sha) | {"claims2.json": {"claims": [
            sample_claim("C1", "S1", QUOTE)]}})
        write_artifacts(session, "eee", alone_files("eee", sha) | {"extra.json": {"sources": [
            sample_source("S1", url="https://x.org/other")]}})
        write_artifacts(session, "fff", {"claims.json": b"{not json"})
        write_artifacts(session, "ggg", alone_files("ggg", sha))

    got, _ = both_ways(tmp_path, monkeypatch, stage)
    assert sorted(got["adopted"]) == ["aaa", "ggg"]


def test_shacl_warnings_adopted_violations_judged_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def stage(session: SessionPaths) -> None:
        sha = store_text(session, TEXT)
        warn = alone_files("warn", sha)
        warn["sources.json"]["sources"].append(sample_source("S2"))  # no locator: a warning
        warn["claims.json"]["claims"].append(sample_claim("C2", "S2", QUOTE) | {"evidence": []})  # no evidence
        write_artifacts(session, "warn", warn)
        bad = alone_files("bad", sha)
        bad["sources.json"]["sources"][0]["year"] = 3000
        write_artifacts(session, "bad", bad)
        write_artifacts(session, "high", alone_files("high", sha, priority="high") | {"claims.json": {"claims": [
            sample_claim("C1", "S1", "not in the source text at all, never", priority="high")]}})
        write_artifacts(session, "zzz", {"claims.json": {"claims": [sample_claim("C1", "warn:S2", QUOTE)]}})

    got, _ = both_ways(tmp_path, monkeypatch, stage)
    assert got["adopted"] == ["warn"]


def test_take_backs_in_small_windows_around_adopted_agents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from orchestrator.commit import batch_judge

    monkeypatch.setattr(batch_judge, "FIRST_WINDOW", 3)

    def stage(session: SessionPaths) -> None:
        sha = store_text(session, TEXT)
        bad = alone_files("a0", sha)
        bad["sources.json"]["sources"][0]["year"] = 3000  # a violation: the window stops here
        write_artifacts(session, "a0", bad)
        write_artifacts(session, "a1", alone_files("a1", sha) | plan_files("Q1"))
        write_artifacts(session, "a2", alone_files("a2", sha, sub_question_id="a1:Q1"))
        write_artifacts(session, "a3", {"claims.json": {"claims": [sample_claim("C9", "a1:S1", QUOTE)]}})
        write_artifacts(session, "a4", alone_files("a4", sha))
        bad5 = alone_files("a5", sha)
        bad5["sources.json"]["sources"][0]["year"] = 3000
        write_artifacts(session, "a5", bad5)
        write_artifacts(session, "a6", alone_files("a6", sha))
        write_artifacts(session, "a7", {"claims.json": {"claims": [sample_claim("C9", "a6:S1", QUOTE)]}})
        write_artifacts(session, "a8", alone_files("a8", sha, sub_question_id="a1:Q1"))

    got, _ = both_ways(tmp_path, monkeypatch, stage)
    assert {"a1", "a4", "a6"} <= set(got["adopted"])


def test_adopted_graph_needed_by_later_batches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A long-lived processor: aaa adopted in batch 1; batch 2 cites it, and aaa resubmits dropping an item."""
    def stage(session: SessionPaths) -> None:
        sha = store_text(session, TEXT)
        write_artifacts(session, "aaa", alone_files("aaa", sha) | plan_files("Q1", "Q2"))
        write_artifacts(session, "bbb", alone_files("bbb", sha))

    def before(session: SessionPaths, n: int) -> None:
        sha = store_text(session, TEXT)
        if n == 1:
            write_artifacts(session, "ccc", alone_files("ccc", sha, sub_question_id="aaa:Q2"))
            write_artifacts(session, "ddd", {"claims.json": {"claims": [sample_claim("C9", "bbb:S1", QUOTE)]}})
        if n == 2:
            write_artifacts(session, "aaa", plan_files("Q1"), lock=True)  # drops Q2 that ccc names
            write_artifacts(session, "aaa", {"claims.json": {"claims": []}, "sources.json": {"sources": []}})

    got, _ = both_ways(tmp_path, monkeypatch, stage, batches=3, before_batch=before)
    assert sorted(got["adopted"]) == ["aaa", "bbb"]


def test_another_processor_commits_between_batches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def stage(session: SessionPaths) -> None:
        sha = store_text(session, TEXT)
        write_artifacts(session, "aaa", alone_files("aaa", sha))

    def before(session: SessionPaths, n: int) -> None:
        if n == 1:  # another process merges 'bbb' (naming aaa) and 'ccc'; this one then judges ddd citing ccc
            sha = store_text(session, TEXT)
            write_artifacts(session, "bbb", alone_files("bbb", sha, sub_question_id="eee:Q1"))
            write_artifacts(session, "ccc", alone_files("ccc", sha))
            with monkeypatch.context() as patch:
                patch.setattr(readahead, "MIN_BATCH", 10_000)
                other = Processor(session)
                try:
                    other.process_pending()
                finally:
                    other.close()
            write_artifacts(session, "eee", plan_files("Q1"))
            write_artifacts(session, "fff", plan_files("Q1"))
            write_artifacts(session, "ggg", {"claims.json": {"claims": [sample_claim("C9", "ccc:S1", QUOTE)]}})

    got, _ = both_ways(tmp_path, monkeypatch, stage, batches=2, before_batch=before)
    assert "fff" in got["adopted"] and "eee" not in got["adopted"]


@pytest.mark.parametrize("seed", range(8))
def test_random_batches_with_and_without_helpers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """test_batch_judge's random batches (cross-references, shared texts, retries, plans), helpers on vs off."""
    import random

    from orchestrator.commit import batch_judge
    from tests.test_batch_judge import _stage

    rng = random.Random(1000 + seed)
    monkeypatch.setattr(batch_judge, "FIRST_WINDOW", rng.choice([2, 4, 32]))
    monkeypatch.setattr(readahead, "CHUNK", rng.choice([1, 5, 16]))
    both_ways(tmp_path, monkeypatch, lambda session: _stage(session, rng, 24))
