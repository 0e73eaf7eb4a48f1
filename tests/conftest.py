"""Shared fixtures. Every test runs hermetically: temp HOME and config folders, no API key."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from orchestrator.commit.processor import Processor
from orchestrator.commit.views import flush_views
from orchestrator.model.layout import SessionPaths
from orchestrator.session.record import create_session

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def hermetic_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    for var in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
        monkeypatch.setenv(var, str(home / var.lower()))
    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("CCONDUCTOR_SESSIONS_DIR", str(home / "research-sessions"))


@pytest.fixture
def session(tmp_path: Path) -> SessionPaths:
    return create_session(tmp_path / "sessions", "How do agents merge knowledge?", "test-mission")


Dropper = Callable[..., Path]


def write_artifacts(paths: SessionPaths, agent: str, files: dict[str, Any], *, lock: bool = True) -> Path:
    """Write an agent's artifact files (dicts become JSON, bytes/str are written as-is), then the lock."""
    folder = paths.agent_artifacts(agent)
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        target = folder / name
        if isinstance(content, bytes):
            target.write_bytes(content)
        elif isinstance(content, str):
            target.write_text(content, encoding="utf-8")
        else:
            target.write_text(json.dumps(content, indent=1), encoding="utf-8")
    if lock:
        paths.lock(agent).touch()
    return folder


@pytest.fixture
def drop(session: SessionPaths) -> Dropper:
    return lambda agent, files, **kw: write_artifacts(session, agent, files, **kw)


def store_text(paths: SessionPaths, text: str) -> str:
    """Put a source text into the content-addressed store; return its sha256."""
    import hashlib

    data = text.encode("utf-8")
    sha = hashlib.sha256(data).hexdigest()
    paths.sources.mkdir(exist_ok=True)
    paths.source_text(sha).write_bytes(data)
    return sha


def merge_pending(paths: SessionPaths, **options: Any) -> dict[str, str]:
    """Process every pending lock with a fresh ``Processor(paths, **options)``, write the views, close it.

    Returns each processed agent's outcome status (``merged``, ``rejected``, ...).
    """
    processor = Processor(paths, **options)
    try:
        outcomes = processor.process_pending()
        flush_views(processor)
        return {o.agent: o.status for o in outcomes}
    finally:
        processor.close()


def cconductor() -> list[str]:
    """The installed entry point (next to this Python), else the module."""
    script = Path(sys.executable).parent / "cconductor"
    return [str(script)] if script.exists() else [sys.executable, "-m", "orchestrator.cli"]


def sample_source(sid: str = "S1", **extra: Any) -> dict[str, Any]:
    return {
        "id": sid,
        "type": "journal-article",
        "title": f"A study {sid}",
        "authors": ["Ada Lovelace"],
        "year": 2020,
        "peer_reviewed": True,
        **extra,
    }


def sample_claim(
    cid: str = "C1", source_id: str = "S1", snippet: str = "merging is hard", **extra: Any
) -> dict[str, Any]:
    return {
        "id": cid,
        "statement": f"Claim {cid}: merging is hard.",
        "confidence": 0.8,
        "priority": "medium",
        "evidence": [{"source_id": source_id, "snippet": snippet, "locator": {"page": 1}}],
        **extra,
    }


@pytest.fixture
def sleep_corpus(tmp_path: Path) -> Path:
    """A one-document input folder the offline agents can research (batch and executor tests)."""
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "sleep.md").write_text(
        "# Sleep and memory\n\nSleep deprivation reduces working memory performance in adults, according to "
        "several controlled studies of young volunteers.\n\nEight hours of sleep improved recall by a large "
        "margin compared with four hours of sleep in the same participants.\n")
    return folder


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    """A one-line input folder for agent jobs that only need an input to name."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "doc.md").write_text("Sleep improves recall in adults.\n")
    return folder


@pytest.fixture(scope="session")
def viewed_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One offline run over two real papers, shared by the viewer's API and browser tests (read-only)."""
    from tests.helpers.viewer import offline_run

    return offline_run(tmp_path_factory.mktemp("viewed"))
