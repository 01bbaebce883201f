"""Speed of the greedy extractive oracle against rescoring every candidate set from scratch, on one core.

Ours: ``ExtractiveOracle`` (ROUGE-2, stemming): ``prepare`` once per example, then the curation search (recall, at
most 5 sentences), the label search (F1, no sentence limit) and ``sentence_scores`` (each sentence's own F1).
Baseline, written here: the same greedy algorithm, but at every step and for every candidate sentence it builds the
candidate summary's ROUGE-2 counts anew from the token lists of the selected sentences plus the candidate (n-grams
inside each sentence, as the oracle counts them) and scores it with ``rouge.clipped_hits`` against the reference.
Both use the same tokens (``oracle._scorer.tokens``) and the same reference counts, so their selections, scores and
sentence scores must be identical; every example is checked and the mismatch count printed.

Workload: WikiRef-like examples built deterministically from the golden texts of ``../shared/rouge_golden`` (or from
a seeded English-like generator when absent): a web-page-like document of 20-120 sentences mixing sentences of one
topic with unrelated ones, and a summary of 1-3 sentences, each either a topic sentence left out of the document or
a document sentence with about 30% of its words dropped.

    .venv/bin/python benchmarks/bench_oracle.py            # default sizes, under 3 minutes on 2 cores
    .venv/bin/python benchmarks/bench_oracle.py --quick    # smoke run, a few seconds
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from itertools import chain
from pathlib import Path

import _common


def build_examples(
    topics: list[list[str]], n_examples: int, seed: int, min_sentences: int = 20, max_sentences: int = 120
) -> list[tuple[list[str], str]]:
    """``(document sentences, summary)`` pairs, the summary's sentences joined by ``"\\n"``."""
    rng = random.Random(seed)
    everything = sorted({sentence for topic in topics for sentence in topic})
    examples = []
    for position in range(n_examples):
        topic = topics[position % len(topics)]
        order = rng.sample(topic, len(topic))
        n_document = rng.randint(min_sentences, max_sentences)
        summary = []
        for _ in range(rng.randint(1, 3)):
            if len(order) > 1 and rng.random() < 0.5:
                summary.append(order.pop())  # same topic, not in the document: partial overlap only
            else:
                source = order[rng.randrange(len(order))]
                words = [word for word in source.split() if rng.random() >= 0.3] or source.split()[:4]
                summary.append(" ".join(words))  # a shortened copy of a document sentence
        document = order[:n_document]
        in_document = set(document)
        while len(document) < n_document:
            sentence = rng.choice(everything)
            if sentence not in in_document:
                in_document.add(sentence)
                document.append(sentence)
        rng.shuffle(document)
        examples.append((document, "\n".join(summary)))
    return examples


# ----------------------------------------------------------------------------------------------------------------
# Baseline: the same greedy search, every candidate set rescored from its sentences' tokens
# ----------------------------------------------------------------------------------------------------------------


def _ngrams(tokens: list[str], n: int):
    return zip(*(tokens[k:] for k in range(n)), strict=False)


def _value(hit: int, candidate_total: int, reference_total: int, n_references: int, objective: str) -> float:
    """ROUGE-N recall, precision or F1 of a candidate (the oracle's definition, unrounded)."""
    if objective == "recall":
        return hit / reference_total if reference_total else 0.0
    peer_total = candidate_total * n_references
    if objective == "precision":
        return hit / peer_total if peer_total else 0.0
    denominator = peer_total + reference_total
    return 2.0 * hit / denominator if denominator and hit else 0.0


def baseline_prepare(oracle, sentences: list[str], summary: str) -> tuple[list[list[str]], list[Counter], int]:
    """The shared tokenization: every sentence's tokens and the reference's n-gram counts, as the oracle makes them."""
    scorer, n = oracle._scorer, oracle.config.n
    sentence_tokens = [[token for line in sentence.split("\n") for token in scorer.tokens(line)]
                       for sentence in sentences]
    from wikiref_dataset.rouge import ngram_counts

    reference_counts = [ngram_counts(scorer.summary_tokens(summary), n)]
    return sentence_tokens, reference_counts, sum(sum(counts.values()) for counts in reference_counts)


def baseline_search(
    sentence_tokens: list[list[str]], reference_counts: list[Counter], reference_total: int, n: int, objective: str,
    max_sentences: int | None,
) -> tuple[tuple[int, ...], float]:
    """Greedy search; each candidate set's n-gram counts are rebuilt from the tokens and scored with clipped_hits."""
    from wikiref_dataset.rouge import clipped_hits

    n_sentences = len(sentence_tokens)
    limit = n_sentences if max_sentences is None else min(max_sentences, n_sentences)
    chosen: list[int] = []
    score = 0.0
    while len(chosen) < limit:
        best_index, best_score = -1, score
        for index in range(n_sentences):
            if index in chosen:
                continue
            candidate = Counter(chain.from_iterable(_ngrams(sentence_tokens[j], n) for j in (*chosen, index)))
            hit = sum(clipped_hits(candidate, reference) for reference in reference_counts)
            value = _value(hit, sum(candidate.values()), reference_total, len(reference_counts), objective)
            if value > best_score:
                best_index, best_score = index, value
        if best_index < 0:
            break
        chosen.append(best_index)
        score = best_score
    return tuple(chosen), score


def baseline_sentence_scores(
    sentence_tokens: list[list[str]], reference_counts: list[Counter], reference_total: int, n: int, objective: str
) -> list[float]:
    from wikiref_dataset.rouge import clipped_hits

    scores = []
    for tokens in sentence_tokens:
        counts = Counter(_ngrams(tokens, n))
        hit = sum(clipped_hits(counts, reference) for reference in reference_counts)
        scores.append(_value(hit, sum(counts.values()), reference_total, len(reference_counts), objective))
    return scores


# ----------------------------------------------------------------------------------------------------------------
# Measurement
# ----------------------------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=3000, help="Number of WikiRef-like examples.")
    parser.add_argument("--min-sentences", type=int, default=20, help="Fewest document sentences.")
    parser.add_argument("--max-sentences", type=int, default=120, help="Most document sentences.")
    parser.add_argument("--repeats", type=int, default=3, help="Runs of ours (best prepare, best search reported).")
    parser.add_argument("--baseline-repeats", type=int, default=2, help="Runs of the baseline (best of each part).")
    parser.add_argument("--seed", type=int, default=0, help="Seed of the example builder.")
    parser.add_argument("--target", type=float, default=5.0, help="Target speedup of the search part.")
    parser.add_argument("--golden-dir", type=Path, default=_common.GOLDEN_DIR, help="The rouge_golden folder.")
    parser.add_argument("--no-pin", action="store_true", help="Do not pin the process to one CPU.")
    parser.add_argument("--quick", action="store_true", help="Smoke run: 150 examples, one repeat each.")
    args = parser.parse_args(argv)
    if args.quick:
        args.examples, args.repeats, args.baseline_repeats = min(args.examples, 150), 1, 1

    where = _common.pin_to_one_core(not args.no_pin)
    import numpy

    from wikiref_dataset.oracle import ExtractiveOracle, OracleConfig

    print(f"bench_oracle: {_common.machine_line()}, {where}; numpy {numpy.__version__}")
    topics, source = _common.text_topics(_common.load_golden_items(args.golden_dir))
    examples = build_examples(topics, args.examples, args.seed, args.min_sentences, args.max_sentences)
    n_sentences = sum(len(document) for document, _ in examples)
    print(f"workload: {len(examples)} examples, {args.min_sentences}-{args.max_sentences} document sentences "
          f"(mean {n_sentences / len(examples):.1f}), summaries of 1-3 sentences, from {source}")

    print("warming the stemmer cache ...", flush=True)
    oracle = ExtractiveOracle(OracleConfig(n=2, objective="recall", max_sentences=5))
    n = oracle.config.n
    for document, summary in examples:  # warm the stemmer cache once, so no timed run pays for it
        oracle.prepare(document, summary)

    # Examples are processed one after another, as curation streams them (holding thousands of prepared problems
    # would add garbage-collector work to whichever side keeps more objects); prepare and search are timed apart.
    def run_ours():
        prepare_s = search_s = 0.0
        results = []
        for document, summary in examples:
            start = time.perf_counter()
            problem = oracle.prepare(document, summary)
            middle = time.perf_counter()
            results.append((oracle.search(problem, objective="recall", max_sentences=5),
                            oracle.search(problem, objective="f1", max_sentences=None),
                            oracle.sentence_scores(problem, objective="f1")))
            end = time.perf_counter()
            prepare_s += middle - start
            search_s += end - middle
        return prepare_s, search_s, results

    def run_baseline():
        prepare_s = search_s = 0.0
        results = []
        for document, summary in examples:
            start = time.perf_counter()
            tokens, references, total = baseline_prepare(oracle, document, summary)
            middle = time.perf_counter()
            results.append((baseline_search(tokens, references, total, n, "recall", 5),
                            baseline_search(tokens, references, total, n, "f1", None),
                            baseline_sentence_scores(tokens, references, total, n, "f1")))
            end = time.perf_counter()
            prepare_s += middle - start
            search_s += end - middle
        return prepare_s, search_s, results

    print(f"measuring: ours x{args.repeats}, baseline x{args.baseline_repeats} ...", flush=True)
    ours_runs = [run_ours() for _ in range(args.repeats)]
    base_runs = [run_baseline() for _ in range(args.baseline_repeats)]
    ours, base = ours_runs[-1][2], base_runs[-1][2]

    # -- agreement -----------------------------------------------------------------------------------------------
    mismatches = {"recall selection": 0, "f1 selection": 0, "scores": 0, "sentence_scores": 0}
    steps_recall = steps_f1 = 0
    for (recall, f1, scores), (base_recall, base_f1, base_scores) in zip(ours, base, strict=True):
        mismatches["recall selection"] += recall.indices != base_recall[0]
        mismatches["f1 selection"] += f1.indices != base_f1[0]
        mismatches["scores"] += (recall.score != base_recall[1]) + (f1.score != base_f1[1])
        mismatches["sentence_scores"] += scores != base_scores
        steps_recall += len(recall.indices)
        steps_f1 += len(f1.indices)
    total_mismatches = sum(mismatches.values())
    print(f"selected sentences per example: recall@5 {steps_recall / len(examples):.2f}, "
          f"f1 (no limit) {steps_f1 / len(examples):.2f}")
    print("mismatches ours vs baseline: " + ", ".join(f"{key} {value}" for key, value in mismatches.items())
          + f" -> total {total_mismatches}" + ("" if total_mismatches == 0 else "  <-- MUST BE 0"))
    print(f"timings: best of {args.repeats} (ours) / {args.baseline_repeats} (baseline) runs over all examples, "
          "each example prepared then searched; search = recall@5 search + F1 search + sentence_scores; "
          "stemmer cache warmed before timing")

    # -- table ---------------------------------------------------------------------------------------------------
    count = len(examples)
    ours_prepare_s, ours_search_s = min(run[0] for run in ours_runs), min(run[1] for run in ours_runs)
    base_prepare_s, base_search_s = min(run[0] for run in base_runs), min(run[1] for run in base_runs)
    ours_whole, base_whole = ours_prepare_s + ours_search_s, base_prepare_s + base_search_s
    print()
    header = (f"{'implementation':<28} {'prepare s':>10} {'search s':>10} {'whole s':>10} {'search ex/s':>12} "
              f"{'whole ex/s':>11}")
    print(header)
    print("-" * len(header))
    for name, prepare_s, search_s, whole_s in (("ExtractiveOracle (ours)", ours_prepare_s, ours_search_s, ours_whole),
                                                ("rescore from scratch", base_prepare_s, base_search_s, base_whole)):
        print(f"{name:<28} {prepare_s:>10.3f} {search_s:>10.3f} {whole_s:>10.3f} {count / search_s:>12.1f} "
              f"{count / whole_s:>11.1f}")
    search_ratio, whole_ratio = base_search_s / ours_search_s, base_whole / ours_whole
    print(f"prepare: ours tokenizes and counts (prepare) {ours_prepare_s:.3f} s, baseline tokenizes only "
          f"{base_prepare_s:.3f} s (same tokens)")
    met = search_ratio >= args.target
    print(f"RESULT bench_oracle: search speedup {search_ratio:.1f}x (target >= {args.target:g}x: "
          f"{'MET' if met else 'MISSED'}), whole (prepare + search) speedup {whole_ratio:.1f}x, "
          f"{total_mismatches} mismatches")
    return 0


if __name__ == "__main__":
    sys.exit(main())
