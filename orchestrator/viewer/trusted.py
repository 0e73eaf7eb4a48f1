"""The graph every page of the viewer shows: the committed state, never what a file merely says.

``knowledge-graph.json`` is shown as it is only when the ledger vouches for its bytes and every stored
text its evidence was verified against is as it was (:func:`orchestrator.viewer.state.graph_warning`,
the rules ``status`` applies). Otherwise the viewer, which never writes, does in memory what ``status``
does on disk (:func:`orchestrator.commit.committed.read_committed`): it builds the view from the ledger's
records, read without a byte written, with each verification counted against the stored texts as they
are now. So a claim edited into the file is not shown, one edited to ``verified: true`` is shown as the
ledger has it, and evidence resting on a deleted or altered text stops counting, in every count and flag.
Where there is no ledger to build from (missing, damaged, nothing merged), every piece of evidence is
shown unverified (``verified_in_view`` keeps what the file says) and every count of verified evidence is 0.

A build is kept per ledger head and state of the stored texts (one per vouched commit, not per request):
a vouched view costs nothing more than before.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import Any

from orchestrator.commit.vouched import file_key
from orchestrator.model.layout import SessionPaths
from orchestrator.session.ledger_snapshot import read_current_records
from orchestrator.viewer import state
from orchestrator.viewer.files import remember

#: Why a verification is not counted when there is no ledger to count it from.
UNVOUCHED = "not vouched for by the ledger: the view file says so, nothing shows it was validated"


@dataclass(frozen=True)
class Shown:
    """What the pages show: ``graph`` (the committed state), ``warning`` (why the file is not shown as it
    is, None when it is) and ``view`` (the file as read, for ``verified_in_view``)."""

    graph: dict[str, Any]
    warning: str | None
    view: dict[str, Any]
    origin: str  # "view" (the file, vouched for), "ledger" (built from the ledger), "unverified" (no ledger)


_built: dict[SessionPaths, tuple[object, Shown]] = {}
_lock = threading.Lock()
_session_locks: dict[SessionPaths, threading.Lock] = {}


def shown(paths: SessionPaths) -> Shown:
    """The graph the pages show now (raises :class:`~orchestrator.viewer.files.Unreadable` as
    :func:`state.graph` does for a view that cannot be read at all)."""
    view = state.graph(paths)
    warning = state.graph_warning(paths)
    if warning is None:
        return Shown(view, None, view, "view")
    with _lock:
        session_lock = _session_locks.setdefault(paths, threading.Lock())
    with session_lock:  # requests that arrive together wait for one build
        key = (id(view), warning, _texts_key(paths), _ledger_key(paths))
        with _lock:
            cached = _built.get(paths)
        if cached is not None and cached[0] == key:
            return cached[1]
        result = _from_ledger(paths, view, warning) or Shown(_unverified(view), _no_ledger(warning), view,
                                                                 "unverified")
        with _lock:
            remember(_built, paths, (key, result))
        return result


def _texts_key(paths: SessionPaths) -> tuple[Any, ...]:
    """The state of every stored text (a build counts evidence against them as they are)."""
    try:
        names = sorted(os.listdir(paths.sources))
    except OSError:
        return ()
    return tuple((name, tuple(file_key(paths.sources / name) or ())) for name in names)


def _ledger_key(paths: SessionPaths) -> tuple[Any, ...]:
    return tuple(tuple(file_key(p) or ()) for p in (paths.store_db, f"{paths.store_db}-wal"))


def _from_ledger(paths: SessionPaths, view: dict[str, Any], warning: str) -> Shown | None:
    """The view as a flush would write it now, built in memory from the ledger's records; None without them."""
    found = read_current_records(paths.store_db)
    if found is None or found[0] == 0 or not found[1]:
        return None
    head, records = found
    from orchestrator.commit.views import text_rechecker
    from orchestrator.contract.sourcetexts import TextStore
    from orchestrator.graph.unified import build_views

    texts = TextStore(paths)
    entries = state.ledger(paths)
    stamp = next((str(e.get("committed_at")) for e in reversed(entries) if e.get("seq") == head), "")
    session_id = str(state.session(paths).get("id") or view.get("session_id") or paths.root.name)
    graph = build_views(records, session_id, head, stamp, text_rechecker(texts.text), None, namespaces=True,
                        intact=lambda sha: texts.text(sha) is not None)
    return Shown(graph, f"{warning.rstrip('.')}. Shown here: the graph as the ledger holds it, built in memory "
                        "with each snippet counted against the stored texts as they are now.", view, "ledger")


def _no_ledger(warning: str) -> str:
    return (f"{warning.rstrip('.')}. Shown here: the view's items with no evidence counted as verified (there is "
            "no ledger to count it from).")


def _unverified(view: dict[str, Any]) -> dict[str, Any]:
    """The view with every verification turned off (``verified_in_view``: what the file said) and counted so."""
    claims = []
    for claim in view.get("claims") or ():
        if isinstance(claim, dict) and isinstance(claim.get("evidence"), list):
            claim = {**claim, "evidence": [_unverified_item(e) for e in claim["evidence"]]}
        claims.append(claim)
    stats = view.get("stats")
    stats = stats if isinstance(stats, dict) else {}
    return {**view, "claims": claims, "stats": {**stats, "evidence_verified": 0}}


def _unverified_item(evidence: Any) -> Any:
    if not isinstance(evidence, dict):
        return evidence
    check = evidence.get("verification")
    check = check if isinstance(check, dict) else {}
    return {**evidence, "verification": {**check, "verified": False, "verified_in_view": check.get("verified"),
                                         "reason": UNVOUCHED}}
