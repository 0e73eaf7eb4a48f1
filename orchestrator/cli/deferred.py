"""Library packages whose initialisation a one-shot ``cconductor process`` defers to their first use.

Why: pyshacl imports two names from rdflib's SPARQL package (a custom-function registry and the
``Query`` class), and importing any module of that package runs its ``__init__``, which builds
the whole SPARQL grammar with pyparsing and scans every installed distribution's entry points:
about 40 ms of a 0.3 s one-shot ``process``, which runs no SPARQL query (our shapes use none).
rdflib imports html5rdf (6 ms) only to know it can read HTML literals.

So :func:`install` puts :class:`DeferringFinder` first on ``sys.meta_path``. The first import
of a package in :data:`DEFERRED` creates its module object as a normal import would
(``__spec__``, ``__path__``, ``__file__``) without running its code. The submodules listed for
it import normally. The first read of a name the module does not have yet (``prepareQuery``,
``CUSTOM_EVALS``) runs its code in that same module object; so does the first import of any
other submodule (rdflib's ``Graph.query`` imports ``sparql.processor``), before that submodule,
as an eager import had. ``importlib.util.LazyLoader`` cannot do this: its modules load on *any*
attribute access, ``__path__`` included, which every submodule import reads.

Only for a command that imports in one thread (``process``; see cli/launch.py): a deferred
package first used by two threads at once, one of them importing, could deadlock on the import
locks, which a long-running command with worker threads must not risk.
"""

from __future__ import annotations

import importlib.abc
import sys
import threading
import types
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from typing import Any

#: Package -> its submodules that may run before the package's own code: those pyshacl imports and
#: what they import (none reads a name of the package at import).
DEFERRED: dict[str, frozenset[str]] = {
    "rdflib.plugins.sparql": frozenset({"datatypes", "operators", "parserutils", "pyparsing_compat", "sparql"}),
    "html5rdf": frozenset(),  # rdflib.term only checks that it imports; its parser runs on an HTML literal
}

_LOCK = threading.RLock()
_RUNNING: set[str] = set()  # deferred modules whose code is running now (under _LOCK)


class _Deferred(types.ModuleType):
    """A module made from its spec whose code has not run yet: a missing attribute runs it."""

    def __getattr__(self, name: str) -> Any:
        _run(self)
        if type(self) is _Deferred:  # its own code, still running, looks for a name it has not set yet
            raise AttributeError(f"partially initialized module {self.__name__!r} has no attribute {name!r}")
        return getattr(self, name)


def _run(module: types.ModuleType) -> None:
    """Run a deferred module's own code in the module object, once, as its import would have."""
    spec = module.__spec__
    assert spec is not None
    with _LOCK:
        if type(module) is not _Deferred or spec.name in _RUNNING:
            return
        assert isinstance(spec.loader, _Deferring)
        real = spec.loader.real
        spec.loader = module.__loader__ = real
        _RUNNING.add(spec.name)
        spec._initializing = True  # type: ignore[attr-defined]  # as importlib marks a module being imported
        try:
            real.exec_module(module)
        except BaseException:
            sys.modules.pop(spec.name, None)  # as a failed import: the next import starts afresh
            raise
        finally:
            spec._initializing = False  # type: ignore[attr-defined]
            _RUNNING.discard(spec.name)
            module.__class__ = types.ModuleType  # type: ignore[assignment]


class _Deferring(importlib.abc.Loader):
    """Creates the module as ``real`` would, and leaves its code to :func:`_run`."""

    def __init__(self, real: Any):
        self.real = real

    def create_module(self, spec: ModuleSpec) -> types.ModuleType | None:
        created: types.ModuleType | None = self.real.create_module(spec)
        return created

    def exec_module(self, module: types.ModuleType) -> None:
        module.__class__ = _Deferred


class _PackageFirst(importlib.abc.Loader):
    """A submodule that needs its deferred package's code to have run (as an eager import had).

    That code imports the submodule itself (rdflib's SPARQL package imports its processor,
    parser...): the module being imported steps out of ``sys.modules`` so that the package's
    import of it runs it, and the importer gets that module (importlib returns what
    ``sys.modules`` holds after ``exec_module``), run once.
    """

    def __init__(self, real: Any, package: types.ModuleType):
        self.real = real
        self.package = package

    def create_module(self, spec: ModuleSpec) -> types.ModuleType | None:
        created: types.ModuleType | None = self.real.create_module(spec)
        return created

    def exec_module(self, module: types.ModuleType) -> None:
        name = module.__name__
        if type(self.package) is _Deferred:
            del sys.modules[name]
            try:
                _run(self.package)
            finally:
                sys.modules.setdefault(name, module)
        if sys.modules[name] is module:  # the package did not import it: run it here
            self.real.exec_module(module)


class DeferringFinder(importlib.abc.MetaPathFinder):
    """Finds modules with the finders after it; defers the named packages' first import."""

    def __init__(self, names: frozenset[str] = frozenset(DEFERRED)):
        self.names = set(names)

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: types.ModuleType | None = None) -> ModuleSpec | None:
        parent, _, child = fullname.rpartition(".")
        package = sys.modules.get(parent)
        first = (isinstance(package, _Deferred) and parent not in _RUNNING
                 and child not in DEFERRED.get(parent, frozenset()))
        if not first and fullname not in self.names:
            return None
        self.names.discard(fullname)  # once: a later import (after a failure, a reload) is ordinary
        spec = self._others(fullname, path, target)
        if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _PackageFirst(spec.loader, package) if first and package else _Deferring(spec.loader)
        return spec

    def _others(self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None) -> ModuleSpec | None:
        for finder in sys.meta_path:
            if finder is not self and hasattr(finder, "find_spec"):
                spec: ModuleSpec | None = finder.find_spec(fullname, path, target)
                if spec is not None:
                    return spec
        return None


def install() -> None:
    """Defer :data:`DEFERRED` in this process (no-op for a package already imported)."""
    pending = frozenset(name for name in DEFERRED if name not in sys.modules)
    if pending and not any(isinstance(f, DeferringFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, DeferringFinder(pending))
