"""Driving Debian's headless Chromium from tests (HTML reports are checked in a real browser)."""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
WIDTH, HEIGHT = 1200, 2000


def chromium() -> str:
    found = CHROMIUM if Path(CHROMIUM).is_file() else shutil.which("chromium")
    if not found:
        pytest.fail(
            f"Chromium is not installed ({CHROMIUM} is missing): install it with "
            "'apt-get install -y chromium' (Debian), then run this test again"
        )
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
