"""Meaning, not only words: static sentence embeddings from a model that installs with its weights.

A reader asks "how much money did they make" where the filing says "revenue"; BM25 cannot see
that. WordLlama (MIT, ``pip install wordllama``) ships a 16 MB static token-embedding matrix
(``l2_supercat``, 256 dimensions) and its tokenizer inside its wheel, so nothing is fetched at
run time: a text's vector is the mean of its tokens' vectors, which costs one table lookup per
token (about 10,000 sentences a second on one core). Measured against BM25 and a transformer
(all-MiniLM-L6-v2, which needs torch) in ``benchmarks/bench_retrieval.py``.

The weights and tokenizer are read with ``safetensors`` and ``tokenizers`` (WordLlama's own
dependencies) rather than through ``import wordllama``: that import takes 0.7 s and configures
the root logger (``logging.basicConfig(level=INFO)``), which would print other libraries' log
lines in every agent process. Mean pooling over the attention mask is all its inference does for
this model. Without the package (or with ``CCONDUCTOR_SEMANTIC=off``) retrieval is lexical only.
"""

from __future__ import annotations

import importlib.util
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["MODEL_NAME", "Embedder", "embedder", "normalise_rows"]

MODEL_NAME = "wordllama-l2_supercat-256"
_WEIGHTS = Path("weights") / "l2_supercat_256.safetensors"
_TOKENIZER = Path("tokenizers") / "l2_supercat_tokenizer_config.json"
_MAX_TOKENS = 256  # a unit is a sentence or a table row; a longer text is its start


def _package_dir() -> Path | None:
    spec = importlib.util.find_spec("wordllama")  # finds the folder without running its __init__
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def normalise_rows(matrix: np.ndarray) -> np.ndarray:
    """Unit-length rows (a zero row stays zero), so a dot product is the cosine."""
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)


class Embedder:
    """Texts -> unit vectors (float32, 256 dimensions) by mean pooling static token embeddings."""

    name = MODEL_NAME

    def __init__(self, table: np.ndarray, tokenizer: Any) -> None:
        self.table = np.ascontiguousarray(table, dtype=np.float32)
        self.tokenizer = tokenizer
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(_MAX_TOKENS)

    @property
    def dim(self) -> int:
        return int(self.table.shape[1])

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        for row, encoding in enumerate(self.tokenizer.encode_batch(texts, add_special_tokens=False)):
            ids = np.clip(np.asarray(encoding.ids, dtype=np.int64), 0, self.table.shape[0] - 1)
            if len(ids):
                out[row] = self.table[ids].mean(axis=0)
        return normalise_rows(out)


@lru_cache(maxsize=1)
def embedder() -> Embedder | None:
    """The shipped model, loaded once per process; None when it is not installed or switched off."""
    if os.environ.get("CCONDUCTOR_SEMANTIC", "").casefold() in ("0", "off", "false", "no"):
        return None
    folder = _package_dir()
    if folder is None or not (folder / _WEIGHTS).is_file() or not (folder / _TOKENIZER).is_file():
        return None
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    table = load_file(str(folder / _WEIGHTS))["embedding.weight"]
    return Embedder(table, Tokenizer.from_file(str(folder / _TOKENIZER)))
