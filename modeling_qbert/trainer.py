"""`SubnetworkTrainer`: a `transformers.Trainer` that fine-tunes only a sparse subnetwork (§III-F of Zhu et al., 2022).

Trainer calls `optimizer.step()` directly (there is no `optimizer_step` to override), so the mask is applied around
the optimizer, set up in `create_optimizer`:

* the optimizer does not hold the masked parameters themselves but, for each one, a flat tensor of its trainable
  values (*compact values*), in param groups of their own with the usual weight decay. Their gradient is gathered
  from the parameter's `.grad` at the trainable positions (`index_select` of the flat gradient) once per optimizer
  step, at the sync step of gradient accumulation, after DDP's all-reduce; the optimizer updates them (decoupled decay
  included, with the scheduler's `lr`), and an `optimizer.register_step_post_hook` writes them back into the parameter
  (`index_copy_` on the trainable positions). Frozen entries are never written, so they stay bit-identical whatever
  the weight decay, and the optimizer has no state for them at all (Adam's moments exist for trainable entries only:
  about a tenth of the dense optimizer's memory and work on masked tensors, which pays for the gathers and the
  write-back);
* gradients are not masked: the frozen entries of a masked parameter's `.grad` hold their ordinary (accumulated,
  all-reduced) values, and nothing reads them. Gradient clipping and the logged `grad_norm` are computed over the
  compact gradients and the unmasked parameters' gradients, i.e. over trainable entries only, by overriding the
  Trainer's `_clip_grad_norm` and `_get_grad_norm` (private methods of `transformers.Trainer`, checked for at
  `__init__`; transformers 5.x calls them at every sync step, before `optimizer.step()`). They gather the compact
  gradients first, then unscale (fp16 grad scaler: the scaler unscales and checks the optimizer's tensors, which are
  now the compact gradients) and clip those in place, as `accelerator.clip_grad_norm_` does for the model's
  parameters. An `optimizer.register_step_pre_hook` gathers the compact gradients itself when they were not gathered
  for this step (`optimizer.step()` called outside the Trainer's loop), and the current values whenever the parameter
  was written since the last write-back;
* with `method="iterative"` the same pre-hook shrinks the masks on the cubic schedule and drops the compact values, the
  compact gradients and the optimizer state of the entries that leave the subnetwork. A schedule left unset is scaled
  to the run's optimizer steps when the optimizer is built (`SubnetworkConfig.scaled_to(state.max_steps)`), and a
  run that ends before the schedule's `end_step` is warned about (its mask stays denser than `fraction`). With
  `fixed_mask=True` (a mask saved by iterative pre-training, passed as `subnetwork_mask`) nothing is pruned.

The model's parameters stay the source of truth: values are gathered again whenever a parameter was written since the
last write-back (its version counter moved), so weights loaded between steps are picked up. The mask is written as `subnetwork_mask.safetensors` with every checkpoint and every
`save_model`, and on resume it is read back from the checkpoint (before the optimizer exists, as checkpoint weights
are loaded first), never recomputed.
`subnetwork/changed_fraction` (share of masked-tensor entries that differ from their values when this `train()` call
built its optimizer) and `subnetwork/trainable_fraction` are added to the training logs.
"""

from __future__ import annotations

import atexit
import ctypes
import os
import sys
from collections.abc import Mapping
from typing import Any, NoReturn

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


ENDED_GROUPS: list[Any] = []
"""The process groups :func:`end_process_group` ended, held until the process ends (see there)."""


def end_process_group(together: bool = False) -> None:
    """End torch.distributed's default process group, if this process has one, without ever freeing it.

    With ``together``, every process of the run calls this at the same point (the scripts do, as soon as training
    returns: nothing after it communicates), and a barrier first completes whatever work the group still holds, so
    that no process leaves while a peer may still need it. Without it (at exit, whatever happened), the group is
    ended alone.

    Why the group is kept (:data:`ENDED_GROUPS`) rather than freed: freeing a gloo group from Python can deadlock or
    abort the process after a run succeeded. Its destructor takes the group's work lock, while one of its worker
    threads, holding that lock, may still be releasing a finished collective (an all-gather of the trainer's)
    whose tensors belong to Python objects, and so waits for the interpreter lock that the freeing thread holds: a
    deadlock (seen: rank 1 of ``accelerate launch`` hung in ``~ProcessGroupGloo`` under ``gc.collect``). Freed
    during the interpreter's finalization instead (the DDP wrapper that holds it sits in the trainer's reference
    cycles), the worker cannot get that lock at all and is stopped by a forced unwind through C++ code that may not
    throw: "terminate called without an active exception" (SIGABRT). So the group is taken out of torch's registry
    and held for good (a reference the interpreter never gives back, so that its finalization does not free it
    either), and a script that ran one ends its process with :func:`exit_process`, which skips the interpreter's
    finalization altogether: the operating system releases the group, its threads and sockets. [`QBertTrainer`] registers this
    at exit in every process of a distributed run."""
    import torch.distributed as dist

    if not dist.is_available() or not dist.is_initialized():
        return
    if together and dist.get_world_size() > 1:
        dist.barrier()
    group = dist.group.WORLD
    ENDED_GROUPS.append(group)
    # A reference of the interpreter's own, never given back: the interpreter's finalization (which clears this
    # module's list) does not free the group either, in a script that ends without exit_process.
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(group))
    dist.destroy_process_group()


def exit_process(status: int | None) -> NoReturn:
    """End a training script's process with ``status``: ``sys.exit`` normally; after a process group was ended
    (:func:`end_process_group`), ``os._exit`` once standard output, standard error and logging are flushed, so that
    the group is never freed by Python (which can deadlock or abort, see there)."""
    import logging as std_logging

    status = 0 if status is None else status
    if not ENDED_GROUPS:
        sys.exit(status)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed or broken stream: nothing more can be said
            pass
    std_logging.shutdown()
    os._exit(status)


def is_head_parameter(name: str) -> bool:
    """Whether parameter ``name`` of a Q-BERT model belongs to the sentence pooling or the scoring head (everything
    outside the ``bert`` encoder): the weights a new Q-BERT starts with at random."""
    return not name.startswith("bert.")


def set_head_learning_rate(optimizer: torch.optim.Optimizer, model: nn.Module, learning_rate: float) -> None:
    """Move the head's parameters (:func:`is_head_parameter`) of every plain param group into a copy of that group
    whose ``lr`` is ``learning_rate``; empty groups are dropped. Call before the scheduler is built (it records each
    group's initial ``lr``, so the schedule scales both rates alike). Subnetwork groups (compact values of masked
    encoder matrices) are left as they are."""
    head = {id(parameter) for name, parameter in model.named_parameters() if is_head_parameter(name)}
    for group in list(optimizer.param_groups):
        if SUBNETWORK_NAMES_KEY in group:
            continue
        moved = [parameter for parameter in group["params"] if id(parameter) in head]
        if not moved:
            continue
        group["params"] = [parameter for parameter in group["params"] if id(parameter) not in head]
        if not group["params"]:
            optimizer.param_groups.remove(group)
        optimizer.add_param_group({**{key: value for key, value in group.items() if key != "params"},
                                   "params": moved, "lr": learning_rate})


def listwise_ranking_loss(logits: torch.Tensor, labels: torch.Tensor, sentence_mask: torch.Tensor) -> torch.Tensor:
    """ListNet's top-one loss within each window: cross-entropy between the softmax of the window's sentence logits and
    its labels normalised to sum to one. It depends only on the order and relative size of the labels in a window, so
    small targets (ROUGE-2 recall is mostly below 0.05) still give a full-sized gradient. Windows without a positive
    label and sentences without one (-100, NaN, no tokens) take no part; zero (keeping the graph) when no window
    counts."""
    labels = labels.to(logits.dtype)
    valid = sentence_mask.bool() & labels.ne(-100) & ~torch.isnan(labels)
    targets = torch.where(valid, labels.clamp(min=0), torch.zeros_like(labels))
    totals = targets.sum(-1)
    rows = totals > 0
    if not bool(rows.any()):
        return logits.sum() * 0.0
    log_probabilities = torch.log_softmax(logits.masked_fill(~valid, float("-inf")), dim=-1)
    log_probabilities = torch.where(valid, log_probabilities, torch.zeros_like(log_probabilities))
    return -((targets[rows] / totals[rows].unsqueeze(-1)) * log_probabilities[rows]).sum(-1).mean()


class QBertTrainer(Trainer):
    r"""
    A [`~transformers.Trainer`] for Q-BERT whose pooling and scoring head may learn at their own rate.

    Args:
        head_learning_rate (`float`, *optional*):
            Learning rate of the parameters outside the encoder (`sentence_pooling.*`, `classifier.*`); the encoder
            keeps `args.learning_rate`. A head that starts at random next to a pre-trained encoder needs a larger step
            than the encoder's 3e-5 to move within one epoch. `None`: one rate for all.
        ranking_loss_weight (`float`, *optional*, defaults to 0):
            Adds this times [`listwise_ranking_loss`] (the order of the sentences within each window) to the model's
            own loss (BCE or MSE, the paper's). 0: the model's loss alone.
        *args, **kwargs: passed to [`~transformers.Trainer`].
    """

    def __init__(self, *args, head_learning_rate: float | None = None, ranking_loss_weight: float = 0.0, **kwargs):
        super().__init__(*args, **kwargs)
        if head_learning_rate is not None and not head_learning_rate > 0:
            raise ValueError(f"head_learning_rate must be positive, got {head_learning_rate}")
        if not ranking_loss_weight >= 0:
            raise ValueError(f"ranking_loss_weight must be at least 0, got {ranking_loss_weight}")
        self.head_learning_rate = head_learning_rate
        self.ranking_loss_weight = ranking_loss_weight
        if torch.distributed.is_available() and torch.distributed.is_initialized():
            atexit.unregister(end_process_group)  # once, however many trainers a script builds
            atexit.register(end_process_group)

    def compute_loss(self, model: nn.Module, inputs: dict, return_outputs: bool = False,
                     num_items_in_batch: torch.Tensor | None = None):
        if not self.ranking_loss_weight or "labels" not in inputs:
            return super().compute_loss(model, inputs, return_outputs=return_outputs,
                                        num_items_in_batch=num_items_in_batch)
        outputs = model(**inputs)
        loss = outputs.loss + self.ranking_loss_weight * listwise_ranking_loss(
            outputs.logits, inputs["labels"], outputs.sentence_mask)
        return (loss, outputs) if return_outputs else loss

    def create_optimizer(self, model: nn.Module | None = None) -> torch.optim.Optimizer:
        if self.optimizer is not None:
            return self.optimizer
        super().create_optimizer(model)
        self._apply_head_learning_rate(model)
        return self.optimizer

    def _apply_head_learning_rate(self, model: nn.Module | None) -> None:
        if self.head_learning_rate is not None:
            set_head_learning_rate(self.optimizer, self.accelerator.unwrap_model(
                model if model is not None else self.model, keep_torch_compile=False), self.head_learning_rate)


class SubnetworkTrainer(QBertTrainer):
    r"""
    A [`~transformers.Trainer`] whose optimizer changes only the entries of a sparse subnetwork.

    Args:
        subnetwork_config ([`SubnetworkConfig`], *optional*):
            Fraction, targets and method; defaults to `SubnetworkConfig()` (10% one-step).
        subnetwork_mask (`dict[str, torch.BoolTensor]`, *optional*):
            Masks to use (e.g. from [`load_subnetwork_mask`]); by default they are identified from the model's weights
            when the optimizer is created (or read from the checkpoint when resuming).
        *args, **kwargs: passed to [`QBertTrainer`] (`head_learning_rate`) and [`~transformers.Trainer`].

    Works with any `torch.optim` optimizer built from param groups (AdamW, Adam, SGD — the default
    `adamw_torch_fused` included): it only ever sees the trainable entries of masked parameters. Custom optimizer
    factories and `optimizers=` passed in are refused.
    """

    def __init__(self, *args, subnetwork_config: SubnetworkConfig | None = None,
                 subnetwork_mask: Mapping[str, torch.Tensor] | None = None, **kwargs):
        missing = [name for name in ("_clip_grad_norm", "_get_grad_norm") if not hasattr(Trainer, name)]
        if missing:
            raise RuntimeError(f"SubnetworkTrainer needs transformers.Trainer.{' and '.join(missing)} (transformers "
                               "5.x) to clip and measure the gradient over trainable entries only; this transformers "
                               "version does not have them")
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
        self._step_hooks: list = []
        self._reference: dict[str, tuple[torch.Tensor, torch.Tensor]] = {}
        self._masked_parameters: dict[str, nn.Parameter] = {}
        self._trainable_indices: dict[str, torch.Tensor] = {}
        self._synced_versions: dict[str, int] = {}
        self._gradients_gathered = False  # compact gradients gathered for the coming optimizer step

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
        self._schedule_for_run()
        masks = self.identify_subnetwork()
        self._refresh_mask_views()

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
        self._apply_head_learning_rate(opt_model)
        return self.optimizer

    def _schedule_for_run(self) -> None:
        """Scale an unset iterative schedule to this run's optimizer steps and warn when the run ends before the
        schedule reaches its target (the mask would stay denser than `fraction`, silently)."""
        config = self.subnetwork_config
        if not config.prunes:
            return
        total = self.state.max_steps
        if config.end_step is None or config.update_frequency is None:
            if total < 1:
                raise ValueError("the iterative schedule is scaled to the run's steps: build the optimizer through "
                                 "train(), or give end_step and update_frequency")
            config = self.subnetwork_config = config.scaled_to(total)
            logger.info(f"iterative subnetwork schedule for {total} steps: {config.initial_fraction:.2%} -> "
                        f"{config.fraction:.2%} trainable from step {config.begin_step} to {config.end_step}, "
                        f"pruning every {config.update_frequency} steps")
        if total >= 1 and not config.reaches_target(total):
            logger.warning(f"the run ends after {total} optimizer steps, before the iterative schedule reaches its "
                           f"target at step {config.end_step}: the subnetwork ends with "
                           f"{config.final_fraction(total):.2%} of each masked tensor trainable, not "
                           f"{config.fraction:.2%} (train longer, or set an earlier end_step)")

    def _refresh_mask_views(self) -> None:
        """The flat indices of the trainable entries of every masked parameter (what the compact values and
        gradients are gathered from, and the values written back to)."""
        parameters = dict(self._unwrapped_model.named_parameters())
        for name, mask in self.subnetwork_mask.items():
            parameter = self._masked_parameters[name] = parameters[name]
            if not parameter.is_contiguous():
                raise ValueError(f"masked parameter {name} is not contiguous: its trainable entries cannot be "
                                 "written back through a flat view")
            self._trainable_indices[name] = torch.nonzero(mask.flatten()).flatten()

    def _compact_values(self, name: str) -> torch.Tensor:
        """A new flat tensor of the trainable values of masked parameter `name` (what the optimizer updates)."""
        parameter = self._masked_parameters[name]
        self._synced_versions[name] = parameter._version
        return parameter.detach().view(-1).index_select(0, self._trainable_indices[name])

    @staticmethod
    def _subnetwork_groups(optimizer: torch.optim.Optimizer) -> list[Mapping]:
        return [group for group in optimizer.param_groups if SUBNETWORK_NAMES_KEY in group]

    @property
    def _inner_optimizer(self) -> torch.optim.Optimizer:
        return getattr(self.optimizer, "optimizer", self.optimizer)  # unwrap accelerate's AcceleratedOptimizer

    @torch.no_grad()
    def _gather_gradients(self, optimizer: torch.optim.Optimizer) -> None:
        """Gather every masked parameter's gradient at its trainable positions into the `.grad` of its compact
        values (`None` where the parameter has no gradient). The frozen entries of `.grad` are never read."""
        for group in self._subnetwork_groups(optimizer):
            for name, values in zip(group[SUBNETWORK_NAMES_KEY], group["params"]):
                gradient = self._masked_parameters[name].grad
                if gradient is None:
                    values.grad = None
                    continue
                if values.grad is None or values.grad.shape != values.shape or values.grad.dtype != gradient.dtype:
                    values.grad = torch.empty_like(values, dtype=gradient.dtype)
                torch.index_select(gradient.view(-1), 0, self._trainable_indices[name], out=values.grad)
        self._gradients_gathered = True

    def _trainable_gradient_tensors(self, model: nn.Module) -> list[torch.Tensor]:
        """What clipping and the gradient norm cover, in the model's parameter order (as the Trainer's own clipping
        goes): the compact values of masked parameters (their `.grad`: the gathered trainable gradients) and the other
        parameters themselves. Gathers the compact gradients first."""
        optimizer = self._inner_optimizer
        self._gather_gradients(optimizer)
        compact = {name: values for group in self._subnetwork_groups(optimizer)
                   for name, values in zip(group[SUBNETWORK_NAMES_KEY], group["params"])}
        model = self.accelerator.unwrap_model(model, keep_torch_compile=False)
        return [compact.get(name, parameter) for name, parameter in model.named_parameters()]

    def _clip_grad_norm(self, model: nn.Module) -> torch.Tensor:
        """Clip the gradient of the trainable entries to `max_grad_norm`; returns its pre-clip norm. Frozen entries'
        gradients neither count nor change (`accelerator.clip_grad_norm_` over compact gradients + unmasked ones)."""
        if self.optimizer is None or not self._masked_parameters:
            return super()._clip_grad_norm(model)
        tensors = self._trainable_gradient_tensors(model)
        self.accelerator.unscale_gradients()
        return torch.nn.utils.clip_grad_norm_(tensors, self.args.max_grad_norm)

    def _get_grad_norm(self, model: nn.Module, grad_norm: torch.Tensor | float | None = None):
        """The norm of the trainable entries' gradient (`grad_norm` as `_clip_grad_norm` returned it, or computed
        without clipping when `max_grad_norm` is 0)."""
        if grad_norm is not None or self.optimizer is None or not self._masked_parameters:
            return super()._get_grad_norm(model, grad_norm=grad_norm)
        tensors = self._trainable_gradient_tensors(model)
        self.accelerator.unscale_gradients()
        return torch.nn.utils.get_total_norm([t.grad for t in tensors if t.grad is not None])

    @torch.no_grad()
    def _before_optimizer_step(self, optimizer: torch.optim.Optimizer, args, kwargs) -> None:
        if self.subnetwork_config.is_update_step(self.state.global_step):
            self._prune(optimizer, self.state.global_step)
        if not self._gradients_gathered:  # optimizer.step() called outside the Trainer's clipping / norm
            self._gather_gradients(optimizer)
        for group in self._subnetwork_groups(optimizer):
            for name, values in zip(group[SUBNETWORK_NAMES_KEY], group["params"]):
                # Gather the trainable entries' values unless they are still the ones the last write-back left (the
                # parameter's version counter counts every in-place write, e.g. `load_state_dict`): the optimizer
                # updates only these, with its own decoupled decay.
                parameter = self._masked_parameters[name]
                if parameter._version != self._synced_versions.get(name):
                    torch.index_select(parameter.detach().view(-1), 0, self._trainable_indices[name], out=values)

    @torch.no_grad()
    def _after_optimizer_step(self, optimizer: torch.optim.Optimizer, args, kwargs) -> None:
        self._gradients_gathered = False
        for group in self._subnetwork_groups(optimizer):
            for name, values in zip(group[SUBNETWORK_NAMES_KEY], group["params"]):
                # Only the trainable positions are written: frozen entries keep their bits.
                parameter = self._masked_parameters[name]
                parameter.detach().view(-1).index_copy_(0, self._trainable_indices[name], values)
                self._synced_versions[name] = parameter._version

    def _replace_compact_values(self, optimizer: torch.optim.Optimizer,
                                kept: Mapping[str, torch.Tensor] | None = None) -> None:
        """Rebuild every group's compact values from the current masks. `kept` (by name: a bool tensor over the old
        compact values, from a mask that shrank) carries the optimizer state and the gathered gradient of the entries
        that stay; without it the state of a tensor whose trainable entries changed is dropped."""
        for group in self._subnetwork_groups(optimizer):
            for position, (name, old) in enumerate(zip(group[SUBNETWORK_NAMES_KEY], group["params"])):
                new = self._compact_values(name)
                keep = kept[name] if kept is not None else None
                state = optimizer.state.pop(old, None)
                if state is not None and (keep is not None or new.shape == old.shape):
                    optimizer.state[new] = {key: value[keep] if keep is not None and isinstance(value, torch.Tensor)
                                            and value.shape == old.shape else value for key, value in state.items()}
                if keep is not None and old.grad is not None:  # the (clipped, unscaled) gradient gathered this step
                    new.grad = old.grad[keep]
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
            if self._masked_parameters:
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

    def save_sparse_delta(self, path: str | os.PathLike, base: nn.Module | Mapping[str, torch.Tensor],
                          base_model_id: str | None = None, base_revision: str | None = None) -> SparseDeltaInfo:
        """Write the trained model as a sparse delta over `base` (the model or state dict training started from) with
        [`save_sparse_delta`] (main process only) and log its size. The base is recorded as `base_model_id` (default:
        where the trained model was loaded from, which is the base) and `base_revision`."""
        if self.subnetwork_mask is None:
            raise ValueError("no subnetwork mask yet: train first, or pass subnetwork_mask")
        masks = {name: mask.cpu() for name, mask in self.subnetwork_mask.items()}
        if base_model_id is None:
            base_model_id = getattr(base, "name_or_path", None) or getattr(self._unwrapped_model, "name_or_path", None)
        info = None
        if self.args.should_save:
            info = save_sparse_delta(self._unwrapped_model, base, masks, path, base_model_id=base_model_id or None,
                                     base_revision=base_revision)
            logger.info(str(info))
        return info

    def log(self, logs: dict[str, float], start_time: float | None = None) -> None:
        if "loss" in logs or "train_loss" in logs:
            logs = {**logs, **self.subnetwork_statistics()}
        super().log(logs, start_time)


__all__ = ["SubnetworkTrainer", "SUBNETWORK_DECAY_KEY", "SUBNETWORK_NAMES_KEY"]
