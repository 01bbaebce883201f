"""How long the experiments' training units take on this machine, before any of them runs
(``wikiref experiments --dry_run``).

A unit's time is its training windows (its clusters or WikiRef examples packed as the unit packs them) times its epochs,
divided by the training windows per second measured here, plus its test windows divided by the scoring windows per
second measured here. The speeds come from a few real optimizer steps of a model built with the unit's own settings
(recipe and options applied as the script applies them: `trainer_scripts.common.parse_arguments`), on real windows of
the given DUC years, in as many torch threads as the unit will have. Measured once per distinct setting.

Why measured and not looked up: the same step differs by two orders of magnitude between machines (bf16 autocast on a
CPU with AMX against one without native bf16, a GPU), and a user planning hours of units needs this machine's number.
The estimate leaves out loading (seconds) and, for WikiRef pre-training, the validation scoring's selection tuning.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

STEPS = 2
"""Timed optimizer steps per measured setting (after one warm-up step)."""

WIKIREF_SAMPLE = 200
"""WikiRef training examples packed to learn the windows per example of a pre-training unit."""


@dataclass
class Speed:
    """Windows per second of one setting here: ``train`` (forward, backward and AdamW step), ``score`` (forward
    only), and what was measured (``describe``)."""

    train: float
    score: float
    describe: str


@dataclass
class UnitEstimate:
    """A unit's estimated ``seconds`` (``None`` when it cannot be estimated: ``note`` says why), its training and
    test windows and the speed they were divided by."""

    seconds: float | None
    train_windows: int = 0
    test_windows: int = 0
    speed: Speed | None = None
    note: str = ""


class Estimator:
    """Estimates of the finetune and pretrain units of one experiments plan.

    Args:
        years: the loaded DUC years (`wikiref_dataset.duc.years.DucYear`) of the plan.
        encoder: the encoder folder every row starts from (a model built on it stands in for a pre-trained unit's).
        wikiref: the WikiRef folder of the pre-training units, if any.
        threads: torch threads each unit will have (as the runner gives them); ``None``: this process's.
    """

    def __init__(self, years: Sequence[Any], encoder: str, wikiref: str | None = None,
                 threads: int | None = None) -> None:
        self.years = list(years)
        self.encoder = encoder
        self.wikiref = wikiref
        self.threads = threads
        self._speeds: dict[tuple, Speed] = {}
        self._cluster_windows: dict[tuple, dict[tuple[int, str], int]] = {}
        self._wikiref_windows: dict[tuple, tuple[float, dict[str, int]]] = {}
        self._processors: dict[tuple, Any] = {}

    # ---- settings ------------------------------------------------------------------------------------------------

    @staticmethod
    def settings(kind: str, argv: Sequence[str]) -> tuple[Any, Any, Any]:
        """``(model arguments, script arguments, training arguments)`` of a unit's argv, recipe applied."""
        import contextlib
        import io

        from transformers import TrainingArguments

        from trainer_scripts.common import ModelArguments, parse_arguments

        if kind == "finetune":
            from trainer_scripts.finetuning import DucArguments as ScriptArguments
        else:
            from trainer_scripts.pretraining import WikiRefArguments as ScriptArguments
        with contextlib.redirect_stderr(io.StringIO()):  # an argparse error is the unit's: its run says it
            return parse_arguments((ModelArguments, ScriptArguments, TrainingArguments), list(argv), stage=kind)

    @staticmethod
    def _model_key(model_args: Any) -> tuple:
        return tuple(getattr(model_args, name) for name in (
            "objective", "pooling", "use_query", "attention_scope", "query_similarity", "packing", "max_length",
            "stride", "attention_dropout", "random_init"))

    @staticmethod
    def _packing_key(model_args: Any) -> tuple:
        """What a unit's windows depend on: a [CLS] per sentence (``cls`` pooling), the query's room, the packing and
        the lengths."""
        return tuple(getattr(model_args, name) for name in ("pooling", "use_query", "packing", "max_length", "stride"))

    def _processor_and_model(self, model_args: Any, with_model: bool) -> tuple[Any, Any]:
        from dataclasses import replace

        import transformers

        from trainer_scripts.common import load_model_and_processor

        arguments = replace(model_args, model_name_or_path=self.encoder, random_init=False)
        verbosity = transformers.utils.logging.get_verbosity()
        bars = transformers.utils.logging.is_progress_bar_enabled()
        transformers.utils.logging.set_verbosity_error()  # the new head's load report is the unit's, not the plan's
        transformers.utils.logging.disable_progress_bar()
        try:
            if not with_model:
                key = self._packing_key(arguments)
                if key not in self._processors:
                    self._processors[key] = load_model_and_processor(arguments)[1]
                return self._processors[key], None
            model, processor, _ = load_model_and_processor(arguments)
            return processor, model
        finally:
            transformers.utils.logging.set_verbosity(verbosity)
            if bars:
                transformers.utils.logging.enable_progress_bar()

    # ---- speed ---------------------------------------------------------------------------------------------------

    def speed(self, model_args: Any, training_args: Any, frozen_prefix_layers: int = 0) -> Speed:
        """Training and scoring windows/s of this setting here (measured once per setting). With a frozen prefix
        the steps read its states from a cache warmed beforehand (the warming, done once per encoder, is not
        counted)."""
        bf16 = bool(training_args.bf16)
        batch = max(1, min(int(training_args.per_device_train_batch_size), 4))
        key = (*self._model_key(model_args), bf16, batch, frozen_prefix_layers)
        if key not in self._speeds:
            self._speeds[key] = self._measure(model_args, bf16, batch, frozen_prefix_layers)
        return self._speeds[key]

    def _measure(self, model_args: Any, bf16: bool, batch: int, frozen_prefix_layers: int = 0) -> Speed:
        import torch

        from trainer_scripts.finetuning import label_clusters

        processor, model = self._processor_and_model(model_args, with_model=True)
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        model.to(device)
        rows = label_clusters([row for year in self.years for row in year.scorable][:1], processor.label_field)
        windows = [window.to_features() for example in processor.examples_from_row(rows[0])
                   for window in processor.encode_example(example)]
        windows = (windows * math.ceil(batch / max(1, len(windows))))[:batch]
        collate = processor.collator()
        inputs = {name: tensor.to(device) for name, tensor in collate(windows).items()}
        cache_dir = None
        if frozen_prefix_layers:
            import tempfile

            from modeling_qbert.prefix_cache import PrefixCache

            cache_dir = tempfile.TemporaryDirectory(prefix="estimate-prefix-")
            cache = PrefixCache(model, min(frozen_prefix_layers, model.config.num_hidden_layers),
                                cache_dir=cache_dir.name)
            cache.warm(model, windows)
            model.set_frozen_prefix(cache)
        optimizer = torch.optim.AdamW([parameter for parameter in model.parameters() if parameter.requires_grad],
                                      lr=1e-5)
        threads = torch.get_num_threads()
        if self.threads is not None and device.type == "cpu":
            torch.set_num_threads(self.threads)
        autocast = torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16)
        try:
            model.train()
            train_times = []
            for step in range(STEPS + 1):
                started = time.perf_counter()
                with autocast:
                    loss = model(**inputs).loss
                loss.backward()
                optimizer.step()
                optimizer.zero_grad()
                if device.type == "cuda":
                    torch.cuda.synchronize()
                if step:
                    train_times.append(time.perf_counter() - started)
            model.eval()
            score_times = []
            scoring = {name: tensor for name, tensor in inputs.items() if name != "labels"}
            with torch.no_grad():
                for step in range(STEPS + 1):
                    started = time.perf_counter()
                    with autocast:
                        model(**scoring)
                    if device.type == "cuda":
                        torch.cuda.synchronize()
                    if step:
                        score_times.append(time.perf_counter() - started)
        finally:
            torch.set_num_threads(threads)
            if cache_dir is not None:
                cache_dir.cleanup()
        where = "GPU" if device.type == "cuda" else f"CPU, {self.threads or threads} thread(s)"
        describe = (f"{model_args.packing or 'stride'} packing, {model_args.attention_scope} attention, "
                    f"{'bf16' if bf16 else 'fp32'}, {where}"
                    + (f", frozen prefix of {frozen_prefix_layers} layers" if frozen_prefix_layers else ""))
        return Speed(train=batch * STEPS / sum(train_times), score=batch * STEPS / sum(score_times),
                     describe=describe)

    # ---- windows -------------------------------------------------------------------------------------------------

    def cluster_windows(self, model_args: Any) -> dict[tuple[int, str], int]:
        """``{(year, topic_id): windows}`` of every cluster with reference summaries (the only ones a unit trains or
        tests on), packed with this unit's settings."""
        key = self._packing_key(model_args)
        if key not in self._cluster_windows:
            processor, _ = self._processor_and_model(model_args, with_model=False)
            counts = {}
            for year in self.years:
                for row in year.scorable:
                    counts[(year.year, row["topic_id"])] = sum(
                        len(processor.encode_example(example))
                        for example in processor.examples_from_row(row, with_labels=False))
            self._cluster_windows[key] = counts
        return self._cluster_windows[key]

    def wikiref_windows(self, model_args: Any, data_args: Any) -> tuple[float, dict[str, int]]:
        """``(windows per example, {split: examples})`` of the WikiRef folder, from a sample of its training split."""
        from trainer_scripts.pretraining import load_wikiref

        key = (*self._packing_key(model_args), data_args.dataset)
        if key not in self._wikiref_windows:
            loaded = load_wikiref(data_args)
            train = loaded[data_args.train_split]
            processor, _ = self._processor_and_model(model_args, with_model=False)
            sample = train.select(range(min(WIKIREF_SAMPLE, len(train))))
            windows = sum(len(processor.encode_example(example)) for row in sample
                          for example in processor.examples_from_row(row, with_labels=False))
            self._wikiref_windows[key] = (windows / max(1, len(sample)),
                                          {split: len(loaded[split]) for split in loaded})
        return self._wikiref_windows[key]

    # ---- units ---------------------------------------------------------------------------------------------------

    def estimate(self, kind: str, argv: Sequence[str]) -> UnitEstimate:
        """The estimate of one ``finetune`` or ``pretrain`` unit from its rendered argv."""
        from trainer_scripts.common import ScriptError

        try:
            model_args, script_args, training_args = self.settings(kind, argv)
        except (SystemExit, ScriptError):  # refused by argparse, or by the arguments' own checks (__post_init__)
            return UnitEstimate(None, note="its options are refused (the unit will fail and say why)")
        if kind == "finetune" and script_args.qfs_dir:
            return UnitEstimate(None, note="a benchmark's fine-tuning (its training windows are not counted ahead: "
                                           "packing QMSum's takes minutes)")
        if kind == "finetune":
            missing = [path for path in script_args.duc_dirs if not Path(path).is_dir()]
            if missing:
                return UnitEstimate(None, note="its DUC clusters are made by another unit")
            counts = self.cluster_windows(model_args)
            train, test = self._fold_clusters(script_args, counts)
            limit = script_args.max_train_documents
            if limit is not None:
                documents = {(year.year, row["topic_id"]): len(row["documents"]) for year in self.years
                             for row in year.scorable}
                train_windows = sum(counts[key] * min(1.0, limit / max(1, documents[key])) for key in train)
            else:
                train_windows = sum(counts[key] for key in train)
            test_windows = sum(counts[key] for key in test)
        else:
            if not script_args.dataset or not Path(script_args.dataset).is_dir():
                return UnitEstimate(None, note="its WikiRef examples are made by another unit")
            per_example, sizes = self.wikiref_windows(model_args, script_args)
            examples = sizes.get(script_args.train_split, 0)
            if script_args.max_train_examples is not None:
                examples = min(examples, script_args.max_train_examples)
            train_windows = per_example * examples
            scored = [sizes.get(split, 0) for split in (script_args.validation_split, script_args.test_split) if split]
            if script_args.max_eval_examples is not None:
                scored = [min(size, script_args.max_eval_examples) for size in scored]
            test_windows = per_example * sum(scored)
        speed = self.speed(model_args, training_args, getattr(script_args, "frozen_prefix_layers", 0) or 0)
        if training_args.max_steps and training_args.max_steps > 0:
            trained = training_args.max_steps * training_args.per_device_train_batch_size * \
                training_args.gradient_accumulation_steps
        else:
            trained = train_windows * training_args.num_train_epochs
        seconds = trained / speed.train + test_windows / speed.score
        return UnitEstimate(seconds, train_windows=round(trained), test_windows=round(test_windows), speed=speed)

    def _fold_clusters(self, script_args: Any, counts: Mapping[tuple[int, str], int]
                       ) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
        """The training and test clusters (with references) of a finetune unit, dealt as ``finetuning_data.split_folds``
        deals them."""
        from trainer_scripts.finetuning_data import fold_clusters

        clusters = sorted(counts)
        if script_args.folds is not None and script_args.fold is not None:
            test = fold_clusters(self.years, script_args.folds, script_args.fold)
        else:
            test = {key for key in clusters if key[0] == script_args.test_year}
        return [key for key in clusters if key not in test], [key for key in clusters if key in test]


__all__ = ["Estimator", "Speed", "UnitEstimate"]
