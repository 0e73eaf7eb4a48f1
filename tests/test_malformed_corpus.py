"""Every malformed input in tests/data/malformed/, dropped one after another into ONE running watcher.

For each input: the lock becomes ``<agent>.kg.lock.error``, the retry instructions conform to
their schema and name the file, the JSON pointer, the rule and what is wrong; the good agents'
namespaces stay exactly as they were, nothing of the bad agent enters the graph, and the watcher
thread keeps running. At the end a valid set (with a FIFO beside it) is still merged.

Corpus file names are ``<target>.<what-is-wrong>.<ext>``: the file is written into the agent's
folder as ``<target>.<ext>`` (so ``claims.confidence-above-one.json`` becomes ``claims.json``).
Cases that cannot be a single stored file (symlinks, FIFOs, odd lock names, folder layouts) are
built here, from corpus files where they need content.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from orchestrator.commit.processor import Processor
from orchestrator.contract.schemas import SchemaRegistry
from orchestrator.model.layout import RESERVED_KEYS, SessionPaths
from orchestrator.session.events import read_events
from tests.helpers.watching import running_watcher, wait_for

pytestmark = pytest.mark.slow  # a stress or long end-to-end case: `pytest -m slow` (CI runs it)

CORPUS = Path(__file__).resolve().parent / "data" / "malformed"
SKY_TEXT = "Page one.\fThe sky is blue on clear days."
SKY_SHA = hashlib.sha256(SKY_TEXT.encode()).hexdigest()
MISMATCHED_SHA = "de" * 32  # named in sources.content-sha256-text-mismatch.json
SOURCE_REF = "/claims/0/evidence/0/source_id"

#: rule prefix -> the error_class the retry instructions must report
ERROR_CLASS = {
    "json.": "syntax",
    "size.": "size",
    "artifact.": "schema",
    "schema.": "schema",
    "merge.": "merge_conflict",
    "reference.": "reference",
    "source_text.": "evidence",
    "shacl.": "shacl",
    "path.": "path",
    "artifacts.": "path",
    "agent_name.": "agent_name",
}

Prepare = Callable[[SessionPaths, Path, Path], None]  # (session, agent folder, tmp_path)


@dataclass(frozen=True)
class Case:
    id: str
    corpus: tuple[str, ...]  # corpus files copied into the agent folder (as their target names)
    rule: str
    file: str  # expected Problem.file; {dir} is artifacts/<agent>, {agent} the agent name
    pointer: str
    message: str  # a substring of the problem's message
    prepare: Prepare | None = None  # builds what a stored file cannot be
    agent: str | None = None  # lock name; default bad-<id>
    lock: bool = True  # create <agent>.kg.lock (False: prepare makes its own)


def target_name(corpus_file: str) -> str:
    stem, _, rest = corpus_file.partition(".")
    return f"{stem}.{rest.rsplit('.', 1)[-1]}"


def single(name: str, rule: str, pointer: str, message: str, prepare: Prepare | None = None) -> Case:
    """A case made of one corpus file; the problem is expected in that file."""
    case_id = name.rsplit(".", 1)[0].replace(".", "-")
    return Case(case_id, (name,), rule, "{dir}/" + target_name(name), pointer, message, prepare)


# -- builders for the cases that are not plain files -------------------------------------------------------
def _mismatched_text(session: SessionPaths, folder: Path, tmp: Path) -> None:
    session.source_text(MISMATCHED_SHA).write_text("some other text than the one this name promises")


def _symlink(session: SessionPaths, folder: Path, tmp: Path) -> None:
    outside = tmp / "outside-claims.json"
    outside.write_text(json.dumps({"claims": []}))
    (folder / "claims.json").symlink_to(outside)


def _fifo_only(session: SessionPaths, folder: Path, tmp: Path) -> None:
    os.mkfifo(folder / "claims.json")


def _no_folder(session: SessionPaths, folder: Path, tmp: Path) -> None:
    folder.rmdir()


def _valid_files(folder: Path) -> None:
    (folder / "notes.json").write_text(json.dumps({"summary": "nothing wrong in here"}))


def _undecodable_file_name(session: SessionPaths, folder: Path, tmp: Path) -> None:
    _valid_files(folder)
    with open(os.path.join(os.fsencode(folder), b"claims-\xff.json"), "wb") as handle:
        handle.write(b"{}")


def _undecodable_lock_name(session: SessionPaths, folder: Path, tmp: Path) -> None:
    folder.rmdir()
    with open(os.path.join(os.fsencode(session.root), b"bad-\xff.kg.lock"), "wb"):
        pass


def _valid_set(session: SessionPaths, folder: Path, tmp: Path) -> None:
    _valid_files(folder)


def _lock_is_a_folder(session: SessionPaths, folder: Path, tmp: Path) -> None:
    _valid_files(folder)
    session.lock(folder.name).mkdir()


def _too_many_files(session: SessionPaths, folder: Path, tmp: Path) -> None:
    for i in range(257):
        (folder / f"part-{i:03d}.json").write_text(json.dumps({f"k{i}": i}))


def _too_many_bytes(session: SessionPaths, folder: Path, tmp: Path) -> None:
    for i in range(65):  # 65 x 65,000 bytes > 4 MiB, each file under 64 KiB
        head = f'{{"part{i}": "'.encode()
        (folder / f"part-{i:02d}.json").write_bytes(head + b"y" * (65_000 - len(head) - 2) + b'"}')


CASES: list[Case] = [
    # strict JSON: syntax, encodings, numbers, nesting, top-level type
    single("claims.trailing-comma.json", "json.syntax", "",
           "line 17, column 5: Expecting property name enclosed in double quotes"),
    single("claims.single-quoted-strings.json", "json.syntax", "",
           "line 1, column 2: Expecting property name enclosed in double quotes"),
    single("claims.unquoted-key.json", "json.syntax", "", "line 6, column 7"),
    single("claims.javascript-comment.json", "json.syntax", "", "line 2, column 15"),
    single("claims.raw-newline-inside-string.json", "json.syntax", "", "line 5, column 36: Invalid control"),
    single("claims.truncated-document.json", "json.syntax", "", "line 5, column 20: Unterminated string"),
    single("claims.nan-confidence.json", "json.non_finite", "",
           "NaN is not valid JSON (non-finite numbers are not allowed) (line 6, column 21)"),
    single("claims.infinity-confidence.json", "json.non_finite", "", "Infinity is not valid JSON"),
    single("claims.negative-infinity-confidence.json", "json.non_finite", "", "-Infinity is not valid JSON"),
    single("claims.number-overflows-to-infinity.json", "json.non_finite", "", "1e400 is too large"),
    single("notes.integer-with-5000-digits.json", "json.number_too_long", "", "integer with 5000 digits"),
    single("claims.duplicate-key.json", "json.duplicate_key", "", "duplicate key 'confidence' in one object"),
    single("claims.utf8-bom.json", "json.bom", "", "UTF-8 byte-order mark"),
    single("claims.utf16-le-with-bom.json", "json.bom", "", "UTF-16 LE byte-order mark"),
    single("claims.utf16-le-without-bom.json", "json.encoding", "", "NUL byte at offset 1"),
    single("claims.invalid-utf8-byte.json", "json.encoding", "", "0xff at offset 86 (line 5, column 47)"),
    single("claims.lone-surrogate-escape.json", "json.invalid_unicode", "",
           "\\ud83d (line 5, column 37) is an unpaired UTF-16 surrogate"),
    single("claims.empty-file.json", "json.empty", "", "the file is empty"),
    single("claims.whitespace-only.json", "json.empty", "", "only whitespace"),
    single("notes.nested-40-levels.json", "json.depth", "", "nested 40 levels deep; the limit is 32"),
    single("claims.top-level-array.json", "artifact.not_object", "", "the top level is an array"),
    single("claims.top-level-null.json", "artifact.not_object", "", "the top level is null"),
    single("claims.top-level-false.json", "artifact.not_object", "", "the top level is a boolean"),
    single("claims.top-level-number.json", "artifact.not_object", "", "the top level is a number"),
    single("claims.top-level-string.json", "artifact.not_object", "", "the top level is a string"),
    # JSON Schema
    single("claims.confidence-above-one.json", "schema.maximum", "/claims/0/confidence",
           "1.5 at /claims/0/confidence is above the maximum 1"),
    single("claims.confidence-as-string.json", "schema.type", "/claims/0/confidence",
           'is a string ("0.9") but must be a number between 0 and 1'),
    single("claims.unknown-priority.json", "schema.enum", "/claims/0/priority",
           '"urgent" at /claims/0/priority is not one of "high", "medium", "low"'),
    single("claims.missing-statement.json", "schema.required", "/claims/0", "required field 'statement'"),
    single("claims.empty-statement.json", "schema.minLength", "/claims/0/statement", "is empty"),
    single("claims.misspelled-field-confidance.json", "schema.additionalProperties", "/claims/0",
           "has the field 'confidance', which is not allowed"),
    single("claims.evidence-without-snippet.json", "schema.required", "/claims/0/evidence/0",
           "required field 'snippet'"),
    single("claims.evidence-page-zero.json", "schema.minimum", "/claims/0/evidence/0/locator/page",
           "is below the minimum 1"),
    single("claims.claims-is-an-object.json", "schema.type", "/claims", "must be a list of Claim objects"),
    single("claims.missing-claims-key.json", "schema.required", "", "required field 'claims'"),
    single("claims-2.evidence-is-a-string.json", "schema.type", "/claims/0/evidence",
           "must be a list of Evidence objects"),
    single("sources.bad-url.json", "schema.format", "/sources/0/url", "is not a valid uri"),
    single("sources.source-without-title.json", "schema.required", "/sources/0", "required field 'title'"),
    single("sources.unknown-source-type.json", "schema.enum", "/sources/0/type", '"blog" at /sources/0/type'),
    single("completion.bad-date-time.json", "schema.format", "/completed_at", "is not a valid date-time"),
    single("entities.id-with-space.json", "schema.pattern", "/entities/0/id", '"Marie Curie" at /entities/0'),
    single("contradictions.only-one-claim.json", "schema.minItems", "/contradictions/0/claim_ids",
           "has 1 item(s); at least 2 required"),
    # merge and references
    single("claims.duplicate-claim-ids.json", "merge.duplicate_id", "/claims/1/id", "id 'C1' is used twice"),
    single("claims.reference-to-missing-source.json", "reference.unresolved", SOURCE_REF,
           "'S404' matches no source"),
    single("claims.ambiguous-bare-reference.json", "reference.unresolved", SOURCE_REF,
           "'paper-2' is ambiguous: it matches good-peer:paper-2, good:paper-2"),
    single("claims.cites-agent-never-merged.json", "reference.unresolved", SOURCE_REF,
           "no source 'ghost-agent:S1' exists"),
    single("relationships.subject-not-an-entity.json", "reference.unresolved", "/relationships/0/subject",
           "'E404' matches no entity or claim"),
    Case("conflicting-scalar-across-files",
         ("notes-1.conflicting-summary.json", "notes-2.conflicting-summary.json"),
         "merge.conflict", "{dir}/notes-2.json", "/summary", "{dir}/notes-1.json already sets it to"),
    # size
    single("blob.65537-bytes.json", "size.file_too_large", "", "65,537 bytes; the limit is 65,536 bytes"),
    # source texts, evidence binding and SHACL
    single("sources.content-sha256-text-mismatch.json", "source_text.invalid", "/sources/0/content_sha256",
           "does not match its name", _mismatched_text),
    single("sources.content-sha256-text-missing.json", "source_text.invalid", "/sources/0/content_sha256",
           f"sources/{'ab' * 32}.txt does not exist"),
    single("claims.high-priority-snippet-not-in-source.json", "shacl.QualifiedMinCountConstraintComponent",
           "/claims/0", 'quotes "The sky is green on cloudy nights"'),
    single("claims.char-start-after-char-end.json", "shacl.LessThanOrEqualsConstraintComponent",
           "/claims/0/evidence/0/locator/char_start", "has char_start 30, which is negative or after"),
    single("sources.doi-with-resolver-prefix.json", "shacl.PatternConstraintComponent", "/sources/0/doi",
           "'https://doi.org/10.1000/sky', which is not a bare DOI"),
    # folder and lock layouts (built here)
    Case("folder-without-json", ("readme.not-json-extension.txt",), "artifacts.no_json", "{dir}", "",
         "holds no regular .json files (ignored: readme.txt: not a .json file"),
    Case("fifo-named-claims-json", (), "path.not_file", "{dir}/claims.json", "",
         "claims.json is not a regular file (a FIFO, socket or device), where an artifact file belongs", _fifo_only),
    Case("symlinked-artifact", (), "path.symlink", "{dir}/claims.json", "", "symbolic links are not accepted",
         _symlink),
    Case("lock-without-artifact-folder", (), "artifacts.missing_folder", "{dir}", "",
         "exists but there is no artifact folder", _no_folder),
    Case("undecodable-file-name", (), "path.invalid_name", "{dir}/claims-\\xff.json", "",
         "is not valid UTF-8", _undecodable_file_name),
    Case("invalid-agent-name", (), "agent_name.invalid", "{agent}.kg.lock", "",
         "invalid agent name 'Bad_Agent'", _valid_set, agent="Bad_Agent"),
    Case("reserved-agent-name", (), "agent_name.invalid", "{agent}.kg.lock", "", "'stats' is reserved",
         _valid_set, agent="stats"),
    Case("undecodable-lock-name", (), "agent_name.invalid", "{agent}.kg.lock", "", "invalid agent name",
         _undecodable_lock_name, agent="bad-\\xff", lock=False),
    Case("lock-is-a-folder", (), "path.lock_not_file", "{agent}.kg.lock", "", "is a folder, not a file",
         _lock_is_a_folder, lock=False),
    Case("too-many-files", (), "size.too_many_files", "{dir}", "", "257 JSON files; at most 256",
         _too_many_files),
    Case("agent-files-over-4-mib", (), "size.agent_too_large", "{dir}", "",
         "the agent's files total 4,225,000 bytes", _too_many_bytes),
]


# -- the good agents ---------------------------------------------------------------------------------------
def good_files() -> dict[str, dict[str, Any]]:
    sky = {"id": "S1", "type": "web-page", "title": "Sky colour", "url": "https://example.org/sky",
           "content_sha256": SKY_SHA}
    claim = {"id": "C1", "statement": "The sky is blue on clear days.", "confidence": 0.9, "priority": "high",
             "evidence": [{"source_id": "S1", "snippet": "The sky is blue on clear days",
                           "locator": {"page": 2}}]}
    return {
        "good": {
            "sources.json": {"sources": [
                sky, {"id": "paper-2", "type": "report", "title": "Second paper", "doi": "10.1000/paper-2"}]},
            "claims.json": {"claims": [claim]},
        },
        "good-peer": {
            "sources.json": {"sources": [
                {"id": "paper-2", "type": "report", "title": "Another paper 2", "doi": "10.1000/peer-2"}]},
        },
    }


# -- helpers -----------------------------------------------------------------------------------------------
def current_records(paths: SessionPaths) -> dict[str, int | None]:
    """agent -> record seq of its namespace, read from the commit point itself."""
    with sqlite3.connect(paths.store_db, timeout=30) as db:
        return dict(db.execute("SELECT agent, record_seq FROM current").fetchall())


def namespaces(paths: SessionPaths, agents: list[str]) -> dict[str, Any]:
    graph = json.loads(paths.kg_json.read_text(encoding="utf-8"))
    return {agent: graph.get(agent) for agent in agents}


def write_case_files(case: Case, folder: Path) -> None:
    for name in case.corpus:
        shutil.copyfile(CORPUS / name, folder / target_name(name))


def find_problem(doc: dict[str, Any], case: Case, file: str) -> dict[str, Any] | None:
    if case.rule.startswith("shacl."):
        candidates = [dict(v, rule=None) for v in doc["shacl_violations"]]
    else:
        candidates = [p for entry in doc["files"] for p in entry["problems"] if entry["path"] == p["file"]]
    for problem in candidates:
        if (
            problem["file"] == file
            and problem["pointer"] == case.pointer
            and (problem["rule"] is None or problem["rule"] == case.rule)
            and case.message.replace("{dir}", file.rsplit("/", 1)[0]) in problem["message"]
            and problem["severity"] == "error"
            and problem["hint"]
        ):
            return problem
    return None


def rejection_event(paths: SessionPaths, agent: str) -> dict[str, Any] | None:
    found = [
        e for e in read_events(paths.events) if e["type"] == "merge.rejected" and e["data"]["agent"] == agent
    ]
    return found[-1] if found else None


# -- tests -------------------------------------------------------------------------------------------------
def test_corpus_has_at_least_30_distinct_inputs_and_every_file_has_a_case() -> None:
    files = sorted(p.name for p in CORPUS.iterdir() if p.name != "README.md")
    used = sorted(name for case in CASES for name in case.corpus)
    assert len(files) >= 30
    assert files == used, "every corpus file is used by exactly one case"
    contents = [(CORPUS / name).read_bytes() for name in files]
    assert len(set(contents)) == len(contents), "corpus files are distinct"
    assert len({case.id for case in CASES}) == len(CASES)
    assert all(re.fullmatch(r"[a-z0-9-]+\.[a-z0-9-]+\.(json|txt)", name) for name in files)
    assert (CORPUS / "blob.65537-bytes.json").stat().st_size == 65_537


def test_every_malformed_input_is_rejected_precisely_while_one_watcher_keeps_running(
    session: SessionPaths, tmp_path: Path
) -> None:
    registry = SchemaRegistry.default()
    session.source_text(SKY_SHA).write_text(SKY_TEXT)
    processor = Processor(session)
    failures: list[str] = []
    try:
        with running_watcher(processor, rescan_interval=1.0, flush_interval=0.1) as (_, thread):
            for agent, files in good_files().items():
                folder = session.agent_artifacts(agent)
                folder.mkdir(parents=True)
                for name, content in files.items():
                    (folder / name).write_text(json.dumps(content))
                session.lock(agent).touch()
            wait_for(
                lambda: set(current_records(session)) == {"good", "good-peer"}, "the good agents to merge"
            )
            wait_for(
                lambda: (
                    session.kg_json.exists()
                    and None not in namespaces(session, ["good", "good-peer"]).values()
                ),
                "the views",
            )
            baseline_records = current_records(session)
            baseline = namespaces(session, ["good", "good-peer"])
            assert baseline["good"]["claims"][0]["id"] == "C1"

            for case in CASES:
                agent = case.agent or f"bad-{case.id}"[:64]
                folder = session.agent_artifacts(agent)
                folder.mkdir(parents=True)
                write_case_files(case, folder)
                if case.prepare:
                    case.prepare(session, folder, tmp_path)
                if case.lock:
                    session.lock(agent).touch()
                try:
                    wait_for(lambda a=agent: session.lock_error(a).exists(), f"{agent}.kg.lock.error")
                    # the event is written just after the rename
                    wait_for(lambda a=agent: rejection_event(session, a) is not None, f"{agent}'s event")
                except AssertionError as exc:
                    failures.append(f"{case.id}: {exc}")
                    continue
                problems = check_rejection(session, registry, case, agent)
                if current_records(session) != baseline_records:
                    problems.append(f"the committed graph changed: {current_records(session)}")
                if namespaces(session, ["good", "good-peer"]) != baseline:
                    problems.append("knowledge-graph.json changed")
                if agent not in RESERVED_KEYS and namespaces(session, [agent])[agent] is not None:
                    problems.append("the rejected agent has a namespace in knowledge-graph.json")
                if not thread.is_alive():
                    problems.append("the watcher thread died")
                failures += [f"{case.id}: {p}" for p in problems]
                assert thread.is_alive(), failures

            # the watcher still works: a valid set, with a FIFO and a text file beside it, is merged
            folder = session.agent_artifacts("late-agent")
            folder.mkdir()
            os.mkfifo(folder / "pipe")  # special files not named *.json are ignored
            (folder / "readme.txt").write_text("not an artifact")
            (folder / "claims.json").write_text(
                json.dumps(
                    {
                        "claims": [
                            {
                                "id": "C9",
                                "statement": "Clear days have a blue sky.",
                                "confidence": 0.7,
                                "priority": "low",
                                "evidence": [
                                    {"source_id": "good:S1", "snippet": "The sky is blue on clear days"}
                                ],
                            }
                        ]
                    }
                )
            )
            session.lock("late-agent").touch()
            wait_for(lambda: "late-agent" in current_records(session), "the valid late agent to merge")
            wait_for(lambda: not session.lock("late-agent").exists(), "the late agent's lock to be consumed")
            assert not session.lock_error("late-agent").exists()
        kg = json.loads(session.kg_json.read_text())
        assert kg["late-agent"]["claims"][0]["id"] == "C9"
        assert {c["id"] for c in kg["claims"]} == {"good:C1", "late-agent:C9"}
        assert namespaces(session, ["good", "good-peer"]) == baseline
    finally:
        processor.close()
    assert not failures, "\n".join(failures)
    events = [e["type"] for e in read_events(session.events)]
    assert "processor.error" not in events and "views.failed" not in events
    assert events.count("watch.started") == 1 and events[-1] == "watch.stopped"
    assert events.count("merge.rejected") == len(CASES)


def check_rejection(session: SessionPaths, registry: SchemaRegistry, case: Case, agent: str) -> list[str]:
    problems: list[str] = []
    doc = json.loads(session.retry_instructions(agent).read_text(encoding="utf-8"))
    schema_problems = registry.validate_document("retry-instructions", doc, None)
    if schema_problems:
        problems.append(f"retry instructions do not conform: {[p.render() for p in schema_problems]}")
    file = case.file.format(dir=f"artifacts/{agent}", agent=agent)
    if find_problem(doc, case, file) is None:
        problems.append(
            f"no problem {case.rule} at {file}#{case.pointer} containing {case.message!r} in {doc}"
        )
    expected_class = next(v for k, v in ERROR_CLASS.items() if case.rule.startswith(k))
    if doc["error_class"] != expected_class:
        problems.append(f"error_class {doc['error_class']!r}, expected {expected_class!r}")
    if doc["agent"] != agent or doc["lock_file"] != f"{agent}.kg.lock.error" or doc["attempt"] != 1:
        problems.append(
            f"wrong agent/lock_file/attempt: {doc['agent']}, {doc['lock_file']}, {doc['attempt']}"
        )
    if case.rule.startswith("agent_name."):
        if "Rename" not in doc["action_required"]:
            problems.append(f"action_required does not say to rename: {doc['action_required']}")
    elif file not in doc["action_required"]:
        problems.append(f"action_required does not name {file}: {doc['action_required']}")
    every_file = {p["file"] for entry in doc["files"] for p in entry["problems"]}
    every_file |= {v["file"] for v in doc["shacl_violations"]}
    if not all(f in (file, f"artifacts/{agent}") or f.startswith(f"artifacts/{agent}/") for f in every_file):
        problems.append(f"problems outside the agent's files: {every_file}")
    event = rejection_event(session, agent)
    if event is None or case.rule not in {p["rule"] for p in event["data"]["problems"]}:
        problems.append(f"no merge.rejected event naming the rule {case.rule}")
    if session.lock(agent).exists():
        problems.append("the lock is still pending next to its .error")
    return problems
