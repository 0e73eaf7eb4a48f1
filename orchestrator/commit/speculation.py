"""In a read-ahead helper: a batch's first submissions judged whole, each on its own (ahead.Speculation).

Judging costs ~4 ms of CPU an agent, most of it merging, converting to RDF, installing into the
union and SHACL, and the processor does it one agent after the other on one core. But an agent
that cites nothing of any other agent, about whose nodes no other agent writes and that nobody
cites, is judged on its own files alone: every check reads only them (and its stored texts), and
SHACL reads only its own triples (the shapes judge a focus node by its own triples and the types
of the nodes it points at: commit/batch_judge.py has the argument). So helpers judge such agents
against an empty graph, in parallel with the processor, and the processor adopts a result where
the agent is alone in its graph too (evaluation.Evaluation.adopt); anything else is judged there
as before. A helper keeps a result only if the agent passed every check, its references all named
its own items (the merge resolves a bare id among the agent's own items first, so they resolve
the same against any graph) and its graph points at and writes about no other agent's node.
"""

from __future__ import annotations

import dataclasses
import gc
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from orchestrator.commit.ahead import Prechecked, Read, Speculation, Wanted, precheck
from orchestrator.commit.batch_judge import collections_spaced
from orchestrator.commit.evaluation import Evaluation
from orchestrator.commit.judge import Assessed, attempt_for
from orchestrator.commit.lazy_rdf import LazyRdf, node_owners, target_owners
from orchestrator.contract.artifacts import ArtifactSet, read_artifact_set
from orchestrator.contract.schemas import SchemaRegistry
from orchestrator.contract.sourcetexts import FileKey, TextStore, named_texts
from orchestrator.graph.state import GraphState
from orchestrator.model.layout import SessionPaths
from orchestrator.model.problems import Problem, errors
from orchestrator.rdf.convert import AgentGraph
from orchestrator.rdf.write import trig_block

__all__ = ["read_ahead", "self_contained", "warm"]


def warm() -> None:
    """At a helper's start: the imports, schemas and shapes its first chunk needs.

    What they leave is kept for the helper's life, so the collector is told to never scan it again.
    """
    from orchestrator.rdf.shacl import shapes

    SchemaRegistry.default()
    shapes()
    gc.collect()
    gc.freeze()


def read_ahead(root: str, session_id: str, wanted: list[Wanted], threshold: float) -> dict[str, Read]:
    """Each agent's artifact set and text checks, as the processor would read them, and speculations.

    Runs in a helper process; a failure while speculating leaves the reads without speculation.
    """
    with collections_spaced():  # what a chunk allocates lives until it ends: no collection needs to scan it
        return _read_ahead(root, session_id, wanted, threshold)


def _read_ahead(root: str, session_id: str, wanted: list[Wanted], threshold: float) -> dict[str, Read]:
    paths = SessionPaths(Path(root))
    texts = TextStore(paths)
    reads: dict[str, Read] = {}
    for want in wanted:
        artifact_set = read_artifact_set(paths, want.name, SchemaRegistry.default(), want.required_files)
        try:
            prechecked = precheck(artifact_set, texts, threshold)
        except Exception:  # the judging checks this agent's texts itself, as without the helper
            prechecked = Prechecked()
        reads[want.name] = Read(artifact_set, prechecked)
    candidates = [w for w in wanted if w.basis is not None and reads[w.name].artifact_set.ok]
    if candidates:
        try:
            found = _speculate(paths, session_id, candidates, reads, texts, threshold)
        except Exception:  # the processor judges them itself
            found = {}
        for name, speculation in found.items():
            reads[name] = dataclasses.replace(reads[name], speculation=speculation)
    return reads


class _Alone:
    """A judge whose graph holds no agent: what each check finds when the submission is alone.

    Only what :meth:`Evaluation.assess` reads is real; events, store and read-ahead are never used.
    """

    events: Any = None
    store: Any = None
    readahead: Any = None

    def __init__(self, paths: SessionPaths, session_id: str, texts: TextStore, threshold: float) -> None:
        self.paths, self.session_id, self.texts, self.evidence_threshold = paths, session_id, texts, threshold
        self.state = GraphState(session_id)
        self.lazy = LazyRdf(session_id, self.state)
        self.registry = SchemaRegistry.default()
        self.required_files: Callable[[str], Iterable[str]] = lambda agent: ()


def _speculate(paths: SessionPaths, session_id: str, candidates: list[Wanted], reads: dict[str, Read],
               texts: TextStore, threshold: float) -> dict[str, Speculation]:
    alone = _Alone(paths, session_id, texts, threshold)
    evaluation = Evaluation(alone)
    judged: dict[str, tuple[int, Assessed, dict[str, FileKey]]] = {}
    for want in candidates:
        assert want.basis is not None
        read = reads[want.name]
        attempt = attempt_for(*want.basis, read.artifact_set.sha256)
        assessed = evaluation.assess(want.name, read.artifact_set, read.prechecked, None, attempt, want.merged_at)
        if not isinstance(assessed, Assessed) or not self_contained(want.name, assessed.problems, assessed.graph):
            continue
        keys = _text_keys(read.artifact_set, read.prechecked, texts)
        if keys is None:
            continue
        alone.lazy.rdf.replace_agent(assessed.graph)  # each on its own nodes: the validations do not meet
        judged[want.name] = (attempt, assessed, keys)
    rdf = alone.lazy.rdf
    verdicts = rdf.validate_many({name: rdf.focus_for(name) for name in judged}) if judged else {}
    return {name: Speculation(attempt, tuple(assessed.problems), assessed.record, tuple(verdicts[name]), keys,
                              trig_block(assessed.graph).encode())
            for name, (attempt, assessed, keys) in judged.items() if not errors(verdicts[name])}


def self_contained(agent: str, problems: Iterable[Problem], graph: AgentGraph) -> bool:
    """Every reference named the agent's own items, and its graph points at and writes about only its own nodes."""
    return (all(p.rule != "reference.unresolved" for p in problems)
            and not target_owners(graph) and node_owners(graph) <= {agent})


def _text_keys(artifact_set: ArtifactSet, prechecked: Prechecked, texts: TextStore) -> dict[str, FileKey] | None:
    """The file key of every stored text the agent's sources name (all usable now), or None."""
    keys: dict[str, FileKey] = {}
    for _, _, _, sha in named_texts(artifact_set):
        if sha in keys:
            continue
        key = prechecked.texts.get(sha)
        if key is None:
            looked = texts.look(sha)
            if looked is None:
                return None
            key = looked[1]
        keys[sha] = key
    return keys
