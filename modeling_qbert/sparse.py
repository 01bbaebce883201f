"""Sparse subnetwork identification (Zhu et al., 2022, §III-F, Table IX), the mask file and the sparse-delta export.

A subnetwork is one boolean mask per *target* parameter (by default every encoder weight *matrix*, `bert.encoder.*`
with two or more dimensions, as the paper selects within parameter matrices): `True` marks an entry that fine-tuning
may change, `False` one that stays bit-identical. Everything that is not a target is fully trainable: the embeddings,
the task head and, unless `include_vectors=True`, the encoder's biases and LayerNorm vectors (a small share of the
encoder, about 0.3% of MiniLM-L6's). Two identification methods:

* `one_step` (the paper's choice): in each target tensor keep the top `fraction` of entries by magnitude, the same
  fraction in every tensor, computed once on the model pre-trained on WikiRef.
* `iterative` (the Table IX ablation): gradual magnitude pruning (Zhu & Gupta 2017) during WikiRef training. The
  trainable share goes from `initial_fraction` down to `fraction` along the cubic schedule
  s_t = s_f + (s_i - s_f)(1 - (t - t0)/(nΔt))^3 (s = sparsity = share of frozen entries = 1 - trainable share);
  every Δt optimizer steps the lowest-magnitude entries of the current subnetwork leave it. As everywhere here,
  entries that leave it are frozen (kept, not zeroed: all weights take part in the forward pass), so masks only ever
  shrink. Unset `end_step` / `update_frequency` are scaled to the run (:meth:`SubnetworkConfig.scaled_to`): t0 + nΔt
  at 75% of its optimizer steps, Δt = max(1, steps // 100), so the final subnetwork trains for the last quarter. The
  mask at the end of that training is saved with the model; fine-tuning loads it as a *fixed* mask (`fixed_mask=True`:
  no further pruning).

Masks are saved as safetensors (`bool` tensors named after the parameters, the config in the metadata) and never
recomputed on resume. A trained model is exported as a sparse delta over its base: for each masked tensor the flat
indices and the new values of the entries that changed, for every other tensor the dense tensor; loading it onto the
base gives the trained model exactly (values are stored, not differences, so nothing is lost to rounding). The entries
it does not store come from the base, so the file records which base (`SparseDeltaBase`: its Hub id and revision when
known, every parameter's dtype and shape, a SHA-256 of the masked tensors) and `apply_sparse_delta` refuses another.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

import torch
from safetensors import safe_open
from safetensors.torch import save_file
from torch import nn

SUBNETWORK_MASK_NAME = "subnetwork_mask.safetensors"
"""File name of the mask inside a checkpoint or output directory."""

SPARSE_DELTA_NAME = "sparse_delta.safetensors"
"""File name of a sparse delta inside an output directory (``finetune_duc.py --save_sparse_delta`` writes it)."""

METHODS = ("one_step", "iterative")
_INDICES = ".__indices__"
_VALUES = ".__values__"
_DENSE = ".__dense__"


SCHEDULE_END_SHARE = 0.75
"""Default end of the iterative schedule (t0 + nΔt): this share of the run's optimizer steps, so that the final
subnetwork still trains for the last quarter of the run."""

SCHEDULE_UPDATES = 100
"""Default pruning period of the iterative schedule: Δt = max(1, steps // 100) optimizer steps."""


@dataclass
class SubnetworkConfig:
    r"""
    Which entries of a Q-BERT model fine-tuning may change.

    Args:
        fraction (`float`, *optional*, defaults to 0.1):
            Share of entries kept trainable in each target tensor (for `iterative`, the share reached at `end_step`).
        method (`str`, *optional*, defaults to `"one_step"`):
            `"one_step"`: top `fraction` by magnitude within each target tensor, once. `"iterative"`: gradual
            magnitude pruning with the cubic schedule of Zhu & Gupta (2017) during training.
        target_parameters (`str`, *optional*, defaults to `r"^bert\.encoder\."`):
            Regular expression (`re.search`) over parameter names selecting the masked tensors. Embeddings and the
            task head must stay outside it: they are always fully trainable.
        include_vectors (`bool`, *optional*, defaults to `False`):
            Whether 1-D target parameters (biases, LayerNorm) are masked too, with the same fraction. By default only
            matrices are masked (the paper selects within parameter matrices) and the vectors stay fully trainable,
            like the embeddings and the head.
        initial_fraction (`float`, *optional*, defaults to 1.0):
            `iterative` only: the trainable share at `begin_step` (1 - s_i).
        begin_step (`int`, *optional*, defaults to 0):
            `iterative` only: t0, the optimizer step of the first pruning update.
        end_step (`int`, *optional*):
            `iterative` only: t0 + nΔt, the step at which the share reaches `fraction`; a multiple of
            `update_frequency` after `begin_step`. `None`: scaled to the run by [`~SubnetworkConfig.scaled_to`]
            (75% of its optimizer steps, rounded down to a whole number of updates).
        update_frequency (`int`, *optional*):
            `iterative` only: Δt, optimizer steps between pruning updates. `None`: scaled to the run
            (max(1, steps // 100); with `end_step` given, the largest divisor of `end_step - begin_step` not above
            max(1, (end_step - begin_step) // 100)).
        fixed_mask (`bool`, *optional*, defaults to `False`):
            The subnetwork is given (e.g. the mask iterative pre-training saved) and stays as it is: no pruning
            update during this training, whatever `method` found it.
    """

    fraction: float = field(default=0.1, metadata={"help": "Share of entries kept trainable in each target tensor."})
    method: str = field(default="one_step", metadata={"help": f"Identification method, one of {METHODS}."})
    target_parameters: str = field(
        default=r"^bert\.encoder\.",
        metadata={"help": "Regular expression over parameter names selecting the masked tensors (embeddings and the "
                          "task head are always fully trainable)."},
    )
    include_vectors: bool = field(
        default=False, metadata={"help": "Mask 1-D target parameters (biases, LayerNorm) too; by default only "
                                         "matrices are masked and the vectors stay fully trainable."}
    )
    initial_fraction: float = field(default=1.0, metadata={"help": "iterative: trainable share at begin_step."})
    begin_step: int = field(default=0, metadata={"help": "iterative: t0, the step of the first pruning update."})
    end_step: int | None = field(default=None, metadata={
        "help": "iterative: the step at which the share reaches fraction (None: three quarters of the run's steps)."})
    update_frequency: int | None = field(default=None, metadata={
        "help": "iterative: Δt, steps between pruning updates (None: max(1, the run's steps // 100))."})
    fixed_mask: bool = field(default=False, metadata={
        "help": "The mask is given (e.g. saved by iterative pre-training) and never pruned during this training."})

    def __post_init__(self) -> None:
        if not 0.0 < self.fraction <= 1.0:
            raise ValueError(f"fraction must be in (0, 1], got {self.fraction}")
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {self.method!r}")
        try:
            pattern = re.compile(self.target_parameters)
        except re.error as error:
            raise ValueError(f"target_parameters is not a valid regular expression: {error}") from None
        for name in ("bert.embeddings.word_embeddings.weight", "classifier.weight", "sentence_pooling.query_weight"):
            if pattern.search(name):
                raise ValueError(f"target_parameters={self.target_parameters!r} matches {name!r}: embeddings and the "
                                 "task head are always fully trainable")
        if not self.fraction <= self.initial_fraction <= 1.0:
            raise ValueError(f"initial_fraction must be in [fraction, 1] = [{self.fraction}, 1], "
                             f"got {self.initial_fraction}")
        if self.begin_step < 0 or (self.update_frequency is not None and self.update_frequency < 1):
            raise ValueError(f"begin_step must be >= 0 and update_frequency >= 1, got {self.begin_step} and "
                             f"{self.update_frequency}")
        if self.method == "iterative" and self.end_step is not None and (
            self.end_step <= self.begin_step
            or (self.update_frequency is not None and (self.end_step - self.begin_step) % self.update_frequency)
        ):
            raise ValueError(f"end_step - begin_step must be a positive multiple of update_frequency, got "
                             f"{self.end_step} - {self.begin_step} with update_frequency={self.update_frequency}")

    # ---- schedule ----------------------------------------------------------------------------------------------

    @property
    def prunes(self) -> bool:
        """Whether training with this config changes the mask (an iterative schedule on a mask that is not fixed)."""
        return self.method == "iterative" and not self.fixed_mask

    def _check_scaled(self) -> None:
        if self.prunes and (self.end_step is None or self.update_frequency is None):
            raise ValueError("the iterative schedule has no end_step / update_frequency yet: give them, or scale "
                             "the config to the run with scaled_to(total_steps) (SubnetworkTrainer does)")

    def scaled_to(self, total_steps: int) -> SubnetworkConfig:
        """This config with the iterative schedule's unset `end_step` / `update_frequency` chosen for a run of
        `total_steps` optimizer steps: Δt = max(1, total_steps // 100) and t0 + nΔt the last update step at or before
        75% of the run (at least one update after t0); with `end_step` given, Δt divides `end_step - begin_step`.
        Configs that do not prune, or whose schedule is set, are returned as they are."""
        if not self.prunes or (self.end_step is not None and self.update_frequency is not None):
            return self
        if self.end_step is None:
            if total_steps < 1:
                raise ValueError(f"cannot scale the iterative schedule to a run of {total_steps} steps")
            frequency = self.update_frequency or max(1, total_steps // SCHEDULE_UPDATES)
            updates = max(1, int((SCHEDULE_END_SHARE * total_steps - self.begin_step) // frequency))
            return replace(self, end_step=self.begin_step + updates * frequency, update_frequency=frequency)
        span = self.end_step - self.begin_step
        limit = max(1, span // SCHEDULE_UPDATES)
        return replace(self, update_frequency=max(d for d in range(1, limit + 1) if span % d == 0))

    def trainable_fraction_at(self, step: int) -> float:
        """Trainable share of each target tensor after the pruning update at optimizer step `step`."""
        if self.method == "one_step":
            return self.fraction
        self._check_scaled()
        return 1.0 - cubic_sparsity(step, 1.0 - self.initial_fraction, 1.0 - self.fraction, self.begin_step,
                                    self.end_step)

    def is_update_step(self, step: int) -> bool:
        """Whether the iterative schedule prunes before optimizer step `step` (counted from 0: the run's first step is
        step 0) — t0, t0 + Δt, …, t0 + nΔt. Never with a fixed mask."""
        if not self.prunes:
            return False
        self._check_scaled()
        return self.begin_step <= step <= self.end_step and (step - self.begin_step) % self.update_frequency == 0

    def reaches_target(self, total_steps: int) -> bool:
        """Whether a run of `total_steps` optimizer steps (steps 0 … total_steps - 1) gets to the update at
        `end_step`, i.e. ends with `fraction` trainable. Always true when the config does not prune."""
        if not self.prunes:
            return True
        self._check_scaled()
        return self.end_step <= total_steps - 1

    def final_fraction(self, total_steps: int) -> float:
        """The trainable share the schedule leaves after a run of `total_steps` optimizer steps (the share at its
        last update within the run; `initial_fraction` when the run ends before `begin_step`)."""
        if not self.prunes:
            return self.fraction
        self._check_scaled()
        last = min(total_steps - 1, self.end_step)
        if last < self.begin_step:
            return self.initial_fraction
        last = self.begin_step + (last - self.begin_step) // self.update_frequency * self.update_frequency
        return self.trainable_fraction_at(last)

    def is_target(self, name: str, parameter: torch.Tensor) -> bool:
        """Whether parameter `name` is masked."""
        if not re.search(self.target_parameters, name):
            return False
        return parameter.dim() >= 2 or (self.include_vectors and parameter.dim() == 1)

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> SubnetworkConfig:
        known = {f.name for f in fields(cls)}
        return cls(**{key: value for key, value in json.loads(text).items() if key in known})


def cubic_sparsity(step: int, initial_sparsity: float, final_sparsity: float, begin_step: int, end_step: int) -> float:
    """Zhu & Gupta (2017) Eq. 1: s_t = s_f + (s_i - s_f)(1 - (t - t0)/(nΔt))^3, with nΔt = end_step - begin_step;
    s_i before t0 and s_f after t0 + nΔt."""
    if step <= begin_step:
        return initial_sparsity
    if step >= end_step:
        return final_sparsity
    progress = (step - begin_step) / (end_step - begin_step)
    return final_sparsity + (initial_sparsity - final_sparsity) * (1.0 - progress) ** 3


# ---- identification --------------------------------------------------------------------------------------------


def _keep_count(numel: int, fraction: float) -> int:
    return numel if fraction >= 1.0 else max(1, min(numel, round(fraction * numel)))


@torch.no_grad()
def top_magnitude_mask(tensor: torch.Tensor, fraction: float, within: torch.Tensor | None = None) -> torch.Tensor:
    """Boolean mask of the `round(fraction * numel)` (at least one) largest-magnitude entries of `tensor`; with
    `within`, the entries are chosen among `within`'s `True` entries (never more than those)."""
    magnitude = tensor.detach().abs().float().flatten()
    keep = _keep_count(magnitude.numel(), fraction)
    if within is not None:
        within = within.flatten().to(magnitude.device)
        keep = min(keep, int(within.sum()))
        magnitude = magnitude.masked_fill(~within, -1.0)  # outside entries rank below every |w| >= 0
    mask = torch.zeros(magnitude.numel(), dtype=torch.bool, device=magnitude.device)
    if keep:
        # topk breaks ties by position deterministically on a given device, so every DDP rank gets the same mask
        mask[torch.topk(magnitude, keep, sorted=False).indices] = True
    return mask.view(tensor.shape)


def target_parameters(model: nn.Module, config: SubnetworkConfig) -> dict[str, nn.Parameter]:
    """The masked parameters of `model`, by name."""
    return {name: p for name, p in model.named_parameters() if config.is_target(name, p)}


def identify_subnetwork(model: nn.Module, config: SubnetworkConfig) -> dict[str, torch.Tensor]:
    """Initial masks: `one_step` keeps the top `fraction` of each target tensor, `iterative` the top
    `initial_fraction` (all of it by default). Raises when no parameter matches `config.target_parameters`, and for
    a `fixed_mask` config (its mask is given, e.g. by :func:`load_subnetwork_mask`, never identified)."""
    if config.fixed_mask:
        raise ValueError("fixed_mask=True: the subnetwork is given (a saved mask), it cannot be identified anew")
    parameters = target_parameters(model, config)
    if not parameters:
        raise ValueError(f"no parameter of {type(model).__name__} matches target_parameters="
                         f"{config.target_parameters!r}")
    fraction = config.fraction if config.method == "one_step" else config.initial_fraction
    return {name: top_magnitude_mask(p, fraction) for name, p in parameters.items()}


@torch.no_grad()
def prune_masks(model: nn.Module, masks: Mapping[str, torch.Tensor], fraction: float) -> dict[str, torch.Tensor]:
    """One gradual-pruning update: each mask becomes the top `fraction` (share of the whole tensor) of the current
    weights' magnitudes among its own `True` entries, so masks never grow. Returns the new masks."""
    parameters = dict(model.named_parameters())
    return {name: top_magnitude_mask(parameters[name], fraction, within=mask) for name, mask in masks.items()}


def mask_density(masks: Mapping[str, torch.Tensor]) -> float:
    """Share of `True` entries over all masks."""
    total = sum(mask.numel() for mask in masks.values())
    return sum(int(mask.sum()) for mask in masks.values()) / max(total, 1)


def trainable_share(model: nn.Module, masks: Mapping[str, torch.Tensor]) -> dict[str, Any]:
    """What subnetwork training leaves trainable, counted on `model` and the masks actually used: the masked tensors
    (their entries and the `True` ones) and every other parameter, fully trainable, by group (`embeddings`, `encoder`
    for unmasked encoder tensors such as biases and LayerNorm, `head` for the pooling and scoring layers); and the
    share of all parameters. The mask density alone is not that share: the fully trainable rest is often larger."""
    masked = masked_trainable = total = vectors = 0
    groups: dict[str, int] = {}
    for name, parameter in model.named_parameters():
        total += parameter.numel()
        if name in masks:
            vectors += parameter.dim() == 1
            masked += parameter.numel()
            masked_trainable += int(masks[name].sum())
        elif parameter.requires_grad:
            group = "embeddings" if ".embeddings." in name else "encoder" if ".encoder." in name else "head"
            groups[group] = groups.get(group, 0) + parameter.numel()
    trainable = masked_trainable + sum(groups.values())
    return {"masked_tensors": len(masks), "masked_matrices": len(masks) - vectors, "masked_vectors": vectors,
            "masked_entries": masked, "masked_trainable": masked_trainable,
            "mask_density": masked_trainable / max(masked, 1), "fully_trainable": groups,
            "total_parameters": total, "trainable_parameters": trainable, "trainable_share": trainable / max(total, 1)}


# ---- mask file -------------------------------------------------------------------------------------------------


def save_subnetwork_mask(masks: Mapping[str, torch.Tensor], path: str | os.PathLike,
                         config: SubnetworkConfig | None = None, step: int | None = None) -> None:
    """Write `masks` (bool tensors) to a safetensors file; `config` and `step` go into its metadata."""
    metadata = {"format": "subnetwork_mask"}
    if config is not None:
        metadata["subnetwork_config"] = config.to_json()
    if step is not None:
        metadata["step"] = str(step)
    save_file({name: mask.detach().to("cpu", torch.bool).contiguous() for name, mask in masks.items()},
              os.fspath(path), metadata=metadata)


def _read_file(path: str | os.PathLike, kind: str, what: str) -> tuple[dict[str, torch.Tensor], dict[str, str]]:
    """Tensors and metadata of a safetensors file this module wrote with metadata `format=kind`."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no {what} at {path}")
    with safe_open(path, framework="pt") as handle:
        metadata = handle.metadata() or {}
        if metadata.get("format") != kind:
            raise ValueError(f"{path} is not a {what} file (metadata format={metadata.get('format')!r})")
        return {name: handle.get_tensor(name) for name in handle.keys()}, metadata


def load_subnetwork_mask(path: str | os.PathLike) -> tuple[dict[str, torch.Tensor], SubnetworkConfig | None]:
    """Masks and config from a file written by :func:`save_subnetwork_mask`."""
    path = os.fspath(path)
    masks, metadata = _read_file(path, "subnetwork_mask", "subnetwork mask")
    bad = [name for name, mask in masks.items() if mask.dtype != torch.bool]
    if bad:
        raise ValueError(f"{path}: masks must be bool tensors, {bad[:3]} are not")
    text = metadata.get("subnetwork_config")
    return masks, (SubnetworkConfig.from_json(text) if text else None)


def check_masks(model: nn.Module, masks: Mapping[str, torch.Tensor]) -> None:
    """Raise when a mask names no parameter of `model` or has the wrong shape."""
    parameters = dict(model.named_parameters())
    for name, mask in masks.items():
        if name not in parameters:
            raise ValueError(f"subnetwork mask {name!r} matches no parameter of {type(model).__name__}")
        if tuple(mask.shape) != tuple(parameters[name].shape):
            raise ValueError(f"subnetwork mask {name!r} has shape {tuple(mask.shape)}, the parameter "
                             f"{tuple(parameters[name].shape)}")


# ---- sparse delta ----------------------------------------------------------------------------------------------


@dataclass
class SparseDeltaInfo:
    """What :func:`save_sparse_delta` wrote: the file, its size and, for comparison, the dense model's size."""

    path: str
    num_bytes: int
    dense_num_bytes: int
    sparse_values: int
    dense_values: int

    @property
    def size_ratio(self) -> float:
        return self.num_bytes / max(self.dense_num_bytes, 1)

    def __str__(self) -> str:
        return (f"sparse delta {self.path}: {self.num_bytes / 2**20:.2f} MiB ({self.size_ratio:.1%} of the dense "
                f"{self.dense_num_bytes / 2**20:.2f} MiB): {self.sparse_values} sparse values in masked tensors, "
                f"{self.dense_values} dense values")


def _state(model_or_state: nn.Module | Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    if isinstance(model_or_state, nn.Module):
        return {name: p.detach() for name, p in model_or_state.named_parameters()}
    return dict(model_or_state)


_SAME_SIZE_INTEGER = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def _bits(tensor: torch.Tensor) -> torch.Tensor:
    """The tensor's bit patterns, so that comparisons tell -0.0 from 0.0 and a NaN from itself is equal."""
    return tensor.view(_SAME_SIZE_INTEGER[tensor.element_size()]) if tensor.is_floating_point() else tensor


class BaseModelMismatchError(ValueError):
    """A sparse delta applied to a model other than its base; the message names what differs."""


def base_digest(base: nn.Module | Mapping[str, torch.Tensor], names: Iterable[str]) -> str:
    """SHA-256 over the named tensors of `base` (name, dtype, shape and bytes, in name order): the tensors whose
    entries a sparse delta does not store."""
    state = _state(base)
    digest = hashlib.sha256()
    for name in sorted(names):
        tensor = state[name].detach().cpu().contiguous()
        digest.update(f"{name}\t{tensor.dtype}\t{tuple(tensor.shape)}\n".encode())
        digest.update(tensor.reshape(-1).view(torch.uint8).numpy())
    return digest.hexdigest()


def _is_hub_id(name: str | None) -> bool:
    return bool(name) and re.fullmatch(r"[\w.-]+/[\w.-]+", name) is not None and not os.path.exists(name)


@dataclass(frozen=True)
class SparseDeltaBase:
    """The base model a sparse delta was made over, as recorded in the file's metadata.

    Args:
        model_id (`str`, *optional*): its Hub repo id (or the path it was loaded from, when it was not published).
        revision (`str`, *optional*): the Hub commit of `model_id`.
        parameters (`dict[str, list]`): `{name: [dtype, shape]}` of every parameter of the base.
        sha256 (`str`): :func:`base_digest` of the masked tensors.
    """

    model_id: str | None
    revision: str | None
    parameters: dict[str, list]
    sha256: str

    @classmethod
    def of(cls, base: nn.Module | Mapping[str, torch.Tensor], masked: Iterable[str], model_id: str | None = None,
           revision: str | None = None) -> SparseDeltaBase:
        """The record of `base` for a delta whose masked tensors are `masked`."""
        state = _state(base)
        return cls(model_id=model_id, revision=revision,
                   parameters={name: [str(t.dtype), list(t.shape)] for name, t in state.items()},
                   sha256=base_digest(state, masked))

    @property
    def on_hub(self) -> bool:
        """Whether the record names a Hub repo and a revision, so that others can load the base."""
        return _is_hub_id(self.model_id) and bool(self.revision)

    def describe(self) -> str:
        if not self.model_id:
            return "an unnamed base model"
        return f"{self.model_id}@{self.revision}" if self.revision else self.model_id

    def to_metadata(self) -> dict[str, str]:
        return {"base_model": self.model_id or "", "base_revision": self.revision or "",
                "base_parameters": json.dumps(self.parameters, sort_keys=True), "base_sha256": self.sha256}

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, str]) -> SparseDeltaBase | None:
        if "base_sha256" not in metadata:
            return None
        return cls(model_id=metadata.get("base_model") or None, revision=metadata.get("base_revision") or None,
                   parameters=json.loads(metadata.get("base_parameters") or "{}"), sha256=metadata["base_sha256"])

    def check(self, base: nn.Module | Mapping[str, torch.Tensor], masked: Iterable[str]) -> None:
        """Raise :class:`BaseModelMismatchError` unless `base` is this record's model: the same parameters with the
        same dtypes and shapes, the same Hub id (when both sides name one) and the same masked tensors."""
        state = _state(base)
        where = f"the sparse delta was made over {self.describe()}"
        differences = [f"{name!r} is missing" for name in self.parameters if name not in state]
        differences += [f"{name!r} is not in the delta's base" for name in state if name not in self.parameters]
        for name, (dtype, shape) in self.parameters.items():
            if name in state and [str(state[name].dtype), list(state[name].shape)] != [dtype, list(shape)]:
                differences.append(f"{name!r} is {str(state[name].dtype)} {tuple(state[name].shape)}, the base's "
                                   f"{dtype} {tuple(shape)}")
        if differences:
            raise BaseModelMismatchError(f"{where}; this model's parameters differ ({len(differences)}): "
                                         + "; ".join(differences[:5]))
        loaded_from = getattr(base, "name_or_path", None) if isinstance(base, nn.Module) else None
        if _is_hub_id(loaded_from) and _is_hub_id(self.model_id) and loaded_from != self.model_id:
            raise BaseModelMismatchError(f"{where}; this model was loaded from {loaded_from}")
        found = base_digest(state, masked)
        if found != self.sha256:
            raise BaseModelMismatchError(
                f"{where}; this model has its shapes but other weights (SHA-256 of the masked tensors {found[:12]}…, "
                f"the base's {self.sha256[:12]}…): load that base"
                + (f" (from_pretrained({self.model_id!r}, revision={self.revision!r}))" if self.revision else ""))


@torch.no_grad()
def sparse_delta(trained: nn.Module | Mapping[str, torch.Tensor], base: nn.Module | Mapping[str, torch.Tensor],
                 masks: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The delta of `trained` over `base` (parameters): `name.__indices__` / `name.__values__` (flat indices and new
    values of the entries whose bits changed) for every masked tensor, `name.__dense__` for every other parameter. Raises when
    an entry outside a mask changed (the delta would not describe a subnetwork)."""
    trained, base = _state(trained), _state(base)
    delta = {}
    for name, tensor in trained.items():
        if name not in base:
            raise KeyError(f"parameter {name!r} is not in the base model")
        if name not in masks:
            delta[name + _DENSE] = tensor.detach().cpu().contiguous()
            continue
        flat, reference = tensor.detach().cpu().flatten(), base[name].detach().cpu().flatten()
        changed = torch.nonzero(_bits(flat) != _bits(reference)).flatten()
        outside = ~masks[name].flatten().cpu()[changed]
        if bool(outside.any()):
            raise ValueError(f"{int(outside.sum())} frozen entries of {name!r} differ from the base")
        index_dtype = torch.int32 if flat.numel() < 2**31 else torch.int64
        delta[name + _INDICES] = changed.to(index_dtype)
        delta[name + _VALUES] = flat[changed].contiguous()
    return delta


def _masked_names(delta: Mapping[str, torch.Tensor]) -> list[str]:
    return sorted(key[: -len(_INDICES)] for key in delta if key.endswith(_INDICES))


def save_sparse_delta(trained: nn.Module | Mapping[str, torch.Tensor], base: nn.Module | Mapping[str, torch.Tensor],
                      masks: Mapping[str, torch.Tensor], path: str | os.PathLike, *, base_model_id: str | None = None,
                      base_revision: str | None = None) -> SparseDeltaInfo:
    """Write :func:`sparse_delta` to a safetensors file (a directory gets `sparse_delta.safetensors`) and report its
    size. The metadata records the base (:class:`SparseDeltaBase`): `base_model_id` (default: the path or Hub id a
    `base` model was loaded from) and `base_revision` (its Hub commit), every parameter's dtype and shape, and the
    digest of the masked tensors; :func:`set_sparse_delta_base` records the Hub id and revision once the base is
    published."""
    path = os.fspath(path)
    if os.path.isdir(path):
        path = os.path.join(path, SPARSE_DELTA_NAME)
    delta = sparse_delta(trained, base, masks)
    if base_model_id is None and isinstance(base, nn.Module):
        base_model_id = getattr(base, "name_or_path", None) or None
    record = SparseDeltaBase.of(base, _masked_names(delta), model_id=base_model_id, revision=base_revision)
    save_file(delta, path, metadata={"format": "subnetwork_delta", **record.to_metadata()})
    state = _state(trained)
    return SparseDeltaInfo(
        path=path,
        num_bytes=os.path.getsize(path),
        dense_num_bytes=sum(t.numel() * t.element_size() for t in state.values()),
        sparse_values=sum(t.numel() for key, t in delta.items() if key.endswith(_VALUES)),
        dense_values=sum(t.numel() for key, t in delta.items() if key.endswith(_DENSE)),
    )


def load_sparse_delta(path: str | os.PathLike) -> tuple[dict[str, torch.Tensor], SparseDeltaBase | None]:
    """The tensors of a sparse delta file (a directory: its `sparse_delta.safetensors`) and its base record (`None`
    for a file written before bases were recorded)."""
    path = os.fspath(path)
    if os.path.isdir(path):
        path = os.path.join(path, SPARSE_DELTA_NAME)
    delta, metadata = _read_file(path, "subnetwork_delta", "subnetwork delta")
    return delta, SparseDeltaBase.from_metadata(metadata)


def set_sparse_delta_base(path: str | os.PathLike, base_model_id: str, base_revision: str,
                          output: str | os.PathLike | None = None) -> SparseDeltaBase:
    """Record the Hub id and revision of a delta's base (published after the delta was written) in the file, or in a
    copy at `output`; the parameters and digest recorded at saving stay. Returns the new record."""
    delta, record = load_sparse_delta(path)
    if record is None:
        raise ValueError(f"{os.fspath(path)} records no base model (written by an older version): save the delta again")
    record = replace(record, model_id=base_model_id, revision=base_revision)
    save_file(delta, os.fspath(output if output is not None else path),
              metadata={"format": "subnetwork_delta", **record.to_metadata()})
    return record


@torch.no_grad()
def apply_sparse_delta(base_model: nn.Module, delta: Mapping[str, torch.Tensor] | str | os.PathLike,
                       base: SparseDeltaBase | None = None) -> nn.Module:
    """Load a sparse delta (a dict or a file from :func:`save_sparse_delta`) onto `base_model`, in place; returns it.

    Raises :class:`BaseModelMismatchError` when `base_model` is not the delta's base (the record in the file, or
    `base`): a parameter missing, extra or of another dtype or shape, another Hub id, or other weights in the masked
    tensors. Raises when the delta names a parameter the model lacks or the model has a parameter the delta does not
    cover."""
    if not isinstance(delta, Mapping):
        delta, base = load_sparse_delta(delta)
    if base is not None:
        base.check(base_model, _masked_names(delta))
    parameters = dict(base_model.named_parameters())
    covered = set()
    for key, tensor in delta.items():
        for suffix in (_DENSE, _INDICES, _VALUES):
            if key.endswith(suffix):
                name = key[: -len(suffix)]
                break
        else:
            raise ValueError(f"unexpected entry {key!r} in the sparse delta")
        if name not in parameters:
            raise KeyError(f"the sparse delta has {name!r}, which {type(base_model).__name__} lacks")
        covered.add(name)
        parameter = parameters[name]
        if suffix == _DENSE:
            parameter.copy_(tensor)
        elif suffix == _INDICES:
            values = delta[name + _VALUES].to(parameter.device, parameter.dtype)
            parameter.view(-1).index_copy_(0, tensor.to(parameter.device, torch.long), values)
    missing = sorted(set(parameters) - covered)
    if missing:
        raise ValueError(f"the sparse delta does not cover {len(missing)} parameters, e.g. {missing[:3]}")
    return base_model


__all__ = [
    "SubnetworkConfig",
    "SparseDeltaInfo",
    "SCHEDULE_END_SHARE",
    "SCHEDULE_UPDATES",
    "SUBNETWORK_MASK_NAME",
    "SPARSE_DELTA_NAME",
    "cubic_sparsity",
    "top_magnitude_mask",
    "target_parameters",
    "identify_subnetwork",
    "prune_masks",
    "mask_density",
    "trainable_share",
    "save_subnetwork_mask",
    "load_subnetwork_mask",
    "check_masks",
    "sparse_delta",
    "save_sparse_delta",
    "load_sparse_delta",
    "set_sparse_delta_base",
    "apply_sparse_delta",
    "SparseDeltaBase",
    "BaseModelMismatchError",
    "base_digest",
]
