"""Publish a trained Q-BERT model, a built dataset folder and the DUC ROUGE metric on the Hugging Face Hub.

Usage (each part optional; the Hub endpoint is ``HF_ENDPOINT``, the token ``--token`` or the usual login)::

    python trainer_scripts/push_to_hub.py --model_dir out/qbert-duc --model_repo org/qbert-wikiref \
        --dataset_dir out/wikiref --dataset_repo org/wikiref --metric_repo org/duc_rouge

- **model** (``--model_dir`` → ``--model_repo``): the weights, ``config.json`` with ``auto_map`` and the custom code
  files it names (so ``AutoModel.from_pretrained(repo, trust_remote_code=True)`` works without this package), the
  tokenizer, ``processor_config.json``, the run's ``results.json`` and a ``README.md`` model card rendered from it
  (``trainer_scripts/model_card.py``), in one commit. Trainer checkpoints and optimizer states are left out.
- **dataset** (``--dataset_dir`` → ``--dataset_repo``): a folder written by ``wikiref build`` (or the PSG2SUM
  builder): ``README.md`` whose ``configs:`` block names the Parquet files, ``data/``, ``figures/``, the statistics;
  hidden files (the project's manifest) and a ``work/`` folder left by older versions stay local (the build's work
  folder is beside it). ``load_dataset("org/wikiref")`` then loads it.
- **metric** (``--metric_repo``): the DUC ROUGE `evaluate` module as a Space (where ``evaluate.load`` looks for
  community metrics), so that ``evaluate.load("org/duc_rouge")`` works for others who ``pip install wikiref``. The
  module file is named after the repo (``duc_rouge.py`` for ``org/duc_rouge``), as ``evaluate.load`` requires.
"""

from __future__ import annotations

import fnmatch
import json
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trainer_scripts.model_card import ModelCardError, check_results, render_model_card

RESULTS_NAME = "results.json"
WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin", "pytorch_model.bin.index.json")
TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "tokenizer_config.json")
MODEL_IGNORE = ("checkpoint-*", "runs", "optimizer.pt", "scheduler.pt", "rng_state*.pth", "scaler.pt",
                "training_args.bin", "trainer_state.json", "__pycache__", ".*", "README.md")
DATASET_IGNORE = ["work/**", "**/__pycache__/**", ".*", "**/.*", "*.tmp", "**/*.tmp"]


class PushError(ValueError):
    """A folder or argument that cannot be published, named in the message."""


@dataclass
class PushArguments:
    """What to publish where. Each of the three parts is optional; give at least one."""

    model_dir: str | None = field(default=None, metadata={
        "help": "A trained Q-BERT folder (save_pretrained of model and processor, and the run's results.json)."})
    model_repo: str | None = field(default=None, metadata={"help": "Hub id of the model repo, e.g. org/qbert-wikiref."})
    results: str | None = field(default=None, metadata={
        "help": "The run's results JSON, if not MODEL_DIR/results.json."})
    dataset_dir: str | None = field(default=None, metadata={
        "help": "A built dataset folder (README.md with a configs: block, data/*.parquet)."})
    dataset_repo: str | None = field(default=None, metadata={"help": "Hub id of the dataset repo, e.g. org/wikiref."})
    metric_repo: str | None = field(default=None, metadata={
        "help": "Hub id of the Space that hosts the DUC ROUGE metric, e.g. org/duc_rouge."})
    token: str | None = field(default=None, metadata={"help": "Hub token (default: HF_TOKEN or the saved login)."})
    private: bool = field(default=False, metadata={"help": "Create the repos private."})
    commit_message: str | None = field(default=None, metadata={"help": "Commit message (default: one per part)."})

    def __post_init__(self):
        for folder, repo, what in ((self.model_dir, self.model_repo, "model"),
                                   (self.dataset_dir, self.dataset_repo, "dataset")):
            if bool(folder) != bool(repo):
                raise PushError(f"--{what}_dir and --{what}_repo go together (got only "
                                f"{'--' + what + '_dir' if folder else '--' + what + '_repo'})")
        if not (self.model_dir or self.dataset_dir or self.metric_repo):
            raise PushError("nothing to push: give --model_dir/--model_repo, --dataset_dir/--dataset_repo and/or "
                            "--metric_repo")
        for repo in (self.model_repo, self.dataset_repo, self.metric_repo):
            if repo is not None and not re.fullmatch(r"[\w.-]+/[\w.-]+", repo):
                raise PushError(f"{repo!r}: a Hub repo id is 'namespace/name'")


# ---- checks ---------------------------------------------------------------------------------------------------------


def relative_imports(path: Path) -> list[str]:
    """The module names a code file imports relatively (``from .configuration_qbert import …``)."""
    text = path.read_text(encoding="utf-8")
    return re.findall(r"^\s*from\s+\.(\w+)\s+import", text, flags=re.MULTILINE)


def check_model_folder(folder: Path) -> dict[str, Any]:
    """The folder's ``config.json`` after checking that the folder is a publishable Q-BERT model: weights, custom code
    for every ``auto_map`` entry (and the files those import relatively), tokenizer and processor config."""
    if not folder.is_dir():
        raise PushError(f"{folder}: no such model folder")
    config_path = folder / "config.json"
    if not config_path.is_file():
        raise PushError(f"{folder}: not a model folder (no config.json); pass the folder a training script saved")
    try:
        config = json.loads(config_path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise PushError(f"{config_path}: not valid JSON ({error})") from None
    if not any((folder / name).is_file() for name in WEIGHT_FILES):
        raise PushError(f"{folder}: no model weights (expected one of {', '.join(WEIGHT_FILES)})")
    auto_map = config.get("auto_map") or {}
    if "AutoModel" not in auto_map:
        raise PushError(f"{folder}: config.json has no auto_map for AutoModel, so the Hub copy could not be loaded "
                        "with trust_remote_code; save the model with modeling_qbert imported (it registers the "
                        "classes for auto_map)")
    processor_path = folder / "processor_config.json"
    if not processor_path.is_file():
        raise PushError(f"{folder}: no processor_config.json; save the processor too (processor.save_pretrained)")
    processor_map = json.loads(processor_path.read_text(encoding="utf-8")).get("auto_map") or {}
    modules = {reference.split(".")[0] for reference in [*auto_map.values(), *processor_map.values()]
               if isinstance(reference, str)}
    pending, seen = sorted(modules), set()
    while pending:
        module = pending.pop()
        if module in seen:
            continue
        seen.add(module)
        path = folder / f"{module}.py"
        if not path.is_file():
            raise PushError(f"{folder}: {module}.py is missing (named by auto_map or imported by another code file)")
        pending += relative_imports(path)
    if not any((folder / name).is_file() for name in TOKENIZER_FILES[:2]):
        raise PushError(f"{folder}: no tokenizer (expected tokenizer.json or vocab.txt)")
    return config


def check_dataset_folder(folder: Path) -> list[str]:
    """The data-file patterns of the folder's card after checking that each matches a file."""
    if not folder.is_dir():
        raise PushError(f"{folder}: no such dataset folder")
    readme = folder / "README.md"
    if not readme.is_file():
        raise PushError(f"{folder}: not a dataset folder (no README.md with a configs: block)")
    import yaml

    match = re.match(r"---\r?\n(.*?)\r?\n---\r?\n", readme.read_text(encoding="utf-8"), flags=re.DOTALL)
    try:
        metadata = yaml.safe_load(match.group(1)) if match else None
    except yaml.YAMLError as error:
        raise PushError(f"{readme}: the YAML header does not parse ({error})") from None
    configs = metadata.get("configs") if isinstance(metadata, dict) else None
    if not configs:
        raise PushError(f"{readme}: no configs: block in the YAML header, so load_dataset would not know the splits; "
                        "write the folder with the project's builder (wikiref build)")
    patterns = []
    for config in configs:
        data_files = config.get("data_files") if isinstance(config, dict) else None
        if isinstance(data_files, str):
            data_files = [{"split": "train", "path": data_files}]
        for item in data_files or []:
            paths = item.get("path") if isinstance(item, dict) else item
            patterns += [paths] if isinstance(paths, str) else list(paths or [])
    if not patterns:
        raise PushError(f"{readme}: the configs: block names no data files")
    files = [path.relative_to(folder).as_posix() for path in folder.rglob("*") if path.is_file()]
    for pattern in patterns:
        if not any(fnmatch.fnmatch(name, pattern) for name in files):
            raise PushError(f"{folder}: no file matches {pattern!r}, named in the configs: block of README.md")
    return patterns


# ---- pushes ---------------------------------------------------------------------------------------------------------


def _api(token: str | None) -> Any:
    from huggingface_hub import HfApi

    return HfApi(token=token)


def model_files(folder: Path) -> list[Path]:
    """The files of a model folder that are published (checkpoints, optimizer states and an old card left out)."""
    files = []
    for path in sorted(folder.rglob("*")):
        parts = path.relative_to(folder).parts
        if path.is_file() and not any(fnmatch.fnmatch(part, pattern) for part in parts for pattern in MODEL_IGNORE):
            files.append(path)
    return files


def push_model(args: PushArguments, api: Any | None = None) -> str:
    """Publish the model folder with its rendered card in one commit; returns the commit URL."""
    from huggingface_hub import CommitOperationAdd

    folder = Path(args.model_dir)
    check_model_folder(folder)
    results_path = Path(args.results) if args.results else folder / RESULTS_NAME
    if not results_path.is_file():
        raise PushError(f"{folder}: no {results_path.name} (the run's results, which the model card is rendered from);"
                        " train with pretrain_wikiref.py / finetune_duc.py or pass --results")
    try:
        results = json.loads(results_path.read_text(encoding="utf-8"))
        check_results(results, where=str(results_path))
    except json.JSONDecodeError as error:
        raise PushError(f"{results_path}: not valid JSON ({error})") from None
    except ModelCardError as error:
        raise PushError(str(error)) from None
    card = render_model_card(results, model_repo=args.model_repo, dataset_repo=args.dataset_repo,
                             metric_repo=args.metric_repo)
    operations = [CommitOperationAdd(path_in_repo=path.relative_to(folder).as_posix(), path_or_fileobj=str(path))
                  for path in model_files(folder) if path != results_path]
    operations += [CommitOperationAdd(path_in_repo=RESULTS_NAME, path_or_fileobj=str(results_path)),
                   CommitOperationAdd(path_in_repo="README.md", path_or_fileobj=card.encode("utf-8"))]
    api = api or _api(args.token)
    api.create_repo(args.model_repo, repo_type="model", private=args.private, exist_ok=True)
    info = api.create_commit(args.model_repo, operations, repo_type="model",
                             commit_message=args.commit_message or "Upload Q-BERT model, code and model card")
    return info.commit_url


def push_dataset(args: PushArguments, api: Any | None = None) -> str:
    """Publish a built dataset folder (its card, Parquet files, figures and statistics); returns the commit URL."""
    folder = Path(args.dataset_dir)
    check_dataset_folder(folder)
    api = api or _api(args.token)
    api.create_repo(args.dataset_repo, repo_type="dataset", private=args.private, exist_ok=True)
    info = api.upload_folder(folder_path=str(folder), repo_id=args.dataset_repo, repo_type="dataset",
                             ignore_patterns=DATASET_IGNORE,
                             commit_message=args.commit_message or f"Upload the dataset folder {folder.name}")
    return info.commit_url


def metric_readme(repo_id: str) -> str:
    """The Space card of the DUC ROUGE metric: evaluate's metric-Space header and how to use it."""
    name = repo_id.split("/")[1]
    return f"""---
title: DUC ROUGE
emoji: 📏
colorFrom: blue
colorTo: gray
sdk: gradio
app_file: app.py
pinned: false
tags:
- evaluate
- metric
description: ROUGE-1.5.5-exact ROUGE with the official DUC 2005-2007 settings, without Perl.
---

# DUC ROUGE

ROUGE as the ROUGE-1.5.5 Perl script computes it, with the official DUC 2005-2007 settings as defaults
(`-n 2 -x -m -2 4 -u -c 95 -r 1000 -f A -p 0.5 -t 0 -l 250`): ROUGE-1, ROUGE-2 and ROUGE-SU4 recall, precision and F
with 95% bootstrap confidence intervals (same tokenizer, Porter stemmer, 250-word truncation, multi-reference rule and
bootstrap as the script).

## Requirements

The module is a thin wrapper: the scoring lives in the `wikiref` package, which must be installed first:

```bash
pip install wikiref
```

## Usage

```python
import evaluate

duc_rouge = evaluate.load("{repo_id}")
scores = duc_rouge.compute(predictions=["the cat sat on the mat"],
                           references=[["a cat sat on a mat", "the cat was sitting on the mat"]])
scores["rouge_2_recall"], scores["rouge_2_recall_ci_low"], scores["rouge_2_recall_ci_high"]
```

Arguments, outputs and the ROUGE options it accepts are documented in `{name}.py`. Summaries use `"\\n"` between
sentences; references are one list of reference summaries per prediction.

## Citation

```bibtex
@inproceedings{{lin-2004-rouge,
    title = "{{ROUGE}}: A Package for Automatic Evaluation of Summaries",
    author = "Lin, Chin-Yew",
    booktitle = "Text Summarization Branches Out",
    year = "2004",
    pages = "74--81",
}}
```
"""


def push_metric(args: PushArguments, api: Any | None = None) -> str:
    """Publish the DUC ROUGE module as a Space ``evaluate.load(repo_id)`` finds; returns the commit URL."""
    from huggingface_hub import CommitOperationAdd

    from wikiref_dataset.metrics import DUC_ROUGE_PATH

    source = Path(DUC_ROUGE_PATH) / "duc_rouge.py"
    if not source.is_file():
        raise PushError(f"{source}: the DUC ROUGE module is missing from the installed package")
    repo_id = args.metric_repo
    name = repo_id.split("/")[1]
    app = (f'import evaluate\nfrom evaluate.utils import launch_gradio_widget\n\n'
           f'module = evaluate.load("{repo_id}")\nlaunch_gradio_widget(module)\n')
    operations = [
        CommitOperationAdd(path_in_repo=f"{name}.py", path_or_fileobj=str(source)),
        CommitOperationAdd(path_in_repo="README.md", path_or_fileobj=metric_readme(repo_id).encode("utf-8")),
        CommitOperationAdd(path_in_repo="app.py", path_or_fileobj=app.encode("utf-8")),
        CommitOperationAdd(path_in_repo="requirements.txt", path_or_fileobj=b"wikiref\nevaluate\ngradio\n"),
    ]
    api = api or _api(args.token)
    api.create_repo(repo_id, repo_type="space", space_sdk="gradio", private=args.private, exist_ok=True)
    info = api.create_commit(repo_id, operations, repo_type="space",
                             commit_message=args.commit_message or "Upload the DUC ROUGE evaluate module")
    return info.commit_url


def push(args: PushArguments) -> dict[str, str]:
    """Run the parts ``args`` asks for (all folders checked before anything is sent); ``{part: commit URL}``."""
    if args.model_dir:
        check_model_folder(Path(args.model_dir))
    if args.dataset_dir:
        check_dataset_folder(Path(args.dataset_dir))
    api = _api(args.token)
    pushed = {}
    if args.metric_repo:
        pushed["metric"] = push_metric(args, api)
    if args.dataset_dir:
        pushed["dataset"] = push_dataset(args, api)
    if args.model_dir:
        pushed["model"] = push_model(args, api)
    return pushed


def main(argv: Sequence[str] | None = None) -> int:
    from transformers import HfArgumentParser

    try:
        (args,) = HfArgumentParser(PushArguments).parse_args_into_dataclasses(args=argv)
        pushed = push(args)
    except PushError as error:
        print(f"push_to_hub: error: {error}", file=sys.stderr)
        return 2
    for part, url in pushed.items():
        print(f"{part}: {url}")
    print(f"pushed {len(pushed)} repo(s): {', '.join(pushed)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
