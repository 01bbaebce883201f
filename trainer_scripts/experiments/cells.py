"""A results table's numbers: a row's runs summarised over the seeds (:func:`summarize_runs`), how a cell prints
that summary (:func:`ours_cell`) and the Markdown table around the cells (:func:`markdown_table`).

The runner's report (``results.md``, ``results.json``) and ``wikiref rescore`` (``rescore.md``, ``rescore.json``)
both print these cells, so they live here, below both, and a rescored row reads as the runner's does. This module
imports nothing of the runner."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import Any


def summarize_runs(runs: Sequence[Mapping[str, Any]], measures: Sequence[str],
                   interval: bool = True) -> dict[str, Any] | None:
    """Mean, sample standard deviation (0 for one run) and the 95% interval of the median run, per measure, over
    ``runs`` (metric dicts, 0-1 scale); ``None`` when there is none."""
    if not runs:
        return None
    summary: dict[str, Any] = {"runs": len(runs)}
    for measure in measures:
        key = measure if measure.endswith("_f") else f"{measure}_recall"
        values = [float(run[key]) for run in runs if isinstance(run.get(key), (int, float))]
        if not values:
            continue
        entry = {"mean": statistics.fmean(values), "std": statistics.stdev(values) if len(values) > 1 else 0.0,
                 "values": values}
        if interval:
            ranked = sorted((run for run in runs if isinstance(run.get(key), (int, float))),
                            key=lambda run: float(run[key]))
            median = ranked[(len(ranked) - 1) // 2]
            if isinstance(median.get(f"{key}_ci_low"), (int, float)):
                entry["ci_median_run"] = [median[f"{key}_ci_low"], median[f"{key}_ci_high"]]
                entry["median_run"] = median.get("unit")
        summary[measure] = entry
    return summary


def x100(value: Any) -> str:
    """A 0-1 score as the tables print it (``40.83``), or ``-``."""
    return f"{100 * float(value):.2f}" if isinstance(value, (int, float)) else "-"


def ours_cell(summary: Mapping[str, Any] | None, measure: str) -> str:
    """``mean ± std [CI of the median run]`` x100, or ``-``."""
    entry = (summary or {}).get(measure)
    if not entry:
        return "-"
    text = x100(entry["mean"])
    if summary.get("runs", 1) > 1:
        text += f" ± {x100(entry['std'])}"
    if entry.get("ci_median_run"):
        low, high = entry["ci_median_run"]
        text += f" [{x100(low)}–{x100(high)}]"
    return text


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A Markdown table of ``header`` and ``rows`` of cells (a ``|`` inside a cell escaped)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines)
