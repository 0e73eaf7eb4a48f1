"""The path from a ``<agent>.kg.lock`` signal to a committed merge or to retry instructions.

Per batch, under the session's merge mutex: read and validate each pending agent's
artifacts, merge them against the in-memory graph, bind evidence, run incremental
SHACL, then commit every accepted merge in one transaction (group commit) and only
then consume the locks. A crash at any point leaves each lock merged or pending.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from filelock import FileLock

from orchestrator.artifacts import ArtifactSet, folder_fingerprint, read_artifact_set
from orchestrator.atomic import atomic_write_bytes, atomic_write_json
from orchestrator.errors import InvalidAgentName
from orchestrator.events import EventLog
from orchestrator.evidence import DEFAULT_THRESHOLD, bind_evidence
from orchestrator.ids import iso_timestamp
from orchestrator.merge import build_contribution
from orchestrator.paths import AGENT_NAME_RE, SessionPaths, check_agent_name, pending_lock_agents
from orchestrator.problems import Problem, errors, pointer_join
from orchestrator.retry import build_retry_instructions, error_class
from orchestrator.schemas import SchemaRegistry
from orchestrator.session import load_session, update_session
from orchestrator.state import GraphState
from orchestrator.store import LedgerEntry, Store

RequiredFiles = Callable[[str], Iterable[str]]


@dataclass
class Outcome:
    agent: str
    status: str  # merged | rejected | noop | deferred
    attempt: int | None = None
    problems: list[Problem] = field(default_factory=list)
    seq: int | None = None


class TextStore:
    """Reads ``sources/<sha256>.txt`` and checks the name is the content's hash (cached)."""

    def __init__(self, paths: SessionPaths):
        self.paths = paths
        self._texts: dict[str, tuple[tuple[int, int], str | None]] = {}

    def check(self, sha: str) -> tuple[str | None, str | None]:
        """Return (text, None) or (None, reason)."""
        path = self.paths.source_text(sha)
        try:
            info = path.stat()
        except FileNotFoundError:
            return None, f"sources/{sha}.txt does not exist"
        key = (info.st_size, info.st_mtime_ns)
        cached = self._texts.get(sha)
        if cached and cached[0] == key:
            text = cached[1]
        else:
            data = path.read_bytes()
            text = data.decode("utf-8", "replace") if hashlib.sha256(data).hexdigest() == sha else None
            self._texts[sha] = (key, text)
        if text is None:
            return None, f"sources/{sha}.txt does not match its name: its content's sha256 differs"
        return text, None

    def text(self, sha: str) -> str | None:
        return self.check(sha)[0]


class Processor:
    """One per session and process; keeps the graph in memory between batches."""

    def __init__(
        self,
        paths: SessionPaths,
        *,
        max_attempts: int = 3,
        evidence_threshold: float = DEFAULT_THRESHOLD,
        required_files: RequiredFiles | None = None,
        events: EventLog | None = None,
    ):
        from orchestrator.shacl import RdfState

        self.paths = paths
        self.session_id = str(load_session(paths)["id"])
        paths.state.mkdir(exist_ok=True)
        self.events = events or EventLog(paths.events, paths.events_mutex)
        self.store = Store(paths.store_db)
        self.registry = SchemaRegistry.default()
        self.max_attempts = max_attempts
        self.evidence_threshold = evidence_threshold
        self.required_files = required_files or (lambda agent: ())
        self.state = GraphState(self.session_id)
        self.rdf = RdfState()
        self.texts = TextStore(paths)
        self.lock = threading.RLock()
        self._mutex = FileLock(paths.mutex)
        self._session_checked_at = -1
        self.refresh()

    def close(self) -> None:
        self.store.close()

    # -- loading -----------------------------------------------------------------
    def refresh(self) -> None:
        """Catch up with commits made by other processes since we last looked."""
        head = self.store.head()
        if head == self.state.head_seq:
            return
        with self.lock:
            for agent, record in self.store.current_changes(self.state.head_seq).items():
                self._install(agent, record)
            self.state.head_seq = head

    def _install(self, agent: str, record: dict[str, Any] | None) -> None:
        from orchestrator.rdf import contribution_to_graph

        self.state.put(agent, record)
        if record is None:
            self.rdf.remove_agent(agent)
        else:
            self.rdf.replace_agent(
                contribution_to_graph(self.session_id, record["contribution"], kind_of=self.state.kind_of)
            )

    # -- processing ----------------------------------------------------------------
    def process_pending(self, only: Iterable[str] | None = None) -> list[Outcome]:
        wanted = set(only) if only is not None else None
        with self._mutex, self.lock:
            self.refresh()
            self._reconcile_session()
            self._rename_undecodable_locks()
            names = [n for n in pending_lock_agents(self.paths.root) if wanted is None or n in wanted]
            if not names:
                return []
            staged: list[tuple[Outcome, ArtifactSet | None, dict[str, Any] | None]] = []
            try:
                for name in names:
                    self.events.emit("lock.seen", f"lock {name}.kg.lock seen", agent=name)
                    staged.append(self._evaluate(name))
            except BaseException:
                # _evaluate puts accepted records into the in-memory graph before the commit; left
                # there, they would make the next batch take the uncommitted set for a no-op.
                self._reload()
                raise
            self._commit(staged)
        return [outcome for outcome, _, _ in staged]

    def _rename_undecodable_locks(self) -> None:
        """A lock whose file name is not UTF-8 cannot be logged or recorded: give it a printable name.

        The name is then an invalid agent name (it holds a backslash), so it is rejected as usual.
        """
        for name in pending_lock_agents(self.paths.root):
            shown = name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
            if shown != name:
                with contextlib.suppress(OSError):
                    os.replace(self.paths.lock(name), self.paths.lock(shown))

    def _evaluate(self, name: str) -> tuple[Outcome, ArtifactSet | None, dict[str, Any] | None]:
        try:
            check_agent_name(name)
        except InvalidAgentName as exc:
            problem = Problem(f"{name}.kg.lock", "", "agent_name.invalid", str(exc),
                              "rename the lock and artifacts/<agent>/ to a valid, unreserved agent name")
            return Outcome(name, "rejected", self.store.attempts(name) + 1, [problem]), None, None
        if self.paths.lock(name).is_dir():
            problem = Problem(f"{name}.kg.lock", "", "path.lock_not_file",
                              f"{name}.kg.lock is a folder, not a file",
                              f"remove the folder {name}.kg.lock.error and create {name}.kg.lock as an "
                              "empty file (touch) after writing the artifacts")
            return Outcome(name, "rejected", self.store.attempts(name) + 1, [problem]), None, None
        artifact_set = read_artifact_set(self.paths, name, self.registry, self.required_files(name))
        current = self.state.records.get(name)
        if artifact_set.ok and current and current["artifact_sha256"] == artifact_set.sha256:
            return Outcome(name, "noop", current["attempt"], seq=current.get("seq")), artifact_set, None
        attempt = self._attempt_for(name, artifact_set)
        self.events.emit(
            "validation.completed",
            f"{name}: {len(artifact_set.files)} file(s) read, {len(errors(artifact_set.problems))} problem(s)",
            agent=name, attempt=attempt, files=[f.rel for f in artifact_set.files],
            problems=[p.to_dict() for p in artifact_set.problems],
        )
        if not artifact_set.ok:
            return Outcome(name, "rejected", attempt, list(artifact_set.problems)), artifact_set, None

        merged_at = iso_timestamp()
        problems = self._check_source_texts(artifact_set)
        result = build_contribution(
            name, artifact_set.files, self.state.excluding(name),
            attempt=attempt, merged_at=merged_at, artifact_sha256=artifact_set.sha256,
        )
        problems += result.problems
        bind_evidence(
            result.contribution,
            lambda gid: self.state.item("sources", gid),
            self.texts.text,
            self.evidence_threshold,
        )
        problems += self._check_citations(name, artifact_set, result.contribution)
        if errors(problems):
            return Outcome(name, "rejected", attempt, problems), artifact_set, None

        from orchestrator.rdf import contribution_to_graph

        graph = contribution_to_graph(self.session_id, result.contribution, kind_of=self._kind_of(result.contribution))
        undo = self.rdf.replace_agent(graph)
        shacl_problems = self.rdf.validate_agent(name)
        self.events.emit(
            "shacl.completed",
            f"{name}: SHACL found {len(errors(shacl_problems))} violation(s), "
            f"{len(shacl_problems) - len(errors(shacl_problems))} warning(s)",
            agent=name, attempt=attempt, problems=[p.to_dict() for p in shacl_problems],
        )
        problems += shacl_problems
        if errors(shacl_problems):
            undo()
            return Outcome(name, "rejected", attempt, problems), artifact_set, None
        if folder_fingerprint(self.paths.agent_artifacts(name)) != artifact_set.fingerprint:
            undo()
            return Outcome(name, "deferred", attempt), artifact_set, None
        record = {
            "agent": name,
            "attempt": attempt,
            "merged_at": merged_at,
            "artifact_sha256": artifact_set.sha256,
            "files": [
                {"name": f.name, "rel": f.rel, "sha256": f.sha256, "size": artifact_set.sizes.get(f.rel)}
                for f in artifact_set.files
            ],
            "raw": {f.name: f.data for f in artifact_set.files},
            "namespace": result.namespace,
            "contribution": result.contribution,
        }
        self.state.put(name, record)
        return Outcome(name, "merged", attempt, [p for p in problems if not p.is_error]), artifact_set, record

    def _check_citations(self, agent: str, artifact_set: ArtifactSet, contribution: dict[str, Any]) -> list[Problem]:
        """Report markers must cite claims of the graph that have verified evidence."""
        from orchestrator.report.citations import check_outline

        outlines = [f for f in artifact_set.files if isinstance(f.data.get("report_outline"), dict)]
        if not outlines:
            return []
        own = {c["id"]: c for c in contribution["items"]["claims"]}
        view = self.state.excluding(agent)

        def resolve(ref: str) -> str | None:
            if ":" in ref:
                return ref if ref in own or view.exists("claims", ref) else None
            if f"{agent}:{ref}" in own:
                return f"{agent}:{ref}"
            candidates = view.by_local("claims", ref)
            return candidates[0] if len(candidates) == 1 else None

        def claim(global_id: str) -> dict[str, Any] | None:
            return own.get(global_id) or self.state.item("claims", global_id)

        problems: list[Problem] = []
        for art in outlines:
            problems += check_outline(art.data["report_outline"], resolve, claim, art.rel, "/report_outline")
        return problems

    def _kind_of(self, contribution: dict[str, Any]) -> Callable[[str], str | None]:
        own_claims = {c["id"] for c in contribution["items"]["claims"]}
        return lambda gid: "claim" if gid in own_claims else self.state.kind_of(gid)

    def _attempt_for(self, agent: str, artifact_set: ArtifactSet) -> int:
        """A lock re-seen after a crash (same rejected set) keeps its attempt number."""
        last = self.store.last_entry(agent)
        attempts = self.store.attempts(agent)
        if last and last["action"] == "reject" and last["artifact_sha256"] == artifact_set.sha256:
            return attempts
        return attempts + 1

    def _check_source_texts(self, artifact_set: ArtifactSet) -> list[Problem]:
        problems = []
        for art in artifact_set.files:
            for position, source in enumerate(art.data.get("sources", []) if art.name == "sources.json" else []):
                sha = source.get("content_sha256") if isinstance(source, dict) else None
                if not isinstance(sha, str):
                    continue
                _, reason = self.texts.check(sha)
                if reason:
                    problems.append(Problem(
                        art.rel, pointer_join("sources", position, "content_sha256"), "source_text.invalid",
                        f"content_sha256 of source {source.get('id')!r} is unusable: {reason}",
                        "write the source's text to sources/<sha256 of the UTF-8 bytes>.txt and put that "
                        "sha256 in content_sha256 (or drop content_sha256 if there is no text)",
                    ))
        return problems

    # -- committing ------------------------------------------------------------------
    def _commit(self, staged: list[tuple[Outcome, ArtifactSet | None, dict[str, Any] | None]]) -> None:
        now = iso_timestamp()
        entries, owners = [], []
        for outcome, artifact_set, record in staged:
            if outcome.status == "merged" and record is not None and artifact_set is not None:
                entries.append(LedgerEntry(outcome.agent, "merge", artifact_set.sha256, outcome.attempt, now,
                                           {"files": [f.name for f in artifact_set.files]}, record))
                owners.append(outcome)
            elif outcome.status == "rejected" and not self._already_rejected(outcome, artifact_set):
                entries.append(LedgerEntry(outcome.agent, "reject",
                                           artifact_set.sha256 if artifact_set else None, outcome.attempt, now,
                                           {"error_class": error_class(outcome.problems),
                                            "problems": len(errors(outcome.problems))}))
                owners.append(outcome)
        try:
            seqs = self.store.commit(entries) if entries else []
        except Exception:
            self._reload()
            raise
        for outcome, seq in zip(owners, seqs, strict=True):
            outcome.seq = seq
            if outcome.status == "merged":
                self.state.records[outcome.agent]["seq"] = seq
        if seqs:
            self.state.head_seq = self.store.head()
        for outcome, artifact_set, record in staged:
            self._finalize(outcome, artifact_set, record)
        self._update_session(staged)

    def _already_rejected(self, outcome: Outcome, artifact_set: ArtifactSet | None) -> bool:
        last = self.store.last_entry(outcome.agent)
        sha = artifact_set.sha256 if artifact_set else None
        return bool(last and last["action"] == "reject" and last["artifact_sha256"] == sha
                    and last["attempt"] == outcome.attempt)

    def _reload(self) -> None:
        self.state = GraphState(self.session_id)
        from orchestrator.shacl import RdfState

        self.rdf = RdfState()
        self.refresh()

    def _finalize(self, outcome: Outcome, artifact_set: ArtifactSet | None, record: dict[str, Any] | None) -> None:
        agent, paths = outcome.agent, self.paths
        if outcome.status in ("merged", "noop"):
            if outcome.status == "merged" and record is not None:
                self._archive(outcome.seq or 0, record)
            elif outcome.status == "noop":  # a crash after the commit may have left the archive unwritten
                self._archive_if_missing(agent)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(paths.lock(agent))
            for stale in (paths.lock_error(agent), paths.retry_instructions(agent)):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(stale)
            warnings = [p.to_dict() for p in outcome.problems]
            if outcome.status == "merged":
                self.events.emit("merge.committed", f"{agent}: attempt {outcome.attempt} merged as commit "
                                 f"{outcome.seq}", agent=agent, attempt=outcome.attempt, seq=outcome.seq,
                                 warnings=warnings)
            else:
                self.events.emit("merge.noop", f"{agent}: artifact set already merged; lock consumed",
                                 agent=agent, seq=outcome.seq)
        elif outcome.status == "rejected":
            instructions = build_retry_instructions(
                agent, outcome.attempt or 1, self.max_attempts, outcome.problems,
                artifact_set.sizes if artifact_set else {},
            )
            atomic_write_json(paths.retry_instructions(agent), instructions)
            with contextlib.suppress(FileNotFoundError):
                os.replace(paths.lock(agent), paths.lock_error(agent))
            self.events.emit("merge.rejected", f"{agent}: attempt {outcome.attempt} rejected "
                             f"({instructions['error_class']}): {instructions['action_required']}",
                             agent=agent, attempt=outcome.attempt, error_class=instructions["error_class"],
                             problems=[p.to_dict() for p in errors(outcome.problems)])
        else:
            self.events.emit("lock.deferred", f"{agent}: artifact folder changed while reading; will retry",
                             agent=agent)

    def _archive(self, seq: int, record: dict[str, Any]) -> None:
        """Keep the merged files readable with ordinary tools (the store holds the same data)."""
        folder = self.paths.archive / f"{seq:06d}-{record['agent']}"
        for name, data in record["raw"].items():
            from orchestrator.atomic import dumps_pretty

            atomic_write_bytes(folder / name, dumps_pretty(data).encode(), durable=False)

    def _archive_if_missing(self, agent: str) -> None:
        current = self.state.records.get(agent)
        if not current or not current.get("seq"):
            return
        folder = self.paths.archive / f"{current['seq']:06d}-{agent}"
        if not all((folder / name).is_file() for name in current["raw"]):
            self._archive(current["seq"], current)

    def _reconcile_session(self) -> None:
        """Record in session.json the merges a crashed process committed but could not record there.

        Runs under the merge mutex (no commit can race it), once per new head of the ledger.
        """
        if self._session_checked_at == self.state.head_seq:
            return
        known = load_session(self.paths).get("agents", {})
        stale = sorted(agent for agent, record in self.state.records.items()
                       if (known.get(agent) or {}).get("last_commit_seq") != record.get("seq"))
        if stale:
            now = iso_timestamp()

            def apply(data: dict[str, Any]) -> None:
                agents = data.setdefault("agents", {})
                for agent in stale:
                    record = self.state.records[agent]
                    entry = agents.setdefault(agent, {"attempts": 0, "state": "pending",
                                                      "last_commit_seq": None})
                    entry["attempts"] = max(entry.get("attempts", 0), record["attempt"])
                    entry["state"] = "merged"
                    entry["last_commit_seq"] = record.get("seq")
                    entry["updated_at"] = now

            update_session(self.paths, apply)
        self._session_checked_at = self.state.head_seq

    def _update_session(self, staged: list[tuple[Outcome, ArtifactSet | None, dict[str, Any] | None]]) -> None:
        changes = [o for o, _, _ in staged if o.status != "deferred" and AGENT_NAME_RE.fullmatch(o.agent)]
        if not changes:
            return
        now = iso_timestamp()

        def apply(data: dict[str, Any]) -> None:
            agents = data.setdefault("agents", {})
            for outcome in changes:
                entry = agents.setdefault(outcome.agent, {"attempts": 0, "state": "pending", "last_commit_seq": None})
                entry["attempts"] = max(entry.get("attempts", 0), outcome.attempt or 0)
                entry["state"] = "rejected" if outcome.status == "rejected" else "merged"
                if outcome.status == "merged":
                    entry["last_commit_seq"] = outcome.seq
                entry["updated_at"] = now

        update_session(self.paths, apply)
