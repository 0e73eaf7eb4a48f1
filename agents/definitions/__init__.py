"""The built-in agent definitions (JSON files in this folder) and their prompts (``agents/prompts/``).

The loader is ``orchestrator.run.definitions``; this package only says where its files are, and
``agents.plugin`` registers them with the orchestrator.
"""

from __future__ import annotations

from pathlib import Path

BUILTIN_DIR = Path(__file__).resolve().parent
PROMPTS_DIR = BUILTIN_DIR.parent / "prompts"
