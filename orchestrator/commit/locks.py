"""The life-cycle of a ``<agent>.kg.lock`` signal: pending -> claimed -> consumed | errored.

This module is the only code that renames or deletes locks. An agent creates
``<agent>.kg.lock`` (pending). Before its files are read the processor *claims* it by renaming
it into ``.cconductor/claims/``, so a lock that appears again at the session root while the
claimed submission is being processed is a new submission, processed next, never dropped.
After the commit the claim is *consumed* (merged, already merged) or *errored*: renamed to
``<agent>.kg.lock.error`` beside the retry instructions. A crash leaves the claim in place and
the next processor takes it up again; the ledger makes that repeat harmless.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path

from orchestrator.model.layout import ERROR_SUFFIX, LOCK_SUFFIX, SessionPaths, fitting_name

CLAIMS_DIR_NAME = "claims"


def claims_dir(paths: SessionPaths) -> Path:
    return paths.state / CLAIMS_DIR_NAME


def claim_path(paths: SessionPaths, agent: str) -> Path:
    return claims_dir(paths) / f"{agent}{LOCK_SUFFIX}"


def _names(folder: Path, suffix: str) -> list[str]:
    try:
        entries = list(os.scandir(folder))
    except (FileNotFoundError, NotADirectoryError):
        return []
    return sorted(e.name[: -len(suffix)] for e in entries if e.name.endswith(suffix) and len(e.name) > len(suffix))


def pending(paths: SessionPaths) -> list[str]:
    """Names (possibly invalid) of the locks waiting at the session root."""
    return _names(paths.root, LOCK_SUFFIX)


def claimed(paths: SessionPaths) -> list[str]:
    """Agents whose claimed submission was not finished (a crash, or a sweep still running)."""
    return _names(claims_dir(paths), LOCK_SUFFIX)


def errored(paths: SessionPaths) -> list[str]:
    return _names(paths.root, ERROR_SUFFIX)


def errored_among(signals: Iterable[str], rejected_last: Iterable[str]) -> list[str]:
    """The agents whose last submission was rejected and waits for a fix: a ``.kg.lock.error`` signal is there
    (``signals``: names as :func:`errored` gives them) and the ledger's last decision for the agent is a
    rejection (``rejected_last``). A leftover signal of an agent merged since does not count: the one rule
    ``status``, ``validate`` and the viewer apply."""
    present = set(signals)
    return sorted(agent for agent in rejected_last if fitting_name(agent) in present)


def waiting(paths: SessionPaths) -> list[str]:
    """Every agent with a submission to process: claimed ones first come back, then pending ones."""
    return sorted(set(pending(paths)) | set(claimed(paths)))


def claim_key(paths: SessionPaths, agent: str) -> list[int] | None:
    """The identity of the agent's claim as it lies in ``.cconductor/claims/`` (inode, ctime), None when none:
    recorded with the ledger's decision, so a reader knows a claim left behind by a kill was decided."""
    try:
        info = os.lstat(claim_path(paths, agent))
    except OSError:
        return None
    return [info.st_ino, info.st_ctime_ns]


def decided_claims(paths: SessionPaths, decided: Mapping[str, object]) -> list[str]:
    """The claims still in ``.cconductor/claims/`` whose decision the ledger holds (``decided``: agent -> the
    claim key recorded with its last decision): a processor stopped between its commit and the lock's
    rename. Not waiting: the next sweep only writes their outcome (same verdict, no new entry)."""
    return [agent for agent in claimed(paths)
            if decided.get(agent) is not None and decided.get(agent) == claim_key(paths, agent)]


def claim(paths: SessionPaths, agent: str) -> bool:
    """Take the pending lock (if any) for processing; True when a claim now exists for ``agent``.

    An earlier unfinished claim is processed first and a newer pending lock stays for the next sweep; the
    pending lock that *is* the claim (a kill between the link and the unlink below) goes now, or it would
    stay waiting after the recovering sweep merged its submission.
    """
    target = claim_path(paths, agent)
    if target.exists():
        source = paths.lock(agent)
        with contextlib.suppress(OSError):
            if os.path.samestat(os.lstat(source), os.lstat(target)):
                os.unlink(source)
        return True
    target.parent.mkdir(exist_ok=True)  # never the session's folders above it (a deleted session)
    source = paths.lock(agent)
    # A hard link and an unlink, not a rename: a rename out of the watched folder is an unpaired
    # IN_MOVED_FROM, which watchdog holds back for half a second (to pair it with a move in), and
    # every later event, the next lock included, waits behind it. Under the merge mutex this is as
    # safe as a rename; a crash between the two steps leaves both, and the repeat is a no-op.
    try:
        os.link(source, target, follow_symlinks=False)
    except FileNotFoundError:
        return False
    except OSError:  # no hard links here (or the lock is a folder): a rename does the same job
        try:
            os.replace(source, target)
        except FileNotFoundError:
            return False
        return True
    with contextlib.suppress(FileNotFoundError):
        os.unlink(source)
    return True


def consume(paths: SessionPaths, agent: str) -> None:
    """The claimed submission is merged (or was already): the signal has done its job."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(claim_path(paths, agent))
    clear_error(paths, agent)


def clear_error(paths: SessionPaths, agent: str) -> None:
    """The rejection signal goes; one that is a folder (not ours) goes only if empty, and is ignored otherwise
    (the ledger says whether the agent's last submission was rejected: ``errored_agents``)."""
    _drop(paths.lock_error(agent))


def not_a_file(path: Path) -> str | None:
    """What stands at ``path`` when it is neither absent nor a regular file ("a folder", "a symbolic link",
    ...): something cconductor did not write there and never replaces, renames or deletes."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"unreadable ({exc.strerror or exc})"
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a device file"


def blocked_signal(paths: SessionPaths, agent: str) -> str | None:
    """Why ``<agent>.kg.lock.error`` cannot be cconductor's rejection signal (something else stands there), with
    what to do; None when it is absent or a regular file."""
    kind = not_a_file(paths.lock_error(agent))
    if kind is None:
        return None
    name = paths.lock_error(agent).name
    return (f"{name} is {kind}, not the rejection signal cconductor writes; it was left as it is, so the "
            f"rejection is recorded in the ledger (`cconductor status` shows it) but not signalled there: move "
            f"{name} aside (nothing in it is read), fix the files, then run "
            f"`cconductor retry {paths.root.name} {agent}`")


def error(paths: SessionPaths, agent: str) -> str | None:
    """The claimed submission was rejected: ``<agent>.kg.lock.error`` tells the agent to read its instructions.

    Something other than a file at that name (a folder, a symbolic link, a pipe: not ours) is never
    replaced: the claim goes (the ledger holds the rejection) and the returned note says what to do.
    """
    blocked = blocked_signal(paths, agent)
    for source in (claim_path(paths, agent), paths.lock(agent)):
        if blocked is not None:
            if source == claim_path(paths, agent):
                _drop(source)
            return blocked
        try:
            os.replace(source, paths.lock_error(agent))
            return None
        except FileNotFoundError:
            continue
        except OSError:  # raced by something that is not a file: leave it, drop the claim
            _drop(claim_path(paths, agent))
            return blocked_signal(paths, agent)
    if blocked is None:
        with contextlib.suppress(OSError):
            paths.lock_error(agent).touch()
    return blocked


def _drop(claim: Path) -> None:
    """A claim that is done with: a file (or an empty folder) goes; a folder with content stays put."""
    try:
        os.unlink(claim)
    except IsADirectoryError:
        with contextlib.suppress(OSError):
            os.rmdir(claim)
    except OSError:
        pass


def refuse_resubmit(paths: SessionPaths, agent: str) -> str | None:
    """Why ``cconductor retry`` must not turn the agent's signals into a new submission, or None: something that
    is not a file at ``<agent>.kg.lock.error`` or ``<agent>.kg.lock`` (renaming it into the lock would be judged,
    and rejected, as a folder, using up an attempt)."""
    for path in (paths.lock_error(agent), paths.lock(agent)):
        kind = not_a_file(path)
        if kind is not None:
            return (f"{path} is {kind}, not a signal cconductor wrote; it was left as it is and no attempt was "
                    f"used: move it aside (`mv {path.name} {path.name}.moved` in the session folder), then run "
                    f"`cconductor retry {paths.root.name} {agent}` again")
    return None


def release(paths: SessionPaths, agent: str) -> None:
    """Not decided this time (the folder was still being written): back to pending, unless a newer lock came."""
    source = claim_path(paths, agent)
    if paths.lock(agent).exists():
        with contextlib.suppress(FileNotFoundError):
            os.unlink(source)
        return
    with contextlib.suppress(FileNotFoundError):
        os.replace(source, paths.lock(agent))


def rename_pending(paths: SessionPaths, old: str, new: str) -> None:
    """Give an undecodable lock name a printable one (it is then rejected as an invalid name)."""
    with contextlib.suppress(OSError):
        os.replace(paths.lock(old), paths.lock(new))


def resubmit(paths: SessionPaths, agent: str) -> None:
    """``cconductor retry``: turn ``<agent>.kg.lock.error`` (or nothing) into a pending lock."""
    try:
        os.replace(paths.lock_error(agent), paths.lock(agent))
    except FileNotFoundError:
        paths.lock(agent).touch()


def drop_for_new_attempt(paths: SessionPaths, agent: str) -> None:
    """The orchestrator starts a new attempt of the agent: old signals no longer apply."""
    for stale in (paths.lock_error(agent), paths.lock(agent)):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(stale)
