"""``--executor`` and ``--cap``, shared by ``run``, ``resume`` and ``batch``."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:  # only the commands that run agents need it, not `process` or `status`
    from orchestrator.run.executor import Executor

F = TypeVar("F", bound=Callable[..., Any])


def executor_options(func: F) -> F:
    func = click.option(
        "--cap", "caps", multiple=True, metavar="RESOURCE=N",
        help="At most N jobs holding RESOURCE at once, e.g. --cap llm=4 (API rate limits); repeatable.",
    )(func)
    return click.option(
        "--executor", "executor_spec", default=None, metavar="SPEC",
        help="Where agents run: local (default), dask-local, or dask://HOST:PORT (a running Dask "
             "scheduler); default from \"executor\" in the user config.json. See docs/scale-out.md.",
    )(func)


@contextmanager
def opened_executor(spec: str | None, caps: tuple[str, ...], max_parallel: int) -> Iterator[Executor]:
    """The chosen executor, closed (cluster connection, in-process cluster) when the run ends."""
    from orchestrator.run.executor_choice import close_executor, make_executor, resolve

    chosen, limits = resolve(spec, caps)
    executor = make_executor(chosen, max_parallel, limits)
    try:
        yield executor
    finally:
        close_executor(executor)


R = TypeVar("R")


def bind_events(executor: Executor, runner: R) -> R:
    """Let an executor that re-submits lost jobs say so in the run's event log; returns ``runner``."""
    if hasattr(executor, "notify"):
        executor.notify = runner.events.emit  # type: ignore[attr-defined]
    return runner
