"""Which entities are one thing to the contradiction search, and the names that stand for it (pure).

The views merge two entities only when their type and name agree, so "Rotterdam" the city and
"Rotterdam" the port, or "New York City" and an entity named "NYC" with that alias, stay apart there.
Two claims about them are about the same thing: here entities sharing a name or an alias (case
and spacing aside, types ignored) form one group, and every name of the group stands for it in a
statement (:func:`orchestrator.contradictions.statements.entity_token`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from orchestrator.contradictions.statements import entity_token, fold

Names = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Groups:
    """Each entity id's group token, and each group's names with its token."""

    token: Mapping[str, str]
    names: Mapping[str, Names]
    #: the names of every group known by more than one name ("NYC", "New York City"), with its token
    aliased: Names = field(default=())
    #: :meth:`of` by entity ids, for this build
    _seen: dict[tuple[Any, ...], tuple[frozenset[str], Names]] = field(
        default_factory=dict, init=False, repr=False, compare=False)

    @cached_property
    def _finder(self) -> re.Pattern[str] | None:
        names = sorted({n for n, _ in self.aliased}, key=lambda n: (-len(n), n))
        if not names:
            return None
        return re.compile(r"(?<![\w-])(?:" + "|".join(re.escape(n) for n in names) + r")(?![\w-])")

    def mentioned(self, statement: str) -> Names:
        """The (name, token) pairs of the aliased groups a statement names, whether or not the claim links
        the entity: "NYC has 8 million residents" and "New York City has 9 million" are about one city."""
        finder = self._finder
        if finder is None:
            return ()
        found = {m.group(0) for m in finder.finditer(fold(statement))}
        if not found:
            return ()
        tokens = {t for n, t in self.aliased if n in found}
        return tuple(sorted(pair for pair in self.aliased if pair[1] in tokens))

    def of_claim(self, claim: Mapping[str, Any]) -> tuple[frozenset[str], Names]:
        """The group tokens of a claim's linked entities, and the names that stand for an entity in its statement
        (its linked entities' and those of any aliased group it names). Asked of every claim at each build."""
        linked = claim.get("entity_ids")
        if not self.aliased:
            return self.of(linked) if linked else _NONE
        tokens, names = self.of(linked) if linked else _NONE
        extra = self.mentioned(str(claim.get("statement", "")))
        if extra and not set(extra) <= set(names):
            names = tuple(sorted(set(names) | set(extra)))
        return tokens, names

    def of(self, entity_ids: Iterable[Any]) -> tuple[frozenset[str], Names]:
        """The group tokens of a claim's entities, and all their names (sorted, for a cache key); kept by the
        ids, as many claims name the same entities."""
        if type(entity_ids) is list:
            key = tuple(entity_ids)
            try:
                found = self._seen.get(key)
            except TypeError:  # an id that is not a string (never kept, as in _of)
                return self._of(entity_ids)
            if found is None:
                found = self._seen[key] = self._of(key)
            return found
        return self._of(entity_ids)

    def _of(self, entity_ids: Iterable[Any]) -> tuple[frozenset[str], Names]:
        tokens = frozenset(self.token.get(e, e) for e in entity_ids if isinstance(e, str))  # an unknown id: itself
        named = [self.names[t] for t in tokens if t in self.names]
        if len(named) <= 1:
            return tokens, named[0] if named else ()
        return tokens, tuple(sorted({pair for names in named for pair in names}))


_NONE: tuple[frozenset[str], Names] = (frozenset(), ())


def _names_of(entity: Mapping[str, Any]) -> list[str]:
    names = [entity.get("name"), *(entity.get("aliases") or ())]
    return [fold(n) for n in names if isinstance(n, str) and fold(n)]


def groups(entities: Sequence[Mapping[str, Any]]) -> Groups:
    """Union the entities that share a name or alias; ids include the ids merged into each entity."""
    parent: dict[int, int] = {}

    def find(i: int) -> int:
        while parent.get(i, i) != i:
            parent[i] = parent.get(parent[i], parent[i])
            i = parent[i]
        return i

    first: dict[str, int] = {}
    names = [_names_of(e) for e in entities]
    for index, found in enumerate(names):
        for name in found:
            other = first.setdefault(name, index)
            if other != index:
                a, b = find(index), find(other)
                if a != b:
                    parent[max(a, b)] = min(a, b)
    members: dict[int, list[int]] = {}
    for index in range(len(entities)):
        members.setdefault(find(index), []).append(index)
    token: dict[str, str] = {}
    all_names: dict[str, Names] = {}
    aliased: list[tuple[str, str]] = []
    for indexes in members.values():
        group_names = sorted({n for i in indexes for n in names[i]})
        if not group_names:
            continue
        mark = entity_token(group_names[0])
        all_names[mark] = tuple((n, mark) for n in group_names)
        if len(group_names) > 1:
            aliased += all_names[mark]
        for i in indexes:
            entity = entities[i]
            for entity_id in (entity.get("id"), *(entity.get("merged_ids") or ())):
                if isinstance(entity_id, str):
                    token[entity_id] = mark
    return Groups(token, all_names, tuple(sorted(aliased)))
