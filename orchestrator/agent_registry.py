"""Which artifact files a known agent must provide (its definition's ``required_files``).

Instances of a definition (``academic-researcher-i1-2``) are held to the definition's
files; names the project does not define may follow the protocol freely.
"""

from __future__ import annotations


def required_files_for(agent: str) -> tuple[str, ...]:
    from agents.definitions import definition_for, load_definitions

    definition = definition_for(agent, load_definitions())
    return definition.required_files if definition else ()
