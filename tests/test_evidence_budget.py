"""Evidence verdicts never depend on machine load: the work of a submission's checks is counted, not timed.

A hostile submission (long altered snippets, cited at the wrong page or at none, against a large text)
reaches the work limit. Judged on an idle core and on a core saturated by busy processes, it gets the
same verdict byte for byte: the same outcome, the same verifications in the ledger, the same retry
instructions. Where the limit stopped a search, the verification and the retry instructions say that the
search was cut short, never that no similar passage exists.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import random
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from orchestrator.commit.processor import Processor
from orchestrator.graph import evidence, evidence_budget
from orchestrator.memory import MEMORY_DIR_ENV
from orchestrator.model import clock
from orchestrator.session.record import create_session
from tests.conftest import sample_source, store_text, write_artifacts

FIXED = dt.datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=dt.UTC)
#: A smaller limit than the default, so the test reaches it in a fraction of a second.
LIMIT = 400_000_000


def _prose(rng: random.Random, chars: int) -> str:
    words = ["".join(rng.choice("abcdefghijklmnop") for _ in range(rng.randint(2, 9))) for _ in range(400)]
    out: list[str] = []
    total = 0
    while total < chars:
        out.append(rng.choice(words))
        total += len(out[-1]) + 1
    return " ".join(out)


def _hostile(rng: random.Random, sha: str, pages: list[str]) -> dict[str, Any]:
    """Medium claims with long snippets, altered so that no exact match exists, cited at the wrong page or
    at none; then one high-priority claim whose (altered) snippet can only be found by an approximate search."""
    claims = []
    for i in range(12):
        passage = pages[i % len(pages)][100:1900].split(" ", 1)[1].rsplit(" ", 1)[0]
        altered = passage.replace(" ", "  ", 3).replace(" ", ", ", 1)
        locator = {"page": (i + 3) % len(pages) + 1} if i % 2 else {}
        claims.append({"id": f"C{i}", "statement": f"Claim {i}.", "confidence": 0.5, "priority": "medium",
                       "evidence": [{"source_id": "S1", "snippet": altered, "locator": locator}]})
    quote = pages[1][200:420].split(" ", 1)[1].rsplit(" ", 1)[0]
    claims.append({"id": "CH", "statement": "The key claim.", "confidence": 0.9, "priority": "high",
                   "evidence": [{"source_id": "S1", "snippet": quote.replace(" ", ", ", 1), "locator": {"page": 2}}]})
    return {"sources.json": {"sources": [sample_source("S1", content_sha256=sha)]},
            "claims.json": {"claims": claims}}


def _judge(root: Path) -> dict[str, Any]:
    rng = random.Random(2026)
    session = create_session(root, "Does load change a verdict?", "test")
    pages = [_prose(rng, 40_000) for _ in range(12)]
    sha = store_text(session, "\f".join(pages))
    write_artifacts(session, "hostile", _hostile(rng, sha, pages))
    processor = Processor(session)
    try:
        [outcome] = processor.process_pending()
    finally:
        processor.close()
    retry = session.retry_instructions("hostile")
    return {
        "outcome": (outcome.status, outcome.attempt, [p.to_dict() for p in outcome.problems]),
        "retry": retry.read_bytes() if retry.exists() else None,
        "events": [(e["type"], e["data"].get("problems"))
                   for e in map(json.loads, session.events.read_text().splitlines())
                   if e["type"] in ("validation.completed", "shacl.completed", "merge.rejected")],
    }


@contextmanager
def _saturated() -> Iterator[None]:
    """Every core busy with twice as many spinning processes."""
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                for _ in range(2 * (os.cpu_count() or 1))]
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
        for spinner in spinners:
            spinner.wait()


def test_the_same_hostile_submission_gets_the_same_verdict_idle_and_saturated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(clock, "utc_now", lambda: FIXED)
    monkeypatch.setattr(evidence_budget, "DEFAULT_BUDGET", LIMIT)
    monkeypatch.setenv(MEMORY_DIR_ENV, str(tmp_path / "memory-idle"))
    idle = _judge(tmp_path / "idle")
    monkeypatch.setenv(MEMORY_DIR_ENV, str(tmp_path / "memory-busy"))
    with _saturated():
        busy = _judge(tmp_path / "busy")
    assert busy == idle
    assert idle["outcome"][0] == "rejected"
    retry = json.loads(idle["retry"])
    said = json.dumps(retry)
    assert "search was cut short" in said and "no similar passage was found" not in said
    assert "cite fewer or shorter passages" in said


def test_a_search_cut_short_is_marked_and_a_complete_one_is_not() -> None:
    rng = random.Random(7)
    pages = [_prose(rng, 40_000) for _ in range(12)]
    text = "\f".join(pages)
    snippet = pages[4][500:2000].split(" ", 1)[1].rsplit(" ", 1)[0].replace(" ", ", ", 1)
    complete = evidence.verify_snippet(snippet, text, None, budget=evidence_budget.Budget(10**12))
    assert complete.verified and not complete.cut_short and "cut_short" not in complete.to_dict()
    cut = evidence.verify_snippet(snippet, text, None, budget=evidence_budget.Budget(2_000_000))
    assert not cut.verified and cut.cut_short and "cut short" in cut.reason
    assert "no similar passage" not in cut.reason


def test_a_budget_charges_a_page_in_normal_form_once_per_submission_whatever_the_cache_holds() -> None:
    rng = random.Random(3)
    text = "\f".join(_prose(rng, 5_000) for _ in range(3))
    snippet = "words that the text never holds at all anywhere"
    first, second = evidence_budget.Budget(), evidence_budget.Budget()
    evidence.verify_snippet(snippet, text, None, budget=first)
    spent_once = first.spent
    evidence.verify_snippet(snippet, text, None, budget=first)  # the same pages: no second normalisation charge
    evidence.verify_snippet(snippet, text, None, budget=second)  # the process cache is warm now: same charge
    assert second.spent == spent_once
    normalising = evidence_budget.NORMALIZE_COST * len(text.replace("\f", ""))
    assert first.spent - spent_once == spent_once - normalising
