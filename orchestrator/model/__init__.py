"""The vocabulary every layer shares: problems, errors, the kinds table, ids, the session folder layout.

Pure: no I/O, imports nothing else of the orchestrator.
"""
