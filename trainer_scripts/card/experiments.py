"""What the card says of the experiments a run belongs to (``wikiref experiments``: ``results.experiments``): its
row's ROUGE recall over the seeds under the DUC table, and the other benchmarks the row was scored on zero-shot."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from trainer_scripts.card.markdown import WIKIREF_MEASURES, _markdown_table
from trainer_scripts.card.names import model_variant
from trainer_scripts.duc_evaluation import MEASURE_NAMES, MEASURES
from trainer_scripts.experiments.cells import x100
from trainer_scripts.results import TrainingResults


def experiments_benchmarks_table(results: TrainingResults) -> str | None:
    """The other benchmarks the experiments scored this row on zero-shot (``wikiref experiments --qfs_dirs``): its
    models as trained on DUC, mean ± std over the seeds of ROUGE-1/2/L F1 ×100, beside the baselines; ``None`` when
    there were none."""
    from wikiref_dataset.qfs import benchmark_title

    benchmarks = results.experiments.benchmarks if results.experiments else {}
    if not benchmarks:
        return None
    header = ["System", *(f"{benchmark_title(name)} {label} F1" for name in benchmarks
                          for _, label in WIKIREF_MEASURES)]

    def cells(summary: Mapping[str, Any] | None) -> list[str]:
        found = []
        for measure, _ in WIKIREF_MEASURES:
            entry = (summary or {}).get(measure)
            found.append("-" if not entry else x100(entry["mean"]) + (
                f" ± {x100(entry['std'])}" if (summary or {}).get("runs", 1) > 1 else ""))
        return found

    systems = list(dict.fromkeys(system for found in benchmarks.values() for system in found["baselines"]))
    rows = [[system, *(cell for found in benchmarks.values() for cell in cells(found["baselines"].get(system)))]
            for system in systems]
    rows.append([f"**{model_variant(results)}, trained on DUC (this model's row)**",
                 *(f"**{cell}**" for found in benchmarks.values() for cell in cells(found["zero_shot"]))])
    scored = "; ".join(f"{benchmark_title(name)}: its `{found['split']}` split, {found['queries']} queries"
                       for name, found in benchmarks.items())
    return (_markdown_table(header, rows) + f"\n\n{scored}. ROUGE F1 ×100 as each benchmark's papers score it, the "
            "summaries cut to its word budget; the row's models were not trained on these benchmarks (mean ± std "
            "over the seeds).")


def experiments_note(results: TrainingResults) -> str | None:
    """One paragraph on the experiments this run belongs to: its row's mean ± std ROUGE recall over the seeds."""
    experiments = results.experiments
    if not experiments or not experiments.duc:
        return None
    parts = []
    for year, summary in sorted(experiments.duc.items()):
        cells = [f"{MEASURE_NAMES[measure]} {x100(summary[measure]['mean'])} ± {x100(summary[measure]['std'])}"
                 for measure in MEASURES if (summary or {}).get(measure)]
        if cells:
            parts.append(f"DUC {year}: " + ", ".join(cells))
    seeds = experiments.seeds or []
    return (f"This model is one run of the row `{experiments.row}` of `wikiref experiments` "
            f"({experiments.published_row or 'no published row'}); over its {len(seeds)} seed(s) and folds, "
            "ROUGE recall ×100, mean ± std: " + "; ".join(parts) + ".")
