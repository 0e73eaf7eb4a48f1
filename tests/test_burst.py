"""A burst judged in windows with one SHACL pass each gives exactly what judging its agents one by one gives.

Each seed stages a session (some agents committed first), then a sweep of locks: new agents and
resubmissions (retries), claims citing committed agents and agents of the same sweep (before and
after them in the order), sources shared through DOI, URL or stored text, SHACL violations, SHACL
warnings, unresolved references, bad JSON and an internal error. The session is copied; one copy is
processed as a burst (commit/burst/), the other one agent after the other (the plain path), with
the clock stopped. Outcomes, problems, events, ledger, record order, views, session.json and retry
instructions must be byte-identical, and both SHACL paths must have run.
"""

from __future__ import annotations

import datetime as dt
import random
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest

from orchestrator.commit import checks
from orchestrator.commit import processor as processor_module
from orchestrator.commit.burst import windows
from orchestrator.commit.processor import Processor
from orchestrator.commit.views import flush_views
from orchestrator.memory import MEMORY_DIR_ENV
from orchestrator.model import clock
from orchestrator.model.layout import SessionPaths
from orchestrator.rdf.state import RdfState
from orchestrator.session.ledger import Ledger
from tests.conftest import sample_claim, sample_source, store_text, write_artifacts
from tests.test_incremental_equivalence import TEXTS, _submission

FIXED = dt.datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=dt.UTC)


def ledger_bytes(paths: SessionPaths) -> bytes:
    """The ledger, but for the file key of the claim each decision judged (which file, on this disk: two
    copies of a session differ there and nowhere else)."""
    ledger = Ledger(paths.store_db)
    try:
        entries = ledger.ledger()
    finally:
        ledger.close()
    for entry in entries:
        if isinstance(entry.get("detail"), dict) and entry["detail"].pop("claim", None) is not None:
            entry["detail"]["claim"] = "<file key>"
    return orjson.dumps(entries, default=str)


def _sweep_submission(rng: random.Random, agent: str, cited: dict[str, list[str]], texts: list[str]) -> Any:
    files = _submission(rng, agent, cited, texts)
    if rng.random() < 0.4:  # a plan; claims naming sub-questions of their own, of others or of nobody
        files["plan.json"] = {"query": "How?", "sub_questions": [{"id": "Q1", "question": "Why?", "priority": "high"}]}
    for claim in files["claims.json"]["claims"]:
        if rng.random() < 0.4:
            claim["sub_question_id"] = rng.choice(["Q1", "Q1", "Q2", *(f"{a}:Q1" for a in cited if a != agent)])
    roll = rng.random()
    if roll < 0.1:  # a source nobody can locate again: a SHACL warning, the merge goes on
        for key in ("url", "doi", "content_sha256"):
            files["sources.json"]["sources"][0].pop(key, None)
    elif roll < 0.14:
        files["claims.json"] = b"{not json"
    return files


def _stage(session: SessionPaths, rng: random.Random, size: int) -> list[str]:
    texts = [store_text(session, text) for text in TEXTS]
    first = [f"old-{i}" for i in range(6)]
    for agent in first:
        write_artifacts(session, agent, _submission(rng, agent, {}, texts))
    proc = Processor(session)
    try:
        proc.process_pending()
        committed = {a: [s["local_id"] for s in r["contribution"]["items"]["sources"]]
                     for a, r in proc.state.records.items()}
    finally:
        proc.close()
    sweep = sorted(rng.sample(first, 3) + [f"new-{i:02d}" for i in range(size)])
    cited = dict(committed)
    for agent in sweep:  # cite committed agents, and agents of this sweep judged before or after
        cited.setdefault(agent, ["S0"])
    for agent in sweep:
        shutil.rmtree(session.agent_artifacts(agent), ignore_errors=True)
        others = {a: ids for a, ids in cited.items() if rng.random() < 0.35 or a in committed}
        if agent.startswith("new-") and rng.random() < 0.35:
            others = {}  # cites nobody
        write_artifacts(session, agent, _sweep_submission(rng, agent, others, texts), lock=False)
    for agent in sweep:
        session.lock(agent).touch()
    return sweep


def _run(root: Path, *, burst_on: bool, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    paths = SessionPaths(root)
    with monkeypatch.context() as patch:
        patch.setenv(MEMORY_DIR_ENV, str(root.parent.parent / ("memory-burst_on" if burst_on else "memory-one-by-one")))
        patch.setattr(processor_module, "BURST_MIN", 1 if burst_on else 10**9)
        proc = Processor(paths)
        try:
            outcomes = proc.process_pending()
            order = list(proc.state.records)
            flush_views(proc, force=True)
        finally:
            proc.close()
    retries = {p.name: p.read_bytes() for p in sorted(root.rglob("*retry*")) if p.is_file()}
    return {
        "outcomes": [(o.agent, o.status, o.attempt, o.seq, [p.to_dict() for p in o.problems]) for o in outcomes],
        "events": paths.events.read_bytes(),
        "ledger": ledger_bytes(paths),
        "order": order,
        "json": paths.kg_json.read_bytes(),
        "trig": paths.kg_trig.read_bytes(),
        "session": (root / "session.json").read_bytes(),
        "retries": retries,
        "errors": sorted(p.name for p in root.glob("*.kg.lock.error")),
    }


def _judge_seed(root: Path, seed: int, monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Stage one random sweep, judge two copies both ways, compare; what the sweep contained."""
    rng = random.Random(seed)
    monkeypatch.setattr(windows, "FIRST_WINDOW", rng.choice([2, 4, 32]))
    from orchestrator.session.record import create_session

    monkeypatch.setenv(MEMORY_DIR_ENV, str(root / "memory"))  # the repair memory: each run gets a copy
    session = create_session(root / "burst_on", "How do agents merge knowledge?", "test-mission")
    sweep = _stage(session, rng, 24)
    copy = root / "one-by-one" / session.root.name
    shutil.copytree(session.root, copy)
    for run in ("memory-burst_on", "memory-one-by-one"):
        if (root / "memory").exists():
            shutil.copytree(root / "memory", root / run)
    passes: list[int] = []
    validate_many = RdfState.validate_many

    def counting(self: RdfState, focus: Any) -> Any:
        passes.append(len(focus))
        return validate_many(self, focus)

    with monkeypatch.context() as patch:
        patch.setattr(RdfState, "validate_many", counting)
        got = _run(session.root, burst_on=True, monkeypatch=monkeypatch)
    want = _run(copy, burst_on=False, monkeypatch=monkeypatch)
    assert got["outcomes"] == want["outcomes"], seed
    for key in ("events", "ledger", "order", "json", "trig", "session", "retries", "errors"):
        assert got[key] == want[key], (seed, key)
    assert max(passes) >= 2 and sum(passes) < len(got["outcomes"]), passes  # agents shared SHACL passes
    problems = [(status, p) for _, status, _, _, ps in got["outcomes"] for p in ps]
    texts = {a: b"".join(f.read_bytes() for f in sorted(session.agent_artifacts(a).glob("*.json")))
             for a in sweep if session.agent_artifacts(a).is_dir()}
    return {
        "merged": sum(status == "merged" for _, status, *_ in got["outcomes"]),
        "shacl_violation": sum(s == "rejected" and p["rule"].startswith("shacl.") for s, p in problems),
        "shacl_warning": sum(s == "merged" and p["rule"].startswith("shacl.") for s, p in problems),
        "reference": sum(p["rule"].startswith("reference.") for _, p in problems),
        "internal": sum(p["rule"] == "internal.error" for _, p in problems),
        "retry": sum(attempt is not None and attempt > 1 for _, _, attempt, _, _ in got["outcomes"]),
        "cites_sweep": sum(any(f'"{b}:'.encode() in t for b in sweep if b != a) for a, t in texts.items()),
    }


def test_a_burst_is_judged_as_one_by_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(clock, "utc_now", lambda: FIXED)
    original = checks.bind_evidence

    def bind(contribution: Any, *args: Any) -> Any:
        if contribution["agent"] == "new-03":
            raise RuntimeError("boom")  # an internal error while judging: that agent's rejection
        return original(contribution, *args)

    monkeypatch.setattr(checks, "bind_evidence", bind)
    seen: dict[str, int] = {}
    for seed in range(6):
        for key, count in _judge_seed(tmp_path / str(seed), seed, monkeypatch).items():
            seen[key] = seen.get(key, 0) + count
    assert all(seen.values()), seen  # every path ran


def test_a_later_agent_of_the_burst_does_not_change_an_earlier_ones_verdict(
        session: SessionPaths, monkeypatch: pytest.MonkeyPatch) -> None:
    """Judged one by one, 'aaa' names a sub-question that only 'bbb', later in the sweep, provides."""
    monkeypatch.setattr(processor_module, "BURST_MIN", 1)
    claim = sample_claim("C0", source_id="S0")
    claim["sub_question_id"] = "bbb:Q1"
    write_artifacts(session, "aaa", {"sources.json": {"sources": [sample_source("S0", url="https://x.org/a")]},
                                     "claims.json": {"claims": [claim]}}, lock=False)
    write_artifacts(session, "bbb", {"plan.json": {"query": "How?", "sub_questions": [
        {"id": "Q1", "question": "Why?", "priority": "high"}]}}, lock=False)
    session.lock("aaa").touch()
    session.lock("bbb").touch()
    proc = Processor(session)
    try:
        outcomes = {o.agent: o for o in proc.process_pending()}
    finally:
        proc.close()
    assert outcomes["aaa"].status == outcomes["bbb"].status == "merged"
    assert "shacl.ClassConstraintComponent" in {p.rule for p in outcomes["aaa"].problems}


def test_a_folder_that_changes_after_it_was_read_is_deferred_as_one_by_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """'agent-2' writes one more file while its burst is judged: deferred, the others merged, both ways."""
    from orchestrator.session.record import create_session

    monkeypatch.setattr(clock, "utc_now", lambda: FIXED)
    monkeypatch.setenv(MEMORY_DIR_ENV, str(tmp_path / "memory"))
    session = create_session(tmp_path / "burst_on", "How do agents merge knowledge?", "test-mission")
    names = [f"agent-{i}" for i in range(5)]
    for name in names:
        write_artifacts(session, name, {"sources.json": {"sources": [sample_source("S0", url="https://x.org/a")]}})
    copy = tmp_path / "one-by-one" / session.root.name
    shutil.copytree(session.root, copy)
    late = {"sources": [sample_source("S1", url="https://x.org/b")]}

    def write_late(root: Path) -> None:
        target = SessionPaths(root).agent_artifacts("agent-2") / "sources-late.json"
        if not target.exists():
            target.write_text(orjson.dumps(late).decode())

    validate_agent, validate_many = RdfState.validate_agent, RdfState.validate_many

    def one(self: RdfState, agent: str) -> Any:
        if agent == "agent-2":
            write_late(copy)
        return validate_agent(self, agent)

    def many(self: RdfState, focus: Any) -> Any:
        if "agent-2" in focus:
            write_late(session.root)
        return validate_many(self, focus)

    monkeypatch.setattr(RdfState, "validate_agent", one)
    monkeypatch.setattr(RdfState, "validate_many", many)
    got = _run(session.root, burst_on=True, monkeypatch=monkeypatch)
    want = _run(copy, burst_on=False, monkeypatch=monkeypatch)
    assert [(a, status) for a, status, *_ in got["outcomes"]] == [
        (n, "deferred" if n == "agent-2" else "merged") for n in names]
    assert got == want
