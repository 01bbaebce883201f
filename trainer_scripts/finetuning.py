"""The library half of ``finetune_duc.py``: its options (`DucArguments`, checked when they are parsed), the training
targets (each sentence's ROUGE-2 recall, :func:`label_clusters`, or QMSum's answer spans, :func:`span_labels`), the
DUC topic's query format, the validation share that chooses the epoch (`EpochSelection`), the objective and the
subnetwork fine-tuning trains (:func:`choose_objective`, :func:`choose_subnetwork`) and the run's results record
(:func:`finetuning_results`). What a run trains and tests on, DUC years or another benchmark, is
``trainer_scripts.finetuning_data``."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from trainer_scripts.common import ScriptError, read_training_results
from trainer_scripts.results import (
    EpochSelectionRecord,
    FinetuningResults,
    FinetuningSubnetwork,
    PretrainingResults,
    RecipeRecord,
    SubnetworkShare,
)

logger = logging.getLogger("finetune_duc")


NEW_HEAD_LR_FACTOR = 30.0
"""A new head (from a plain encoder) learns at --learning_rate x this unless --head_learning_rate says otherwise."""

"""The fine-tuned model's name in the evaluation table (the model card looks for it)."""


@dataclass
class DucArguments:
    """The DUC years, the fold and the subnetwork."""

    duc_dirs: list[str] = field(default_factory=list, metadata={
        "help": "Folders written by `wikiref duc convert`, one per year (two or three)."})
    test_year: int | None = field(default=None, metadata={"help": "The year to test on; the others train."})
    finetuning_objective: str | None = field(default=None, metadata={
        "help": "Loss on each sentence's ROUGE-2 recall: regression (MSE, the paper's DUC training) or classification "
                "(binary cross-entropy with the recall as a soft target). Default: --objective (the recipe's: "
                "regression in the shipped ones), else the pre-trained model's objective."})
    switch_objective: bool = field(default=True, metadata={
        "help": "Fine-tune a head pre-trained for the other objective for this run's objective (its linear layer is "
                "kept, the loss and the sigmoid change), as the paper fine-tunes on DUC with regression after "
                "classification pre-training too. false: refuse such a run instead."})
    subnetwork_fraction: float | None = field(default=None, metadata={
        "help": "Trainable share of every encoder matrix for one_step (0 = full fine-tuning); a saved mask keeps "
                "its own. Default: 0.1 (the paper's) from a pre-trained Q-BERT folder, 0 (full fine-tuning) from a "
                "plain encoder (the rows without data augmentation)."})
    subnetwork_method: str | None = field(default=None, metadata={
        "help": "one_step (the paper's: the top --subnetwork_fraction of each encoder matrix of the pre-trained "
                "model) or iterative (the mask iterative pre-training saved in the pre-trained folder, fine-tuned as "
                "it is; an error when there is none). Default: the saved mask when the folder has one, else "
                "one_step."})
    subnetwork_include_vectors: bool = field(default=False, metadata={
        "help": "one_step: also mask the encoder's biases and LayerNorm vectors; by default only its matrices are "
                "masked (the paper's choice) and the vectors stay fully trainable, like embeddings and head."})
    folds: int | None = field(default=None, metadata={
        "help": "k-fold over the clusters of the given years instead of a held-out year: the clusters (sorted by "
                "year and topic) are dealt round-robin into --folds folds; --fold i is tested, the others train. "
                "Works with a single DUC year."})
    fold: int | None = field(default=None, metadata={"help": "The fold tested with --folds (0 … folds-1)."})
    target_scaling: str = field(default="cluster_max", metadata={
        "help": "How each sentence's ROUGE-2 recall becomes its training target: cluster_max (divided by the "
                "largest recall in its cluster, so the best sentence of every cluster is 1), per_word (recall per "
                "word of the sentence, then divided by the cluster's largest: the value of a sentence for the "
                "250-word budget, free of the length bias of recall) or none (the raw recall, the paper's: values "
                "mostly below 0.05, which leaves MSE almost no gradient)."})
    ranking_loss_weight: float = field(default=0.0, metadata={
        "help": "Add this times a listwise ranking loss (ListNet top-one cross-entropy over the sentences of each "
                "window, against their targets normalised to sum to 1) to the objective's loss. 0: the paper's loss "
                "alone."})
    head_learning_rate: float | None = field(default=None, metadata={
        "help": "Learning rate of the pooling and scoring head (the encoder keeps --learning_rate). Default: "
                "--learning_rate x 30 for a new head (from a plain encoder), --learning_rate for a pre-trained one."})
    max_train_documents: int | None = field(default=None, metadata={
        "help": "Train on at most this many documents of each training cluster (chosen at random with --seed): a "
                "reduced setting for CPU runs. Default: all (the paper's)."})
    baselines: list[str] = field(default_factory=lambda: ["lead", "query-sim", "oracle"], metadata={
        "help": "Baselines scored on the test year next to the model (lead, query-sim, oracle; 'none' for none): "
                "under their own greedy rule and, when --selection is another rule, under it too, each a row of its "
                "own ('QUERY-SIM (ILP)'); ORACLE has no rule."})
    save_sparse_delta: bool = field(default=False, metadata={
        "help": "Also write sparse_delta.safetensors: the changed entries over the pre-trained model."})
    eval_window_batch_size: int = field(default=16, metadata={"help": "Windows per forward pass at test time."})
    qfs_dir: str | None = field(default=None, metadata={
        "help": "A folder written by `wikiref qfs convert` (QMSum, SQuALITY, Debatepedia) instead of --duc_dirs: "
                "train on its --qfs_train_split, test on its --qfs_test_split, scored as the benchmark's papers score "
                "it (wikiref qfs evaluate), the summaries within the benchmark's word budget."})
    qfs_train_split: str = field(default="train", metadata={"help": "With --qfs_dir: the split trained on."})
    qfs_test_split: str = field(default="validation", metadata={"help": "With --qfs_dir: the split tested on."})
    qfs_labels: str = field(default="oracle", metadata={
        "help": "With --qfs_dir, each training sentence's target: oracle (its ROUGE-2 recall against the references, "
                "scaled by --target_scaling, as on DUC) or spans (QMSum: 1 inside the annotators' answer spans, 0 "
                "elsewhere; the general queries, which have no spans, are not trained on)."})
    preprocessing_num_workers: int | None = field(default=None, metadata={
        "help": "Processes that pack the training rows into windows (datasets.map's num_proc): a QMSum training split "
                "is 1,257 queries over meetings of ~800 sentences. Default: this process alone."})
    query_format: str = field(default="levels", metadata={
        "help": "How a DUC topic is given to the model, in training and test: levels (the title, then each sentence "
                "of the narrative as a level of its own, as `wikiref duc convert` writes it), joined (the title and "
                "the narrative as one level), narrative (the narrative alone, one level) or title (the title alone)."})
    extra_train_dirs: list[str] = field(default_factory=list, metadata={
        "help": "Folders written by `wikiref qfs convert` (QMSum, SQuALITY, ...) whose train split (DIR:SPLIT for "
                "another split, e.g. qfs/debatepedia:validation) is added to the training queries (DUC's clusters, "
                "or --qfs_dir's train split), labelled as DUC's are (each sentence's ROUGE-2 recall, "
                "--target_scaling): more training data from other query-focused benchmarks. The test stays the "
                "run's."})
    selection: str = field(default="duc", metadata={
        "help": "The rule that turns the test sentences' scores into each summary, saved as the model's "
                "cluster_selection (the pipeline's rule for several documents): duc (the paper's: by score, skipping "
                "a sentence with more than half its bigrams in the summary), mmr (maximal marginal relevance) or ilp "
                "(the bigram concepts of the 300 best-scored sentences, weighted by their scores, covered under the "
                "word budget by integer linear programming; Gillick and Favre, 2009). `wikiref rescore` compares "
                "them on saved scores."})
    frozen_prefix_layers: int = field(default=0, metadata={
        "help": "Freeze the embeddings and the first K encoder layers and read their output from a cache on disk "
                "instead of computing it (modeling_qbert.prefix_cache): each query and sentence is encoded once per "
                "encoder and K, and every fold, seed and lever that keeps the prefix reuses it; only the layers above "
                "K, the pooling and the head train, and the test scores read the cache too. Needs the sentence "
                "attention scope (--attention_scope sentence). K equal to the encoder's layers trains the head alone. "
                "0 (default): every weight trains, no cache."})
    prefix_cache_dir: str | None = field(default=None, metadata={
        "help": "Where --frozen_prefix_layers keeps the states. Default: $WIKIREF_PREFIX_CACHE, else "
                "~/.cache/wikiref_dataset/prefix_states."})
    validation_clusters: int = field(default=0, metadata={
        "help": "Hold out this many training clusters (drawn with --seed) as a validation share: after every epoch the "
                "model summarizes them with the run's --selection rule, and the epoch with the best ROUGE-2 recall "
                "there is the model kept, tested and saved (the training length chosen without the test clusters). 0: "
                "train on every training cluster and keep the last epoch (the paper's)."})

    def __post_init__(self) -> None:
        """Refuse, in one line, values no run can use, before anything is loaded.

        Raises:
            ScriptError: naming the option and what it accepts.
        """
        from wikiref_dataset.baselines import BASELINE_NAMES

        unknown = [name for name in self.baseline_names if name not in BASELINE_NAMES]
        if unknown:
            raise ScriptError(f"unknown baseline(s) {unknown}: choose from {sorted(BASELINE_NAMES)} or 'none'")
        check_target_scaling(self.target_scaling)
        check_lever_arguments(self)
        if self.preprocessing_num_workers is not None and self.preprocessing_num_workers < 1:
            raise ScriptError(f"--preprocessing_num_workers must be at least 1, got {self.preprocessing_num_workers}")
        if not self.ranking_loss_weight >= 0:
            raise ScriptError(f"--ranking_loss_weight must be at least 0, got {self.ranking_loss_weight}")
        if self.subnetwork_fraction is not None and not 0.0 <= self.subnetwork_fraction <= 1.0:
            raise ScriptError(f"--subnetwork_fraction must lie in [0, 1], got {self.subnetwork_fraction}")
        check_subnetwork_method(self.subnetwork_method)
        check_max_train_documents(self.max_train_documents)
        if self.frozen_prefix_layers < 0:
            raise ScriptError(f"--frozen_prefix_layers must be 0 or more, got {self.frozen_prefix_layers}")
        check_validation_clusters(self.validation_clusters)
        if self.qfs_dir:
            check_benchmark_arguments(self)
        else:
            check_fold_arguments(self)

    @property
    def baseline_names(self) -> list[str]:
        """The baselines to score (``--baselines``, without repeats; none for ``none``)."""
        from wikiref_dataset.baselines import baseline_key

        return [] if self.baselines in (["none"], []) else list(dict.fromkeys(map(baseline_key, self.baselines)))


def check_fold_arguments(duc_args: DucArguments) -> None:
    """Refuse, in one line, held-out clusters asked for in two ways, or a fold that does not exist."""
    if duc_args.folds is None:
        if duc_args.fold is not None:
            raise ScriptError("--fold needs --folds")
        return
    if duc_args.test_year is not None:
        raise ScriptError("--folds tests on held-out clusters of every given year; --test_year holds out a year: "
                          "give one of them")
    check_folds(duc_args.folds, duc_args.fold)


def check_folds(folds: int, fold: int | None) -> None:
    """Refuse, in one line, fewer than two folds (:func:`check_fold_count`) or a fold ``fold`` that is not one of
    ``0 … folds-1`` (``None``: none given)."""
    check_fold_count(folds)
    if fold is None or not 0 <= fold < folds:
        raise ScriptError(f"--fold must be one of 0 … {folds - 1} with --folds {folds}, got {fold}")


def check_fold_count(folds: int) -> None:
    """Refuse, in one line, cluster folds (``--folds``) fewer than two: a single fold would leave nothing to train on."""
    if folds < 2:
        raise ScriptError(f"--folds must be at least 2, got {folds}")


def check_benchmark_arguments(duc_args: DucArguments) -> None:
    """Refuse, in one line, DUC options given with ``--qfs_dir``, an unknown label kind, the same split for training
    and test, and a validation share (chosen with DUC's metric)."""
    given = [name for name in ("duc_dirs", "test_year", "folds", "fold") if getattr(duc_args, name)]
    if given:
        raise ScriptError(f"--qfs_dir trains and tests on a converted benchmark; {', '.join('--' + g for g in given)} "
                          "belong to DUC runs: give one or the other")
    check_qfs_labels(duc_args.qfs_labels)
    if duc_args.qfs_train_split == duc_args.qfs_test_split:
        raise ScriptError(f"--qfs_train_split and --qfs_test_split are both {duc_args.qfs_test_split!r}: a model is "
                          "not tested on what it was trained on")
    if duc_args.validation_clusters:
        raise ScriptError("--validation_clusters chooses the epoch with DUC's metric; with --qfs_dir train a fixed "
                          "number of epochs (or use --qfs_test_split on a split of your own)")


# ---- data -------------------------------------------------------------------------------------------------------


TARGET_SCALINGS = {
    "none": "as it is (the paper's)",
    "cluster_max": "divided by the largest recall in its cluster",
    "per_word": "divided by the sentence's length in words, then by the largest such value in its cluster",
}
"""How ``--target_scaling`` turns ROUGE-2 recall into training targets (the model card states the one that ran)."""


def check_target_scaling(scaling: str) -> None:
    """Refuse a ``--target_scaling`` not in :data:`TARGET_SCALINGS`, in one line."""
    if scaling not in TARGET_SCALINGS:
        raise ScriptError(f"--target_scaling must be one of {', '.join(TARGET_SCALINGS)}, got {scaling!r}")


def label_clusters(rows: Sequence[Mapping[str, Any]], label_field: str,
                   scaling: str = "none") -> list[dict[str, Any]]:
    """Copies of DUC rows whose documents carry ``label_field``: each sentence's ROUGE-2 recall against the cluster's
    references (stemmed ROUGE-1.5.5 tokens, hits clipped per reference and summed over references, as ``-f A``),
    scaled as ``scaling`` says (:data:`TARGET_SCALINGS`).

    Why ``cluster_max``: raw recall is tiny (on DUC 2006 the mean is 0.005, the largest 0.064 and a quarter of the
    sentences score 0), so a mean squared error on it is about 1e-5 whatever the model does and the gradients vanish;
    the DUC rule only ranks sentences within a cluster, so dividing by the cluster's best sentence keeps the order
    that matters and puts every cluster's targets on [0, 1].

    Rows without references cannot be labelled and are left out with a warning."""
    from wikiref_dataset.oracle import ExtractiveOracle, OracleConfig

    check_target_scaling(scaling)
    oracle = ExtractiveOracle(OracleConfig(n=2, objective="recall", max_sentences=None))
    labelled = []
    for row in rows:
        if not row["references"]:
            logger.warning("DUC topic %s has no reference summary: not used for training", row["topic_id"])
            continue
        scores = [oracle.sentence_scores(oracle.prepare(list(document["sentences"]), list(row["references"])),
                                         objective="recall") for document in row["documents"]]
        if scaling == "per_word":  # what a sentence adds per word of the 250-word budget the DUC rule fills
            scores = [[value / max(1, len(sentence.split())) for value, sentence in zip(values, document["sentences"])]
                      for values, document in zip(scores, row["documents"])]
        if scaling in ("cluster_max", "per_word"):
            top = max((value for values in scores for value in values), default=0.0)
            scores = [[value / top if top > 0 else 0.0 for value in values] for values in scores]
        documents = [{**document, label_field: values} for document, values in zip(row["documents"], scores)]
        labelled.append({**row, "documents": documents})
    return labelled


QUERY_FORMATS = ("levels", "joined", "narrative", "title")
"""How ``--query_format`` gives a DUC topic (the row's ``query``: the title, then the narrative's sentences)."""


def check_lever_arguments(duc_args: DucArguments) -> None:
    """Refuse, in one line, a ``--selection`` or ``--query_format`` no run knows, and DUC-only options with
    ``--qfs_dir``."""
    from wikiref_dataset.selection import CLUSTER_RULES

    if duc_args.selection not in CLUSTER_RULES:
        raise ScriptError(f"--selection must be one of {', '.join(CLUSTER_RULES)}, got {duc_args.selection!r}")
    check_query_format(duc_args.query_format)
    if duc_args.qfs_dir and duc_args.query_format != "levels":
        raise ScriptError("--query_format changes how a DUC topic is given; with --qfs_dir leave it out")
    if duc_args.qfs_dir and duc_args.extra_train_dirs:
        check_extra_beside_benchmark(duc_args)


def check_extra_beside_benchmark(duc_args: DucArguments) -> None:
    """With ``--qfs_dir``, extra training data is labelled as the benchmark's own (``--qfs_labels oracle``) and never
    the split the run tests on."""
    if duc_args.qfs_labels != "oracle":
        raise ScriptError(f"--extra_train_dirs are labelled with ROUGE-2 recall (oracle); --qfs_labels "
                          f"{duc_args.qfs_labels} would train two kinds of target at once")
    tested = Path(duc_args.qfs_dir).resolve()
    for value in duc_args.extra_train_dirs:
        folder, split = extra_split(value)
        if Path(folder).resolve() == tested and split == duc_args.qfs_test_split:
            raise ScriptError(f"--extra_train_dirs {value} is the split this run tests on (--qfs_test_split {split})")


def check_query_format(how: str) -> None:
    """Refuse a ``--query_format`` not in :data:`QUERY_FORMATS`, in one line."""
    if how not in QUERY_FORMATS:
        raise ScriptError(f"--query_format must be one of {', '.join(QUERY_FORMATS)}, got {how!r}")


def format_queries(rows: Sequence[Mapping[str, Any]], how: str) -> list[dict[str, Any]]:
    """Copies of the rows whose ``query`` is given as ``how`` says (:data:`QUERY_FORMATS`); ``levels`` keeps it.

    Raises:
        ScriptError: an unknown format.
    """
    check_query_format(how)
    if how == "levels":
        return [dict(row) for row in rows]
    formatted = []
    for row in rows:
        levels = list(row["query"])
        title, narrative = levels[:1], levels[1:]
        query = {"joined": [" ".join(levels)], "narrative": [" ".join(narrative or title)], "title": title}[how]
        formatted.append({**row, "query": query})
    return formatted


def extra_split(value: str) -> tuple[str, str]:
    """``DIR`` or ``DIR:SPLIT`` of ``--extra_train_dirs``: the folder and the split added (``train`` by default). A
    folder whose own name holds a colon is read whole when it exists."""
    folder, colon, split = value.rpartition(":")
    if not colon or not folder or not split or "/" in split or "\\" in split or Path(value).exists():
        return value, "train"
    return folder, split


def extra_training_rows(folders: Sequence[str]) -> list[dict[str, Any]]:
    """The rows of each converted benchmark of ``--extra_train_dirs`` (``DIR`` for its train split, ``DIR:SPLIT`` for
    another: Debatepedia's released train split has no documents, its validation rows have), as DUC rows are
    (``query``, ``documents`` with ``sentences``, ``references``).

    Raises:
        ScriptError: a folder that is not a converted benchmark with that split.
    """
    from wikiref_dataset.qfs import QfsError, load_split

    rows: list[dict[str, Any]] = []
    for value in folders:
        folder, split_name = extra_split(value)
        try:
            split = load_split(folder, split_name)
        except QfsError as error:
            raise ScriptError(f"--extra_train_dirs: {error}") from None
        rows.extend(dict(row) for row in split.rows)
        logger.info("extra training data: %d queries of %s %s (%s)", len(split.rows), split.benchmark, split_name,
                    folder)
    return rows


QFS_LABELS = {
    "oracle": "each sentence's ROUGE-2 recall against the references",
    "spans": "1 for a sentence inside the annotators' answer spans, 0 elsewhere",
}
"""What ``--qfs_labels`` trains against on a converted benchmark."""


def check_qfs_labels(labels: str) -> None:
    """Refuse a ``--qfs_labels`` not in :data:`QFS_LABELS`, in one line."""
    if labels not in QFS_LABELS:
        raise ScriptError(f"--qfs_labels must be one of {', '.join(QFS_LABELS)}, got {labels!r}")


def span_labels(rows: Sequence[Mapping[str, Any]], label_field: str) -> list[dict[str, Any]]:
    """Copies of converted QMSum rows whose meeting carries ``label_field``: 1.0 for the sentences inside the query's
    answer spans (``answer_sentences``), 0.0 for the others. Rows without spans (the general queries) are left out.

    Raises:
        ScriptError: the rows have no answer spans (a benchmark other than QMSum), or none has a span.
    """
    labelled = []
    for row in rows:
        if "answer_sentences" not in row:
            raise ScriptError(f"--qfs_labels spans: {row.get('benchmark', 'this benchmark')} has no answer spans "
                              "(QMSum's specific queries have them); use --qfs_labels oracle")
        if not row["answer_spans"]:
            continue
        inside = set(row["answer_sentences"])
        documents = [{**document, label_field: [1.0 if index in inside else 0.0
                                                for index in range(len(document["sentences"]))]}
                     for document in row["documents"]]
        labelled.append({**row, "documents": documents})
    if not labelled:
        raise ScriptError("--qfs_labels spans: no training row has an answer span")
    return labelled


def check_max_train_documents(limit: int | None) -> None:
    """Refuse a ``--max_train_documents`` below 1 (``None``: every document), in one line."""
    if limit is not None and limit < 1:
        raise ScriptError(f"--max_train_documents must be at least 1, got {limit}")


def sample_documents(rows: Sequence[Mapping[str, Any]], limit: int | None, seed: int) -> list[Mapping[str, Any]]:
    """The rows with at most ``limit`` documents each, drawn at random (reproducibly from ``seed`` and the topic) and
    kept in their order; ``None`` keeps every document.

    Raises:
        ScriptError: ``limit`` is below 1.
    """
    import random

    check_max_train_documents(limit)
    if limit is None:
        return list(rows)
    sampled = []
    for row in rows:
        documents = list(row["documents"])
        if len(documents) > limit:
            keep = sorted(random.Random(f"{seed}:{row['topic_id']}").sample(range(len(documents)), limit))
            documents = [documents[index] for index in keep]
        sampled.append({**row, "documents": documents})
    return sampled



def check_validation_clusters(count: int) -> None:
    """Refuse a negative ``--validation_clusters``, in one line."""
    if count < 0:
        raise ScriptError(f"--validation_clusters must be 0 or more, got {count}")


def split_validation(rows: Sequence[Mapping[str, Any]], count: int, seed: int
                     ) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:
    """``(training rows, validation rows)``: ``count`` of the training clusters drawn at random (reproducibly from
    ``seed``), kept in their order.

    Raises:
        ScriptError: ``count`` is negative or leaves no cluster to train on.
    """
    import random

    check_validation_clusters(count)
    if count == 0:
        return list(rows), []
    if count >= len(rows):
        raise ScriptError(f"--validation_clusters {count}: only {len(rows)} training clusters, none would be left to "
                          "train on")
    chosen = set(random.Random(f"validation:{seed}").sample(range(len(rows)), count))
    return ([row for index, row in enumerate(rows) if index not in chosen],
            [row for index, row in enumerate(rows) if index in chosen])



class EpochSelection:
    """The validation share's judge (``--validation_clusters``): after every epoch, the model summarizes the
    validation clusters with the run's selection rule (``--selection``; scores as the pipeline gives them: `modeling_qbert.inference.score_rows`)
    and ROUGE-2 recall is measured with the official settings; the weights of the best epoch so far are kept in memory
    (:meth:`restore` puts them back after training). Only the main process judges (it alone tests and saves)."""

    def __init__(self, model: Any, processor: Any, rows: Sequence[Mapping[str, Any]], batch_size: int,
                 rule: str = "duc") -> None:
        from trainer_scripts.duc_evaluation import load_metric
        from wikiref_dataset.duc.years import DucYear

        self.model, self.processor, self.batch_size, self.rule = model, processor, batch_size, rule
        self.year = DucYear(path=Path("validation"), year=0, rows=[dict(row) for row in rows])
        self.metric = load_metric()
        self.by_epoch: list[float] = []
        self.best_epoch: int | None = None
        self._best_state: dict[str, Any] | None = None

    def rouge_2(self) -> float:
        """ROUGE-2 recall of the model's summaries of the validation clusters."""
        from modeling_qbert.inference import score_rows
        from trainer_scripts.duc_evaluation import score_year
        from wikiref_dataset.selection import ClusterSentences

        rows = self.year.scorable
        summaries = {}
        for row, documents in zip(rows, score_rows(self.model, self.processor, rows, batch_size=self.batch_size)):
            cluster = ClusterSentences.from_row(row)
            summaries[row["topic_id"]] = cluster.summary(cluster.select(cluster.flatten_scores(documents),
                                                                        rule=self.rule))
        return float(score_year(self.metric, self.year, summaries, "validation")["rouge_2_recall"])

    def callback(self) -> Any:
        from transformers import TrainerCallback

        judge = self

        class EpochSelectionCallback(TrainerCallback):
            def on_epoch_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
                if state.is_world_process_zero:
                    judge.judge()

        return EpochSelectionCallback()

    def judge(self) -> None:
        value = self.rouge_2()
        self.by_epoch.append(value)
        epoch = len(self.by_epoch)
        logger.info("epoch %d: validation ROUGE-2 recall %.2f (%d clusters)", epoch, 100 * value,
                    len(self.year.scorable))
        if self.best_epoch is None or value > self.by_epoch[self.best_epoch - 1]:
            self.best_epoch = epoch
            self._best_state = {name: tensor.detach().clone() for name, tensor in self.model.state_dict().items()}

    def restore(self) -> None:
        """Put the best epoch's weights back into the model (nothing to do when the last epoch was the best)."""
        if self._best_state is not None and self.best_epoch != len(self.by_epoch):
            self.model.load_state_dict(self._best_state)
            logger.info("kept epoch %d of %d (validation ROUGE-2 recall %.2f)", self.best_epoch, len(self.by_epoch),
                        100 * self.by_epoch[self.best_epoch - 1])
        self._best_state = None

    def record(self) -> EpochSelectionRecord:
        """``results["finetuning"]["epoch_selection"]``: the clusters, ROUGE-2 recall by epoch, the epoch kept."""
        return EpochSelectionRecord(clusters=[row["topic_id"] for row in self.year.scorable],
                                    rouge_2_recall_by_epoch=list(self.by_epoch), chosen_epoch=self.best_epoch)


# ---- the frozen prefix ------------------------------------------------------------------------------------------


def attach_frozen_prefix(model: Any, processor: Any, duc_args: DucArguments, windows: Any,
                         rows: Sequence[Mapping[str, Any]]) -> Any:
    """With ``--frozen_prefix_layers K``: a `modeling_qbert.prefix_cache.PrefixCache` of the model's first K layers,
    warmed with every part of the training ``windows`` and of the windows of ``rows`` (validation and test clusters,
    scored later), and attached to the model (which freezes that prefix); ``None`` without.

    Raises:
        ScriptError: K larger than the encoder, or a model that attends across its windows (the cache would not be
            exact).
    """
    layers = duc_args.frozen_prefix_layers
    if not layers:
        return None
    from modeling_qbert.prefix_cache import PrefixCache

    if model.config.attention_scope != "sentence":
        raise ScriptError(f"--frozen_prefix_layers {layers} needs each sentence encoded alone (--attention_scope "
                          f"sentence); this run's model attends across its windows ({model.config.attention_scope})")
    if duc_args.subnetwork_fraction:
        raise ScriptError(f"--frozen_prefix_layers {layers} fine-tunes every weight above the frozen prefix; it is not "
                          f"combined with a subnetwork (--subnetwork_fraction {duc_args.subnetwork_fraction:g}): give "
                          "--subnetwork_fraction 0")
    if layers > model.config.num_hidden_layers:
        raise ScriptError(f"--frozen_prefix_layers {layers}: the encoder has {model.config.num_hidden_layers} layers")
    cache = PrefixCache(model, layers, cache_dir=duc_args.prefix_cache_dir)
    columns = ["input_ids", "token_type_ids", "sentence_ids"]
    scored = []
    for row in rows:
        for example in processor.examples_from_row(row, with_labels=False):
            scored.extend(window.to_features() for window in processor.encode_example(example))
    computed = cache.warm(model, [*windows.select_columns(columns), *scored])
    logger.info("frozen prefix: the embeddings and %d of %d encoder layers read from %s (%d parts, %d computed now)",
                layers, model.config.num_hidden_layers, cache.folder, len(cache), computed)
    model.set_frozen_prefix(cache)
    return cache


# ---- the run ----------------------------------------------------------------------------------------------------

OBJECTIVE_TARGETS = {
    "regression": "mean squared error against each sentence's ROUGE-2 recall",
    "classification": "binary cross-entropy with each sentence's ROUGE-2 recall (in [0, 1]) as a soft target",
}
"""What each objective trains against on DUC (the model card states the one that ran)."""


def choose_objective(duc_args: DucArguments, pretrained_objective: str, base: str, asked: str | None = None,
                     asked_by: str = "--objective") -> str:
    """The objective fine-tuning trains: ``--finetuning_objective``, else ``asked`` (``--objective``, from the
    command line or the recipe, named by ``asked_by``), else the pre-trained model's.

    Why the two-stage path (pre-training on WikiRef, then DUC) fine-tunes with the recipe's regression whatever the
    pre-training was: in Zhu et al. (2022), "Transforming Wikipedia into Augmented Data for Query-Focused
    Summarization", DUC training regresses each sentence's oracle score, its ROUGE-2 recall (§V-B, the loss of
    §III-E), after either pre-training: Table VI fine-tunes the classification pre-trained model on DUC too, and §V-D
    reads regression pre-training's small lead as "the training objectives of pre-training and fine-tuning are the
    same"; its best rows (Q-BERT + DA, + ST) pre-train with regression as well. Measured here (benchmarks/README.md:
    the shipped MiniLM fine-tuned on DUC 2006 fold 0 without pre-training), classification fine-tuning scored 6.62
    ROUGE-2 against regression's 7.16 in the same setting. A head pre-trained for the other objective is a linear
    layer either way, so it is fine-tuned for this one (only the sigmoid and the loss change), which
    ``--switch_objective false`` refuses instead.

    Raises:
        ScriptError: an unknown objective, or a switch ``--switch_objective false`` refuses (in one line).
    """
    objective = duc_args.finetuning_objective or asked or pretrained_objective
    source = "--finetuning_objective" if duc_args.finetuning_objective else asked_by if asked else None
    if objective not in OBJECTIVE_TARGETS:
        raise ScriptError(f"{source or '--finetuning_objective'} must be one of {sorted(OBJECTIVE_TARGETS)}, got "
                          f"{objective!r}")
    if objective != pretrained_objective:
        if not duc_args.switch_objective:
            raise ScriptError(f"{source} asks for {objective}, but {base} was pre-trained with "
                              f"{pretrained_objective} and --switch_objective false keeps it: fine-tune with "
                              f"--finetuning_objective {pretrained_objective}, or leave --switch_objective out")
        logger.info("fine-tuning %s, pre-trained with %s, for %s (%s), as the paper fine-tunes on DUC with "
                    "regression after either pre-training", base, pretrained_objective, objective, source)
    return objective


@dataclass
class SubnetworkChoice:
    """The subnetwork fine-tuning trains: ``config`` ``None`` for full fine-tuning; ``masks`` when a saved mask is
    used as it is; ``source`` says where it comes from; ``schedule`` the pre-training run's record of the iterative
    schedule that found it."""

    config: Any
    masks: dict[str, Any] | None
    source: str
    schedule: Mapping[str, Any] | None = None


def check_subnetwork_method(method: str | None) -> None:
    """Refuse a ``--subnetwork_method`` that is not one of `modeling_qbert.sparse.METHODS`, in one line (``None``:
    none given, chosen from the pre-trained folder)."""
    if method is None:
        return
    from modeling_qbert.sparse import METHODS

    if method not in METHODS:
        raise ScriptError(f"--subnetwork_method must be one of {', '.join(METHODS)}, got {method!r}")


def choose_subnetwork(duc_args: DucArguments, base: str) -> SubnetworkChoice:
    """Full fine-tuning (``--subnetwork_fraction 0``); the mask saved in the pre-trained folder
    (``--subnetwork_method iterative``, or no method given and a saved mask present), loaded with
    ``fixed_mask=True`` so the trainer never prunes it; else one-step identification at ``--subnetwork_fraction``.

    Raises:
        ScriptError: an unknown method, ``iterative`` without a saved mask (or with ``--subnetwork_fraction 0``),
            or a mask file that cannot be read.
    """
    from modeling_qbert.sparse import SUBNETWORK_MASK_NAME, SubnetworkConfig, load_subnetwork_mask, mask_density

    method = duc_args.subnetwork_method
    check_subnetwork_method(method)
    if duc_args.subnetwork_fraction == 0:
        if method == "iterative":
            raise ScriptError("--subnetwork_method iterative fine-tunes the saved iterative subnetwork; "
                              "--subnetwork_fraction 0 asks for full fine-tuning instead")
        return SubnetworkChoice(config=None, masks=None, source="full fine-tuning: every weight trainable")
    saved = Path(base) / SUBNETWORK_MASK_NAME
    if method == "iterative" or (method is None and saved.is_file()):
        if not saved.is_file():
            raise ScriptError(f"--subnetwork_method iterative fine-tunes the mask that iterative pre-training saved, "
                              f"but {base} has no {SUBNETWORK_MASK_NAME}: pre-train it with pretrain_wikiref.py "
                              "--subnetwork_method iterative, or use --subnetwork_method one_step")
        try:
            masks, config = load_subnetwork_mask(saved)
        except (OSError, ValueError) as error:
            raise ScriptError(f"{saved}: cannot read the subnetwork mask ({error})") from None
        if config is None:  # a mask file without its config: all that is known is its density
            config = SubnetworkConfig(fraction=max(mask_density(masks), 1e-12), method="iterative")
        if method == "iterative" and config.method != "iterative":
            raise ScriptError(f"{saved} was identified by {config.method}, not by iterative pruning; leave "
                              "--subnetwork_method out to fine-tune it anyway")
        pretrained = read_training_results(base).subnetwork
        return SubnetworkChoice(config=replace(config, fixed_mask=True), masks=masks,
                                source=f"{SUBNETWORK_MASK_NAME} of the pre-trained model ({config.method}), as it is",
                                schedule=pretrained.schedule if pretrained is not None else None)
    if saved.is_file():
        logger.warning("%s has a saved subnetwork mask; --subnetwork_method one_step identifies a new one instead",
                       base)
    config = SubnetworkConfig(fraction=duc_args.subnetwork_fraction, method="one_step",
                              include_vectors=duc_args.subnetwork_include_vectors)
    return SubnetworkChoice(config=config, masks=None,
                            source="one-step identification on the pre-trained weights")



def pretraining_record(pretrained: PretrainingResults | None, pretrained_objective: str,
                       final_objective: str | None) -> PretrainingResults | None:
    """The starting folder's pre-training results, with the objective it ran (older results name it only at the top
    level, ``final_objective``)."""
    data = pretrained.to_dict() if pretrained is not None else {}
    if not data:
        return None
    objective = data.get("objective") or final_objective or pretrained_objective
    return PretrainingResults.from_dict({**data, "objective": objective}, "results.pretraining")


def finetuning_subnetwork(trainer: Any, chosen: SubnetworkChoice) -> tuple[FinetuningSubnetwork, Any]:
    """``(results["finetuning"]["subnetwork"], results["subnetwork"])`` of a trained model: the target fraction and
    method, with a subnetwork the share of masked entries that changed and were trainable, and the share of all
    parameters it left trainable (counted on the model and its mask)."""
    from modeling_qbert.sparse import SUBNETWORK_MASK_NAME, trainable_share
    from trainer_scripts.common import subnetwork_results

    masks = getattr(trainer, "subnetwork_mask", None) or {}
    record = subnetwork_results(chosen.config, masks, mask_file=SUBNETWORK_MASK_NAME if masks else None,
                                source=chosen.source, schedule=chosen.schedule)
    share = SubnetworkShare.from_dict(trainable_share(trainer.accelerator.unwrap_model(trainer.model), masks))
    if chosen.config is None:
        return FinetuningSubnetwork.full(share, fraction=record.fraction, method=record.method), record
    statistics = trainer.subnetwork_statistics()
    return FinetuningSubnetwork(
        fraction=record.fraction, method=record.method,
        changed_fraction=statistics.get("subnetwork/changed_fraction"),
        trainable_fraction=statistics.get("subnetwork/trainable_fraction"), final_density=record.final_density,
        source=chosen.source, share=share), record


def training_targets(objective: str, scaling: str, ranking_loss_weight: float) -> str:
    """What the model was trained against, in words (``results["finetuning"]["targets"]``, stated by the card)."""
    return f"{OBJECTIVE_TARGETS[objective]}, {TARGET_SCALINGS[scaling]}" + (
        f"; plus {ranking_loss_weight:g} x a listwise ranking loss within each window" if ranking_loss_weight else "")


@dataclass
class TrainingSetup:
    """What fine-tuning starts from and trains, decided once the model is loaded: whether its head is new, the
    objective before and after, the head's learning rate and the subnetwork; ``reasons``: ``{option: why}`` for a
    setting the run decided otherwise than ``--objective`` asked (``--finetuning_objective``)."""

    new_head: bool
    pretrained_objective: str
    objective: str
    head_learning_rate: float | None
    subnetwork: SubnetworkChoice
    reasons: dict[str, str] = field(default_factory=dict)

    def decided(self) -> dict[str, Any]:
        """``{option: value}`` of the options whose value this setup decided (for `common.run_settings`): the
        objective (``--objective`` and ``--finetuning_objective``), the head's learning rate, the subnetwork's
        fraction (a saved mask's own)."""
        return {"objective": self.objective, "finetuning_objective": self.objective,
                "head_learning_rate": self.head_learning_rate,
                "subnetwork_fraction": self.subnetwork.config.fraction if self.subnetwork.config is not None else 0.0}


def choose_training_setup(model: Any, processor: Any, base: str, duc_args: DucArguments, learning_rate: float,
                          objective: str | None = None, objective_by: str = "--objective") -> TrainingSetup:
    """The run's `TrainingSetup` for the loaded ``model``: a new head (from a plain encoder) gets full fine-tuning
    and a 30x head learning rate by default, a pre-trained one the paper's 10% subnetwork; the objective is
    :func:`choose_objective`'s for ``objective`` (``--objective``, from the command line or the recipe, named by
    ``objective_by``), set on the model and its processor.

    Raises:
        ScriptError: an objective or subnetwork :func:`choose_objective` / :func:`choose_subnetwork` refuse.
    """
    from trainer_scripts.common import is_qbert_folder

    new_head = not is_qbert_folder(base)
    if duc_args.subnetwork_fraction is None:
        duc_args.subnetwork_fraction = 0.0 if new_head else 0.1
    head_learning_rate = duc_args.head_learning_rate
    if head_learning_rate is None and new_head:
        head_learning_rate = learning_rate * NEW_HEAD_LR_FACTOR
    chosen = choose_subnetwork(duc_args, base)
    pretrained_objective = model.config.objective
    if new_head:  # nothing pre-trained to keep: the head is new, built for --objective
        pretrained_objective = duc_args.finetuning_objective or objective or pretrained_objective
    trained = choose_objective(duc_args, pretrained_objective, base, asked=objective, asked_by=objective_by)
    model.config.objective = processor.objective = trained
    reasons = {}
    if duc_args.finetuning_objective and objective and duc_args.finetuning_objective != objective:
        reasons["objective"] = f"--finetuning_objective {duc_args.finetuning_objective} names the objective too"
    return TrainingSetup(new_head=new_head, pretrained_objective=pretrained_objective, objective=trained,
                         head_learning_rate=head_learning_rate, subnetwork=chosen, reasons=reasons)


def finetuning_results(*, base: str, recipe: RecipeRecord | None, data: Any, setup: TrainingSetup,
                       duc_args: DucArguments, model_config: Any, processor: Any, train_rows: Sequence[Any],
                       test_rows: Sequence[Any], windows: int, selection: EpochSelection | None,
                       hyperparameters: dict[str, Any], subnetwork: FinetuningSubnetwork, output: Any,
                       seconds: float) -> FinetuningResults:
    """``results["finetuning"]``: what the run trained on (``data``, a `trainer_scripts.finetuning_data` set), the
    model's settings, the targets, the hyperparameters, the subnetwork and how long it trained."""
    return FinetuningResults(
        init_checkpoint=base, recipe=recipe, **data.record(test_rows),
        documents=sum(len(row["documents"]) for row in train_rows),
        max_train_documents=duc_args.max_train_documents, target_scaling=duc_args.target_scaling,
        packing=processor.packing, pooling=model_config.pooling, use_query=model_config.use_query,
        attention_scope=model_config.attention_scope, query_similarity=model_config.query_similarity,
        sentence_position_buckets=model_config.sentence_position_buckets, selection=duc_args.selection,
        query_format=duc_args.query_format, extra_train_dirs=list(duc_args.extra_train_dirs),
        extra_train_queries=data.extra_train_queries, head_learning_rate=setup.head_learning_rate,
        ranking_loss_weight=duc_args.ranking_loss_weight, frozen_prefix_layers=duc_args.frozen_prefix_layers,
        clusters=len(train_rows),
        epoch_selection=selection.record() if selection is not None else None, windows=windows,
        objective=setup.objective, pretraining_objective=None if setup.new_head else setup.pretrained_objective,
        targets=training_targets(setup.objective, duc_args.target_scaling, duc_args.ranking_loss_weight),
        hyperparameters=hyperparameters, subnetwork=subnetwork, steps=output.global_step,
        train_loss=output.training_loss, train_seconds=round(seconds, 2))
