"""The repair memory on disk: one N-Triples file (vocabulary ``ontology/memory.ttl``), shared by all sessions.

Writers read, change and atomically replace the file under a file lock, so concurrent sessions
never lose each other's items; readers need no lock (they see the old or the new file). Lookups
are SPARQL over the parsed graph, which is cached until the file changes. (N-Triples rather than
Turtle: with a thousand items it is written six times and read twice as fast.)
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from filelock import FileLock

from orchestrator.memory import memory_dir
from orchestrator.memory.signature import Signature
from orchestrator.memory.vocabulary import repair_allowed, signature_allowed
from orchestrator.model.errors import StoreError
from orchestrator.session.atomic import atomic_write_bytes

if TYPE_CHECKING:
    from rdflib import Graph

MEM = "https://cconductor.dev/memory#"
PROV = "http://www.w3.org/ns/prov#"
DCTERMS = "http://purl.org/dc/terms/"
ITEM_PREFIX = "urn:cconductor:memory:repair:"
SESSION_PREFIX = "urn:cconductor:session:"
FILE_NAME = "repairs.nt"


class MemoryDamaged(StoreError):
    """The memory file cannot be parsed; the message names it and the fix."""


@dataclass
class RepairItem:
    id: str
    signature_id: str
    signature_key: str
    label: str
    file: str
    rule: str
    repair: str
    uses: int
    successes: int
    created: str
    modified: str
    sessions: list[str] = field(default_factory=list)

    def sentence(self) -> str:
        return f"this was fixed before by {self.repair}, {self.successes} of {self.uses} times"

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "signature_id": self.signature_id, "signature": self.signature_key,
                "label": self.label, "file": self.file, "rule": self.rule, "repair": self.repair,
                "uses": self.uses, "successes": self.successes, "created": self.created,
                "modified": self.modified, "sessions": sorted(self.sessions)}


def item_id(signature: Signature, repair: str) -> str:
    return hashlib.sha256(f"{signature.key}\n{repair}".encode()).hexdigest()[:12]


#: One query, prepared once per process; ``?sid`` is bound to a signature id for a lookup. (No
#: ``a mem:RepairItem``: rdflib would start from that triple, 100x slower at 1,000 items.)
_SELECT = f"""
PREFIX mem: <{MEM}>
PREFIX prov: <{PROV}>
PREFIX dcterms: <{DCTERMS}>
SELECT ?item ?sid ?key ?label ?file ?rule ?repair ?uses ?succ ?created ?modified
WHERE {{
  ?item mem:signatureId ?sid ; mem:signatureKey ?key ; mem:signatureLabel ?label ;
        mem:artifactFile ?file ; mem:rule ?rule ; mem:repair ?repair ; mem:uses ?uses ;
        mem:successes ?succ ; prov:generatedAtTime ?created ; dcterms:modified ?modified .
}}
ORDER BY DESC(2 * ?succ - ?uses) DESC(?succ) ?repair
"""


@cache
def _prepared() -> Any:
    from rdflib.plugins.sparql import prepareQuery

    return prepareQuery(_SELECT)


class MemoryStore:
    """The repair items in ``folder`` (default: :func:`orchestrator.memory.memory_dir`)."""

    _cache: dict[Path, tuple[tuple[int, int, int], Graph]] = {}

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder or memory_dir()
        self.path = self.folder / FILE_NAME
        self._lock = FileLock(str(self.folder / "repairs.lock"), timeout=30)

    # -- reading -------------------------------------------------------------------
    def graph(self) -> Graph:
        """The parsed file (an empty graph when there is none); raises :class:`MemoryDamaged`."""
        from rdflib import Graph

        try:
            info = os.stat(self.path)
        except FileNotFoundError:
            return Graph()
        stamp = (info.st_mtime_ns, info.st_size, info.st_ino)
        cached = self._cache.get(self.path)
        if cached and cached[0] == stamp:
            return cached[1]
        graph = Graph()
        try:
            graph.parse(self.path, format="nt")
        except Exception as exc:  # rdflib raises many types for a bad file
            raise MemoryDamaged(
                f"the repair memory {self.path} cannot be read ({type(exc).__name__}: {str(exc)[:200]}); "
                f"move it aside (it is rebuilt from new repairs) or run 'cconductor memory forget --all'"
            ) from exc
        self._cache[self.path] = (stamp, graph)
        return graph

    def items(self, signature_ids: Iterable[str] | None = None) -> list[RepairItem]:
        """Items, best first; only those of ``signature_ids`` if given (then best first per signature).

        Best: the most times this repair fixed the signature minus the times another one did
        (7 of 8 beats 1 of 1 and 5 of 20), then the most successes.
        """
        from rdflib import Literal

        graph = self.graph()
        if not len(graph):
            return []  # no query to compile: an empty memory costs nothing
        if signature_ids is None:
            rows = list(graph.query(_prepared()))
        else:  # one bound query per signature: rdflib then starts from the index on that id
            rows = [row for sid in sorted(set(signature_ids))
                    for row in graph.query(_prepared(), initBindings={"sid": Literal(sid)})]
        items = [_item(graph, row) for row in rows]
        return [item for item in items if _item_allowed(item)]  # never quote what the rules do not allow

    def get(self, prefix: str) -> RepairItem | None:
        """The item whose id starts with ``prefix`` (None when none or several do)."""
        found = [i for i in self.items() if i.id.startswith(prefix)] if prefix else []
        return found[0] if len(found) == 1 else None

    def best(self, signature_ids: Iterable[str], limit: int = 3) -> dict[str, list[RepairItem]]:
        by_sig: dict[str, list[RepairItem]] = {}
        for item in self.items(signature_ids):
            if len(by_sig.setdefault(item.signature_id, [])) < limit:
                by_sig[item.signature_id].append(item)
        return by_sig

    # -- writing -------------------------------------------------------------------
    def record(self, resolved: Sequence[tuple[Signature, str | None]], session_id: str, now: str) -> list[str]:
        """Count each resolved signature once: every known item of it is used, the matching one succeeds.

        ``resolved`` pairs a signature with the repair that fixed it (None: not describable).
        Returns the ids of the items that succeeded (created or counted).
        """
        succeeded: list[str] = []
        allowed = [(sig, repair) for sig, repair in resolved if _allowed(sig, repair)]
        if not allowed:
            return succeeded
        with self._locked() as graph:
            for signature, repair in allowed:
                succeeded += self._count(graph, signature, repair, session_id, now)
        return succeeded

    def forget(self, ids: Iterable[str] | None) -> list[str]:
        """Remove the items with these ids (all items when ``ids`` is None); returns the removed ids."""
        from rdflib import URIRef

        removed = []
        with self._locked() as graph:
            known = [str(s).removeprefix(ITEM_PREFIX) for s in graph.subjects(_mem("signatureId"), None)]
            targets = known if ids is None else [i for i in ids if i in known]
            for target in targets:
                graph.remove((URIRef(ITEM_PREFIX + target), None, None))
                removed.append(target)
        return removed

    def _locked(self) -> _Transaction:
        return _Transaction(self)

    def _count(self, graph: Graph, sig: Signature, repair: str | None, session: str, now: str) -> list[str]:
        from rdflib import Literal, URIRef
        from rdflib.namespace import RDF, XSD

        for subject in list(graph.subjects(_mem("signatureId"), Literal(sig.id))):
            _add_int(graph, subject, "uses", 1)
            graph.set((subject, URIRef(DCTERMS + "modified"), Literal(now, datatype=XSD.dateTime)))
        if repair is None:
            return []
        ident = item_id(sig, repair)
        node = URIRef(ITEM_PREFIX + ident)
        if (node, RDF.type, _mem("RepairItem")) not in graph:
            for name, value in (("signatureId", sig.id), ("signatureKey", sig.key), ("signatureLabel", sig.describe()),
                                ("artifactFile", sig.file), ("rule", sig.rule), ("repair", repair)):
                graph.add((node, _mem(name), Literal(value)))
            graph.add((node, RDF.type, _mem("RepairItem")))
            graph.add((node, URIRef(PROV + "generatedAtTime"), Literal(now, datatype=XSD.dateTime)))
            graph.set((node, URIRef(DCTERMS + "modified"), Literal(now, datatype=XSD.dateTime)))
            graph.set((node, _mem("uses"), Literal(1)))
            graph.set((node, _mem("successes"), Literal(0)))
        _add_int(graph, node, "successes", 1)
        graph.add((node, URIRef(PROV + "wasDerivedFrom"), URIRef(SESSION_PREFIX + _quote(session))))
        return [ident]


class _Transaction:
    """``with``: the graph under the file lock, written back atomically on success.

    The cached graph is changed in place and stays cached with the new file's stamp; on failure
    it is dropped, so the next reader parses the file again.
    """

    def __init__(self, store: MemoryStore) -> None:
        self.store = store

    def __enter__(self) -> Graph:
        self.store.folder.mkdir(parents=True, exist_ok=True)
        self.store._lock.acquire()
        try:
            self.graph = self.store.graph()
        except BaseException:
            self.store._lock.release()
            raise
        return self.graph

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        cache = MemoryStore._cache
        try:
            if exc_type is None:
                atomic_write_bytes(self.store.path, self.graph.serialize(format="nt", encoding="utf-8"))
                info = os.stat(self.store.path)
                cache[self.store.path] = ((info.st_mtime_ns, info.st_size, info.st_ino), self.graph)
            else:
                cache.pop(self.store.path, None)
        except BaseException:
            cache.pop(self.store.path, None)
            raise
        finally:
            self.store._lock.release()


def _prov(name: str) -> Any:
    from rdflib import URIRef

    return URIRef(PROV + name)


def _mem(name: str) -> Any:
    from rdflib import URIRef

    return URIRef(MEM + name)


def _add_int(graph: Graph, node: Any, name: str, delta: int) -> None:
    from rdflib import Literal

    current = graph.value(node, _mem(name))
    graph.set((node, _mem(name), Literal(int(current.toPython() if current is not None else 0) + delta)))


def _allowed(signature: Signature, repair: str | None) -> bool:
    """Only our own names may cross sessions (orchestrator/memory/vocabulary.py)."""
    return signature_allowed(signature.kind, signature.file, signature.rule, signature.parts) and (
        repair is None or repair_allowed(signature.file, repair))


def _item_allowed(item: RepairItem) -> bool:
    """A stored item (written by any version, or by hand) that still passes the rules when read."""
    kind, file, rule, *fields = item.signature_key.split("|")
    parts = tuple(tuple(f.split("=", 1)) for f in fields)
    if any(len(p) != 2 for p in parts) or file != item.file or rule != item.rule:
        return False
    signature = Signature(kind, file, rule, parts)  # type: ignore[arg-type]
    return (signature.id == item.signature_id and item.label == signature.describe()
            and _allowed(signature, item.repair) and _ITEM_ID.fullmatch(item.id) is not None)


_ITEM_ID = re.compile(r"^[0-9a-f]{12}$")


def _quote(text: str) -> str:
    from urllib.parse import quote

    return quote(text, safe="")


def _item(graph: Graph, row: Any) -> RepairItem:
    sessions = {str(s).removeprefix(SESSION_PREFIX) for s in graph.objects(row.item, _prov("wasDerivedFrom"))}
    return RepairItem(
        id=str(row.item).removeprefix(ITEM_PREFIX), signature_id=str(row.sid), signature_key=str(row.key),
        label=str(row.label), file=str(row.file), rule=str(row.rule), repair=str(row.repair),
        uses=int(row.uses.toPython()), successes=int(row.succ.toPython()), created=str(row.created),
        modified=str(row.modified), sessions=sorted(sessions),
    )
