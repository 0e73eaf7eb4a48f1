"""The viewer tests' session and server: a real offline run over two papers, a real uvicorn in a thread."""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.helpers.data import PAPERS

QUESTION = "How is the quality of summaries evaluated and what limitations are reported?"
PAPER_FILES = ("peerj-cs-118_vespa.pdf", "eacl-2023-main-121_longeval.pdf")


def offline_run(base: Path) -> Path:
    """An offline `cconductor run` over two of the test papers; returns the session folder."""
    inputs = base / "papers"
    inputs.mkdir()
    for name in PAPER_FILES:
        shutil.copy(PAPERS / name, inputs / name)
    sessions = base / "sessions"
    home = base / "home"  # a session-scoped fixture runs before the per-test hermetic environment: its own
    env = {**os.environ, "CCONDUCTOR_SESSIONS_DIR": str(sessions), "HOME": str(home),
           **{var: str(home / var.lower()) for var in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME")}}
    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        env.pop(var, None)
    out = subprocess.run([sys.executable, "-m", "orchestrator.cli", "run", QUESTION, "--mission", "general-research",
                          "--input-dir", str(inputs), "--json"], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    return Path(json.loads(out.stdout.splitlines()[-1])["session"])


def folder_digest(root: Path) -> dict[str, str]:
    """Every entry under ``root``: its kind and, for files, a hash of the content (what 'unchanged' means)."""
    found = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_symlink():
            found[rel] = "link:" + os.readlink(path)
        elif path.is_file():
            found[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
        else:
            found[rel] = "dir"
    return found


class Served:
    """A viewer on a free loopback port, running in this process."""

    def __init__(self, sessions_dir: Path) -> None:
        import uvicorn

        from orchestrator.viewer.app import create_app
        from orchestrator.viewer.serve import address_of, allowed_hosts, bind

        sock = bind("127.0.0.1", 0)
        self.address = address_of(sock)
        self.port = self.address.port
        self.base = f"http://127.0.0.1:{self.port}"
        app = create_app(sessions_dir, allowed_hosts(self.address), lambda: self.server.should_exit)
        config = uvicorn.Config(app, log_level="warning",
                                access_log=False, lifespan="off", timeout_graceful_shutdown=1)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [sock]}, daemon=True)
        self.thread.start()
        import time

        deadline = time.monotonic() + 20
        while not self.server.started:
            assert time.monotonic() < deadline, "the viewer did not start"
            time.sleep(0.02)

    def get(self, path: str, host: str | None = None) -> tuple[int, dict[str, str], bytes]:
        """GET ``path`` exactly as given (no client-side normalisation of dots or escapes)."""
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            connection.putrequest("GET", path, skip_host=True, skip_accept_encoding=True)
            connection.putheader("Host", f"127.0.0.1:{self.port}" if host is None else host)
            connection.endheaders()
            response = connection.getresponse()
            return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
        finally:
            connection.close()

    def json(self, path: str) -> Any:
        status, _, body = self.get(path)
        assert status == 200, (path, status, body[:500])
        return json.loads(body)

    def close(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)


@contextmanager
def served(sessions_dir: Path) -> Iterator[Served]:
    server = Served(sessions_dir)
    try:
        yield server
    finally:
        server.close()
