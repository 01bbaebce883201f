"""Publish a trained Q-BERT model, a built dataset folder and the DUC ROUGE metric on the Hugging Face Hub.

Usage (each part optional; the Hub endpoint is ``HF_ENDPOINT``, the token ``--token`` or the usual login)::

    python trainer_scripts/push_to_hub.py --model_dir out/qbert-duc --model_repo org/qbert-wikiref \
        --dataset_dir out/wikiref --dataset_repo org/wikiref --metric_repo org/duc_rouge

- **model** (``--model_dir`` → ``--model_repo``), in one commit, exactly these files (:func:`model_upload`): the
  weights; ``config.json`` with ``auto_map`` and ``custom_pipelines``; the code files those name and everything they
  import relatively (the folder's own, plus the pipeline's from this package with the ROUGE engine,
  ``modeling_qbert.remote_code``), so that ``AutoModel`` / ``AutoProcessor`` and ``pipeline("query-focused-
  summarization", model=repo, trust_remote_code=True)`` work without this package; the tokenizer files,
  ``processor_config.json``; the run's ``results.json``, a ``README.md`` card rendered from it
  (``trainer_scripts/model_card.py``) and its ``figures/*.png``. Everything else stays local and is listed:
  ``summaries.jsonl`` (DUC sentences, not redistributable), checkpoints, optimizer states, an old card. The sparse
  delta and the subnetwork mask go up only with ``--push_sparse_delta``, and only when the delta names its base as a
  Hub repo at a revision (``--sparse_delta_base_repo`` records one, after checking that repo's weights are the
  delta's base): without its base a delta is useless.
- **dataset** (``--dataset_dir`` → ``--dataset_repo``): a folder written by ``wikiref build`` (or the PSG2SUM
  builder): ``README.md`` whose ``configs:`` block names the Parquet files, ``data/``, ``figures/``, the statistics;
  hidden files (the project's manifest) and a ``work/`` folder left by older versions stay local (the build's work
  folder is beside it). ``load_dataset("org/wikiref")`` then loads it.
- **metric** (``--metric_repo``): the DUC ROUGE `evaluate` module as a Space (where ``evaluate.load`` looks for
  community metrics) with the ROUGE engine beside it (``wikiref_dataset.metrics.standalone``), so that
  ``evaluate.load("org/duc_rouge")`` works with only ``evaluate`` installed. The module file is named after the repo
  (``duc_rouge.py`` for ``org/duc_rouge``), as ``evaluate.load`` requires.

This project is not on a package index; :data:`INSTALL_COMMAND` (from its repository) is what cards tell readers.
"""

from __future__ import annotations

import fnmatch
import json
import re
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trainer_scripts.model_card import DUC_FIGURE, ModelCardError, check_results, render_model_card
from trainer_scripts.results import RESULTS_NAME, ResultsError, TrainingResults, read_results_file
from wikiref_dataset.command import one_line

INSTALL_COMMAND = 'pip install "wikiref @ git+https://github.com/wikiref/wikiref"'
"""How to install this project (from its repository, ``[project.urls] Repository`` in pyproject.toml)."""

WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin", "pytorch_model.bin.index.json")
WEIGHT_SHARDS = ("model-*-of-*.safetensors", "pytorch_model-*-of-*.bin")
TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "tokenizer_config.json", "special_tokens_map.json",
                   "added_tokens.json")
MODEL_FILES = (*WEIGHT_FILES, "config.json", "generation_config.json", "processor_config.json", *TOKENIZER_FILES)
"""Files of a model folder published as they are (when present); code files, figures, the card and the results are
added by :func:`model_upload`, the delta and mask only on request."""
FIGURES = "figures/*.png"
DATASET_IGNORE = ["work/**", "**/__pycache__/**", ".*", "**/.*", "*.tmp", "**/*.tmp"]


class PushError(ValueError):
    """A folder or argument that cannot be published, named in the message."""


class HubError(Exception):
    """The Hub could not be reached, or refused a request, for the repo the message names: one line, exit status 1
    (the folders and arguments were fine)."""


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
    space_repo: str | None = field(default=None, metadata={
        "help": "Hub id of a Gradio Space that runs the app (`wikiref app`) on --model_repo and --dataset_repo, e.g. "
                "org/qbert-demo; it carries the project's code, so it runs without the package installed."})
    push_sparse_delta: bool = field(default=False, metadata={
        "help": "Also upload the sparse delta and the subnetwork mask (left out by default: a delta is useless without "
                "its base). The delta must name its base as a Hub repo at a revision, or pass "
                "--sparse_delta_base_repo."})
    sparse_delta_base_repo: str | None = field(default=None, metadata={
        "help": "Hub id of the published base model of the delta (e.g. the pre-trained model); recorded in the "
                "uploaded delta after checking that the repo's weights are the ones the delta was made over."})
    sparse_delta_base_revision: str | None = field(default=None, metadata={
        "help": "Commit of --sparse_delta_base_repo to record (default: its current head)."})
    token: str | None = field(default=None, metadata={"help": "Hub token (default: HF_TOKEN or the saved login)."})
    private: bool = field(default=False, metadata={"help": "Create the repos private."})
    commit_message: str | None = field(default=None, metadata={"help": "Commit message (default: one per part)."})

    def __post_init__(self):
        for folder, repo, what in ((self.model_dir, self.model_repo, "model"),
                                   (self.dataset_dir, self.dataset_repo, "dataset")):
            if bool(folder) != bool(repo):
                raise PushError(f"--{what}_dir and --{what}_repo go together (got only "
                                f"{'--' + what + '_dir' if folder else '--' + what + '_repo'})")
        if not (self.model_dir or self.dataset_dir or self.metric_repo or self.space_repo):
            raise PushError("nothing to push: give --model_dir/--model_repo, --dataset_dir/--dataset_repo, "
                            "--metric_repo and/or --space_repo")
        if self.space_repo and not self.model_repo:
            raise PushError("--space_repo runs the app on a model: give --model_repo (with --model_dir to push it too)")
        if self.push_sparse_delta and not self.model_dir:
            raise PushError("--push_sparse_delta needs --model_dir/--model_repo")
        if (self.sparse_delta_base_repo or self.sparse_delta_base_revision) and not self.push_sparse_delta:
            raise PushError("--sparse_delta_base_repo/--sparse_delta_base_revision go with --push_sparse_delta")
        if self.sparse_delta_base_revision and not self.sparse_delta_base_repo:
            raise PushError("--sparse_delta_base_revision needs --sparse_delta_base_repo")
        for repo in (self.model_repo, self.dataset_repo, self.metric_repo, self.space_repo, self.sparse_delta_base_repo):
            if repo is not None and not re.fullmatch(r"[\w.-]+/[\w.-]+", repo):
                raise PushError(f"{repo!r}: a Hub repo id is 'namespace/name'")


# ---- checks ---------------------------------------------------------------------------------------------------------


def _read_config(folder: Path) -> dict[str, Any]:
    config_path = folder / "config.json"
    if not config_path.is_file():
        raise PushError(f"{folder}: not a model folder (no config.json); pass the folder a training script saved")
    try:
        return json.loads(config_path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise PushError(f"{config_path}: not valid JSON ({error})") from None


def code_files(folder: Path, config: dict[str, Any]) -> dict[str, Path | str]:
    """The code files of the Hub copy, ``{file name: the folder's file, or the source to upload}``: every module
    ``auto_map`` names (in ``config.json`` and ``processor_config.json``, which must be in the folder) and the
    pipeline module, with everything they import relatively. A file the folder lacks comes from this package
    (``modeling_qbert.remote_code.pipeline_code_files``: the pipeline's files and the ROUGE engine); a folder file
    that imports the project's ROUGE engine absolutely is uploaded with that import made relative."""
    from modeling_qbert.remote_code import PIPELINE_MODULE, pipeline_code_files, relative_imports
    from wikiref_dataset.metrics.standalone import StandaloneError, standalone_source

    processor_path = folder / "processor_config.json"
    processor_map = json.loads(processor_path.read_text(encoding="utf-8")).get("auto_map") or {}
    references = [*(config.get("auto_map") or {}).values(), *processor_map.values()]
    named = {reference.split(".")[0] for value in references
             for reference in (value if isinstance(value, (list, tuple)) else [value]) if isinstance(reference, str)}
    package = pipeline_code_files()
    files: dict[str, Path | str] = {}
    pending = sorted(named | {PIPELINE_MODULE})
    while pending:
        module = pending.pop()
        name = f"{module}.py"
        if name in files:
            continue
        path = folder / name
        if path.is_file():
            original = path.read_text(encoding="utf-8")
            try:
                text = standalone_source(original, str(path))
            except StandaloneError as error:
                raise PushError(f"{error}; the Hub copy would not load without this package") from None
            files[name] = path if text == original else text
        elif module in named or name not in package:
            raise PushError(f"{folder}: {name} is missing (named by auto_map or imported by another code file)")
        else:
            files[name] = text = package[name]
        pending += relative_imports(text)
    return files


def check_model_folder(folder: Path) -> dict[str, Any]:
    """The folder's ``config.json`` after checking that the folder is a publishable Q-BERT model: weights, custom code
    for every ``auto_map`` entry (and the files those import relatively), tokenizer and processor config."""
    if not folder.is_dir():
        raise PushError(f"{folder}: no such model folder")
    config = _read_config(folder)
    if not any((folder / name).is_file() for name in WEIGHT_FILES):
        raise PushError(f"{folder}: no model weights (expected one of {', '.join(WEIGHT_FILES)})")
    auto_map = config.get("auto_map") or {}
    if "AutoModel" not in auto_map:
        raise PushError(f"{folder}: config.json has no auto_map for AutoModel, so the Hub copy could not be loaded "
                        "with trust_remote_code; save the model with modeling_qbert imported (it registers the "
                        "classes for auto_map)")
    if not (folder / "processor_config.json").is_file():
        raise PushError(f"{folder}: no processor_config.json; save the processor too (processor.save_pretrained)")
    code_files(folder, config)
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


def sparse_delta_files(folder: Path, args: PushArguments, api: Any, workdir: Path) -> dict[str, Path]:
    """The sparse delta and the subnetwork mask to upload. The delta must name its base as a Hub repo at a revision;
    with ``--sparse_delta_base_repo`` that repo's weights (at ``--sparse_delta_base_revision``, default its head) are
    checked to be the delta's base and recorded in a copy of the delta under ``workdir``."""
    from modeling_qbert.sparse import SPARSE_DELTA_NAME, SUBNETWORK_MASK_NAME, load_sparse_delta, set_sparse_delta_base

    delta_path, mask_path = folder / SPARSE_DELTA_NAME, folder / SUBNETWORK_MASK_NAME
    for path, how in ((delta_path, "fine-tune with --save_sparse_delta"), (mask_path, "train with a subnetwork")):
        if not path.is_file():
            raise PushError(f"{folder}: --push_sparse_delta but no {path.name} ({how})")
    delta, record = load_sparse_delta(delta_path)
    if record is None:
        raise PushError(f"{delta_path}: records no base model (written by an older version); save it again")
    if args.sparse_delta_base_repo:
        repo = args.sparse_delta_base_repo
        revision = args.sparse_delta_base_revision or api.model_info(repo).sha
        masked = sorted(key[: -len(".__indices__")] for key in delta if key.endswith(".__indices__"))
        found = hub_weights_digest(api, repo, revision, masked)
        if found != record.sha256:
            raise PushError(f"{delta_path}: {repo}@{revision} is not the delta's base (its masked tensors differ: "
                            f"SHA-256 {found[:12]}…, the delta's base {record.sha256[:12]}…, recorded as "
                            f"{record.describe()}); publish that base and name its repo")
        delta_path = workdir / SPARSE_DELTA_NAME
        set_sparse_delta_base(folder / SPARSE_DELTA_NAME, repo, revision, output=delta_path)
    elif not record.on_hub:
        raise PushError(f"{delta_path}: its base is recorded as {record.describe()}, not a Hub repo at a revision, and "
                        "a delta is useless without its base: publish the base model, then pass "
                        "--sparse_delta_base_repo (and --sparse_delta_base_revision)")
    return {SPARSE_DELTA_NAME: delta_path, SUBNETWORK_MASK_NAME: mask_path}


def hub_weights_digest(api: Any, repo: str, revision: str, names: Sequence[str]) -> str:
    """:func:`modeling_qbert.sparse.base_digest` of the named tensors of a Hub model's safetensors weights."""
    from safetensors import safe_open

    from modeling_qbert.sparse import base_digest

    files = api.list_repo_files(repo, revision=revision)
    if "model.safetensors" in files:
        shards = {name: "model.safetensors" for name in names}
    elif "model.safetensors.index.json" in files:
        index = json.loads(Path(api.hf_hub_download(repo, "model.safetensors.index.json", revision=revision))
                           .read_text(encoding="utf-8"))
        shards = {name: index["weight_map"].get(name) for name in names}
    else:
        raise PushError(f"{repo}@{revision}: no safetensors weights to check the delta's base against")
    tensors = {}
    for shard in sorted({shard for shard in shards.values() if shard}):
        with safe_open(api.hf_hub_download(repo, shard, revision=revision), framework="pt") as handle:
            keys = set(handle.keys())
            tensors.update({name: handle.get_tensor(name) for name, where in shards.items()
                            if where == shard and name in keys})
    missing = [name for name in names if name not in tensors]
    if missing:
        raise PushError(f"{repo}@{revision}: not the delta's base: it lacks {len(missing)} masked tensors, e.g. "
                        f"{missing[:3]}")
    return base_digest(tensors, names)


def read_run_results(path: Path) -> TrainingResults:
    """The run's results (the model card is rendered from them).

    Raises:
        PushError: the file is not valid JSON or not shaped like a training run's results.
    """
    try:
        return check_results(read_results_file(path), where=str(path))
    except (ResultsError, ModelCardError) as error:
        raise PushError(str(error)) from None


def model_upload(folder: Path, args: PushArguments, api: Any, workdir: Path) -> dict[str, Path | str]:
    """``{path in repo: local file or text}``: the model repo's files, and nothing else (see the module docstring).
    Checks the folder and the results first."""
    from modeling_qbert.remote_code import with_custom_pipelines

    config = check_model_folder(folder)
    results_path = Path(args.results) if args.results else folder / RESULTS_NAME
    if not results_path.is_file():
        raise PushError(f"{folder}: no {results_path.name} (the run's results, which the model card is rendered from);"
                        " train with pretrain_wikiref.py / finetune_duc.py or pass --results")
    results = read_run_results(results_path)
    upload: dict[str, Path | str] = {}
    for path in sorted(folder.iterdir()):
        if path.is_file() and (path.name in MODEL_FILES or any(fnmatch.fnmatch(path.name, shard)
                                                               for shard in WEIGHT_SHARDS)):
            upload[path.name] = path
    upload["config.json"] = json.dumps(with_custom_pipelines(config), indent=2, sort_keys=True) + "\n"
    upload.update(code_files(folder, config))
    figures = sorted(path for path in folder.glob(FIGURES) if path.is_file())
    upload.update({path.relative_to(folder).as_posix(): path for path in figures})
    figure = DUC_FIGURE if (folder / DUC_FIGURE) in figures else None
    upload[RESULTS_NAME] = results_path
    upload["README.md"] = render_model_card(results, model_repo=args.model_repo, dataset_repo=args.dataset_repo,
                                            metric_repo=args.metric_repo, duc_figure_name=figure)
    if args.push_sparse_delta:
        upload.update(sparse_delta_files(folder, args, api, workdir))
    return upload


def push_model(args: PushArguments, api: Any | None = None, upload: dict[str, Path | str] | None = None) -> str:
    """Publish the model repo's files (``upload``, default :func:`model_upload`) in one commit; returns the commit
    URL. The folder's other files are listed on stderr as left out."""
    from huggingface_hub import CommitOperationAdd

    folder = Path(args.model_dir)
    api = api or _api(args.token)
    with tempfile.TemporaryDirectory(prefix="push_to_hub-") as workdir:
        upload = upload if upload is not None else model_upload(folder, args, api, Path(workdir))
        sent = {source.resolve() for source in upload.values() if isinstance(source, Path)}
        left = sorted(name for name in (path.relative_to(folder).as_posix() for path in folder.rglob("*")
                                        if path.is_file() and path.resolve() not in sent)
                      if name not in upload and "__pycache__" not in name.split("/"))
        if left:
            print(f"push_to_hub: left out of {args.model_repo}: {', '.join(left[:20])}"
                  + (f" and {len(left) - 20} more" if len(left) > 20 else ""), file=sys.stderr)
        operations = [CommitOperationAdd(path_in_repo=name, path_or_fileobj=str(source) if isinstance(source, Path)
                                         else source.encode("utf-8")) for name, source in sorted(upload.items())]
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

Only `evaluate` (`pip install evaluate`): the module carries the ROUGE engine it wraps (`rouge.py`, its modules
`_rouge_*.py` and the WordNet 2.0 exception list `_rouge_wordnet_exceptions.py`, copied from the `wikiref` project,
whose `wikiref_dataset.rouge` is the same engine; install it with `{INSTALL_COMMAND}`).

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
    """Publish the DUC ROUGE module as a Space ``evaluate.load(repo_id)`` finds, with the ROUGE engine's code files
    (``wikiref_dataset.metrics.standalone``); returns the commit URL."""
    from huggingface_hub import CommitOperationAdd

    from wikiref_dataset.metrics.standalone import StandaloneError, duc_rouge_space_files

    repo_id = args.metric_repo
    name = repo_id.split("/")[1]
    try:
        files = duc_rouge_space_files(name)
    except (OSError, StandaloneError) as error:
        raise PushError(f"the DUC ROUGE module cannot be published: {error}") from None
    app = (f'import evaluate\nfrom evaluate.utils import launch_gradio_widget\n\n'
           f'module = evaluate.load("{repo_id}")\nlaunch_gradio_widget(module)\n')
    files.update({"README.md": metric_readme(repo_id), "app.py": app,
                  "requirements.txt": "evaluate\ndatasets\nnumpy\ngradio\n"})
    operations = [CommitOperationAdd(path_in_repo=path, path_or_fileobj=text.encode("utf-8"))
                  for path, text in sorted(files.items())]
    api = api or _api(args.token)
    api.create_repo(repo_id, repo_type="space", space_sdk="gradio", private=args.private, exist_ok=True)
    info = api.create_commit(repo_id, operations, repo_type="space",
                             commit_message=args.commit_message or "Upload the DUC ROUGE evaluate module")
    return info.commit_url


def push_space(args: PushArguments, api: Any | None = None) -> str:
    """Publish the app as a Gradio Space on ``args.model_repo`` and ``args.dataset_repo``
    (:func:`trainer_scripts.app.space.space_files`); returns the commit URL."""
    from huggingface_hub import CommitOperationAdd

    from trainer_scripts.app.space import space_files

    try:
        files = space_files(args.space_repo, args.model_repo, args.dataset_repo)
    except ImportError as error:
        raise PushError(f'the Space needs Gradio to write its card: pip install "wikiref[app]" ({error})') from None
    operations = [CommitOperationAdd(path_in_repo=path, path_or_fileobj=content)
                  for path, content in sorted(files.items())]
    api = api or _api(args.token)
    api.create_repo(args.space_repo, repo_type="space", space_sdk="gradio", private=args.private, exist_ok=True)
    info = api.create_commit(args.space_repo, operations, repo_type="space",
                             commit_message=args.commit_message or "Upload the query-focused summarization app")
    return info.commit_url


def hub_problem(error: BaseException) -> str | None:
    """What went wrong between this machine and the Hub, in a few words with what to do, when ``error`` is the Hub
    client's (offline mode, no connection, a refused or failed request, no token); ``None`` for anything else."""
    from huggingface_hub import constants
    from huggingface_hub.errors import HfHubHTTPError, LocalTokenNotFoundError, OfflineModeIsEnabled

    try:
        from huggingface_hub.errors import HTTPError  # the HTTP client's base error (httpx's in huggingface_hub 1.x+)
    except ImportError:
        HTTPError = HfHubHTTPError  # noqa: N806
    endpoint = constants.ENDPOINT
    if isinstance(error, OfflineModeIsEnabled):
        return f"cannot reach the Hub ({endpoint}): HF_HUB_OFFLINE is set; unset it to push"
    if isinstance(error, LocalTokenNotFoundError):
        return "no Hub token: set HF_TOKEN, pass --token or log in (hf auth login)"
    if isinstance(error, HfHubHTTPError):
        response = getattr(error, "response", None)
        status = getattr(response, "status_code", None)
        said = one_line(getattr(error, "server_message", None) or str(error).split("\n")[0])
        if status in (401, 403):
            return (f"the Hub ({endpoint}) refused the request ({status}: {said}): set HF_TOKEN or pass --token, a "
                    "token with write access to this namespace")
        return f"the Hub ({endpoint}) answered {status or 'an error'} ({said})"
    if isinstance(error, (HTTPError, ConnectionError, TimeoutError)):
        return f"cannot reach the Hub ({endpoint}: {one_line(error) or type(error).__name__}): check the network, or HF_ENDPOINT"
    return None


@contextmanager
def reaching(repo: str | None, pushed: dict[str, str]) -> Iterator[None]:
    """Within this block, an error of the Hub client becomes a :class:`HubError` naming ``repo`` and what went wrong
    (:func:`hub_problem`), and the parts ``pushed`` before it."""
    try:
        yield
    except Exception as error:
        problem = hub_problem(error)
        if problem is None:
            raise
        done = f" (pushed before it: {', '.join(f'{part} {url}' for part, url in pushed.items())})" if pushed else ""
        raise HubError(f"{repo}: {problem}{done}") from error


def push(args: PushArguments) -> dict[str, str]:
    """Run the parts ``args`` asks for (everything checked before anything is sent); ``{part: commit URL}``.

    Raises:
        PushError: a folder or argument that cannot be published.
        HubError: the Hub could not be reached or refused a request (the message names the repo).
    """
    api = _api(args.token)
    pushed: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="push_to_hub-") as workdir:
        with reaching(args.sparse_delta_base_repo or args.model_repo, pushed):  # the delta's base is checked there
            model = model_upload(Path(args.model_dir), args, api, Path(workdir)) if args.model_dir else None
        if args.dataset_dir:
            check_dataset_folder(Path(args.dataset_dir))
        if args.metric_repo:
            with reaching(args.metric_repo, pushed):
                pushed["metric"] = push_metric(args, api)
        if args.dataset_dir:
            with reaching(args.dataset_repo, pushed):
                pushed["dataset"] = push_dataset(args, api)
        if model is not None:
            with reaching(args.model_repo, pushed):
                pushed["model"] = push_model(args, api, upload=model)
        if args.space_repo:  # last: it names the model and dataset repos, which now exist
            with reaching(args.space_repo, pushed):
                pushed["space"] = push_space(args, api)
    return pushed


def main(argv: Sequence[str] | None = None) -> int:
    from transformers import HfArgumentParser

    try:
        (args,) = HfArgumentParser(PushArguments).parse_args_into_dataclasses(args=argv)
        pushed = push(args)
    except PushError as error:
        print(f"push_to_hub: error: {error}", file=sys.stderr)
        return 2
    except HubError as error:
        print(f"push_to_hub: error: {one_line(error)}", file=sys.stderr)
        return 1
    for part, url in pushed.items():
        print(f"{part}: {url}")
    print(f"pushed {len(pushed)} repo(s): {', '.join(pushed)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
