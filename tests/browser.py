"""Driving Debian's headless Chromium from tests (HTML reports are checked in a real browser)."""

from __future__ import annotations

import contextlib
import os
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
WIDTH, HEIGHT = 1200, 2000


#: Set by .ci/run, which installs Chromium: there a missing browser fails the test instead of skipping it.
REQUIRE_ENV = "CCONDUCTOR_REQUIRE_BROWSER"


def chromium() -> str:
    found = CHROMIUM if Path(CHROMIUM).is_file() else shutil.which("chromium")
    if not found:
        reason = (f"Chromium is not installed ({CHROMIUM} is missing), so the HTML report and the viewer are not "
                  "checked in a real browser here: install it with 'apt-get install -y chromium' (Debian) to run "
                  "this test")
        if os.environ.get(REQUIRE_ENV):
            pytest.fail(reason + f" ({REQUIRE_ENV} is set: CI must run the browser checks)")
        pytest.skip(reason)
    return found


def run_chromium(report: Path, profile: Path, *extra: str) -> subprocess.CompletedProcess[bytes]:
    command = [
        chromium(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        *extra,
        report.as_uri(),
    ]
    return subprocess.run(command, capture_output=True, timeout=180, check=False)


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG file"
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


class Browser:
    """Headless Chromium driven over the DevTools protocol on a pipe (--remote-debugging-pipe).

    No WebDriver and no extra package: commands go to the browser's fd 3 and answers come back on
    its fd 4, as JSON messages ended by a NUL byte. One page (target) per Browser.
    """

    def __init__(self, profile: Path, width: int = WIDTH, height: int = 900) -> None:
        import json
        import threading

        self._json = json
        import fcntl

        def high(fd: int) -> int:  # above 9, so that placing it on fd 3 or 4 never overwrites the other end
            moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
            os.close(fd)
            return moved

        to_browser_r, self._to_browser = map(high, os.pipe())
        self._from_browser, from_browser_w = map(high, os.pipe())
        command = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                   "--disable-background-networking", "--disable-component-update", "--disable-sync",
                   "--disable-extensions", "--remote-debugging-pipe", f"--user-data-dir={profile}",
                   f"--window-size={width},{height}", "about:blank"]
        # the shell puts our pipe ends on the fds the browser expects (3: commands in, 4: answers out)
        script = f'exec "$0" "$@" 3<&{to_browser_r} 4>&{from_browser_w} {to_browser_r}<&- {from_browser_w}>&-'
        self.process = subprocess.Popen(["bash", "-c", script, *command], pass_fds=(to_browser_r, from_browser_w),
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._next = 0
        self._answers: dict[int, dict] = {}
        self.events: list[dict] = []
        self._cond = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime"):
            self.call(f"{domain}.enable", session=True)
        self.resize(width, height)

    def _read(self) -> None:
        buffer = b""
        while True:
            try:
                chunk = os.read(self._from_browser, 1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                with self._cond:
                    self._cond.notify_all()
                return
            buffer += chunk
            *messages, buffer = buffer.split(b"\0")
            with self._cond:
                for raw in messages:
                    message = self._json.loads(raw)
                    if "id" in message:
                        self._answers[message["id"]] = message
                    else:
                        self.events.append(message)
                self._cond.notify_all()

    def call(self, method: str, *, session: bool = False, timeout: float = 60, **params: object) -> dict:
        self._next += 1
        number = self._next
        message: dict[str, object] = {"id": number, "method": method, "params": params}
        if session:
            message["sessionId"] = self.session
        os.write(self._to_browser, self._json.dumps(message).encode() + b"\0")
        with self._cond:
            if not self._cond.wait_for(lambda: number in self._answers or self.process.poll() is not None, timeout):
                raise AssertionError(f"Chromium did not answer {method} within {timeout} s")
            if number not in self._answers:
                raise AssertionError(f"Chromium exited while answering {method}")
            answer = self._answers.pop(number)
        if "error" in answer:
            raise AssertionError(f"{method} failed: {answer['error']}")
        return answer.get("result", {})

    def resize(self, width: int, height: int) -> None:
        self.call("Emulation.setDeviceMetricsOverride", session=True, width=width, height=height,
                  deviceScaleFactor=1, mobile=width < 600)

    def go(self, url: str) -> None:
        self.call("Page.navigate", session=True, url=url)

    def js(self, expression: str, *, timeout: float = 30) -> object:
        """The value of ``expression`` in the page (promises awaited)."""
        result = self.call("Runtime.evaluate", session=True, expression=expression, awaitPromise=True,
                           returnByValue=True, timeout=timeout)
        if "exceptionDetails" in result:
            raise AssertionError(f"{expression!r} threw: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait(self, expression: str, what: str, timeout: float = 30) -> object:
        """Poll ``expression`` until it is truthy in the page; fail naming ``what``."""
        import time

        deadline = time.monotonic() + timeout
        while True:
            value = self.js(f"(() => {{ const v = ({expression}); return v instanceof Node ? true : v; }})()")
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
            time.sleep(0.1)

    def key(self, key: str, code: str, keycode: int, *, shift: bool = False, text: str = "") -> None:
        """Press and release a key as a user would (``text``: the character it types, "\r" for Enter)."""
        modifiers = 8 if shift else 0
        for kind in ("keyDown" if text else "rawKeyDown", "keyUp"):
            extra = {"text": text} if text and kind == "keyDown" else {}
            self.call("Input.dispatchKeyEvent", session=True, type=kind, key=key, code=code,
                      windowsVirtualKeyCode=keycode, nativeVirtualKeyCode=keycode, modifiers=modifiers, **extra)

    def screenshot(self) -> bytes:
        import base64

        return base64.b64decode(self.call("Page.captureScreenshot", session=True, format="png")["data"])

    def close(self) -> None:
        with contextlib.suppress(AssertionError):
            self.call("Browser.close", timeout=10)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for fd in (self._to_browser, self._from_browser):
            with contextlib.suppress(OSError):
                os.close(fd)
