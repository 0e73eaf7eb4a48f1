"""Judging a batch with one SHACL pass gives exactly what judging its agents one by one gives.

Each seed stages a session (some agents committed first), then a batch of locks: new agents and
resubmissions (retries), claims citing committed agents and agents of the same batch (before and
after them in the order), sources shared through DOI, URL or stored text, SHACL violations, SHACL
warnings, unresolved references, bad JSON and an internal error. The session is copied; one copy is
processed as the processor does it (commit/batch_judge.py), the other one agent after the other
(the old loop), with the clock stopped. Outcomes, problems, events, ledger, record order, views,
session.json and retry instructions must be byte-identical, and both SHACL paths must have run.
"""

from __future__ import annotations

import datetime as dt
import random
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest

from orchestrator.commit import batch_judge, evaluation, readahead
from orchestrator.commit import processor as processor_module
from orchestrator.commit.processor import Processor
from orchestrator.commit.views import flush_views
from orchestrator.memory import MEMORY_DIR_ENV
from orchestrator.model import clock
from orchestrator.model.layout import SessionPaths
from orchestrator.rdf.state import RdfState
from tests.conftest import sample_claim, sample_source, store_text, write_artifacts
from tests.helpers.judging import count_adoptions, ledger_bytes
from tests.test_incremental_equivalence import TEXTS, _submission

FIXED = dt.datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=dt.UTC)


def _one_by_one(proc: Processor, names: list[str], judge: Any) -> list[Any]:
    """The loop the processor ran before batch judging."""
    staged = []
    for name in names:
        proc.events.emit("lock.seen", f"lock {name}.kg.lock seen", agent=name)
        item = judge(name, False)
        if item is not None:
            staged.append(item)
    return staged


def _batch_submission(rng: random.Random, agent: str, cited: dict[str, list[str]], texts: list[str]) -> Any:
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
    batch = sorted(rng.sample(first, 3) + [f"new-{i:02d}" for i in range(size)])
    cited = dict(committed)
    for agent in batch:  # cite committed agents, and agents of this batch judged before or after
        cited.setdefault(agent, ["S0"])
    for agent in batch:
        shutil.rmtree(session.agent_artifacts(agent), ignore_errors=True)
        others = {a: ids for a, ids in cited.items() if rng.random() < 0.35 or a in committed}
        if agent.startswith("new-") and rng.random() < 0.35:
            others = {}  # cites nobody: a helper may judge it whole (commit/speculation.py)
        write_artifacts(session, agent, _batch_submission(rng, agent, others, texts), lock=False)
    for agent in batch:
        session.lock(agent).touch()
    return batch


def _run(root: Path, *, batched: bool, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    paths = SessionPaths(root)
    with monkeypatch.context() as patch:
        patch.setenv(MEMORY_DIR_ENV, str(root.parent.parent / ("memory-batched" if batched else "memory-one-by-one")))
        if not batched:
            patch.setattr(processor_module, "judge_batch", _one_by_one)
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
    """Stage one random batch, judge two copies both ways, compare; what the batch contained."""
    rng = random.Random(seed)
    monkeypatch.setattr(batch_judge, "FIRST_WINDOW", rng.choice([2, 4, 32]))
    monkeypatch.setattr(readahead, "MIN_BATCH", 1 if seed % 2 else 10_000)  # the helper reads, or not
    monkeypatch.setattr(readahead, "CHUNK", rng.choice([1, 5]))
    monkeypatch.setattr(readahead, "WAIT", 60.0)  # use every read of the helper (it may start late)
    from orchestrator.session.record import create_session

    monkeypatch.setenv(MEMORY_DIR_ENV, str(root / "memory"))  # the repair memory: each run gets a copy
    session = create_session(root / "batched", "How do agents merge knowledge?", "test-mission")
    batch = _stage(session, rng, 24)
    copy = root / "one-by-one" / session.root.name
    shutil.copytree(session.root, copy)
    for run in ("memory-batched", "memory-one-by-one"):
        if (root / "memory").exists():
            shutil.copytree(root / "memory", root / run)
    passes: list[int] = []
    validate_many = RdfState.validate_many

    def counting(self: RdfState, focus: Any) -> Any:
        passes.append(len(focus))
        return validate_many(self, focus)

    taken: list[str] = []
    take = readahead.ReadAhead.take
    def counting_take(self: readahead.ReadAhead, name: str) -> Any:
        found = take(self, name)
        if found is not None:
            taken.append(name)
        return found

    with monkeypatch.context() as patch:
        patch.setattr(RdfState, "validate_many", counting)
        patch.setattr(readahead.ReadAhead, "take", counting_take)
        adopted = count_adoptions(patch)
        got = _run(session.root, batched=True, monkeypatch=monkeypatch)
    assert bool(taken) == bool(seed % 2)  # the helper's reads were used when it ran
    want = _run(copy, batched=False, monkeypatch=monkeypatch)
    assert got["outcomes"] == want["outcomes"], seed
    for key in ("events", "ledger", "order", "json", "trig", "session", "retries", "errors"):
        assert got[key] == want[key], (seed, key)
    assert max(passes) >= 2 and sum(passes) < len(got["outcomes"]), passes  # agents shared SHACL passes
    problems = [(status, p) for _, status, _, _, ps in got["outcomes"] for p in ps]
    texts = {a: b"".join(f.read_bytes() for f in sorted(session.agent_artifacts(a).glob("*.json")))
             for a in batch if session.agent_artifacts(a).is_dir()}
    return {
        "merged": sum(status == "merged" for _, status, *_ in got["outcomes"]),
        "shacl_violation": sum(s == "rejected" and p["rule"].startswith("shacl.") for s, p in problems),
        "shacl_warning": sum(s == "merged" and p["rule"].startswith("shacl.") for s, p in problems),
        "reference": sum(p["rule"].startswith("reference.") for _, p in problems),
        "internal": sum(p["rule"] == "internal.error" for _, p in problems),
        "retry": sum(attempt is not None and attempt > 1 for _, _, attempt, _, _ in got["outcomes"]),
        "cites_batch": sum(any(f'"{b}:'.encode() in t for b in batch if b != a) for a, t in texts.items()),
        "speculated": len(adopted),
    }


def test_batch_judging_matches_one_by_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(clock, "utc_now", lambda: FIXED)
    original = evaluation.Evaluation._check_citations

    def citations(self: Any, agent: str, *args: Any) -> Any:
        if agent == "new-03":
            raise RuntimeError("boom")  # an internal error while judging: that agent's rejection
        return original(self, agent, *args)

    monkeypatch.setattr(evaluation.Evaluation, "_check_citations", citations)
    seen: dict[str, int] = {}
    for seed in range(6):
        for key, count in _judge_seed(tmp_path / str(seed), seed, monkeypatch).items():
            seen[key] = seen.get(key, 0) + count
    assert all(seen.values()), seen  # every path ran


def test_a_later_agent_of_the_batch_does_not_change_an_earlier_ones_verdict(session: SessionPaths) -> None:
    """Judged one by one, 'aaa' names a sub-question that only 'bbb', later in the batch, provides."""
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


def test_the_helper_reads_a_big_batch_and_a_folder_changed_since_is_read_again(
        session: SessionPaths, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(readahead, "MIN_BATCH", 2)
    names = [f"agent-{i}" for i in range(6)]
    for name in names:
        write_artifacts(session, name, {"sources.json": {"sources": [sample_source("S0", url="https://x.org/a")]}},
                        lock=False)
    proc = Processor(session)
    try:
        proc.readahead.start(names)
        helper = {}
        for name in names:
            future = proc.readahead._pending[name]
            helper[name] = future.result(timeout=60)[name]
        # one agent rewrites its files after the helper read them (a new title, another size)
        write_artifacts(session, names[2], {"sources.json": {"sources": [
            sample_source("S0", url="https://x.org/a", title="A title that is longer than before")]}}, lock=False)
        taken = {name: proc.readahead.take(name) for name in names}
        assert taken[names[2]] is None  # stale: the judging reads the folder itself
        assert all(taken[n] == helper[n] for n in names if n != names[2])
        assert proc.readahead.take(names[0]) is None  # each read is handed out once
        for name in names:
            session.lock(name).touch()
        proc.readahead.start(names)
        outcomes = {o.agent: o for o in proc.process_pending()}
        assert {o.status for o in outcomes.values()} == {"merged"}
        title = proc.state.records[names[2]]["contribution"]["items"]["sources"][0]["title"]
        assert title == "A title that is longer than before"
    finally:
        proc.close()
    assert proc.readahead._pool is None


def test_a_folder_that_changes_after_it_was_read_is_deferred_as_one_by_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """'agent-2' writes one more file while its batch is judged: deferred, the others merged, both ways."""
    from orchestrator.session.record import create_session

    monkeypatch.setattr(clock, "utc_now", lambda: FIXED)
    monkeypatch.setenv(MEMORY_DIR_ENV, str(tmp_path / "memory"))
    session = create_session(tmp_path / "batched", "How do agents merge knowledge?", "test-mission")
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
    got = _run(session.root, batched=True, monkeypatch=monkeypatch)
    want = _run(copy, batched=False, monkeypatch=monkeypatch)
    assert [(a, status) for a, status, *_ in got["outcomes"]] == [
        (n, "deferred" if n == "agent-2" else "merged") for n in names]
    assert got == want
