"""Contradictions between claims: detected from the current claims, never stored (pure).

- :mod:`.words`, :mod:`.units`: the vocabulary and units a comparison reads;
- :mod:`.statements`: a statement reduced to its topic, senses, values and years;
- :mod:`.entities`: which entities are one thing (shared names and aliases, whatever their type);
- :mod:`.rules`: when two statements disagree; :mod:`.search`: which pairs to compare, from one build
  to the next; :mod:`.entries`: what it keeps of a claim; :mod:`.saved`: its rows in the ledger;
- :mod:`.records`: the view's contradiction records; :mod:`.summary`: how they are shown and counted.

The RDF named graph of the detected contradictions is :mod:`orchestrator.rdf.contradictions`, the
report's section :mod:`orchestrator.report.contradictions`.
"""

from orchestrator.contradictions.records import contradictions_touching, detect, unresolved
from orchestrator.contradictions.rules import TOLERANCE, Conflict, compare
from orchestrator.contradictions.search import ConflictCache

__all__ = ["TOLERANCE", "Conflict", "ConflictCache", "compare", "contradictions_touching", "detect", "unresolved"]
