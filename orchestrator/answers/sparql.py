"""SPARQL over a session's RDF view (``knowledge-graph.trig``), with pyoxigraph or rdflib.

Both engines answer the same queries over the union of the agents' named graphs. pyoxigraph is
the default: ``benchmarks/bench_ask.py`` measures it loading and querying ~100,000 triples an
order of magnitude faster than rdflib (figures in docs/ask.md). Results are plain dicts of strings.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from orchestrator.model.errors import SessionDamaged

Engine = Literal["pyoxigraph", "rdflib"]
DEFAULT_ENGINE: Engine = "pyoxigraph"

PREFIXES = """PREFIX cc: <https://cconductor.dev/ontology#>
PREFIX dcterms: <http://purl.org/dc/terms/>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
PREFIX skos: <http://www.w3.org/2004/02/skos/core#>
"""


def _literal(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _union(ids: Iterable[str], pattern: str) -> str:
    """``pattern`` once per id (``{id}`` replaced by the id's literal), joined by UNION.

    One block per id with the id as a constant, rather than a VALUES table: rdflib joins VALUES
    last, which made "claims about 2 entities" take 21 s at 10,000 triples (0.6 s this way).
    """
    blocks = [f"{{ {pattern.replace('{id}', _literal(i))} }}" for i in ids]
    return " UNION ".join(blocks) or "{ FILTER(false) }"


def entities_named(terms: Iterable[str]) -> str:
    """Entities whose name or an alternative name contains one of ``terms`` (lower case)."""
    wanted = " || ".join(f'CONTAINS(LCASE(STR(?name)), "{t}")' for t in terms if t.isalnum()) or "false"
    return PREFIXES + f"""SELECT DISTINCT ?id WHERE {{
  ?e a cc:Entity ; dcterms:identifier ?id .
  {{ ?e rdfs:label ?name }} UNION {{ ?e skos:altLabel ?name }}
  FILTER({wanted})
}}"""


def claims_about(entity_ids: Iterable[str]) -> str:
    """Claims about any of the entities, with at least one verified evidence item."""
    # (no "?c a cc:Claim": only claims have cc:hasEvidence, and rdflib evaluates the type pattern first)
    pattern = ("?e dcterms:identifier {id} . ?c dcterms:subject ?e . ?c dcterms:identifier ?id ; "
               "cc:hasEvidence ?ev . ?ev cc:verified true .")
    return PREFIXES + f"SELECT DISTINCT ?id WHERE {{ {_union(entity_ids, pattern)} }}"


def relationships_of(entity_ids: Iterable[str]) -> str:
    """Relationships with one of the entities as subject or object."""
    pattern = ("?e dcterms:identifier {id} . ?r a cc:Relationship ; dcterms:identifier ?id . "
               "{ ?r cc:subject ?e } UNION { ?r cc:object ?e }")
    return PREFIXES + f"SELECT DISTINCT ?id WHERE {{ {_union(entity_ids, pattern)} }}"


class SparqlStore:
    """One loaded RDF view; ``select`` returns each solution as {variable: string value}."""

    def __init__(self, path: Path, engine: Engine = DEFAULT_ENGINE, data: bytes | None = None):
        """``data``: the TriG bytes to load (the committed view as read and vouched for); else ``path``'s."""
        self.engine = engine
        self.path = path
        self._store: Any = None
        if data is None and path.is_file():
            data = path.read_bytes()
        if data is not None:
            try:
                self._store = self._load_oxigraph(data) if engine == "pyoxigraph" else self._load_rdflib(data)
            except (SyntaxError, ValueError) as exc:
                raise SessionDamaged(
                    f"{path} is not valid TriG ({exc}); it is a view of the ledger: rebuild it with "
                    f"`cconductor process {path.parent.name}`"
                ) from None

    @staticmethod
    def _load_oxigraph(data: bytes) -> Any:
        import pyoxigraph

        store = pyoxigraph.Store()
        store.bulk_load(data, format=pyoxigraph.RdfFormat.TRIG)
        return store

    @staticmethod
    def _load_rdflib(data: bytes) -> Any:
        from rdflib import Dataset

        dataset = Dataset(default_union=True)
        dataset.parse(data=data, format="trig")
        return dataset

    def select(self, query: str) -> list[dict[str, str]]:
        if self._store is None:
            return []
        if self.engine == "pyoxigraph":
            solutions = self._store.query(query, use_default_graph_as_union=True)
            names = [v.value for v in solutions.variables]
            return [{n: row[n].value for n in names if row[n] is not None} for row in solutions]
        result = self._store.query(query)
        return [{str(k): str(v) for k, v in row.asdict().items()} for row in result]
