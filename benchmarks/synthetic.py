"""The synthetic data the benchmarks build: agents' artifact files, sessions grown to a size, merged
contributions, unified views and stored texts. One module, so that every benchmark draws from the
same vocabulary and the same agent shapes.

Not a benchmark itself; the scripts next to it import it (see harness.py).
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import time
from typing import Any

from orchestrator.commit.outcomes import Outcome
from orchestrator.commit.processor import Processor
from orchestrator.commit.views import flush_views
from orchestrator.model.layout import SessionPaths
from orchestrator.run.definitions import required_files_for

MB = 1_000_000
WORDS = [
    "graph", "merge", "agent", "claim", "source", "evidence", "ledger", "commit", "latency", "snapshot",
    "triple", "shape", "schema", "lock", "batch", "writer", "reader", "index", "namespace", "provenance",
    "citation", "measure", "result", "method", "study", "sample", "model", "error", "bound", "throughput",
]
ASK_WORDS = [
    "reactor", "salt", "cooling", "pressure", "vessel", "welding", "inspection", "turbine", "grid", "power", "loop",
    "core", "fuel", "cask", "harbour", "crane", "sensor", "model", "survey", "cohort", "outcome", "dose", "trial",
    "patient", "hospital", "ward", "nurse", "policy", "budget", "market", "price", "demand", "supply", "network",
    "protocol", "latency", "cache", "index", "query", "graph", "claim", "source", "evidence", "passage", "agent",
    "merge", "retry",
]
ENTITY_NAMES = [f"{a} {b}" for a in ASK_WORDS[:30] for b in ASK_WORDS[30:]]
SOURCE_TYPES = ["journal-article", "conference-paper", "preprint", "web-page", "report", "book"]
_letters = random.Random(7)
PROSE_WORDS = ["".join(_letters.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(_letters.randint(2, 10)))
               for _ in range(3000)]


# -- agents' artifact files, and sessions grown through the real pipeline ------------------------------
def sentence(rng: random.Random, words: int = 14) -> str:
    """A sentence of ``words`` words drawn from a small vocabulary (statements look alike, as in one field)."""
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def measured_sentence(rng: random.Random) -> str:
    """A sentence with a measurement and a year, over the ``ask`` vocabulary."""
    words = [rng.choice(ASK_WORDS) for _ in range(rng.randint(10, 18))]
    return f"The {' '.join(words)} was measured at {rng.randint(2, 900)} units in {rng.randint(1990, 2025)}."


def prose(rng: random.Random, chars: int) -> str:
    """About ``chars`` characters of made-up words from a 3,000-word vocabulary (stored texts to search)."""
    words: list[str] = []
    total = 0
    while total < chars:
        words.append(rng.choice(PROSE_WORDS))
        total += len(words[-1]) + 1
    return " ".join(words)


def source_text(agent: str, rng: random.Random, sentences: int = 24) -> tuple[str, list[str]]:
    """A two-page source text unique to ``agent`` and the sentences in it (snippets quote them)."""
    lines = [f"Report written for {agent}."] + [sentence(rng) for _ in range(sentences)]
    half = len(lines) // 2
    return " ".join(lines[:half]) + "\f" + " ".join(lines[half:]), lines[1:]


def small_agent(agent: str, rng: random.Random) -> tuple[dict[str, Any], str, bytes]:
    """sources.json (2 sources, one with a stored text) + claims.json (5 claims, one high priority).

    Returns (files, sha256 of the text, text bytes); every snippet quotes the text verbatim, so
    evidence binding and the high-priority SHACL rule run and pass.
    """
    text, sentences = source_text(agent, rng)
    data = text.encode()
    sha = hashlib.sha256(data).hexdigest()
    sources = [
        {"id": "S0", "type": "journal-article", "title": f"Measurements for {agent}",
         "authors": ["Ada Lovelace"], "year": 2021, "peer_reviewed": True, "doi": f"10.5555/{agent}.0",
         "content_sha256": sha},
        {"id": "S1", "type": "web-page", "title": f"Notes on {agent}",
         "url": f"https://example.org/{agent}/notes"},
    ]
    claims = []
    for i in range(5):
        snippet = sentences[3 * i + 1].rstrip(".")
        evidence = [{"source_id": "S0", "snippet": snippet, "locator": {"page": 1 + (3 * i + 2) // 13}}]
        if i == 4:
            evidence.append({"source_id": "S1", "snippet": sentence(rng, 8)})
        claims.append({"id": f"C{i}", "statement": sentence(rng), "confidence": round(0.5 + i / 10, 2),
                       "priority": "high" if i == 0 else "medium", "evidence": evidence})
    return {"sources.json": {"sources": sources}, "claims.json": {"claims": claims}}, sha, data


def bulk_agent(agent: str, rng: random.Random, n_claims: int = 12, n_sources: int = 4) -> dict[str, Any]:
    """A bigger agent to grow the graph: unique sources (DOI + URL), claims citing them (no texts)."""
    sources = [{"id": f"S{i}", "type": "journal-article",
                "title": f"Study {i} of {agent}: {sentence(rng, 6)}",
                "authors": ["Ada Lovelace", "Alan Turing"], "year": 2000 + i, "peer_reviewed": True,
                "doi": f"10.5555/{agent}.{i}", "url": f"https://example.org/{agent}/{i}"}
               for i in range(n_sources)]
    claims = [{"id": f"C{i}", "statement": sentence(rng), "confidence": round(rng.uniform(0.3, 0.95), 2),
               "priority": ("medium", "low")[i % 2],
               "evidence": [{"source_id": f"S{i % n_sources}", "snippet": sentence(rng, 10),
                             "locator": {"page": 1 + i % 7}}]}
              for i in range(n_claims)]
    return {"sources.json": {"sources": sources}, "claims.json": {"claims": claims}}


def write_files(paths: SessionPaths, agent: str, files: dict[str, Any]) -> None:
    folder = paths.agent_artifacts(agent)
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        (folder / name).write_text(json.dumps(content, indent=1), encoding="utf-8")


def write_small(paths: SessionPaths, agent: str, rng: random.Random) -> None:
    files, sha, data = small_agent(agent, rng)
    paths.source_text(sha).write_bytes(data)
    write_files(paths, agent, files)


def new_processor(paths: SessionPaths) -> Processor:
    """Configured as ``cconductor watch`` / ``process`` configure it."""
    return Processor(paths, required_files=required_files_for)


def expect_merged(outcomes: list[Outcome]) -> None:
    bad = [(o.agent, o.status, [p.render() for p in o.problems if p.is_error][:2])
           for o in outcomes if o.status != "merged"]
    if bad:
        raise SystemExit(f"benchmark agents were not merged: {bad[:3]}")


class GraphBuilder:
    """Grows one session's graph with bulk agents, merged in-process in large batches."""

    def __init__(self, paths: SessionPaths, processor: Processor, seed: int = 7):
        self.paths = paths
        self.processor = processor
        self.rng = random.Random(seed)
        self.agents = 0
        self.size = 0
        self.bytes_per_agent = 17_000.0  # refined after every flush
        self.last_flush = 0.0

    def add(self, count: int, batch: int = 500) -> None:
        while count > 0:
            n = min(batch, count)
            for i in range(self.agents, self.agents + n):
                name = f"bulk-{i:05d}"
                write_files(self.paths, name, bulk_agent(name, self.rng))
                self.paths.lock(name).touch()
            expect_merged(self.processor.process_pending())
            self.agents += n
            count -= n

    def flush(self) -> int:
        t0 = time.perf_counter()
        flush_views(self.processor, force=True)
        self.last_flush = time.perf_counter() - t0
        self.size = self.paths.kg_json.stat().st_size
        if self.agents:
            self.bytes_per_agent = self.size / self.agents
        return self.size

    def grow_to(self, target: int) -> int:
        """Add agents until knowledge-graph.json is within -3% / +8% of ``target`` bytes."""
        if self.agents == 0:
            self.add(20)
            self.flush()
        while self.size < 0.97 * target:
            need = max(1, math.ceil((target - self.size) / self.bytes_per_agent))
            self.add(need)
            self.flush()
        return self.size



# -- merged contributions and unified views, built without the pipeline --------------------------
def rdf_contribution(agent: str, claims: int = 20, cite: str | None = None,
                           variant: int = 0) -> dict[str, Any]:
    """A realistic agent: sources, entities, claims with two evidence items, links between them.

    ``cite`` names another agent whose S0 every claim's second evidence item cites, so that
    cross-agent references (and their neighbours in incremental validation) are exercised.
    ``variant`` changes one claim, as a retry would. Every sixth claim is high priority with no
    verified evidence, so each agent has a few violations to report.
    """
    def prov(file: str, pointer: str) -> dict[str, Any]:
        return {"agent": agent, "file": f"artifacts/{agent}/{file}", "pointer": pointer,
                "artifact_sha256": "0" * 64, "attempt": 1, "merged_at": "2026-11-22T09:30:00Z"}

    n_sources = max(1, claims // 2)
    sources = [{"id": f"{agent}:S{i}", "local_id": f"S{i}", "type": "journal-article",
                "title": f"Paper {i} of {agent}", "authors": ["A. Author", "B. Author"], "year": 2020,
                "doi": f"10.1234/{agent}.{i}", "content_sha256": f"{i:064x}",
                "provenance": prov("sources.json", f"/sources/{i}")} for i in range(n_sources)]
    entities = [{"id": f"{agent}:E{i}", "local_id": f"E{i}", "name": f"Entity {i}", "type": "method",
                 "provenance": prov("entities.json", f"/entities/{i}")} for i in range(5)]
    claim_items = []
    for i in range(claims):
        first = {"verified": i % 6 != 0, "score": 100.0, "matched_text": "x", "page": 1}
        second = {"verified": i % 3 != 0, "score": 71.0, "matched_text": "y"}
        evidence = [{"source_id": f"{agent}:S{i % n_sources}", "snippet": f"snippet {i} of {agent}",
                     "locator": {"page": 1 + i % 9}, "verification": first},
                    {"source_id": f"{cite or agent}:S0", "snippet": f"second snippet {i}",
                     "verification": second}]
        statement = f"Claim {i} of {agent}" + (f" (v{variant})" if i == 0 and variant else "")
        claim_items.append({"id": f"{agent}:C{i}", "local_id": f"C{i}", "statement": statement,
                            "confidence": 0.5 + (i % 5) / 10, "priority": ("high", "medium", "low")[i % 3],
                            "entity_ids": [f"{agent}:E{i % 5}"], "evidence": evidence,
                            "provenance": prov("claims.json", f"/claims/{i}")})
    relationships = [{"id": f"{agent}:R{i}", "subject": f"{agent}:E{i}", "predicate": "related-to",
                      "object": f"{agent}:C{i}",
                      "provenance": prov("relationships.json", f"/relationships/{i}")}
                     for i in range(min(3, claims))]
    finding = {"id": f"{agent}:K0", "statement": "finding", "claim_ids": [f"{agent}:C0"],
               "provenance": prov("key-findings.json", "/key_findings/0")}
    return {"agent": agent, "attempt": 1, "merged_at": "2026-11-22T09:30:00Z", "artifact_sha256": "0" * 64,
            "files": {"sources.json": "1" * 64, "claims.json": "2" * 64},
            "items": {"sources": sources, "entities": entities, "claims": claim_items,
                      "relationships": relationships, "key_findings": [finding]}}


def prose_contribution(agent: str, claims: int, rng: random.Random) -> dict[str, Any]:
    """A merged contribution whose claims quote sentences of shared words and name shared entities (`ask`)."""

    def prov(file: str, pointer: str) -> dict[str, Any]:
        return {"agent": agent, "file": f"artifacts/{agent}/{file}", "pointer": pointer, "artifact_sha256": "0" * 64,
                "attempt": 1, "merged_at": "2026-11-25T09:30:00Z"}

    sources = [{"id": f"{agent}:S{i}", "local_id": f"S{i}", "type": "journal-article", "title": f"Paper {i} of {agent}",
                "year": 2020, "content_sha256": f"{rng.getrandbits(256):064x}",
                "provenance": prov("sources.json", f"/sources/{i}")} for i in range(max(1, claims // 4))]
    names = rng.sample(ENTITY_NAMES, 8)  # shared names across agents: the merge folds them
    entities = [{"id": f"{agent}:E{i}", "local_id": f"E{i}", "name": n, "type": "concept",
                 "provenance": prov("entities.json", f"/entities/{i}")} for i, n in enumerate(names)]
    items = []
    for i in range(claims):
        passage = " ".join(measured_sentence(rng) for _ in range(rng.randint(1, 3)))
        check = {"verified": True, "score": 100.0, "matched_text": passage, "page": 1 + i % 9, "match": "exact",
                 "reason": "found on the cited page", "text_sha256": sources[i % len(sources)]["content_sha256"]}
        items.append({"id": f"{agent}:C{i}", "local_id": f"C{i}", "statement": passage.split(".")[0] + ".",
                      "confidence": 0.8, "priority": "medium",
                      "entity_ids": [f"{agent}:E{i % 8}", f"{agent}:E{(i + 1) % 8}"],
                      "evidence": [{"source_id": sources[i % len(sources)]["id"], "snippet": passage,
                                    "locator": {"page": 1 + i % 9}, "verification": check}],
                      "provenance": prov("claims.json", f"/claims/{i}")})
    relationships = [{"id": f"{agent}:R{i}", "subject": f"{agent}:E{i}", "predicate": "affects",
                      "object": f"{agent}:E{i + 1}", "claim_ids": [f"{agent}:C{i}"], "subject_kind": "entity",
                      "object_kind": "entity", "provenance": prov("relationships.json", f"/relationships/{i}")}
                     for i in range(7)]
    return {"agent": agent, "attempt": 1, "merged_at": "2026-11-25T09:30:00Z", "artifact_sha256": "0" * 64,
            "files": {}, "items": {"sources": sources, "entities": entities, "claims": items,
                                   "relationships": relationships, "gaps": [], "contradictions": [],
                                   "key_findings": [], "confidence_scores": [], "coverage": [], "sub_questions": []}}


def unified_graph(claims: int = 500, sources: int = 100, seed: int = 7) -> dict[str, Any]:
    """A unified view (the JSON view's collections) of ``claims`` claims over ``sources`` sources (quality, report)."""
    rng = random.Random(seed)
    source_items = [
        {"id": f"a:S{i}", "type": rng.choice(SOURCE_TYPES), "title": f"Source {i}", "authors": ["Ada Lovelace"],
         "year": 2000 + i % 25, "peer_reviewed": rng.random() < 0.5, "doi": f"10.1000/{i}" if i % 3 else None,
         "url": f"https://example.org/{i}", "aliases": [f"a:S{i}", f"b:S{i}"]}
        for i in range(sources)
    ]
    claim_items = []
    for i in range(claims):
        evidence = [
            {"source_id": f"{rng.choice('ab')}:S{rng.randrange(sources)}", "snippet": "quoted text",
             "locator": {"page": rng.randint(1, 30)},
             "verification": {"verified": rng.random() < 0.9, "score": 95.0, "matched_text": "quoted text",
                              "page": 3, "reason": "r"}}
            for _ in range(rng.randint(1, 3))
        ]
        claim = {"id": f"a:C{i}", "statement": f"Claim {i}.", "confidence": rng.random(),
                 "priority": rng.choice(["high", "medium", "low"]), "evidence": evidence,
                 "sub_question_id": f"planner:Q{i % 12}"}
        if i % 4 == 0:
            claim["assessments"] = [{"confidence": rng.random(), "status": "corroborated",
                                     "by": "fact-checker"}]
        claim_items.append(claim)
    return {
        "planner": {"sub_questions": [{"id": f"Q{i}", "question": f"Q {i}?", "priority": "high"}
                                      for i in range(15)]},
        "sources": source_items, "claims": claim_items,
        "gaps": [{"id": f"a:G{i}", "description": "gap", "priority": "high"} for i in range(20)],
        "contradictions": [{"id": f"a:X{i}", "claim_ids": [f"a:C{i}", f"a:C{i + 1}"], "description": "d",
                            "status": "open" if i % 2 else "resolved"} for i in range(30)],
    }
