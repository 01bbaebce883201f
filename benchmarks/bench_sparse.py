"""Cost of the subnetwork mask in the optimizer step: `SubnetworkTrainer`'s masked step against the plain fused AdamW
step of `transformers.Trainer`, on the same MiniLM-sized Q-BERT (6 layers, 384 hidden, 12 heads, 1536 intermediate,
30522-token vocabulary; random init) on CPU.

Both trainers are built the same way (`optim="adamw_torch_fused"`, weight decay 0.01, `max_grad_norm=1.0` unless
`--max-grad-norm` says otherwise) and build their own optimizers (`create_optimizer`). One timed step is everything
each Trainer does at a sync step between backward and `zero_grad`, exactly as its training loop calls it:

    grad_norm = trainer._clip_grad_norm(model)            # max_grad_norm > 0
    grad_norm = trainer._get_grad_norm(model, grad_norm=grad_norm)
    trainer.optimizer.step()

* plain: clipping over every parameter's gradient (`accelerator.clip_grad_norm_`) + fused AdamW over every
  parameter;
* masked: gathering the trainable entries' gradients into the compact tensors the optimizer holds (`index_select`),
  clipping over those and the unmasked parameters' gradients, then `optimizer.step()`: its pre-hook (values gathered
  only if the parameter was written since the last step), fused AdamW over the compact tensors and the unmasked
  parameters (decay included) and its post-hook (write the trainable values back). There is no gradient-mask pass:
  frozen entries' gradients are simply never read. Nothing else runs per step (no backward hooks).

Clipping is on in both, as in a default Trainer run, so the masked side pays for every piece of its per-step work and
the plain side for its own dense clipping. Gradients are fixed random tensors, so only the step is timed. Steps of the
two alternate and the best of `--repeats` is kept. Target: at most 10% time overhead. (Before the gradients were
gathered at clipping time, a backward hook multiplied each masked `.grad` by its mask: that memory-bound pass over
10.6M entries alone cost 12-23% of the plain step, 1.25-1.28x in all.)

Memory: peak resident set size of a fresh subprocess per variant that builds the model and its gradients, resets the
high-water mark (`/proc/self/clear_refs`, Linux), builds the optimizer and runs `--memory-steps` steps; reported as
the peak (`VmHWM`) and as its increase over the RSS before the optimizer existed (optimizer state + masks + step
temporaries). Both ratios are printed on the RESULT line.

    .venv/bin/python benchmarks/bench_sparse.py            # about a minute on 2 cores
    .venv/bin/python benchmarks/bench_sparse.py --quick    # smoke run
    .venv/bin/python benchmarks/bench_sparse.py --max-grad-norm 0   # no clipping: norm only, on both sides
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import _common

ROOT = Path(__file__).resolve().parents[1]


def build_model():
    """A MiniLM-sized Q-BERT (random init) whose parameters hold fixed random gradients."""
    import torch
    from transformers.utils import logging as hf_logging

    from modeling_qbert import QBertConfig, QBertForSentenceScoring

    hf_logging.set_verbosity_error()
    torch.manual_seed(0)
    config = QBertConfig(vocab_size=30522, hidden_size=384, num_hidden_layers=6, num_attention_heads=12,
                         intermediate_size=1536, max_position_embeddings=512)
    model = QBertForSentenceScoring(config)
    for parameter in model.parameters():
        parameter.grad = torch.randn_like(parameter)
    return model


def build_trainer(variant: str, model, output_dir: str, fraction: float, max_grad_norm: float = 1.0):
    """The plain `Trainer` or the `SubnetworkTrainer`, with the optimizer it builds."""
    from transformers import Trainer, TrainingArguments

    from modeling_qbert.sparse import SubnetworkConfig
    from modeling_qbert.trainer import SubnetworkTrainer

    arguments = TrainingArguments(output_dir=output_dir, use_cpu=True, report_to=[], optim="adamw_torch_fused",
                                  weight_decay=0.01, learning_rate=1e-4, max_grad_norm=max_grad_norm)
    if variant == "plain":
        trainer = Trainer(model=model, args=arguments)
    else:
        trainer = SubnetworkTrainer(model=model, args=arguments, subnetwork_config=SubnetworkConfig(fraction=fraction))
    trainer.create_optimizer()
    return trainer


def step_function(trainer):
    """What the Trainer's loop runs at a sync step between backward and zero_grad (transformers 5.x)."""
    model = trainer.model

    def step():
        grad_norm = None
        if trainer.args.max_grad_norm > 0:
            grad_norm = trainer._clip_grad_norm(model)
        trainer._get_grad_norm(model, grad_norm=grad_norm)
        trainer.optimizer.step()

    return step


def forward_backward_function(model, batch_size: int, length: int):
    """One forward + backward of `model` on a random batch of packed windows (8 sentences each), for context."""
    import torch

    generator = torch.Generator().manual_seed(0)
    batch = {
        "input_ids": torch.randint(1000, 30000, (batch_size, length), generator=generator),
        "attention_mask": torch.ones(batch_size, length, dtype=torch.long),
        "token_type_ids": (torch.arange(length) >= 16).long().expand(batch_size, -1),
        "query_mask": ((torch.arange(length) > 0) & (torch.arange(length) < 15)).long().expand(batch_size, -1),
        "sentence_ids": torch.where(torch.arange(length) >= 16, (torch.arange(length) - 16) * 8 // (length - 16),
                                    -1).expand(batch_size, -1),
        "labels": torch.randint(0, 2, (batch_size, 8), generator=generator).float(),
    }

    def forward_backward():
        model(**batch).loss.backward()

    return forward_backward


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def memory_worker(variant: str, fraction: float, steps: int, max_grad_norm: float) -> None:
    """Peak RSS (VmHWM) while building the optimizer and stepping, and its increase over the RSS just before; the
    high-water mark is reset first through /proc/self/clear_refs (Linux)."""
    with tempfile.TemporaryDirectory() as output_dir:
        model = build_model()
        Path("/proc/self/clear_refs").write_text("5")
        before = _status_kib("VmRSS")
        step = step_function(build_trainer(variant, model, output_dir, fraction, max_grad_norm))
        for _ in range(steps):
            step()
        peak = _status_kib("VmHWM")
    print(json.dumps({"peak_kib": peak, "increase_kib": peak - before}))


def measure_memory(variant: str, fraction: float, steps: int, threads: int, max_grad_norm: float) -> dict:
    command = [sys.executable, __file__, "--memory-worker", variant, "--fraction", str(fraction),
               "--memory-steps", str(steps), "--threads", str(threads), "--max-grad-norm", str(max_grad_norm)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="few repeats, a smoke run")
    parser.add_argument("--repeats", type=int, default=None, help="timed steps per variant (default 20, quick 4)")
    parser.add_argument("--fraction", type=float, default=0.1, help="subnetwork fraction")
    parser.add_argument("--max-grad-norm", type=float, default=1.0,
                        help="both trainers' max_grad_norm (0: no clipping; the Trainer still computes the norm)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (1: pinned to one core)")
    parser.add_argument("--context-batch", type=int, nargs=2, default=(4, 256), metavar=("BATCH", "LENGTH"),
                        help="batch of the forward+backward timed for context (0 0: skip)")
    parser.add_argument("--memory-steps", type=int, default=3, help="steps per memory subprocess")
    parser.add_argument("--memory-worker", choices=("plain", "masked"), help=argparse.SUPPRESS)
    args = parser.parse_args()

    where = _common.pin_to_one_core() if args.threads == 1 else f"threads={args.threads}"
    sys.path.insert(0, str(ROOT))
    import torch

    torch.set_num_threads(args.threads)
    logging.disable(logging.WARNING)
    if args.memory_worker:
        memory_worker(args.memory_worker, args.fraction, args.memory_steps, args.max_grad_norm)
        return 0

    repeats = args.repeats or (4 if args.quick else 20)
    print(f"# bench_sparse: {_common.machine_line()}, torch {torch.__version__}, {where}")
    with tempfile.TemporaryDirectory() as output_dir:
        model, masked_model = build_model(), build_model()
        plain_trainer = build_trainer("plain", model, output_dir, args.fraction, args.max_grad_norm)
        masked_trainer = build_trainer("masked", masked_model, output_dir, args.fraction, args.max_grad_norm)
        masks = masked_trainer.subnetwork_mask
        total = sum(p.numel() for p in model.parameters())
        masked_entries = sum(mask.numel() for mask in masks.values())
        print(f"# model: {total / 1e6:.1f}M parameters, {masked_entries / 1e6:.1f}M in {len(masks)} masked tensors "
              f"({args.fraction:.0%} of them trainable); max_grad_norm {plain_trainer.args.max_grad_norm}")
        plain_step, masked_step = step_function(plain_trainer), step_function(masked_trainer)
        plain_step(), masked_step()  # warm-up: optimizer state allocation
        plain_times, masked_times, plain_optimizer_times, masked_optimizer_times = [], [], [], []
        for _ in range(repeats):
            plain_times += _common.timed(plain_step, 1)[0]
            masked_times += _common.timed(masked_step, 1)[0]
            # optimizer.step() alone (the masked pre-hook then gathers the gradients itself): no clipping
            plain_optimizer_times += _common.timed(plain_trainer.optimizer.step, 1)[0]
            masked_optimizer_times += _common.timed(masked_trainer.optimizer.step, 1)[0]
        forward_backward_time = None
        if min(args.context_batch) > 0:
            model.train()
            forward_backward_time = _common.best(
                _common.timed(forward_backward_function(model, *args.context_batch), 2 if args.quick else 3)[0])
    del model, masked_model, plain_trainer, masked_trainer, masks

    plain_memory = measure_memory("plain", args.fraction, args.memory_steps, args.threads, args.max_grad_norm)
    masked_memory = measure_memory("masked", args.fraction, args.memory_steps, args.threads, args.max_grad_norm)

    plain_best, masked_best = _common.best(plain_times), _common.best(masked_times)
    ratio = masked_best / plain_best
    peak_ratio = masked_memory["peak_kib"] / plain_memory["peak_kib"]
    increase_ratio = masked_memory["increase_kib"] / max(plain_memory["increase_kib"], 1)
    print(f"{'variant':<44}{'best step ms':>14}{'median ms':>12}{'peak RSS MiB':>15}{'RSS increase MiB':>19}")
    for name, times, memory in (("plain (clip/norm + fused AdamW)", plain_times, plain_memory),
                                ("masked (gather + clip/norm + hooks + AdamW)", masked_times, masked_memory),
                                ("  plain optimizer.step alone", plain_optimizer_times, None),
                                ("  masked optimizer.step alone (gathers too)", masked_optimizer_times, None)):
        median = sorted(times)[len(times) // 2]
        memory_columns = (f"{memory['peak_kib'] / 1024:>15.0f}{memory['increase_kib'] / 1024:>19.0f}" if memory
                          else f"{'':>15}{'':>19}")
        print(f"{name:<44}{min(times) * 1e3:>14.1f}{median * 1e3:>12.1f}{memory_columns}")
    verdict = "met" if ratio <= 1.10 else "missed"
    optimizer_ratio = _common.best(masked_optimizer_times) / _common.best(plain_optimizer_times)
    print(f"RESULT masked/plain step time ratio (clip_grad_norm_ + optimizer.step, as each Trainer runs them) "
          f"{ratio:.3f} (target <= 1.10: {verdict}); optimizer.step alone {optimizer_ratio:.3f}; peak RSS ratio "
          f"{peak_ratio:.3f}, optimizer-side RSS increase ratio {increase_ratio:.3f} (VmHWM, fresh process each)")
    if forward_backward_time is not None:
        full = (forward_backward_time + masked_best) / (forward_backward_time + plain_best)
        print(f"# context: forward+backward of batch {args.context_batch[0]}x{args.context_batch[1]} takes "
              f"{forward_backward_time * 1e3:.0f} ms, so a whole training step costs {full:.4f}x the plain one")
    return 0


if __name__ == "__main__":
    sys.exit(main())
