"""Work done once per document, kept in the user cache folder: parsed files and analysed texts.

Parsing eight PDFs takes about 20 s on a busy 2-core machine and embedding their sentences a
few more; a second run over the same folder, ``ask`` and ``batch`` must not pay that again. Two
content-addressed stores under ``<user cache>/cconductor/documents/``:

- ``files/``: a file's bytes (sha256) -> the Source fields and page texts its reader produced;
- ``units/``: a stored text (its ``content_sha256``) -> its answer candidates, their index terms
  and their embeddings (``.npy``, never a pickle: a cache folder may be shared).

Both keys include a digest of the code that produced the entry, so a changed reader or unit
splitter never serves a stale result. Writes are atomic (a temporary file renamed into place),
so concurrent agent processes at worst compute the same entry twice. A damaged or unreadable
entry is recomputed. ``CCONDUCTOR_DOCUMENT_CACHE=off`` switches the cache off.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import platformdirs

__all__ = ["cache_root", "code_key", "load_entry", "load_matrix", "save_entry", "save_matrix"]


def cache_root() -> Path | None:
    """``<user cache>/cconductor/documents``, or None when switched off."""
    if os.environ.get("CCONDUCTOR_DOCUMENT_CACHE", "").casefold() in ("0", "off", "false", "no"):
        return None
    return platformdirs.user_cache_path("cconductor") / "documents"


@lru_cache(maxsize=8)
def code_key(*modules: str) -> str:
    """A digest of the named modules' source files: an entry made by other code is another entry.

    A bare name is a module of this folder (``"index"``); a dotted one is found by import
    (``"orchestrator.model.terms"``, whose words every index term is made of).
    """
    digest = hashlib.sha256()
    here = Path(__file__).resolve().parent
    for name in modules:
        digest.update(name.encode())
        try:
            digest.update(_source(name).read_bytes() if "." in name else (here / f"{name}.py").read_bytes())
        except OSError:
            digest.update(b"?")
    return digest.hexdigest()[:16]


def _source(module: str) -> Path:
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise OSError(f"no source for {module}")
    return Path(spec.origin)


def _path(kind: str, key: str, suffix: str) -> Path | None:
    root = cache_root()
    return None if root is None else root / kind / key[:2] / f"{key}{suffix}"


def _write(path: Path, data: bytes) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only or full cache folder costs time, never the run


def load_entry(kind: str, key: str, check: Callable[[Any], bool] = lambda _: True) -> Any | None:
    """The JSON entry stored under ``key``, or None (missing, damaged, or failing ``check``)."""
    path = _path(kind, key, ".json")
    if path is None:
        return None
    try:
        value = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    return value if check(value) else None


def save_entry(kind: str, key: str, value: Any) -> None:
    path = _path(kind, key, ".json")
    if path is not None:
        _write(path, orjson.dumps(value))


def load_matrix(kind: str, key: str, rows: int) -> np.ndarray | None:
    """A float32 matrix stored with :func:`save_matrix`, when it has ``rows`` rows."""
    path = _path(kind, key, ".npy")
    if path is None:
        return None
    try:
        matrix = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError):
        return None
    return matrix if matrix.ndim == 2 and matrix.shape[0] == rows and matrix.dtype == np.float32 else None


def save_matrix(kind: str, key: str, matrix: np.ndarray) -> None:
    path = _path(kind, key, ".npy")
    if path is not None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp.npy")
            np.save(tmp, np.asarray(matrix, dtype=np.float32), allow_pickle=False)
            os.replace(tmp, path)
        except OSError:
            pass
