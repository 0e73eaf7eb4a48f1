"""What a resubmission breaks for other agents: their references to items it no longer provides,
and their relationships that its changed claims no longer state.

Retry instructions ask an agent to change only its own files. When an agent's new version
drops an item that other agents cite, or changes a claim (or an entity's names) so that another
agent's relationship resting on it is no longer stated, the resubmitter is told exactly what it
breaks (agent, file, pointer), and how to avoid it; the other agents' files are never the fix.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from orchestrator.graph.merge import REFERENCES
from orchestrator.graph.relation_support import claim_texts, entity_names, relationship_problem
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


def _all_references(items: Mapping[str, Any]) -> Iterator[tuple[Mapping[str, Any], str, str]]:
    """(item, global id, pointer inside the item) of each reference the items make."""
    for collection, fields in REFERENCES.items():
        for item in items.get(collection) or ():
            if isinstance(item, Mapping):
                for path, _, _ in fields:
                    for gid, inner in _references(item, path, ""):
                        yield item, gid, inner


def _targets(value: Any, path: list[str]) -> Iterator[Any]:
    """The values at ``path`` ("a/*/b" split) inside ``value``: :func:`_references` without pointers."""
    for index, head in enumerate(path):
        if head == "*":
            if isinstance(value, list):
                for element in value:
                    yield from _targets(element, path[index + 1:])
            return
        value = value.get(head) if isinstance(value, Mapping) else None
    yield value


_PATHS = {collection: [path.split("/") for path, _, _ in fields] for collection, fields in REFERENCES.items()}


def cited_agents(contribution: Mapping[str, Any]) -> set[str]:
    """The agents owning the items a contribution's references name (``agent:id``)."""
    items = contribution.get("items") or {}
    return {ref.partition(":")[0] for collection, paths in _PATHS.items() for item in items.get(collection) or ()
            for path in paths for ref in _targets(item, path) if isinstance(ref, str) and ":" in ref}


def broken_references(
    agent: str, new: Mapping[str, Any], old: Mapping[str, Any] | None,
    citing: Callable[[], Mapping[str, Mapping[str, Any]]],
) -> list[Problem]:
    """A problem for the remover for each reference of another agent to an item ``new`` drops.

    ``citing()`` gives the current records of (at least) the agents citing ``agent``
    (:func:`cited_agents`); it is called only when ``new`` drops an item.
    """
    if old is None:
        return []
    dropped = {gid: c for gid, c in _ids(old).items() if gid not in _ids(new)}
    if not dropped:
        return []
    problems: list[Problem] = []
    records = citing()
    for other in sorted(records):
        if other == agent:
            continue
        for item, gid, inner in _all_references(records[other]["contribution"]["items"]):
            if gid not in dropped:
                continue
            provenance = item.get("provenance") or {}
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


def _changed(old: Mapping[str, Any], new: Mapping[str, Any]) -> set[str]:
    """Global ids of the claims and entities in both versions whose support-bearing content differs:
    a claim's verified passages, an entity's names (what :mod:`orchestrator.graph.relation_support` reads)."""
    changed = set()
    for collection, read in (("claims", claim_texts), ("entities", entity_names)):
        before = {i["id"]: i for i in (old.get("items") or {}).get(collection) or () if isinstance(i, Mapping)}
        for item in (new.get("items") or {}).get(collection) or ():
            previous = before.get(item.get("id")) if isinstance(item, Mapping) else None
            if previous is not None and read(previous) != read(item):
                changed.add(item["id"])
    return changed


def broken_support(
    agent: str, new: Mapping[str, Any], old: Mapping[str, Any] | None,
    citing: Callable[[], Mapping[str, Mapping[str, Any]]],
    claim_of: Callable[[str], Mapping[str, Any] | None], entity_of: Callable[[str], Mapping[str, Any] | None],
) -> list[Problem]:
    """A problem for the resubmitter for each relationship of another agent that its changed claims or
    entities no longer state (it was stated before the change).

    A retry that keeps a claim's id but quotes something else would otherwise leave another agent's
    relationship resting on a passage that no longer says it. As with a removed item
    (:func:`broken_references`), the resubmitter is told, and the other agent's files are never the fix.
    ``claim_of`` / ``entity_of`` find items of other agents by global id.
    """
    if old is None:
        return []
    changed = _changed(old, new)
    if not changed:
        return []
    prefix = f"{agent}:"

    def lookup(version: Mapping[str, Any], collection: str,
               others: Callable[[str], Mapping[str, Any] | None]) -> Callable[[str], Mapping[str, Any] | None]:
        own = {i["id"]: i for i in (version.get("items") or {}).get(collection) or () if isinstance(i, Mapping)}
        return lambda gid: own.get(gid) if gid.startswith(prefix) else others(gid)

    after = lookup(new, "claims", claim_of), lookup(new, "entities", entity_of)
    before = lookup(old, "claims", claim_of), lookup(old, "entities", entity_of)
    problems: list[Problem] = []
    records = citing()
    for other in sorted(records):
        if other == agent:
            continue
        for rel in records[other]["contribution"]["items"].get("relationships") or ():
            touched = sorted(changed & {*(rel.get("claim_ids") or ()), rel.get("subject"), rel.get("object")})
            if not touched or relationship_problem(rel, *before) is not None:
                continue
            lost = relationship_problem(rel, *after)
            if lost is None:
                continue
            provenance = rel.get("provenance") or {}
            where = f"{provenance.get('file', f'artifacts/{other}/')}{provenance.get('pointer', '')}"
            locals_ = ", ".join(f"'{gid.split(':', 1)[1]}'" for gid in touched)
            problems.append(Problem(
                f"artifacts/{agent}", "", "reference.support_lost",
                f"this submission changes {locals_} ({', '.join(touched)}), on which agent '{other}''s relationship "
                f"{rel.get('local_id') or rel.get('id')} at {where} rests, and it no longer states that "
                f"relationship: {lost.message}",
                f"keep what {locals_} quote(s) and name(s) (another agent's relationship rests on it), or give the "
                f"changed item a new id and keep the old one; if it must change, have '{other}' drop or re-support "
                f"its relationship first; do not edit '{other}''s files",
                details={"other_agent": other, "other_file": provenance.get("file"),
                         "other_pointer": provenance.get("pointer", ""), "relationship": rel.get("id"),
                         "ids": touched},
            ))
    return problems
