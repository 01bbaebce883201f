"""The card's figure: ROUGE-2 recall per DUC year, this model beside the baselines (a PNG beside the card)."""

from __future__ import annotations

from pathlib import Path

from trainer_scripts.card.names import model_variant
from trainer_scripts.card.tables import duc_years
from trainer_scripts.results import MODEL_SYSTEM, TrainingResults

DUC_FIGURE = "figures/duc_rouge2.png"
"""Where :func:`trainer_scripts.model_card.write_card` puts the DUC plot, relative to the card."""


def duc_figure(results: TrainingResults, path: str | Path) -> Path | None:
    """ROUGE-2 recall ×100 per DUC year, this model beside the baselines, with the 95% interval as error bars
    (a PNG at ``path``); ``None`` when the run has no DUC evaluation."""
    evaluation = results.evaluation
    years = duc_years(results)
    if not evaluation or not evaluation.systems or not years:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = evaluation.ordered_systems()
    trained_on = results.trained_years
    width = 0.8 / len(names)
    figure, axis = plt.subplots(figsize=(max(5.5, 1.5 + 0.55 * len(names) * len(years)), 4.0))
    for index, name in enumerate(names):
        positions, means, errors = [], [], [[], []]
        for position, year in enumerate(years):
            values = evaluation.scores(name, year)
            if not values:
                continue
            mean = 100 * values["rouge_2_recall"]
            positions.append(position - 0.4 + width * (index + 0.5))
            means.append(mean)
            errors[0].append(mean - 100 * values["rouge_2_recall_ci_low"])
            errors[1].append(100 * values["rouge_2_recall_ci_high"] - mean)
        label = f"{model_variant(results)} (this model)" if name == MODEL_SYSTEM else name
        axis.bar(positions, means, width, yerr=errors, capsize=3, label=label,
                 color="#c44e52" if name == MODEL_SYSTEM else None)
    axis.set_xticks(range(len(years)), [f"DUC {year}" + (" (trained on)" if year in trained_on else "")
                                        for year in years])
    axis.set_ylabel("ROUGE-2 recall ×100")
    axis.set_title("ROUGE-2 recall with 95% bootstrap intervals" + (" (demo run)" if results.run_kind == "demo"
                                                                      else ""), fontsize=10)
    axis.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=min(len(names), 3), frameon=False)
    figure.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=100, metadata={"Software": None})
    plt.close(figure)
    return path
