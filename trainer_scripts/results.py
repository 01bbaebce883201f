"""What the scripts write into ``results.json``, as dataclasses: a training run (`TrainingResults`, written by
``pretrain_wikiref.py`` and ``finetune_duc.py``), an evaluation (`EvaluationResults`: ``evaluate_duc.py`` /
``evaluate_qfs.py``'s ``--out``, each system's `SystemScores` with their 95% intervals) and an experiments unit that
scored summaries (`EvaluationUnitResults`).

Why typed: the model card, ``push_to_hub.py`` and the experiments' report read these files written by every version
of the scripts; one definition of each record says which keys exist and what they mean, instead of ``.get`` chains in
every reader.

Every record round-trips exactly: ``Record.from_dict(data).to_dict() == data``, key order included, so that a file
written through these classes is byte-identical to the one the scripts wrote before them. A key an older version did
not write is remembered as *absent* (``Record.absent``: left out again by ``to_dict``, and ``Record.recorded`` says
so to a reader for whom "not recorded" differs from ``null``); a key this version does not know is kept in
``Record.extra`` and written back after the known ones.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, ClassVar, TypeVar

RESULTS_NAME = "results.json"
MODEL_SYSTEM = "Q-BERT"
"""The fine-tuned model's name among an evaluation's systems (``finetune_duc.py`` writes it, the model card finds it)."""

R = TypeVar("R", bound="Record")


class ResultsError(ValueError):
    """A results record of the wrong shape: the message names the record (``results.finetuning.subnetwork``) and what
    is wrong with it."""


# ---- how a field is read and written ---------------------------------------------------------------------------


def _record(cls: type[Record]) -> dict[str, Any]:
    """Field metadata: the value is a nested record of class ``cls`` (or null)."""
    return {"load": cls.from_dict, "dump": lambda value: value.to_dict()}


def _records_by_key(load: Callable[[Any, str], Any], dump: Callable[[Any], Any]) -> dict[str, Any]:
    """Field metadata: ``{key: record or null}``, each value read with ``load`` and written with ``dump``."""

    def load_all(data: Any, where: str) -> dict[str, Any]:
        _check_object(data, where)
        return {str(key): None if value is None else load(value, f"{where}.{key}") for key, value in data.items()}

    return {"load": load_all, "dump": lambda values: {key: None if value is None else dump(value)
                                                      for key, value in values.items()}}


def _check_object(data: Any, where: str) -> None:
    if not isinstance(data, Mapping):
        raise ResultsError(f"{where}: expected an object, got {type(data).__name__}")


@dataclass
class Record:
    """The base of every results record: reading from and writing to the JSON object the scripts write.

    A subclass's fields are the object's keys, in the order the scripts write them. Field metadata says how a value is
    read (``load``: a nested record), whether a ``null`` value is left out of the JSON (``omit_none``: a key the
    scripts write only when there is a value) and whether the key must be there (``required``)."""

    absent: frozenset[str] = field(default=frozenset(), repr=False, kw_only=True)
    """Keys the file did not have (written by an older version): ``to_dict`` leaves them out again."""
    extra: dict[str, Any] = field(default_factory=dict, repr=False, kw_only=True)
    """Keys this version does not know, kept as they were and written after the known ones."""
    key_order: tuple[str, ...] = field(default=(), repr=False, compare=False, kw_only=True)
    """The order of the keys in the file read (``to_dict`` keeps it; a record built in code writes its fields'
    order)."""

    _BOOKKEEPING: ClassVar[tuple[str, ...]] = ("absent", "extra", "key_order")

    @classmethod
    def _data_fields(cls) -> list[Any]:
        return [item for item in fields(cls) if item.name not in Record._BOOKKEEPING]

    @classmethod
    def from_dict(cls: type[R], data: Any, where: str | None = None) -> R:
        """The record of a JSON object as any version of the scripts wrote it.

        Raises:
            ResultsError: ``data`` (or a nested record) is not an object, or lacks a required key; named by its path
                (``where``, default the class name).
        """
        where = where or cls.__name__
        _check_object(data, where)
        values: dict[str, Any] = {}
        absent = set()
        for item in cls._data_fields():
            if item.name not in data:
                if item.metadata.get("required"):
                    raise ResultsError(f"{where}: no {item.name!r}")
                if not item.metadata.get("omit_none"):  # an omitted None is how such a key is written
                    absent.add(item.name)
                continue
            value = data[item.name]
            if value is None and item.metadata.get("required"):
                raise ResultsError(f"{where}: {item.name!r} is null")
            load = item.metadata.get("load")
            values[item.name] = load(value, f"{where}.{item.name}") if load and value is not None else value
        known = {item.name for item in cls._data_fields()}
        extra = {key: value for key, value in data.items() if key not in known}
        return cls(**values, absent=frozenset(absent), extra=extra, key_order=tuple(data))

    def to_dict(self) -> dict[str, Any]:
        """The JSON object, exactly as the scripts write it."""
        data: dict[str, Any] = {}
        for item in self._data_fields():
            value = getattr(self, item.name)
            if item.name in self.absent or (value is None and item.metadata.get("omit_none")):
                continue
            dump = item.metadata.get("dump")
            data[item.name] = dump(value) if dump and value is not None else value
        data.update(self.extra)
        if self.key_order:
            data = {**{key: data[key] for key in self.key_order if key in data}, **data}
        return data

    def __bool__(self) -> bool:
        """Whether anything is recorded: a record read from ``{}`` is false, as the empty object is to a reader."""
        return bool(self.to_dict())

    def recorded(self, name: str) -> bool:
        """Whether the file had the key ``name`` (``False``: written before this version recorded it)."""
        return name not in self.absent

    def recorded_or(self, name: str, default: Any) -> Any:
        """The field ``name`` as the file records it, ``default`` when the file has no such key (an older file)."""
        return getattr(self, name) if self.recorded(name) else default


# ---- scores ------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Interval:
    """A score (0-1) with its 95% bootstrap interval."""

    value: float
    low: float | None
    high: float | None


@dataclass
class SystemScores(Mapping[str, float]):
    """One system's scores on one DUC year or benchmark split, as the ROUGE engine gives them (0-1):
    ``{"rouge_2_recall", "rouge_2_recall_ci_low", "rouge_2_recall_ci_high", ...}``, after the number of clusters
    (DUC) or queries (the other benchmarks) they were averaged over. Reads like the mapping of those values."""

    values: dict[str, float]
    count: int | None = None
    count_name: str = "clusters"
    """``clusters`` (``evaluate_duc``) or ``queries`` (``evaluate_qfs``): the JSON key of ``count``."""

    COUNT_NAMES: ClassVar[tuple[str, ...]] = ("clusters", "queries")

    @classmethod
    def from_dict(cls, data: Any, where: str = "scores") -> SystemScores:
        _check_object(data, where)
        values = dict(data)
        name = next((key for key in values if key in cls.COUNT_NAMES), None)
        if name is not None and next(iter(values)) != name:
            raise ResultsError(f"{where}: {name!r} must come before the scores")
        count = values.pop(name) if name is not None else None
        return cls(values=values, count=count, count_name=name or "clusters")

    def to_dict(self) -> dict[str, Any]:
        return {**({self.count_name: self.count} if self.count is not None else {}), **self.values}

    def interval(self, measure: str, value: str = "recall") -> Interval | None:
        """``measure``'s ``value`` (``recall``, ``f``, ...) with its interval; ``None`` when not scored."""
        key = f"{measure}_{value}"
        if not isinstance(self.values.get(key), (int, float)):
            return None
        return Interval(self.values[key], self.values.get(key + "_ci_low"), self.values.get(key + "_ci_high"))

    def __getitem__(self, key: str) -> Any:
        if key == self.count_name and self.count is not None:
            return self.count
        return self.values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.to_dict())

    def __len__(self) -> int:
        return len(self.values) + (self.count is not None)


@dataclass
class EvaluatedDataset(Record):
    """What an evaluation scored: a DUC year (``clusters``, ``scored_clusters``) or a benchmark split (``queries``,
    ``budgets``: the word budget of each query kind)."""

    path: str | None = None
    clusters: int | None = field(default=None, metadata={"omit_none": True})
    scored_clusters: int | None = field(default=None, metadata={"omit_none": True})
    queries: int | None = field(default=None, metadata={"omit_none": True})
    budgets: dict[str, int] | None = field(default=None, metadata={"omit_none": True})


_SCORES_BY_KEY = _records_by_key(SystemScores.from_dict, SystemScores.to_dict)


def _load_rules(data: Any, where: str) -> dict[str, str]:
    """An evaluation's ``rules``: an object of rule names by system."""
    _check_object(data, where)
    for system, rule in data.items():
        if not isinstance(rule, str):
            raise ResultsError(f"{where}.{system}: expected a rule name, got {type(rule).__name__}")
    return dict(data)


@dataclass
class EvaluationResults(Record):
    """An evaluation (``evaluate_duc.py --out``, ``evaluate_qfs.py --out``; ``results["evaluation"]`` and
    ``results["benchmark_evaluation"]`` of a fine-tuning run): the ROUGE settings, the datasets (DUC years as
    ``"2006"``, benchmark splits as ``"qmsum/validation"``) and each system's scores per dataset (``None``: the
    system has no summary there)."""

    settings: str | None = None
    source: str | None = field(default=None, metadata={"omit_none": True})
    """Where a benchmark's scoring comes from (``evaluate_qfs`` only)."""
    scale: str = "0-1 (the printed table shows x100)"
    datasets: dict[str, EvaluatedDataset] = field(default_factory=dict, metadata=_records_by_key(
        EvaluatedDataset.from_dict, EvaluatedDataset.to_dict))
    systems: dict[str, dict[str, SystemScores | None]] = field(default_factory=dict, metadata={
        "required": True, **_records_by_key(_SCORES_BY_KEY["load"], _SCORES_BY_KEY["dump"])})
    rules: dict[str, str] | None = field(default=None, metadata={"omit_none": True, "load": _load_rules})
    """``{system: rule}``: the selection rule each system's summaries were chosen with (``duc``, the paper's greedy
    rule; ``mmr``; ``ilp``; ``oracle`` for ORACLE's own search), so that a reader can tell a baseline under the model's
    rule from one under its own (`wikiref_dataset.baselines.system_name` names the rows). Absent from files written
    before rules were recorded; summaries read from a file have no known rule and are left out."""

    def rule(self, system: str) -> str | None:
        """The rule ``system``'s summaries were chosen with; ``None`` when the evaluation does not record it."""
        return (self.rules or {}).get(system)

    def scores(self, system: str, dataset: str | int) -> SystemScores | None:
        """``system``'s scores on ``dataset`` (a year or a split key); ``None`` when it has none."""
        return (self.systems.get(system) or {}).get(str(dataset))

    def dataset_keys(self) -> list[str]:
        """Every dataset key the evaluation names (its datasets and its systems' keys), sorted."""
        keys = set(self.datasets)
        for by_dataset in self.systems.values():
            keys.update(by_dataset or {})
        return sorted(keys)

    def ordered_systems(self) -> list[str]:
        """The systems in the order they were scored, with this model (:data:`MODEL_SYSTEM`) last, after its rows
        under other rules (``Q-BERT (greedy)``, an ablation)."""
        ablations = [name for name in self.systems if name.startswith(MODEL_SYSTEM + " (")]
        return [name for name in self.systems if name != MODEL_SYSTEM and name not in ablations] + ablations + (
            [MODEL_SYSTEM] if MODEL_SYSTEM in self.systems else [])


# ---- a training run ----------------------------------------------------------------------------------------------


@dataclass
class RunInfo(Record):
    """``results["run"]``: whether a demo or a full run, when, and the command line."""

    kind: str | None = None
    date: str | None = None
    command: str | None = None


@dataclass
class RecipeRecord(Record):
    """A stage's training recipe (``trainer_scripts.recipes.RecipeChoice.to_dict``): its name, why it was chosen, its
    description, this stage's settings with the value each had in the run, the settings the command line overrode,
    the departures (``{option: {"asked": value, "why": reason}}``: a setting the run used another value for than the
    recipe's or the command line's) and the machine's notes.

    Results written before ``departures`` was recorded (``recorded("departures")`` false) hold the recipe's own values
    in ``settings``, which the run may not have used."""

    name: str | None = None
    chosen: str | None = None
    description: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    overrides: dict[str, Any] = field(default_factory=dict)
    departures: dict[str, dict[str, Any]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def settings_used(self) -> bool:
        """Whether ``settings`` are the values the run used (``False``: an older record, the recipe's values)."""
        return self.recorded("departures")


@dataclass
class WikiRefScores(Record):
    """WikiRef ROUGE F1 (0-1) of the selected sentences against the statement, and the selection threshold."""

    examples: int | None = None
    threshold: float | None = None
    rouge_1_f: float | None = None
    rouge_2_f: float | None = None
    rouge_l_f: float | None = None


@dataclass
class Architecture(Record):
    """How a new Q-BERT was built for pre-training: its pooling, whether it reads the query, the encoder's start."""

    pooling: str | None = None
    use_query: bool | None = None
    encoder_init: str | None = None


@dataclass
class PretrainingResults(Record):
    """``results["pretraining"]``: WikiRef pre-training (``pretrain_wikiref.py``), or the one the starting model had."""

    dataset: str | None = None
    dataset_source: str | None = field(default=None, metadata={"omit_none": True})
    """Where ``dataset`` was loaded from: ``"folder"`` (a local folder) or ``"hub"`` (a Hub id); absent from results
    written before it was recorded. The model card names a Hub dataset by its id and a folder by its own name only."""
    recipe: RecipeRecord | None = field(default=None, metadata=_record(RecipeRecord))
    objective: str | None = None
    examples: dict[str, int] | None = None
    windows: int | None = None
    hyperparameters: dict[str, Any] | None = None
    steps: int | None = None
    train_loss: float | None = None
    validation: WikiRefScores | None = field(default=None, metadata=_record(WikiRefScores))
    test: WikiRefScores | None = field(default=None, metadata=_record(WikiRefScores))
    architecture: Architecture | None = field(default=None, metadata=_record(Architecture))
    subnetwork: dict[str, Any] | None = field(default=None, metadata={"omit_none": True})
    """Iterative pruning's statistics (``--subnetwork_method iterative``)."""


@dataclass
class SubnetworkShare(Record):
    """What a subnetwork leaves trainable, counted on the model and its mask
    (``modeling_qbert.sparse.trainable_share``)."""

    masked_tensors: int | None = None
    masked_matrices: int | None = None
    masked_vectors: int | None = None
    masked_entries: int | None = None
    masked_trainable: int | None = None
    mask_density: float | None = None
    fully_trainable: dict[str, int] = field(default_factory=dict)
    total_parameters: int | None = None
    trainable_parameters: int | None = None
    trainable_share: float | None = None


@dataclass
class FinetuningSubnetwork(Record):
    """``results["finetuning"]["subnetwork"]``: the fraction and method; with a subnetwork also the share of the
    masked entries that changed and were trainable, the final density and where the mask came from; then
    ``share``."""

    fraction: float | None = None
    method: str | None = None
    changed_fraction: float | None = None
    trainable_fraction: float | None = None
    final_density: float | None = None
    source: str | None = None
    share: SubnetworkShare | None = field(default=None, metadata=_record(SubnetworkShare))

    @classmethod
    def full(cls, share: SubnetworkShare | None, fraction: float = 0.0, method: str = "full") -> FinetuningSubnetwork:
        """Full fine-tuning's record, which has no mask statistics (the keys are not written)."""
        return cls(fraction=fraction, method=method, share=share,
                   absent=frozenset({"changed_fraction", "trainable_fraction", "final_density", "source"}))

    @property
    def is_subnetwork(self) -> bool:
        """Whether a share strictly between 0 and 1 of each masked matrix was trained."""
        return isinstance(self.fraction, (int, float)) and 0 < self.fraction < 1


@dataclass
class FoldsRecord(Record):
    """Cluster-level k-fold (``--folds K --fold I``): the fold tested and its clusters."""

    folds: int | None = None
    fold: int | None = None
    test_clusters: list[str] = field(default_factory=list)


@dataclass
class BenchmarkRecord(Record):
    """What a run fine-tuned and tested on another benchmark (``--qfs_dir``) trained and tested on."""

    dataset: str | None = None
    benchmark: str | None = None
    title: str | None = None
    train_split: str | None = None
    train_queries: int | None = None
    test_split: str | None = None
    test_queries: int | None = None
    labels: str | None = None
    label_meaning: str | None = None
    scoring: str | None = None
    budgets: dict[str, int] | None = None


@dataclass
class EpochSelectionRecord(Record):
    """``--validation_clusters``: the held-out clusters, ROUGE-2 recall after each epoch and the epoch kept."""

    clusters: list[str] = field(default_factory=list)
    rouge_2_recall_by_epoch: list[float] = field(default_factory=list)
    chosen_epoch: int | None = None


@dataclass
class SparseDeltaRecord(Record):
    """``--save_sparse_delta``: the file and its size beside the dense weights'."""

    path: str | None = None
    bytes: int | None = None
    dense_bytes: int | None = None


@dataclass
class FinetuningResults(Record):
    """``results["finetuning"]``: what ``finetune_duc.py`` trained on, how, and for how long."""

    init_checkpoint: str | None = None
    recipe: RecipeRecord | None = field(default=None, metadata=_record(RecipeRecord))
    train_years: list[int] = field(default_factory=list)
    test_year: int | None = None
    benchmark: BenchmarkRecord | None = field(default=None, metadata=_record(BenchmarkRecord))
    folds: FoldsRecord | None = field(default=None, metadata=_record(FoldsRecord))
    documents: int | None = None
    max_train_documents: int | None = None
    target_scaling: str | None = None
    packing: str | None = None
    pooling: str | None = None
    use_query: bool | None = None
    attention_scope: str | None = None
    query_similarity: bool | None = None
    sentence_position_buckets: int | None = None
    selection: str | None = None
    query_format: str | None = None
    extra_train_dirs: list[str] = field(default_factory=list)
    extra_train_queries: int | None = None
    head_learning_rate: float | None = None
    ranking_loss_weight: float | None = None
    frozen_prefix_layers: int | None = None
    """The encoder layers (after the embeddings) that stayed frozen and were read from a cache; 0: none."""
    clusters: int | None = None
    epoch_selection: EpochSelectionRecord | None = field(default=None, metadata=_record(EpochSelectionRecord))
    windows: int | None = None
    objective: str | None = None
    pretraining_objective: str | None = None
    """The starting model's pre-training objective; ``None`` from a plain encoder (a new head)."""
    targets: str | None = None
    hyperparameters: dict[str, Any] | None = None
    subnetwork: FinetuningSubnetwork | None = field(default=None, metadata=_record(FinetuningSubnetwork))
    steps: int | None = None
    train_loss: float | None = None
    train_seconds: float | None = None
    sparse_delta: SparseDeltaRecord | None = field(default=None, metadata={
        "omit_none": True, **_record(SparseDeltaRecord)})


@dataclass
class SubnetworkResults(Record):
    """``results["subnetwork"]`` (``common.subnetwork_results``): the subnetwork the run trained: method (``full``:
    every weight), target fraction, final density of the mask, the iterative schedule, the mask file and its
    source."""

    method: str | None = None
    fraction: float | None = None
    final_density: float | None = None
    include_vectors: bool | None = None
    masked_tensors: int | None = None
    schedule: dict[str, Any] | None = None
    mask_file: str | None = None
    source: str | None = None


@dataclass
class ExperimentsSummary(Record):
    """The experiments a model belongs to (added by the model card when it describes an experiments folder's best
    row, never written by the training scripts): the row, its published row, the seeds, its DUC scores over the
    seeds (``{year: {measure: {"mean", "std", ...}}}``), the benchmarks it was scored on zero-shot, the folder and
    the row's models."""

    row: str | None = None
    published_row: str | None = None
    seeds: list[int] | None = None
    duc: dict[str, Any] = field(default_factory=dict)
    benchmarks: dict[str, Any] = field(default_factory=dict)
    folder: str | None = None
    models: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class ModelSettings:
    """How a checkpoint reads and scores, as its run recorded it (the model card's Architecture paragraph)."""

    packing: str | None = None
    pooling: str = "query_focused"
    attention_scope: str | None = None
    query_similarity: bool = False
    sentence_position_buckets: int = 0


@dataclass
class TrainingResults(Record):
    """``results.json`` of a training run: ``pretrain_wikiref.py`` (``finetuning`` and ``evaluation`` null) or
    ``finetune_duc.py`` (with the pre-training of the folder it started from)."""

    script: str | None = None
    run: RunInfo | None = field(default=None, metadata=_record(RunInfo))
    recipe: RecipeRecord | None = field(default=None, metadata=_record(RecipeRecord))
    base_model: str | None = None
    objective: str | None = None
    """The final model's objective."""
    pretraining: PretrainingResults | None = field(default=None, metadata=_record(PretrainingResults))
    finetuning: FinetuningResults | None = field(default=None, metadata=_record(FinetuningResults))
    evaluation: EvaluationResults | None = field(default=None, metadata=_record(EvaluationResults))
    """DUC (the model card's DUC table reads this alone)."""
    benchmark_evaluation: EvaluationResults | None = field(default=None, metadata=_record(EvaluationResults))
    """Another benchmark's (``--qfs_dir``)."""
    subnetwork: SubnetworkResults | None = field(default=None, metadata=_record(SubnetworkResults))
    experiments: ExperimentsSummary | None = field(default=None, metadata={
        "omit_none": True, **_record(ExperimentsSummary)})

    @classmethod
    def for_pretraining(cls, **values: Any) -> TrainingResults:
        """A pre-training run's results, which have no ``benchmark_evaluation`` key."""
        return cls(**values, absent=frozenset({"benchmark_evaluation"}))

    @property
    def run_kind(self) -> str:
        """``"demo"``, ``"full"`` or ``"unspecified"``."""
        kind = self.run.kind if self.run is not None else None
        return kind if kind in ("demo", "full") else "unspecified"

    @property
    def pretraining_objective(self) -> str:
        """The objective WikiRef pre-training ran (older results name only the final objective, at the top level)."""
        return str((self.pretraining.objective if self.pretraining else None) or self.objective or "classification")

    @property
    def hyperparameters(self) -> dict[str, Any]:
        """The training settings of the first stage that recorded them."""
        return ((self.pretraining.hyperparameters if self.pretraining else None)
                or (self.finetuning.hyperparameters if self.finetuning else None) or {})

    @property
    def max_length(self) -> int:
        """Tokens per window (512 when not recorded)."""
        return self.hyperparameters.get("max_length", 512)

    @property
    def trained_years(self) -> set[str]:
        """The DUC years fine-tuning trained on, as the evaluation keys them."""
        return {str(year) for year in ((self.finetuning.train_years if self.finetuning else None) or [])}

    def model_settings(self) -> ModelSettings:
        """How the checkpoint reads and scores: the pre-training recipe's settings and architecture, then what
        fine-tuning recorded (the later stage wins)."""
        settings: dict[str, Any] = {}
        if self.pretraining is not None:
            settings.update((self.pretraining.recipe.settings if self.pretraining.recipe else None) or {})
            if self.pretraining.architecture is not None:
                settings.update(self.pretraining.architecture.to_dict())
        for key in ("packing", "pooling", "attention_scope", "query_similarity", "sentence_position_buckets"):
            value = getattr(self.finetuning, key) if self.finetuning is not None else None
            if value is not None:
                settings[key] = value
        return ModelSettings(packing=settings.get("packing"), pooling=settings.get("pooling", "query_focused"),
                             attention_scope=settings.get("attention_scope"),
                             query_similarity=bool(settings.get("query_similarity")),
                             sentence_position_buckets=settings.get("sentence_position_buckets") or 0)


# ---- an experiments unit -----------------------------------------------------------------------------------------


@dataclass
class EvaluationUnitResults(Record):
    """``results.json`` of an experiments unit that scored summaries with ``evaluate_duc.py`` or ``evaluate_qfs.py``:
    the script, its command line and its evaluation."""

    script: str | None = None
    command: list[str] = field(default_factory=list)
    evaluation: EvaluationResults | None = field(default=None, metadata=_record(EvaluationResults))


EVALUATION_SCRIPTS = ("evaluate_duc", "evaluate_qfs")


def results_from_dict(data: Any, where: str = "results") -> TrainingResults | EvaluationUnitResults:
    """The record of a ``results.json`` object: an evaluation unit's (``script`` ``evaluate_duc`` or
    ``evaluate_qfs``) or a training run's (any other, older results without ``script`` included).

    Raises:
        ResultsError: not shaped like either, named by ``where``.
    """
    _check_object(data, where)
    if data.get("script") in EVALUATION_SCRIPTS:
        return EvaluationUnitResults.from_dict(data, where)
    return TrainingResults.from_dict(data, where)


def read_results_file(path: str | os.PathLike) -> dict[str, Any]:
    """The JSON object of a ``results.json``.

    Raises:
        ResultsError: the file is missing or not valid JSON.
    """
    path = Path(path)
    if not path.is_file():
        raise ResultsError(f"{path}: no such results file")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ResultsError(f"{path}: not valid JSON ({error})") from None


def results_json(record: Record | Mapping[str, Any]) -> str:
    """The text of ``results.json`` for ``record``, as the scripts write it."""
    data = record.to_dict() if isinstance(record, Record) else record
    return json.dumps(data, indent=1, default=str) + "\n"
