"""SQuALITY's scoring on the project's engine against ``rouge_score``, the package SQuALITY's authors score with.

Items: the real SQuALITY development answers (``../shared/realdata/qfs/squality``; skipped when absent). For every
question, each of its four answers in turn is the "system" and the other three are the references: 4 x 125 = 500
items of real, long (75-500 words) human summaries.

Ours: :data:`wikiref_dataset.qfs.scoring.SCORINGS` ``["squality"]``: ROUGE-1.5.5 ``-c 95 -r 1000 -n 2 -m -a``, each
reference scored alone and per measure the best by F1, ROUGE-L summary-level over sentences, 1000 bootstrap
resamples with the 95% interval.

Baseline: ``rouge_score.rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeLsum"], use_stemmer=True)``, per
measure the best reference by F1 (``multi_rouge.py`` of the SQuALITY repository), its ``BootstrapAggregator``
(1000 resamples, the median reported). Texts are given to both with one sentence per line (the converted answers are
stored that way), which ``rougeLsum`` reads as its sentences.

Prints, per measure, both corpus F1 values ×100 and their difference (the stemmer variant and mean-vs-median are all
that differ), and the wall time of both with the ratio.

    .venv/bin/python benchmarks/bench_qfs_scoring.py           # the 25 development stories, about a minute
    .venv/bin/python benchmarks/bench_qfs_scoring.py --quick   # 3 stories (smoke run)
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine_line  # noqa: E402

RELEASE = Path(__file__).resolve().parents[2] / "shared" / "realdata" / "qfs" / "squality"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 stories instead of the 25 (smoke run)")
    args = parser.parse_args(argv)
    if not RELEASE.is_dir():
        print(f"skipped: {RELEASE} is not present")
        return 0
    from rouge_score import rouge_scorer, scoring

    from wikiref_dataset.qfs import read_benchmark
    from wikiref_dataset.qfs.scoring import SCORINGS

    rows, _ = read_benchmark("squality", RELEASE, splits=["validation"])
    predictions, references = [], []
    for row in rows["validation"][:15] if args.quick else rows["validation"]:
        answers = row["references"]
        for position, answer in enumerate(answers):
            predictions.append(answer)
            references.append(answers[:position] + answers[position + 1:])
    print(machine_line())
    print(f"{len(predictions)} items: every SQuALITY development answer against the other three of its question\n")

    started = time.perf_counter()
    ours = SCORINGS["squality"].score(predictions, references)
    ours_seconds = time.perf_counter() - started

    started = time.perf_counter()
    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeLsum"], use_stemmer=True)
    aggregator = scoring.BootstrapAggregator()
    for prediction, refs in zip(predictions, references):
        scores = [scorer.score(reference, prediction) for reference in refs]
        aggregator.add_scores({measure: max((score[measure] for score in scores), key=lambda s: s.fmeasure)
                               for measure in ("rouge1", "rouge2", "rougeLsum")})
    theirs = aggregator.aggregate()
    theirs_seconds = time.perf_counter() - started

    print(f"{'measure':10s} {'ours F1':>8s} {'rouge_score F1':>15s} {'difference':>11s}")
    for metric, measure in (("rouge_1", "rouge1"), ("rouge_2", "rouge2"), ("rouge_l", "rougeLsum")):
        mine, other = 100 * ours.averages[metric].f, 100 * theirs[measure].mid.fmeasure
        print(f"{metric:10s} {mine:8.2f} {other:15.2f} {mine - other:+11.2f}")
    print(f"\ntime: ours {ours_seconds:.2f} s, rouge_score {theirs_seconds:.2f} s "
          f"(ours takes {ours_seconds / theirs_seconds:.2f}x rouge_score's time)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
