"""``knowledge-graph.json`` written from cached fragments is byte for byte a full rebuild."""

from __future__ import annotations

from typing import Any

import orjson

from orchestrator.commit.json_view import KIND, JsonFragments, whole
from orchestrator.commit.processor import Processor
from orchestrator.commit.views import flush_views
from orchestrator.graph.unified import build_views
from orchestrator.model.layout import SessionPaths
from orchestrator.session.ledger import Ledger
from tests.conftest import sample_claim, sample_source, write_artifacts

BASE = "The pilot plant converts {} of the feedstock into ethanol in 2020."


def _full_rebuild(session: SessionPaths, generated_at: str) -> bytes:
    fresh = Processor(session)
    try:
        graph = build_views(fresh.state.records, fresh.session_id, fresh.state.head_seq, generated_at)
    finally:
        fresh.close()
    return orjson.dumps(graph, option=orjson.OPT_INDENT_2) + b"\n"


def _files(agent: str, value: str, shared_doi: str) -> dict[str, Any]:
    """Two sources (one DOI shared across agents, so sources de-duplicate), a claim, an entity."""
    sources = [sample_source("S1", doi=shared_doi), sample_source("S2", url=f"https://example.org/{agent}")]
    claims = [sample_claim("C1", source_id="S2", statement=BASE.format(value), entity_ids=["E1"]),
              sample_claim("C2", source_id="S1")]
    return {"sources.json": {"sources": sources}, "claims.json": {"claims": claims},
            "entities.json": {"entities": [{"id": "E1", "name": "Ethanol", "type": "substance"}]}}


def _assessment(claim_id: str, confidence: float) -> dict[str, Any]:
    return {"confidence-scores.json": {"confidence_scores": [
        {"claim_id": claim_id, "confidence": confidence, "status": "single-source", "rationale": "r",
         "supporting_source_ids": []}]}}


def test_flushes_after_each_merge_equal_a_fresh_full_build(session: SessionPaths) -> None:
    """Retries, another agent's assessment of a claim, and an agent sorted first that becomes the
    canonical owner of shared sources and entities: each changes parts of agents not merged."""
    steps: list[tuple[str, dict[str, Any]]] = [
        ("alpha", _files("alpha", "40%", "10.1000/a")), ("beta", _files("beta", "12%", "10.1000/a")),
        ("gamma", _files("gamma", "25%", "10.1000/c")), ("delta", _assessment("alpha:C1", 0.3)),
        ("beta", _files("beta", "13%", "10.1000/c")), ("aardvark", _files("aardvark", "90%", "10.1000/a")),
        ("delta", _assessment("alpha:C1", 0.6)), ("alpha", _files("alpha", "41%", "10.1000/z")),
    ]
    processor = Processor(session)
    try:
        for agent, files in steps:
            write_artifacts(session, agent, files)
            assert [o.status for o in processor.process_pending()] == ["merged"], agent
            assert flush_views(processor) is True
            written = session.kg_json.read_bytes()
            assert written == _full_rebuild(session, orjson.loads(written)["generated_at"]), agent
        fragments = processor.views.json_fragments
        assert sorted(fragments._memory) == ["aardvark", "alpha", "beta", "delta", "gamma"]  # cached
        assert ("claims", "gamma") in fragments._segments
        graph = orjson.loads(session.kg_json.read_bytes())
        assert graph["stats"]["detected_contradictions"] >= 1  # cross-agent parts were recomputed
        assert any(len(s["aliases"]) > 1 for s in graph["sources"])
    finally:
        processor.close()


def test_a_reused_fragment_cache_matches_orjson_of_the_whole_graph(session: SessionPaths) -> None:
    processor = Processor(session)
    fragments = JsonFragments()
    try:
        for index, agent in enumerate(["ant", "bee", "ant"]):
            write_artifacts(session, agent, _files(agent, f"{10 + index}%", "10.1000/x"))
            processor.process_pending()
            records = processor.state.records
            graph = build_views(records, processor.session_id, processor.state.head_seq, "2026-01-01T00:00:00Z")
            assert fragments.render(graph, records) == orjson.dumps(graph, option=orjson.OPT_INDENT_2) + b"\n"
            assert f"{10 + index}%".encode() in fragments._memory[agent][1]  # a retry renders again
    finally:
        processor.close()


def test_keys_out_of_the_usual_order_are_left_to_a_whole_rendering() -> None:
    record = {"seq": 1, "namespace": {}, "attempt": 1}
    graph = {"schema_version": 1, "session": "s", "generated_at": "t", "commit_seq": 1, "sources": []}
    assert JsonFragments().render(graph, {"sources": record}) is None  # an agent named like a collection


def test_trig_bytes_from_encoded_blocks_equal_the_encoded_document() -> None:
    from orchestrator.commit.trig_bytes import pieces
    from orchestrator.rdf.write import trig_document

    first = [("urn:b", "<urn:b> {\n    <urn:x> <urn:p> \"café\" .\n}"), ("urn:a", "<urn:a> {\n}"), ("urn:c", "")]
    for blocks in (first, [first[0], ("urn:a", "<urn:a> {\n    <urn:y> <urn:p> \"é\" .\n}")], []):
        expected = trig_document("s1", [b for _, b in sorted(blocks)]).encode()
        assert b"".join(pieces("s1", [(iri, block.encode()) for iri, block in blocks])) == expected


def test_a_cited_text_stored_late_is_checked_again_at_the_next_flush(session: SessionPaths) -> None:
    """beta cites alpha's source; alpha's retry names a new text that is missing at one flush and
    stored before the next: beta's cached part is rebuilt, like a full rebuild, which re-checks it."""
    from orchestrator.commit.views import _rechecker
    from tests.conftest import store_text

    def rebuild(generated_at: str) -> bytes:
        fresh = Processor(session)
        try:
            graph = build_views(fresh.state.records, fresh.session_id, fresh.state.head_seq, generated_at,
                                recheck=_rechecker(fresh.context))
        finally:
            fresh.close()
        return orjson.dumps(graph, option=orjson.OPT_INDENT_2) + b"\n"

    quote = "merging the knowledge of several agents is hard"
    first, second = store_text(session, f"At first {quote}."), store_text(session, f"Still, {quote} today.")
    steps: list[tuple[str, dict[str, Any]]] = [
        ("alpha", {"sources.json": {"sources": [sample_source("S1", content_sha256=first)]}}),
        ("beta", {"claims.json": {"claims": [sample_claim("C1", source_id="alpha:S1", snippet=quote)]}}),
        ("alpha", {"sources.json": {"sources": [sample_source("S1", content_sha256=second)]}}),
        ("gamma", {"sources.json": {"sources": [sample_source("S1", url="https://example.org/g")]}}),
    ]
    processor = Processor(session)
    try:
        for index, (agent, files) in enumerate(steps):
            write_artifacts(session, agent, files)
            assert [o.status for o in processor.process_pending()] == ["merged"], agent
            if index == 2:
                session.source_text(second).unlink()  # the new text is not there at this flush
            if index == 3:
                store_text(session, f"Still, {quote} today.")  # ... and arrives before the next one
            assert flush_views(processor) is True
            written = session.kg_json.read_bytes()
            assert written == rebuild(orjson.loads(written)["generated_at"]), agent
            if index >= 2:
                verification = orjson.loads(written)["claims"][0]["evidence"][0]["verification"]
                assert verification["rechecked"] and verification["verified"] is (index == 3)
    finally:
        processor.close()


def test_pieces_are_written_whole_even_when_writev_writes_short(tmp_path: Any, monkeypatch: Any) -> None:
    """The views are written in pieces with writev; a short write is completed piece by piece."""
    import os

    from orchestrator.session import atomic

    real = os.writev
    calls: list[int] = []

    def short(fd: int, pieces: list[bytes]) -> int:
        calls.append(len(pieces))
        return real(fd, [bytes(pieces[0][:3])]) if len(calls) == 1 else real(fd, pieces)

    monkeypatch.setattr(atomic.os, "writev", short)
    monkeypatch.setattr(atomic, "_IOV_MAX", 4)
    pieces = [f"piece {i};".encode() for i in range(10)]
    atomic.atomic_write_bytes(tmp_path / "view.json", pieces)
    assert (tmp_path / "view.json").read_bytes() == b"".join(pieces)
    assert calls == [4, 4, 2]


def test_a_fresh_process_writes_namespaces_from_their_stored_renderings(session: SessionPaths) -> None:
    """The graph is loaded without any agent's namespace; a later process's flush splices the rendering
    kept for each record, and a record that has none (a store from before, or a retry) is rendered."""
    first = Processor(session)
    try:
        for agent in ("ant", "bee", "cow"):
            write_artifacts(session, agent, _files(agent, "10%", "10.1000/x"))
        assert {o.status for o in first.process_pending()} == {"merged"}
        assert flush_views(first) is True
        stored = first.ledger.derived(KIND)
        assert sorted(stored) == ["ant", "bee", "cow"]
        seq, body = stored["bee"]
        assert seq == first.state.records["bee"]["seq"] and b'"bee": {' in body
    finally:
        first.close()
    ledger = Ledger(session.store_db)
    ledger.put_derived(KIND, [("bee", seq, body.replace(b"10%", b"planted"))])  # proves it is used
    ledger.close()
    for step in range(2):
        fresh = Processor(session)
        try:
            assert all("namespace" not in dict.keys(r) for r in fresh.state.records.values())  # left in the store
            if step == 1:  # a retry of cow: its new record is rendered and kept; the others are not parsed
                write_artifacts(session, "cow", _files("cow", "11%", "10.1000/x"))
                assert [o.status for o in fresh.process_pending()] == ["merged"]
            assert flush_views(fresh, force=True) is True
            written = session.kg_json.read_bytes()
            assert all("namespace" not in dict.keys(r) for a, r in fresh.state.records.items() if a != "cow")
        finally:
            fresh.close()
        assert written.count(b"planted") == 1  # bee's namespace came from its stored rendering
        assert written.replace(b"planted", b"10%") == _full_rebuild(session, orjson.loads(written)["generated_at"])
    assert Ledger(session.store_db).derived(KIND)["cow"][0] > seq


def test_lists_rendered_in_chunks_equal_the_whole_rendering() -> None:
    """Long lists without per-agent pieces are rendered CHUNK items at a time, never whole."""
    from orchestrator.commit.json_view import CHUNK
    from orchestrator.graph.unified_parts import DEFERRED

    record = {"seq": 3, "attempt": 1, "merged_at": "t", "artifact_sha256": "a", "files": [],
              "namespace": {"claims": [{"id": "C1", "statement": "é \u2028 \"q\""}]}}
    graph: dict[str, Any] = {"schema_version": 1, "session": "s", "generated_at": "t", "commit_seq": 3,
                             "zed": DEFERRED}
    for index, name in enumerate(("sources", "claims", "entities", "relationships", "gaps", "contradictions")):
        graph[name] = [{"id": f"{name}-{i}", "n": i, "nested": {"x": [i, "y"]}} for i in range(index * CHUNK + 1)]
    graph.update(sections=[], figures=[], tables=[], captions=[])  # a document structure: none here
    graph["stats"] = {"agents": 1}
    pieces = list(JsonFragments().pieces(graph, {"zed": record}) or [])
    longest = len(orjson.dumps(graph["contradictions"], option=orjson.OPT_INDENT_2))  # 5 chunks and one item
    assert max(len(p) for p in pieces) < longest / 4
    expected = orjson.dumps(whole(graph, {"zed": record}), option=orjson.OPT_INDENT_2) + b"\n"
    assert b"".join(pieces) == expected
    assert orjson.loads(expected)["zed"]["_provenance"]["commit_seq"] == 3


def test_a_value_orjson_cannot_write_falls_back_to_a_whole_rendering(session: SessionPaths) -> None:
    """An integer beyond 64 bits merged by an older version: the streamed write fails part-way, leaves
    the old view in place, and the view is then written whole by the json module."""
    processor = Processor(session)
    try:
        write_artifacts(session, "ant", _files("ant", "10%", "10.1000/x"))
        assert [o.status for o in processor.process_pending()] == ["merged"]
        processor.state.records["ant"]["namespace"]["notes"] = {"n": 2**70}
        processor.state.records["ant"]["seq"] = None  # not the committed record: rendered, not kept
        assert flush_views(processor, force=True) is True
        graph = orjson.loads(session.kg_json.read_bytes().replace(str(2**70).encode(), b'"big"'))
        assert graph["ant"]["notes"] == {"n": "big"}
        assert not list(session.root.glob("**/.knowledge-graph.json.*.tmp"))
    finally:
        processor.close()


def test_records_load_from_their_stored_core_or_from_the_full_record(session: SessionPaths) -> None:
    """Each merge stores its record without raw and namespace beside it; a record committed before
    has none and is loaded by removing both from the full record. Either way the same graph."""
    processor = Processor(session)
    try:
        for agent in ("ant", "bee"):
            write_artifacts(session, agent, _files(agent, "10%", "10.1000/x"))
        assert {o.status for o in processor.process_pending()} == {"merged"}
        expected = {a: dict(r) for a, r in Ledger(session.store_db).current_changes().items() if r is not None}
        assert sorted(processor.ledger.derived("core")) == ["ant", "bee"]
    finally:
        processor.close()
    store = Ledger(session.store_db)
    try:
        with store._transaction() as db:
            db.execute("DELETE FROM derived WHERE kind = 'core' AND agent = 'bee'")
        loaded = store.current_changes()
        assert {a: dict(r) for a, r in loaded.items() if r is not None} == expected
        assert "namespace" not in dict.keys(loaded["bee"]) and loaded["bee"]["namespace"]["claims"]  # fetched
        assert expected["ant"]["contribution"]["items"]["claims"] and "raw" not in expected["ant"]
    finally:
        store.close()
