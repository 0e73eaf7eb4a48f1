"""What changed between a rejected and an accepted artifact, as field paths and kinds of edit.

The result names fields (``claims[].evidence[].page``) and edits (``added``, ``prefix removed``,
``type changed (string to integer)``), never the values nor any key the schema does not name
(:mod:`orchestrator.memory.vocabulary`): a repair memory must generalise across sessions and must
not keep what agents wrote. Arrays of objects with an ``id`` are aligned by
id, other arrays by position.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from orchestrator.memory.vocabulary import field_path
from orchestrator.model.problems import pointer_join

#: Stop describing after this many changes: a rewrite of the whole file teaches nothing precise.
MAX_CHANGES = 200
#: At most this many changes make up one repair description.
MAX_PARTS = 3


@dataclass(frozen=True)
class Change:
    pointer: str  # where, in the rejected document (an added array item: the array)
    kind: str

    def description(self, file: str) -> str:
        """``claims[].evidence[].page: added``: the field as ``file``'s schema names it, and the kind of edit."""
        return f"{field_path(file, self.pointer) or '(file)'}: {self.kind}"


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _string_edit(old: str, new: str) -> str:
    if not old or not new:
        return "filled in" if new else "emptied"
    if new == old.strip():
        return "whitespace trimmed"
    if new.lower() == old.lower():
        return "case changed"
    if old.endswith(new):
        return "prefix removed"
    if old.startswith(new):
        return "suffix removed"
    if new in old:
        return "shortened to a part"
    if new.endswith(old):
        return "prefix added"
    if new.startswith(old):
        return "suffix added"
    return "replaced"


def _scalar_edit(old: Any, new: Any) -> str:
    told, tnew = json_type(old), json_type(new)
    if told != tnew and {told, tnew} != {"integer", "number"}:
        return f"type changed ({told} to {tnew})"
    if isinstance(old, str):
        return _string_edit(old, new)
    if isinstance(old, bool):
        return "flipped"
    return "value lowered" if new < old else "value raised"


def _ids(items: list[Any]) -> list[str] | None:
    """The items' ids when every item is an object with a distinct string id."""
    ids = [item.get("id") for item in items if isinstance(item, dict)]
    if len(ids) != len(items) or not all(isinstance(i, str) for i in ids) or len(set(ids)) != len(ids):
        return None
    return ids  # type: ignore[return-value]


def diff(old: Any, new: Any, pointer: str = "") -> list[Change]:
    """The changes that turn ``old`` into ``new`` (at most :data:`MAX_CHANGES`)."""
    out: list[Change] = []
    _walk(old, new, pointer, out)
    return out[:MAX_CHANGES]


def _walk(old: Any, new: Any, pointer: str, out: list[Change]) -> None:
    if len(out) >= MAX_CHANGES or (old == new and json_type(old) == json_type(new)):
        return
    if isinstance(old, dict) and isinstance(new, dict):
        for key in old:
            here = pointer + pointer_join(key)
            if key not in new:
                out.append(Change(here, "removed"))
            else:
                _walk(old[key], new[key], here, out)
        out.extend(Change(pointer + pointer_join(key), "added") for key in new if key not in old)
    elif isinstance(old, list) and isinstance(new, list):
        _walk_list(old, new, pointer, out)
    else:
        out.append(Change(pointer, _scalar_edit(old, new)))


def _walk_list(old: list[Any], new: list[Any], pointer: str, out: list[Change]) -> None:
    old_ids, new_ids = _ids(old), _ids(new)
    if old_ids is not None and new_ids is not None and set(old_ids) & set(new_ids):
        position = {item_id: n for n, item_id in enumerate(new_ids)}
        for n, item_id in enumerate(old_ids):
            here = pointer + pointer_join(n)
            if item_id in position:
                _walk(old[n], new[position[item_id]], here, out)
            else:
                out.append(Change(here, "item removed"))
        out.extend(Change(pointer + pointer_join(n), "item added") for n, i in enumerate(new_ids) if i not in old_ids)
        return
    for n in range(min(len(old), len(new))):
        _walk(old[n], new[n], pointer + pointer_join(n), out)
    out.extend(Change(pointer + pointer_join(n), "item removed") for n in range(len(new), len(old)))
    out.extend(Change(pointer + pointer_join(n), "item added") for n in range(len(old), len(new)))


def _segments(pointer: str) -> list[str]:
    return pointer.split("/")[1:] if pointer else []


def _related(change: str, problem: str) -> bool:
    """The change is inside the problem's subtree, or replaces a node that contains it."""
    c, p = _segments(change), _segments(problem)
    return c[: len(p)] == p or p[: len(c)] == c


def repair_for(changes: Iterable[Change], pointer: str, file: str) -> str | None:
    """Describe the edits that most plausibly fixed the problem at ``pointer``, or None.

    First the changes at or under the pointer (or above it: the item was removed); failing
    that, the changes within the same top-level item (``/claims/3``). Unrelated edits elsewhere
    in the file are left out.
    """
    changes = list(changes)
    chosen = [c for c in changes if _related(c.pointer, pointer)] if pointer else changes
    if not chosen and len(_segments(pointer)) > 2:
        item = "".join("/" + s for s in _segments(pointer)[:2])
        chosen = [c for c in changes if _related(c.pointer, item)]
    descriptions = sorted({c.description(file) for c in chosen})
    if not descriptions or len(descriptions) > MAX_PARTS:
        return None
    return "; ".join(descriptions)
