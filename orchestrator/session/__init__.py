"""The session folder's own records: atomic writes, session.json, events.jsonl, cost ledger, failure records.
"""
