"""Cost of the subnetwork mask in the optimizer step: `SubnetworkTrainer`'s masked step against the plain fused AdamW
step that `transformers.Trainer` builds, on the same MiniLM-sized Q-BERT (6 layers, 384 hidden, 12 heads, 1536
intermediate, 30522-token vocabulary; random init) on CPU.

Both optimizers are built by the trainers themselves (`create_optimizer`, `optim="adamw_torch_fused"`, weight decay
0.01). One timed step is

* plain: `optimizer.step()` (fused AdamW over every parameter);
* masked: the gradient masking the backward hook does (`.grad *= mask` in place for every masked tensor) +
  `optimizer.step()` with its pre-hook (gather the trainable entries' values and gradients into the compact tensors
  the optimizer holds), fused AdamW (over the compact tensors and the unmasked parameters, decay included) and its
  post-hook (write the trainable values back into the parameters).

Gradients are fixed random tensors, so only the step is timed. Steps of the two alternate and the best of `--repeats`
is kept. Target: at most 10% time overhead. The gradient-mask pass (read gradient and mask, write gradient, 10.6M
entries) is memory-bound and on its own costs 12-23% of the plain step here, depending on how busy the machine's
memory is; the compact optimizer saves about as much as its gathers and write-back cost.

Memory: peak resident set size of a fresh subprocess per variant that builds the model and its gradients, resets the
high-water mark (`/proc/self/clear_refs`, Linux), builds the optimizer and runs `--memory-steps` steps; reported as
the peak (`VmHWM`) and as its increase over the RSS before the optimizer existed (optimizer state + masks + step
temporaries). Both ratios are printed on the RESULT line.

    .venv/bin/python benchmarks/bench_sparse.py            # about a minute on 2 cores
    .venv/bin/python benchmarks/bench_sparse.py --quick    # smoke run
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


def build_optimizer(variant: str, model, output_dir: str, fraction: float):
    """The optimizer the trainer builds (plain `Trainer` or `SubnetworkTrainer`) and, for the masked variant, the
    (parameter, gradient multiplier) pairs its gradient hooks use."""
    from transformers import Trainer, TrainingArguments

    from modeling_qbert.sparse import SubnetworkConfig
    from modeling_qbert.trainer import SubnetworkTrainer

    arguments = TrainingArguments(output_dir=output_dir, use_cpu=True, report_to=[], optim="adamw_torch_fused",
                                  weight_decay=0.01, learning_rate=1e-4)
    if variant == "plain":
        return Trainer(model=model, args=arguments).create_optimizer(), None
    trainer = SubnetworkTrainer(model=model, args=arguments, subnetwork_config=SubnetworkConfig(fraction=fraction))
    optimizer = trainer.create_optimizer()
    parameters = dict(model.named_parameters())
    return optimizer, [(parameters[name], multiplier) for name, multiplier in trainer._multiplier_masks.items()]


def step_function(optimizer, masks):
    import torch

    if masks is None:
        return optimizer.step

    def masked_step():
        with torch.no_grad():
            for parameter, multiplier in masks:  # what the gradient hook does in backward
                parameter.grad.mul_(multiplier)
        optimizer.step()  # pre-hook (gathers) + AdamW + post-hook (write-back)

    return masked_step


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


def memory_worker(variant: str, fraction: float, steps: int) -> None:
    """Peak RSS (VmHWM) while building the optimizer and stepping, and its increase over the RSS just before; the
    high-water mark is reset first through /proc/self/clear_refs (Linux)."""
    with tempfile.TemporaryDirectory() as output_dir:
        model = build_model()
        Path("/proc/self/clear_refs").write_text("5")
        before = _status_kib("VmRSS")
        optimizer, masks = build_optimizer(variant, model, output_dir, fraction)
        step = step_function(optimizer, masks)
        for _ in range(steps):
            step()
        peak = _status_kib("VmHWM")
    print(json.dumps({"peak_kib": peak, "increase_kib": peak - before}))


def measure_memory(variant: str, fraction: float, steps: int, threads: int) -> dict:
    command = [sys.executable, __file__, "--memory-worker", variant, "--fraction", str(fraction),
               "--memory-steps", str(steps), "--threads", str(threads)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="few repeats, a smoke run")
    parser.add_argument("--repeats", type=int, default=None, help="timed steps per variant (default 20, quick 4)")
    parser.add_argument("--fraction", type=float, default=0.1, help="subnetwork fraction")
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
        memory_worker(args.memory_worker, args.fraction, args.memory_steps)
        return 0

    repeats = args.repeats or (4 if args.quick else 20)
    print(f"# bench_sparse: {_common.machine_line()}, torch {torch.__version__}, {where}")
    with tempfile.TemporaryDirectory() as output_dir:
        model, masked_model = build_model(), build_model()
        plain_optimizer, _ = build_optimizer("plain", model, output_dir, args.fraction)
        masked_optimizer, masks = build_optimizer("masked", masked_model, output_dir, args.fraction)
        total = sum(p.numel() for p in model.parameters())
        masked_entries = sum(mask.numel() for _, mask in masks)
        print(f"# model: {total / 1e6:.1f}M parameters, {masked_entries / 1e6:.1f}M in {len(masks)} masked tensors "
              f"({args.fraction:.0%} of them trainable)")
        plain_step, masked_step = step_function(plain_optimizer, None), step_function(masked_optimizer, masks)
        plain_step(), masked_step()  # warm-up: optimizer state allocation
        plain_times, masked_times, hooks_times = [], [], []
        for _ in range(repeats):
            plain_times += _common.timed(plain_step, 1)[0]
            masked_times += _common.timed(masked_step, 1)[0]
            hooks_times += _common.timed(masked_optimizer.step, 1)[0]  # without the backward hook's share
        forward_backward_time = None
        if min(args.context_batch) > 0:
            model.train()
            forward_backward_time = _common.best(
                _common.timed(forward_backward_function(model, *args.context_batch), 2 if args.quick else 3)[0])
    del model, masked_model, plain_optimizer, masked_optimizer, masks

    plain_memory = measure_memory("plain", args.fraction, args.memory_steps, args.threads)
    masked_memory = measure_memory("masked", args.fraction, args.memory_steps, args.threads)

    plain_best, masked_best = _common.best(plain_times), _common.best(masked_times)
    ratio = masked_best / plain_best
    peak_ratio = masked_memory["peak_kib"] / plain_memory["peak_kib"]
    increase_ratio = masked_memory["increase_kib"] / max(plain_memory["increase_kib"], 1)
    print(f"{'variant':<34}{'best step ms':>14}{'median ms':>12}{'peak RSS MiB':>15}{'RSS increase MiB':>19}")
    for name, times, memory in (("plain fused AdamW", plain_times, plain_memory),
                                ("masked (hook + step hooks + AdamW)", masked_times, masked_memory),
                                ("  of which step hooks + AdamW", hooks_times, None)):
        median = sorted(times)[len(times) // 2]
        memory_columns = (f"{memory['peak_kib'] / 1024:>15.0f}{memory['increase_kib'] / 1024:>19.0f}" if memory
                          else f"{'':>15}{'':>19}")
        print(f"{name:<34}{min(times) * 1e3:>14.1f}{median * 1e3:>12.1f}{memory_columns}")
    verdict = "met" if ratio <= 1.10 else "missed"
    print(f"RESULT masked/plain optimizer step time ratio {ratio:.3f} (target <= 1.10: {verdict}); "
          f"without the backward hook's pass {_common.best(hooks_times) / plain_best:.3f}; peak RSS ratio "
          f"{peak_ratio:.3f}, optimizer-side RSS increase ratio {increase_ratio:.3f} (VmHWM, fresh process each)")
    if forward_backward_time is not None:
        full = (forward_backward_time + masked_best) / (forward_backward_time + plain_best)
        print(f"# context: forward+backward of batch {args.context_batch[0]}x{args.context_batch[1]} takes "
              f"{forward_backward_time * 1e3:.0f} ms, so a whole training step costs {full:.4f}x the plain one")
    return 0


if __name__ == "__main__":
    sys.exit(main())
