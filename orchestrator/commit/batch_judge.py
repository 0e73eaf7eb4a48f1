"""A batch of submissions judged with one SHACL pass, with exactly the verdicts of judging them one by one.

Judging one agent costs ~10 ms of CPU, ~40 % of it SHACL, most of that pyshacl's cost per call.
So a window of agents is judged ahead, in order, up to SHACL (each one's graph installed and its
record put in the state, as if it had been accepted); then every agent's focus nodes are validated
in one pass and each result goes to the agent whose focus set holds its node. Walking the window in
order, an agent is accepted from that pass only if

1. it passes the guard below,
2. the pass found no error (sh:Violation) on its focus nodes, and
3. its artifact folder is unchanged (as the one-by-one path checks after SHACL).

The first agent that fails any of these, and every agent after it in the window, is taken back
(Undo of its graph, its committed record put back, its held events dropped); that agent is judged
the old way, alone (or, if only its folder changed, deferred as the one-by-one path defers it),
and the next window starts after it. A rejection or error report is therefore always today's,
computed on today's graph.

Why an accepted agent's verdict is the one-by-one verdict. Judged one by one, agent *i* sees the
graph of the agents accepted before it; here, all of them too (judging stops at the first
failure), so every check before SHACL ran on the same state and gave the same result. SHACL is
the only check that also sees the window's later agents. The shapes (ontology/shapes.ttl, SHACL
Core, no sh:inversePath, no SPARQL, no sh:targetSubjectsOf/ObjectsOf) judge a focus node by the
triples whose subject it is and by the ``rdf:type`` / ``cc:verified`` of the nodes those point at;
and the focus set (RdfState.focus_for) is the agent's nodes plus the nodes pointing at them. The
agents whose triples that can reach are LazyRdf.neighbourhood: the agent, the owners of the nodes
it points at, the agents pointing at it, and what those point at. The guard:

- no other agent of the window is in the agent's neighbourhood (computed with the window's
  references indexed, so an agent citing it counts), in either direction;
- its graph writes triples only about its own nodes (node_owners), and no other window agent
  writes about its nodes;
- its focus set shares no node with another guarded agent's.

Then the window's other agents add or change no triple its validation reads and no node of its
focus set, so the triples read equal the one-by-one graph's, and SHACL judges each focus node on
its own (RdfState.validate_many), so its results, warnings included, are today's. Agents judged
before SHACL (rejected, no-op, internal error) changed nothing and keep their outcomes.
tests/test_batch_judge.py compares outcomes, problems, events, ledger and views with one-by-one
judging on random batches with cross-references, shared sources, retries and SHACL failures.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from orchestrator.commit.evaluation import Evaluation
from orchestrator.commit.judge import Judge, Pending
from orchestrator.commit.lazy_rdf import node_owners
from orchestrator.commit.outcomes import Staged
from orchestrator.graph.state import Records
from orchestrator.model.problems import errors
from orchestrator.session.events import Held

__all__ = ["judge_batch"]

#: Agents judged ahead in the first window; it doubles while whole windows pass, up to the maximum.
FIRST_WINDOW, MAX_WINDOW = 32, 512
#: Allocations between young-generation collections while a batch is judged (Python's default: 700).
BATCH_GC_THRESHOLD = 20_000


@dataclass
class _Ahead:
    name: str
    result: Staged | Pending | None
    events: Held
    committed: dict[str, Any] | None
    #: its record was put (moved last in the state's order) by this judging
    moved: bool = False


def judge_batch(proc: Judge, names: list[str], judge: Callable[[str, bool], Staged | Pending | None]
                ) -> list[Staged]:
    """The outcomes of ``names`` judged in this order, as one by one, with SHACL run once per window.

    ``judge(name, ahead)`` is the processor's isolated evaluation: ``ahead`` stops before SHACL.
    """
    with collections_spaced():
        return _judge_batch(proc, names, judge)


@contextlib.contextmanager
def collections_spaced(threshold: int = BATCH_GC_THRESHOLD) -> Iterator[None]:
    """Collect the young generation every ``threshold`` allocations instead of every 700, until the end.

    Judging allocates ~1,000 objects per agent (terms, triples, the store's index dicts) that mostly
    live on in the graph, so the cyclic collector would scan them again and again for nothing: ~1 ms
    of CPU per agent of a 1,000-agent burst. Cycles are still collected, just less often.
    """
    saved = gc.get_threshold()
    gc.set_threshold(max(threshold, saved[0]), *saved[1:])
    try:
        yield
    finally:
        gc.set_threshold(*saved)


def _judge_batch(proc: Judge, names: list[str], judge: Callable[[str, bool], Staged | Pending | None]
                 ) -> list[Staged]:
    staged: list[Staged] = []
    start, window = 0, FIRST_WINDOW
    while start < len(names):
        before = list(proc.state.records)
        ahead = [_stage(proc, name, judge) for name in names[start:start + window]]
        kept, changed = _accept(proc, ahead, staged)
        for item in reversed(ahead[kept:]):
            if isinstance(item.result, Pending):
                _take_back(proc, item)
        if kept < len(ahead) or any(item.moved for item in ahead):
            _reorder(proc.state.records, before, [item.name for item in ahead[:kept] if item.moved])
        if kept == len(ahead):
            start, window = start + kept, min(MAX_WINDOW, 2 * window)
            continue
        stopped = ahead[kept]
        if changed is not None and isinstance(stopped.result, Pending):  # its folder changed since it was read:
            proc.events.release(stopped.events)                           # deferred, as one by one
            staged.append(Evaluation(proc).conclude(stopped.result, changed, folder_unchanged=False))
            start, window = start + kept + 1, max(4, kept + 1)
            continue
        name = ahead[kept].name  # judged alone, the old way
        proc.events.emit("lock.seen", f"lock {name}.kg.lock seen", agent=name)
        result = judge(name, False)
        if result is not None:
            assert not isinstance(result, Pending)
            staged.append(result)
        start, window = start + kept + 1, max(4, kept + 1)
    return staged


def _stage(proc: Judge, name: str, judge: Callable[[str, bool], Staged | Pending | None]) -> _Ahead:
    committed = proc.state.records.get(name)
    with proc.events.captured() as held:
        proc.events.emit("lock.seen", f"lock {name}.kg.lock seen", agent=name)
        result = judge(name, True)
    moved = False
    if isinstance(result, Pending):  # as if accepted, for the agents judged after it
        proc.state.put(name, result.record)
        proc.lazy.note(name, result.record, staged=result.installed, rendered=result.rendered)
        moved = True
    elif committed is not None and proc.state.records.get(name) is committed:
        moved = next(reversed(proc.state.records)) == name  # an internal error put the record back, last
    return _Ahead(name, result, held, committed, moved)


def _reorder(records: Records, before: list[str], moved: list[str]) -> None:
    """Records in the order one-by-one judging leaves them: each record put moves its agent last."""
    gone = set(moved)
    order = [agent for agent in before if agent in records and agent not in gone] + moved
    if list(records) != order:
        for agent in order:
            records.move_to_end(agent)


def _take_back(proc: Judge, item: _Ahead) -> None:
    assert isinstance(item.result, Pending)
    item.result.undo()
    proc.state.put(item.name, item.committed)  # the very object: LazyRdf tells records apart by identity
    proc.lazy.unstage(item.name, item.committed)


def _accept(proc: Judge, ahead: list[_Ahead], staged: list[Staged]) -> tuple[int, list[Any] | None]:
    """Accept the window's agents in order while the one SHACL pass decides them.

    Returns how many were, and for the agent that stopped it, its SHACL problems if what stopped
    it is only that its folder changed since it was read (one by one, it is deferred).
    """
    verdicts = _validate(proc, [a for a in ahead if isinstance(a.result, Pending)])
    evaluation = Evaluation(proc)
    for index, item in enumerate(ahead):
        result = item.result
        if isinstance(result, Pending):
            problems = verdicts.get(item.name)
            if problems is None or errors(problems):
                return index, None
            if not evaluation.folder_unchanged(result):
                return index, problems
            proc.events.release(item.events)
            staged.append(evaluation.conclude(result, problems, folder_unchanged=True))
        else:
            proc.events.release(item.events)
            if result is not None:
                staged.append(result)
    return len(ahead), None


def _validate(proc: Judge, pending: list[_Ahead]) -> dict[str, list[Any]]:
    """One SHACL pass over the focus nodes of the guarded agents; the others get no verdict.

    An agent a helper judged alone (its Pending carries the verdict) keeps that verdict; it still
    counts as a member of the window for the others' guard.
    """
    rdf, members = proc.lazy.rdf, {a.name for a in pending}
    decided = {a.name: a.result.verdict for a in pending
               if isinstance(a.result, Pending) and a.result.verdict is not None}
    bad: set[str] = set()
    for item in pending:
        if item.name in decided:
            continue
        graph = rdf.agent_graph(item.name)
        if graph is None:
            bad.add(item.name)
            continue
        near = (proc.lazy.neighbourhood(item.name, graph) | node_owners(graph)) & members - {item.name}
        if near:
            bad |= near | {item.name}
    focus: dict[str, set[Any]] = {}
    seen: dict[Any, str] = {}
    for item in pending:
        if item.name in bad or item.name in decided:
            continue
        nodes = focus[item.name] = rdf.focus_for(item.name)
        for node in nodes:
            other = seen.setdefault(node, item.name)
            if other != item.name:
                bad |= {other, item.name}
    focus = {agent: nodes for agent, nodes in focus.items() if agent not in bad}
    if not focus:
        return dict(decided)
    try:
        return {**rdf.validate_many(focus), **decided}
    except Exception:  # a failed pass decides nothing: each agent is judged alone
        return dict(decided)
