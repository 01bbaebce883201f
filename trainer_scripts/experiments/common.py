"""What every part of the experiments runner shares: the measures and system names of the scripts' results, the
files the runner owns in its results folder, and its two errors."""

from __future__ import annotations

MEASURES = ("rouge_1", "rouge_2", "rouge_su4")  # as trainer_scripts.evaluate_duc (not imported: the CLI stays light)
MEASURE_NAMES = {"rouge_1": "R-1", "rouge_2": "R-2", "rouge_su4": "R-SU4", "rouge_l": "R-L"}
QFS_MEASURES = ("rouge_1_f", "rouge_2_f", "rouge_l_f")  # the other benchmarks' scoring (wikiref_dataset.qfs.scoring)
QFS_HOW = {"baseline": "", "zero_shot": "trained on DUC (zero-shot)", "fine_tuned": "fine-tuned on the benchmark"}
"""How a row meets a benchmark of ``--qfs_dirs``, as results.json keys it and results.md says it."""
QBERT_SYSTEM = "Q-BERT"  # finetune_duc.py's name for the fine-tuned model in results["evaluation"]["systems"]
SEED_AVERAGE_SYSTEM = "Q-BERT (seeds' scores averaged)"
BASELINE_SYSTEMS = {"lead": "LEAD", "query_sim": "QUERY-SIM", "oracle": "ORACLE"}
RESULTS_NAME = "results.json"
OWNED = ("units", "pooled", "figures", "slurm", "results.md", RESULTS_NAME)
"""What this runner writes at the top of ``--out``: anything else there is refused (the folder is someone else's)."""


class ExperimentError(ValueError):
    """Bad input of the experiments runner (a row, a folder, an option): one line naming it."""


class UnitsFailed(RuntimeError):
    """Some units failed (their logs say why); the results of the others were written."""
