"""Which file system a folder lives on, and whether inotify can be trusted there.

inotify only reports changes made through the local kernel. On a network or FUSE file
system, files created by another machine (a Dask worker, a cluster node) raise no event,
so the watcher must poll instead. The answer comes from ``/proc/mounts``: the mount point
that is the longest prefix of the folder's real path gives its ``fstype``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

PROC_MOUNTS = Path("/proc/mounts")

#: File systems whose other clients' writes inotify never sees (``fuse.*`` is matched by prefix).
REMOTE_FSTYPES = frozenset({
    "nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "fuse", "fuseblk", "ceph", "glusterfs",
    "lustre", "gpfs", "beegfs", "afs", "ncpfs", "virtiofs", "vboxsf", "davfs", "sshfs", "pvfs2", "orangefs",
})


def _unescape(field: str) -> str:
    """``/proc/mounts`` writes space, tab, newline and backslash as octal escapes (``\\040``)."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def parse_mounts(text: str) -> list[tuple[str, str]]:
    """(mount point, fstype) of each line of ``/proc/mounts`` content; malformed lines are skipped."""
    mounts = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) >= 3:
            mounts.append((_unescape(fields[1]), fields[2]))
    return mounts


def fstype_of(path: Path, mounts_text: str | None = None) -> str | None:
    """The fstype of the mount holding ``path`` (the last matching mount wins, as in the kernel), or None."""
    if mounts_text is None:
        try:
            mounts_text = PROC_MOUNTS.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
    target = os.path.realpath(path)
    best: tuple[int, str] | None = None
    for point, fstype in parse_mounts(mounts_text):
        inside = target == point or target.startswith(point.rstrip("/") + "/")
        if inside and (best is None or len(point) >= best[0]):
            best = (len(point), fstype)
    return best[1] if best else None


def is_remote(fstype: str | None) -> bool:
    return fstype is not None and (fstype in REMOTE_FSTYPES or fstype.startswith(("fuse.", "nfs")))


def polling_reason(path: Path, mounts_text: str | None = None) -> str | None:
    """Why ``path`` must be polled (``"nfs4"`` ...), or None when inotify sees every write there."""
    fstype = fstype_of(path, mounts_text)
    return fstype if is_remote(fstype) else None
