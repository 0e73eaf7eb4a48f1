"""An offline agent's retry: correct or drop exactly the items the retry instructions name.

The retry instructions name files and JSON pointers. A retry starts from the rejected files
(still in the folder, or set aside by the runner), corrects or drops exactly the items named,
drops what referred to dropped items, and leaves every other item as it was.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agents.runtime import AgentContext

ItemFixer = Callable[[dict[str, Any], list[str]], dict[str, Any] | None]
Target = tuple[list[str], str]  # (pointer parts below the item, message)
_REQUIRED = frozenset({"id", "type", "title", "statement", "confidence", "priority", "evidence", "name",
                       "subject", "predicate", "object", "description", "claim_ids", "status", "claim_id",
                       "sub_question_id", "question", "snippet", "source_id", "text"})


def retry_targets(instructions: dict[str, Any]) -> dict[str, list[Target]]:
    """Error problems and SHACL violations by artifact file name: (pointer parts, message)."""
    found = [(p.get("file") or entry.get("path"), p.get("pointer", ""), f"{p.get('message')} {p.get('hint')}")
             for entry in instructions.get("files") or () for p in entry.get("problems") or ()
             if p.get("severity", "error") == "error"]
    found += [(v.get("file"), v.get("pointer", ""), str(v.get("message", "")))
              for v in instructions.get("shacl_violations") or () if v.get("severity", "error") == "error"]
    out: dict[str, list[Target]] = {}
    for file, pointer, message in found:
        parts = [p.replace("~1", "/").replace("~0", "~") for p in str(pointer).split("/")[1:]]
        out.setdefault(Path(str(file or "")).name, []).append((parts, message))
    return out


def _previous_files(context: AgentContext) -> dict[str, dict[str, Any]]:
    """The rejected attempt's artifact files (not completion.json) by name."""
    task = context.task
    for folder in (context.folder, context.paths.state / "attempts" / f"{task.agent}-{task.attempt - 1}"):
        files = {p.name: json.loads(p.read_text(encoding="utf-8"))
                 for p in sorted(folder.glob("*.json")) if p.name != "completion.json"}
        if files:
            return files
    return {}


def _split(parts: list[str]) -> tuple[tuple[str, ...], int, list[str]] | None:
    """Pointer parts -> (path of the item list, item index, parts below the item)."""
    cut = 4 if parts[:1] == ["report_outline"] else 1  # report_outline/sections/N/paragraphs/M
    if len(parts) <= cut or not parts[cut].isdigit():
        return None
    return tuple(parts[:cut]), int(parts[cut]), parts[cut + 1 :]


def _fix_item(item: Any, problems: list[Target], fixer: ItemFixer | None) -> Any:
    """The corrected item, or None to drop it.

    A named list element goes (a bad reference in ``claim_ids``), and so does a named optional
    field; a problem with a required field, or with the item itself, drops the item.
    """
    if not isinstance(item, dict):
        return None
    if fixer is not None and any(not rest or rest[0] in ("evidence", "snippet") for rest, _ in problems):
        return fixer(dict(item), [m for _, m in problems])
    item = dict(item)
    for rest, _ in sorted(problems, key=lambda t: [int(x) if x.isdigit() else -1 for x in t[0]])[::-1]:
        if not rest or rest[0] not in item:
            return None
        value = item[rest[0]]
        if len(rest) >= 2 and rest[1].isdigit() and isinstance(value, list):
            item[rest[0]] = [v for i, v in enumerate(value) if i != int(rest[1])]
            if not item[rest[0]] and rest[0] in _REQUIRED:
                return None
        elif rest[0] in _REQUIRED:
            return None
        else:
            del item[rest[0]]
    return item


def _markers(text: str) -> set[str]:
    found = re.findall(r"\[(@[^\[\]]+)\]", text)
    return {ref.strip().lstrip("@") for marker in found for ref in marker.split(";")}


def _cascade(files: dict[str, dict[str, Any]], agent: str, dropped: set[str]) -> tuple[set[str], int, int]:
    """Remove references to dropped items; drop items left without what they were about.

    Returns the files changed, how many items were dropped and how many only lost a reference
    (a relationship supported by three claims keeps the other two).
    """
    gone = dropped | {f"{agent}:{d}" for d in dropped}
    changed: set[str] = set()
    removed = trimmed = 0
    for file, doc in files.items():
        for key, items in doc.items():
            kept = []
            for item in items if isinstance(items, list) else ():
                if isinstance(item, dict):
                    lists = [n for n in ("claim_ids", "entity_ids") if set(item.get(n) or ()) & gone]
                    for name in lists:
                        item[name] = [x for x in item[name] if x not in gone]
                    need = 2 if key == "contradictions" else 1
                    if {item.get("claim_id"), item.get("subject"), item.get("object")} & gone or (
                            "claim_ids" in lists and len(item["claim_ids"]) < need):
                        removed += 1
                        changed.add(file)
                        continue
                    trimmed += bool(lists)
                    changed.update([file] if lists else [])
                kept.append(item)
            if isinstance(items, list):
                items[:] = kept
        outline = doc.get("report_outline")
        for section in outline.get("sections", []) if isinstance(outline, dict) else []:
            kept = [p for p in section["paragraphs"] if not _markers(p["text"]) & gone]
            if len(kept) < len(section["paragraphs"]):
                removed += len(section["paragraphs"]) - len(kept)
                changed.add(file)
            section["paragraphs"] = kept
    return changed, removed, trimmed


def apply_retry(context: AgentContext, produce: Callable[[], object], fixers: dict[str, ItemFixer]) -> str:
    """Act on the retry instructions; returns the completion note saying what changed.

    ``fixers`` may correct an item of a collection (e.g. re-quote a claim's evidence) or return
    None to drop it. When the rejected files are gone, or a problem names no item, the artifacts
    are regenerated first (deterministically, so the pointers still name the same items).
    """
    targets = retry_targets(context.task.retry_instructions or {})
    files = _previous_files(context)
    notes: list[str] = []
    unmapped = sorted(name for name, found in targets.items()
                      if name not in files or any(not _split(parts) for parts, _ in found))
    if not files or unmapped:
        produce()
        files = _previous_files(context)
        notes.append("regenerated the artifacts" + (f" (problems in {', '.join(unmapped)} name no item)"
                                                    if unmapped else ""))
    dropped: set[str] = set()
    changed = {name for name in targets if name in files}
    for name in sorted(changed):
        grouped: dict[tuple[str, ...], dict[int, list[Target]]] = {}
        for parts, message in targets[name]:
            where = _split(parts)
            if where:
                grouped.setdefault(where[0], {}).setdefault(where[1], []).append((where[2], message))
        for path, by_index in grouped.items():
            items: Any = files[name]
            for part in path:
                items = items[int(part)] if isinstance(items, list) else items.get(part, [])
            valid = [i for i in by_index if isinstance(items, list) and i < len(items)]
            for index in sorted(valid, reverse=True):
                old = items[index]
                fixed = _fix_item(old, by_index[index], fixers.get(path[-1]))
                label = f"{name} /{'/'.join(path)}/{index}" + (f" ({old['id']})" if "id" in old else "")
                if fixed is None:
                    del items[index]
                    dropped.update([old["id"]] if isinstance(old.get("id"), str) else [])
                    notes.append(f"dropped {label}")
                else:
                    items[index] = fixed
                    notes.append(f"corrected {label}")
    touched, removed, trimmed = _cascade(files, context.task.agent, dropped)
    if removed or trimmed:
        notes.append(f"removed {removed} item(s) about dropped items and dropped ids from {trimmed} other(s)")
    changed |= touched
    for name, doc in sorted(files.items()):
        if name in changed or not (context.folder / name).exists():
            context.write_artifact(name, doc)
    return "Retry: " + ("; ".join(notes) if notes else "nothing named could be changed") + "."


def complete_retry(
    context: AgentContext, produce: Callable[[], object], summary: str, fixers: dict[str, ItemFixer] | None = None
) -> bool:
    """On a retry: act on the instructions (:func:`apply_retry`), complete with ``summary`` and
    :func:`apply_retry`'s note, and return True. On a first attempt: do nothing, return False."""
    if not context.task.retry_instructions:
        return False
    context.complete("completed", summary, apply_retry(context, produce, fixers or {}))
    return True
