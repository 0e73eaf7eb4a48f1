"""Reading one agent's artifact folder safely (I/O), before any JSON-level checks.

Untrusted input: symlinks and anything resolving outside the session are rejected,
special files are never opened (a FIFO would block), sizes are checked before reading.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orchestrator.contract.jsonio import parse_json_bytes
from orchestrator.contract.safe_read import UnsafeFile, read_agent_file
from orchestrator.contract.schemas import SchemaRegistry
from orchestrator.model.inputs import InputFile
from orchestrator.model.kinds import COLLECTIONS, wrap_for_schema
from orchestrator.model.layout import SessionPaths
from orchestrator.model.problems import Problem

MAX_FILE_BYTES = 65_536
MAX_AGENT_BYTES = 4 * 1024 * 1024
MAX_FILES = 256


#: (name, size, mtime_ns, ctime_ns, inode) of each entry of an artifact folder (folder_fingerprint)
Fingerprint = tuple[tuple[str, int, int, int, int], ...]


@dataclass(frozen=True)
class ArtifactSet:
    agent: str
    files: tuple[InputFile, ...]
    sizes: dict[str, int]
    problems: tuple[Problem, ...]
    notes: tuple[Problem, ...]
    sha256: str
    fingerprint: Fingerprint

    @property
    def ok(self) -> bool:
        return not any(p.is_error for p in self.problems)


def folder_fingerprint(folder: Path) -> Fingerprint:
    """(name, size, mtime_ns, ctime_ns, inode) of each entry: detects a folder still being written.

    The change time too: a rewrite that keeps the size and sets the modification time back still
    moves it (``utime`` cannot set it).
    """
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except (FileNotFoundError, NotADirectoryError):
        return ()
    result = []
    for entry in entries:
        try:
            info = entry.stat(follow_symlinks=False)
        except FileNotFoundError:
            continue
        result.append((entry.name, info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino))
    return tuple(result)


def set_sha256(files: Iterable[tuple[str, str]]) -> str:
    digest = hashlib.sha256()
    for name, sha in sorted(files):
        digest.update(f"{name}\0{sha}\n".encode())
    return digest.hexdigest()


def _read_limited(root: Path, path: Path, limit: int, rel: str) -> bytes:
    return read_agent_file(root, path, limit, shown=rel)


_JSON_KINDS = {list: "an array", str: "a string", bool: "a boolean", int: "a number", float: "a number"}


def _validate_collections(registry: SchemaRegistry, data: dict[str, Any], rel: str) -> list[Problem]:
    """Items under a collection key of a free-form file (``claims-2.json``) enter the graph too.

    Check them against the schema of that collection's own file, so that ``claims-2.json`` is held
    to the same rules as ``claims.json`` (pointers are the same: the wrapper keeps the key).
    """
    problems: list[Problem] = []
    for key in COLLECTIONS:
        if key not in data:
            continue
        wrapper, schema_file = wrap_for_schema(key, data[key])
        problems.extend(registry.validate_artifact(schema_file, wrapper, rel))
    return problems


def read_artifact_set(
    paths: SessionPaths, agent: str, registry: SchemaRegistry, required_files: Iterable[str] = ()
) -> ArtifactSet:
    folder = paths.agent_artifacts(agent)
    rel_folder = paths.rel(folder)
    problems: list[Problem] = []
    notes: list[Problem] = []
    files: list[InputFile] = []
    sizes: dict[str, int] = {}
    fingerprint = folder_fingerprint(folder)

    def done() -> ArtifactSet:
        sha = set_sha256((f.name, f.sha256) for f in files)
        return ArtifactSet(agent, tuple(files), sizes, tuple(problems), tuple(notes), sha, fingerprint)

    def fail(rule: str, message: str, hint: str, file: str | None = rel_folder) -> ArtifactSet:
        problems.append(Problem(file, "", rule, message, hint))
        return done()

    if folder.is_symlink() or paths.artifacts.is_symlink():
        return fail("path.symlink", f"{rel_folder} is a symbolic link", "make it a real folder inside the session")
    if folder.exists() and not folder.is_dir():
        return fail("path.not_folder", f"{rel_folder} is a file, not a folder",
                    f"remove the file {rel_folder} and write the agent's JSON files into a folder of that name")
    if not folder.is_dir():
        return fail(
            "artifacts.missing_folder",
            f"the lock {agent}.kg.lock exists but there is no artifact folder {rel_folder}/",
            f"write the agent's JSON files into {rel_folder}/ before creating the lock",
        )
    root = paths.root.resolve()
    if not folder.resolve().is_relative_to(root):
        return fail("path.outside_session", f"{rel_folder} resolves outside the session folder",
                    "keep artifacts inside the session folder")

    total = 0
    candidates = []
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        shown = entry.name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        rel = f"{rel_folder}/{shown}"
        if shown != entry.name:  # could not be logged, stored or reported as UTF-8
            problems.append(Problem(
                rel, "", "path.invalid_name",
                f"the file name '{shown}' is not valid UTF-8 (undecodable bytes are shown as \\xNN)",
                "rename the file to a UTF-8 name, e.g. claims.json, or remove it"))
        elif entry.name.startswith("."):
            notes.append(Problem(rel, "", "artifacts.ignored", "hidden file ignored", "none needed", "info"))
        elif entry.is_symlink():
            problems.append(Problem(rel, "", "path.symlink", "symbolic links are not accepted as artifacts",
                                    "replace the link with the file's content"))
        elif not entry.is_file(follow_symlinks=False) and entry.name.endswith(".json"):
            what = ("a folder" if entry.is_dir(follow_symlinks=False)
                    else "not a regular file (a FIFO, socket or device)")
            problems.append(Problem(rel, "", "path.not_file", f"{shown} is {what}, where an artifact file belongs",
                                    f"remove it and write {shown} as a regular JSON file"))
        elif not entry.is_file(follow_symlinks=False):
            notes.append(Problem(rel, "", "artifacts.ignored", "not a regular file; ignored", "none needed", "info"))
        elif not entry.name.endswith(".json"):
            notes.append(Problem(rel, "", "artifacts.ignored", "not a .json file; ignored",
                                 "name artifact files *.json if they should be merged", "info"))
        else:
            candidates.append((entry.name, rel, Path(entry.path)))
    if len(candidates) > MAX_FILES:
        return fail("size.too_many_files", f"{len(candidates)} JSON files; at most {MAX_FILES} are accepted",
                    "combine items into fewer files (arrays with the same key are concatenated)")

    for name, rel, path in candidates:
        try:
            raw = _read_limited(paths.root, path, MAX_FILE_BYTES, rel)
        except UnsafeFile as exc:
            problems.append(Problem(rel, "", exc.rule, str(exc), exc.hint))
            continue
        sizes[rel] = len(raw)
        if len(raw) > MAX_FILE_BYTES:
            actual = path.stat().st_size
            sizes[rel] = actual
            problems.append(Problem(rel, "", "size.file_too_large",
                                    f"the file is {actual:,} bytes; the limit is {MAX_FILE_BYTES:,} bytes (64 KiB)",
                                    "split it into several files (arrays under the same key are concatenated) "
                                    "or move long text into sources/<sha256>.txt and cite it",
                                    details={"size": actual, "limit": MAX_FILE_BYTES}))
            continue
        total += len(raw)
        parsed = parse_json_bytes(raw, rel)
        if not parsed.ok:
            problems.extend(parsed.problems)
            continue
        if not isinstance(parsed.value, dict):
            kind = _JSON_KINDS.get(type(parsed.value), "null")
            problems.append(Problem(rel, "", "artifact.not_object",
                                    f"the top level is {kind}; an artifact file must hold a JSON object",
                                    f'wrap the content in an object, e.g. {{"{name.removesuffix(".json")}": [...]}}'))
            continue
        problems.extend(registry.validate_artifact(name, parsed.value, rel))
        if registry.schema_name_for(name) is None:
            problems.extend(_validate_collections(registry, parsed.value, rel))
        files.append(InputFile(name, rel, hashlib.sha256(raw).hexdigest(), parsed.value))

    if total > MAX_AGENT_BYTES:
        problems.append(Problem(rel_folder, "", "size.agent_too_large",
                                f"the agent's files total {total:,} bytes; the limit is {MAX_AGENT_BYTES:,}",
                                "keep artifacts small: move long text into sources/<sha256>.txt"))
    if not candidates:
        ignored = "; ".join(f"{(n.file or '').rsplit('/', 1)[-1]}: {n.message}" for n in notes)
        problems.append(Problem(rel_folder, "", "artifacts.no_json",
                                f"{rel_folder}/ holds no regular .json files"
                                + (f" (ignored: {ignored})" if ignored else ""),
                                "write at least one artifact file (e.g. claims.json) before creating the lock"))
    present = {name for name, _, _ in candidates}
    for required in sorted(set(required_files) - present):
        problems.append(Problem(f"{rel_folder}/{required}", "", "artifacts.missing_required",
                                f"this agent must provide {required}, and it is missing",
                                f"write {rel_folder}/{required} (see schemas/{required.removesuffix('.json')}"
                                ".schema.json) and recreate the lock"))
    return done()
