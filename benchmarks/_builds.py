"""Run one build (WikiRef, PSG2SUM or AQuaMuSe) in a child process and report it: wall time per stage, peak RSS, the
closing counts and each task's counters (``input_bytes``, pages, statements, revisions, documents ...) read from
datatrove's per-task stats files. Shared by ``bench_memory.py`` and ``bench_scale.py``.

The child is ``python benchmarks/_builds.py '<json spec>'``; it prints one ``BENCH-RESULT <json>`` line last. Peak RSS
is ``resource.getrusage``'s ``ru_maxrss`` of the child itself and of its own children (datatrove's worker processes
when ``workers`` > 1), read when the build has finished, so it covers every stage. Numeric libraries are limited to
one thread in the child (the machine is shared; the scaling benchmark gets its parallelism from ``workers``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS",
                    "TOKENIZERS_PARALLELISM")
STAGES = {"wikiref": ("statements", "documents", "statistics", "curation", "dataset"),
          "psg2sum": ("pairs", "dataset"),
          "aquamuse": ("questions", "corpus", "examples")}
PSG2SUM_MIN_SCORE = 0.3  # the real histories have no pair at the default λ = 0.6 (see docs/psg2sum.md)


def run_child(build: str, inputs: dict[str, list[str]], out: Path, workers: int, tasks: int,
              timeout: float | None = None, sort_buffer_mb: float | None = None,
              options: dict[str, Any] | None = None, environment: dict[str, str] | None = None) -> dict[str, Any]:
    """Run ``build`` on ``inputs`` into ``out`` (a fresh folder; its work folder beside it) in a child process and
    return its report; ``options`` are more fields of the build's config (e.g. AQuaMuSe's ``documents_per_batch``),
    ``environment`` more variables of the child's. Raises ``RuntimeError`` with the child's output tail when it
    fails."""
    spec = {"build": build, "inputs": inputs, "out": str(out), "workers": workers, "tasks": tasks,
            "options": options or {}}
    variables = dict(os.environ, HF_HUB_OFFLINE="1", PYTHONPATH=str(ROOT))
    variables |= {name: ("false" if name == "TOKENIZERS_PARALLELISM" else "1") for name in THREAD_VARIABLES}
    if sort_buffer_mb is not None:
        variables["WIKIREF_SORT_BUFFER_MB"] = str(sort_buffer_mb)
    variables |= environment or {}
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), json.dumps(spec)], capture_output=True,
                          text=True, env=variables, timeout=timeout, cwd=str(ROOT))
    lines = [line for line in done.stdout.splitlines() if line.startswith("BENCH-RESULT ")]
    if done.returncode or not lines:
        tail = (done.stdout + done.stderr)[-3000:]
        raise RuntimeError(f"{build} build (workers {workers}, tasks {tasks}) failed with exit {done.returncode}:\n{tail}")
    return json.loads(lines[-1][len("BENCH-RESULT "):])


def task_counters(work: Path, stage: str) -> list[dict[str, float]]:
    """Per task (rank order), every counter of every step of ``stage`` summed over the steps."""
    tasks = []
    for path in sorted((work / "logs" / stage / "stats").glob("*.json")):
        counters: dict[str, float] = {}
        for step in json.loads(path.read_text(encoding="utf-8")):
            for key, value in step.get("stats", {}).items():
                counters[key] = counters.get(key, 0) + float(value["total"] if isinstance(value, dict) else value)
        tasks.append(counters)
    return tasks


def _peak_rss_mib() -> dict[str, float]:
    import resource

    to_mib = 1 / 1024  # ru_maxrss is in KiB on Linux
    return {"self": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * to_mib,
            "children": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * to_mib}


def _wikiref(spec: dict[str, Any]) -> dict[str, Any]:
    from wikiref_dataset.wikiref.build import BuildConfig, run_build

    config = BuildConfig(dumps=spec["inputs"]["dumps"], warcs=spec["inputs"]["warcs"], output_dir=spec["out"],
                         tasks=spec["tasks"], workers=spec["workers"], **spec["options"])
    started = time.perf_counter()
    summary = run_build(config, progress=False)
    total = time.perf_counter() - started
    seconds = {"index WARCs + setup": total - sum(summary.seconds.values()), **summary.seconds}
    return {"seconds": seconds, "counts": summary.counts, "splits": summary.splits, "work": str(config.work)}


def _psg2sum(spec: dict[str, Any]) -> dict[str, Any]:
    from wikiref_dataset.psg2sum import pipeline
    from wikiref_dataset.psg2sum.mining import MiningConfig

    seconds: dict[str, float] = {}
    make_executor = pipeline.make_executor

    class Timed:  # the stage's executor, its run() timed under the stage's name
        def __init__(self, config: Any, stage: str, steps: Any, tasks: int, *args: Any) -> None:
            self.stage, self.executor = stage, make_executor(config, stage, steps, tasks, *args)

        def run(self) -> Any:
            started = time.perf_counter()
            try:
                return self.executor.run()
            finally:
                seconds[self.stage] = time.perf_counter() - started

    pipeline.make_executor = Timed
    config = pipeline.Psg2SumBuildConfig(spec["inputs"]["dumps"], output_dir=spec["out"], tasks=spec["tasks"],
                                         workers=spec["workers"], mining=MiningConfig(min_score=PSG2SUM_MIN_SCORE),
                                         **spec["options"])
    summary = pipeline.run_psg2sum_build(config)
    return {"seconds": seconds, "counts": summary.counts, "splits": summary.splits, "work": str(config.work)}


def _aquamuse(spec: dict[str, Any]) -> dict[str, Any]:
    from wikiref_dataset.aquamuse.build import AQuaMuSeBuildConfig, run_aquamuse

    config = AQuaMuSeBuildConfig(nq=spec["inputs"]["nq"], corpus=spec["inputs"]["corpus"], output_dir=spec["out"],
                                 tasks=spec["tasks"], workers=spec["workers"], device="cpu", **spec["options"])
    summary = run_aquamuse(config, progress=False)
    return {"seconds": summary.seconds, "counts": summary.counts, "splits": summary.splits, "work": str(config.work)}


def child(spec: dict[str, Any]) -> int:
    started = time.perf_counter()
    report = {"wikiref": _wikiref, "psg2sum": _psg2sum, "aquamuse": _aquamuse}[spec["build"]](spec)
    report["wall_seconds"] = time.perf_counter() - started
    report["peak_rss_mib"] = _peak_rss_mib()
    work = Path(report["work"])
    stage_logs = sorted(path.name for path in (work / "logs").iterdir()) if (work / "logs").is_dir() else []
    report["tasks"] = {stage: task_counters(work, stage) for stage in stage_logs}
    print("BENCH-RESULT " + json.dumps(report), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(child(json.loads(sys.argv[1])))
