"""A big batch's artifact sets read and checked in a helper process while the batch is judged.

Reading an agent's files (safe read, strict JSON, sha256, JSON Schema) is ~2 ms of the ~8 ms an
agent costs, and it depends on nothing but the files: a second process (the machine has two cores)
reads the batch's agents in order while this one judges. What it hands back is used only if the
agent's folder still has the fingerprint (name, size, mtime of each entry) the helper took before
reading, checked after the lock is claimed, where the judging itself reads; else the folder is
read again here. So an agent is judged on the files its folder holds when its lock is claimed, as
without the helper. A helper that fails or lags changes nothing: the folder is read here.

The helper also does the two checks that depend only on files, for the sources an agent stores
texts for (:class:`Prechecked`): whether each stored text matches its name, and the verification
of each snippet cited from the agent's own sources (~1 ms an agent, the normalising and searching
of texts). A verification is a function of the snippet, the text, the page and the threshold, so
the judging takes it as is when its own merge asks for that snippet on that text and the text's
file still has the key (size, mtime, inode) the helper read it under; anything else it checks
itself, as without the helper.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orchestrator.contract.artifacts import ArtifactSet, folder_fingerprint
from orchestrator.model.layout import SessionPaths

if TYPE_CHECKING:
    from orchestrator.contract.sourcetexts import FileKey, TextStore

if TYPE_CHECKING:  # imported when a big batch starts the helper (~15 ms a one-shot run need not pay)
    from concurrent.futures import Future, ProcessPoolExecutor

__all__ = ["MIN_BATCH", "Prechecked", "ReadAhead"]

#: Batches smaller than this are read in place (starting the helper costs ~0.2 s once).
MIN_BATCH = 64
#: Agents per helper task: results come back while the rest is still being read.
CHUNK = 16
#: Seconds to wait for a read the helper is doing (longer: the helper is stuck; read in place).
RUNNING_WAIT = 1.0
#: Seconds to wait for any read the helper has not finished (tests set it to use every read).
WAIT = 0.0
#: A watcher's batch of this many locks starts the helper for the waves that follow.
WARM_BATCH = 8


def _warm() -> None:
    """In the helper, at its start: the imports and schemas a read needs, before the first read."""
    import orchestrator.graph.evidence  # noqa: F401
    from orchestrator.contract.schemas import SchemaRegistry

    SchemaRegistry.default()


#: (snippet, sha256 of the text, page or None, threshold)
VerificationKey = tuple[str, str, int | None, float]


@dataclass(frozen=True)
class Prechecked:
    """The helper's checks of an agent's stored texts, as the judging can reuse them."""

    #: texts found usable (they match their name), by sha256, with their file's key
    texts: dict[str, FileKey] = field(default_factory=dict)
    #: ``verify_snippet(snippet, text, page, threshold).to_dict()`` for snippets cited from own sources
    verifications: dict[VerificationKey, dict[str, Any]] = field(default_factory=dict)

    def verification(self, texts: TextStore, threshold: float) -> Callable[[str, str, int | None], Any]:
        """``bind_evidence``'s ``checked_before``: a verification computed here, while its text is unchanged."""
        def checked_before(snippet: str, sha: str, page: int | None) -> dict[str, Any] | None:
            found = None if isinstance(page, bool) else self.verifications.get((snippet, sha, page, threshold))
            if found is None or texts.problem_with(sha, self.texts.get(sha)) is not None:
                return None
            return dict(found)

        return checked_before


@dataclass(frozen=True)
class Read:
    """What the helper hands back for one agent."""

    artifact_set: ArtifactSet
    prechecked: Prechecked


def _read_many(root: str, wanted: list[tuple[str, list[str]]], threshold: float) -> dict[str, Read]:
    """In the helper: each agent's artifact set, as the processor would read it, and its text checks."""
    from orchestrator.contract.artifacts import read_artifact_set
    from orchestrator.contract.schemas import SchemaRegistry
    from orchestrator.contract.sourcetexts import TextStore

    paths, registry = SessionPaths(Path(root)), SchemaRegistry.default()
    texts = TextStore(paths)
    found = {}
    for name, required in wanted:
        artifact_set = read_artifact_set(paths, name, registry, required)
        try:
            prechecked = precheck(artifact_set, texts, threshold)
        except Exception:  # the judging checks this agent's texts itself, as without the helper
            prechecked = Prechecked()
        found[name] = Read(artifact_set, prechecked)
    return found


def precheck(artifact_set: ArtifactSet, texts: TextStore, threshold: float) -> Prechecked:
    """The usable texts of the agent's sources, and its snippets verified against its own sources' texts.

    Verifications stop when the evidence time budget runs out (past it, a result is no longer the
    full check), so the judging checks the rest itself.
    """
    from orchestrator.graph.evidence import Deadline, verify_snippet

    result = Prechecked()
    if not artifact_set.ok:
        return result
    own: dict[str, str] = {}
    for art in artifact_set.files:
        for source in _dicts(art.data.get("sources")):
            sha, local = source.get("content_sha256"), source.get("id")
            if not isinstance(sha, str):
                continue
            if sha not in result.texts:
                looked = texts.look(sha)
                if looked is not None:
                    result.texts[sha] = looked[1]
            if isinstance(local, str) and sha in result.texts:
                own.setdefault(local, sha)
                own.setdefault(f"{artifact_set.agent}:{local}", sha)
    deadline = Deadline()
    for art in artifact_set.files:
        for claim in _dicts(art.data.get("claims")):
            for evidence in _dicts(claim.get("evidence")):
                source_id, locator = evidence.get("source_id"), evidence.get("locator") or {}
                sha = own.get(source_id) if isinstance(source_id, str) else None
                looked = texts.look(sha) if sha else None
                page = locator.get("page") if isinstance(locator, Mapping) else None
                if sha is None or looked is None or isinstance(page, bool):
                    continue
                page = page if isinstance(page, int) else None
                snippet = str(evidence.get("snippet", ""))
                verification = verify_snippet(snippet, looked[0], page, threshold, deadline).to_dict()
                if deadline.expired():
                    return result
                result.verifications[(snippet, sha, page, threshold)] = verification
    return result


def _dicts(value: Any) -> Iterator[Mapping[str, Any]]:
    return (v for v in (value if isinstance(value, list) else ()) if isinstance(v, Mapping))


class ReadAhead:
    """The helper process (started on the first big batch, kept until :meth:`close`) and its results."""

    def __init__(self, paths: SessionPaths, required_files: Callable[[str], Iterable[str]],
                 evidence_threshold: float) -> None:
        self.paths, self.required_files, self.evidence_threshold = paths, required_files, evidence_threshold
        #: batches this big start the helper without using it yet (:meth:`expect_bursts`)
        self.warm_from: int | None = None
        self._pool: ProcessPoolExecutor | None = None
        self._pending: dict[str, Future[dict[str, Read]]] = {}

    def expect_bursts(self, warm_from: int = WARM_BATCH) -> None:
        """Start the helper at the first batch of ``warm_from`` locks (a watcher: a burst comes in waves).

        Starting it takes ~0.5 s, during which the judging reads in place; started on a burst's
        first wave, it is ready for the rest.
        """
        self.warm_from = warm_from

    def start(self, names: list[str]) -> None:
        """Queue these agents' reads (in this order) if the batch is big enough to pay for the helper."""
        self._pending.clear()
        big = len(names) >= MIN_BATCH
        if not big and (self.warm_from is None or len(names) < self.warm_from or self._pool is not None):
            return
        try:
            if self._pool is None:
                import multiprocessing
                from concurrent.futures import ProcessPoolExecutor

                self._pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
                self._pool.submit(_warm)
            for i in range(0, len(names) if big else 0, CHUNK):
                chunk = [(n, list(self.required_files(n))) for n in names[i:i + CHUNK]]
                future = self._pool.submit(_read_many, str(self.paths.root), chunk, self.evidence_threshold)
                self._pending.update((name, future) for name, _ in chunk)
        except Exception:  # no helper (no processes allowed here, a broken pool): read in place
            self._pending.clear()
            self.close()

    def take(self, name: str) -> Read | None:
        """The helper's read of ``name`` if it is ready and the folder has not changed since, else None.

        A read the helper has not started is cancelled (read in place, the helper moves on to
        agents still ahead); one it is doing now is waited for, up to :data:`RUNNING_WAIT` seconds.
        """
        future = self._pending.pop(name, None)
        if future is None or (not WAIT and not future.done() and future.cancel()):
            return None
        from concurrent.futures import wait

        wait([future], timeout=max(WAIT, RUNNING_WAIT))
        if not future.done() or future.cancelled() or future.exception() is not None:
            return None
        found = future.result().get(name)
        if found is None or folder_fingerprint(self.paths.agent_artifacts(name)) != found.artifact_set.fingerprint:
            return None
        return found

    def close(self) -> None:
        pool, self._pool = self._pool, None
        self._pending.clear()
        if pool is not None:
            with contextlib.suppress(Exception):
                pool.shutdown(wait=True, cancel_futures=True)
