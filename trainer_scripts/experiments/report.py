"""The report: ``results.md`` (the tables in the paper's shape, the published numbers beside ours and what differs),
``results.json`` and the figures."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trainer_scripts.experiments.cells import markdown_table, ours_cell, x100
from trainer_scripts.experiments.common import MEASURE_NAMES, MEASURES, QFS_HOW, QFS_MEASURES, RESULTS_NAME
from trainer_scripts.experiments.executors import Runner
from trainer_scripts.experiments.options import ExperimentArguments
from trainer_scripts.experiments.plan import Plan, recipe_overrides
from trainer_scripts.experiments.scores import Scores
from trainer_scripts.experiments.tables import (
    PAPER_ENCODER,
    PAPER_WIKIREF_TRAIN,
    PAPER_YEARS,
    PUBLISHED,
    QUALITY_SLICES,
    ROW_BY_NAME,
    ROWS,
    TABLE_TITLES,
    published_values,
)

# ---- the report ---------------------------------------------------------------------------------------------------


def cell(summary: Mapping[str, Any] | None, measure: str, published: float | None) -> str:
    """Ours, and below it the published number (when the paper prints one)."""
    ours = ours_cell(summary, measure)
    return f"{ours}<br>*paper {published:.2f}*" if isinstance(published, (int, float)) else ours


@dataclass
class Report:
    """Builds results.json, results.md and the figures from the plan and the finished units."""

    plan: Plan
    runner: Runner
    arguments: ExperimentArguments
    extra: list[str]
    unavailable: dict[str, str] = field(default_factory=dict)
    records: dict[str, dict[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        scores = Scores(self.runner)
        self.records = {variant.name: scores.variant_record(variant) for variant in self.plan.variants}

    @property
    def years(self) -> list[int]:
        return list(self.plan.tested_years)

    @property
    def last_year(self) -> int:
        return self.years[-1]

    def settings(self) -> dict[str, Any]:
        folds = self.plan.folds
        return {
            "encoder": self.plan.inputs.encoder_name, "encoder_path": self.plan.inputs.encoder,
            "recipe": {"name": self.plan.inputs.recipe.name, "chosen": self.plan.inputs.recipe_chosen,
                       "description": self.plan.inputs.recipe.description,
                       **{stage: self.plan.inputs.recipe.settings(stage) for stage in ("pretrain", "finetune")}},
            "wikiref": self.plan.inputs.wikiref, "duc": {str(year): path for year, path in
                                                          sorted(self.plan.inputs.years.items())},
            "protocol": "cross_year" if folds[0].test_year is not None else "kfold",
            "folds": [fold.name for fold in folds], "test_years": self.years, "seeds": list(self.arguments.seeds),
            "pretrain_per_seed": self.arguments.pretrain_per_seed,
            "training_options": list(self.extra),
            "pretrain_options": self.plan.options.shared["pretrain"],
            "finetune_options": self.plan.options.shared["finetune"],
            "row_options": {f"{row}.{stage}": options for (row, stage), options in self.plan.options.per_row.items()},
            "data_fractions": sorted(set(self.arguments.data_fractions)), "data_seed": self.arguments.data_seed,
            "benchmarks": {benchmark.name: {"path": benchmark.path, "split": benchmark.split,
                                            "queries": benchmark.queries, "fine_tuned": benchmark.trainable}
                           for benchmark in self.plan.inputs.benchmarks},
            "qfs_labels": self.arguments.qfs_labels if self.plan.inputs.benchmarks else None,
            "subprocess": self.arguments.subprocess,
            "rules": list(self.plan.rules),
            "scores": "x1 in results.json (0-1), x100 in results.md; mean and sample std over distinct runs (seeds); "
                      "ci_median_run: the 95% bootstrap interval of the run whose score is the median",
        }

    def differences(self, record: Mapping[str, Any], duc_columns: Sequence[int] | None = None) -> str:
        """What this row's runs have that the paper's had not: encoder, data, years, protocol, seeds, options."""
        row = ROW_BY_NAME[record["row"]]
        items = []
        if row.duc != "baseline":
            encoder = self.plan.inputs.encoder_name
            if "bert-base" not in encoder.lower():
                items.append(f"encoder {_short_encoder(encoder)} (paper {PAPER_ENCODER})")
        examples = record.get("wikiref_train_examples") or []
        if row.pretraining is not None and examples and examples != [PAPER_WIKIREF_TRAIN]:
            paper = PAPER_WIKIREF_TRAIN // 2 if row.sweep == "quality" else PAPER_WIKIREF_TRAIN
            items.append(f"WikiRef {'/'.join(f'{n:,}' for n in examples)} training examples (paper {paper:,})")
        if row.duc == "finetune":
            if self.plan.folds[0].test_year is None:
                items.append(f"{len(self.plan.folds)} cluster folds of DUC {', '.join(map(str, self.years))}, pooled "
                             "(paper: train on two years, test on the third)")
            elif tuple(self.years) != PAPER_YEARS and row.duc == "finetune":
                items.append(f"DUC {', '.join(map(str, self.years))} (paper 2005-2007: trained on the two other "
                             "years)")
            if duc_columns and duc_columns != [2007] and row.table in ("VIII", "IX", "Fig. 4", "Fig. 6"):
                items.append(f"tested on DUC {duc_columns[0]} (paper: DUC 2007)")
        runs = max([summary.get("runs", 0) for summary in (record.get("duc") or {}).values() if summary] or
                   [summary.get("runs", 0) for summary in (record.get("wikiref") or {}).values() if summary] or [0])
        if runs > 1:
            items.append(f"mean ± std of {runs} seeds (paper: one number)")
        if row.duc != "baseline":
            stage = "finetune" if row.duc == "finetune" else "pretrain"
            recipe = self.plan.inputs.recipe
            options = list(self.plan.options.shared[stage])
            options += [token for (name, _), values in self.plan.options.per_row.items() if name == row.name
                        for token in values]
            overridden = recipe_overrides([*(row.finetune_options if stage == "finetune" else ()), *options],
                                          recipe.settings(stage))
            items.append(f"recipe {recipe.name}" + (f" with {' '.join(overridden)}" if overridden else "")
                         + (" (paper: its own settings)" if recipe.name != "paper" else ""))
            if options:
                items.append("options " + " ".join(options))
        if row.name.startswith("da_pretrained"):
            items.append("the paper does not say which model its DA PRE-TRAINED rows are; here Q-BERT")
        if record.get("rule") not in (None, "duc", "oracle"):
            items.append(f"sentences chosen by the {record['rule']} rule" + (
                ", the fine-tuned rows' (paper: the greedy rule; no published number)" if row.duc == "baseline"
                else " (paper: the greedy rule)"))
        if row.table == "VIII":
            items.append("WikiRef columns from this regression pre-training (paper: classification)")
        return "; ".join(items) or "-"

    def seed_average_table(self) -> str | None:
        """The fine-tuned rows whose seeds' scores were averaged (``--seed_average``): ROUGE of the averaged scores
        beside the seeds' mean ± std, per year."""
        lines = []
        for record in self.records.values():
            average = record.get("duc_seed_average")
            if not average:
                continue
            for year in self.years:
                values, seeds = average.get(str(year)), (record.get("duc") or {}).get(str(year))
                if not values:
                    continue
                cells = [f"{x100(values[f'{measure}_recall'])} [{x100(values[f'{measure}_recall_ci_low'])}–"
                         f"{x100(values[f'{measure}_recall_ci_high'])}]" for measure in MEASURES]
                mean = [ours_cell(seeds, measure).split(" [")[0] for measure in MEASURES]
                lines.append([f"`{record['variant']}`", str(year), *cells, *mean, str(len(values.get("seeds", [])))])
        if not lines:
            return None
        header = ["Row", "DUC", *(f"averaged {MEASURE_NAMES[m]}" for m in MEASURES),
                  *(f"seeds' {MEASURE_NAMES[m]}" for m in MEASURES), "Seeds"]
        return ("Each test sentence scored by the mean of the seeds' models (an ensemble), then the DUC rule; beside it "
                "the seeds' own runs (mean ± std).\n\n" + markdown_table(header, lines))

    def not_run(self, table: str, published: str) -> str:
        """Why a published row has no number of ours: not chosen (its row name), an option its script lacks, or not a
        recipe of the scripts."""
        row = next((row for row in ROWS if row.table == table and row.published == published), None)
        if row is not None and row.name in self.unavailable:
            return self.unavailable[row.name]
        if row is not None:
            return f"not run here (row `{row.name}`)"
        return "published only: " + ("another system" if table == "VI" else "not a recipe of the training scripts")

    def variants_of(self, table: str) -> list[dict[str, Any]]:
        return [record for record in self.records.values() if record["table"] == table]

    def table_vi(self) -> str | None:
        """Table VI: the published rows with ours beside, each with the rule it was chosen with (Rule), and after
        LEAD and QUERY-SIM their rows under the fine-tuned rows' rule (``QUERY-SIM (ILP)``: no published number)."""
        records = self.variants_of("VI")
        ran = {record["published_row"]: record for record in records if record["published_row"]}
        if not records:
            return None
        header = ["Section", "System", "Rule"] + [f"DUC {year} {MEASURE_NAMES[measure]}" for year in self.years
                                                  for measure in MEASURES] + ["What differs"]
        lines = []
        for published in PUBLISHED["VI"]:
            record = ran.get(published.key)
            cells = [cell((record or {}).get("duc", {}).get(str(year)), measure,
                          published.values.get(str(year), {}).get(measure)) for year in self.years
                     for measure in MEASURES]
            name = f"**{published.label}** (`{record['row']}`)" if record else published.label
            lines.append([published.section, name, _rule_cell(record), *cells,
                          self.differences(record, self.years) if record else self.not_run("VI", published.key)])
            for same_rule in (item for item in records if record and item["row"] == record["row"]
                              and item is not record):
                lines.append([published.section, f"**{same_rule['system']}** (`{same_rule['variant']}`)",
                              _rule_cell(same_rule), *(ours_cell((same_rule.get("duc") or {}).get(str(year)), measure)
                                                       for year in self.years for measure in MEASURES),
                              self.differences(same_rule, self.years)])
        return markdown_table(header, lines)

    def table_iv(self) -> str | None:
        ran = {record["published_row"]: record for record in self.variants_of("IV")}
        if not ran:
            return None
        measures = ("rouge_1", "rouge_2", "rouge_l")
        header = ["Section", "System"] + [f"{'Dev' if split == 'validation' else 'Test'} {MEASURE_NAMES[measure]} F1"
                                          for split in ("validation", "test") for measure in measures]
        header.append("What differs")
        lines = []
        for published in PUBLISHED["IV"]:
            record = ran.get(published.key)
            wikiref = (record or {}).get("wikiref") or {}
            cells = [cell(wikiref.get(split), f"{measure}_f", published.values[split][measure])
                     for split in ("validation", "test") for measure in measures]
            name = f"**{published.label}** (`{record['row']}`)" if record else published.label
            lines.append([published.section, name, *cells,
                          self.differences(record) if record else self.not_run("IV", published.key)])
        return markdown_table(header, lines)

    def _wikiref_split(self, record: Mapping[str, Any]) -> Mapping[str, Any] | None:
        wikiref = record.get("wikiref") or {}
        return wikiref.get("test") or wikiref.get("validation")

    def table_viii(self) -> str | None:
        ran = {record["published_row"]: record for record in self.variants_of("VIII")}
        if not ran:
            return None
        year = str(self.last_year)
        header = ["Model", "WikiRef R-2 F1", "WikiRef R-L F1", f"DUC {year} R-2", f"DUC {year} R-SU4", "What differs"]
        lines = []
        for published in PUBLISHED["VIII"]:
            record = ran.get(published.key)
            wikiref = self._wikiref_split(record) if record else None
            duc = ((record or {}).get("duc") or {}).get(year)
            lines.append([f"**{published.label}** (`{record['row']}`)" if record else published.label,
                          cell(wikiref, "rouge_2_f", published.values["wikiref"]["rouge_2"]),
                          cell(wikiref, "rouge_l_f", published.values["wikiref"]["rouge_l"]),
                          cell(duc, "rouge_2", published.values["duc"]["rouge_2"]),
                          cell(duc, "rouge_su4", published.values["duc"]["rouge_su4"]),
                          self.differences(record, [self.last_year]) if record
                          else self.not_run("VIII", published.key)])
        return markdown_table(header, lines)

    def table_ix(self) -> str | None:
        ran = {record["published_row"]: record for record in self.variants_of("IX")}
        if not ran:
            return None
        year = str(self.last_year)
        header = ["Method / Init", *(f"DUC {year} {MEASURE_NAMES[m]}" for m in MEASURES), "What differs"]
        lines = []
        for published in PUBLISHED["IX"]:
            record = ran.get(published.key)
            duc = ((record or {}).get("duc") or {}).get(year)
            lines.append([f"**{published.label}** (`{record['row']}`)" if record else published.label,
                          *(cell(duc, measure, published.values["duc"][measure]) for measure in MEASURES),
                          self.differences(record, [self.last_year]) if record else self.not_run("IX", published.key)])
        return markdown_table(header, lines)

    def figure_table(self, table: str) -> str | None:
        records = self.variants_of(table)
        if not records:
            return None
        year = str(self.last_year)
        header = ["Row", "Point", *(f"DUC {year} {MEASURE_NAMES[m]}" for m in MEASURES), "What differs"]
        lines = []
        for record in records:
            point = record["point"]
            label = (f"{round(100 * point)}% of the training clusters" if table == "Fig. 4" else
                     f"{QUALITY_SLICES[point]} (examples {10 * point}-{10 * point + 50}% by oracle ROUGE-2)")
            duc = (record.get("duc") or {}).get(year)
            lines.append([f"`{record['row']}`", label, *(ours_cell(duc, measure) for measure in MEASURES),
                          self.differences(record, [self.last_year])])
        return markdown_table(header, lines) + "\n\nThe paper plots this figure without printing its numbers."

    def benchmarks_table(self) -> str | None:
        """DUC and the other benchmarks side by side (``--qfs_dirs``): each Table VI row's DUC ROUGE-2 recall per year,
        and per benchmark its ROUGE-1/2/L F1 as trained on DUC (zero-shot) and, on a second line, fine-tuned on the
        benchmark; a baseline's one line."""
        benchmarks = self.plan.inputs.benchmarks
        if not benchmarks:
            return None
        header = ["Row", *(f"DUC {year} R-2 R" for year in self.years),
                  *(f"{benchmark.title} {MEASURE_NAMES[measure[:-2]]} F1" for benchmark in benchmarks
                    for measure in QFS_MEASURES)]
        lines = []
        for record in self.variants_of("VI"):
            row = ROW_BY_NAME[record["row"]]
            found = record.get("benchmarks") or {}
            label = f"**{record.get('system') or record['published_row'] or record['row']}** (`{record['variant']}`)"
            duc = [ours_cell((record.get("duc") or {}).get(str(year)), "rouge_2") for year in self.years]
            hows = ["baseline"] if row.duc == "baseline" else ["zero_shot", "fine_tuned"] if row.duc == "finetune" \
                else ["zero_shot"]
            for index, how in enumerate(hows):
                cells = []
                for benchmark in benchmarks:
                    summary = (found.get(benchmark.name) or {}).get(how)
                    if how == "fine_tuned" and not benchmark.trainable:
                        cells += ["no train split"] + [""] * (len(QFS_MEASURES) - 1)
                    else:
                        cells += [ours_cell(summary, measure) for measure in QFS_MEASURES]
                lines.append([label + (f": {QFS_HOW[how]}" if QFS_HOW[how] else ""),
                              *(duc if index == 0 else [""] * len(duc)), *cells])
        scored = "; ".join(f"{benchmark.title} {benchmark.split} ({benchmark.queries:,} queries)"
                           for benchmark in benchmarks)
        return (markdown_table(header, lines) + "\n\nDUC: ROUGE-2 recall with the official settings. The other "
                f"benchmarks ({scored}): ROUGE-1/2/L F1 as their papers score them (`wikiref qfs evaluate`), the "
                "summaries within each benchmark's word budget. Zero-shot: the models of the fold that tests the latest "
                "DUC year (or of the last cluster fold) applied as they are; fine-tuned: the same row trained on the "
                f"benchmark's train split instead of DUC, against `--qfs_labels {self.arguments.qfs_labels}` targets. "
                "No published numbers: the paper reports DUC only.")

    def best(self) -> dict[str, Any] | None:
        """The DUC row (not a baseline) with the highest ROUGE-2 recall, averaged over the years (every year scored),
        and where its models are: what a model card describes."""
        candidates = []
        for record in self.records.values():
            row = ROW_BY_NAME[record["row"]]
            duc = record.get("duc") or {}
            if row.duc not in ("finetune", "evaluate") or record["status"] != "done":
                continue
            years = [str(year) for year in self.years] if not row.last_fold else [str(self.last_year)]
            if not all((duc.get(year) or {}).get("rouge_2") for year in years):
                continue
            mean = statistics.fmean(duc[year]["rouge_2"]["mean"] for year in years)
            candidates.append((len(years), mean, record))
        if not candidates:
            return None
        _, mean, record = max(candidates, key=lambda item: (item[0], item[1]))
        variant = next(variant for variant in self.plan.variants if variant.name == record["variant"])
        models = []
        for (fold, seed), key in sorted(variant.finetune.items()):
            models.append({"fold": fold, "seed": seed, "folder": f"units/{self.plan.units[key].folder_name}"})
        if not models:
            models = [{"fold": None, "seed": seed, "folder": f"units/{self.plan.units[key].folder_name}"}
                      for seed, key in sorted(variant.pretrain.items())]
        last = str(self.last_year)
        median = ((record["duc"].get(last) or {}).get("rouge_2") or {}).get("median_run")
        card = next((model for model in models if Path(model["folder"]).name == median), models[-1])
        return {"row": record["row"], "variant": record["variant"], "published_row": record["published_row"],
                "rouge_2_recall_mean": mean, "years": sorted(record["duc"]), "models": models,
                "card_results": f"{card['folder']}/{RESULTS_NAME}",
                "why": "the highest ROUGE-2 recall averaged over the DUC years (mean over seeds); card_results: the "
                       f"run whose DUC {last} ROUGE-2 is the median of the seeds; paths relative to this folder"}

    def to_json(self, figures: Sequence[str]) -> dict[str, Any]:
        units = {}
        for key in self.plan.order:
            unit = self.plan.units[key]
            units[unit.folder_name] = {"kind": unit.kind, "rows": sorted(unit.rows),
                                       "status": self.runner.status.get(key, "not run"),
                                       **({"error": self.runner.messages[key]} if key in self.runner.messages else {})}
        return {"script": "run_experiments", "paper": PAPER_TITLE, "settings": self.settings(),
                "rows": self.records, "unavailable": dict(self.unavailable), "best": self.best(), "units": units,
                "figures": list(figures),
                "published": {table: [{"key": row.key, "section": row.section, "label": row.label,
                                       "values": row.values} for row in rows] for table, rows in PUBLISHED.items()}}

    def to_markdown(self, figures: Sequence[str]) -> str:
        settings = self.settings()
        lines = [f"# {PAPER_TITLE}: results", "",
                 "Written by `wikiref experiments` (`trainer_scripts/run_experiments.py`); every number comes from "
                 "the units under `units/` and is in `results.json`.", "",
                 f"- encoder: {settings['encoder']}",
                 f"- recipe: {settings['recipe']['name']} ({settings['recipe']['chosen']}): "
                 f"{settings['recipe']['description']}",
                 f"- WikiRef: {settings['wikiref'] or 'none (no pre-trained rows)'}",
                 f"- DUC: {', '.join(settings['duc'])}; "
                 + (("each year tested once, trained on the others" if self.years == sorted(self.plan.inputs.years)
                     else f"tested on {', '.join(map(str, self.years))}, each trained on every other year")
                    if settings["protocol"] == "cross_year" else
                    f"{len(self.plan.folds)} cluster folds, their summaries pooled and scored per year"),
                 f"- seeds: {' '.join(map(str, settings['seeds']))}"
                 + (" (WikiRef pre-training once per seed)" if settings["pretrain_per_seed"] else
                    f" (WikiRef pre-training once, seed {settings['seeds'][0]})"),
                 f"- options passed to the training units: {' '.join(settings['training_options']) or 'none'}", "",
                 "Cells: ours ×100 as mean ± sample standard deviation over the seeds (one number when a single run), "
                 "[the 95% bootstrap interval of the median seed's run], and below it the published number. Official "
                 "DUC ROUGE settings (`-n 2 -x -m -2 4 -u -c 95 -r 1000 -f A -p 0.5 -t 0 -l 250`), recall; WikiRef "
                 "ROUGE F1. Published numbers: Zhu et al. (2022), BERT-base, one run each.", "",
                 "Rule: how a row's sentences were chosen (greedy: the paper's DUC rule, the baselines' own; ILP, MMR: "
                 "`finetune_duc.py --selection`; oracle: ORACLE's own search). Where the fine-tuned rows choose by "
                 "another rule than the greedy one, LEAD and QUERY-SIM are also shown under it (`QUERY-SIM (ILP)`): "
                 "the model against the baselines under the same rule.", ""]
        best = self.best()
        if best:
            lines += [f"**Best row**: `{best['variant']}` ({best['published_row'] or best['row']}), mean ROUGE-2 "
                      f"recall {x100(best['rouge_2_recall_mean'])} over DUC {', '.join(best['years'])}; its models: "
                      f"`{Path(best['card_results']).parent.name}` and the others listed in results.json.", ""]
        for table, text in (("VI", self.table_vi()), ("IV", self.table_iv()), ("VIII", self.table_viii()),
                            ("IX", self.table_ix()), ("Fig. 4", self.figure_table("Fig. 4")),
                            ("Fig. 6", self.figure_table("Fig. 6"))):
            if text:
                lines += [f"## {TABLE_TITLES[table]}", "", text, ""]
        benchmarks = self.benchmarks_table()
        if benchmarks:
            lines += ["## DUC and the other query-focused benchmarks", "", benchmarks, ""]
        averaged = self.seed_average_table()
        if averaged:
            lines += ["## Seeds' scores averaged", "", averaged, ""]
        if figures:
            lines += ["## Figures", ""] + [f"![{Path(name).stem}]({name})" for name in figures] + [""]
        if self.unavailable:
            lines += ["## Rows that cannot run", ""] + [f"- {message}" for message in self.unavailable.values()] + [""]
        failed = [(unit, info) for unit, info in self.to_json([])["units"].items()
                  if info["status"] in ("failed", "skipped")]
        if failed:
            lines += ["## Units that did not finish", ""]
            lines += [f"- `{unit}`: {info['status']}" + (f" ({info['error']})" if info.get("error") else "")
                      for unit, info in failed] + [""]
        return "\n".join(lines)

    def figures(self, folder: Path) -> list[str]:
        """The plots (PNG, relative to the results folder): ROUGE-2 per year with intervals; the Fig. 4 and Fig. 6
        curves when those rows ran."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        written = []
        duc_records = [record for record in self.records.values() if record["table"] == "VI" and record.get("duc")]
        if duc_records:
            years = self.years
            width = 0.8 / len(duc_records)
            figure, axis = plt.subplots(figsize=(max(6.4, 1.2 + 0.45 * len(duc_records) * len(years)), 4.6))
            marked = False
            for index, record in enumerate(duc_records):
                positions, means, low, high, paper = [], [], [], [], []
                for position, year in enumerate(years):
                    entry = ((record["duc"].get(str(year)) or {}).get("rouge_2")) or {}
                    if not entry:
                        continue
                    mean = 100 * entry["mean"]
                    interval = entry.get("ci_median_run") or [entry["mean"], entry["mean"]]
                    positions.append(position - 0.4 + width * (index + 0.5))
                    means.append(mean)
                    low.append(max(0.0, mean - 100 * interval[0]))
                    high.append(max(0.0, 100 * interval[1] - mean))
                    value = (published_values("VI", record["published_row"]).get(str(year)) or {}).get("rouge_2")
                    if value is not None:
                        paper.append((positions[-1], value))
                axis.bar(positions, means, width, yerr=[low, high], capsize=2, label=record["variant"])
                if paper:  # the published number of the same row and year, beside ours
                    axis.scatter(*zip(*paper), marker="D", s=18, color="black", zorder=3,
                                 label=None if marked else "published (Zhu et al. 2022)")
                    marked = True
            axis.set_xticks(range(len(years)), [f"DUC {year}" for year in years])
            axis.set_ylabel("ROUGE-2 recall ×100")
            axis.set_title("ROUGE-2 recall per DUC year\n"
                           "bars: mean over seeds; whiskers: 95% CI of the median seed's run", fontsize="medium")
            axis.legend(fontsize="small", ncol=2)
            written.append(self._save(figure, folder, "figures/duc_rouge2.png"))
        year = str(self.last_year)
        for table, name, title in (("Fig. 4", "figures/fig4_data_fraction.png", "share of the training clusters (%)"),
                                   ("Fig. 6", "figures/fig6_quality.png", "WikiRef training half, by quality")):
            records = [record for record in self.variants_of(table) if (record.get("duc") or {}).get(year)]
            if not records:
                continue
            figure, axis = plt.subplots(figsize=(6.4, 4.2))
            for row in dict.fromkeys(record["row"] for record in records):
                points = [(record["point"], record["duc"][year]["rouge_2"]) for record in records
                          if record["row"] == row and record["duc"][year].get("rouge_2")]
                xs = [100 * point if table == "Fig. 4" else point for point, _ in points]
                axis.errorbar(xs, [100 * entry["mean"] for _, entry in points],
                              yerr=[100 * entry["std"] for _, entry in points], marker="o", capsize=3, label=row)
            for reference in ("da_pretrained_regression",) if table == "Fig. 4" else ("qbert_da",):
                entry = ((self.records.get(reference) or {}).get("duc") or {}).get(year, {}) or {}
                if entry.get("rouge_2"):
                    axis.axhline(100 * entry["rouge_2"]["mean"], linestyle="--", linewidth=1, color="grey")
                    axis.annotate(reference, (axis.get_xlim()[0], 100 * entry["rouge_2"]["mean"]), fontsize="small")
            if table == "Fig. 6":
                axis.set_xticks(range(len(QUALITY_SLICES)), QUALITY_SLICES, rotation=20)
            axis.set_xlabel(title)
            axis.set_ylabel(f"DUC {year} ROUGE-2 recall ×100")
            axis.legend(fontsize="small")
            written.append(self._save(figure, folder, name))
        return written

    @staticmethod
    def _save(figure: Any, folder: Path, name: str) -> str:
        import matplotlib.pyplot as plt

        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        figure.tight_layout()
        figure.savefig(path, dpi=120)
        plt.close(figure)
        return name

    def closing_table(self) -> str:
        """The closing summary: one line per row variant, its status and ROUGE-2 per year x100."""
        years = self.years
        benchmarks = self.plan.inputs.benchmarks
        header = ["row", "status", *(f"R-2 {year}" for year in years), "WikiRef R-2 F1",
                  *(f"{benchmark.title} R-2 F1 (DUC-trained / fine-tuned)" for benchmark in benchmarks)]
        lines = [header]
        for record in self.records.values():
            duc = record.get("duc") or {}
            wikiref = self._wikiref_split(record)
            cells = []
            for benchmark in benchmarks:  # zero-shot / fine-tuned ("-" when not run), or a baseline's one value
                found = (record.get("benchmarks") or {}).get(benchmark.name) or {}
                hows = ["baseline"] if "baseline" in found else ["zero_shot", "fine_tuned"] if found else []
                cells.append(" / ".join(ours_cell(found.get(how), "rouge_2_f").split(" [")[0] for how in hows))
            lines.append([record["variant"], record["status"],
                          *(ours_cell(duc.get(str(year)), "rouge_2").split(" [")[0]
                            if ROW_BY_NAME[record["row"]].duc is not None else "" for year in years),
                          ours_cell(wikiref, "rouge_2_f") if record.get("wikiref") else "", *cells])
        widths = [max(len(line[column]) for line in lines) for column in range(len(header))]
        recipe = self.plan.inputs.recipe
        return f"recipe {recipe.name} ({self.plan.inputs.recipe_chosen})\n" + "\n".join(
            "  ".join(value.ljust(width) for value, width in zip(line, widths)).rstrip() for line in lines)


PAPER_TITLE = ("Zhu, Dong, Wei, Qin and Liu (2022), Transforming Wikipedia into Augmented Data for Query-Focused "
               "Summarization")


def _rule_cell(record: Mapping[str, Any] | None) -> str:
    """A Table VI row's Rule cell (``greedy``, ``ILP``, ``oracle``: ``wikiref_dataset.baselines.rule_label``); empty
    for a row not run here or a record written before rules were recorded."""
    from wikiref_dataset.baselines import rule_label

    return rule_label(record["rule"]) if record and record.get("rule") else ""


def _short_encoder(name: str) -> str:
    return "all-MiniLM-L6-v2" if "minilm" in name.lower() else name
