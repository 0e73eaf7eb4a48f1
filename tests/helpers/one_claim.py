"""A session with one agent, ``trialist``, citing one stored page with one claim: for the merge-level tests of
what a claim's quote and statement must be."""

from __future__ import annotations

from pathlib import Path

from orchestrator.model.layout import SessionPaths
from orchestrator.session.record import create_session
from tests.conftest import merge_pending, store_text, write_artifacts

AGENT = "trialist"


def submit_one_claim(root: Path, page: str, statement: str, snippet: str, priority: str) -> tuple[SessionPaths, str]:
    """The session, and what judging the claim (quoting ``snippet`` from page 2, whose text is ``page``) made of it."""
    session = create_session(root / "sessions", "Does the drug reduce mortality?", "m")
    sha = store_text(session, f"Cover.\f{page}")
    write_artifacts(session, AGENT, {
        "sources.json": {"sources": [{"id": "S1", "type": "report", "title": "Trial", "content_sha256": sha}]},
        "claims.json": {"claims": [{
            "id": "C1", "confidence": 0.8, "priority": priority, "statement": statement,
            "evidence": [{"source_id": "S1", "locator": {"page": 2}, "snippet": snippet}]}]}})
    return session, merge_pending(session)[AGENT]
