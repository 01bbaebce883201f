"""WikiRef curation throughput on one core, and the projection for the paper's ~2M raw examples.

Measures, per example, what stages 3-4 of the build do (``wikiref_dataset.wikiref.curation``): the spaCy analysis
(``measure_examples``: lemmas, token/sentence counts, rule 1's unigram recall), the rule 1/2 filters, the rule 3
oracle (ROUGE-2 recall, <= 5 sentences) and the labels (ROUGE-2 F1 oracle + per-sentence scores). Every example
goes through every step (an upper bound: in a real build rules 1-2 drop examples before the oracle).

Workload: examples sized like Table I/II of paper 001: document sentences drawn from Table II's percentiles
(5th 9 ... 95th 33, mean ~19), document sentences from the golden Wikipedia texts (``../shared/rouge_golden``) or
the seeded generator (``_common``), summaries of 1-3 sentences (Table II: mostly 1), each a document sentence with
15% of its words dropped. Projection: the measured examples/s times the number of cores (tasks are
independent shards: linear scaling, no I/O), against the target "curation of the full English build in < 2 h on
16 cores".

    .venv/bin/python benchmarks/bench_curation.py [--examples 1000] [--quick]
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common  # noqa: E402

RAW_EXAMPLES = 2_000_000
TARGET_HOURS = 2.0
DOCUMENT_SENTENCE_PERCENTILES = ((0, 5), (5, 9), (20, 12), (40, 16), (50, 18), (60, 20), (80, 25), (95, 33),
                                 (100, 60))  # Table II (0th/100th: our tails)


def _from_percentiles(rng: random.Random, table: tuple[tuple[int, int], ...]) -> int:
    q = rng.uniform(0, 100)
    for (q0, v0), (q1, v1) in zip(table, table[1:]):
        if q <= q1:
            return max(1, round(v0 + (v1 - v0) * (q - q0) / (q1 - q0)))
    return table[-1][1]


def make_examples(n: int, seed: int = 0) -> tuple[list, str]:
    from wikiref_dataset.wikiref.curation import Example

    topics, source = _common.text_topics(_common.load_golden_items())
    # web-page sentences of Table I average ~21 tokens: keep the pool's sentences of at most 30 words
    topics = [short for short in ([s for s in topic if len(s.split()) <= 30] for topic in topics) if len(short) >= 4]
    every = [sentence for topic in topics for sentence in topic]
    rng = random.Random(seed)
    examples = []
    for index in range(n):
        topic = topics[index % len(topics)]
        size = _from_percentiles(rng, DOCUMENT_SENTENCE_PERCENTILES)
        own = rng.sample(topic, min(len(topic), max(1, size // 2)))
        document = own + rng.sample(every, max(0, size - len(own)))
        rng.shuffle(document)
        n_summary = rng.choices((1, 2, 3), (0.55, 0.35, 0.10))[0]
        summary = []
        for sentence in rng.sample(own, min(n_summary, len(own))):
            words = sentence.split()
            summary.append(" ".join(w for w in words if rng.random() > 0.15) or words[0])
        examples.append(Example(
            id=f"{index}-0", query=["Article title", "Section"], document_title="Page title",
            document=["Page title", *document], summary=" ".join(summary), url=f"https://example.org/{index}",
            archive_url="", citation_type="cite web", wiki_page_id=index, wiki_revision_id=index,
            wiki_title="Article title", section_path=["Section"], url_key=f"example.org/{index}"))
    return examples, source


def run(examples: list) -> dict[str, float]:
    import time

    from wikiref_dataset.text import TextPipeline
    from wikiref_dataset.wikiref.curation import (
        CurationConfig,
        LengthBounds,
        LengthFilter,
        OracleFilter,
        OracleLabeler,
        UnigramRecallFilter,
        measure_examples,
    )

    config = CurationConfig()
    text = TextPipeline(config.text)
    text.analyze("Warm up the pipeline.")
    seconds = {}
    start = time.perf_counter()
    measured = list(measure_examples(iter(examples), text))
    seconds["lemmas + lengths"] = time.perf_counter() - start
    n = len(measured)
    print(f"spaCy: {text.description}; measured means: document tokens "
          f"{sum(e.document_tokens for e in measured) / n:.1f}, document sentences "
          f"{sum(e.document_sentences for e in measured) / n:.1f}, summary tokens "
          f"{sum(e.summary_tokens for e in measured) / n:.1f}, summary sentences "
          f"{sum(e.summary_sentences_count for e in measured) / n:.2f} (Table I train: 397.7, 18.8, 36.1, 1.4)")
    documents = [example.to_document() for example in measured]
    start = time.perf_counter()
    recall = UnigramRecallFilter(config.min_unigram_recall)
    lengths = LengthFilter(LengthBounds({name: (0, 10**9) for name in config.bounded}), config)
    for document in documents:
        recall.filter(document)
        lengths.filter(document)
    seconds["rules 1-2"] = time.perf_counter() - start
    start = time.perf_counter()
    oracle = OracleFilter(config.min_oracle_score, config.oracle_max_sentences)
    kept = sum(oracle.filter(document) is True for document in documents)
    seconds["rule 3 oracle"] = time.perf_counter() - start
    start = time.perf_counter()
    list(OracleLabeler().run(iter(documents)))
    seconds["labels"] = time.perf_counter() - start
    seconds["_kept_rule1"] = sum(recall.filter(document) is True for document in documents)
    seconds["_kept_oracle"] = kept
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="200 examples")
    parser.add_argument("--no-pin", action="store_true", help="Do not pin the process to one CPU.")
    args = parser.parse_args(argv)
    where = _common.pin_to_one_core(not args.no_pin)
    n = 200 if args.quick else args.examples
    examples, source = make_examples(n, args.seed)
    doc_sents = sum(len(e.document) for e in examples) / n
    print(f"{_common.machine_line()} ({where}); {n} examples from {source}; {doc_sents:.1f} document sentences "
          "on average")
    seconds = run(examples)
    kept_rule1, kept_oracle = seconds.pop("_kept_rule1"), seconds.pop("_kept_oracle")
    total = sum(seconds.values())
    print(f"kept by rule 1: {kept_rule1}/{n}; by rule 3: {kept_oracle}/{n}\n")
    print(f"{'step':<18} {'seconds':>8} {'examples/s':>11}")
    for step, value in seconds.items():
        print(f"{step:<18} {value:8.2f} {n / value if value else float('inf'):11.0f}")
    rate = n / total
    print(f"{'curation':<18} {total:8.2f} {rate:11.0f}\n")
    print(f"Projection for {RAW_EXAMPLES:,} raw examples (every example through every step, linear scaling):")
    for cores in (1, 16, 128):
        hours = RAW_EXAMPLES / (rate * cores) / 3600
        print(f"  {cores:>3} cores: {hours:7.2f} h")
    hours16 = RAW_EXAMPLES / (rate * 16) / 3600
    met = hours16 < TARGET_HOURS
    print(f"RESULT curation {rate:.0f} examples/s/core; 16 cores {hours16:.2f} h vs target < {TARGET_HOURS:g} h: "
          f"{'met' if met else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
