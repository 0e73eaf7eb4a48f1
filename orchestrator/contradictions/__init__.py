"""Contradictions between claims: detected from the current claims, never stored (pure).

- :mod:`.words`, :mod:`.units`: the vocabulary and units a comparison reads; :mod:`.lexer`: a statement's tokens;
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

__all__ = ["RULES_VERSION", "TOLERANCE", "Conflict", "ConflictCache", "compare", "contradictions_touching", "detect",
           "unresolved"]

#: The detection rules' version: raise it with any change to what the search finds or how it words it.
#: Views, the ledger's vouch for them and the search's saved rows record it, and any written under
#: another version are rebuilt (commit/views.py, commit/vouched.py): a session merged before a rule
#: changed would otherwise go on showing what the old rules found, vouched for as current.
RULES_VERSION = 3
