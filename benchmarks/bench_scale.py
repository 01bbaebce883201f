"""Scaling of each build's stages from 1 to 2 workers on an input N times (default 10) the shipped samples, the bytes
each task reads, and the projected cost of the full inputs.

Each build runs twice in a child process (``_builds.py``), with the same fixed number of tasks (``--tasks``, default
4: the output does not depend on the workers) and ``--workers`` 1, then 2 (numeric libraries on one thread per
process). Reported per stage: wall time with 1 and 2 workers and the speedup (target >= 1.7x with 2 workers on 2
free cores, over the parallel stages; those run in the driver, WikiRef's WARC indexing and AQuaMuSe's questions
and examples, and WikiRef's and PSG2SUM's one-task dataset stages are serial by design and shown for
completeness), and the bytes each task read (the steps' ``input_bytes`` counters in datatrove's per-task stats,
from the 1-worker run). Inputs come from ``scale_inputs.py`` (made once, then reused).

Projection, per stage, from the 1-worker run (one core): rate = units / seconds, time = full-scale units / rate,
printed as core-hours and as hours on 16 and 128 cores at the parallel efficiency measured here (the 2-worker
speedup / 2). Full-scale units and their assumptions:

* WikiRef (English Wikipedia, ~22 GB of bz2 ``pages-articles``, ~6.9M articles): stage 1 by compressed dump bytes;
  stage 2 by statements looked up, statements per dump byte as in the inputs (their real articles are long and
  well cited: an upper estimate); stages 3-4 by the paper's ~2,000,000 raw examples (statement + archived page;
  the measured time also reads the statements whose page is missing: an upper estimate); stage 5 by the paper's
  280,724 curated examples. WARC indexing depends on the capture collection, not on the dump: not projected.
* PSG2SUM (the full history, ~1e9 revisions): mining by revisions; the dataset stage by pair records (the paper's
  100,118 pairs).
* AQuaMuSe (a Common Crawl snapshot, ~90,000 WARC files, ~3 billion pages): questions by Natural Questions lines
  (~315,000: train + dev); the corpus stage by documents (MiniLM on the CPU here; a GPU changes it, see
  ``bench_aquamuse.py``); the examples stage by matched documents at the inputs' matched share (the samples were
  chosen to match: far above a real crawl's, an upper estimate).

Per-task fixed costs (process start, loading spaCy or MiniLM) are in the measured times, so small inputs understate
the rates. Timings need a quiet machine: the script reports and exits 0, whatever the numbers.

    .venv/bin/python benchmarks/bench_scale.py                            # the three builds at 10x (~6 minutes)
    .venv/bin/python benchmarks/bench_scale.py --build wikiref --scale 2  # a subset
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import _common
from _builds import run_child
from scale_inputs import BUILDS, DEFAULT_OUT, MissingData, input_bytes, make_inputs

WIKIPEDIA_DUMP_BYTES = 22e9
WIKIPEDIA_ARTICLES = 6.9e6
WIKIREF_RAW_EXAMPLES = 2_000_000
WIKIREF_CURATED = 280_724
HISTORY_REVISIONS = 1e9
PSG2SUM_PAIRS = 100_118
NQ_LINES = 307_373 + 7_830
CC_PAGES = 3e9
CC_WARC_FILES = 90_000
PROJECTED_CORES = (16, 128)
SERIAL = {"wikiref": {"index WARCs + setup", "dataset"}, "psg2sum": {"dataset"},  # one task, or the driver
          "aquamuse": {"questions", "examples"}}


def _total(tasks: list[dict[str, float]], key: str) -> float:
    return sum(task.get(key, 0.0) for task in tasks)


def projections(build: str, report: dict[str, Any], inputs: dict[str, list[str]]) -> list[tuple[str, str, float, float]]:
    """(stage, unit, measured units, full-scale units) of each projected stage."""
    counts, tasks = report["counts"], report["tasks"]
    if build == "wikiref":
        dump_bytes = _total(tasks.get("statements", []), "input_bytes")
        statements = counts.get("raw statements", 0)
        joined = counts.get("examples joined", 0)
        return [("statements", "dump bz2 bytes", dump_bytes, WIKIPEDIA_DUMP_BYTES),
                ("documents", "statements", statements,
                 statements / dump_bytes * WIKIPEDIA_DUMP_BYTES if dump_bytes else 0.0),
                ("statistics", "raw examples", joined, WIKIREF_RAW_EXAMPLES),
                ("curation", "raw examples", joined, WIKIREF_RAW_EXAMPLES),
                ("dataset", "curated examples", counts.get("examples curated", 0), WIKIREF_CURATED)]
    if build == "psg2sum":
        return [("pairs", "revisions", counts.get("revisions", 0), HISTORY_REVISIONS),
                ("dataset", "pair records", counts.get("pairs", 0) + counts.get("duplicates", 0), PSG2SUM_PAIRS)]
    documents = counts.get("corpus documents", 0)
    matched = counts.get("matched documents", 0)
    return [("questions", "NQ lines", counts.get("NQ lines read", 0), NQ_LINES),
            ("corpus", "documents", documents, CC_PAGES),
            ("examples", "matched documents", matched, matched / documents * CC_PAGES if documents else 0.0)]


def _table(rows: list[tuple], header: tuple) -> None:
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        print("  " + "  ".join(str(cell).rjust(width) for cell, width in zip(row, widths, strict=True)))


def _bytes(value: float) -> str:
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if value >= size:
            return f"{value / size:.1f} {unit}"
    return f"{value:.0f} B"


def report_build(build: str, runs: dict[int, dict[str, Any]], inputs: dict[str, list[str]], tasks: int,
                 target: float) -> list[str]:
    one, two = runs[1], runs.get(2)
    print(f"\n{build}: {input_bytes(inputs) / 1e6:.1f} MB of input, {tasks} tasks")
    rows = []
    for stage, seconds in one["seconds"].items():
        other = two["seconds"].get(stage) if two else None
        speedup = seconds / other if other else None
        per_task = [task.get("input_bytes", 0.0) for task in one["tasks"].get(stage, [])]
        shares = ", ".join(_bytes(value) for value in per_task) if any(per_task) else "-"
        rows.append((stage + (" (serial)" if stage in SERIAL[build] else ""), f"{seconds:.2f}",
                     f"{other:.2f}" if other else "-", f"{speedup:.2f}x" if speedup else "-", shares))
    total_two = two["wall_seconds"] if two else None
    rows.append(("whole build", f"{one['wall_seconds']:.2f}", f"{total_two:.2f}" if total_two else "-",
                 f"{one['wall_seconds'] / total_two:.2f}x" if total_two else "-", ""))
    _table(rows, ("stage", "1 worker s", "2 workers s", "speedup", "bytes read per task (1-worker run)"))
    results = []
    parallel = [stage for stage in one["seconds"] if stage not in SERIAL[build] and two and two["seconds"].get(stage)]
    if parallel:
        speedup = sum(one["seconds"][s] for s in parallel) / sum(two["seconds"][s] for s in parallel)
        verdict = "met" if speedup >= target else "missed"
        results.append(f"RESULT {build}: parallel stages ({', '.join(parallel)}) 2 workers / 1 worker speedup "
                       f"{speedup:.2f}x (target >= {target:g}x: {verdict}; needs 2 free cores)")
    efficiency = {stage: min(1.0, one["seconds"][stage] / two["seconds"][stage] / 2)
                  for stage in parallel}
    print(f"\n  projection ({', '.join(f'{cores} cores' for cores in PROJECTED_CORES)}: core-hours / cores / "
          "efficiency, the efficiency being the 2-worker speedup / 2)")
    rows = []
    for stage, unit, measured, full in projections(build, one, inputs):
        seconds = one["seconds"].get(stage)
        if not seconds or not measured:
            rows.append((stage, unit, f"{measured:,.0f}", "-", f"{full:,.0f}", "-", *["-"] * len(PROJECTED_CORES)))
            continue
        rate = measured / seconds
        core_hours = full / rate / 3600
        scaled = efficiency.get(stage, 1.0) if stage not in SERIAL[build] else None
        walls = [f"{core_hours / cores / scaled:,.1f} h" if scaled else f"{core_hours:,.1f} h (serial)"
                 for cores in PROJECTED_CORES]
        rows.append((stage, unit, f"{measured:,.0f}", f"{rate:,.1f}/s", f"{full:,.0f}", f"{core_hours:,.1f}", *walls))
    _table(rows, ("stage", "unit", "measured", "rate (1 core)", "full scale", "core-hours",
                  *[f"on {cores} cores" for cores in PROJECTED_CORES]))
    if build == "wikiref":
        print(f"  full dump: {WIKIPEDIA_ARTICLES:,.0f} articles, {_bytes(WIKIPEDIA_DUMP_BYTES)}; stage 1 reads "
              f"{_bytes(WIKIPEDIA_DUMP_BYTES / tasks)} per task with {tasks} tasks (one multistream byte range each)")
    elif build == "aquamuse":
        print(f"  Common Crawl snapshot: {CC_WARC_FILES:,} WARC files, {CC_PAGES:,.0f} pages, "
              f"{CC_PAGES / CC_WARC_FILES:,.0f} pages per file: one or more whole files per corpus task")
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", choices=[*BUILDS, "all"], default="all")
    parser.add_argument("--scale", type=int, default=10, help="input size, times the samples (default 10)")
    parser.add_argument("--tasks", type=int, default=4, help="tasks of every parallel stage (default 4)")
    parser.add_argument("--workers", default="1,2", help="worker counts to run (default 1,2)")
    parser.add_argument("--target", type=float, default=1.7, help="speedup target with 2 workers (default 1.7)")
    parser.add_argument("--inputs", default=str(DEFAULT_OUT), help=f"where inputs are made (default {DEFAULT_OUT})")
    args = parser.parse_args(argv)
    workers = sorted({int(value) for value in args.workers.split(",")})
    print(f"bench_scale: {_common.machine_line()}; {args.scale}x inputs, {args.tasks} tasks, workers {workers}")
    results: list[str] = []
    scratch = Path(tempfile.mkdtemp(prefix="wikiref-bench-scale-"))
    try:
        for build in BUILDS if args.build == "all" else [args.build]:
            try:
                inputs = make_inputs(build, args.scale, args.inputs)
            except MissingData as error:
                print(f"{build}: {error}; skipped")
                continue
            runs = {}
            for count in workers:
                out = scratch / f"{build}-w{count}" / "out"
                runs[count] = run_child(build, inputs, out, workers=count, tasks=args.tasks)
                shutil.rmtree(out.parent, ignore_errors=True)
            if 1 not in runs:
                print(f"{build}: the projection needs the 1-worker run (--workers 1,...)")
                continue
            results += report_build(build, runs, inputs, args.tasks, args.target)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print()
    for line in results:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
