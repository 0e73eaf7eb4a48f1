"""The command group, shared options and error handling.

Exit codes: 0 success; 1 artifacts rejected, graph not conforming, or another failure;
2 usage error (bad arguments, unknown session). Heavy modules are imported inside the
commands so that ``cconductor --help`` starts fast.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Any, TypeVar

import click

from orchestrator import __version__
from orchestrator.model.errors import CconductorError
from orchestrator.model.layout import SessionPaths
from orchestrator.session.record import SESSIONS_DIR_ENV, default_sessions_dir, resolve_session

F = TypeVar("F", bound=Callable[..., Any])


def friendly(func: F) -> F:
    """Turn our exceptions into one clear line on stderr and the documented exit code."""

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except CconductorError as exc:
            click.echo(f"Error: {exc}", err=True)
            sys.exit(exc.exit_code)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except BrokenPipeError:  # the reader went away (`| head`): nothing more to say
            with contextlib.suppress(OSError):
                sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silences the interpreter's flush at exit
            sys.exit(1)
        except OSError as exc:
            where = f"{exc.filename}: " if exc.filename else ""
            click.echo(f"Error: {where}{exc.strerror or exc}; check that path (a file where a folder belongs, "
                       "or the reverse, permissions, free space) and run the command again", err=True)
            sys.exit(1)
        except Exception as exc:
            log = _crash_log(exc)
            click.echo(f"Error: cconductor failed internally ({type(exc).__name__}: {exc}); this is a bug, "
                       f"please report it with the details in {log}", err=True)
            sys.exit(1)

    return wrapper  # type: ignore[return-value]


def _crash_log(exc: BaseException) -> str:
    """Keep the traceback for a bug report, out of the user's terminal."""
    import tempfile
    import traceback

    try:
        with tempfile.NamedTemporaryFile("w", prefix="cconductor-crash-", suffix=".log", delete=False) as handle:
            handle.write("".join(traceback.format_exception(exc)))
            return handle.name
    except OSError:
        return "(no log could be written)"


def emit_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


class Context:
    def __init__(self, sessions_dir: Path):
        self.sessions_dir = sessions_dir

    def session(self, spec: str) -> SessionPaths:
        from orchestrator.session.check import check_session_folder

        paths = resolve_session(spec, self.sessions_dir)
        check_session_folder(paths)
        return paths


pass_ctx = click.make_pass_decorator(Context)
json_option = click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")


#: How `cconductor --help` groups the commands, in this order; a command not named here is listed under "Other".
COMMAND_SECTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Research", ("run", "resume", "batch", "ask", "report", "view")),
    ("Inspect a session", ("status", "sessions", "latest", "validate", "export")),
    ("Drive the artifact pipeline (agents, or you by hand)", ("new", "process", "watch", "retry", "rollback")),
    ("Catalogues", ("missions", "agents", "models", "memory")),
)


class SectionedGroup(click.Group):
    """A command group whose help lists commands by what a user wants to do, not alphabetically."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        order = [name for _, names in COMMAND_SECTIONS for name in names]
        known = set(super().list_commands(ctx))
        return [n for n in order if n in known] + sorted(known - set(order))

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        listed = set(super().list_commands(ctx))
        placed: set[str] = set()
        for title, names in (*COMMAND_SECTIONS, ("Other", tuple(sorted(listed)))):
            rows = []
            for name in names:
                command = self.get_command(ctx, name)
                if name in placed or command is None or command.hidden:
                    continue
                placed.add(name)
                rows.append((name, command.get_short_help_str(limit=formatter.width - 6 - len(name))))
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)


@click.group(cls=SectionedGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="cconductor")
@click.option(
    "--sessions-dir",
    type=click.Path(file_okay=False, path_type=Path),
    envvar=SESSIONS_DIR_ENV,
    default=None,
    help=f"Folder holding research sessions (default ./research-sessions, or ${SESSIONS_DIR_ENV}).",
)
@click.pass_context
def main(ctx: click.Context, sessions_dir: Path | None) -> None:
    """cconductor: a filesystem-driven multi-agent research orchestrator.

    Agents write JSON artifacts into artifacts/<agent>/ of a session folder, then an
    empty <agent>.kg.lock; cconductor validates and merges them into the knowledge
    graph, or writes <agent>.retry-instructions.json saying exactly what to fix.

    SESSION is a session folder path, a session id, or 'latest' (the default where it
    may be left out).

    \b
    Start here:
      cconductor run "What limits the method?" --input-dir papers/
      cconductor ask latest "What limits the method?"

    \b
    Exit codes:
      0    ok (a run that produced its report: completed, or partial with the reason)
      1    artifacts rejected, graph not conforming, a run that failed, or another failure
      2    usage error (bad arguments, unknown session or mission, question too long)
      3    a run stopped because its budget was spent (budget_exhausted)
      130  interrupted (Ctrl-C or SIGTERM); `cconductor resume` continues the run
    """
    ctx.obj = Context(sessions_dir or default_sessions_dir())
