"""Choosing the executor: --executor, then config.json, then local; caps; clear errors; `run --executor dask-local`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from orchestrator.model.errors import ConfigError, UsageError
from orchestrator.run import executor_choice
from orchestrator.run.executor import LocalExecutor


def write_config(data: object) -> Path:
    path = executor_choice.config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def test_local_is_the_default_and_the_config_entry_is_used() -> None:
    assert executor_choice.resolve(None) == ("local", {})
    write_config({"executor": "dask://scheduler.lab:8786", "caps": {"llm": 4}, "models": {}})
    assert executor_choice.resolve(None) == ("dask://scheduler.lab:8786", {"llm": 4})
    assert executor_choice.resolve("local", ("llm=2", "pdf=1")) == ("local", {"llm": 2, "pdf": 1})


@pytest.mark.parametrize(("config", "fragment"), [
    ({"executor": 8786}, '"executor" must be a string'),
    ({"caps": ["llm=4"]}, '"caps" must be an object'),
    ([], "must hold a JSON object"),
])
def test_a_bad_config_entry_names_the_file_and_the_fix(config: object, fragment: str) -> None:
    path = write_config(config)
    with pytest.raises(ConfigError) as caught:
        executor_choice.resolve(None)
    assert str(path) in str(caught.value) and fragment in str(caught.value)


@pytest.mark.parametrize("spec", ["ray://x:1", "dask://", "dask:/host", "threads"])
def test_an_unknown_executor_is_a_usage_error(spec: str) -> None:
    with pytest.raises(UsageError, match="dask://HOST:PORT"):
        executor_choice.resolve(spec)


@pytest.mark.parametrize("cap", ["llm", "llm=0", "=4", "llm=four"])
def test_a_malformed_cap_is_a_usage_error(cap: str) -> None:
    with pytest.raises(UsageError, match="RESOURCE=N"):
        executor_choice.parse_caps((cap,))


def test_the_llm_cap_lowers_local_parallelism() -> None:
    executor = executor_choice.make_executor("local", 6, {"llm": 2})
    assert isinstance(executor, LocalExecutor) and executor.max_parallel == 2
    assert executor_choice.make_executor("local", 3, {}).max_parallel == 3


def test_an_unreachable_scheduler_fails_fast_with_how_to_start_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(executor_choice, "CONNECT_TIMEOUT_SECONDS", 1.0)
    started = time.monotonic()
    with pytest.raises(ConfigError) as caught:
        executor_choice.make_executor("dask://127.0.0.1:9", 2, {})
    assert "tcp://127.0.0.1:9" in str(caught.value) and "dask scheduler" in str(caught.value)
    assert time.monotonic() - started < 20


def test_run_with_an_in_process_dask_cluster(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "sleep.md").write_text(
        "# Sleep and memory\n\nSleep deprivation reduces working memory performance in adults, according to "
        "several controlled studies of young volunteers.\n")
    env = {**os.environ, "CCONDUCTOR_SESSIONS_DIR": str(tmp_path / "sessions")}
    out = subprocess.run([sys.executable, "-m", "orchestrator.cli", "run", "How does sleep affect memory?",
                          "--input-dir", str(corpus), "--executor", "dask-local", "--cap", "llm=1", "--json"],
                         capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.splitlines()[-1])
    root = Path(result["session"])
    assert result["status"] in ("partial", "completed")
    assert "[ran on " in (root / "logs" / "research-planner-1.log").read_text()  # returned by a worker
    assert not list(root.glob("*.kg.lock"))  # every returned lock was processed
