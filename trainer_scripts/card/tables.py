"""The card's Results section: Table IV's shape (WikiRef, ROUGE-1/2/L F1) and Table VI's (DUC 2005-2007, ROUGE-1/2/SU4
recall with 95% intervals) with the published row beside this run's, the table of another benchmark a run was
fine-tuned and tested on, the headline (this model against QUERY-SIM under the same rule) and how the tables name
the rules their rows were chosen with."""

from __future__ import annotations

from collections.abc import Mapping

from trainer_scripts.card.experiments import experiments_note
from trainer_scripts.card.markdown import WIKIREF_MEASURES, _markdown_table
from trainer_scripts.card.names import model_variant
from trainer_scripts.card.published import (
    PAPER_TABLE_IV,
    PAPER_TABLE_VI,
    PublishedSetup,
    closest_published_row,
    published_note,
)
from trainer_scripts.duc_evaluation import MEASURE_NAMES, MEASURES, format_cell
from trainer_scripts.experiments.cells import x100
from trainer_scripts.results import MODEL_SYSTEM, EvaluationResults, TrainingResults


def wikiref_table(results: TrainingResults) -> str | None:
    """Table IV's shape (validation columns, then test columns with the validation threshold when the run scored the
    test split), or ``None`` when not evaluated."""
    pretraining = results.pretraining
    validation = pretraining.validation if pretraining else None
    if not validation:
        return None
    test = pretraining.test
    objective = results.pretraining_objective
    header = ["System", *(f"{split} {name} F1" for split in ("Validation", "Test") for _, name in WIKIREF_MEASURES)]
    rows = [[f"**Q-BERT, {objective} supervision (this run)**",
             *(f"**{x100(getattr(validation, key))}**" for key, _ in WIKIREF_MEASURES),
             *((f"**{x100(getattr(test, key))}**" if test else "not evaluated") for key, _ in WIKIREF_MEASURES)]]
    if objective not in PAPER_TABLE_IV:
        return _markdown_table(header, rows)
    rows.append([f"Q-BERT, {objective} supervision (published ‡)", *(f"{v:.2f}" for v in PAPER_TABLE_IV[objective])])
    setup = PublishedSetup(pretraining_objective=objective)
    return (_markdown_table(header, rows) + "\n\n‡ " + published_note(results, setup, wikiref=True))


def duc_years(results: TrainingResults) -> list[str]:
    """The DUC years of the evaluation, sorted (as strings, the JSON keys)."""
    return results.evaluation.dataset_keys() if results.evaluation else []


def model_rule(results: TrainingResults) -> str:
    """The rule this model's cluster summaries were chosen with: as its evaluation records it, else as fine-tuning
    recorded ``--selection``, else the paper's greedy rule (results written before the option)."""
    for evaluation in (results.evaluation, results.benchmark_evaluation):
        rule = evaluation.rule(MODEL_SYSTEM) if evaluation else None
        if rule:
            return rule
    return (results.finetuning.selection if results.finetuning else None) or "duc"


def _rule_column(evaluation: EvaluationResults, name: str) -> list[str]:
    """The Rule cell of ``name`` when the evaluation records the rules (none for results written before them)."""
    from wikiref_dataset.baselines import rule_label

    if not evaluation.rules:
        return []
    rule = evaluation.rule(name)
    return [rule_label(rule) if rule else "-"]


def _same_rule_gain(evaluation: EvaluationResults, key: str, label: str, rule: str, value: str) -> str | None:
    """One dataset's headline: this model's ROUGE-1 / ROUGE-2 (``value``) beside QUERY-SIM's under the same rule
    ``rule`` and the gain; that QUERY-SIM was not scored when the evaluation lacks its row; ``None`` when the model has
    no score there."""
    from wikiref_dataset.baselines import rule_label, system_name

    model = evaluation.scores(MODEL_SYSTEM, key)
    if not model:
        return None
    measures = [measure for measure in ("rouge_1", "rouge_2") if model.interval(measure, value)]
    ours = " / ".join(x100(model.interval(measure, value).value) for measure in measures)
    names = " / ".join(MEASURE_NAMES[measure] for measure in measures)
    what = f"{label}, {names} {'F1' if value == 'f' else 'recall'} ×100: this model {ours}"
    try:
        baseline = system_name("QUERY-SIM", rule)
    except ValueError:  # a rule this version does not know
        baseline = None
    found = evaluation.scores(baseline, key) if baseline else None
    if found and evaluation.rule(baseline) not in (None, rule):
        found = None  # a row of that name under another rule: not the same rule
    if not found or not all(found.interval(measure, value) for measure in measures):
        return what + f"; QUERY-SIM under the same rule ({rule_label(rule)}) was not scored by this run"
    theirs = [found.interval(measure, value).value for measure in measures]
    gains = [model.interval(measure, value).value - base for measure, base in zip(measures, theirs)]
    return (what + f", QUERY-SIM under the same rule ({rule_label(rule)}) {' / '.join(map(x100, theirs))}: a gain "
            f"of {' / '.join(f'{100 * gain:+.2f}' for gain in gains)}")


def headline(results: TrainingResults) -> str | None:
    """The card's headline: on each test year (a year the model was fine-tuned on is left out, unless its test clusters
    were held out as a cluster fold) or the benchmark's split, this model's ROUGE-1 / ROUGE-2 beside QUERY-SIM's
    under the same rule and the gain (a model chosen by ILP against QUERY-SIM chosen by ILP: what the model adds, not
    what the rule adds); ``None`` without an evaluation of the model."""
    rule = model_rule(results)
    folds = results.finetuning.folds if results.finetuning else None
    parts = []
    if results.evaluation:
        for year in duc_years(results):
            if folds or year not in results.trained_years:  # cluster folds: the tested clusters were held out
                parts.append(_same_rule_gain(results.evaluation, year, f"DUC {year}", rule, "recall"))
    found = benchmark_values(results)
    if found is not None:
        key, value = found
        benchmark = results.finetuning.benchmark if results.finetuning else None
        title = (benchmark.title if benchmark else None) or key.split("/")[0]
        parts.append(_same_rule_gain(results.benchmark_evaluation, key, f"{title} `{key.split('/', 1)[-1]}`", rule,
                                     value))
    parts = [part for part in parts if part]
    return "; ".join(parts) + "." if parts else None


def rules_note(results: TrainingResults, evaluation: EvaluationResults | None) -> str:
    """How the card's tables name the rules their rows were chosen with (older results: only that the baselines kept
    the paper's rule)."""
    if evaluation is None or not evaluation.rules:
        return "the baselines by the paper's rule"
    from wikiref_dataset.baselines import rule_label

    text = ("each row by the rule its Rule column names: a baseline's bare name (`QUERY-SIM`) is the baseline under "
            "its own rule, the paper's greedy one")
    rule = model_rule(results)
    if rule != "duc":
        text += (f"; `QUERY-SIM ({rule_label(rule)})` is QUERY-SIM under this model's rule, and `{MODEL_SYSTEM} "
                 "(greedy)` this model under the paper's rule, chosen from the same sentence scores (an ablation: what "
                 "the rule adds)")
    return text


def duc_table(results: TrainingResults) -> str | None:
    """Table VI's shape: one row per system, its rule (when the results record the rules), ROUGE-1/2/SU4 recall ×100
    [95% CI] per DUC year; ``None`` when the run has no DUC evaluation. A year the model was fine-tuned on is marked:
    its score is not a test score."""
    evaluation = results.evaluation
    if not evaluation or not evaluation.systems:
        return experiments_note(results)  # a pre-trained model the experiments scored on DUC without fine-tuning
    years = duc_years(results)
    trained_on = results.trained_years
    header = ["System", *(["Rule"] if evaluation.rules else []),
              *(f"DUC {year} {MEASURE_NAMES[measure]}" for year in years for measure in MEASURES)]
    rows = []
    for name in evaluation.ordered_systems():
        cells = []
        for year in years:
            for measure in MEASURES:
                cell = format_cell(evaluation.scores(name, year), measure)
                if name == MODEL_SYSTEM and cell != "-":
                    cell = f"**{cell}**" + (" †" if year in trained_on else "")
                cells.append(cell)
        label = f"**{model_variant(results)} (this model)**" if name == MODEL_SYSTEM else name
        rows.append([label, *_rule_column(evaluation, name), *cells])
    row = closest_published_row(results)
    setup, published = PAPER_TABLE_VI[row]
    note = None
    if any(year.isdigit() and int(year) in published for year in years):
        cells = []
        for year in years:
            values = published.get(int(year)) if year.isdigit() else None
            cells += [f"{values[0]:.2f}", f"{values[1]:.2f}", "n/a"] if values else ["-", "-", "-"]
        rows.append([f"{row} (published ‡)", *(["greedy"] if evaluation.rules else []), *cells])
        note = published_note(results, setup)
    table = _markdown_table(header, rows, numeric_from=2 if evaluation.rules else 1)
    if note:
        table += "\n\n‡ " + note
    if trained_on & set(years):
        table += ("\n\n† a year this model was fine-tuned on (DUC " + ", ".join(sorted(trained_on)) +
                  "): a training score, not a test score.")
    note = experiments_note(results)
    return table + ("\n\n" + note if note else "")


def benchmark_values(results: TrainingResults) -> tuple[str, str] | None:
    """``(split key, value)`` of a run fine-tuned and tested on another benchmark (``finetune_duc.py --qfs_dir``):
    the key its scores are under (``qmsum/validation``) and the value they report (``f`` or ``recall``); ``None`` for
    a DUC run."""
    evaluation = results.benchmark_evaluation
    for by_split in (evaluation.systems if evaluation else {}).values():
        for key, values in (by_split or {}).items():
            return key, "f" if "rouge_1_f" in (values or {}) else "recall"
    return None


def benchmark_table(results: TrainingResults) -> str | None:
    """One row per system on the benchmark a run was fine-tuned and tested on: ROUGE-1/2/L ×100 [95% CI] as that
    benchmark's papers score it; ``None`` for a DUC run."""
    found = benchmark_values(results)
    if found is None:
        return None
    key, value = found
    evaluation = results.benchmark_evaluation
    header = ["System", *(["Rule"] if evaluation.rules else []),
              *(f"{name} {'F1' if value == 'f' else 'recall'}" for _, name in WIKIREF_MEASURES)]
    rows = []
    for name in evaluation.ordered_systems():
        values = evaluation.scores(name, key)
        cells = []
        for measure, _ in WIKIREF_MEASURES:
            measure = measure[:-2]  # rouge_1_f -> rouge_1; a measure the results lack is "-", as a system they lack
            cell = format_cell(values if values and f"{measure}_{value}" in values else None, measure, value)
            cells.append(f"**{cell}**" if name == MODEL_SYSTEM and cell != "-" else cell)
        rows.append([f"**{model_variant(results)} (this model)**" if name == MODEL_SYSTEM else name,
                     *_rule_column(evaluation, name), *cells])
    return _markdown_table(header, rows, numeric_from=2 if evaluation.rules else 1)


def _budgets_text(budgets: Mapping[str, int] | None) -> str:
    """``{"": 65, "general": 110, "specific": 65}`` -> ``general queries: 110 words; specific queries: 65 words``
    (the default entry ``""`` named only when it is the only one)."""
    named = {kind: words for kind, words in (budgets or {}).items() if kind}
    if not named:
        return f"{budgets['']} words" if budgets and "" in budgets else "not recorded"
    return "; ".join(f"{kind} queries: {words} words" for kind, words in sorted(named.items()))
