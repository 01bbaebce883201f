"""The evaluation on a converted QMSum, SQuALITY or Debatepedia split, the library half of ``evaluate_qfs.py`` and
``wikiref qfs evaluate``: each system scored on the split (`QfsSplit`, :func:`load_split`: the data layer's,
:mod:`wikiref_dataset.qfs.common`, named here too) as the benchmark's papers score it (:func:`score_system`), the
typed record (:func:`evaluation_record`) and table (:func:`format_table`); the command's options
(`QfsEvaluateArguments`) and its run (:func:`evaluate`).
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trainer_scripts.duc_evaluation import (
    BASELINE_CHOICES,
    RULES_NOTE,
    SELECTION_HELP,
    EvaluationError,
    SystemSummaries,
    format_cell,
    generated_rows,
    read_summaries_jsonl,
    rule_cells,
    write_summaries,
)
from wikiref_dataset.qfs.common import QfsSplit, load_split

if TYPE_CHECKING:  # the record is built only by evaluation_record: the `wikiref` parser imports this module
    from trainer_scripts.results import EvaluationResults

logger = logging.getLogger(__name__)

MEASURE_NAMES = {"rouge_1": "ROUGE-1", "rouge_2": "ROUGE-2", "rouge_l": "ROUGE-L"}
VALUE_CHOICES = ("f", "recall")


def score_system(data: QfsSplit, scoring: Any, summaries: Mapping[str, str], system: str) -> dict[str, float]:
    """The scoring's values for one system on the split (every row needs a summary).

    Raises:
        EvaluationError: the system misses some rows.
    """
    missing = [row["topic_id"] for row in data.rows if row["topic_id"] not in summaries]
    if missing:
        raise EvaluationError(f"system {system!r}: no summary for {len(missing)} of the {len(data.rows)} "
                              f"{data.key} queries ({', '.join(missing[:5])}{', ...' if len(missing) > 5 else ''})")
    result = scoring.score([summaries[row["topic_id"]] for row in data.rows],
                           [list(row["references"]) for row in data.rows])
    return {"queries": len(data.rows), **result.to_dict()}


def evaluation_record(data: QfsSplit, scoring: Any, scores: Mapping[str, Mapping[str, float]],
                      rules: Mapping[str, str] | None = None) -> EvaluationResults:
    """The typed record of an evaluation (``--out``; ``finetune_duc.py --qfs_dir``'s ``benchmark_evaluation``): the
    scoring, the split and, per system, every value and interval under ``duc evaluate``'s keys, and the rule each
    system's summaries were chosen with (``rules``, where known)."""
    from trainer_scripts.results import EvaluatedDataset, EvaluationResults, SystemScores

    return EvaluationResults(
        settings=scoring.describe(), source=scoring.source,
        datasets={data.key: EvaluatedDataset(path=str(data.path), queries=len(data.rows),
                                             budgets=dict(scoring.budgets))},
        systems={system: {data.key: SystemScores.from_dict(values, f"systems.{system}")}
                 for system, values in scores.items()},
        rules={system: rule for system, rule in (rules or {}).items() if system in scores} or None)


def format_table(scores: Mapping[str, Mapping[str, float]], data: QfsSplit, value: str,
                 rules: Mapping[str, str] | None = None) -> str:
    """One row per system: its rule (a Rule column, when ``rules`` are known), ROUGE-1 / ROUGE-2 / ROUGE-L
    (``value``) ×100 with the 95% interval."""
    from wikiref_dataset.qfs.scoring import MEASURES

    header = ["System", *(["Rule"] if rules else [])] + [f"{MEASURE_NAMES[m]} {'F1' if value == 'f' else 'R'}"
                                                         for m in MEASURES]
    body = []
    for system, values in scores.items():
        body.append([system, *rule_cells(system, rules), *(format_cell(values, measure, value) for measure in MEASURES)])
    table = [header, *body]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in table]
    return "\n".join([f"{data.key} ({len(data.rows)} queries)", lines[0], "  ".join("-" * w for w in widths),
                      *lines[1:]])


@dataclass
class QfsEvaluateArguments:
    """What to score (one of ``--baseline``, ``--summaries``, ``--model``, or ``--baseline`` with ``--model``) on
    which converted split, under which selection rules."""

    dataset: str | None = field(default=None, metadata={
        "metavar": "DIR", "help": "A folder written by `wikiref qfs convert` (required)."})
    split: str = field(default="validation", metadata={"metavar": "NAME", "help": "The split to score on."})
    baseline: list[str] = field(default_factory=list, metadata={
        "metavar": "NAME", "help": f"Baselines to score: {', '.join(BASELINE_CHOICES)}."})
    summaries: str | None = field(default=None, metadata={
        "metavar": "FILE", "help": "System summaries: JSON lines {topic_id, summary[, system]}."})
    model: str | None = field(default=None, metadata={
        "metavar": "DIR", "help": "A Q-BERT model folder (with --baseline: the model beside the baselines)."})
    selection: list[str] = field(default_factory=list, metadata={"metavar": "RULE", "help": SELECTION_HELP})
    value: str = field(default="f", metadata={
        "metavar": "VALUE", "help": "The value reported: f (F1, the benchmarks' default) or recall."})
    out: str | None = field(default=None, metadata={
        "metavar": "TABLE.json", "help": "Write every score (0-1 scale) as JSON."})
    save_summaries: str | None = field(default=None, metadata={
        "metavar": "FILE.jsonl", "help": "Write the summaries generated by baselines or the model as JSON lines."})
    quiet: bool = field(default=False, metadata={"help": "No progress bars."})


def check_arguments(arguments: QfsEvaluateArguments) -> None:
    """Refuse a command line without a dataset, without systems, with ``--summaries`` beside other systems (which
    ``wikiref duc evaluate`` allows), or with an unknown value.

    Raises:
        EvaluationError: in one line.
    """
    from trainer_scripts.duc_evaluation import check_arguments as check_systems

    check_systems(arguments, converter="wikiref qfs convert", summaries_beside=False)
    if arguments.value not in VALUE_CHOICES:
        raise EvaluationError(f"--value: expected one of {', '.join(VALUE_CHOICES)}, got {arguments.value!r}")


def evaluate(arguments: QfsEvaluateArguments) -> int:
    """Check the arguments, score the systems, print the table; returns 0.

    Raises:
        EvaluationError: bad arguments or input, in one line naming the file or option.
    """
    from wikiref_dataset.qfs import QfsError
    from wikiref_dataset.qfs.scoring import scoring_for

    check_arguments(arguments)
    try:
        data = load_split(arguments.dataset, arguments.split)
    except QfsError as error:
        raise EvaluationError(str(error)) from None
    scoring = scoring_for(data.benchmark, arguments.value)
    progress = not arguments.quiet
    if arguments.summaries:
        path = Path(arguments.summaries)
        if not path.is_file():
            raise EvaluationError(f"{path}: no such file")
        found = SystemSummaries(read_summaries_jsonl(path, normalize=lambda topic_id: topic_id.strip()))
        known = {row["topic_id"] for row in data.rows}
        for system, summaries in found.summaries.items():
            unknown = sorted(set(summaries) - known)
            if unknown:
                logger.warning("system %r: %d summaries for queries not in %s ignored (e.g. %s)", system,
                               len(unknown), data.key, unknown[0])
    else:
        found = generated_rows(arguments, data.rows, progress, budget=scoring.budget)
    systems = found.summaries
    scores = {system: score_system(data, scoring, summaries, system) for system, summaries in systems.items()}
    value = "F1" if scoring.value == "f" else "recall"
    print(f"{data.benchmark}: ROUGE {value} x100 as its papers score it ({scoring.describe()}); 95% confidence "
          "intervals in brackets.\n")
    print(format_table(scores, data, scoring.value, found.rules))
    if found.rules:
        print(f"\n{RULES_NOTE}")
    if arguments.out:
        output = evaluation_record(data, scoring, scores, found.rules).to_dict()
        Path(arguments.out).write_text(json.dumps(output, indent=1) + "\n", encoding="utf-8")
    generated = not arguments.summaries
    if arguments.save_summaries and generated:
        write_summaries(Path(arguments.save_summaries), systems)
    wrote = [path for path in (arguments.out, arguments.save_summaries if generated else None) if path]
    print(f"\n{len(scores)} system(s) scored on {data.key} ({len(data.rows)} queries)"
          + (f"; wrote {', '.join(wrote)}" if wrote else ""), file=sys.stderr)
    return 0


def to_arguments(args: Any) -> QfsEvaluateArguments:
    """:class:`QfsEvaluateArguments` from a parsed namespace (``wikiref qfs evaluate``) or as given."""
    if isinstance(args, QfsEvaluateArguments):
        return args
    return QfsEvaluateArguments(**{item.name: getattr(args, item.name) for item in fields(QfsEvaluateArguments)})
