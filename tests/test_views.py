"""Materialized views: the incremental TriG equals a full serialisation; views track commits."""

from __future__ import annotations

import json

import pytest
from rdflib import Dataset

from orchestrator.commit.processor import Processor
from orchestrator.commit.view_blocks import TrigBlocks
from orchestrator.commit.views import flush_views
from orchestrator.model.layout import SessionPaths
from orchestrator.rdf.write import serialize_graphs
from tests.conftest import sample_claim, sample_source, write_artifacts

# rdflib's TriG parser warns about its own internal use of ConjunctiveGraph / default_context.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:rdflib")


def test_incremental_trig_equals_full_serialisation_after_each_merge(session: SessionPaths) -> None:
    processor = Processor(session)
    blocks = TrigBlocks(processor.context)
    try:
        for round_number, agent in enumerate(["alpha", "beta", "alpha"]):
            write_artifacts(session, agent, {"sources.json": {"sources": [sample_source(f"S{round_number}")]},
                                             "claims.json": {"claims": [sample_claim(source_id=f"S{round_number}")]}})
            assert [o.status for o in processor.process_pending()] == ["merged"]
            graphs = processor.rdf.agent_graphs()
            incremental = blocks.render(processor.state.records)
            assert incremental == serialize_graphs(graphs.values(), processor.session_id, "trig")
        dataset = Dataset()
        dataset.parse(data=incremental, format="trig")
        names = {str(g.identifier) for g in dataset.graphs() if len(g)}
        assert {"urn:cconductor:agent:alpha", "urn:cconductor:agent:beta"} <= names
    finally:
        processor.close()


def test_views_name_the_commit_they_show(session: SessionPaths) -> None:
    processor = Processor(session)
    try:
        write_artifacts(session, "alpha", {"sources.json": {"sources": [sample_source()]}})
        processor.process_pending()
        assert flush_views(processor) is True
        assert flush_views(processor) is False  # nothing new to show
        graph = json.loads(session.kg_json.read_text())
        marker = json.loads(session.view_marker.read_text())
        assert graph["commit_seq"] == marker["commit_seq"] == processor.ledger.head()
    finally:
        processor.close()


def test_trig_blocks_stored_as_text_by_an_older_version_still_render_the_same(session: SessionPaths) -> None:
    """Blocks are stored as bytes now; a store written before holds text, read back and encoded."""
    processor = Processor(session)
    try:
        write_artifacts(session, "alpha", {"sources.json": {"sources": [sample_source("S1")]},
                                           "claims.json": {"claims": [sample_claim(source_id="S1")]}})
        assert [o.status for o in processor.process_pending()] == ["merged"]
        expected = TrigBlocks(processor.context).render(processor.state.records)
        stored = processor.ledger.derived("trig")
        assert isinstance(stored["alpha"][1], bytes)
        seq, body = stored["alpha"]
        processor.ledger.put_derived("trig", [("alpha", seq, body.decode())])
        assert isinstance(processor.ledger.derived("trig")["alpha"][1], str)
        assert TrigBlocks(processor.context).render(processor.state.records) == expected
    finally:
        processor.close()
