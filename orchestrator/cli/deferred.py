"""Library packages whose initialisation the ``cconductor`` executable defers to their first use.

Why: pyshacl imports two names from rdflib's SPARQL package (a custom-function registry and the
``Query`` class), and importing any module of that package runs its ``__init__``, which builds
the whole SPARQL grammar with pyparsing and scans every installed distribution's entry points:
about 40 ms of a 0.3 s one-shot ``process``, which never runs a SPARQL query (our shapes use
none). So the executable installs :class:`DeferringFinder` first: the first import of a
package named in :data:`DEFERRED` creates its module object as a normal import would
(``__spec__``, ``__path__``, ``__file__``), but does not run its ``__init__``. Its submodules
import normally. The first read of an attribute the module does not have yet (``prepareQuery``,
``CUSTOM_EVALS``, ``Graph.query`` through rdflib's plugins) runs the ``__init__`` in that same
module object, and everything behaves as if it had been imported eagerly.

``importlib.util.LazyLoader`` cannot do this: its modules load on *any* attribute access,
``__path__`` included, which every submodule import reads. Only the executable (and
``python -m orchestrator.cli``) installs the finder; a program importing ``orchestrator`` keeps
the libraries as they are.
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
#: what they import (none reads an attribute of the package at import). Importing any other
#: submodule (``parser``, ``processor``, ``evaluate``...) runs the package's code first, as an
#: eager import would have.
DEFERRED: dict[str, frozenset[str]] = {
    "rdflib.plugins.sparql": frozenset({"datatypes", "operators", "parserutils", "pyparsing_compat", "sparql"}),
}

_LOCK = threading.RLock()


class _Deferred(types.ModuleType):
    """A module made from its spec whose code has not run yet: a missing attribute runs it."""

    def __getattr__(self, name: str) -> Any:
        with _LOCK:
            if type(self) is _Deferred:
                _execute(self)
        return getattr(self, name)


def _execute(module: types.ModuleType) -> None:
    """Run the module's own code in the module object, as its import would have."""
    spec = module.__spec__
    assert spec is not None and isinstance(spec.loader, _DeferringLoader)
    real = spec.loader.real
    module.__class__ = types.ModuleType  # a missing attribute during __init__ is a plain AttributeError
    spec.loader = real
    module.__loader__ = real
    spec._initializing = True  # type: ignore[attr-defined]  # as importlib marks a module being imported
    try:
        real.exec_module(module)
    except BaseException:
        sys.modules.pop(spec.name, None)  # as a failed import: the next import starts afresh
        raise
    finally:
        spec._initializing = False  # type: ignore[attr-defined]


class _DeferringLoader(importlib.abc.Loader):
    """Creates the module as ``real`` would, and leaves its code to :func:`_execute`."""

    def __init__(self, real: importlib.abc.Loader):
        self.real = real

    def create_module(self, spec: ModuleSpec) -> types.ModuleType | None:
        return self.real.create_module(spec)

    def exec_module(self, module: types.ModuleType) -> None:
        module.__class__ = _Deferred


class _Loaded(importlib.abc.Loader):
    """Hands over a module that has run already (see :meth:`DeferringFinder.find_spec`)."""

    def __init__(self, module: types.ModuleType):
        self.module = module

    def create_module(self, spec: ModuleSpec) -> types.ModuleType:
        return self.module

    def exec_module(self, module: types.ModuleType) -> None:
        pass


def _package_first(package: types.ModuleType, fullname: str) -> ModuleSpec | None:
    """Run a deferred package's code before one of its other submodules, as an eager import had.

    The package's code imports that submodule itself (rdflib's SPARQL package imports its
    processor, parser...). The importer that asked for it must then get that same module, not
    run it a second time: it is taken out of ``sys.modules`` and handed over by :class:`_Loaded`.
    """
    with _LOCK:
        if type(package) is _Deferred:
            _execute(package)
    loaded = sys.modules.pop(fullname, None)
    if loaded is None:  # the package did not import it: the other finders find it as usual
        return None
    return ModuleSpec(fullname, _Loaded(loaded), is_package=hasattr(loaded, "__path__"))


class DeferringFinder(importlib.abc.MetaPathFinder):
    """Finds the named packages with the finders after it, and defers their first import's code."""

    def __init__(self, names: frozenset[str] = frozenset(DEFERRED)):
        self.names = set(names)

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: types.ModuleType | None = None) -> ModuleSpec | None:
        parent, _, child = fullname.rpartition(".")
        package = sys.modules.get(parent)
        if isinstance(package, _Deferred) and child not in DEFERRED.get(parent, ()):
            return _package_first(package, fullname)
        if fullname not in self.names:
            return None
        self.names.discard(fullname)  # once: a later import (after a failure, a reload) is ordinary
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec: ModuleSpec | None = finder.find_spec(fullname, path, target)
            if spec is not None:
                if isinstance(spec.loader, importlib.abc.Loader) and hasattr(spec.loader, "exec_module"):
                    spec.loader = _DeferringLoader(spec.loader)
                return spec
        return None


def install() -> None:
    """Defer :data:`DEFERRED` in this process (no-op for a package already imported)."""
    pending = frozenset(name for name in DEFERRED if name not in sys.modules)
    if pending and not any(isinstance(f, DeferringFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, DeferringFinder(pending))
