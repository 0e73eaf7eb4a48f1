"""Research agents; ``agents.offline`` is the deterministic, network-free backend."""
