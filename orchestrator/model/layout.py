"""Where things live: the session folder layout and the packaged resources.

The layout is documented for people in research-sessions/README.md; this module is
the only place that spells the file names, so the two cannot drift apart silently.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from orchestrator.model.errors import ConfigError, InvalidAgentName

AGENT_NAME_RE = re.compile(r"^[a-z][a-z0-9-]{0,63}$")
LOCK_SUFFIX = ".kg.lock"
ERROR_SUFFIX = ".kg.lock.error"
RETRY_SUFFIX = ".retry-instructions.json"
STATE_DIR_NAME = ".cconductor"

#: Top-level keys of knowledge-graph.json that are not agent namespaces.
RESERVED_KEYS = frozenset(
    {
        "schema_version", "session", "generated_at", "commit_seq", "stats",
        "entities", "claims", "sources", "relationships", "gaps", "contradictions",
        "agents", "meta", "provenance", "quality", "report",
        "sections", "figures", "tables", "captions",
    }
)


def check_agent_name(name: str) -> str:
    """Return ``name`` if it may be used as an agent namespace, else raise with the rule."""
    if not AGENT_NAME_RE.fullmatch(name):
        raise InvalidAgentName(
            f"invalid agent name {name!r}: agent names must match {AGENT_NAME_RE.pattern} "
            "(lowercase letter first, then up to 63 lowercase letters, digits or hyphens); "
            "rename the artifact folder and the lock file accordingly"
        )
    if name in RESERVED_KEYS:
        raise InvalidAgentName(
            f"agent name {name!r} is reserved because it is a top-level key of knowledge-graph.json; "
            f"choose another name (for example '{name}-agent')"
        )
    return name


#: Longest file name most file systems accept (bytes).
NAME_MAX = 255


#: Bytes of an over-long name kept before its hash in :func:`fitting_name`.
KEPT_BYTES = 120


def name_bytes(name: str) -> int:
    """Length of ``name`` as a file system counts it: UTF-8 bytes (an undecodable byte read from a folder
    listing, kept by Python as a surrogate escape, is one byte)."""
    return len(name.encode("utf-8", "surrogateescape"))


def clip_name(name: str, limit: int) -> str:
    """The longest start of ``name`` whose UTF-8 form has at most ``limit`` bytes, never cutting a character
    (file-name limits count bytes: 120 characters of 'é' are 240 bytes)."""
    if name_bytes(name) <= limit:
        return name
    kept = 0
    for end, char in enumerate(name):
        kept += name_bytes(char)
        if kept > limit:
            return name[:end]
    return name


def fitting_name(name: str) -> str:
    """``name``, or a shortened unique form when a file named after it could not exist (an over-long lock name).

    Every file named after an agent (``<agent>.kg.lock.error``, ``<agent>.retry-instructions.json``, the
    repair memory's ``<agent>.pending.json``) takes its name from this: with the longest of those suffixes,
    it fits in :data:`NAME_MAX` bytes whatever the characters. Valid agent names (at most 64 characters)
    are never changed.
    """
    if name_bytes(name) + len(RETRY_SUFFIX) <= NAME_MAX:
        return name
    digest = hashlib.sha256(name.encode("utf-8", "surrogateescape")).hexdigest()[:12]
    return f"{clip_name(name, KEPT_BYTES)}...{digest}"


@dataclass(frozen=True)
class SessionPaths:
    """Every path inside one session folder."""

    root: Path

    @property
    def session_json(self) -> Path:
        return self.root / "session.json"

    @property
    def kg_json(self) -> Path:
        return self.root / "knowledge-graph.json"

    @property
    def kg_trig(self) -> Path:
        return self.root / "knowledge-graph.trig"

    @property
    def events(self) -> Path:
        return self.root / "events.jsonl"

    @property
    def artifacts(self) -> Path:
        return self.root / "artifacts"

    @property
    def sources(self) -> Path:
        return self.root / "sources"

    @property
    def tasks(self) -> Path:
        return self.root / "tasks"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    @property
    def state(self) -> Path:
        """Hidden internal state: mutexes, the store, the archive. Never matches ``*.kg.lock``."""
        return self.root / STATE_DIR_NAME

    @property
    def mutex(self) -> Path:
        return self.state / "kg.mutex"

    @property
    def session_mutex(self) -> Path:
        return self.state / "session.mutex"

    @property
    def events_mutex(self) -> Path:
        return self.state / "events.mutex"

    @property
    def store_db(self) -> Path:
        return self.state / "store.sqlite3"

    @property
    def archive(self) -> Path:
        return self.state / "archive"

    @property
    def view_marker(self) -> Path:
        return self.state / "views.json"

    def agent_artifacts(self, agent: str) -> Path:
        return self.artifacts / agent

    def lock(self, agent: str) -> Path:
        return self.root / f"{agent}{LOCK_SUFFIX}"

    def lock_error(self, agent: str) -> Path:
        return self.root / f"{fitting_name(agent)}{ERROR_SUFFIX}"

    def retry_instructions(self, agent: str) -> Path:
        return self.root / f"{fitting_name(agent)}{RETRY_SUFFIX}"

    def source_text(self, sha256: str) -> Path:
        return self.sources / f"{sha256}.txt"

    def stored_object(self, sha256: str, suffix: str) -> Path:
        """A content-addressed file beside the texts: a figure's image (``.png``), a table's cells (``.json``)."""
        return self.sources / f"{sha256}{suffix}"

    def rel(self, path: Path) -> str:
        """Path relative to the session folder, with forward slashes, for messages."""
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return str(path)


@cache
def resource_dir(name: str) -> Path:
    """Locate a packaged resource folder (``schemas`` or ``ontology``).

    Installed wheels carry them under ``orchestrator/_resources``; a source checkout
    (editable install) has them at the repository top level.
    """
    here = Path(__file__).resolve().parents[1]  # the orchestrator package
    for candidate in (here / "_resources" / name, here.parent / name):
        if candidate.is_dir():
            return candidate
    raise ConfigError(
        f"cannot find the '{name}' resource folder next to {here}; reinstall cconductor "
        "(pip install --force-reinstall cconductor) or run from a complete source checkout"
    )
