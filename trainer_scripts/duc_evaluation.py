"""The DUC evaluation, the library half of ``evaluate_duc.py`` and ``wikiref duc evaluate``: the systems' summaries
(baselines, summaries files, a Q-BERT model) of converted DUC years (`DucYear`, :func:`load_years`: the data layer's,
:mod:`wikiref_dataset.duc.years`, named here too), their ROUGE scores with the official settings
(:func:`evaluate_systems`, `DucRouge`) and the Table VI-shaped table (:func:`format_table`, :func:`format_cell`); the
command's options (`EvaluateArguments`) and its run (:func:`evaluate`).

The same rule for every system: a table that shows a model chosen by one rule beside the baselines shows the
baselines under that rule too, besides their own greedy rule (:func:`compared_rules`, :func:`baseline_rows`), and
the model under the greedy rule as an ablation, chosen from the scores it gave once (:func:`model_rows`,
:func:`summaries_from_scores`). Each row is named by ``wikiref_dataset.baselines.system_name`` (``QUERY-SIM``,
``QUERY-SIM (ILP)``, ``Q-BERT (greedy)``) and its rule is recorded (`SystemSummaries`, ``EvaluationResults.rules``)
and printed in the table's Rule column.

Scoring baselines or summaries imports neither torch nor transformers (nor `evaluate` or `datasets`, which would
import them): about a second; only a model loads the model side. Scores keep the metric's own 0-1 values (recall,
precision, F and their intervals); the table prints them x100. Clusters without reference summaries cannot be scored
and are left out (with a warning). A system with no summary for any topic of a year gets ``-`` for that year (as Table
VI prints for systems not run on a year); one that covers only some topics is an error.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wikiref_dataset.duc.years import DucYear, load_years

if TYPE_CHECKING:  # the records are built only by Evaluation.to_results: the `wikiref` parser imports this module
    from trainer_scripts.results import EvaluationResults

logger = logging.getLogger(__name__)

MEASURES = ("rouge_1", "rouge_2", "rouge_su4")
MEASURE_NAMES = {"rouge_1": "ROUGE-1", "rouge_2": "ROUGE-2", "rouge_su4": "ROUGE-SU4"}
BASELINE_CHOICES = ("lead", "query-sim", "oracle", "all")


class EvaluationError(ValueError):
    """Bad evaluation input (a summaries file, a dataset folder, a missing system output), named in the message."""


@dataclass
class Evaluation:
    """Every system's metric output per year (``None``: not scored that year), in insertion order."""

    settings: str
    years: list[DucYear]
    scores: dict[str, dict[int, dict[str, float] | None]] = field(default_factory=dict)
    rules: dict[str, str] = field(default_factory=dict)
    """The rule each system's summaries were chosen with, where known (``{}``: summaries read from files)."""

    def to_results(self) -> EvaluationResults:
        """The typed record of this evaluation (``results["evaluation"]``, ``evaluate_duc.py --out``)."""
        from trainer_scripts.results import EvaluatedDataset, EvaluationResults, SystemScores

        return EvaluationResults(
            settings=self.settings,
            datasets={str(year.year): EvaluatedDataset(path=str(year.path), clusters=len(year.rows),
                                                       scored_clusters=len(year.scorable)) for year in self.years},
            systems={system: {str(year): None if values is None else SystemScores.from_dict(values)
                              for year, values in by_year.items()} for system, by_year in self.scores.items()},
            rules=dict(self.rules) or None)

    def to_dict(self) -> dict[str, Any]:
        return self.to_results().to_dict()


# ---- inputs ------------------------------------------------------------------------------------------------------


def _summary_string(value: Any, where: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(sentence, str) for sentence in value):
        return "\n".join(value)
    raise EvaluationError(f"{where}: 'summary' must be a string or a list of sentence strings")


def read_summaries_jsonl(path: Path, normalize: Callable[[str], str] | None = None) -> dict[str, dict[str, str]]:
    """``{system: {topic_id: summary}}`` from JSON lines; the system is the ``system`` field or the file's stem.
    ``normalize`` turns a given topic id into the rows' form (default: DUC's, ``d0601a`` → ``D0601A``)."""
    from wikiref_dataset.duc.reader import normalize_topic_id
    from wikiref_dataset.utils.jsonl import JsonLinesError, iter_json_objects

    normalize = normalize or normalize_topic_id

    systems: dict[str, dict[str, str]] = {}
    try:
        for line_number, record in iter_json_objects(path):
            where = f"{path}:{line_number}"
            if not isinstance(record.get("topic_id"), str):
                raise EvaluationError(f"{where}: expected an object with a string 'topic_id' and a 'summary'")
            summary = _summary_string(record.get("summary"), where)
            system = str(record.get("system") or path.stem)
            topic_id = normalize(record["topic_id"])
            if topic_id in systems.setdefault(system, {}):
                raise EvaluationError(f"{where}: a second summary of topic {topic_id} for system {system!r}")
            systems[system][topic_id] = summary
    except JsonLinesError as error:
        raise EvaluationError(str(error)) from None
    if not systems:
        raise EvaluationError(f"{path}: no summaries")
    return systems


def read_summaries_peers(folder: Path) -> dict[str, dict[str, str]]:
    """``{"peer <id>": {topic_id: summary}}`` from files named like DUC peers (``D0601.M.250.A.<id>``)."""
    from wikiref_dataset.duc.reader import read_reference, reference_topic_id

    systems: dict[str, dict[str, str]] = {}
    ignored = []
    for path in sorted(folder.iterdir()):
        parsed = reference_topic_id(path.name) if path.is_file() else None
        if parsed is None:
            ignored.append(path.name)
            continue
        topic_id, system_id = parsed
        systems.setdefault(f"peer {system_id}", {})[topic_id] = read_reference(path)
    if ignored:
        logger.warning("%s: %d file(s) not named like DUC peers (D0601.M.250.A.<id>) ignored, e.g. %s",
                       folder, len(ignored), ignored[0])
    if not systems:
        raise EvaluationError(f"{folder}: no file named like a DUC peer summary (D0601.M.250.A.<system id>)")
    return systems


def read_summaries(path: str | Path) -> dict[str, dict[str, str]]:
    """System summaries from a JSON-lines file or a DUC peer folder."""
    path = Path(path)
    if path.is_dir():
        return read_summaries_peers(path)
    if path.is_file():
        return read_summaries_jsonl(path)
    raise EvaluationError(f"{path}: no such file or folder")


@dataclass
class SystemSummaries:
    """Systems' summaries by row name (``{system: {topic_id: summary}}``, in the order a table shows them) and the
    rule each row's sentences were chosen with (``rules``: ``duc``, ``mmr``, ``ilp``, or ``oracle`` for ORACLE; a
    row of summaries read from a file has none)."""

    summaries: dict[str, dict[str, str]] = field(default_factory=dict)
    rules: dict[str, str] = field(default_factory=dict)

    def add(self, system: str, summaries: dict[str, str], rule: str | None = None) -> None:
        """Add a row (``rule``: how its sentences were chosen, ``None`` when not known)."""
        self.summaries[system] = summaries
        if rule is not None:
            self.rules[system] = rule

    def extend(self, other: SystemSummaries) -> SystemSummaries:
        """Add ``other``'s rows after these; returns this."""
        for system, summaries in other.summaries.items():
            self.add(system, summaries, other.rules.get(system))
        return self


def compared_rules(selection: Sequence[str] = (), model_rule: str | None = None) -> list[str]:
    """The rules a table shows its systems under: ``selection`` (a command's ``--selection``) when given, else the
    baselines' own rule (the paper's greedy ``duc``) and a model's rule when it has another, so that the baselines
    stand under the model's rule beside it as well as under their own.

    Raises:
        EvaluationError: an unknown rule, in one line.
    """
    from wikiref_dataset.baselines import BASELINE_RULE
    from wikiref_dataset.selection import check_rule

    rules = list(selection) or [BASELINE_RULE, *([model_rule] if model_rule else [])]
    try:
        return [check_rule(rule) for rule in dict.fromkeys(rules)]
    except ValueError as error:
        raise EvaluationError(f"--selection: {error}") from None


def baseline_summaries(name: str, rows: Iterable[Mapping[str, Any]], progress: bool = False,
                       budget: Callable[[Mapping[str, Any]], int] | None = None, rule: str = "duc",
                       **settings: Any) -> dict[str, str]:
    """``{topic_id: summary}`` of one baseline (``wikiref_dataset.baselines``), chosen by ``rule`` with its
    ``settings`` (default: the baselines' own, the paper's greedy rule; ORACLE ignores it). ``budget``, when given, is
    each row's word budget instead of 250 (another benchmark's), which the summary keeps to on its own (``cut``: those
    benchmarks are scored without ROUGE's ``-l``)."""
    from tqdm.auto import tqdm

    from wikiref_dataset.baselines import baseline_summary, baseline_system

    rows = list(rows)
    return {row["topic_id"]: baseline_summary(name, row, rule=rule, **settings) if budget is None else
            baseline_summary(name, row, budget(row), cut=True, rule=rule, **settings)
            for row in tqdm(rows, desc=baseline_system(name, rule), unit="query" if budget else "cluster",
                            disable=not progress, file=sys.stderr)}


def baseline_rows(names: Sequence[str], rows: Sequence[Mapping[str, Any]], rules: Sequence[str],
                  progress: bool = False, budget: Callable[[Mapping[str, Any]], int] | None = None) -> SystemSummaries:
    """Each baseline of ``names`` (``lead``, ``query-sim``, ``oracle``) under each rule of ``rules``, a baseline's
    rows together (``LEAD``, ``LEAD (ILP)``, ``QUERY-SIM``, ...); ORACLE once, whatever the rules (it has none).
    ``budget`` as :func:`baseline_summaries` takes it."""
    from wikiref_dataset.baselines import baseline_rule, baseline_system

    found = SystemSummaries()
    for name in names:
        for rule in rules:
            system = baseline_system(name, rule)
            if system not in found.summaries:
                found.add(system, baseline_summaries(name, rows, progress, budget, rule=rule),
                          baseline_rule(name, rule))
    return found


def model_rule(summarize: Callable[..., Any]) -> str:
    """The model's own cluster rule (its ``config.cluster_selection``; ``duc`` for a folder saved before the option)."""
    return getattr(summarize.model.config, "cluster_selection", "duc")


def load_model_pipeline(model_dir: str | Path, progress: bool = True) -> Callable[..., Any]:
    """The ``"query-focused-summarization"`` pipeline (``modeling_qbert.pipeline_qfs``) of a saved Q-BERT folder;
    ``progress=False`` (a command's ``--quiet``) loads it without transformers' "Loading weights" bar.

    Raises:
        EvaluationError: the folder does not exist or holds no loadable Q-BERT model.
    """
    import modeling_qbert

    try:
        model_dir = modeling_qbert.check_model_source(model_dir)  # a saved Q-BERT folder or a Hub id
    except ValueError as error:
        raise EvaluationError(str(error)) from None
    try:
        return modeling_qbert.load_pipeline(model_dir, progress=progress)
    except (OSError, ValueError) as error:
        raise EvaluationError(f"{model_dir}: cannot load a Q-BERT model and processor ({error})") from None


def model_summaries(
    summarize: Callable[..., Any], rows: Iterable[Mapping[str, Any]], progress: bool = False,
    scores: dict[str, list[list[float]]] | None = None, budget: Callable[[Mapping[str, Any]], int] | None = None,
    rule: str | None = None,
) -> dict[str, str]:
    """``{topic_id: summary}`` from the Q-BERT pipeline: every sentence scored with the query and its own document
    (Zhu et al., 2022, §V-B), ranked across the cluster and chosen by the cluster rule ``rule`` (``"duc"``, ``"mmr"``
    or ``"ilp"``; default: the model's ``config.cluster_selection``, the DUC rule for a model that names none), 250
    words.
    ``scores``, when given, receives every sentence's score: ``scores[topic_id][document][sentence]``. ``budget``,
    when given, is each row's word budget instead of 250 (another benchmark's): the summary is cut to it, as ROUGE's
    ``-l`` would cut it (those benchmarks are scored without a limit)."""
    from tqdm.auto import tqdm

    from wikiref_dataset.rouge import truncate_lines

    if rule is None:
        rule = model_rule(summarize)
    summaries = {}
    for row in tqdm(list(rows), desc="model", unit="query" if budget else "cluster", disable=not progress,
                    file=sys.stderr):
        words = budget(row) if budget is not None else None
        output = summarize({"query": list(row["query"]), "documents": list(row["documents"])}, selection=rule,
                           budget="rouge", **({"max_words": words} if words is not None else {}))
        summary = output["summary"]
        if words is not None:  # cut as ROUGE's -l would: those benchmarks are scored without it
            summary = "\n".join(truncate_lines(summary.split("\n"), words))
        summaries[row["topic_id"]] = summary
        if scores is not None:
            per_document: list[list[float]] = [[] for _ in row["documents"]]
            for sentence in output["sentences"]:
                per_document[sentence["document"]].append(float(sentence["score"]))
            scores[row["topic_id"]] = per_document
    return summaries


def summaries_from_scores(rows: Iterable[Mapping[str, Any]], scores: Mapping[str, Sequence[Sequence[float]]],
                          rule: str, budget: Callable[[Mapping[str, Any]], int] | None = None,
                          **settings: Any) -> dict[str, str]:
    """``{topic_id: summary}`` chosen by ``rule`` (with its ``settings``) from sentence scores a model already gave
    (``scores[topic_id][document][sentence]``, as :func:`model_summaries` collects them and ``sentence_scores.jsonl``
    keeps them): another rule's summaries without scoring the sentences again; for a rule, the summaries
    :func:`model_summaries` would give. ``budget`` as :func:`model_summaries` takes it.

    Raises:
        EvaluationError: a row without saved scores, or scores that do not fit its sentences.
    """
    from wikiref_dataset.selection import DUC_MAX_WORDS, ClusterSentences

    summaries = {}
    for row in rows:
        topic = row["topic_id"]
        if topic not in scores:
            raise EvaluationError(f"topic {topic}: no saved sentence scores to choose its summary from")
        cluster = ClusterSentences.from_row(row)
        words = budget(row) if budget is not None else DUC_MAX_WORDS
        try:
            flat = cluster.flatten_scores(scores[topic])
        except ValueError as error:
            raise EvaluationError(f"topic {topic}: {error}") from None
        chosen = cluster.select(flat, max_words=words, rule=rule, **settings)
        summaries[topic] = cluster.summary(chosen, max_words=words if budget is not None else None)
    return summaries


def model_rows(summarize: Callable[..., Any], name: str, rows: Sequence[Mapping[str, Any]], rules: Sequence[str],
               progress: bool = False, scores: dict[str, list[list[float]]] | None = None,
               budget: Callable[[Mapping[str, Any]], int] | None = None, own_rule: str | None = None,
               ) -> SystemSummaries:
    """The model's rows, one per rule of ``rules``, its own rule (``own_rule``, default :func:`model_rule`) first: the
    pipeline scores every sentence once (:func:`model_summaries`, ``scores`` receives the scores) and chooses with the
    first rule; the others choose from those scores (:func:`summaries_from_scores`). Each row is named by
    ``system_name`` with the model's own rule: ``name`` under it, ``name (greedy)`` under the paper's rule (an
    ablation: what the rule adds)."""
    from wikiref_dataset.baselines import system_name

    own = own_rule or model_rule(summarize)
    ordered = sorted(dict.fromkeys(rules), key=lambda rule: rule != own)
    scores = {} if scores is None else scores
    found = SystemSummaries()
    first, *others = ordered
    found.add(system_name(name, first, own), model_summaries(summarize, rows, progress, scores, budget, rule=first),
              first)
    for rule in others:
        found.add(system_name(name, rule, own), summaries_from_scores(rows, scores, rule, budget), rule)
    return found


def write_sentence_scores(path: Path, scores: Mapping[str, Sequence[Sequence[float]]]) -> None:
    """``sentence_scores.jsonl``: one line per cluster, ``{"topic_id", "scores": [[per sentence] per document]}`` (the
    model's scores of every test sentence, for choosing a selection rule or averaging runs afterwards)."""
    with open(path, "w", encoding="utf-8") as handle:
        for topic_id, values in scores.items():
            handle.write(json.dumps({"topic_id": topic_id, "scores": [list(map(float, document))
                                                                       for document in values]}) + "\n")


# ---- scoring -----------------------------------------------------------------------------------------------------


def score_year(metric: Any, year: DucYear, summaries: Mapping[str, str], system: str) -> dict[str, float] | None:
    """The metric's output for one system on one year; ``None`` when the system has no summary for that year.

    Raises:
        EvaluationError: the system covers only some of the year's scorable clusters.
    """
    rows = year.scorable
    present = [row for row in rows if row["topic_id"] in summaries]
    if not present:
        return None
    if len(present) < len(rows):
        missing = [row["topic_id"] for row in rows if row["topic_id"] not in summaries]
        raise EvaluationError(f"system {system!r}: no summary for {len(missing)} of the {len(rows)} DUC {year.year} "
                              f"topics ({', '.join(missing[:5])}{', ...' if len(missing) > 5 else ''})")
    output = metric.compute(predictions=[summaries[row["topic_id"]] for row in rows],
                            references=[list(row["references"]) for row in rows])
    return {"clusters": len(rows), **output}


class DucRouge:
    """ROUGE-1.5.5 with the official DUC settings, computed by the project's ROUGE engine as the DUC ROUGE `evaluate`
    module computes it (``wikiref_dataset/metrics/duc_rouge``, a thin wrapper of the same call), without importing
    `evaluate`: that import loads transformers and torch when they are installed (12 s and 490 MB on a 2-core
    machine, for scoring that takes a second). ``tests/trainer_scripts/test_evaluate_duc.py`` checks that both give
    the same numbers. ``compute`` takes and returns what the module's ``compute`` does."""

    def compute(self, predictions: Sequence[str], references: Sequence[Sequence[str]]) -> dict[str, float]:
        from wikiref_dataset.rouge import rouge

        return rouge(list(predictions), list(references)).to_dict()  # the official DUC settings by default


def load_metric() -> DucRouge:
    """The DUC ROUGE metric with the official settings (:class:`DucRouge`)."""
    return DucRouge()


def official_settings() -> str:
    from wikiref_dataset.rouge import RougeConfig

    return " ".join(RougeConfig.duc().to_args())


def evaluate_systems(
    years: Sequence[DucYear], systems: Mapping[str, Mapping[str, str]], metric: Any | None = None,
    rules: Mapping[str, str] | None = None,
) -> Evaluation:
    """Score each system (``{topic_id: summary}``, topics of any of the years) on each year; ``rules``: the rule each
    system's summaries were chosen with, where known (recorded and printed beside the scores)."""
    metric = metric if metric is not None else load_metric()
    evaluation = Evaluation(settings=official_settings(), years=list(years),
                            rules={system: rule for system, rule in (rules or {}).items() if system in systems})
    for system, summaries in systems.items():
        evaluation.scores[system] = {year.year: score_year(metric, year, summaries, system) for year in years}
    for year in years:
        if all(by_year[year.year] is None for by_year in evaluation.scores.values()):
            logger.warning("DUC %d: no system has a summary for its topics", year.year)
    return evaluation


# ---- output ------------------------------------------------------------------------------------------------------


def format_cell(values: Mapping[str, float] | None, measure: str, value: str = "recall") -> str:
    """``measure``'s ``value`` (``recall``, ``f``, ...) ×100 with its 95% interval, ``-`` for no values."""
    if values is None:
        return "-"
    key = f"{measure}_{value}"
    return f"{100 * values[key]:.2f} [{100 * values[key + '_ci_low']:.2f}-{100 * values[key + '_ci_high']:.2f}]"


def rule_cells(system: str, rules: Mapping[str, str] | None) -> list[str]:
    """The Rule column's cell of ``system`` (``wikiref_dataset.baselines.rule_label``: ``greedy``, ``ILP``, ...;
    ``-`` where the rule is not known), or no cell when the table records no rule (summaries read from files)."""
    from wikiref_dataset.baselines import rule_label

    if not rules:
        return []
    return [rule_label(rules[system]) if system in rules else "-"]


RULES_NOTE = ("Rule: how each row's sentences were chosen (greedy: the paper's DUC rule, --selection duc; ILP: bigram "
              "concept coverage, ilp; MMR: mmr; oracle: ORACLE's own search against the references).")
"""What the printed tables' Rule column means (the commands print it under the table)."""


def format_table(evaluation: Evaluation) -> str:
    """Table VI's shape: one row per system, its rule (a Rule column, when the evaluation knows the rules), ROUGE-1 /
    ROUGE-2 / ROUGE-SU4 recall ×100 per DUC year, 95 % CI."""
    years = [year.year for year in evaluation.years]
    ruled = ["Rule"] if evaluation.rules else []
    header_years = ["Systems", *ruled] + [f"DUC {year}" if i == 0 else "" for year in years
                                          for i in range(len(MEASURES))]
    header_measures = [""] * (1 + len(ruled)) + [MEASURE_NAMES[measure] for _ in years for measure in MEASURES]
    body = [[system, *rule_cells(system, evaluation.rules)]
            + [format_cell(by_year.get(year), measure) for year in years for measure in MEASURES]
            for system, by_year in evaluation.scores.items()]
    table = [header_years, header_measures, *body]
    widths = [max(len(row[column]) for row in table) for column in range(len(header_years))]

    def line(cells: list[str]) -> str:
        return "  ".join(cell.ljust(width) for cell, width in zip(cells, widths)).rstrip()

    rule = "  ".join("-" * width for width in widths)
    return "\n".join([line(header_years), line(header_measures), rule, *map(line, body)])


def write_summaries(path: Path, systems: Mapping[str, Mapping[str, str]]) -> None:
    """JSON lines ``{system, topic_id, summary}``: readable back with ``--summaries``."""
    with open(path, "w", encoding="utf-8") as handle:
        for system, summaries in systems.items():
            for topic_id, summary in summaries.items():
                handle.write(json.dumps({"system": system, "topic_id": topic_id, "summary": summary}) + "\n")


# ---- command line ------------------------------------------------------------------------------------------------


SELECTION_HELP = ("The selection rules the baselines' and the model's sentences are chosen with, each its own rows: "
                  "duc (the paper's greedy rule, the baselines' own), mmr, ilp. 'QUERY-SIM' is QUERY-SIM under duc, "
                  "'QUERY-SIM (ILP)' under ilp; the model's row under its own rule keeps its name, 'MODEL (greedy)' "
                  "is it under duc; ORACLE has no rule. Default: duc, and with --model also the model's rule "
                  "(config.cluster_selection), so that every system stands under the model's rule too.")


@dataclass
class EvaluateArguments:
    """What to score (one of ``--baseline``, ``--summaries``, ``--model``, or ``--baseline`` with ``--model``) on
    which converted DUC years, under which selection rules."""

    dataset: list[str] = field(default_factory=list, metadata={
        "action": "extend", "metavar": "DIR",
        "help": "A folder written by `wikiref duc convert` (required; repeat it, or give several, for several years)."})
    baseline: list[str] = field(default_factory=list, metadata={
        "metavar": "NAME", "help": f"Baselines to score: {', '.join(BASELINE_CHOICES)}."})
    summaries: str | None = field(default=None, metadata={
        "metavar": "FILE_OR_DIR",
        "help": "System summaries: JSON lines {topic_id, summary[, system]} or a DUC peer folder."})
    model: str | None = field(default=None, metadata={
        "metavar": "DIR", "help": "A Q-BERT model folder (with --baseline and/or --summaries: one table)."})
    selection: list[str] = field(default_factory=list, metadata={"metavar": "RULE", "help": SELECTION_HELP})
    out: str | None = field(default=None, metadata={
        "metavar": "RESULTS.json", "aliases": ["--output"], "help": "Write every score (0-1 scale) as JSON."})
    save_summaries: str | None = field(default=None, metadata={
        "metavar": "FILE.jsonl", "help": "Write the summaries generated by baselines or the model as JSON lines."})
    quiet: bool = field(default=False, metadata={"help": "No progress bars."})


def check_arguments(arguments: Any, converter: str = "wikiref duc convert", summaries_beside: bool = True) -> None:
    """Refuse a command line that names no dataset, no system or systems that do not go together (with
    ``summaries_beside`` false, as ``wikiref qfs evaluate`` has it, ``--summaries`` goes alone; otherwise any of
    ``--baseline``, ``--summaries`` and ``--model`` go together, rows of one table as Table VI puts other systems
    beside the baselines and the model), an unknown baseline, or an unknown or pointless ``--selection`` rule (the
    options of :class:`EvaluateArguments`, or of ``evaluate_qfs.py``'s arguments, whose folders ``converter`` writes).

    Raises:
        EvaluationError: in one line.
    """
    if not arguments.dataset:
        raise EvaluationError(f"--dataset is required: a folder written by `{converter}`")
    given = [name for name in ("baseline", "summaries", "model") if getattr(arguments, name)]
    if not given:
        raise EvaluationError("give the systems to score: --baseline, --summaries, --model"
                              + (" (several together: one table)" if summaries_beside else
                                 " (--summaries alone, or --baseline with --model)"))
    if not summaries_beside and len(given) > 1 and "summaries" in given:
        raise EvaluationError("give --summaries alone, or --baseline with --model (got "
                              f"{', '.join('--' + name for name in given)})")
    from wikiref_dataset.baselines import baseline_key

    arguments.baseline = [baseline_key(name) for name in arguments.baseline]  # query_sim is query-sim
    unknown = [name for name in arguments.baseline if name not in BASELINE_CHOICES]
    if unknown:
        raise EvaluationError(f"--baseline: unknown {', '.join(map(repr, unknown))}: choose from "
                              f"{', '.join(BASELINE_CHOICES)}")
    if arguments.selection and arguments.summaries and not (arguments.baseline or arguments.model):
        raise EvaluationError("--selection chooses the sentences of the baselines and the model; summaries given "
                              "with --summaries are scored as they are")
    compared_rules(arguments.selection)



def to_arguments(args: argparse.Namespace | EvaluateArguments) -> EvaluateArguments:
    """:class:`EvaluateArguments` from a parsed namespace (``wikiref duc evaluate``) or as given."""
    if isinstance(args, EvaluateArguments):
        return args
    return EvaluateArguments(**{item.name: getattr(args, item.name) for item in fields(EvaluateArguments)})



def evaluate(arguments: EvaluateArguments) -> int:
    """Check the arguments, score the systems, print the table; returns 0.

    Raises:
        EvaluationError: bad arguments or input, in one line naming the file or option.
    """
    check_arguments(arguments)
    return _run(arguments)


def _run(args: EvaluateArguments) -> int:
    from wikiref_dataset.duc.reader import DucError

    progress = not args.quiet
    try:
        years = load_years(args.dataset)
    except DucError as error:
        raise EvaluationError(str(error)) from None
    rows = [row for year in years for row in year.scorable]
    given = SystemSummaries(read_summaries(args.summaries)) if args.summaries else SystemSummaries()
    known = {row["topic_id"] for year in years for row in year.rows}
    for system, summaries in given.summaries.items():
        unknown = sorted(set(summaries) - known)
        if unknown and len(unknown) == len(summaries):
            raise EvaluationError(
                f"{args.summaries}: system {system!r}: none of its {len(summaries)} summaries is for a topic of "
                f"{', '.join(f'DUC {year.year}' for year in years)} (e.g. {unknown[0]}); give the year its "
                "summaries are for")
        if unknown:
            logger.warning("system %r: %d summaries for topics not in the datasets ignored (e.g. %s)",
                           system, len(unknown), unknown[0])
    # the baselines and the model are chosen here; --summaries rows come after them, scored as they are
    generated = generated_rows(args, rows, progress) if args.baseline or args.model else SystemSummaries()
    clash = sorted(set(given.summaries) & set(generated.summaries))
    if clash:
        raise EvaluationError(f"{args.summaries}: system {clash[0]!r} has the name of a row of --baseline/--model; "
                              "name it otherwise (the 'system' field, or the peer files' id)")
    found = SystemSummaries().extend(generated).extend(given)
    systems = found.summaries

    evaluation = evaluate_systems(years, systems, rules=found.rules)
    print(f"ROUGE recall x100 with the official DUC settings ({evaluation.settings}); 95% confidence intervals "
          "in brackets.\n")
    print(format_table(evaluation))
    if evaluation.rules:
        print(f"\n{RULES_NOTE}")
    if args.out:
        Path(args.out).write_text(json.dumps(evaluation.to_dict(), indent=1) + "\n", encoding="utf-8")
    if args.save_summaries and generated.summaries:
        write_summaries(Path(args.save_summaries), generated.summaries)
    scored = sum(values is not None for by_year in evaluation.scores.values() for values in by_year.values())
    clusters = ", ".join(f"DUC {year.year}: {len(year.scorable)} clusters" for year in years)
    wrote = [path for path in (args.out, args.save_summaries if generated.summaries else None) if path]
    print(f"\n{len(evaluation.scores)} system(s) scored ({scored} system-year results; {clusters})"
          + (f"; wrote {', '.join(wrote)}" if wrote else ""), file=sys.stderr)
    return 0


def generated_rows(arguments: Any, rows: Sequence[Mapping[str, Any]], progress: bool = False,
                   budget: Callable[[Mapping[str, Any]], int] | None = None) -> SystemSummaries:
    """The rows a command generates (``wikiref duc evaluate``, ``wikiref qfs evaluate``): the baselines of
    ``--baseline``, then the model of ``--model`` (named by its folder), each under every rule of
    :func:`compared_rules` (``--selection``, by default the baselines' own and the model's). ``budget`` as
    :func:`baseline_summaries` takes it."""
    from wikiref_dataset.baselines import BASELINE_NAMES

    summarize = load_model_pipeline(arguments.model, progress) if arguments.model else None
    rules = compared_rules(arguments.selection, model_rule(summarize) if summarize is not None else None)
    found = SystemSummaries()
    if arguments.baseline:
        names = list(BASELINE_NAMES) if "all" in arguments.baseline else list(dict.fromkeys(arguments.baseline))
        found.extend(baseline_rows(names, rows, rules, progress, budget))
    if summarize is not None:
        found.extend(model_rows(summarize, Path(arguments.model).name, rows, rules, progress, budget=budget))
    return found
