"""A minimal cconductor agent: only the standard library, only files (docs/agent-protocol.md).

Run as a separate process by the concurrency and crash tests, or imported for its functions:

    python tests/helpers/agent_writer.py SESSION AGENT [--claims N] [--start-at EPOCH] [--rename-lock]

It stores one source text under ``sources/<sha256>.txt``, writes ``sources.json`` and
``claims.json`` into ``artifacts/AGENT/`` (each file written under a temporary name and renamed,
as a careful agent does), and creates ``AGENT.kg.lock`` last: by a plain create, or with
``--rename-lock`` by writing ``AGENT.kg.lock.tmp`` and renaming it. ``--start-at`` waits until
that wall-clock time first, so that many processes drop their sets at the same moment.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any


def source_text(agent: str) -> str:
    """Two pages (form feed); page 2 holds one sentence per claim the agent may make."""
    facts = " ".join(f"Fact {i} about {agent} is true." for i in range(1, 51))
    return f"Title page of the {agent} notes.\f{facts}"


def artifact_files(agent: str, claims: int = 3) -> dict[str, dict[str, Any]]:
    """Valid artifacts: one source with a stored text, ``claims`` claims quoting page 2 of it."""
    sha = hashlib.sha256(source_text(agent).encode("utf-8")).hexdigest()
    source = {
        "id": "S1",
        "type": "web-page",
        "title": f"Notes of {agent}",
        "url": f"https://example.org/{agent}",
        "content_sha256": sha,
    }
    items = [
        {
            "id": f"C{i}",
            "statement": f"Fact {i} about {agent} is true.",
            "confidence": 0.8,
            "priority": "high" if i == 1 else "medium",
            "evidence": [
                {"source_id": "S1", "snippet": f"Fact {i} about {agent} is true", "locator": {"page": 2}}
            ],
        }
        for i in range(1, claims + 1)
    ]
    return {"sources.json": {"sources": [source]}, "claims.json": {"claims": items}}


#: One text that every ``--shared-text`` agent stores (about 500 KB, so a plain copy takes a while).
SHARED_TEXT = "Shared notes, page one.\f" + " ".join(
    f"Shared fact {i} is true for every agent." for i in range(1, 12_001)
)


def shared_artifact_files(agent: str) -> dict[str, dict[str, Any]]:
    """Valid artifacts citing the one shared text (page 2)."""
    sha = hashlib.sha256(SHARED_TEXT.encode("utf-8")).hexdigest()
    source = {"id": "S1", "type": "web-page", "title": "Shared notes", "url": "https://example.org/shared",
              "content_sha256": sha}
    claim = {"id": "C1", "statement": f"{agent} relies on shared fact 1.", "confidence": 0.8, "priority": "high",
             "evidence": [{"source_id": "S1", "snippet": "Shared fact 1 is true for every agent",
                           "locator": {"page": 2}}]}
    return {"sources.json": {"sources": [source]}, "claims.json": {"claims": [claim]}}


def write_shared(session: Path, agent: str) -> None:
    """Store the shared text the way the protocol's naive shell example did (cp: truncate, then write)."""
    data = SHARED_TEXT.encode("utf-8")
    (session / "sources").mkdir(exist_ok=True)
    with open(session / "sources" / f"{hashlib.sha256(data).hexdigest()}.txt", "wb") as handle:
        for start in range(0, len(data), 65_536):
            handle.write(data[start : start + 65_536])
            handle.flush()
    folder = session / "artifacts" / agent
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in shared_artifact_files(agent).items():
        _write_atomic(folder / name, json.dumps(content).encode("utf-8"))
    (session / f"{agent}.kg.lock").touch()


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def write_agent(
    session: Path, agent: str, claims: int = 3, *, rename_lock: bool = False, lock: bool = True
) -> None:
    text = source_text(agent).encode("utf-8")
    (session / "sources").mkdir(exist_ok=True)
    _write_atomic(session / "sources" / f"{hashlib.sha256(text).hexdigest()}.txt", text)
    folder = session / "artifacts" / agent
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in artifact_files(agent, claims).items():
        _write_atomic(folder / name, json.dumps(content, indent=1).encode("utf-8"))
    if not lock:
        return
    if rename_lock:
        tmp = session / f"{agent}.kg.lock.tmp"
        tmp.touch()
        os.replace(tmp, session / f"{agent}.kg.lock")
    else:
        (session / f"{agent}.kg.lock").touch()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("session", type=Path)
    parser.add_argument("agent")
    parser.add_argument("--claims", type=int, default=3)
    parser.add_argument("--start-at", type=float, default=0.0)
    parser.add_argument("--rename-lock", action="store_true")
    parser.add_argument("--shared-text", action="store_true", help="store one text shared by all agents, with cp")
    args = parser.parse_args(argv)
    delay = args.start_at - time.time()
    if delay > 0:
        time.sleep(delay)
    if args.shared_text:
        write_shared(args.session, args.agent)
        return 0
    write_agent(args.session, args.agent, args.claims, rename_lock=args.rename_lock)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
