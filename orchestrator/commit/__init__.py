"""From a lock to a committed graph: the lock life-cycle, the processor, the ledger, views,
retries, rollback, the watcher.

Imports only the layers below it (model, contract, graph, rdf, session).
"""
