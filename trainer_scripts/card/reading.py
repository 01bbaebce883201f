"""Reading the results a card is rendered from: a training run's ``results.json`` as
`trainer_scripts.results.TrainingResults`, or an experiments folder's (``run_experiments.py``) as the results of its
best row's run with that row's scores over the seeds (:func:`experiments_results`); :class:`ModelCardError` for a
file the card cannot be rendered from."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trainer_scripts.results import ExperimentsSummary, ResultsError, TrainingResults, read_results_file


class ModelCardError(ValueError):
    """A results file the card cannot be rendered from (named in the message)."""


def load_results(path: str | Path) -> TrainingResults:
    """The results of a ``results.json``; a clear error for a missing or malformed file. An experiments folder's
    (``run_experiments.py``) is read as its best row's run (:func:`experiments_results`)."""
    path = Path(path)
    if not path.is_file():
        raise ModelCardError(f"{path}: no such results file (the training scripts write results.json into the model "
                             "folder)")
    try:
        data = read_results_file(path)
    except ResultsError as error:
        raise ModelCardError(str(error)) from None
    if isinstance(data, Mapping) and data.get("script") == "run_experiments":
        return experiments_results(ExperimentsFolderResults.from_dict(data, str(path)), path.parent)
    return check_results(data, where=str(path))


@dataclass
class ExperimentsFolderResults:
    """What the card reads from an experiments folder's ``results.json`` (``run_experiments.py``): the best row
    (``best``: its variant, published row, models and the ``card_results`` of the run the card describes), every
    row's scores (``rows``) and the settings (seeds, benchmarks)."""

    best: Mapping[str, Any] | None
    rows: Mapping[str, Any]
    settings: Mapping[str, Any]

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = "results") -> ExperimentsFolderResults:
        for key in ("best", "rows", "settings"):
            if data.get(key) is not None and not isinstance(data[key], Mapping):
                raise ModelCardError(f"{where}: {key!r} must be an object or null")
        return cls(best=data.get("best"), rows=data.get("rows") or {}, settings=data.get("settings") or {})

    def row(self, key: str | None) -> Mapping[str, Any]:
        return self.rows.get(key) or {}

    def zero_shot(self, row: Mapping[str, Any], benchmark: str) -> Any:
        return ((row.get("benchmarks") or {}).get(benchmark) or {}).get("zero_shot")

    def baseline(self, key: str, benchmark: str) -> Any:
        return ((self.row(key).get("benchmarks") or {}).get(benchmark) or {}).get("baseline")

    def baseline_rows(self) -> dict[str, str]:
        """Variant -> row name of the baselines: LEAD, QUERY-SIM, ORACLE and their rows under the fine-tuned rows'
        rule (``query_sim@ilp`` -> ``QUERY-SIM (ILP)``, its record's ``system``), in the run's order."""
        found = {key: self.row(key).get("system") or self.row(key).get("published_row") or key
                 for key, row in self.rows.items() if (row or {}).get("row") in ("lead", "query_sim", "oracle")}
        return found or {key: self.row(key).get("published_row") or key for key in ("lead", "query_sim", "oracle")}


def experiments_results(experiments: ExperimentsFolderResults | Mapping[str, Any],
                        folder: str | Path) -> TrainingResults:
    """The results of the best row's run in an experiments folder (``folder/results.json`` written by
    ``run_experiments.py``: its ``best`` names the row and the run's ``results.json``), with the row's scores over the
    seeds added as ``results.experiments`` (`ExperimentsSummary`).

    Raises:
        ModelCardError: the experiments have no finished DUC row, or its run's results are missing.
    """
    if not isinstance(experiments, ExperimentsFolderResults):
        experiments = ExperimentsFolderResults.from_dict(experiments, str(folder))
    best = experiments.best
    if not isinstance(best, Mapping) or not best.get("card_results"):
        raise ModelCardError(f"{folder}: the experiments have no finished DUC row to describe (results.json has no "
                             "'best')")
    results = load_results(Path(folder) / best["card_results"])
    row = experiments.row(best.get("variant"))
    benchmarks = {}
    for name, setting in (experiments.settings.get("benchmarks") or {}).items():
        zero_shot = experiments.zero_shot(row, name)
        if zero_shot:
            benchmarks[name] = {"split": setting.get("split"), "queries": setting.get("queries"),
                                "zero_shot": zero_shot,
                                "baselines": {system: experiments.baseline(key, name)
                                              for key, system in experiments.baseline_rows().items()}}
    results.experiments = ExperimentsSummary(
        row=best.get("variant"), published_row=best.get("published_row"), seeds=experiments.settings.get("seeds"),
        duc=row.get("duc") or {}, benchmarks=benchmarks, folder=str(folder), models=best.get("models") or [])
    return results


def check_results(results: Any, where: str = "results") -> TrainingResults:
    """``results`` as `TrainingResults` (a dict as the training scripts write it, or the record itself).

    Raises:
        ModelCardError: ``results`` is not shaped like a training script's results (named by ``where``).
    """
    if isinstance(results, TrainingResults):
        return results
    try:
        return TrainingResults.from_dict(results, where)
    except ResultsError as error:
        raise ModelCardError(str(error)) from None
