"""What every part of the experiments runner shares: the measures and system names of the scripts' results, the
files the runner owns in its results folder, and its two errors."""

from __future__ import annotations

MEASURES = ("rouge_1", "rouge_2", "rouge_su4")  # as trainer_scripts.evaluate_duc (not imported: the CLI stays light)
MEASURE_NAMES = {"rouge_1": "R-1", "rouge_2": "R-2", "rouge_su4": "R-SU4", "rouge_l": "R-L"}
QFS_MEASURES = ("rouge_1_f", "rouge_2_f", "rouge_l_f")  # the other benchmarks' scoring (wikiref_dataset.qfs.scoring)
QFS_HOW = {"baseline": "", "zero_shot": "trained on DUC (zero-shot)", "fine_tuned": "fine-tuned on the benchmark"}
"""How a row meets a benchmark of ``--qfs_dirs``, as results.json keys it and results.md says it."""
QBERT_SYSTEM = "Q-BERT"  # finetune_duc.py's name for the fine-tuned model in results["evaluation"]["systems"]
BASELINE_SYSTEMS = {"lead": "LEAD", "query_sim": "QUERY-SIM", "oracle": "ORACLE"}
BASELINE_KEYS = {"lead": "lead", "query_sim": "query-sim", "oracle": "oracle"}
"""A baseline row's ``Row.baseline`` -> the scripts' name of the baseline (``wikiref_dataset.baselines``)."""
RESULTS_NAME = "results.json"
OWNED = ("units", "pooled", "figures", "slurm", "results.md", RESULTS_NAME)
"""What this runner writes at the top of ``--out``: anything else there is refused (the folder is someone else's)."""


CODE_PACKAGES = ("wikiref_dataset", "modeling_qbert", "trainer_scripts")
"""The packages whose code makes a unit's results: :func:`code_fingerprint` hashes them."""


def code_fingerprint() -> str:
    """A hash of the project's code as this process sees it (every ``.py`` file and recipe of
    :data:`CODE_PACKAGES`, by path and content): a unit records it, and a rerun says which finished units another
    code produced. Part of no unit's key: a change to the code does not redo finished units by itself."""
    import hashlib
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    digest = hashlib.sha256()
    for package in CODE_PACKAGES:
        for path in sorted((root / package).rglob("*")):
            if path.suffix in (".py", ".yaml") and path.is_file() and "__pycache__" not in path.parts:
                digest.update(str(path.relative_to(root)).encode("utf-8") + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


class ExperimentError(ValueError):
    """Bad input of the experiments runner (a row, a folder, an option): one line naming it."""


class UnitsFailed(RuntimeError):
    """Some units failed (their logs say why); the results of the others were written."""
