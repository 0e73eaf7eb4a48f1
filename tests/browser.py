"""Driving Debian's headless Chromium from tests (HTML reports are checked in a real browser)."""

from __future__ import annotations

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
        reason = (f"Chromium is not installed ({CHROMIUM} is missing), so the HTML report is not checked in a real "
                  "browser here: install it with 'apt-get install -y chromium' (Debian) to run this test")
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
