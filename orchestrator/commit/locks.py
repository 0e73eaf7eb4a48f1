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
from collections.abc import Iterable
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


def claim(paths: SessionPaths, agent: str) -> bool:
    """Take the pending lock (if any) for processing; True when a claim now exists for ``agent``.

    An earlier unfinished claim is processed first and the pending lock stays for the next sweep.
    """
    target = claim_path(paths, agent)
    if target.exists():
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
    error_path = paths.lock_error(agent)
    try:
        os.unlink(error_path)
    except IsADirectoryError:
        with contextlib.suppress(OSError):
            os.rmdir(error_path)
    except OSError:
        pass


def error(paths: SessionPaths, agent: str) -> None:
    """The claimed submission was rejected: ``<agent>.kg.lock.error`` tells the agent to read its instructions."""
    for source in (claim_path(paths, agent), paths.lock(agent)):
        try:
            os.replace(source, paths.lock_error(agent))
            return
        except FileNotFoundError:
            continue
        except OSError:  # the error path is a non-empty folder: leave it, drop the claim
            with contextlib.suppress(OSError):
                os.unlink(source)
            return
    with contextlib.suppress(OSError):
        paths.lock_error(agent).touch()


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
