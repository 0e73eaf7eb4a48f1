"""Grounded answers from a session's validated graph (``cconductor ask``).

Retrieval (SPARQL over the RDF view plus BM25 over claims and their verified passages), the
citation validator with its confidence arithmetic, and the ``answers/`` audit folder. The
answer itself is written by a backend in ``agents/ask`` behind :class:`~.model.Composer`;
nothing here imports ``agents``.
"""
