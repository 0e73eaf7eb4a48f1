"""Pure merge of one agent's artifact files: its namespace and its contribution.

Deterministic and free of I/O: the same files and the same view of the other agents
always give the same result. Nothing is silently overwritten: two files that set the
same scalar to different values are a problem naming both files.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from orchestrator.model.inputs import InputFile
from orchestrator.model.kinds import COLLECTIONS, KINDS
from orchestrator.model.problems import Problem, pointer_join
from orchestrator.model.records import Contribution

#: Reference fields per collection, from the kinds table: (field path, target collections, strict).
REFERENCES: dict[str, tuple[tuple[str, tuple[str, ...], bool], ...]] = {
    kind.collection: tuple((ref.path, ref.targets, ref.strict) for ref in kind.references)
    for kind in KINDS if kind.references
}


class ReferenceIndex(Protocol):
    """What the merge may know about the other agents already in the graph."""

    def exists(self, collection: str, global_id: str) -> bool: ...

    def by_local(self, collection: str, local_id: str) -> list[str]: ...


class EmptyIndex:
    def exists(self, collection: str, global_id: str) -> bool:
        return False

    def by_local(self, collection: str, local_id: str) -> list[str]:
        return []


@dataclass
class MergeResult:
    namespace: dict[str, Any]
    contribution: Contribution
    problems: list[Problem] = field(default_factory=list)


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def derived_id(kind: str, item: Any) -> str:
    """Deterministic id for an item the agent left without one (bookkeeping, not judgement)."""
    return f"{kind}-{hashlib.sha256(canonical_json(item).encode()).hexdigest()[:10]}"


def deep_merge(files: Sequence[InputFile]) -> tuple[dict[str, Any], list[Problem]]:
    """Objects merge, arrays concatenate, equal scalars agree, different scalars conflict."""
    merged: dict[str, Any] = {}
    origin: dict[str, str] = {}
    problems: list[Problem] = []

    def first_origin(pointer: str) -> str:
        while pointer and pointer not in origin:
            pointer = pointer.rsplit("/", 1)[0]
        return origin.get(pointer, "?")

    def merge_into(target: dict[str, Any], source: dict[str, Any], base: str, rel: str) -> None:
        for key, value in source.items():
            pointer = base + pointer_join(key)
            if key not in target:
                target[key] = copy.deepcopy(value)
                origin[pointer] = rel
            elif isinstance(target[key], dict) and isinstance(value, dict):
                merge_into(target[key], value, pointer, rel)
            elif isinstance(target[key], list) and isinstance(value, list):
                target[key] = target[key] + copy.deepcopy(value)
            elif target[key] != value or type(target[key]) is not type(value):
                other = first_origin(pointer)
                problems.append(
                    Problem(
                        rel,
                        pointer,
                        "merge.conflict",
                        f"{pointer} is {_preview(value)} here but {other} already sets it to "
                        f"{_preview(target[key])}; an agent's files may not disagree",
                        f"make {pointer} identical in {other} and {rel}, or keep it in only one of them",
                        details={"other_file": other},
                    )
                )

    for item in sorted(files, key=lambda f: f.name):
        merge_into(merged, item.data, "", item.rel)
    return merged, problems


def _preview(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class _Resolver:
    def __init__(self, agent: str, own: dict[str, set[str]], index: ReferenceIndex):
        self.agent = agent
        self.own = own
        self.index = index

    def resolve(self, ref: Any, targets: tuple[str, ...]) -> tuple[str | None, str | None, str]:
        """Return (global id, collection it names, "") or (None, None, reason).

        One rule for every consumer (JSON views, RDF, reports): a reference names exactly one
        item of exactly one collection, else it is an error listing the candidates.
        """
        if not isinstance(ref, str) or not ref:
            return None, None, "the reference is not a non-empty string"
        if ":" in ref:
            owner, local = ref.split(":", 1)
            found = [
                c for c in targets
                if (owner == self.agent and local in self.own[c]) or (owner != self.agent and self.index.exists(c, ref))
            ]
            if len(found) == 1:
                return ref, found[0], ""
            if found:
                return None, None, f"{ref!r} is ambiguous: it is both {' and '.join(_a(c) for c in found)}"
            return None, None, f"no {' or '.join(_singular(t) for t in targets)} {ref!r} exists in the graph"
        own = [c for c in targets if ref in self.own[c]]
        if len(own) == 1:
            return f"{self.agent}:{ref}", own[0], ""
        if own:
            return None, None, (f"{ref!r} is ambiguous: this agent has it as {' and as '.join(_a(c) for c in own)}; "
                                "give them distinct ids")
        candidates = sorted({(g, c) for c in targets for g in self.index.by_local(c, ref)})
        if len(candidates) == 1:
            return candidates[0][0], candidates[0][1], ""
        if candidates:
            shown = ", ".join(f"{g} ({_singular(c)})" if len(targets) > 1 else g for g, c in candidates)
            return None, None, f"{ref!r} is ambiguous: it matches {shown}"
        return None, None, (
            f"{ref!r} matches no {' or '.join(_singular(t) for t in targets)} of this agent or of any merged agent"
        )


def _a(collection: str) -> str:
    noun = _singular(collection)
    return f"an {noun}" if noun[0] in "aeiou" else f"a {noun}"


def _singular(collection: str) -> str:
    return COLLECTIONS[collection].replace("-", " ")


def build_contribution(
    agent: str,
    files: Sequence[InputFile],
    index: ReferenceIndex,
    *,
    attempt: int,
    merged_at: str,
    artifact_sha256: str,
) -> MergeResult:
    """Merge the files into a namespace and derive the unified items this agent adds."""
    namespace, problems = deep_merge(files)
    ordered = sorted(files, key=lambda f: f.name)
    items: dict[str, list[dict[str, Any]]] = {c: [] for c in COLLECTIONS}
    located: dict[str, list[tuple[InputFile, int, dict[str, Any]]]] = {c: [] for c in COLLECTIONS}
    own: dict[str, set[str]] = {c: set() for c in COLLECTIONS}
    seen_at: dict[tuple[str, str], str] = {}

    for art in ordered:
        for collection, kind in COLLECTIONS.items():
            values = art.data.get(collection)
            if not isinstance(values, list):
                continue
            for position, raw in enumerate(values):
                if not isinstance(raw, dict):
                    continue
                given = raw.get("id")
                local = given if isinstance(given, str) else derived_id(kind, raw)
                where = f"{art.rel}{pointer_join(collection, position)}"
                if (collection, local) in seen_at:
                    problems.append(
                        Problem(
                            art.rel,
                            pointer_join(collection, position, "id"),
                            "merge.duplicate_id",
                            f"{_singular(collection)} id {local!r} is used twice: "
                            f"here and at {seen_at[(collection, local)]}",
                            "give every item of an agent a distinct id, or remove the repeated item",
                        )
                    )
                    continue
                seen_at[(collection, local)] = where
                own[collection].add(local)
                located[collection].append((art, position, {**raw, "id": local}))

    resolver = _Resolver(agent, own, index)
    for collection, entries in located.items():
        for art, position, raw in entries:
            item = copy.deepcopy(raw)
            base = pointer_join(collection, position)
            for path, targets, strict in REFERENCES.get(collection, ()):
                problems.extend(_resolve_field(item, path, targets, strict, resolver, art.rel, base))
            local = item["id"]
            item["id"] = f"{agent}:{local}"
            item["local_id"] = local
            item["provenance"] = {
                "agent": agent,
                "file": art.rel,
                "pointer": base,
                "artifact_sha256": art.sha256,
                "set_sha256": artifact_sha256,
                "attempt": attempt,
                "merged_at": merged_at,
            }
            items[collection].append(item)

    contribution: Contribution = {
        "agent": agent,
        "attempt": attempt,
        "merged_at": merged_at,
        "artifact_sha256": artifact_sha256,
        "files": {f.name: f.sha256 for f in ordered},
        "items": items,
    }
    return MergeResult(namespace, contribution, problems)


def _resolve_field(
    item: dict[str, Any],
    path: str,
    targets: tuple[str, ...],
    strict: bool,
    resolver: _Resolver,
    rel: str,
    base: str,
) -> list[Problem]:
    """Resolve one reference field in place; ``evidence/*/source_id`` keeps the written form too."""
    problems: list[Problem] = []
    head, _, rest = path.partition("/")
    if head not in item:
        return problems
    if rest.startswith("*"):
        container = item[head]
        if not isinstance(container, list):
            return problems
        tail = rest[2:]
        for index, element in enumerate(container):
            pointer = base + pointer_join(head, index)
            if tail:
                if isinstance(element, dict):
                    problems.extend(_resolve_field(element, tail, targets, strict, resolver, rel, pointer))
            else:
                problems.extend(_resolve_value(container, index, targets, strict, resolver, rel, pointer))
        return problems
    if rest:
        child = item[head]
        if isinstance(child, dict):
            problems.extend(_resolve_field(child, rest, targets, strict, resolver, rel, base + pointer_join(head)))
        return problems
    if head == "source_id":
        item["source_ref"] = item[head]
    return _resolve_value(item, head, targets, strict, resolver, rel, base + pointer_join(head))


def _resolve_value(
    container: Any,
    key: Any,
    targets: tuple[str, ...],
    strict: bool,
    resolver: _Resolver,
    rel: str,
    pointer: str,
) -> list[Problem]:
    written = container[key]
    resolved, collection, reason = resolver.resolve(written, targets)
    if resolved is not None:
        container[key] = resolved
        if len(targets) > 1 and isinstance(key, str) and collection is not None:
            # the resolved kind travels with the item, so no later reader has to guess it
            container[f"{key}_kind"] = COLLECTIONS[collection]
        return []
    kinds = " or ".join(_singular(t) for t in targets)
    files = ", ".join(f"{t.replace('_', '-')}.json" for t in targets)
    return [
        Problem(
            rel,
            pointer,
            "reference.unresolved",
            f"reference {_preview(written)} does not resolve: {reason}",
            f"set it to the id of a {kinds} in this agent's {files}, or to '<agent>:<id>' naming "
            f"a {kinds} of an agent that is already merged" + ("" if strict else "; it is kept as written for now"),
            severity="error" if strict else "warning",
        )
    ]
