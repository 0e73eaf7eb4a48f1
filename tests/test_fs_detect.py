"""Network file systems are detected from /proc/mounts content, and the watcher polls there by itself."""

from __future__ import annotations

from pathlib import Path

import pytest
from watchdog.observers.polling import PollingObserver

from orchestrator.commit import fs_detect
from orchestrator.commit.processor import Processor
from orchestrator.model.layout import SessionPaths
from orchestrator.session.events import read_events
from tests.helpers.agent_writer import write_agent
from tests.helpers.watching import merged, running_watcher, wait_for

MOUNTS = """\
sysfs /sys sysfs rw,nosuid 0 0
/dev/sda1 / ext4 rw,relatime 0 0
server:/export/lab /mnt/lab nfs4 rw,vers=4.2,actimeo=1 0 0
//nas/share /mnt/lab/smb cifs rw,vers=3.0 0 0
sshfs#me@host: /home/me/remote fuse.sshfs rw 0 0
/dev/sdb1 /mnt/lab/local\\040disk ext4 rw 0 0
tmpfs /tmp tmpfs rw 0 0
"""


@pytest.mark.parametrize(
    ("path", "fstype", "remote"),
    [
        ("/mnt/lab/sessions/s1", "nfs4", True),
        ("/mnt/lab", "nfs4", True),
        ("/mnt/lab/smb/x", "cifs", True),
        ("/mnt/labs/x", "ext4", False),  # a sibling sharing a name prefix is not inside /mnt/lab
        ("/home/me/remote/session", "fuse.sshfs", True),
        ("/mnt/lab/local disk/s", "ext4", False),  # octal escape for the space is decoded
        ("/tmp/s", "tmpfs", False),
        ("/var/data", "ext4", False),
    ],
)
def test_the_longest_mount_prefix_gives_the_fstype(path: str, fstype: str, remote: bool) -> None:
    assert fs_detect.fstype_of(Path(path), MOUNTS) == fstype
    assert (fs_detect.polling_reason(Path(path), MOUNTS) is not None) is remote


def test_a_later_mount_over_the_same_point_wins() -> None:
    stacked = "/dev/sda1 / ext4 rw 0 0\n/dev/sdb /data ext4 rw 0 0\nsrv:/d /data nfs rw 0 0\n"
    assert fs_detect.fstype_of(Path("/data/s"), stacked) == "nfs"


def test_unreadable_or_malformed_mounts_never_force_polling(tmp_path: Path) -> None:
    assert fs_detect.fstype_of(Path("/x"), "garbage\n\n") is None
    assert fs_detect.polling_reason(Path("/x"), "") is None


def _fake_mounts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, folder: Path, fstype: str) -> None:
    mounts = tmp_path / "mounts"
    mounts.write_text(f"/dev/sda1 / ext4 rw 0 0\nsrv:/export {folder.resolve()} {fstype} rw 0 0\n")
    monkeypatch.setattr(fs_detect, "PROC_MOUNTS", mounts)


def test_the_watcher_polls_by_itself_on_nfs_and_says_so(
    session: SessionPaths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _fake_mounts(tmp_path, monkeypatch, session.root.parent, "nfs4")
    processor = Processor(session)
    lines: list[str] = []
    try:
        with running_watcher(processor, rescan_interval=3600, report=lines.append) as (watcher, _):
            assert watcher.polling
            write_agent(session.root, "remote")
            wait_for(lambda: "remote" in merged(session), "the lock to be found by the polling observer")
    finally:
        processor.close()
    assert len(lines) == 1 and "nfs4" in lines[0] and "polling" in lines[0]
    events = [e for e in read_events(session.events) if e["type"] == "watch.polling"]
    assert [e["data"]["fstype"] for e in events] == ["nfs4"]
    started = [e for e in read_events(session.events) if e["type"] == "watch.started"]
    assert started[-1]["data"]["polling"] is True


def test_the_watcher_keeps_inotify_on_a_local_disk(
    session: SessionPaths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_mounts(tmp_path, monkeypatch, session.root.parent, "ext4")
    processor = Processor(session)
    lines: list[str] = []
    try:
        with running_watcher(processor, rescan_interval=3600, report=lines.append) as (watcher, _):
            assert not watcher.polling
    finally:
        processor.close()
    assert lines == [] and not any(e["type"] == "watch.polling" for e in read_events(session.events))


def test_polling_observer_class_is_the_one_used(session: SessionPaths, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_mounts(tmp_path, monkeypatch, session.root.parent, "fuse.sshfs")
    processor = Processor(session)
    try:
        from orchestrator.commit.watcher import Watcher

        watcher = Watcher(processor, report=lambda line: None)
        watcher._poll_if_remote(session.root)
        observer = watcher._observer()
        try:
            assert isinstance(observer, PollingObserver)
        finally:
            observer.stop()
            observer.join()
    finally:
        processor.close()
