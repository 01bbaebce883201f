"""Throughput of the project's DUC ROUGE metric against Google's ``rouge_score``, on one core.

Ours: ``RougeScorer().evaluate(systems, references)`` with the official DUC settings (ROUGE-1, ROUGE-2, ROUGE-SU4,
``-l 250``, ``-m``, 1000 bootstrap resamples with the 95% interval), a fresh scorer per run as ``rouge()`` makes one.
Baseline: ``rouge_score.rouge_scorer.RougeScorer(["rouge1", "rouge2"], use_stemmer=True)`` on the same items; it does
less work (no SU4, no length limit, no bootstrap) and gives other numbers (another stemmer and tokenizer, the best
reference instead of ROUGE's ``-f A`` sum), which the ROUGE-1 recall gap printed at the end shows.

Item sets: (a) the 621 golden items of ``../shared/rouge_golden`` (skipped when absent; ours is also checked against
the Perl output stored there), (b) DUC-sized items built deterministically from the golden sentences (or from a
seeded English-like generator): a system summary and 4 references of at least 250 words each.

The Perl ROUGE-1.5.5 figure (77 s for 1,950 such items, about 25 items/s on the 2-core reference machine) is quoted,
not measured here: Perl is not run by this script.

    .venv/bin/python benchmarks/bench_duc_rouge.py            # default sizes, under 3 minutes on 2 cores
    .venv/bin/python benchmarks/bench_duc_rouge.py --quick    # smoke run, a few seconds
"""

from __future__ import annotations

import argparse
import random
import sys
from importlib import metadata
from pathlib import Path

import _common

PERL_QUOTED_ITEMS_PER_S = 1950 / 77.0  # ROUGE-1.5.5.pl, R-1/R-2/SU4 + 1000 bootstrap, quoted (not measured)


def build_duc_items(
    topics: list[list[str]], n_items: int, n_references: int, min_words: int, seed: int, topic_share: float = 0.6
) -> tuple[list[str], list[list[str]]]:
    """``n_items`` (system, references) pairs; every text is sentences (one per line) until ``min_words`` words.

    Each item draws on one topic pool (shared vocabulary between system and references, as in a DUC cluster): a
    sentence comes from the topic with probability ``topic_share`` while the topic lasts, otherwise from all
    sentences; no sentence repeats inside a text.
    """
    rng = random.Random(seed)
    everything = sorted({sentence for topic in topics for sentence in topic})

    def make_text(topic: list[str]) -> str:
        order = rng.sample(topic, len(topic))
        used: set[str] = set()
        lines: list[str] = []
        words = 0
        while words < min_words:
            sentence = order.pop() if order and rng.random() < topic_share else rng.choice(everything)
            if sentence in used:
                continue
            used.add(sentence)
            lines.append(sentence)
            words += len(sentence.split())
        return "\n".join(lines)

    systems, references = [], []
    for position in range(n_items):
        topic = topics[position % len(topics)]
        systems.append(make_text(topic))
        references.append([make_text(topic) for _ in range(n_references)])
    return systems, references


def rouge_score_runner(systems: list[str], references: list[list[str]]):
    """A function scoring every item with rouge_score, and a label saying how several references are handled."""
    from rouge_score import rouge_scorer

    multi = hasattr(rouge_scorer.RougeScorer, "score_multi")

    def run() -> list[dict]:
        scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2"], use_stemmer=True)
        if multi:
            return [scorer.score_multi(refs, system) for system, refs in zip(systems, references, strict=True)]
        # Older rouge_score: score every reference; keep the best ROUGE-1 F (what score_multi does per type).
        results = []
        for system, refs in zip(systems, references, strict=True):
            per_reference = [scorer.score(ref, system) for ref in refs]
            results.append({key: max((score[key] for score in per_reference), key=lambda s: s.fmeasure)
                            for key in ("rouge1", "rouge2")})
        return results

    label = "score_multi (best-F reference per type)" if multi else "score per reference, best F kept"
    return run, label


def check_against_perl(result, golden_dir, items: list[dict]) -> str:
    """How many golden items (and whether the averages) match the Perl output in ``expected_duc.json``."""
    import json

    path = golden_dir / "expected_duc.json"
    if not path.is_file():
        return "expected_duc.json absent, not checked"
    expected = json.loads(path.read_text(encoding="utf-8"))
    metrics = ("rouge_1", "rouge_2", "rouge_su4")
    matching = 0
    for item, scores in zip(items, result.per_item, strict=True):
        want = expected["per_item"][item["id"]]
        if all(f"{getattr(scores[m], v):.5f}" == f"{want[m][v]:.5f}" for m in metrics
               for v in ("recall", "precision", "f")):
            matching += 1
    averages_ok = all(
        f"{getattr(result.averages[m], v):.5f}" == f"{expected['official'][m][v]:.5f}"
        and all(f"{a:.5f}" == f"{b:.5f}" for a, b in zip(getattr(result.averages[m], f"{v}_ci"),
                                                          expected["official"][m][f"{v}_ci"], strict=True))
        for m in metrics for v in ("recall", "precision", "f"))
    return f"{matching}/{len(items)} items and averages {'identical' if averages_ok else 'DIFFERENT'} to Perl's"


def measure(name: str, systems, references, repeats: int, baseline_repeats: int) -> dict:
    """Time ours (evaluate, and its bootstrap part alone) and rouge_score on one item set."""
    from wikiref_dataset.rouge import RougeScorer

    n_items = len(systems)
    print(f"measuring {name}: ours x{repeats}, rouge_score x{baseline_repeats} ...", flush=True)
    ours_times, ours_result = _common.timed(lambda: RougeScorer().evaluate(systems, references), repeats)
    scorer = RougeScorer()
    bootstrap_times, _ = _common.timed(lambda: scorer.average(ours_result.per_item), repeats)
    run_baseline, multi_label = rouge_score_runner(systems, references)
    baseline_times, baseline_result = _common.timed(run_baseline, baseline_repeats)

    ours_s = _common.best(ours_times)
    bootstrap_s = _common.best(bootstrap_times)
    baseline_s = _common.best(baseline_times)
    ours_r1 = sum(item["rouge_1"].recall for item in ours_result.per_item) / n_items
    baseline_r1 = sum(item["rouge1"].recall for item in baseline_result) / n_items
    return {
        "name": name, "items": n_items, "ours_s": ours_s, "bootstrap_s": bootstrap_s,
        "per_item_s": max(ours_s - bootstrap_s, 0.0), "baseline_s": baseline_s,
        "ours_rate": n_items / ours_s, "baseline_rate": n_items / baseline_s,
        "ours_r1": ours_r1, "baseline_r1": baseline_r1, "multi_label": multi_label, "result": ours_result,
        "ours_times": ours_times, "baseline_times": baseline_times,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=1950, help="DUC-sized items in set (b).")
    parser.add_argument("--references", type=int, default=4, help="References per item in set (b).")
    parser.add_argument("--min-words", type=int, default=250, help="Words per text of set (b), at least.")
    parser.add_argument("--repeats", type=int, default=3, help="Runs of ours (best is reported).")
    parser.add_argument("--baseline-repeats", type=int, default=2, help="Runs of rouge_score (best is reported).")
    parser.add_argument("--seed", type=int, default=0, help="Seed of the item builder.")
    parser.add_argument("--target", type=float, default=500.0, help="Target items/s of ours on set (b).")
    parser.add_argument("--golden-dir", type=Path, default=_common.GOLDEN_DIR, help="The rouge_golden folder.")
    parser.add_argument("--skip-golden", action="store_true", help="Do not measure set (a).")
    parser.add_argument("--no-pin", action="store_true", help="Do not pin the process to one CPU.")
    parser.add_argument("--quick", action="store_true", help="Smoke run: 150 items in set (b), one repeat each.")
    args = parser.parse_args(argv)
    if args.quick:
        args.items, args.repeats, args.baseline_repeats = min(args.items, 150), 1, 1

    where = _common.pin_to_one_core(not args.no_pin)
    import numpy

    from wikiref_dataset.rouge import RougeConfig

    print(f"bench_duc_rouge: {_common.machine_line()}, {where}; numpy {numpy.__version__}, "
          f"rouge_score {metadata.version('rouge_score')}")
    print(f"ours: RougeScorer().evaluate, ROUGE {' '.join(RougeConfig().to_args())} (R-1, R-2, SU4 + bootstrap)")
    print("rouge_score: RougeScorer(['rouge1', 'rouge2'], use_stemmer=True), no SU4, no -l, no bootstrap")

    golden_items = _common.load_golden_items(args.golden_dir)
    rows = []
    if golden_items is None:
        print(f"set (a) skipped: {args.golden_dir / 'items.jsonl'} is absent")
    elif args.skip_golden:
        print("set (a) skipped (--skip-golden)")
    else:
        systems = [item["system"] for item in golden_items]
        references = [item["references"] for item in golden_items]
        row = measure("(a) golden", systems, references, args.repeats, args.repeats)
        print(f"set (a): {check_against_perl(row['result'], args.golden_dir, golden_items)}")
        rows.append(row)

    topics, source = _common.text_topics(golden_items)
    systems, references = build_duc_items(topics, args.items, args.references, args.min_words, args.seed)
    print(f"set (b): {args.items} items, system + {args.references} references of >= {args.min_words} words each, "
          f"from {source}")
    rows.append(measure("(b) DUC-sized", systems, references, args.repeats, args.baseline_repeats))
    print(f"rouge_score multi-reference: {rows[-1]['multi_label']}; ours: -f A (hits and counts summed over refs)")
    print(f"timings: best of {args.repeats} (ours) / {args.baseline_repeats} (rouge_score on set (b)), one core")

    print()
    header = (f"{'set':<15} {'items':>6} {'ours it/s':>10} {'rouge_score it/s':>17} {'ours/rs':>8} "
              f"{'ours/Perl*':>11} {'per-item s':>11} {'bootstrap s':>12} {'R-1 rec. ours-rs':>17}")
    print(header)
    print("-" * len(header))
    for row in rows:
        print(f"{row['name']:<15} {row['items']:>6} {row['ours_rate']:>10.1f} {row['baseline_rate']:>17.1f} "
              f"{row['ours_rate'] / row['baseline_rate']:>7.2f}x {row['ours_rate'] / PERL_QUOTED_ITEMS_PER_S:>10.1f}x "
              f"{row['per_item_s']:>11.3f} {row['bootstrap_s']:>12.3f} {row['ours_r1'] - row['baseline_r1']:>+17.5f}")
    print(f"* Perl ROUGE-1.5.5 rate is QUOTED (1,950 items in 77 s = {PERL_QUOTED_ITEMS_PER_S:.1f} items/s), "
          "not measured in this run.")
    duc = rows[-1]
    share = duc["bootstrap_s"] / duc["ours_s"] if duc["ours_s"] else 0.0
    print(f"set (b): per-item scoring {duc['per_item_s']:.3f} s (evaluate minus bootstrap), bootstrap "
          f"(RougeScorer.average) {duc['bootstrap_s']:.3f} s = {share:.1%} of evaluate")
    print(f"set (b): mean per-item ROUGE-1 recall ours {duc['ours_r1']:.5f}, rouge_score {duc['baseline_r1']:.5f}, "
          f"difference {duc['ours_r1'] - duc['baseline_r1']:+.5f}")
    print("  (rouge_score keeps the best reference where -f A sums all, has no -l 250, and tokenizes and stems "
          "differently: its scores are not DUC scores)")
    met = duc["ours_rate"] >= args.target
    print(f"RESULT bench_duc_rouge: ours {duc['ours_rate']:.0f} items/s on {duc['items']} DUC-sized items "
          f"(target >= {args.target:.0f}: {'MET' if met else 'MISSED'}); ours/rouge_score = "
          f"{duc['ours_rate'] / duc['baseline_rate']:.2f}x; ours/Perl (quoted) = "
          f"{duc['ours_rate'] / PERL_QUOTED_ITEMS_PER_S:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
