"""The unified graph as an index of citable nodes: claims, entities, relationships, and their aliases.

An answer may cite a node by its global id or by the id of a duplicate that the merge folded
into it (an entity's ``merged_ids``); both resolve here to one node. Verified passages are the
source's own words (``verification.matched_text``), never the agent's snippet.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from orchestrator.answers.data import NodeKind, VerifiedPassage
from orchestrator.answers.parts import Objects, part_nodes
from orchestrator.commit.committed import read_committed
from orchestrator.contradictions import contradictions_touching
from orchestrator.graph.citations import evidence_section
from orchestrator.model.layout import SessionPaths
from orchestrator.model.terms import stem_words


def load_graph(paths: SessionPaths) -> dict[str, Any]:
    """The session's committed graph: the view the ledger vouches for, rebuilt when it is not
    (orchestrator/commit/committed.py); a clear error when there is none yet."""
    return read_committed(paths).graph


def _items(graph: dict[str, Any], key: str) -> list[dict[str, Any]]:
    value = graph.get(key)
    return [item for item in value if isinstance(item, dict) and isinstance(item.get("id"), str)] if isinstance(
        value, list) else []


#: A word written in lower case (not after a letter, digit or apostrophe: "o'brien" is no word of it).
_LOWER = re.compile(r"(?<![\w'\u2019])[a-z]+(?![\w'\u2019])")


@dataclass
class NodeIndex:
    """Citable nodes by id, with alias resolution and the passages each claim is verified by."""

    session: str
    claims: dict[str, dict[str, Any]] = field(default_factory=dict)
    entities: dict[str, dict[str, Any]] = field(default_factory=dict)
    relationships: dict[str, dict[str, Any]] = field(default_factory=dict)
    sources: dict[str, dict[str, Any]] = field(default_factory=dict)
    canonical: dict[str, str] = field(default_factory=dict)  # alias id -> node id
    claims_of_entity: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    contradictions: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def build(cls, graph: dict[str, Any], objects: Objects | None = None) -> NodeIndex:
        """``objects(sha256, suffix)`` reads stored table cells: tables and figures become citable nodes."""
        index = cls(str(graph.get("session") or ""))
        for source in _items(graph, "sources"):
            for alias in (source["id"], *(a for a in source.get("aliases") or () if isinstance(a, str))):
                index.sources.setdefault(alias, source)
        for kind, store in (("claims", index.claims), ("entities", index.entities),
                            ("relationships", index.relationships)):
            for item in _items(graph, kind):
                store[item["id"]] = item
                index.canonical[item["id"]] = item["id"]
        for node in part_nodes(graph, objects):  # tables and figures: cited and checked as claims are
            index.claims.setdefault(node["id"], node)
            index.canonical.setdefault(node["id"], node["id"])
        for entity in index.entities.values():
            for alias in entity.get("merged_ids") or ():
                if isinstance(alias, str):
                    index.canonical.setdefault(alias, entity["id"])
        for claim in index.claims.values():
            for ref in claim.get("entity_ids") or ():
                entity_id = index.canonical.get(ref) if isinstance(ref, str) else None
                if entity_id in index.entities:
                    index.claims_of_entity[entity_id].append(claim["id"])
        index.contradictions = _items_any(graph.get("contradictions"))
        return index

    def resolve(self, ref: str) -> tuple[NodeKind, str] | None:
        """The kind and canonical id of a cited node, or None when the graph has no such node."""
        node_id = self.canonical.get(ref)
        if node_id is None:
            return None
        if node_id in self.claims:
            return "claim", node_id
        if node_id in self.entities:
            return "entity", node_id
        return "relationship", node_id

    def name(self, node_id: str) -> str:
        entity = self.entities.get(self.canonical.get(node_id, node_id))
        if entity is not None:
            return str(entity.get("name") or node_id)
        claim = self.claims.get(node_id)
        return str(claim.get("statement") or node_id) if claim else node_id

    def names(self, entity_id: str) -> list[str]:
        """An entity's name and the alternative names agents gave it."""
        entity = self.entities.get(entity_id) or {}
        names = [entity.get("name"), *(entity.get("aliases") or ())]
        return [n for n in dict.fromkeys(names) if isinstance(n, str) and n.strip()]

    @cached_property
    def lowercase_stems(self) -> frozenset[str]:
        """Stems of the words the session's verified passages write in lower case: its own common vocabulary
        ("datasets", "biomarker"), which a name it mentions ("France") is not. Read once, when a question
        has a word no dictionary knows."""
        found: set[str] = set()
        for claim_id in self.claims:
            for passage in self.passages(claim_id):
                found.update(_LOWER.findall(passage.text))
        return frozenset(stem_words(found))

    def passages(self, claim_id: str) -> list[VerifiedPassage]:
        """The claim's verified passages (source text, not the agent's snippet), best first."""
        claim = self.claims.get(claim_id) or {}
        found = []
        for evidence in claim.get("evidence") or ():
            if not isinstance(evidence, dict):
                continue
            check = evidence.get("verification") or {}
            if not (isinstance(check, dict) and check.get("verified") is True):
                continue
            text = check.get("matched_text") or evidence.get("snippet")
            if not isinstance(text, str) or not text.strip():
                continue
            source_id = str(evidence.get("source_id") or "")
            source = self.sources.get(source_id) or {}
            section = evidence_section(evidence, source)
            page = check.get("page") if isinstance(check.get("page"), int) and not section else None
            title = str(source.get("title") or source_id)
            if isinstance(evidence.get("note"), str) and evidence["note"].startswith("described by"):
                title += f" ({evidence['note']})"  # a vision model's description of a figure
            found.append(VerifiedPassage(source_id, title, page, text, section))
        return found

    def verified_claims(self, claim_ids: Any) -> list[str]:
        """Those of ``claim_ids`` that exist and have at least one verified passage."""
        out = []
        for ref in claim_ids or ():
            claim_id = self.canonical.get(ref) if isinstance(ref, str) else None
            if claim_id in self.claims and self.passages(claim_id):
                out.append(claim_id)
        return out

    def contradictions_of(self, claim_ids: set[str]) -> list[dict[str, Any]]:
        """The graph's contradictions (recorded by agents or detected at merge) touching ``claim_ids``."""
        graph = {"claims": list(self.claims.values()), "contradictions": self.contradictions}
        return [{"claim_ids": sorted(str(c) for c in item.get("claim_ids") or ()),
                 **{k: item[k] for k in ("id", "kind", "description", "status", "resolved") if k in item}}
                for item in contradictions_touching(graph, claim_ids)]

def _items_any(value: Any) -> list[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []
