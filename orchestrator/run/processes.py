"""Agent process groups: who is still running, and stopping a whole group for certain.

Every agent runs in its own process group (session). A record of the group's leader (pid and
the kernel's start time, so a reused pid is never mistaken for it) is kept in
``.cconductor/pids/<agent>.json`` while the group may live, so that a resumed run never starts
a second copy of an agent into the same folder while the first one still writes there.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from pathlib import Path
from typing import Any

GRACE_SECONDS = 5.0


def start_time(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (Linux), or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
        return int(fields[19])
    except (OSError, IndexError, ValueError):
        return None


def group_alive(pgid: int) -> bool:
    """Does any process of the group still run? Zombies (exited, not yet reaped) do not count."""
    if not os.path.isdir("/proc/self"):
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if len(fields) > 2 and fields[0] != b"Z" and int(fields[2]) == pgid:
            return True
    return False


def write_record(path: Path, pid: int, job_id: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps({"pid": pid, "pgid": pid, "start_time": start_time(pid), "job_id": job_id}))
    os.replace(tmp, path)


def read_record(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("pgid"), int) else None


def still_running(path: Path) -> dict[str, Any] | None:
    """The record, if any process of that agent's group still lives (a stale record of a dead one is dropped)."""
    record = read_record(path)
    if record is None:
        return None
    leader_alive = record.get("start_time") is not None and start_time(record["pid"]) == record["start_time"]
    if leader_alive or group_alive(record["pgid"]):
        return record
    with contextlib.suppress(OSError):
        path.unlink()
    return None


def stop_group(pgid: int, grace: float = GRACE_SECONDS) -> None:
    """SIGTERM the whole group, then SIGKILL what is left after ``grace`` seconds (even if the leader is gone)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if not group_alive(pgid):
            return
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
    for _ in range(40):
        if not group_alive(pgid):
            return
        time.sleep(0.05)
