"""Answering backends for ``cconductor ask``: both write prose with ``[@node-id]`` markers from the
retrieved context only; the orchestrator validates every marker afterwards."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from orchestrator.answers.data import Composer


def composer_for(backend: str, session_root: Path, **options: Any) -> Composer:
    """The backend named ``offline`` or ``anthropic`` (the CLI has resolved ``auto`` already)."""
    if backend == "anthropic":
        from agents.ask.claude import ClaudeComposer

        return ClaudeComposer(session_root, **options)
    from agents.ask.offline import OfflineComposer

    return OfflineComposer(session_root)
