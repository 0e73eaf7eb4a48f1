"""cconductor orchestrator: validates agent artifacts and merges them into a knowledge graph.

Kept import-light on purpose: the CLI must start fast, so heavy libraries (rdflib,
pyshacl, anthropic) are imported only by the modules that need them.
"""

__version__ = "0.1.0"
