"""Does Q-BERT learn on real DUC? k-fold fine-tuning on NIST's DUC 2006, scored against LEAD, QUERY-SIM and ORACLE.

Q-BERT starts from the shipped MiniLM encoder (no WikiRef pre-training: the "without data augmentation" setting) and
is fine-tuned with the project's own script, ``trainer_scripts/finetune_duc.py``, once per fold, each in a fresh
process: the 50 clusters are dealt into ``--folds`` folds (``--folds 5``: 10 test clusters each), every fold is tested
by a model that never saw its clusters, and the baselines summarize the same held-out clusters. The summaries of all
folds are then scored together on the whole year with the official DUC settings (``-n 2 -x -m -2 4 -u -c 95 -r 1000
-f A -p 0.5 -t 0 -l 250``): ROUGE-1 / ROUGE-2 recall x100 with the 95% bootstrap interval, and per fold. The run
target is Q-BERT's ROUGE-2 above QUERY-SIM's (the ``RESULT`` line; the script exits 0 either way).

Settings: the training recipes of the scripts (``trainer_scripts/recipes/*.yaml``, ``finetune_duc.py --recipe``),
printed at the start:

* default, ``--recipe sentence-encoder`` (the default recipe for the shipped sentence-transformers encoder; about 30
  minutes on 2 CPU cores with AMX, two folds at a time with one thread each; on a CPU without native bf16 it trains
  in fp32, about 10x longer): one epoch over every document of the training clusters, ``--packing sentences``, each
  sentence encoded alone with the query scored by its cosine to it (``--attention_scope sentence --query_similarity
  true``: the shipped encoder is a sentence-embedding model, see benchmarks/README.md), regression on each sentence's
  ROUGE-2 recall per word divided by the cluster's best (``--target_scaling per_word``), full fine-tuning, encoder lr
  2e-5 and head lr 1e-3, batches of 16 windows, attention dropout 0 and bf16 autocast;
* ``--paper`` (``--recipe paper``): the paper's settings: every document, overlapping windows (stride 100), raw ROUGE-2
  recall, one learning rate, 3 epochs of 32 windows, fp32. Hours on a CPU; meant for a GPU;
* ``--recipe FILE.yaml``: a recipe of one's own;
* ``--quick``: a smoke run (2 folds, 2 documents per training cluster), no pass/fail.

Then, unless ``--no-speed``: training windows per second of the fine-tuning step on real DUC 2006 windows, before (the
settings of the previous release: overlapping windows, fp32, attention dropout 0.1) and after (the defaults above),
measured in the same run, and the epoch time each gives on the training clusters of a fold.

    .venv/bin/python benchmarks/bench_duc_learning.py                 # the reduced setting
    .venv/bin/python benchmarks/bench_duc_learning.py --paper         # the paper's settings (GPU)
    .venv/bin/python benchmarks/bench_duc_learning.py --quick

Reads ``../shared/realdata/duc/2006`` (NIST's layout) or ``--duc``; exits 0 with a note when it is absent. NIST's
data is only read, never copied into the project: the converted folder and the runs go to ``--work`` (a temporary
folder by default).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DUC = ROOT.parent / "shared" / "realdata" / "duc" / "2006"

QUICK = ["--max_train_documents", "2"]

SYSTEMS = ("Q-BERT", "LEAD", "QUERY-SIM", "ORACLE")


def convert(duc: Path, work: Path) -> Path:
    """NIST's DUC 2006 folder → a converted year under ``work`` (reused when present)."""
    from wikiref_dataset.duc.reader import convert_duc, load_duc

    out = work / "duc2006"
    try:
        load_duc(out)
        return out
    except Exception:  # noqa: BLE001 - absent or partial: convert again
        pass
    convert_duc(duc, 2006, out)
    return out


def run_fold(converted: Path, folds: int, fold: int, settings: list[str], out: Path, seed: int, threads: int) -> dict:
    """One ``finetune_duc.py`` run in a fresh process with ``threads`` torch threads; its results.json (reused when
    the fold already finished)."""
    results = out / "results.json"
    if results.is_file():
        return json.loads(results.read_text())
    command = [sys.executable, str(ROOT / "trainer_scripts" / "finetune_duc.py"), "--duc_dirs", str(converted),
               "--folds", str(folds), "--fold", str(fold), *settings, "--seed", str(seed), "--baselines", "lead",
               "query-sim", "oracle", "--logging_steps", "10", "--disable_tqdm", "true", "--output_dir", str(out)]
    started = time.perf_counter()
    log = out.with_suffix(".log")
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w") as handle:
        code = subprocess.call(command, stdout=handle, stderr=subprocess.STDOUT, cwd=ROOT,
                               env={**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": str(threads)})
    if code != 0:
        sys.exit(f"fold {fold}: finetune_duc.py exited {code}; see {log}")
    data = json.loads(results.read_text())
    data["wall_seconds"] = round(time.perf_counter() - started, 1)
    results.write_text(json.dumps(data, indent=1))
    return data


def report_fold(fold: int, record: dict, done: int, folds: int, elapsed: float) -> None:
    """One line per finished fold: training size and speed, ROUGE-2 of every system, the ETA."""
    systems = record["evaluation"]["systems"]
    year = next(iter(systems["Q-BERT"]))
    r2 = {name: 100 * systems[name][year]["rouge_2_recall"] for name in SYSTEMS if name in systems}
    tuning = record["finetuning"]
    print(f"fold {fold}: {tuning['clusters']} train clusters, {tuning['windows']} windows, {tuning['steps']} "
          f"steps in {tuning['train_seconds']:.0f} s ({tuning['windows'] / tuning['train_seconds']:.2f} "
          f"windows/s), loss {tuning['train_loss']:.4f}; ROUGE-2 " +
          ", ".join(f"{name} {value:.2f}" for name, value in r2.items()) +
          f" | {done}/{folds} folds, {elapsed / 60:.1f} min, ETA {elapsed / done * (folds - done) / 60:.1f} min",
          flush=True)


def pooled_scores(converted: Path, fold_dirs: list[Path]) -> dict:
    """Every system's summaries of all folds, scored together on the whole year (official settings)."""
    from trainer_scripts.duc_evaluation import evaluate_systems, load_years, read_summaries_jsonl

    systems: dict[str, dict[str, str]] = {}
    for folder in fold_dirs:
        for system, summaries in read_summaries_jsonl(folder / "summaries.jsonl").items():
            systems.setdefault(system, {}).update(summaries)
    years = load_years([converted])
    evaluation = evaluate_systems(years, systems)
    return {system: by_year[years[0].year] for system, by_year in evaluation.scores.items()}


def cell(values: dict, measure: str) -> str:
    return (f"{100 * values[f'{measure}_recall']:.2f} [{100 * values[f'{measure}_recall_ci_low']:.2f}-"
            f"{100 * values[f'{measure}_recall_ci_high']:.2f}]")


def learning(args: argparse.Namespace, work: Path) -> bool:
    """The k-fold runs and their pooled table; whether Q-BERT's ROUGE-2 is above QUERY-SIM's."""
    import torch

    recipe = "paper" if args.paper else args.recipe
    settings = ["--recipe", recipe, *(QUICK if args.quick else []), *args.extra]
    folds = 2 if args.quick else args.folds
    converted = convert(args.duc, work)
    print(f"DUC 2006 converted in {converted}; {folds} folds; finetune_duc.py {' '.join(settings)}", flush=True)
    runs = work / ("quick" if args.quick else Path(recipe).stem)
    from concurrent.futures import ThreadPoolExecutor, as_completed

    jobs = max(1, min(args.jobs or (1 if torch.cuda.is_available() else 2), folds))
    threads = max(1, (os.cpu_count() or 1) // jobs)
    print(f"{jobs} fold(s) at a time, {threads} thread(s) each", flush=True)
    fold_dirs = [runs / f"fold{fold}" for fold in range(folds)]
    records: list[dict] = [{} for _ in range(folds)]
    started, done = time.perf_counter(), 0
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(run_fold, converted, folds, fold, settings, fold_dirs[fold], args.seed, threads): fold
                   for fold in range(folds)}
        for future in as_completed(futures):
            fold, record = futures[future], future.result()
            records[fold] = record
            done += 1
            report_fold(fold, record, done, folds, time.perf_counter() - started)
    pooled = pooled_scores(converted, fold_dirs)

    wall = time.perf_counter() - started
    print(f"\nDUC 2006, {folds}-fold over the 50 clusters, every cluster tested once (ROUGE recall x100, 95% CI):\n")
    print("| System | ROUGE-1 | ROUGE-2 | ROUGE-2 per fold |")
    print("|---|---|---|---|")
    for name in SYSTEMS:
        if name not in pooled:
            continue
        per_fold = []
        for record in records:
            values = record["evaluation"]["systems"][name]
            per_fold.append(f"{100 * next(iter(values.values()))['rouge_2_recall']:.2f}")
        print(f"| {name} | {cell(pooled[name], 'rouge_1')} | {cell(pooled[name], 'rouge_2')} | {' / '.join(per_fold)} |")
    windows = sum(record["finetuning"]["windows"] for record in records)
    seconds = sum(record["finetuning"]["train_seconds"] for record in records)
    print(f"\nwall time {wall / 60:.1f} min (training {seconds / 60:.1f} min: {windows} windows, "
          f"{windows / seconds:.2f} windows/s)")
    passed = pooled["Q-BERT"]["rouge_2_recall"] > pooled["QUERY-SIM"]["rouge_2_recall"]
    if not args.quick:
        print(f"RESULT Q-BERT ROUGE-2 {100 * pooled['Q-BERT']['rouge_2_recall']:.2f} vs QUERY-SIM "
              f"{100 * pooled['QUERY-SIM']['rouge_2_recall']:.2f}: target (Q-BERT above QUERY-SIM) "
              f"{'met' if passed else 'NOT met'}")
    (runs / "summary.json").write_text(json.dumps({"recipe": recipe, "settings": settings, "folds": folds,
                                                    "pooled": pooled,
                                                    "wall_seconds": wall}, indent=1))
    return passed


def speed(args: argparse.Namespace, work: Path) -> None:
    """Training windows/s of the fine-tuning step on real DUC windows: previous defaults vs the reduced setting."""
    import datasets
    import torch

    from trainer_scripts.common import ModelArguments, load_model_and_processor
    from trainer_scripts.finetuning import label_clusters
    from wikiref_dataset.duc.reader import load_duc

    rows = label_clusters(list(load_duc(convert(args.duc, work)))[:40], "oracle_score", scaling="cluster_max")
    batch_size, steps = 16, 2 if args.quick else 4
    print(f"\nTraining step, {batch_size} windows of real DUC 2006 (MiniLM, regression, {torch.get_num_threads()} "
          "threads):", flush=True)
    results = {}
    settings = (("before: stride packing, fp32, attention dropout 0.1", "stride", None, False, "window"),
                ("sentences packing, bf16, attention dropout 0", "sentences", 0.0, True, "window"),
                ("after (the reduced setting): the same, each sentence encoded alone (block-diagonal mask) and "
                 "scored with its cosine to the query", "sentences", 0.0, True, "sentence"))
    from trainer_scripts.common import cpu_has_native_bf16

    native = torch.cuda.is_available() or cpu_has_native_bf16()
    if not native:
        print("  (this CPU has no native bf16: the bf16 settings run in fp32 here, as the recipe does)", flush=True)
    for name, packing, dropout, bf16, scope in settings:
        bf16 = bf16 and native
        model, processor, _ = load_model_and_processor(ModelArguments(
            objective="regression", packing=packing, attention_dropout=dropout, attention_scope=scope,
            query_similarity=scope == "sentence"))
        windows = processor.prepare_dataset(datasets.Dataset.from_list(rows))
        collate = processor.collator()
        optimizer = torch.optim.AdamW(model.parameters(), lr=3e-5)
        model.train()
        times = []
        for step in range(steps + 1):
            batch = collate([windows[i] for i in range(step * batch_size, (step + 1) * batch_size)])
            start = time.perf_counter()
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
                loss = model(**batch).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            if step:  # the first step warms up
                times.append(time.perf_counter() - start)
        per_second = batch_size / (sum(times) / len(times))
        results[name] = (per_second, len(windows))
        print(f"  {name}: {per_second:.2f} windows/s; {len(windows)} windows per epoch of 40 clusters "
              f"(all documents) = {len(windows) / per_second / 60:.1f} min", flush=True)
    (before, before_windows), *_, (after, after_windows) = results.values()
    print(f"  windows/s {after / before:.2f}x; epoch time {(before_windows / before) / (after_windows / after):.2f}x "
          "shorter")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duc", type=Path, default=DEFAULT_DUC, help="NIST's DUC 2006 folder")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--jobs", type=int, default=None, help="folds trained at once, the CPU cores shared among "
                        "them (default: 1 on a GPU, else 2: on 2 cores two one-thread runs get more done than one "
                        "two-thread run)")
    parser.add_argument("--work", type=Path, default=None, help="converted data and runs (default: a temp folder); "
                        "a finished fold found there is reused")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--paper", action="store_true", help="--recipe paper: the paper's settings (hours on CPU)")
    parser.add_argument("--recipe", default="sentence-encoder", help="the training recipe (a name or a .yaml file; "
                        "default sentence-encoder, the default recipe of the shipped encoder)")
    mode.add_argument("--quick", action="store_true", help="smoke run")
    parser.add_argument("--no-speed", dest="speed", action="store_false", help="skip the windows/s comparison")
    parser.add_argument("--no-learning", dest="learning", action="store_false", help="only the windows/s comparison")
    parser.add_argument("extra", nargs="*", help="more finetune_duc.py options (after --)")
    args = parser.parse_args()
    if not args.duc.is_dir():
        print(f"{args.duc} not found: DUC 2006 is NIST's and is not shipped; nothing to measure")
        return 0
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    with tempfile.TemporaryDirectory(prefix="bench_duc_learning_") as temporary:
        work = args.work or Path(temporary)
        work.mkdir(parents=True, exist_ok=True)
        if args.learning:
            learning(args, work)
        if args.speed:
            speed(args, work)
    return 0  # a benchmark reports; a missed target is its RESULT line, not an exit status


if __name__ == "__main__":
    sys.exit(main())
