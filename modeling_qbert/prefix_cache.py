"""A frozen encoder prefix computed once: the states of every query and sentence after the embeddings and the first k
encoder layers, kept on disk and read instead of recomputed (`PrefixCache`).

Why it is exact. With ``attention_scope="sentence"`` the query (with its ``[CLS]`` and ``[SEP]``) and each sentence
attend only to themselves, with positions counted from the start of each part (`sentence_scope_inputs`). So, as long as
the embeddings and the first k layers do not change, a part's states after layer k depend on its tokens alone: not on
the window it is packed in, the fold, the seed or any lever that leaves the prefix as it is. Training then runs only
the layers above k, the pooling and the head; k equal to the number of layers trains the head alone.

What a part is, and its key. A window (`QBertProcessor.encode_example`) is cut into the parts the sentence scope
encodes alone: the prefix (every token before the first scored sentence: ``[CLS] [L1] … [SEP]``, positions from 0) and
each scored sentence (positions from 1). Every other token (the closing ``[SEP]``, padding, tokens of a sentence
scored in another window) attends only to itself and feeds no output, so it gets zeros. A part's key hashes its token
ids, its segment ids, which kind it is, and a fingerprint of each of its tokens' embedding rows: the ``[L#]`` rows a new
Q-BERT draws at random for each seed change the query's key, not the sentences'. The folder of a cache is named after
everything else that decides the states: the prefix's other weights (position, segment and LayerNorm embeddings and the
first k layers, to the byte), k, the storage type and this file's format.

On disk. ``<cache_dir>/<fingerprint>-k<k>/`` holds shards: ``shard-*.npy`` (float16 states, one row per token, memory-
mapped when read) and beside each ``shard-*.keys.npy`` (key, first row, length of each part), written after its states
and renamed into place, so a reader never sees half a shard. :meth:`PrefixCache.warm` computes the parts a list of
windows lacks, under a lock of the folder (two runs warming the same folder at once compute each part once). Parts met
in the forward pass that no shard holds are computed there and kept in memory only.

float16 is chosen for the states: they are LayerNorm outputs of order one, so its relative error (about 5e-4) is far
below what training changes, and it halves the disk and page cache (DUC 2006: about 1.1 M tokens, 0.8 GB per k for a
384-wide encoder).

Written here rather than taken from a library: `datasets`' cache keys a whole table by its transform, not the parts of
packed windows, and no library caches encoder states per part of a block-diagonal mask.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

logger = logging.getLogger(__name__)

CACHE_FORMAT = 1
"""Bumped whenever the keys or the files change meaning: a new format never reads an old folder."""
STATE_DTYPE = np.float16
KEY_BYTES = 16
PREFIX_PART, SENTENCE_PART = 0, 1
KEYS_DTYPE = np.dtype([("key", f"V{KEY_BYTES}"), ("offset", "<i8"), ("length", "<i4")])


def default_cache_dir() -> Path:
    """``$WIKIREF_PREFIX_CACHE``, else ``prefix_states`` in the user's cache folder (``$XDG_CACHE_HOME`` or
    ``~/.cache``), under ``wikiref_dataset`` as the project's other caches."""
    if os.environ.get("WIKIREF_PREFIX_CACHE"):
        return Path(os.environ["WIKIREF_PREFIX_CACHE"])
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "wikiref_dataset" / "prefix_states"


@dataclass(frozen=True)
class Part:
    """One part of a window that the sentence scope encodes alone."""

    kind: int  # PREFIX_PART or SENTENCE_PART
    input_ids: tuple[int, ...]
    token_type_ids: tuple[int, ...]

    @property
    def first_position(self) -> int:
        """Positions count from 0 in the prefix (it starts with ``[CLS]``) and from 1 in a sentence (as after one)."""
        return 0 if self.kind == PREFIX_PART else 1


def window_parts(input_ids: Sequence[int], token_type_ids: Sequence[int],
                 sentence_ids: Sequence[int]) -> list[tuple[int, int, Part]]:
    """``(start, end, part)`` of each part of one window (the rule of `sentence_scope_inputs`): the tokens before the
    first scored sentence, then each scored sentence's run of tokens.

    Raises:
        ValueError: a sentence's tokens are not contiguous (no processor of this project packs them so).
    """
    length = len(input_ids)
    parts: list[tuple[int, int, Part]] = []
    first = next((position for position, sentence in enumerate(sentence_ids) if sentence >= 0), length)
    if first:
        parts.append((0, first, Part(PREFIX_PART, tuple(input_ids[:first]), tuple(token_type_ids[:first]))))
    seen: set[int] = set()
    position = first
    while position < length:
        sentence = sentence_ids[position]
        if sentence < 0:
            position += 1
            continue
        end = position
        while end < length and sentence_ids[end] == sentence:
            end += 1
        if sentence in seen:
            raise ValueError(f"sentence {sentence} of a window is split into several runs of tokens: its parts "
                             "cannot be cached")
        seen.add(sentence)
        parts.append((position, end, Part(SENTENCE_PART, tuple(input_ids[position:end]),
                                          tuple(token_type_ids[position:end]))))
        position = end
    return parts


def _digest(*chunks: bytes) -> hashlib.blake2b:
    digest = hashlib.blake2b(digest_size=KEY_BYTES)
    for chunk in chunks:
        digest.update(len(chunk).to_bytes(8, "little"))
        digest.update(chunk)
    return digest


def token_fingerprints(weight: torch.Tensor) -> np.ndarray:
    """One 64-bit fingerprint per embedding row (a universal hash of its float32 bits): a part's key changes when the
    row of any of its tokens changes."""
    bits = weight.detach().to("cpu", torch.float32).contiguous().numpy().view(np.uint32).astype(np.uint64)
    multipliers = np.random.default_rng(20261207).integers(1, 2**63, size=bits.shape[1], dtype=np.uint64) | 1
    with np.errstate(over="ignore"):
        mixed = (bits * multipliers).sum(axis=1, dtype=np.uint64)
        mixed ^= mixed >> np.uint64(29)
        mixed *= np.uint64(0xBF58476D1CE4E5B9)
        mixed ^= mixed >> np.uint64(32)
    return mixed


def prefix_fingerprint(model: Any, layers: int) -> str:
    """The folder name's hash: every weight of the embeddings but the word rows (fingerprinted per token in the keys),
    the first ``layers`` encoder layers (and MPNet's shared position bias: ``model.prefix_modules``), the settings
    that change what they compute (a non-BERT encoder's type and first position too: a BERT folder's name is as it was
    before other encoders), the storage type and format."""
    config = model.config
    settings = (f"format={CACHE_FORMAT};dtype={np.dtype(STATE_DTYPE).name};layers={layers};"
                f"act={config.hidden_act};eps={config.layer_norm_eps};hidden={config.hidden_size};"
                f"heads={config.num_attention_heads}")
    encoder = getattr(config, "encoder_model_type", "bert")
    if encoder != "bert":
        settings += f";encoder={encoder};first_position={model.position_offset}"
    digest = _digest(settings.encode())
    for prefix, module in model.prefix_modules(layers):
        for name, tensor in sorted(module.state_dict().items()):
            if prefix == "embeddings" and name in ("word_embeddings.weight", "position_ids", "token_type_ids"):
                continue
            digest.update(f"{prefix}.{name}:{tuple(tensor.shape)}".encode())
            digest.update(tensor.detach().to("cpu", torch.float32).contiguous().numpy().tobytes())
    return digest.hexdigest()


class PrefixCache:
    r"""
    The states after the embeddings and the first `layers` encoder layers of a Q-BERT model, per part (see the module
    docstring), on disk under `cache_dir`.

    Args:
        model ([`QBertForSentenceScoring`]): the model whose prefix is cached (its weights decide the folder and keys;
            they must not change while the cache is attached: [`QBertForSentenceScoring.set_frozen_prefix`] freezes
            them).
        layers (`int`): k, 1 … the number of encoder layers.
        cache_dir (`str` or `os.PathLike`, *optional*): default [`default_cache_dir`].
        batch_tokens (`int`): about how many tokens one forward pass of the prefix computes (parts of similar length
            batched together, padded).

    Use: `cache.warm(model, windows)` for the windows of a run, then `model.set_frozen_prefix(cache)`.
    """

    def __init__(self, model: Any, layers: int, cache_dir: str | os.PathLike | None = None,
                 batch_tokens: int = 8192) -> None:
        if not 1 <= layers <= model.config.num_hidden_layers:
            raise ValueError(f"layers must be 1 … {model.config.num_hidden_layers} (the encoder's layers), got {layers}")
        self.layers = layers
        self.hidden_size = model.config.hidden_size
        self.batch_tokens = batch_tokens
        self.folder = Path(cache_dir if cache_dir is not None else default_cache_dir()) / (
            f"{prefix_fingerprint(model, layers)[:24]}-k{layers}")
        self._fingerprints = token_fingerprints(model.get_input_embeddings().weight)
        self._index: dict[bytes, tuple[int, int, int]] = {}
        self._shards: list[np.ndarray] = []
        self._shard_names: set[str] = set()
        self._memory: dict[bytes, np.ndarray] = {}
        self.computed_in_forward = 0
        self._load_index()

    # ---- keys and the index ------------------------------------------------------------------------------------

    def key(self, part: Part) -> bytes:
        """The part's 16-byte key (its tokens, segment ids, kind and the fingerprints of its tokens' rows)."""
        ids = np.asarray(part.input_ids, dtype=np.int64)
        return _digest(bytes([part.kind]), ids.astype("<i4").tobytes(),
                       np.asarray(part.token_type_ids, dtype="<i1").tobytes(),
                       self._fingerprints[ids].astype("<u8").tobytes()).digest()

    def _load_index(self) -> None:
        """Read the shards written since the last call (by this process or another)."""
        if not self.folder.is_dir():
            return
        for keys_path in sorted(self.folder.glob("shard-*.keys.npy")):
            name = keys_path.name[: -len(".keys.npy")]
            if name in self._shard_names:
                continue
            states = np.load(self.folder / f"{name}.npy", mmap_mode="r")
            if states.ndim != 2 or states.shape[1] != self.hidden_size:
                raise ValueError(f"{self.folder / name}.npy: states of shape {states.shape}, expected (tokens, "
                                 f"{self.hidden_size}); remove the folder to rebuild it")
            keys = np.load(keys_path)
            shard = len(self._shards)
            self._shards.append(states)
            self._shard_names.add(name)
            for record in keys:
                self._index.setdefault(bytes(record["key"]), (shard, int(record["offset"]), int(record["length"])))

    def __len__(self) -> int:
        return len(self._index) + len(self._memory)

    def __contains__(self, part: Part) -> bool:
        key = self.key(part)
        return key in self._index or key in self._memory

    def _lookup(self, key: bytes) -> np.ndarray | None:
        found = self._index.get(key)
        if found is not None:
            shard, offset, length = found
            return self._shards[shard][offset: offset + length]
        return self._memory.get(key)

    # ---- computing ---------------------------------------------------------------------------------------------

    @torch.no_grad()
    def compute(self, model: Any, parts: Sequence[Part]) -> list[np.ndarray]:
        """The prefix states of ``parts`` (``(tokens, hidden)`` float16 each), computed by ``model``'s embeddings and
        first k layers in eval mode (no dropout), parts of similar length batched together."""
        device = next(model.parameters()).device
        prefix_modules = [module for _, module in model.prefix_modules(self.layers)]
        modes = [module.training for module in prefix_modules]
        for module in prefix_modules:
            module.eval()
        results: list[np.ndarray | None] = [None] * len(parts)
        try:
            order = sorted(range(len(parts)), key=lambda index: len(parts[index].input_ids))
            start = 0
            while start < len(order):
                width = len(parts[order[start]].input_ids)
                end = start + 1
                while end < len(order) and (end - start + 1) * len(parts[order[end]].input_ids) <= self.batch_tokens:
                    end += 1
                chunk = [parts[index] for index in order[start:end]]
                width = max(len(part.input_ids) for part in chunk)
                ids = torch.zeros((len(chunk), width), dtype=torch.long)
                types = torch.zeros_like(ids)
                positions = torch.zeros_like(ids)
                mask = torch.zeros_like(ids)
                for row, part in enumerate(chunk):
                    size = len(part.input_ids)
                    ids[row, :size] = torch.tensor(part.input_ids)
                    types[row, :size] = torch.tensor(part.token_type_ids)
                    positions[row, :size] = torch.arange(part.first_position, part.first_position + size)
                    mask[row, :size] = 1
                ids, types, positions, mask = (tensor.to(device) for tensor in (ids, types, positions, mask))
                hidden = model.encoder_embeddings(ids, types, positions)  # positions as the sentence scope counts
                hidden = model.encoder_layers(hidden, mask, start=0, stop=self.layers)
                values = hidden.float().cpu().numpy().astype(STATE_DTYPE)
                for row, index in enumerate(order[start:end]):
                    results[index] = values[row, : len(parts[index].input_ids)]
                start = end
        finally:
            for module, mode in zip(prefix_modules, modes):
                module.train(mode)
        return results  # type: ignore[return-value]

    @contextmanager
    def _locked(self) -> Iterator[None]:
        self.folder.mkdir(parents=True, exist_ok=True)
        with open(self.folder / ".lock", "a+") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def warm(self, model: Any, windows: Iterable[Mapping[str, Sequence[int]]], shard_parts: int = 20000) -> int:
        """Compute and write to disk the parts of ``windows`` (feature dicts or dataset rows with ``input_ids``,
        ``token_type_ids``, ``sentence_ids``) that the cache lacks; returns how many were computed. Safe to run in
        several processes at once on one folder (a lock: each part is computed once)."""
        wanted: dict[bytes, Part] = {}
        for window in windows:
            types = window.get("token_type_ids") or [0] * len(window["input_ids"])
            for _, _, part in window_parts(window["input_ids"], types, window["sentence_ids"]):
                wanted.setdefault(self.key(part), part)
        with self._locked():
            self._load_index()
            missing = [(key, part) for key, part in wanted.items() if key not in self._index]
            logger.info("frozen prefix (%d layers) in %s: %d parts wanted, %d cached, %d to compute",
                        self.layers, self.folder, len(wanted), len(wanted) - len(missing), len(missing))
            # A run warming the cache holds the lock; one that waits on it has nothing to do: every core computes.
            threads = torch.get_num_threads()
            torch.set_num_threads(max(threads, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                                      else os.cpu_count() or 1))
            try:
                for start in range(0, len(missing), shard_parts):
                    chunk = missing[start: start + shard_parts]
                    self._write_shard([key for key, _ in chunk], self.compute(model, [part for _, part in chunk]))
                    logger.info("frozen prefix: %d of %d parts computed", min(start + shard_parts, len(missing)),
                                len(missing))
            finally:
                torch.set_num_threads(threads)
            self._load_index()
        return len(missing)

    def _write_shard(self, keys: Sequence[bytes], states: Sequence[np.ndarray]) -> None:
        name = f"shard-{uuid.uuid4().hex}"
        lengths = np.array([len(value) for value in states], dtype=np.int64)
        records = np.zeros(len(keys), dtype=KEYS_DTYPE)
        records["key"] = [np.void(key) for key in keys]
        records["offset"] = np.concatenate([[0], np.cumsum(lengths)[:-1]]) if len(keys) else []
        records["length"] = lengths
        data = (np.concatenate(states).astype(STATE_DTYPE) if states
                else np.zeros((0, self.hidden_size), dtype=STATE_DTYPE))
        for suffix, array in ((".npy", data), (".keys.npy", records)):  # the keys last: they make the shard visible
            temporary = self.folder / f".{name}{suffix}.tmp"
            with open(temporary, "wb") as handle:
                np.save(handle, array)
            os.replace(temporary, self.folder / f"{name}{suffix}")

    # ---- the forward pass --------------------------------------------------------------------------------------

    def states(self, model: Any, input_ids: torch.Tensor, token_type_ids: torch.Tensor | None,
               sentence_ids: torch.Tensor) -> tuple[int, torch.Tensor]:
        """``(k, states)``: the batch's states after layer k, ``(batch, sequence, hidden)`` in the model's dtype on its
        device (zeros for tokens outside every part). Parts no shard holds are computed now and kept in memory."""
        ids = input_ids.tolist()
        types = token_type_ids.tolist() if token_type_ids is not None else [[0] * len(row) for row in ids]
        scope = sentence_ids.tolist()
        out = np.zeros((len(ids), len(ids[0]) if ids else 0, self.hidden_size), dtype=np.float32)
        missing: dict[bytes, Part] = {}
        placed: list[tuple[int, int, int, bytes]] = []
        for row, (row_ids, row_types, row_scope) in enumerate(zip(ids, types, scope)):
            for start, end, part in window_parts(row_ids, row_types, row_scope):
                key = self.key(part)
                placed.append((row, start, end, key))
                if key not in self._index and key not in self._memory:
                    missing[key] = part
        if missing:
            self.computed_in_forward += len(missing)
            for key, value in zip(missing, self.compute(model, list(missing.values()))):
                self._memory[key] = value
        for row, start, end, key in placed:
            out[row, start:end] = self._lookup(key)
        parameter = next(model.parameters())
        return self.layers, torch.from_numpy(out).to(device=parameter.device, dtype=parameter.dtype)


__all__ = ["PrefixCache", "Part", "window_parts", "default_cache_dir", "prefix_fingerprint", "token_fingerprints"]
