"""cconductor orchestrator: validates agent artifacts and merges them into a knowledge graph.

Kept import-light on purpose: the CLI must start fast, so heavy libraries (rdflib,
pyshacl, anthropic) are imported only by the modules that need them.
"""

import sys

__version__ = "0.1.0"

# jsonschema imports rfc3987_syntax, when it is installed, for its "iri" formats, and that module builds a
# grammar at import: about 0.8 s added to every command that validates. Our schemas use no iri format ("uri"
# is checked by rfc3986-validator), so the import is kept from happening: a None entry in sys.modules makes
# it fail as if the package were not installed. (benchmarks/bench_pipeline.py measures the start-up.)
sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]
