"""Labelled claim pairs (tests/data/contradictions/) as the unified claims and entities the detector sees.

Each side of a pair is one agent's claim with its own source (one shared source when the pair says
``same_source``) and the entities the agent wrote; entities are unified as the views unify them
(:func:`orchestrator.graph.unified.dedupe_entities`), so a pair exercises what a real graph would.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orchestrator.graph.unified import dedupe_entities

FOLDER = Path(__file__).resolve().parents[1] / "data" / "contradictions"
DEV, HELDOUT = FOLDER / "dev.json", FOLDER / "heldout.json"


@dataclass(frozen=True)
class Pair:
    id: str
    label: str  # "conflict" | "look-alike"
    category: str
    claims: list[dict[str, Any]]
    entities: list[dict[str, Any]]

    @property
    def real(self) -> bool:
        return self.label == "conflict"


def load(path: Path) -> list[Pair]:
    return [build(raw) for raw in json.loads(path.read_text(encoding="utf-8"))["pairs"]]


def build(raw: dict[str, Any]) -> Pair:
    claims: list[dict[str, Any]] = []
    entities: list[dict[str, Any]] = []
    for side, agent in (("a", "agent-a"), ("b", "agent-b")):
        data = raw[side]
        ids = []
        for n, entity in enumerate(data.get("entities") or (), 1):
            entity_id = f"{agent}:E{n}"
            ids.append(entity_id)
            entities.append({"id": entity_id, "name": entity["name"], "type": entity.get("type", "concept"),
                             "aliases": list(entity.get("aliases") or ()), "provenance": {"agent": agent}})
        source = "agent-a:S1" if raw.get("same_source") else f"{agent}:S1"
        claim: dict[str, Any] = {"id": f"{agent}:C1", "statement": data["statement"], "provenance": {"agent": agent},
                                 "evidence": [{"source_id": source, "snippet": data["statement"]}]}
        if ids and data.get("linked", True):  # "linked": false: the agent declared entities, the claim names none
            claim["entity_ids"] = ids
        claims.append(claim)
    unified, canonical = dedupe_entities(entities)
    for claim in claims:
        if "entity_ids" in claim:
            claim["entity_ids"] = [canonical[e] for e in claim["entity_ids"]]
    return Pair(raw["id"], raw["label"], raw["category"], claims, unified)


@dataclass(frozen=True)
class Scores:
    true_positives: int
    false_positives: int
    false_negatives: int
    true_negatives: int
    missed: list[str]
    flagged: list[str]

    @property
    def precision(self) -> float:
        found = self.true_positives + self.false_positives
        return self.true_positives / found if found else 1.0

    @property
    def recall(self) -> float:
        real = self.true_positives + self.false_negatives
        return self.true_positives / real if real else 1.0


def score(pairs: list[Pair], verdicts: dict[str, bool]) -> Scores:
    """Precision and recall of ``verdicts`` (pair id -> flagged as a contradiction)."""
    tp = [p.id for p in pairs if p.real and verdicts[p.id]]
    fn = [p.id for p in pairs if p.real and not verdicts[p.id]]
    fp = [p.id for p in pairs if not p.real and verdicts[p.id]]
    tn = [p.id for p in pairs if not p.real and not verdicts[p.id]]
    return Scores(len(tp), len(fp), len(fn), len(tn), fn, fp)
