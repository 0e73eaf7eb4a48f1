"""Offline backend: extractive research over local documents, deterministic and network-free.

``ingest`` turns files and arXiv metadata into Documents (``documents``; file formats are read in
``readers``, arXiv dumps in ``library``), ``text`` holds the text helpers and ``textindex`` the
BM25 passage index over them.
"""
