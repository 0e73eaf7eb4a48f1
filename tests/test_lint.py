"""``ruff check .`` and ``mypy`` are clean: both run from the repository root with the config in
pyproject.toml, as a developer (or CI) would run them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def run_tool(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """Run ``python -m <tool>`` with this interpreter, so the tools of the test environment are used."""
    env = {k: v for k, v in os.environ.items() if k not in ("MYPYPATH", "RUFF_CACHE_DIR")}
    env.pop("PYTHONPATH", None)
    try:
        return subprocess.run(
            [sys.executable, "-m", *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired as exc:
        output = f"{exc.stdout or ''}{exc.stderr or ''}"
        pytest.fail(f"`{' '.join(args)}` did not finish within {timeout:.0f} s:\n{output}")


def assert_clean(result: subprocess.CompletedProcess[str], command: str) -> None:
    if "No module named" in result.stderr and result.returncode != 0:
        pytest.fail(f"`{command}` is not installed here; run pip install -e '.[test]'\n{result.stderr}")
    assert result.returncode == 0, (
        f"`{command}` (run in {REPO}) exited with {result.returncode}; fix what it reports:\n"
        f"{result.stdout}{result.stderr}"
    )


def test_ruff_check_is_clean() -> None:
    result = run_tool("ruff", "check", ".", "--no-fix", "--output-format", "full")
    assert_clean(result, "ruff check .")


def test_mypy_is_clean() -> None:
    # No paths: mypy takes `files` (and every other setting) from [tool.mypy] in pyproject.toml.
    result = run_tool("mypy", "--no-color-output")
    assert_clean(result, "mypy")
