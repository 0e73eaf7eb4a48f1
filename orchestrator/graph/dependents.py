"""What a resubmission breaks for other agents: their references to items it no longer provides.

Retry instructions ask an agent to change only its own files. When an agent's new version
drops an item that other agents cite, the remover is told exactly which references it breaks
(agent, file, pointer), and how to avoid it; the other agents' files are never the fix.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from orchestrator.graph.merge import REFERENCES
from orchestrator.model.kinds import COLLECTIONS
from orchestrator.model.problems import Problem, pointer_join


def _references(item: Mapping[str, Any], path: str, pointer: str) -> Iterator[tuple[str, str]]:
    """(global id, JSON pointer) of each reference at ``path`` ("a/*/b") inside ``item``."""
    head, _, rest = path.partition("/")
    value = item.get(head)
    if value is None:
        return
    if rest.startswith("*"):
        if not isinstance(value, list):
            return
        tail = rest[2:]
        for index, element in enumerate(value):
            here = pointer + pointer_join(head, index)
            if tail and isinstance(element, Mapping):
                yield from _references(element, tail, here)
            elif not tail and isinstance(element, str):
                yield element, here
    elif rest and isinstance(value, Mapping):
        yield from _references(value, rest, pointer + pointer_join(head))
    elif not rest and isinstance(value, str):
        yield value, pointer + pointer_join(head)


def _ids(contribution: Mapping[str, Any]) -> dict[str, str]:
    """global id -> collection of every item the contribution provides."""
    found: dict[str, str] = {}
    for collection in COLLECTIONS:
        for item in (contribution.get("items") or {}).get(collection) or ():
            if isinstance(item, Mapping) and isinstance(item.get("id"), str):
                found[item["id"]] = collection
    return found


def broken_references(
    agent: str, new: Mapping[str, Any], old: Mapping[str, Any] | None, records: Mapping[str, Mapping[str, Any]]
) -> list[Problem]:
    """A problem for the remover for each reference of another agent to an item ``new`` drops."""
    if old is None:
        return []
    dropped = {gid: c for gid, c in _ids(old).items() if gid not in _ids(new)}
    if not dropped:
        return []
    problems: list[Problem] = []
    for other in sorted(records):
        if other == agent:
            continue
        items = records[other]["contribution"]["items"]
        for collection, fields in REFERENCES.items():
            for item in items.get(collection) or ():
                provenance = item.get("provenance") or {}
                for path, _, _ in fields:
                    for gid, inner in _references(item, path, ""):
                        if gid not in dropped:
                            continue
                        kind = COLLECTIONS[dropped[gid]].replace("-", " ")
                        local = gid.split(":", 1)[1]
                        where = f"{provenance.get('file', f'artifacts/{other}/')}{provenance.get('pointer', '')}{inner}"
                        problems.append(Problem(
                            f"artifacts/{agent}", "", "reference.removed_in_use",
                            f"this submission no longer has the {kind} '{local}' ({gid}), but agent '{other}' "
                            f"cites it at {where}",
                            f"keep the {kind} with id '{local}' in your files (other agents rely on it), or, if it "
                            f"must go, have '{other}' drop its reference first; do not edit '{other}''s files",
                            details={"other_agent": other, "other_file": provenance.get("file"),
                                     "other_pointer": f"{provenance.get('pointer', '')}{inner}", "id": gid},
                        ))
    return problems
