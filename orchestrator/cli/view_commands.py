"""``cconductor view``: the local read-only web viewer (docs/viewer.md)."""

from __future__ import annotations

import socket
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from orchestrator.cli.app import Context, friendly, main, pass_ctx


@main.command()
@click.argument("session", required=False)
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="Port to listen on (0: a free one).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on. The viewer has no login: keep it on loopback "
              "unless you know who can reach it.")
@click.option("--no-browser", is_flag=True, help="Print the address without opening a browser.")
@click.option("--inherit-socket", type=int, hidden=True,
              help="Internal (run --view): serve on this listening socket and stop when standard input closes.")
@pass_ctx
@friendly
def view(ctx: Context, session: str | None, port: int, host: str, no_browser: bool,
         inherit_socket: int | None) -> None:
    """Watch sessions in the browser: live timeline, agents, quality, report, sources, graph.

    SESSION (a folder, an id or 'latest') opens that session; without it, the session list of
    --sessions-dir. Read-only: nothing in the session folder is written. Stop with Ctrl-C.

    \b
    Examples:
      cconductor view
      cconductor view latest --port 8080 --no-browser
    """
    from orchestrator.viewer.serve import address_of, bind, is_loopback, open_browser, serve

    sessions_dir, name = ctx.sessions_dir, None
    if session:
        paths = ctx.session(session)
        sessions_dir, name = paths.root.parent, paths.root.name
    if inherit_socket is not None:
        serve(Path(sessions_dir), socket.socket(fileno=inherit_socket), stop_on_stdin_close=True, session=name)
        return
    sock = bind(host, port)
    url = address_of(sock).url(name)

    def announce() -> None:
        if not is_loopback(host):
            click.echo(f"warning: listening on {host}: anyone who can reach it can read these sessions", err=True)
        click.echo(f"cconductor viewer: {url}  (Ctrl-C to stop)")
        if not no_browser:
            open_browser(url)

    serve(Path(sessions_dir), sock, ready=announce, session=name)


view_option = click.option("--view", "with_view", is_flag=True,
                           help="Watch the run in the browser: starts `cconductor view` for this session.")


def start_viewer(session_root: Path, mode: str) -> Any:
    """``run --view``: the session's viewer in a child process, its address printed and opened."""
    from orchestrator.viewer.serve import BackgroundViewer, open_browser

    viewer = BackgroundViewer(session_root)
    click.echo(f"viewer: {viewer.url}", err=mode == "json")  # --json keeps stdout to JSON lines
    open_browser(viewer.url)
    return viewer


def close_viewer(viewer: Any, mode: str, status: str | None) -> None:
    """Stop the run's viewer; at a terminal, once the user has seen the result (Enter closes it)."""
    if mode == "live" and status not in (None, "interrupted") and sys.stdin.isatty():
        viewer.wait_for_user(sys.stdout)
    viewer.close()


def run_with_viewer(session_root: Path, with_view: bool, mode: str, execute: Callable[[], dict[str, Any]],
                    finish: Callable[[dict[str, Any], str], None]) -> None:
    """``run``/``resume``: execute, print the result with ``finish``, and close the viewer (when asked for one)."""
    viewer = start_viewer(session_root, mode) if with_view else None
    status = None
    try:
        result = execute()
        status = result.get("status")
        finish(result, mode)
    finally:
        if viewer is not None:
            close_viewer(viewer, mode, status)
