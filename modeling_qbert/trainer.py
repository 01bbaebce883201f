"""`SubnetworkTrainer`: a `transformers.Trainer` that fine-tunes only a sparse subnetwork (paper 001 §III-F).

Trainer calls `optimizer.step()` directly (there is no `optimizer_step` to override), so the mask is applied around
the optimizer, set up in `create_optimizer`:

* a gradient hook `g * mask` on every masked parameter (a post-accumulate-grad hook multiplying `.grad` in place by
  the mask in the parameter's dtype), so gradient clipping and DDP's all-reduce only ever see trainable entries;
* the optimizer does not hold the masked parameters themselves but, for each one, a flat tensor of its trainable
  values (*compact values*), in param groups of their own with the usual weight decay. An
  `optimizer.register_step_pre_hook` gathers the current values and the (masked, clipped, all-reduced) gradient of the
  trainable entries into them, the optimizer updates them (decoupled decay included, with the scheduler's `lr`), and an
  `optimizer.register_step_post_hook` writes them back into the parameter (`index_copy_` on the trainable positions).
  Frozen entries are never written, so they stay bit-identical whatever the weight decay, and the optimizer has no
  state for them at all (Adam's moments exist for trainable entries only: about a tenth of the dense optimizer's
  memory and work on masked tensors, which pays for the gathers and the write-back);
* with `method="iterative"` the same pre-hook shrinks the masks on the cubic schedule and drops the compact values and
  the optimizer state of the entries that leave the subnetwork.

The model's parameters stay the source of truth: values are gathered again whenever a parameter was written since the
last write-back (its version counter moved), so weights loaded between steps are picked up. The mask is written as `subnetwork_mask.safetensors` with every checkpoint and every
`save_model`, and on resume it is read back from the checkpoint (before the optimizer exists, as checkpoint weights
are loaded first), never recomputed.
`subnetwork/changed_fraction` (share of masked-tensor entries that differ from their values when this `train()` call
built its optimizer) and `subnetwork/trainable_fraction` are added to the training logs.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import torch
from torch import nn
from transformers import Trainer
from transformers.utils import logging

from .sparse import (
    SUBNETWORK_MASK_NAME,
    SparseDeltaInfo,
    SubnetworkConfig,
    check_masks,
    identify_subnetwork,
    load_subnetwork_mask,
    mask_density,
    prune_masks,
    save_sparse_delta,
    save_subnetwork_mask,
)

logger = logging.get_logger(__name__)

SUBNETWORK_DECAY_KEY = "subnetwork_weight_decay"
"""Param-group key of a subnetwork group holding its weight decay (the optimizer applies it to the compact values)."""
SUBNETWORK_NAMES_KEY = "subnetwork_parameter_names"
"""Param-group key of a subnetwork group: the names of the masked parameters whose compact values the group holds."""


class SubnetworkTrainer(Trainer):
    r"""
    A [`~transformers.Trainer`] whose optimizer changes only the entries of a sparse subnetwork.

    Args:
        subnetwork_config ([`SubnetworkConfig`], *optional*):
            Fraction, targets and method; defaults to `SubnetworkConfig()` (10% one-step).
        subnetwork_mask (`dict[str, torch.BoolTensor]`, *optional*):
            Masks to use (e.g. from [`load_subnetwork_mask`]); by default they are identified from the model's weights
            when the optimizer is created (or read from the checkpoint when resuming).
        *args, **kwargs: passed to [`~transformers.Trainer`].

    Works with any `torch.optim` optimizer built from param groups (AdamW, Adam, SGD — the default
    `adamw_torch_fused` included): it only ever sees the trainable entries of masked parameters. Custom optimizer
    factories and `optimizers=` passed in are refused.
    """

    def __init__(self, *args, subnetwork_config: SubnetworkConfig | None = None,
                 subnetwork_mask: Mapping[str, torch.Tensor] | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        if self.optimizer is not None:
            raise ValueError("SubnetworkTrainer builds its own optimizer (the mask must be wired into it): do not pass "
                             "`optimizers=`; choose one with `args.optim` / `optimizer_cls_and_kwargs`")
        if self.is_deepspeed_enabled or self.is_fsdp_enabled:
            raise ValueError("SubnetworkTrainer supports single-process and DDP training, not DeepSpeed or FSDP")
        self.subnetwork_config = subnetwork_config if subnetwork_config is not None else SubnetworkConfig()
        self.subnetwork_mask: dict[str, torch.Tensor] | None = None
        if subnetwork_mask is not None:
            self.set_subnetwork_mask(subnetwork_mask)
        self._gradient_hooks: list = []
        self._step_hooks: list = []
        self._reference: dict[str, tuple[torch.Tensor, torch.Tensor]] = {}
        self._masked_parameters: dict[str, nn.Parameter] = {}
        self._multiplier_masks: dict[str, torch.Tensor] = {}
        self._trainable_indices: dict[str, torch.Tensor] = {}
        self._synced_versions: dict[str, int] = {}

    # ---- the mask ----------------------------------------------------------------------------------------------

    @property
    def _unwrapped_model(self) -> nn.Module:
        return self.accelerator.unwrap_model(self.model, keep_torch_compile=False)

    def set_subnetwork_mask(self, masks: Mapping[str, torch.Tensor]) -> None:
        """Use `masks` (bool tensors by parameter name), moved to the parameters' devices."""
        model = self._unwrapped_model
        check_masks(model, masks)
        parameters = dict(model.named_parameters())
        self.subnetwork_mask = {name: mask.to(parameters[name].device, torch.bool) for name, mask in masks.items()}

    def identify_subnetwork(self) -> dict[str, torch.Tensor]:
        """The masks, identified from the model's current weights if none are set yet (identical on every rank)."""
        if self.subnetwork_mask is None:
            masks = identify_subnetwork(self._unwrapped_model, self.subnetwork_config)
            if torch.distributed.is_available() and torch.distributed.is_initialized():
                # Ranks start from the same weights, so the masks agree already; broadcasting makes it certain.
                for name in sorted(masks):
                    as_bytes = masks[name].to(torch.uint8)
                    torch.distributed.broadcast(as_bytes, src=0)
                    masks[name] = as_bytes.bool()
            self.set_subnetwork_mask(masks)
            logger.info(f"subnetwork identified ({self.subnetwork_config.method}): {len(masks)} masked tensors, "
                        f"{mask_density(masks):.2%} of their entries trainable")
        return self.subnetwork_mask

    # ---- optimizer ---------------------------------------------------------------------------------------------

    def create_optimizer(self, model: nn.Module | None = None) -> torch.optim.Optimizer:
        if self.optimizer is not None:
            return self.optimizer
        opt_model = self.accelerator.unwrap_model(model if model is not None else self.model,
                                                  keep_torch_compile=False)
        masks = self.identify_subnetwork()
        self._install_gradient_hooks(opt_model, masks)

        decay_names = set(self.get_decay_parameter_names(opt_model))
        weight_decay = self.args.weight_decay
        groups = {(masked, decay): [] for masked in (False, True) for decay in (False, True)}
        for name, parameter in opt_model.named_parameters():
            if parameter.requires_grad:
                groups[(name in masks, name in decay_names and weight_decay != 0)].append(name)
        parameters = dict(opt_model.named_parameters())
        param_groups = []
        for (masked, decay), names in groups.items():
            if not names:
                continue
            group = {"params": [parameters[name] for name in names], "weight_decay": weight_decay if decay else 0.0}
            if masked:
                group["params"] = [self._compact_values(name) for name in names]
                group[SUBNETWORK_DECAY_KEY] = group["weight_decay"]
                group[SUBNETWORK_NAMES_KEY] = names
            param_groups.append(group)

        if self.optimizer_cls_and_kwargs is not None:
            optimizer_cls, optimizer_kwargs = self.optimizer_cls_and_kwargs
        else:
            optimizer_cls, optimizer_kwargs = self.get_optimizer_cls_and_kwargs(self.args, opt_model)
        unsupported = {"params", "model", "optimizer_dict"} & set(optimizer_kwargs)
        if unsupported or not (isinstance(optimizer_cls, type) and issubclass(optimizer_cls, torch.optim.Optimizer)):
            raise ValueError(f"optim={self.args.optim!r} is not supported by SubnetworkTrainer: it needs a plain "
                             "torch.optim optimizer built from param groups")
        optimizer_kwargs = {key: value for key, value in optimizer_kwargs.items() if key != "weight_decay"}
        self.optimizer = optimizer_cls(param_groups, **optimizer_kwargs)
        for handle in self._step_hooks:
            handle.remove()
        self._step_hooks = [self.optimizer.register_step_pre_hook(self._before_optimizer_step),
                            self.optimizer.register_step_post_hook(self._after_optimizer_step)]

        self._reference = {name: (mask.clone(), parameters[name].detach()[mask].clone())
                           for name, mask in masks.items()}
        return self.optimizer

    def _refresh_mask_views(self) -> None:
        """Derived forms of the masks used on the hot path: a mask in the parameter's dtype (for an in-place
        gradient multiply, about twice as fast as a bool one) and the flat indices of the trainable entries (what the
        compact values are gathered from and written back to)."""
        parameters = dict(self._unwrapped_model.named_parameters())
        for name, mask in self.subnetwork_mask.items():
            parameter = self._masked_parameters[name] = parameters[name]
            if not parameter.is_contiguous():
                raise ValueError(f"masked parameter {name} is not contiguous: its trainable entries cannot be "
                                 "written back through a flat view")
            multiplier = self._multiplier_masks.get(name)
            if multiplier is None or multiplier.dtype != parameter.dtype:
                multiplier = self._multiplier_masks[name] = torch.empty_like(parameter.detach())
            multiplier.copy_(mask)  # in place: the gradient hooks hold these tensors
            self._trainable_indices[name] = torch.nonzero(mask.flatten()).flatten()

    def _compact_values(self, name: str) -> torch.Tensor:
        """A new flat tensor of the trainable values of masked parameter `name` (what the optimizer updates)."""
        parameter = self._masked_parameters[name]
        self._synced_versions[name] = parameter._version
        return parameter.detach().view(-1).index_select(0, self._trainable_indices[name])

    def _install_gradient_hooks(self, model: nn.Module, masks: Mapping[str, torch.Tensor]) -> None:
        for handle in self._gradient_hooks:
            handle.remove()
        self._refresh_mask_views()
        parameters = dict(model.named_parameters())

        def hook(multiplier: torch.Tensor):
            # Runs once the gradient is accumulated into `.grad` (which the parameter owns, so in place is safe) and
            # before DDP's reducer reads it: clipping and all-reduce see only trainable entries.
            def mask_gradient(parameter: torch.Tensor) -> None:
                parameter.grad.mul_(multiplier)

            return mask_gradient

        self._gradient_hooks = [parameters[name].register_post_accumulate_grad_hook(hook(self._multiplier_masks[name]))
                                for name in masks if parameters[name].requires_grad]

    @staticmethod
    def _subnetwork_groups(optimizer: torch.optim.Optimizer) -> list[Mapping]:
        return [group for group in optimizer.param_groups if SUBNETWORK_NAMES_KEY in group]

    @torch.no_grad()
    def _before_optimizer_step(self, optimizer: torch.optim.Optimizer, args, kwargs) -> None:
        if self.subnetwork_config.is_update_step(self.state.global_step):
            self._prune(optimizer, self.state.global_step)
        for group in self._subnetwork_groups(optimizer):
            for name, values in zip(group[SUBNETWORK_NAMES_KEY], group["params"]):
                # Gather the trainable entries' (masked, clipped, reduced) gradient, and their values unless they are
                # still the ones the last write-back left (the parameter's version counter counts every in-place
                # write, e.g. `load_state_dict`): the optimizer updates only these, with its own decoupled decay.
                parameter, indices = self._masked_parameters[name], self._trainable_indices[name]
                if parameter._version != self._synced_versions.get(name):
                    torch.index_select(parameter.detach().view(-1), 0, indices, out=values)
                if parameter.grad is None:
                    values.grad = None
                    continue
                if values.grad is None or values.grad.shape != values.shape:
                    values.grad = torch.empty_like(values)
                torch.index_select(parameter.grad.view(-1), 0, indices, out=values.grad)

    @torch.no_grad()
    def _after_optimizer_step(self, optimizer: torch.optim.Optimizer, args, kwargs) -> None:
        for group in self._subnetwork_groups(optimizer):
            for name, values in zip(group[SUBNETWORK_NAMES_KEY], group["params"]):
                # Only the trainable positions are written: frozen entries keep their bits.
                parameter = self._masked_parameters[name]
                parameter.detach().view(-1).index_copy_(0, self._trainable_indices[name], values)
                self._synced_versions[name] = parameter._version

    def _replace_compact_values(self, optimizer: torch.optim.Optimizer,
                                kept: Mapping[str, torch.Tensor] | None = None) -> None:
        """Rebuild every group's compact values from the current masks. `kept` (by name: a bool tensor over the old
        compact values, from a mask that shrank) carries the optimizer state of the entries that stay; without it the
        state of a tensor whose trainable entries changed is dropped."""
        for group in self._subnetwork_groups(optimizer):
            for position, (name, old) in enumerate(zip(group[SUBNETWORK_NAMES_KEY], group["params"])):
                new = self._compact_values(name)
                state = optimizer.state.pop(old, None)
                if state is not None and (kept is not None or new.shape == old.shape):
                    keep = kept[name] if kept is not None else None
                    optimizer.state[new] = {key: value[keep] if keep is not None and isinstance(value, torch.Tensor)
                                            and value.shape == old.shape else value for key, value in state.items()}
                group["params"][position] = new

    @torch.no_grad()
    def _prune(self, optimizer: torch.optim.Optimizer, step: int) -> None:
        fraction = self.subnetwork_config.trainable_fraction_at(step)
        new_masks = prune_masks(self._unwrapped_model, self.subnetwork_mask, fraction)
        kept = {}
        for name, mask in self.subnetwork_mask.items():
            # New masks lie within the old ones, so the entries that stay are those of the old compact values whose
            # position is still trainable.
            kept[name] = new_masks[name].to(mask.device).flatten()[self._trainable_indices[name]]
            mask.copy_(new_masks[name])
            parameter = self._masked_parameters[name]
            if parameter.grad is not None:
                parameter.grad.masked_fill_(~mask, 0)
        self._refresh_mask_views()
        self._replace_compact_values(optimizer, kept)
        logger.info(f"step {step}: subnetwork pruned to {fraction:.2%} of each masked tensor")

    # ---- saving, resuming, logging -----------------------------------------------------------------------------

    def _save(self, output_dir: str | None = None, state_dict: dict | None = None) -> None:
        super()._save(output_dir, state_dict=state_dict)
        output_dir = output_dir if output_dir is not None else self.args.output_dir
        if self.args.should_save and self.subnetwork_mask is not None:
            save_subnetwork_mask(self.subnetwork_mask, os.path.join(output_dir, SUBNETWORK_MASK_NAME),
                                 self.subnetwork_config, step=self.state.global_step)

    def _load_from_checkpoint(self, resume_from_checkpoint: str, model: nn.Module | None = None) -> None:
        super()._load_from_checkpoint(resume_from_checkpoint, model)
        path = os.path.join(resume_from_checkpoint, SUBNETWORK_MASK_NAME)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"checkpoint {resume_from_checkpoint} has no {SUBNETWORK_MASK_NAME}: the "
                                    "subnetwork cannot be recomputed from trained weights")
        masks, config = load_subnetwork_mask(path)
        if config is not None and config != self.subnetwork_config:
            logger.warning(f"the checkpoint's subnetwork config {config} replaces {self.subnetwork_config}")
            self.subnetwork_config = config
        if self.subnetwork_mask is not None:
            for name, mask in masks.items():  # in place, so hooks and param groups built earlier see the change
                self.subnetwork_mask[name].copy_(mask)
            if self._gradient_hooks:
                self._refresh_mask_views()
            if self.optimizer is not None:  # the optimizer state for the new masks comes from the checkpoint
                self._replace_compact_values(getattr(self.optimizer, "optimizer", self.optimizer))
        else:
            self.set_subnetwork_mask(masks)

    def subnetwork_statistics(self) -> dict[str, float]:
        """`subnetwork/changed_fraction` and `subnetwork/trainable_fraction` over the masked tensors."""
        if not self._reference or self.subnetwork_mask is None:
            return {}
        parameters = dict(self._unwrapped_model.named_parameters())
        changed = total = 0
        for name, (mask, values) in self._reference.items():
            changed += int((parameters[name].detach()[mask] != values).sum())
            total += mask.numel()
        return {"subnetwork/changed_fraction": changed / max(total, 1),
                "subnetwork/trainable_fraction": mask_density(self.subnetwork_mask)}

    def save_sparse_delta(self, path: str | os.PathLike, base: nn.Module | Mapping[str, torch.Tensor]) -> SparseDeltaInfo:
        """Write the trained model as a sparse delta over `base` (the model or state dict training started from) with
        [`save_sparse_delta`] (main process only) and log its size."""
        if self.subnetwork_mask is None:
            raise ValueError("no subnetwork mask yet: train first, or pass subnetwork_mask")
        masks = {name: mask.cpu() for name, mask in self.subnetwork_mask.items()}
        info = None
        if self.args.should_save:
            info = save_sparse_delta(self._unwrapped_model, base, masks, path)
            logger.info(str(info))
        return info

    def log(self, logs: dict[str, float], start_time: float | None = None) -> None:
        if "loss" in logs or "train_loss" in logs:
            logs = {**logs, **self.subnetwork_statistics()}
        super().log(logs, start_time)


__all__ = ["SubnetworkTrainer", "SUBNETWORK_DECAY_KEY", "SUBNETWORK_NAMES_KEY"]
