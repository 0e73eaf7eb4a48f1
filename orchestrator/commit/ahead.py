"""What the read-ahead helpers hand back for one agent, and the checks that depend only on files.

A helper process (commit/readahead.py) reads an agent's artifact set, checks its stored texts
(:class:`Prechecked`) and, for a first submission, may judge it whole on its own
(:class:`Speculation`, commit/speculation.py). The judging (commit/evaluation.py) takes each of
these only under the conditions that make it equal to its own result.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from orchestrator.contract.artifacts import ArtifactSet
from orchestrator.contract.sourcetexts import named_texts

if TYPE_CHECKING:
    from orchestrator.contract.sourcetexts import FileKey, TextStore
    from orchestrator.graph.evidence import Deadline
    from orchestrator.model.problems import Problem

__all__ = ["Prechecked", "Read", "Speculation", "Wanted", "precheck"]


#: (snippet, sha256 of the text, page or None, threshold)
VerificationKey = tuple[str, str, int | None, float]


@dataclass(frozen=True)
class Prechecked:
    """The helper's checks of an agent's stored texts, as the judging can reuse them."""

    #: texts found usable (they match their name), by sha256, with their file's key
    texts: dict[str, FileKey] = field(default_factory=dict)
    #: ``verify_snippet(snippet, text, page, threshold).to_dict()`` for snippets cited from own sources
    verifications: dict[VerificationKey, dict[str, Any]] = field(default_factory=dict)
    #: seconds of the submission's evidence time budget these verifications took
    spent_s: float = 0.0

    def deadline(self) -> Deadline:
        """What is left of the submission's evidence time budget: one budget, wherever a check ran."""
        from orchestrator.graph.evidence import Deadline

        return Deadline.resumed(self.spent_s)

    def verification(self, texts: TextStore, threshold: float) -> Callable[[str, str, int | None], Any]:
        """``bind_evidence``'s ``checked_before``: a verification computed here, while its text is unchanged."""
        def checked_before(snippet: str, sha: str, page: int | None) -> dict[str, Any] | None:
            found = None if isinstance(page, bool) else self.verifications.get((snippet, sha, page, threshold))
            if found is None or texts.problem_with(sha, self.texts.get(sha)) is not None:
                return None
            return dict(found)

        return checked_before


@dataclass(frozen=True)
class Speculation:
    """A first submission judged whole by a helper, alone: what the judging here would find, if it is alone here too.

    The helper judged it against an empty graph (no other agent), so the result holds here only if
    the agent still has no record, nobody cites it, its texts are unchanged and the attempt is the
    same (evaluation.Evaluation.adopt); it was kept only if every reference it makes names its own
    items and its graph writes only about its own nodes (speculation.self_contained).
    """

    attempt: int
    #: problems found before SHACL (warnings: a speculation has no error)
    problems: tuple[Problem, ...]
    #: the record to commit (its ``merged_at`` is the time the batch was queued)
    record: dict[str, Any]
    #: SHACL's findings on its focus nodes (warnings only)
    shacl: tuple[Problem, ...]
    #: the stored texts its checks read, by sha256, with their file's key
    texts: dict[str, FileKey]
    #: its named graph as the TriG view writes it (rdf.write.trig_block), UTF-8
    trig: bytes = b""


@dataclass(frozen=True)
class Wanted:
    """One agent a helper is asked to read, and, when ``basis`` is given, to judge on its own."""

    name: str
    required_files: tuple[str, ...]
    #: (attempts so far, artifact sha256 of its last rejection or None): its attempt number follows
    #: (judge.attempt_for); None: it has a record, or no speculation is wanted
    basis: tuple[int, str | None] | None = None
    #: the merge time a speculation records (the time the batch was queued)
    merged_at: str = ""


@dataclass(frozen=True)
class Read:
    """What a helper hands back for one agent."""

    artifact_set: ArtifactSet
    prechecked: Prechecked
    speculation: Speculation | None = None


def precheck(artifact_set: ArtifactSet, texts: TextStore, threshold: float) -> Prechecked:
    """The usable texts of the agent's sources, and its snippets verified against its own sources' texts.

    Verifications stop when the evidence time budget runs out (past it, a result is no longer the
    full check), so the judging checks the rest itself, with what is left of the same budget.
    """
    from orchestrator.graph.evidence import Deadline

    result = Prechecked()
    if not artifact_set.ok:
        return result
    own: dict[str, str] = {}
    for _, _, source, sha in named_texts(artifact_set):
        if sha not in result.texts:
            looked = texts.look(sha)
            if looked is not None:
                result.texts[sha] = looked[1]
        local = source.get("id")
        if isinstance(local, str) and sha in result.texts:
            own.setdefault(local, sha)
            own.setdefault(f"{artifact_set.agent}:{local}", sha)
    deadline = Deadline()
    _verify_own(artifact_set, own, texts, threshold, deadline, result.verifications)
    return dataclasses.replace(result, spent_s=deadline.elapsed())


def _verify_own(artifact_set: ArtifactSet, own: Mapping[str, str], texts: TextStore, threshold: float,
                deadline: Deadline, found: dict[VerificationKey, dict[str, Any]]) -> None:
    """Verify each snippet cited from the agent's own sources into ``found``, until the budget runs out."""
    from orchestrator.graph.evidence import verify_snippet

    for art in artifact_set.files:
        for claim in _dicts(art.data.get("claims")):
            for evidence in _dicts(claim.get("evidence")):
                source_id, locator = evidence.get("source_id"), evidence.get("locator") or {}
                sha = own.get(source_id) if isinstance(source_id, str) else None
                looked = texts.look(sha) if sha else None
                page = locator.get("page") if isinstance(locator, Mapping) else None
                if sha is None or looked is None or isinstance(page, bool):
                    continue
                if isinstance(locator, Mapping) and ("table" in locator or "figure" in locator):
                    continue  # checked against a table or figure by the judging itself
                page = page if isinstance(page, int) else None
                snippet = str(evidence.get("snippet", ""))
                verification = verify_snippet(snippet, looked[0], page, threshold, deadline).to_dict()
                if deadline.expired():
                    return
                found[(snippet, sha, page, threshold)] = verification


def _dicts(value: Any) -> Iterator[Mapping[str, Any]]:
    return (v for v in (value if isinstance(value, list) else ()) if isinstance(v, Mapping))


