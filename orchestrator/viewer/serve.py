"""Running the viewer: a loopback socket, uvicorn on it, and (for ``run --view``) a child process.

The socket is bound before the server starts, so the address printed is the one served (port 0
picks a free port) and the Host header check knows it. ``run --view`` starts the viewer as a
process of its own (its page reads never compete with the run for the interpreter), handing it
the already bound socket; the child stops when its standard input closes, which also happens
when the run dies without a word.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import subprocess
import sys
import threading
import webbrowser
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from orchestrator.model.errors import CconductorError, UsageError

LOOPBACK = "127.0.0.1"


@dataclass(frozen=True)
class Address:
    host: str
    port: int

    def url(self, session: str | None = None) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/" + (f"#/s/{session}" if session else "")


def bind(host: str = LOOPBACK, port: int = 0) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise UsageError(f"cannot listen on {host}:{port} ({exc.strerror or exc}); "
                         "choose another --port, or leave it out to take a free one") from None
    sock.listen(64)
    sock.set_inheritable(True)
    return sock


def address_of(sock: socket.socket) -> Address:
    host, port = sock.getsockname()[:2]
    return Address(host, port)


def is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def allowed_hosts(address: Address) -> list[str]:
    """Host header values the viewer answers (without the port: Starlette compares the name)."""
    if is_loopback(address.host):
        return ["127.0.0.1", "localhost", "[::1]"]
    return [address.host]


def serve(sessions_dir: Path, sock: socket.socket, *, stop_on_stdin_close: bool = False,
          ready: Callable[[], None] = lambda: None, session: str | None = None) -> None:
    """Serve until interrupted (Ctrl-C: a normal end), or until standard input closes when asked to.

    ``ready`` runs once the application is loaded, just before requests are answered: the address
    is announced then, so the first page does not wait for the imports. ``session``, the one the
    page will open, is read and summarised meanwhile, while the browser starts.
    """
    import uvicorn

    from orchestrator.viewer.app import create_app

    servers: list[uvicorn.Server] = []
    app = create_app(sessions_dir, allowed_hosts(address_of(sock)), lambda: bool(servers and servers[0].should_exit))
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off", server_header=False,
                            proxy_headers=False, timeout_graceful_shutdown=1)
    server = uvicorn.Server(config)
    servers.append(server)
    if stop_on_stdin_close:
        def wait_for_eof() -> None:
            with contextlib.suppress(OSError, ValueError):
                while sys.stdin.buffer.read(1):
                    pass
            server.should_exit = True

        threading.Thread(target=wait_for_eof, name="viewer-stdin", daemon=True).start()
    ready()
    if session is not None:
        warm_up_in_background(sessions_dir, session)
    with contextlib.suppress(KeyboardInterrupt):  # uvicorn raises Ctrl-C again once it has shut down
        server.run(sockets=[sock])


def warm_up_in_background(sessions_dir: Path, session: str) -> threading.Thread | None:
    """Read and summarise the session the page will open while the browser starts (None: no such session)."""
    from orchestrator.viewer.files import session_folder
    from orchestrator.viewer.overview import warm_up

    try:
        paths = session_folder(sessions_dir, session)
    except CconductorError:
        return None  # the page says what is wrong with it
    thread = threading.Thread(target=warm_up, args=(paths,), name="viewer-warm-up", daemon=True)
    thread.start()
    return thread


def open_browser(url: str) -> None:
    """Open the page in the user's browser, in the background; a machine without one is fine."""
    threading.Thread(target=lambda: webbrowser.open(url), name="viewer-browser", daemon=True).start()


class BackgroundViewer:
    """``cconductor view`` of one session in a child process, for the duration of a run."""

    def __init__(self, session_root: Path, *, port: int = 0) -> None:
        self.session_root = session_root
        self.sock = bind(LOOPBACK, port)
        self.address = address_of(self.sock)
        self.url = self.address.url(session_root.name)
        command = [sys.executable, "-m", "orchestrator.cli", "--sessions-dir", str(session_root.parent), "view",
                   session_root.name, "--no-browser", "--inherit-socket", str(self.sock.fileno())]
        self.log_path = _log_path()
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=log,
                                            pass_fds=(self.sock.fileno(),), start_new_session=True)
        self.sock.close()  # the child holds it now

    def wait_for_user(self, prompt_out: IO[str]) -> None:
        """Keep the page up until the user presses Enter (or Ctrl-C) or closes the viewer."""
        prompt_out.write(f"viewer: {self.url} stays open; press Enter to close it\n")
        prompt_out.flush()
        with contextlib.suppress(KeyboardInterrupt, EOFError, OSError):
            sys.stdin.readline()

    def close(self) -> None:
        if self.process.stdin is not None:
            with contextlib.suppress(OSError):
                self.process.stdin.close()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=5)


def _log_path() -> Path:
    """The child's stderr goes to the user cache folder: never into the session, never over the live view."""
    import platformdirs

    folder = platformdirs.user_cache_path("cconductor") / "viewer"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / "viewer.log"
