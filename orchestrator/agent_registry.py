"""Which artifact files a known agent must provide (its definition's ``required_files``).

Agents the project does not define may still use any protocol-conforming name; they
are held to no required files.
"""

from __future__ import annotations

from collections.abc import Iterable


def required_files_for(agent: str) -> Iterable[str]:
    try:
        from agents.definitions import load_definitions
    except ImportError:
        return ()
    definition = load_definitions().get(agent)
    return definition.required_files if definition else ()
