"""The union graph's in-memory triple store: three dict indexes, and nothing else.

rdflib's ``Memory`` store keeps, beside its subject/predicate/object indexes, the contexts of every
triple (a set per triple, a string key per context) and dispatches an event per added triple.
The SHACL union is one plain graph whose contexts nobody reads and whose events nobody hears, yet
that bookkeeping was about half of installing an agent's ~130 triples and of every lookup pyshacl
makes (``Memory.triples`` filters each result by context). :class:`UnionStore` keeps only the
three indexes. It reports itself context- and graph-aware because pyshacl's data-graph wrapper
builds an rdflib Dataset over the graph's store and insists on both; it holds one graph, so every
context is that graph. tests/test_union_store.py compares it with ``Memory`` on random changes.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from typing import Any

from rdflib import Graph
from rdflib.store import Store

__all__ = ["UnionStore"]

_NO_CONTEXTS: tuple[()] = ()


class UnionStore(Store):
    """Triples indexed by subject, predicate and object; one graph, no contexts, no events."""

    context_aware = True
    graph_aware = True
    formula_aware = False
    transaction_aware = False

    def __init__(self, configuration: Any = None, identifier: Any = None) -> None:
        super().__init__(configuration)
        self.identifier = identifier
        self._spo: dict[Any, dict[Any, dict[Any, None]]] = {}
        self._pos: dict[Any, dict[Any, dict[Any, None]]] = {}
        self._osp: dict[Any, dict[Any, dict[Any, None]]] = {}
        self._size = 0

    def add(self, triple: Any, context: Any = None, quoted: bool = False) -> None:
        s, p, o = triple
        po = self._spo.get(s)
        if po is None:
            po = self._spo[s] = {}
        objects = po.get(p)
        if objects is None:
            objects = po[p] = {}
        if o in objects:
            return
        objects[o] = None
        os_ = self._pos.get(p)
        if os_ is None:
            os_ = self._pos[p] = {}
        subjects = os_.get(o)
        if subjects is None:
            subjects = os_[o] = {}
        subjects[s] = None
        sp = self._osp.get(o)
        if sp is None:
            sp = self._osp[o] = {}
        predicates = sp.get(s)
        if predicates is None:
            predicates = sp[s] = {}
        predicates[p] = None
        self._size += 1

    def remove(self, pattern: Any, context: Any = None) -> None:
        for (s, p, o), _ in list(self.triples(pattern)):
            _drop(self._spo, s, p, o)
            _drop(self._pos, p, o, s)
            _drop(self._osp, o, s, p)
            self._size -= 1

    def triples(self, pattern: Any, context: Any = None) -> Iterator[tuple[Any, Any]]:
        s, p, o = pattern
        if s is not None:
            po = self._spo.get(s)
            if po is None:
                return
            if p is not None:
                objects = po.get(p)
                if objects is None:
                    return
                if o is not None:
                    if o in objects:
                        yield (s, p, o), _NO_CONTEXTS
                    return
                for obj in list(objects):
                    yield (s, p, obj), _NO_CONTEXTS
                return
            if o is not None:
                predicates = self._osp.get(o, {}).get(s)
                for pred in list(predicates or ()):
                    yield (s, pred, o), _NO_CONTEXTS
                return
            for pred, objects in list(po.items()):
                for obj in list(objects):
                    yield (s, pred, obj), _NO_CONTEXTS
            return
        if p is not None:
            os_ = self._pos.get(p)
            if os_ is None:
                return
            if o is not None:
                for subj in list(os_.get(o) or ()):
                    yield (subj, p, o), _NO_CONTEXTS
                return
            for obj, subjects in list(os_.items()):
                for subj in list(subjects):
                    yield (subj, p, obj), _NO_CONTEXTS
            return
        if o is not None:
            for subj, predicates in list(self._osp.get(o, {}).items()):
                for pred in list(predicates):
                    yield (subj, pred, o), _NO_CONTEXTS
            return
        for subj, po in list(self._spo.items()):
            for pred, objects in list(po.items()):
                for obj in list(objects):
                    yield (subj, pred, obj), _NO_CONTEXTS

    def __len__(self, context: Any = None) -> int:
        return self._size

    def contexts(self, triple: Any = None) -> Generator[Graph, None, None]:
        yield from ()

    def add_graph(self, graph: Any) -> None:
        """One graph only: nothing to add."""

    def remove_graph(self, graph: Any) -> None:
        """One graph only: nothing to remove."""


def _drop(index: dict[Any, dict[Any, dict[Any, None]]], a: Any, b: Any, c: Any) -> None:
    inner = index[a]
    leaves = inner[b]
    del leaves[c]
    if not leaves:
        del inner[b]
        if not inner:
            del index[a]
