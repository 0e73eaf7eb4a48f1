"""The whole hostile-input corpus released at once, beside a valid bystander, under `process` and under `watch`.

Every case of tests/test_malformed_corpus.py plus the cases below (what an agent controls that is
not JSON: stored source texts that are links, FIFOs, folders or too large; snippets that are too
short or whose numbers, units or negations differ from the source; integers beyond 64 bits;
over-long names; ambiguous references) are dropped into one session together with a valid new
agent. One run of ``cconductor process`` (or one ``cconductor watch``) must reject each bad agent
with exactly the expected problem, merge the bystander in the same batch, and leave the good
agents' namespaces exactly as they were.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from orchestrator.contract.schemas import SchemaRegistry
from orchestrator.contract.sourcetexts import MAX_SOURCE_TEXT_BYTES
from orchestrator.model.layout import RESERVED_KEYS, SessionPaths
from tests.conftest import cconductor
from tests.helpers.agent_writer import write_agent
from tests.helpers.watching import wait_for
from tests.test_malformed_corpus import (
    CASES,
    SKY_SHA,
    SKY_TEXT,
    Case,
    check_rejection,
    current_records,
    good_files,
    namespaces,
    write_case_files,
)

pytestmark = pytest.mark.slow  # a stress or long end-to-end case: `pytest -m slow` (CI runs it)

TRIAL = ("Page one.\fThe trial enrolled 4,000 patients and mortality fell by 25 percent. "
         "The drug did not reduce hospital admissions.")
TRIAL_SHA = hashlib.sha256(TRIAL.encode()).hexdigest()
SOURCE_PTR = "/sources/0/content_sha256"


def _sha(label: str) -> str:
    return hashlib.sha256(label.encode()).hexdigest()


def _source(sha: str, file: str = "sources.json") -> dict[str, Any]:
    return {file: {"sources": [{"id": "S1", "type": "report", "title": "Trial report", "content_sha256": sha}]}}


def _write(folder: Path, files: dict[str, Any]) -> None:
    for name, content in files.items():
        (folder / name).write_text(json.dumps(content))


def _text_case(case_id: str, message: str, make: Any) -> Case:
    """A source whose stored text ``make(path, tmp)`` turns into something an agent may not hand over."""
    sha = _sha(case_id)

    def prepare(session: SessionPaths, folder: Path, tmp: Path) -> None:
        _write(folder, _source(sha))
        make(session.source_text(sha), tmp)

    return Case(case_id, (), "source_text.invalid", "{dir}/sources.json", SOURCE_PTR, message, prepare)


def _link_out(path: Path, tmp: Path) -> None:
    outside = tmp / f"outside-{path.name}"
    outside.write_bytes(b"text outside the session")
    path.symlink_to(outside)


def _too_large(path: Path, tmp: Path) -> None:
    with open(path, "wb") as handle:
        handle.truncate(MAX_SOURCE_TEXT_BYTES + 1)


def _snippet_case(case_id: str, snippet: str, page: int = 2) -> Case:
    """A high-priority claim whose only evidence must not verify against the stored trial text."""

    def prepare(session: SessionPaths, folder: Path, tmp: Path) -> None:
        claim = {"id": "C1", "statement": "What the trial found.", "confidence": 0.9, "priority": "high",
                 "evidence": [{"source_id": "S1", "snippet": snippet, "locator": {"page": page}}]}
        _write(folder, {**_source(TRIAL_SHA), "claims.json": {"claims": [claim]}})

    return Case(case_id, (), "shacl.QualifiedMinCountConstraintComponent", "{dir}/claims.json", "/claims/0",
                f'quotes "{snippet}"', prepare)


def _files_case(case_id: str, rule: str, file: str, pointer: str, message: str, files: dict[str, Any]) -> Case:
    return Case(case_id, (), rule, file, pointer, message, lambda s, folder, t: _write(folder, files))


def _folder_named_claims(session: SessionPaths, folder: Path, tmp: Path) -> None:
    (folder / "claims.json").mkdir()
    _write(folder, {"notes.json": {"summary": "fine"}})


def _artifacts_symlink(session: SessionPaths, folder: Path, tmp: Path) -> None:
    real = tmp / "real-artifacts"
    real.mkdir()
    _write(real, {"notes.json": {"summary": "outside the session"}})
    folder.rmdir()
    folder.symlink_to(real)


def _sources_2_mismatch(session: SessionPaths, folder: Path, tmp: Path) -> None:
    sha = _sha("sources-2 text")
    session.source_text(sha).write_text("this is not the text whose hash names the file")
    _write(folder, _source(sha, "sources-2.json"))


LONG = "a" * 200
AMBIGUOUS = {
    "entities.json": {"entities": [{"id": "X1", "name": "Trial"}]},
    "claims.json": {"claims": [{"id": "X1", "statement": "A claim.", "confidence": 0.5, "priority": "low",
                                "evidence": []}]},
    "relationships.json": {"relationships": [{"subject": "X1", "predicate": "about", "object": "X1"}]},
}

EXTRA: list[Case] = [
    _text_case("text-symlink-out", "is a symbolic link; links are not followed", _link_out),
    _text_case("text-symlink-dev-zero", "is a symbolic link", lambda p, t: p.symlink_to("/dev/zero")),
    _text_case("text-fifo", "is not a regular file (a FIFO, socket or device)", lambda p, t: os.mkfifo(p)),
    _text_case("text-folder", "is a folder, not a file", lambda p, t: p.mkdir()),
    _text_case("text-over-8-mib", "is larger than 8 MiB", _too_large),
    Case("sources-2-hash-mismatch", (), "source_text.invalid", "{dir}/sources-2.json", SOURCE_PTR,
         "does not match its name", _sources_2_mismatch),
    _snippet_case("snippet-one-word", "at"),
    _snippet_case("snippet-three-words", "the trial enrolled"),
    _snippet_case("snippet-number-changed", "The trial enrolled 4,000 patients and mortality fell by 52 percent"),
    _snippet_case("snippet-magnitude-changed", "The trial enrolled 40,000 patients and mortality fell by 25 percent"),
    _snippet_case("snippet-unit-changed", "The trial enrolled 4,000 patients and mortality fell by 25 %"),
    _snippet_case("snippet-direction-flipped", "The trial enrolled 4,000 patients and mortality rose by 25 percent"),
    _snippet_case("snippet-negation-removed", "The drug did reduce hospital admissions"),
    _snippet_case("snippet-wrong-page", "The drug did not reduce hospital admissions", page=1),
    Case("folder-named-claims-json", (), "path.not_file", "{dir}/claims.json", "",
         "claims.json is a folder, where an artifact file belongs", _folder_named_claims),
    _files_case("integer-beyond-64-bits", "json.integer_out_of_range", "{dir}/notes.json", "/n",
                "does not fit in 64 bits", {"notes.json": {"n": 2**70}}),
    _files_case("negative-integer-beyond-64-bits", "json.integer_out_of_range", "{dir}/notes.json", "/deep/0/n",
                "does not fit in 64 bits", {"notes.json": {"deep": [{"n": -(2**64)}]}}),
    Case("over-long-lock-name", (), "agent_name.invalid", f"{LONG[:40]}....kg.lock", "",
         "invalid agent name (200 characters", lambda s, f, t: _write(f, {"notes.json": {"x": 1}}), agent=LONG),
    _files_case("ambiguous-bare-reference-in-own-files", "reference.unresolved", "{dir}/relationships.json",
                "/relationships/0/subject", "'X1' is ambiguous: this agent has it as an entity and as a claim",
                AMBIGUOUS),
    Case("artifact-folder-is-a-symlink", (), "path.symlink", "{dir}", "", "is a symbolic link", _artifacts_symlink),
    Case("artifact-folder-is-a-file", (), "path.not_folder", "{dir}", "", "is a file, not a folder",
         lambda s, folder, t: (folder.rmdir(), folder.write_text("{}"))),
]
ALL = CASES + EXTRA


def test_the_corpus_holds_at_least_80_distinct_cases() -> None:
    assert len(ALL) >= 80
    assert len({c.id for c in ALL}) == len(ALL)


def _agent(case: Case) -> str:
    return case.agent or f"bad-{case.id}"[:64]


def _prepare(session: SessionPaths, tmp: Path) -> None:
    session.source_text(SKY_SHA).write_text(SKY_TEXT)
    session.source_text(TRIAL_SHA).write_text(TRIAL)
    for agent, files in good_files().items():
        folder = session.agent_artifacts(agent)
        folder.mkdir(parents=True)
        _write(folder, files)
        session.lock(agent).touch()
    result = subprocess.run([*cconductor(), "process", str(session.root)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def _drop_everything(session: SessionPaths, tmp: Path) -> list[str]:
    """Write every case and the bystander, then create all the locks at once."""
    locks = []
    for case in ALL:
        agent = _agent(case)
        folder = session.agent_artifacts(agent)
        folder.mkdir(parents=True)
        write_case_files(case, folder)
        if case.prepare:
            case.prepare(session, folder, tmp)
        if case.lock:
            locks.append(agent)
    write_agent(session.root, "bystander", lock=False)
    locks.append("bystander")
    for agent in locks:
        session.lock(agent).touch()
    return locks


def _check(session: SessionPaths, baseline: dict[str, Any], baseline_records: dict[str, Any]) -> list[str]:
    registry = SchemaRegistry.default()
    failures: list[str] = []
    for case in ALL:
        agent = _agent(case)
        if not session.lock_error(agent).exists():
            failures.append(f"{case.id}: no {agent[:40]}.kg.lock.error")
            continue
        failures += [f"{case.id}: {p}" for p in check_rejection(session, registry, case, agent)
                     if not (case.id == "over-long-lock-name" and "wrong agent/lock_file" in p)]
        if agent not in RESERVED_KEYS and namespaces(session, [agent])[agent] is not None:
            failures.append(f"{case.id}: the rejected agent has a namespace in knowledge-graph.json")
    records = current_records(session)
    if "bystander" not in records:
        failures.append("the valid bystander was not merged in the same batch")
    if {a: s for a, s in records.items() if a != "bystander"} != baseline_records:
        failures.append(f"the committed graph changed: {records}")
    if namespaces(session, ["good", "good-peer"]) != baseline:
        failures.append("the good agents' namespaces changed")
    return failures


@pytest.mark.parametrize("mode", ["process", "watch"])
def test_every_hostile_case_is_rejected_precisely_and_a_bystander_merges_in_the_same_batch(
    session: SessionPaths, tmp_path: Path, mode: str
) -> None:
    _prepare(session, tmp_path)
    baseline, baseline_records = namespaces(session, ["good", "good-peer"]), current_records(session)
    if mode == "process":
        _drop_everything(session, tmp_path)
        result = subprocess.run([*cconductor(), "process", str(session.root)], capture_output=True, text=True,
                                timeout=300)
        assert result.returncode == 1, result.stderr  # rejections: exit 1
        err = result.stderr
    else:
        watcher = subprocess.Popen([*cconductor(), "watch", str(session.root), "--rescan-interval", "0.5"],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            wait_for(lambda: "watch.started" in session.events.read_text(), "the watcher to start")
            dropped = _drop_everything(session, tmp_path)
            wait_for(lambda: not any(session.lock(a).exists() for a in dropped)
                     and "bystander" in current_records(session), "every lock to be decided", timeout=240)
            assert watcher.poll() is None, "the watcher died"
            watcher.send_signal(signal.SIGINT)
            _, err = watcher.communicate(timeout=60)
        finally:
            if watcher.poll() is None:
                watcher.kill()
        assert watcher.returncode == 0, err
    assert "Traceback" not in err
    failures = _check(session, baseline, baseline_records)
    assert not failures, "\n".join(failures)
    graph = json.loads(session.kg_json.read_text())
    assert "bystander" in graph and graph["stats"]["evidence_verified"] >= 3
