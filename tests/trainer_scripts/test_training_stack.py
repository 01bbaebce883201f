"""The core install: pre-training on a built WikiRef folder, fine-tuning and the DUC evaluation on converted DUC folders
run with the dataset builders' packages (the ``build`` extra: spaCy, datatrove, trafilatura, warcio, mwparserfromhell,
faiss, sentence-transformers, duckdb, ...) and the cluster engines not installed; the data subcommands then stop with
one line naming ``pip install "wikiref[build]"``.

"Not installed" is simulated in a fresh interpreter by ``tests/not_installed.py``; the folders the scripts read are
built and converted in this process (that is the build extra's work)."""

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from not_installed import prelude

from wikiref_dataset.command import MODULE_EXTRAS, add_subcommand, dispatch

ROOT = Path(__file__).resolve().parents[2]
NAMED_IN_THE_ISSUE = ("spacy", "datatrove", "trafilatura", "warcio", "mwparserfromhell", "faiss",
                      "sentence_transformers", "duckdb", "cdx_toolkit", "surt", "mwxml", "py7zr", "ray", "lxml")
NOT_INSTALLED = tuple(sorted(MODULE_EXTRAS))  # every top-level module of the extras, those of the issue among them
BUILD_LINE = 'pip install "wikiref[build]"'

FAST = ["--use_cpu", "--max_steps", "2", "--per_device_train_batch_size", "4", "--max_length", "128",
        "--disable_tqdm", "true", "--learning_rate", "1e-3", "--seed", "0"]

# pretrain -> finetune -> evaluate (the script, then `wikiref duc evaluate` on the fine-tuned model), as a user of the
# core install runs them; prints one JSON line.
TRAINING_CHAIN = r'''
import json
import torch

torch.set_num_threads(1)
args = json.loads(sys.argv[1])
from trainer_scripts import evaluate_duc, finetune_duc, pretrain_wikiref
from trainer_scripts.cli import main as wikiref

status = {}
status["pretrain"] = pretrain_wikiref.main(["--dataset", args["wikiref"], "--model_name_or_path", args["bert"],
                                            "--output_dir", args["pretrained"], "--run_kind", "demo", *args["fast"]])
status["finetune"] = finetune_duc.main(["--model_name_or_path", args["pretrained"], "--duc_dirs", *args["duc"],
                                        "--test_year", "2007", "--output_dir", args["finetuned"], *args["fast"],
                                        "--save_strategy", "steps", "--save_steps", "2"])
datasets_ = [option for path in args["duc"] for option in ("--dataset", path)]
status["baselines"] = evaluate_duc.main([*datasets_, "--baseline", "all", "--out", args["baselines_json"], "--quiet"])
status["model"] = wikiref(["duc", "evaluate", *datasets_[2:], "--model", args["finetuned"], "--out", args["model_json"],
                           "--quiet"])
print("RESULT " + json.dumps({"status": status, "loaded": _helper.loaded(NOT_INSTALLED)}))
'''

# A copy of each folder the scripts wrote, loaded by its own code where this project is not installed at all: sentence
# lists need nothing more; raw text needs spaCy alone (the folder's text.py), or says which one package is missing.
FOLDER_PIPELINES = r'''
import json
from transformers import pipeline

raw, folders = json.loads(sys.argv[1]), sys.argv[2:]
summaries, raw_summaries = {}, {}
for folder in folders:
    summarize = pipeline("query-focused-summarization", model=folder, trust_remote_code=True)
    output = summarize(query=["The king", "Early life"],
                       documents=[["The king was born in the city.", "A river runs in the city."]])
    summaries[folder] = [type(summarize).__module__.split(".")[0], len(output["sentences"])]
    try:
        output = summarize(query=raw["query"], documents=raw["documents"])
        raw_summaries[folder] = {"summary": output["summary"], "sentences": len(output["sentences"])}
    except ImportError as error:
        raw_summaries[folder] = {"error": str(error)}
print("RESULT " + json.dumps({"summaries": summaries, "raw": raw_summaries, "loaded": _helper.loaded(NOT_INSTALLED)}))
'''

# Raw-text documents for the folders' pipelines: the sentence splitter's rules matter (an abbreviation, an exclamation,
# a blank line after a heading without a full stop).
RAW = {"query": ["The king", "Early life"],
       "documents": ["Early years\n\nDr. Smith said the king was born in the city. He was crowned in 1950! A river "
                     "runs in the city.", "The cat sat on the mat. The king's city lies on a river."]}

# Importing the model side and building the `wikiref` parser, nothing run.
IMPORTS = r'''
import json
import trainer_scripts.cli, trainer_scripts.evaluate_duc, trainer_scripts.finetune_duc, trainer_scripts.pretrain_wikiref
import trainer_scripts.model_card, trainer_scripts.common
import modeling_qbert
import wikiref_dataset.baselines, modeling_qbert.inference, modeling_qbert.pipeline_qfs, wikiref_dataset.selection
import modeling_qbert.sparse, modeling_qbert.trainer
import wikiref_dataset.wikiref.dataset, wikiref_dataset.duc.reader, wikiref_dataset.process.folders, wikiref_dataset.metrics
import wikiref_dataset.oracle, wikiref_dataset.rouge, wikiref_dataset.stopwords, wikiref_dataset.wiki
import wikiref_dataset.aquamuse.embedding

modeling_qbert.register()
trainer_scripts.cli.build_parser().format_help()
print("RESULT " + json.dumps({"loaded": _helper.loaded(NOT_INSTALLED)}))
'''

# Data subcommands (build extra) and a model-side one (core) through the `wikiref` entry point.
CLI = r'''
import json
from trainer_scripts.cli import main

fixtures, out = sys.argv[1], sys.argv[2]
status = {
    "duc convert": main(["duc", "convert", fixtures + "/duc/duc2006", "--year", "2006", "--out", out + "/duc",
                         "--quiet"]),
    "statements": main(["statements", fixtures + "/wiki/tiny-dump.xml", "--out", out + "/statements", "--quiet"]),
    "rouge": main(["rouge", out + "/items.jsonl", "--json"]),
}
print("RESULT " + json.dumps({"status": status, "loaded": _helper.loaded(NOT_INSTALLED)}))
'''


def _run_without_extras(script: str, *args: str, tmp_path: Path, timeout: int = 240,
                        hidden: tuple[str, ...] = NOT_INSTALLED, cwd: Path = ROOT) -> tuple[dict, str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_CACHE": str(tmp_path / "hf_cache"),
           "HF_MODULES_CACHE": str(tmp_path / "hf_modules"), "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    completed = subprocess.run([sys.executable, "-c", prelude(hidden) + script, *args], cwd=cwd, env=env,
                               capture_output=True, text=True, timeout=timeout)
    assert completed.returncode == 0, completed.stderr[-4000:]
    lines = [line for line in completed.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, completed.stdout[-2000:] + completed.stderr[-2000:]
    return json.loads(lines[-1].removeprefix("RESULT ")), completed.stderr


def test_the_hidden_set_covers_the_build_and_cluster_packages():
    assert set(NAMED_IN_THE_ISSUE) <= set(NOT_INSTALLED)
    assert {MODULE_EXTRAS[name] for name in ("spacy", "datatrove", "faiss", "duckdb")} == {"build"}
    assert MODULE_EXTRAS["ray"] == "cluster"


def test_training_and_evaluation_run_without_the_build_extra(tmp_path, demo_wikiref, tiny_bert_dir, duc_years):
    """pretrain_wikiref.py on a built WikiRef folder, finetune_duc.py on the converted DUC fixture years, then
    evaluate_duc.py (baselines) and `wikiref duc evaluate` (the fine-tuned model), in a process where none of the
    extras' packages can be imported: all succeed and none of them was imported."""
    args = {"wikiref": str(demo_wikiref), "bert": str(tiny_bert_dir), "duc": [duc_years[y] for y in (2005, 2006, 2007)],
            "pretrained": str(tmp_path / "pretrained"), "finetuned": str(tmp_path / "finetuned"),
            "baselines_json": str(tmp_path / "baselines.json"), "model_json": str(tmp_path / "model.json"),
            "fast": FAST}
    report, _ = _run_without_extras(TRAINING_CHAIN, json.dumps(args), tmp_path=tmp_path)
    assert report == {"status": {"pretrain": 0, "finetune": 0, "baselines": 0, "model": 0}, "loaded": []}

    pretrained = json.loads((tmp_path / "pretrained" / "results.json").read_text())
    assert pretrained["pretraining"]["steps"] == 2
    assert pretrained["pretraining"]["examples"] == {"train": 17, "validation": 1}
    finetuned = json.loads((tmp_path / "finetuned" / "results.json").read_text())
    assert finetuned["finetuning"]["steps"] == 2
    assert (tmp_path / "finetuned" / "figures" / "duc_rouge2.png").is_file()  # the model card's plot (core)
    baselines = json.loads((tmp_path / "baselines.json").read_text())["systems"]
    assert set(baselines) == {"LEAD", "QUERY-SIM", "ORACLE"}  # QUERY-SIM's stop words without spaCy
    assert all(baselines[name]["2006"]["rouge_2_recall"] > 0 for name in baselines)
    model = json.loads((tmp_path / "model.json").read_text())["systems"]
    assert list(model) == ["finetuned"] and set(model["finetuned"]) == {"2006", "2007"}

    # Self-contained folders: copies of both (and of a checkpoint) load as a pipeline, with trust_remote_code, in a
    # process where neither this project's packages nor the build extra can be imported.
    copies = tmp_path / "copies"
    for name in ("pretrained", "finetuned"):
        shutil.copytree(tmp_path / name, copies / name)
        assert "custom_pipelines" in json.loads((copies / name / "config.json").read_text())
    shutil.copytree(tmp_path / "finetuned" / "checkpoint-2", copies / "checkpoint")
    folders = sorted(str(path) for path in copies.iterdir())
    project = ("modeling_qbert", "wikiref_dataset", "trainer_scripts")
    report, _ = _run_without_extras(FOLDER_PIPELINES, json.dumps(RAW), *folders, tmp_path=tmp_path, cwd=copies,
                                    hidden=(*NOT_INSTALLED, *project))
    assert report["summaries"] == {folder: ["transformers_modules", 2] for folder in folders}
    assert report["loaded"] == []
    # Raw text without spaCy: one error naming that one package (pre-split documents above needed nothing).
    assert all(result == {"error": "splitting a raw-text document into sentences needs spaCy: pip install spacy (or "
                                   "pass the document as a list of sentences)"} for result in report["raw"].values())

    # With spaCy alone (no spacy-lookups-data, no other extra, no project): raw text is split by the folder's own
    # splitter and summarized as the installed package summarizes it.
    from transformers import pipeline

    from modeling_qbert import TASK, QueryFocusedSummarizationPipeline

    spacy_alone = tuple(name for name in NOT_INSTALLED if name not in ("spacy", "thinc"))
    report, stderr = _run_without_extras(FOLDER_PIPELINES, json.dumps(RAW), *folders, tmp_path=tmp_path, cwd=copies,
                                         hidden=(*spacy_alone, *project))
    assert "spacy_lookups_data" in spacy_alone and "lemma" not in stderr  # no news about lemmas, which it never uses
    for folder in folders:
        installed = pipeline(TASK, model=folder, pipeline_class=QueryFocusedSummarizationPipeline)
        expected = installed(query=RAW["query"], documents=RAW["documents"])
        assert report["raw"][folder] == {"summary": expected["summary"], "sentences": 6}, folder


def test_model_side_imports_without_the_extras(tmp_path):
    """Importing the training scripts, the model package and the data modules they use, and building the `wikiref`
    parser (every subcommand registered), needs none of the extras."""
    report, _ = _run_without_extras(IMPORTS, tmp_path=tmp_path, timeout=120)
    assert report == {"loaded": []}


def test_data_subcommands_name_the_build_extra(tmp_path):
    """Without the build extra, `wikiref duc convert` and `wikiref statements` stop with one line naming it (exit 1,
    nothing written); `wikiref rouge` (the metric, core) still runs."""
    (tmp_path / "items.jsonl").write_text(json.dumps({"prediction": "a cat sat", "references": ["the cat sat"]}) + "\n")
    report, stderr = _run_without_extras(CLI, str(ROOT / "tests" / "fixtures"), str(tmp_path), tmp_path=tmp_path,
                                         timeout=120)
    assert report == {"status": {"duc convert": 1, "statements": 1, "rouge": 0}, "loaded": []}
    errors = [line for line in stderr.splitlines() if "error:" in line]
    assert [line.split(":")[0] for line in errors] == ["wikiref duc convert", "wikiref statements"]
    assert all(line.endswith(BUILD_LINE) for line in errors), errors
    assert not (tmp_path / "duc").exists() and not (tmp_path / "statements").exists()


@pytest.mark.parametrize(("module", "extra"), [("spacy", "build"), ("datatrove.pipeline", "build"), ("ray", "cluster")])
def test_dispatch_turns_a_missing_extra_into_one_line(capsys, module, extra):
    def run(args):
        raise ModuleNotFoundError(f"No module named {module!r}", name=module)

    parser = argparse.ArgumentParser(prog="wikiref")
    add_subcommand(parser.add_subparsers(dest="command"), "thing", help="h", description="d", example="wikiref thing",
                   func=run)
    assert dispatch(parser, ["thing"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("wikiref thing: error: ")
    assert err.rstrip().endswith(f'pip install "wikiref[{extra}]"')


def test_dispatch_lets_other_missing_modules_through_as_unexpected(capsys):
    def run(args):
        raise ModuleNotFoundError("No module named 'nothing_of_ours'", name="nothing_of_ours")

    parser = argparse.ArgumentParser(prog="wikiref")
    add_subcommand(parser.add_subparsers(dest="command"), "thing", help="h", description="d", example="wikiref thing",
                   func=run)
    assert dispatch(parser, ["thing"]) == 1
    err = capsys.readouterr().err
    assert "unexpected" in err and "wikiref[" not in err
