"""A small validated session for the `ask` tests, built through the real pipeline.

Agent ``reactor-notes`` quotes one stored text (page 2) in four claims and links its entities by
relationships: a chain Lumen reactor -> molten salt -> high pressure -> steel vessel -> welding ->
inspection crews (five steps), plus an island entity ("harbour crane") with no relationship.
Agent ``second-look`` names the Lumen reactor again (merged into the first entity, so its id is an
alias) and records a contradiction about the power claim.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from orchestrator.model.layout import SessionPaths
from orchestrator.session.record import create_session
from tests.conftest import merge_pending, store_text, write_artifacts

PAGE_2 = (
    "The Lumen reactor produces 40 megawatts of electric power for the regional grid. "
    "The Lumen reactor is cooled by molten salt that circulates through the core. "
    "Molten salt cooling does not require high pressure in the primary loop. "
    "Operating without high pressure allows a thin steel vessel around the core. "
    "The thin steel vessel is joined by automated welding of each seam. "
    "Automated welding is checked by inspection crews every six months. "
    "A harbour crane unloads fuel casks at the quay once a year."
)
TEXT = "Lumen reactor field notes, page one.\f" + PAGE_2
A = "reactor-notes"
B = "second-look"

# (id, name) and the relationship chain between consecutive entities
ENTITIES = [("E-lumen", "Lumen reactor"), ("E-salt", "molten salt"), ("E-pressure", "high pressure"),
            ("E-vessel", "steel vessel"), ("E-welding", "automated welding"), ("E-crews", "inspection crews"),
            ("E-crane", "harbour crane")]
CLAIMS = [
    ("C1", "The Lumen reactor produces 40 megawatts of electric power", ["E-lumen"]),
    ("C2", "The Lumen reactor is cooled by molten salt that circulates through the core", ["E-lumen", "E-salt"]),
    ("C3", "Molten salt cooling does not require high pressure in the primary loop", ["E-salt", "E-pressure"]),
    ("C4", "Operating without high pressure allows a thin steel vessel around the core", ["E-pressure", "E-vessel"]),
    ("C5", "The thin steel vessel is joined by automated welding of each seam", ["E-vessel", "E-welding"]),
    ("C6", "Automated welding is checked by inspection crews every six months", ["E-welding", "E-crews"]),
    ("C7", "A harbour crane unloads fuel casks at the quay once a year", ["E-crane"]),
]
CHAIN = [("R1", "E-lumen", "cooled-by", "E-salt", "C2"), ("R2", "E-salt", "does-not-require", "E-pressure", "C3"),
         ("R3", "E-pressure", "enables", "E-vessel", "C4"), ("R4", "E-vessel", "joined-by", "E-welding", "C5"),
         ("R5", "E-welding", "checked-by", "E-crews", "C6")]


def reactor_files(sha: str) -> dict[str, Any]:
    source = {"id": "S1", "type": "report", "title": "Lumen reactor field notes", "content_sha256": sha}
    claims = [{"id": cid, "statement": f"{text}.", "confidence": 0.8, "priority": "high", "entity_ids": ents,
               "evidence": [{"source_id": "S1", "snippet": text, "locator": {"page": 2}}]}
              for cid, text, ents in CLAIMS]
    entities = [{"id": eid, "name": name, "type": "concept", **({"aliases": ["Lumen"]} if eid == "E-lumen" else {})}
                for eid, name in ENTITIES]
    relationships = [{"id": rid, "subject": s, "predicate": p, "object": o, "claim_ids": [c]}
                     for rid, s, p, o, c in CHAIN]
    return {"sources.json": {"sources": [source]}, "claims.json": {"claims": claims},
            "entities.json": {"entities": entities}, "relationships.json": {"relationships": relationships}}


def second_files() -> dict[str, Any]:
    return {
        "entities.json": {"entities": [{"id": "E-lumen", "name": "Lumen reactor", "type": "concept"}]},
        "contradictions.json": {"contradictions": [{
            "id": "X1", "claim_ids": [f"{A}:C1", f"{A}:C7"], "status": "open",
            "description": "The power figure is disputed by the harbour log."}]},
    }


def reactor_session(sessions_dir: Path) -> SessionPaths:
    """A session whose graph holds the reactor notes (both agents merged; fails loudly otherwise)."""
    paths = create_session(sessions_dir, "How is the Lumen reactor cooled?", "test-mission")
    sha = store_text(paths, TEXT)
    write_artifacts(paths, A, reactor_files(sha))
    assert merge_pending(paths) == {A: "merged"}
    write_artifacts(paths, B, second_files())
    assert merge_pending(paths) == {B: "merged"}
    return paths
