"""The paper's tables as data: the published numbers (one copy: the report and the model card read them here), the
rows (each a recipe of the training scripts), the groups ``--rows`` takes, and the tables' titles."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

PAPER_ENCODER = "BERT-base (uncased)"
PAPER_WIKIREF_TRAIN = 256_724  # Table I of the paper: WikiRef training examples
PAPER_YEARS = (2005, 2006, 2007)

# ---- the published numbers ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PublishedRow:
    """One row of a published table: ``key`` (unique in the table), the paper's ``section`` and row ``label``, and
    its numbers x100 (``values[column][measure]``; columns: a DUC year, ``validation``/``test`` for WikiRef, ...)."""

    key: str
    section: str
    label: str
    values: Mapping[str, Mapping[str, float]]


def _duc_years(r1_r2: Sequence[float | None]) -> dict[str, dict[str, float]]:
    pairs = zip(PAPER_YEARS, r1_r2[0::2], r1_r2[1::2])
    return {str(year): {"rouge_1": r1, "rouge_2": r2} for year, r1, r2 in pairs if r1 is not None}


def _wikiref(values: Sequence[float]) -> dict[str, dict[str, float]]:
    names = ("rouge_1", "rouge_2", "rouge_l")
    return {"validation": dict(zip(names, values[:3])), "test": dict(zip(names, values[3:]))}


_NO_DA, _CLS, _REG = "Without data augmentation", "Classification pre-training", "Regression pre-training"
PUBLISHED: dict[str, list[PublishedRow]] = {
    # Table VI: DUC 2005, 2006, 2007 ROUGE-1 / ROUGE-2 recall (the paper prints no SU4 here)
    "VI": [
        PublishedRow("LEAD", _NO_DA, "LEAD", _duc_years([29.71, 4.69, 32.61, 5.71, 36.14, 8.12])),
        PublishedRow("QUERY-SIM", _NO_DA, "QUERY-SIM", _duc_years([32.95, 5.91, 35.52, 7.10, 36.32, 7.94])),
        PublishedRow("SVR", _NO_DA, "SVR", _duc_years([36.91, 7.04, 39.24, 8.87, 43.42, 11.10])),
        PublishedRow("CRSUM", _NO_DA, "CRSUM", _duc_years([36.96, 7.01, 39.51, 9.19, 41.20, 11.17])),
        PublishedRow("ATTSUM", _NO_DA, "ATTSUM", _duc_years([37.01, 6.99, 40.90, 9.40, 43.92, 11.55])),
        PublishedRow("QUERYSUM", _NO_DA, "QUERYSUM", _duc_years([None, None, 41.60, 9.50, 43.30, 11.60])),
        PublishedRow("BERT", _NO_DA, "BERT", _duc_years([37.82, 7.88, 41.35, 9.60, 43.55, 11.39])),
        PublishedRow("Q-BERT", _NO_DA, "Q-BERT", _duc_years([37.47, 7.58, 40.88, 9.54, 42.84, 11.24])),
        PublishedRow("PQSUM", _CLS, "PQSUM", _duc_years([37.55, 7.84, 40.41, 9.22, 42.41, 11.08])),
        PublishedRow("DA PRE-TRAINED (classification)", _CLS, "DA PRE-TRAINED",
                     _duc_years([36.19, 7.00, 38.67, 7.88, 40.08, 9.19])),
        PublishedRow("BERT + DA (classification)", _CLS, "BERT + DA",
                     _duc_years([38.77, 8.31, 41.65, 10.04, 44.31, 11.85])),
        PublishedRow("DA PRE-TRAINED (regression)", _REG, "DA PRE-TRAINED",
                     _duc_years([36.52, 7.02, 38.81, 8.37, 41.09, 10.29])),
        PublishedRow("BERT + DA (regression)", _REG, "BERT + DA",
                     _duc_years([38.44, 8.33, 41.64, 9.98, 44.14, 12.12])),
        PublishedRow("Q-BERT + DA", _REG, "Q-BERT + DA", _duc_years([38.68, 8.51, 41.81, 10.17, 44.72, 12.43])),
        PublishedRow("Q-BERT + DA + ST", _REG, "Q-BERT + DA + ST",
                     _duc_years([39.21, 8.62, 41.96, 10.29, 45.06, 12.55])),
        PublishedRow("ORACLE", "Upper bound", "ORACLE", _duc_years([43.71, 13.77, 48.02, 17.22, 49.80, 19.19])),
    ],
    # Table IV: WikiRef, ROUGE-1/2/L F1 on the development (here: validation) and test splits
    "IV": [
        PublishedRow("All", "", "All", _wikiref([14.05, 7.84, 12.97, 14.09, 7.88, 13.01])),
        PublishedRow("LEAD", "", "LEAD", _wikiref([26.55, 10.66, 21.99, 26.32, 10.48, 21.81])),
        PublishedRow("BERT (regression)", "Regression supervision", "BERT",
                     _wikiref([34.52, 17.96, 29.29, 34.42, 17.88, 29.17])),
        PublishedRow("Q-BERT (regression)", "Regression supervision", "Q-BERT",
                     _wikiref([34.83, 18.18, 29.51, 34.58, 17.92, 29.27])),
        PublishedRow("ORACLE (regression)", "Regression supervision", "ORACLE",
                     _wikiref([51.34, 35.80, 45.62, 51.41, 35.89, 45.68])),
        PublishedRow("TRANSFORMER", "Classification supervision", "TRANSFORMER",
                     _wikiref([28.18, 12.92, 23.92, 28.07, 12.80, 23.79])),
        PublishedRow("BERT (classification)", "Classification supervision", "BERT",
                     _wikiref([35.40, 18.49, 30.30, 35.08, 18.15, 29.99])),
        PublishedRow("BERT w/o Query", "Classification supervision", "BERT w/o Query",
                     _wikiref([32.91, 16.05, 27.97, 32.52, 15.83, 27.65])),
        PublishedRow("Q-BERT (classification)", "Classification supervision", "Q-BERT",
                     _wikiref([35.85, 18.91, 30.59, 35.50, 18.45, 30.37])),
        PublishedRow("ORACLE (classification)", "Classification supervision", "ORACLE",
                     _wikiref([54.34, 37.39, 48.34, 54.46, 37.52, 48.51])),
    ],
    # Table VIII: WikiRef ROUGE-2/L F1 (test) and DUC 2007 ROUGE-2/SU4 recall, by pooling
    "VIII": [
        PublishedRow(label, "", label, {"wikiref": {"rouge_2": r2, "rouge_l": rl},
                                        "duc": {"rouge_2": d2, "rouge_su4": su4}})
        for label, r2, rl, d2, su4 in (("BERT", 18.15, 29.99, 12.12, 17.58),
                                       ("+MAX POOLING", 17.80, 29.00, 11.85, 17.37),
                                       ("+MEAN POOLING", 18.26, 29.93, 11.93, 17.47),
                                       ("+ATTENTION POOLING", 18.17, 29.75, 12.21, 17.65),
                                       ("Q-BERT", 18.45, 30.37, 12.43, 17.75))
    ],
    # Table IX: DUC 2007 ROUGE-1/2/SU4 recall by subnetwork identification method (and initialisation)
    "IX": [
        PublishedRow(f"{method} ({init})", method, f"{method} / {init}",
                     {"duc": {"rouge_1": r1, "rouge_2": r2, "rouge_su4": su4}})
        for method, init, r1, r2, su4 in (("None", "BERT", 44.72, 12.43, 17.75),
                                          ("ITERATIVE", "BERT", 41.98, 10.93, 16.11),
                                          ("ITERATIVE", "DA PRE-TRAINED", 44.54, 12.28, 17.58),
                                          ("ONE-STEP", "DA PRE-TRAINED", 45.06, 12.55, 17.86))
    ],
}
"""The published tables of Zhu et al. (2022), transcribed (x100); Figs. 4 and 6 are plots without printed numbers."""
_PUBLISHED_BY_KEY = {table: {row.key: row for row in rows} for table, rows in PUBLISHED.items()}


def published_values(table: str, key: str | None) -> Mapping[str, Mapping[str, float]]:
    """The published numbers of one row of ``table`` (``values[column][measure]``, x100); ``{}`` for no row
    (``key`` ``None``: a row without published numbers, such as a figure's).

    Raises:
        KeyError: ``table`` has no row ``key``.
    """
    return {} if key is None else _PUBLISHED_BY_KEY[table][key].values


TABLE_TITLES = {
    "VI": "Table VI: DUC, ROUGE recall",
    "IV": "Table IV: WikiRef, ROUGE F1",
    "VIII": "Table VIII: pooling methods",
    "IX": "Table IX: subnetwork identification",
    "Fig. 4": "Fig. 4: share of the DUC training data",
    "Fig. 6": "Fig. 6: WikiRef training data of increasing quality",
}

# ---- the rows -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pretraining:
    """How a row pre-trains on WikiRef (``pretrain_wikiref.py``): a new Q-BERT on the encoder with this objective,
    pooling and query; ``iterative`` prunes the encoder matrices during it (Table IX); ``start`` continues from
    another pre-trained model instead of the encoder; ``train_slice`` trains on a slice of the training split sorted
    by oracle ROUGE-2 recall (Fig. 6)."""

    objective: str = "regression"
    pooling: str = "query_focused"
    use_query: bool = True
    random_init: bool = False
    iterative: bool = False
    start: Pretraining | None = None
    train_slice: tuple[float, float] | None = None

    def options(self, recipe: Mapping[str, Any] | None = None) -> list[str]:
        """The row's pre-training options; without the query, a recipe's query similarity (which compares each
        sentence with the query) is turned off."""
        options = [] if self.start is not None else [
            "--objective", self.objective, "--pooling", self.pooling, "--use_query", str(self.use_query).lower(),
            *(["--random_init", "true"] if self.random_init else []),
            *(["--query_similarity", "false"] if not self.use_query and (recipe or {}).get("query_similarity")
              else [])]
        if self.iterative:
            options += ["--subnetwork_method", "iterative", "--subnetwork_fraction", "0.1"]
        return options


@dataclass(frozen=True)
class Row:
    """One row of a table or one curve of a figure, as a recipe of the scripts.

    ``duc``: ``finetune`` (``finetune_duc.py`` from the encoder, or from the pre-trained model when ``pretraining``
    is set), ``evaluate`` (the pre-trained model applied to DUC as it is), ``baseline`` (``baseline`` names it) or
    ``None`` (a WikiRef row: the pre-training unit's own scores). ``finetune_options`` are what make the row.
    ``last_fold``: run only on the fold that tests the latest year (the paper's DUC 2007 analyses). ``sweep``:
    ``data_fraction`` (Fig. 4) or ``quality`` (Fig. 6) expands the row into one variant per point; ``rule`` (LEAD
    and QUERY-SIM) adds one variant per selection rule the run's fine-tuned rows choose with besides the baselines'
    own greedy rule (``query_sim@ilp``: QUERY-SIM under ILP, the same rule as the model's)."""

    name: str
    table: str
    published: str | None
    help: str
    duc: str | None = "finetune"
    pretraining: Pretraining | None = None
    finetune_options: tuple[str, ...] = ()
    baseline: str | None = None
    last_fold: bool = False
    sweep: str | None = None


_REGRESSION = ("--objective", "regression")  # a new head from the encoder: DUC's training is regression (§V-B)
_FULL = ("--subnetwork_fraction", "0")
_QBERT_REG = Pretraining("regression", "query_focused")
_BERT_REG = Pretraining("regression", "cls")

ROWS: tuple[Row, ...] = (
    # Table VI
    Row("lead", "VI", "LEAD", "the leading sentences of the cluster's documents", duc="baseline", baseline="lead",
        sweep="rule"),
    Row("query_sim", "VI", "QUERY-SIM", "sentences ranked by TF-IDF cosine to the query", duc="baseline",
        baseline="query_sim", sweep="rule"),
    Row("bert", "VI", "BERT", "no data augmentation: a [CLS] per sentence, fine-tuned on DUC from the encoder",
        finetune_options=(*_REGRESSION, "--pooling", "cls", *_FULL)),
    Row("qbert", "VI", "Q-BERT", "no data augmentation: query-focused pooling, fine-tuned on DUC from the encoder",
        finetune_options=(*_REGRESSION, "--pooling", "query_focused", *_FULL)),
    Row("da_pretrained_classification", "VI", "DA PRE-TRAINED (classification)",
        "Q-BERT pre-trained on WikiRef with classification, applied to DUC without fine-tuning", duc="evaluate",
        pretraining=Pretraining("classification", "query_focused")),
    Row("bert_da_classification", "VI", "BERT + DA (classification)",
        "BERT pre-trained on WikiRef with classification, then fully fine-tuned on DUC with regression",
        pretraining=Pretraining("classification", "cls"),
        finetune_options=("--finetuning_objective", "regression", "--switch_objective", "true", *_FULL)),
    Row("da_pretrained_regression", "VI", "DA PRE-TRAINED (regression)",
        "Q-BERT pre-trained on WikiRef with regression, applied to DUC without fine-tuning", duc="evaluate",
        pretraining=_QBERT_REG),
    Row("bert_da_regression", "VI", "BERT + DA (regression)",
        "BERT pre-trained on WikiRef with regression, then fully fine-tuned on DUC", pretraining=_BERT_REG,
        finetune_options=_FULL),
    Row("qbert_da", "VI", "Q-BERT + DA", "Q-BERT pre-trained on WikiRef with regression, then fully fine-tuned on DUC",
        pretraining=_QBERT_REG, finetune_options=_FULL),
    Row("qbert_da_st", "VI", "Q-BERT + DA + ST",
        "Q-BERT pre-trained on WikiRef, then a one-step 10% subnetwork fine-tuned on DUC", pretraining=_QBERT_REG,
        finetune_options=("--subnetwork_fraction", "0.1", "--subnetwork_method", "one_step")),
    Row("oracle", "VI", "ORACLE", "the greedy ROUGE oracle (an upper bound)", duc="baseline", baseline="oracle"),
    # Table IV: WikiRef only (the pre-training runs' validation and test scores)
    Row("wikiref_bert_regression", "IV", "BERT (regression)", "WikiRef: [CLS] per sentence, regression", duc=None,
        pretraining=_BERT_REG),
    Row("wikiref_qbert_regression", "IV", "Q-BERT (regression)", "WikiRef: query-focused pooling, regression",
        duc=None, pretraining=_QBERT_REG),
    Row("wikiref_transformer", "IV", "TRANSFORMER",
        "WikiRef: a randomly initialised encoder without the query, classification", duc=None,
        pretraining=Pretraining("classification", "cls", use_query=False, random_init=True)),
    Row("wikiref_bert", "IV", "BERT (classification)", "WikiRef: [CLS] per sentence, classification", duc=None,
        pretraining=Pretraining("classification", "cls")),
    Row("wikiref_bert_wo_query", "IV", "BERT w/o Query", "WikiRef: [CLS] per sentence without the query, "
        "classification", duc=None, pretraining=Pretraining("classification", "cls", use_query=False)),
    Row("wikiref_qbert", "IV", "Q-BERT (classification)", "WikiRef: query-focused pooling, classification", duc=None,
        pretraining=Pretraining("classification", "query_focused")),
    # Table VIII: poolings, pre-trained with regression and fully fine-tuned (the paper's DUC 2007 columns)
    *(Row(f"pooling_{pooling}", "VIII", label, f"{pooling} pooling: pre-trained with regression, fully fine-tuned",
          pretraining=Pretraining("regression", pooling), finetune_options=_FULL, last_fold=True)
      for pooling, label in (("cls", "BERT"), ("max", "+MAX POOLING"), ("mean", "+MEAN POOLING"),
                             ("attention", "+ATTENTION POOLING"), ("query_focused", "Q-BERT"))),
    # Table IX: subnetwork identification (DUC 2007)
    Row("subnetwork_none", "IX", "None (BERT)", "Q-BERT + DA, every weight fine-tuned", pretraining=_QBERT_REG,
        finetune_options=_FULL, last_fold=True),
    Row("subnetwork_iterative_bert", "IX", "ITERATIVE (BERT)",
        "gradual magnitude pruning to 10% during WikiRef pre-training from the encoder; that subnetwork fine-tuned",
        pretraining=replace(_QBERT_REG, iterative=True), finetune_options=("--subnetwork_method", "iterative"),
        last_fold=True),
    Row("subnetwork_iterative_da", "IX", "ITERATIVE (DA PRE-TRAINED)",
        "gradual magnitude pruning to 10% during further WikiRef training of the pre-trained Q-BERT; fine-tuned",
        pretraining=Pretraining(iterative=True, start=_QBERT_REG),
        finetune_options=("--subnetwork_method", "iterative"), last_fold=True),
    Row("subnetwork_one_step", "IX", "ONE-STEP (DA PRE-TRAINED)",
        "Q-BERT + DA + ST: the top 10% of each encoder matrix of the pre-trained model", pretraining=_QBERT_REG,
        finetune_options=("--subnetwork_fraction", "0.1", "--subnetwork_method", "one_step"), last_fold=True),
    # Fig. 4: a share of the training years' clusters, BERT with and without WikiRef pre-training
    Row("fig4_bert", "Fig. 4", None, "BERT without data augmentation on a share of the DUC training clusters",
        finetune_options=(*_REGRESSION, "--pooling", "cls", *_FULL), last_fold=True, sweep="data_fraction"),
    Row("fig4_bert_da", "Fig. 4", None, "BERT + DA (regression) on a share of the DUC training clusters",
        pretraining=_BERT_REG, finetune_options=_FULL, last_fold=True, sweep="data_fraction"),
    # Fig. 6: Q-BERT + DA pre-trained on half of WikiRef's training split, from the poorest half to the best
    Row("fig6_qbert_da", "Fig. 6", None, "Q-BERT + DA pre-trained on six overlapping halves of WikiRef by oracle "
        "ROUGE-2 (Poor ... Excellent)", pretraining=_QBERT_REG, finetune_options=_FULL, last_fold=True,
        sweep="quality"),
)
ROW_BY_NAME = {row.name: row for row in ROWS}
GROUPS = {
    "table6": [row.name for row in ROWS if row.table == "VI"],
    "table4": [row.name for row in ROWS if row.table == "IV"],
    "table8": [row.name for row in ROWS if row.table == "VIII"],
    "table9": [row.name for row in ROWS if row.table == "IX"],
    "fig4": ["fig4_bert", "fig4_bert_da"],
    "fig6": ["fig6_qbert_da"],
    "all": [row.name for row in ROWS],
}
QUALITY_SLICES = ("Poor", "Fair", "Average", "Good", "Very Good", "Excellent")
"""Fig. 6: the training split sorted by oracle ROUGE-2 recall, halves starting at 0%, 10%, ..., 50%."""
