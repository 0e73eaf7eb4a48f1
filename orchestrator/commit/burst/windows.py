"""A burst judged in windows with one SHACL pass each, with exactly the verdicts of judging it one by one.

Judging one agent costs ~10 ms of CPU, ~40 % of it SHACL, most of that pyshacl's cost per call.
So a window of agents is checked ahead, in order, up to SHACL (each one's graph installed and its
record put in the state, as if it had been accepted); then every agent's focus nodes are validated
in one pass and each result goes to the agent whose focus set holds its node. Walking the window in
order, an agent is accepted from that pass only if

1. it passes the guard below,
2. the pass found no error (sh:Violation) on its focus nodes, and
3. its artifact folder is unchanged (as the one-by-one path checks after SHACL).

The first agent that fails any of these, and every agent after it in the window, is taken back
(Undo of its graph, its committed record put back, its held events dropped); that agent is judged
the plain way, alone (or, if only its folder changed, deferred as the plain path defers it), and
the next window starts after it. A rejection or error report is therefore always the plain path's,
computed on the same graph.

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
its own (RdfState.validate_many), so its results, warnings included, are the plain path's. Agents
decided before SHACL (rejected, no-op, internal error) changed nothing and keep their outcomes.
tests/test_burst.py compares outcomes, problems, events, ledger and views with one-by-one judging
on random sweeps with cross-references, shared sources, retries and SHACL failures.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from orchestrator.commit.context import JudgingContext
from orchestrator.commit.judging import Checked, check, conclude, folder_still_read, judge
from orchestrator.commit.lazy_rdf import node_owners
from orchestrator.commit.outcomes import Judged
from orchestrator.graph.state import Records
from orchestrator.model.problems import Problem, errors
from orchestrator.model.records import Record
from orchestrator.session.events import Held

__all__ = ["judge_burst"]

#: Agents checked ahead in the first window; it doubles while whole windows pass, up to the maximum.
FIRST_WINDOW, MAX_WINDOW = 32, 512


@dataclass
class _Ahead:
    name: str
    result: Judged | Checked | None
    events: Held
    committed: Record | None
    #: its record was put (moved last in the state's order) by this judging
    moved: bool = False


def judge_burst(context: JudgingContext, names: list[str]) -> list[Judged]:
    """What :func:`~orchestrator.commit.judging.judge` gives for ``names`` judged in this order, one by one,
    with SHACL run once per window of agents."""
    judged: list[Judged] = []
    start, window = 0, FIRST_WINDOW
    while start < len(names):
        before = list(context.graph.state.records)
        ahead = [_check_ahead(context, name) for name in names[start:start + window]]
        kept, changed = _accept(context, ahead, judged)
        for item in reversed(ahead[kept:]):
            if isinstance(item.result, Checked):
                _take_back(context, item)
        if kept < len(ahead) or any(item.moved for item in ahead):
            _reorder(context.graph.state.records, before, [item.name for item in ahead[:kept] if item.moved])
        if kept == len(ahead):
            start, window = start + kept, min(MAX_WINDOW, 2 * window)
            continue
        stopped = ahead[kept]
        if changed is not None and isinstance(stopped.result, Checked):  # its folder changed since it was read:
            context.events.release(stopped.events)                         # deferred, as one by one
            judged.append(conclude(context, stopped.result, changed, folder_unchanged=False))
        else:
            alone = judge(context, stopped.name)  # judged alone, the plain way
            if alone is not None:
                judged.append(alone)
        start, window = start + kept + 1, max(4, kept + 1)
    return judged


def _check_ahead(context: JudgingContext, name: str) -> _Ahead:
    committed = context.graph.state.records.get(name)
    with context.events.captured() as held:
        result = check(context, name)
    moved = False
    if isinstance(result, Checked):  # as if accepted, for the agents judged after it
        context.graph.put(name, result.record, staged=True)
        moved = True
    elif committed is not None and context.graph.state.records.get(name) is committed:
        moved = next(reversed(context.graph.state.records)) == name  # an internal error put the record back, last
    return _Ahead(name, result, held, committed, moved)


def _reorder(records: Records, before: list[str], moved: list[str]) -> None:
    """Records in the order one-by-one judging leaves them: each record put moves its agent last."""
    gone = set(moved)
    order = [agent for agent in before if agent in records and agent not in gone] + moved
    if list(records) != order:
        for agent in order:
            records.move_to_end(agent)


def _take_back(context: JudgingContext, item: _Ahead) -> None:
    assert isinstance(item.result, Checked)
    item.result.undo()
    context.graph.state.put(item.name, item.committed)
    context.graph.lazy.unstage(item.name, item.committed)


def _accept(context: JudgingContext, ahead: list[_Ahead], judged: list[Judged]) -> tuple[int, list[Problem] | None]:
    """Accept the window's agents in order while the one SHACL pass decides them.

    Returns how many were, and for the agent that stopped it, its SHACL problems if what stopped
    it is only that its folder changed since it was read (one by one, it is deferred).
    """
    verdicts = _validate(context, [a for a in ahead if isinstance(a.result, Checked)])
    for index, item in enumerate(ahead):
        result = item.result
        if isinstance(result, Checked):
            problems = verdicts.get(item.name)
            if problems is None or errors(problems):
                return index, None
            if not folder_still_read(context, result):
                return index, problems
            context.events.release(item.events)
            judged.append(conclude(context, result, problems, folder_unchanged=True))
        else:
            context.events.release(item.events)
            if result is not None:
                judged.append(result)
    return len(ahead), None


def _validate(context: JudgingContext, checked: list[_Ahead]) -> dict[str, list[Problem]]:
    """One SHACL pass over the focus nodes of the guarded agents; the others get no verdict."""
    lazy = context.graph.lazy
    rdf, members = lazy.rdf, {a.name for a in checked}
    bad: set[str] = set()
    for item in checked:
        graph = rdf.agent_graph(item.name)
        if graph is None:
            bad.add(item.name)
            continue
        near = (lazy.neighbourhood(item.name, graph) | node_owners(graph)) & members - {item.name}
        if near:
            bad |= near | {item.name}
    focus: dict[str, set[Any]] = {}
    seen: dict[Any, str] = {}
    for item in checked:
        if item.name in bad:
            continue
        nodes = focus[item.name] = rdf.focus_for(item.name)
        for node in nodes:
            other = seen.setdefault(node, item.name)
            if other != item.name:
                bad |= {other, item.name}
    focus = {agent: nodes for agent, nodes in focus.items() if agent not in bad}
    if not focus:
        return {}
    try:
        return rdf.validate_many(focus)
    except Exception:  # a failed pass decides nothing: each agent is judged alone
        return {}
