"""Which executor runs a session's agents: ``local`` processes, or a Dask cluster.

``--executor`` wins, then ``"executor"`` in the user's ``config.json`` (``<user config
dir>/cconductor/config.json``), then ``local``. Caps per resource (``llm=4``) come from
``--cap`` or the config's ``"caps"``. Dask is imported only when a Dask executor is chosen,
so ``cconductor --help`` and local runs never pay for it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from orchestrator.model.errors import ConfigError, UsageError
from orchestrator.run.executor import Executor, LocalExecutor

CONNECT_TIMEOUT_SECONDS = 10.0
SPEC_HELP = "local (default), dask-local (a Dask cluster inside this process) or dask://HOST:PORT"


def config_path() -> Path:
    import platformdirs

    return platformdirs.user_config_path("cconductor") / "config.json"


def _config() -> dict[str, Any]:
    path = config_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: not readable as JSON ({exc}); fix or remove the file") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: must hold a JSON object, e.g. {{\"executor\": \"dask://host:8786\"}}")
    return data


def parse_caps(values: tuple[str, ...] | list[str]) -> dict[str, int]:
    """``("llm=4",)`` -> ``{"llm": 4}``; a malformed value is a usage error naming it."""
    caps: dict[str, int] = {}
    for value in values:
        name, _, number = value.partition("=")
        if not name.strip() or not number.strip().isdigit() or int(number) < 1:
            raise UsageError(f"--cap {value!r}: write RESOURCE=N with N >= 1, e.g. --cap llm=4")
        caps[name.strip()] = int(number)
    return caps


def resolve(spec: str | None, caps: tuple[str, ...] = ()) -> tuple[str, dict[str, int]]:
    """The executor spec and caps in force: command line first, then config.json, then defaults."""
    config = _config()
    chosen = spec or config.get("executor") or "local"
    if not isinstance(chosen, str):
        raise ConfigError(f"{config_path()}: \"executor\" must be a string: {SPEC_HELP}")
    from_config = config.get("caps") or {}
    if not isinstance(from_config, dict):
        raise ConfigError(f"{config_path()}: \"caps\" must be an object such as {{\"llm\": 4}}")
    merged = parse_caps([f"{k}={v}" for k, v in from_config.items()])
    merged.update(parse_caps(caps))
    check_spec(chosen)
    return chosen, merged


def check_spec(spec: str) -> None:
    if spec in ("local", "dask-local") or (spec.startswith("dask://") and len(spec) > len("dask://")):
        return
    raise UsageError(f"--executor {spec!r} is not understood: use {SPEC_HELP}")


def scheduler_address(spec: str) -> str:
    return "tcp://" + spec[len("dask://"):]


def make_executor(spec: str, max_parallel: int, caps: dict[str, int]) -> Executor:
    """A ready executor; the caller closes a Dask one with ``close()`` when the run ends."""
    if spec == "local":
        llm = caps.get("llm")
        return LocalExecutor(min(max_parallel, llm) if llm else max_parallel)
    client, owned = connect(spec, max_parallel)
    from orchestrator.run.dask_executor import DaskExecutor

    return DaskExecutor(client, max_parallel, caps=caps, owned=owned)


def connect(spec: str, threads: int) -> tuple[Any, tuple[Any, ...]]:
    """A Dask client for ``spec`` and what must be closed with it (an in-process cluster)."""
    try:
        import distributed
    except ImportError as exc:
        raise ConfigError(f"--executor {spec} needs Dask: pip install 'cconductor[dask]' ({exc})") from exc
    if spec == "dask-local":
        cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=max(1, threads), processes=False,
                                           dashboard_address=":0")
        return distributed.Client(cluster), (cluster,)
    address = scheduler_address(spec)
    try:
        return distributed.Client(address, timeout=CONNECT_TIMEOUT_SECONDS), ()
    except (OSError, TimeoutError) as exc:
        raise ConfigError(
            f"could not reach the Dask scheduler at {address} within {CONNECT_TIMEOUT_SECONDS:g} s ({exc}); "
            "start it with `dask scheduler` and its workers with `dask worker "
            f"{address}` (docs/scale-out.md), or run with --executor local"
        ) from exc


def close_executor(executor: Executor) -> None:
    close = getattr(executor, "close", None)
    if callable(close):
        close()
