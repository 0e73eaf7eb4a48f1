"""The session's ``answers/`` folder: every question asked, kept as the audit trail.

One JSON file per question (the grounded answer document, with every citation, its parts, its
trace and the draft as the backend wrote it), named ``<UTC time>-<slug>.json`` so a listing reads
in the order the questions were asked. Written atomically; never overwritten.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from orchestrator.model.layout import SessionPaths
from orchestrator.session.atomic import atomic_write_json

_SLUG = re.compile(r"[^a-z0-9]+")


def answers_dir(paths: SessionPaths) -> Path:
    return paths.root / "answers"


def save_answer(paths: SessionPaths, document: dict[str, Any]) -> Path:
    """Write ``document`` as a new file in ``answers/`` and return its path."""
    folder = answers_dir(paths)
    folder.mkdir(exist_ok=True)
    stamp = re.sub(r"[^0-9TZ]", "", str(document.get("asked_at", "")))
    slug = _SLUG.sub("-", str(document.get("question", "")).lower()).strip("-")[:48] or "question"
    target = folder / f"{stamp}-{slug}.json"
    serial = 2
    while target.exists():
        target = folder / f"{stamp}-{slug}-{serial}.json"
        serial += 1
    atomic_write_json(target, document)
    return target


def list_answers(paths: SessionPaths) -> list[Path]:
    folder = answers_dir(paths)
    return sorted(folder.glob("*.json")) if folder.is_dir() else []
