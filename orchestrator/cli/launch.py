"""The ``cconductor`` executable: the CLI, with the garbage collector set for a short start-up.

Why: a command imports click, rdflib, pyshacl and jsonschema, about 100,000 long-lived objects
(modules, classes, parser grammars). With the default thresholds the cyclic garbage collector
scans them again and again while they are being created (40-50 ms of a 0.4 s one-shot
``process``, one full collection included) and frees nothing. So the executable raises the
first threshold while a command starts, and the command, once its libraries and its session are
loaded, calls :func:`started`: what exists then moves to the permanent generation
(:func:`gc.freeze`) and the thresholds are restored, so later collections look only at what the
work itself allocates. Reference counting still frees every object that is not in a cycle.

A one-shot command that imports in one thread (``process``) also calls :func:`one_shot`: the
executable then defers the parts of libraries it never uses to their first use (cli/deferred.py),
and freezes what it holds once its work is done (:func:`finished`).

Only the executable (and ``python -m orchestrator.cli``) does this: a program or a test that
imports ``orchestrator.cli`` keeps its own collector settings (:func:`started` is then a no-op)
and its libraries as they are.
"""

from __future__ import annotations

import gc

#: First-generation threshold while a command starts (Python's default is 700).
STARTUP_THRESHOLD = 100_000

_saved: tuple[int, int, int] | None = None
_executable = False


def run() -> None:
    """Entry point of the ``cconductor`` command."""
    global _saved, _executable
    _executable = True
    _saved = gc.get_threshold()
    gc.set_threshold(STARTUP_THRESHOLD, _saved[1], _saved[2])
    from orchestrator.cli import main

    main(prog_name="cconductor")


def started() -> None:
    """The command has loaded what it keeps: freeze it and collect normally from now on.

    Commands that never call this (short ones) run with the raised threshold to the end: the
    collector still runs, only less often.
    """
    global _saved
    if _saved is not None:
        gc.freeze()
        gc.set_threshold(*_saved)
        _saved = None


def finished() -> None:
    """A one-shot command has done its work: spare the collector a pass over what it still holds.

    The graph's records are loaded when the views are written (a processor starts without them):
    about 500,000 objects at 50 MB, which the collector would otherwise scan once more when it
    runs again and at the interpreter's exit (~0.35 s), only to free nothing.
    """
    if _executable:
        gc.freeze()


def one_shot() -> None:
    """The command imports its libraries in one thread and exits: defer what it never runs."""
    if _executable:
        from orchestrator.cli import deferred

        deferred.install()
