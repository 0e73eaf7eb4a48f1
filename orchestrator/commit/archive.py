"""``.cconductor/archive/<seq>-<agent>/``: each merged artifact set as files, written with the views.

The archive is a readable copy of the ledger (audit with ordinary tools), derived from it like the
views: each committed record's ``raw`` files, pretty-printed. It used to be written on the commit
path, one folder and two or three files per merged agent; on a fresh file system a new folder and
its first files cost up to ~1.5 ms of kernel time each, about as much as judging the agent. So the
views flush writes it, off the commit path, every folder a committed record lacks: a crash loses
nothing, the next flush writes what is missing. A folder is written whole under a hidden name and
renamed into place, so a folder that exists is complete (two processes may race: the first rename
wins, the other's copy is dropped).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from orchestrator.model.layout import SessionPaths
from orchestrator.model.records import Record
from orchestrator.session.atomic import dumps_pretty
from orchestrator.session.events import EventLog

__all__ = ["Archive", "folder_name"]

#: A staging folder this old was left by a process that stopped while writing it.
STALE_STAGING_S = 60.0


def folder_name(seq: int, agent: str) -> str:
    return f"{seq:06d}-{agent}"


class Archive:
    """One per processor: which folders exist (listed once), and the writing of those missing."""

    def __init__(self, paths: SessionPaths) -> None:
        self.paths = paths
        self._present: set[str] | None = None

    def write_missing(self, records: Mapping[str, Record], events: EventLog) -> int:
        """Write the folder of each committed record that has none; returns how many were written.

        A folder that cannot be written is reported (``archive.failed``) and tried again next time.
        """
        present = self._listed()
        written = 0
        for agent, record in records.items():
            seq = record.get("seq")
            if not isinstance(seq, int) or folder_name(seq, agent) in present:
                continue
            try:
                self._write(seq, agent, record["raw"])
            except OSError as exc:
                events.emit("archive.failed", f"{agent}: the readable copy in .cconductor/archive/ could not be "
                            f"written ({exc.strerror or exc}); the ledger holds the merge", agent=agent)
                continue
            present.add(folder_name(seq, agent))
            written += 1
        return written

    def _listed(self) -> set[str]:
        """The folders there, listed once; staging folders a stopped process left (a minute old) go."""
        if self._present is None:
            try:
                names = os.listdir(self.paths.archive)
            except OSError:  # none yet (or not a folder: each write reports it)
                names = []
            self._present = {name for name in names if not name.startswith(".")}
            for name in names:
                if name.startswith("."):
                    self._drop_stale(self.paths.archive / name)
        return self._present

    @staticmethod
    def _drop_stale(staging: Path) -> None:
        with contextlib.suppress(OSError):
            if time.time() - staging.stat().st_mtime > STALE_STAGING_S:
                shutil.rmtree(staging)

    def _write(self, seq: int, agent: str, raw: Mapping[str, Any]) -> None:
        self.paths.archive.mkdir(exist_ok=True)  # never the session's folders above it (a deleted session)
        staging = self.paths.archive / f".{folder_name(seq, agent)}-{uuid.uuid4().hex[:12]}"
        staging.mkdir()
        try:
            for name, data in raw.items():
                with open(os.path.join(staging, name), "wb") as out:
                    out.write(dumps_pretty(data).encode())
            try:
                os.rename(staging, self.paths.archive / folder_name(seq, agent))
            except OSError:
                if not (self.paths.archive / folder_name(seq, agent)).is_dir():
                    raise
                # another process archived it first: its copy stands
        finally:
            if os.path.isdir(staging):
                with contextlib.suppress(OSError):
                    shutil.rmtree(staging)
