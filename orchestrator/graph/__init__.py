"""The knowledge graph as data: merge into namespaces, the unified view, evidence matching, quality, citations.

Pure functions over dicts; no files, no RDF.
"""
