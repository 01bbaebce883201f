"""Fine-tune Q-BERT on DUC and test it on held-out clusters (Zhu et al., 2022, §III-F, §V-B).

    python trainer_scripts/finetune_duc.py --model_name_or_path runs/qbert-wikiref \\
        --duc_dirs duc/2005 duc/2006 duc/2007 --test_year 2007 --output_dir runs/qbert-duc2007
    python trainer_scripts/finetune_duc.py --duc_dirs duc/2006 --folds 5 --fold 0 --output_dir runs/qbert-fold0
    accelerate launch --multi_gpu --num_processes 2 trainer_scripts/finetune_duc.py ...   # CPU: ACCELERATE_USE_CPU=1

Inputs: where training starts, and the DUC years converted by ``wikiref duc convert`` (one folder per year). The start
is a Q-BERT folder written by ``pretrain_wikiref.py`` (the rows with data augmentation), or a plain BERT-family encoder
(the default: the shipped MiniLM), to which a new Q-BERT head is added with ``--objective``, ``--pooling`` and
``--use_query`` (the Bert and Q-Bert rows without data augmentation). Either way fine-tuning trains ``--objective``
(``--finetuning_objective`` names it too; the recipes' is regression, the paper's DUC training after either
pre-training: `trainer_scripts.finetuning.choose_objective` says why), a head pre-trained with classification
included. Held-out clusters: ``--test_year`` trains on the other given years (the paper's protocol); ``--folds K
--fold I`` deals the clusters of every given year into K folds and tests fold I (one year is enough). Each training
sentence is labelled with its own ROUGE-2 recall against its cluster's reference summaries (the oracle scores of §V-B,
`wikiref_dataset.oracle`), scaled as ``--target_scaling`` says, and scored with the query and its document only.

Training updates a sparse subnetwork: ``--subnetwork_fraction 0.1`` (default, the paper's choice) keeps the 10%
largest-magnitude entries of every encoder matrix trainable and freezes the rest bit-for-bit
(`modeling_qbert.trainer.SubnetworkTrainer`); ``0`` fine-tunes the full model (`QBertTrainer`), the default from a
plain encoder. A new head learns at ``--head_learning_rate``. When the
pre-trained folder holds ``subnetwork_mask.safetensors`` (``pretrain_wikiref.py --subnetwork_method iterative``, Table
IX), that mask is the subnetwork: it is loaded as it is and never pruned or re-identified (``--subnetwork_method
iterative`` insists on it, ``one_step`` identifies a new one instead). The script's own defaults are the paper's
optimiser (lr 3e-5, β 0.9/0.999, weight decay 0.01, linear decay; 3 epochs of 32 windows; the ``duc`` rule); the
training recipe chosen for the encoder replaces some: the shipped MiniLM's ``sentence-encoder`` recipe trains 1 epoch
of 16 windows at lr 2e-5 (head 1e-3) with bf16 autocast and chooses summaries with ``ilp`` (docs/training.md,
"Recipes").

Other benchmarks: ``--qfs_dir qfs/qmsum`` (a folder written by ``wikiref qfs convert``) trains on its
``--qfs_train_split`` and tests on its ``--qfs_test_split`` instead of DUC years, with ``--qfs_labels oracle`` (each
sentence's ROUGE-2 recall, as on DUC) or ``spans`` (QMSum's annotated answer spans); the test summaries keep the DUC
rule within the benchmark's word budget and are scored as the benchmark's papers score them (``evaluate_qfs.py``).
The scores go to ``results.json`` (``benchmark_evaluation``) and to the model card's table for that benchmark.

Test: the fine-tuned model summarizes every test cluster with ``--selection`` (the paper's DUC rule by default: rank
sentences across the cluster, skip sentences with more than half of their bigrams in the summary, 250 words; the
``sentence-encoder`` recipe chooses ``ilp``, bigram concept coverage) and is scored with the official ROUGE
settings (``-n 2 -x -m -2 4 -u -c 95 -r 1000 -f A -p 0.5 -t 0 -l 250``) next to the ``--baselines``, as
``evaluate_duc.py`` does. The same rule for every system: with a ``--selection`` other than the paper's greedy rule,
the baselines are scored under it too (``QUERY-SIM (ILP)``, a row of its own beside ``QUERY-SIM``) and the model
under the greedy rule as well (``Q-BERT (greedy)``, chosen from the sentence scores it gave once: an ablation);
``results.json`` names each row's rule (``evaluation.rules``) and the model card's headline gives the model's gain
over QUERY-SIM under the same rule.

Writes into ``--output_dir``: the model, tokenizer, processor and ``subnetwork_mask.safetensors``; with
``--save_sparse_delta`` also ``sparse_delta.safetensors`` (only what changed over the pre-trained model);
``results.json`` (the pre-training results of the starting folder, this fine-tuning, the DUC table, and the recipe
with the value each of its settings had in this run: `trainer_scripts.common.settle_recipe`); the generated
model card ``README.md``; ``summaries.jsonl`` (every test summary); ``sentence_scores.jsonl`` (the fine-tuned model's
score of every test sentence, one line per cluster: for choosing a selection rule or averaging runs afterwards).
"""


from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from trainer_scripts.common import (
    ModelArguments,
    ScriptError,
    check_model_arguments,
    configure_logging,
    hyperparameters,
    load_model_and_processor,
    model_folder_callback,
    parse_arguments,
    read_training_results,
    run_info,
    run_training_script,
    save_model_folder,
    script_argument_error,
    settle_recipe,
    windows_cache_dir,
    write_results,
)
from trainer_scripts.finetuning import (
    DucArguments,
    EpochSelection,
    attach_frozen_prefix,
    choose_training_setup,
    finetuning_results,
    finetuning_subnetwork,
    pretraining_record,
    sample_documents,
    split_validation,
)
from trainer_scripts.finetuning_data import load_finetuning_data
from trainer_scripts.model_card import write_model_card
from trainer_scripts.results import SparseDeltaRecord, TrainingResults

logger = logging.getLogger("finetune_duc")


def main(argv: Sequence[str] | None = None) -> int:
    from transformers import TrainingArguments

    try:
        model_args, duc_args, training_args = parse_arguments(
            (ModelArguments, DucArguments, TrainingArguments), argv, description=__doc__.split("\n\n")[0],
            stage="finetune")
    except ScriptError as error:  # a value DucArguments.__post_init__ refuses: one line, exit 2
        return script_argument_error(error, logger)
    configure_logging(training_args)
    return run_training_script(lambda: _run(model_args, duc_args, training_args), training_args, model_args.wait, logger,
                               overwrite=model_args.overwrite_output_dir)


def _run(model_args: ModelArguments, duc_args: DucArguments, training_args: Any) -> int:
    import datasets
    from transformers import set_seed

    from modeling_qbert.pipeline_qfs import QueryFocusedSummarizationPipeline
    from modeling_qbert.trainer import end_process_group

    # Options (DucArguments checked its own when parsed) and the data: DUC years or another benchmark.
    check_model_arguments(model_args)
    if model_args.recipe_choice is not None:
        logger.info("%s", model_args.recipe_choice.describe())
    info = run_info(model_args.run_kind)
    data = load_finetuning_data(duc_args)

    # The model: a saved Q-BERT folder or a plain encoder with a new head; its objective and subnetwork.
    set_seed(training_args.seed)  # before the model: a new head's weights and the [L#] embeddings come from --seed
    model, processor, base = load_model_and_processor(model_args)
    setup = choose_training_setup(model, processor, base, duc_args, training_args.learning_rate,
                                  objective=model_args.objective, objective_by=_objective_source(model_args))

    # Training rows (labelled), the validation share, the test rows, and the training windows.
    train_rows = data.training_rows(processor.label_field)
    if not train_rows:
        raise ScriptError("no training cluster has reference summaries")
    train_rows, validation_rows = split_validation(train_rows, duc_args.validation_clusters, training_args.seed)
    train_rows = sample_documents(train_rows, duc_args.max_train_documents, training_args.seed)
    test_rows = data.test_rows()
    with training_args.main_process_first(desc="packing windows"):
        windows = processor.prepare_dataset(datasets.Dataset.from_list(train_rows), cache_dir=windows_cache_dir(),
                                            num_proc=duc_args.preprocessing_num_workers)
    logger.info("fine-tuning %s on %s (%d clusters, %d documents, %d windows, %s packing), testing on %s",
                base, data.trained(), len(train_rows), sum(len(row["documents"]) for row in train_rows),
                len(windows), processor.packing, data.tested(test_rows))

    with training_args.main_process_first(desc="frozen prefix"):
        attach_frozen_prefix(model, processor, duc_args, windows, [*validation_rows, *test_rows])

    # Training, and the recipe's record written from what this run uses (results.json and the card read it).
    model.config.cluster_selection = duc_args.selection  # saved with the model: the pipeline's rule for clusters
    recipe = settle_recipe(model_args, (model_args, duc_args, training_args), model, processor, base,
                           decided=setup.decided(), reasons=setup.reasons)
    selection = (EpochSelection(model, processor, validation_rows, duc_args.eval_window_batch_size,
                                rule=duc_args.selection) if validation_rows else None)
    trainer, base_state = _trainer(model, processor, windows, setup, selection, duc_args, training_args, base)
    started = time.perf_counter()
    output = trainer.train(resume_from_checkpoint=training_args.resume_from_checkpoint)
    seconds = time.perf_counter() - started
    subnetwork, subnetwork_record = finetuning_subnetwork(trainer, setup.subnetwork)
    logger.info("trained %d steps in %.1f s, loss %.4f; %s", output.global_step, seconds, output.training_loss,
                subnetwork.to_dict())
    end_process_group(together=True)  # every process, here: nothing below communicates
    if not trainer.is_world_process_zero():
        return 0  # the other data-parallel processes are done: evaluation and saving happen once, on the main one

    # Test: the model's summaries of the test rows beside the baselines'.
    model = trainer.accelerator.unwrap_model(trainer.model)
    if selection is not None:
        selection.restore()
    summarize = QueryFocusedSummarizationPipeline(model=model, processor=processor, tokenizer=processor.tokenizer,
                                                  batch_size=duc_args.eval_window_batch_size)
    sentence_scores: dict[str, list[list[float]]] = {}
    systems, evaluation = data.evaluate(summarize, test_rows, duc_args.baseline_names, duc_args.selection,
                                        sentence_scores)

    # Results, the model folder, the summaries, the sentence scores and the model card.
    pretrained = read_training_results(base)
    results = TrainingResults(
        script="finetune_duc", run=info, recipe=recipe,
        base_model=pretrained.recorded_or("base_model", base), objective=setup.objective,
        pretraining=pretraining_record(pretrained.pretraining, setup.pretrained_objective, pretrained.objective),
        finetuning=finetuning_results(
            base=base, recipe=recipe, data=data, setup=setup, duc_args=duc_args, model_config=model.config,
            processor=processor, train_rows=train_rows, test_rows=test_rows, windows=len(windows),
            selection=selection, hyperparameters=hyperparameters(training_args, processor.max_length),
            subnetwork=subnetwork, output=output, seconds=seconds),
        **data.evaluation_fields(evaluation), subnetwork=subnetwork_record)
    out = Path(training_args.output_dir)
    save_model_folder(trainer, processor, out)
    if duc_args.save_sparse_delta:
        from modeling_qbert.sparse import SPARSE_DELTA_NAME

        delta = trainer.save_sparse_delta(out / SPARSE_DELTA_NAME, base_state)  # base recorded: the folder loaded
        results.finetuning.sparse_delta = SparseDeltaRecord(path=SPARSE_DELTA_NAME, bytes=delta.num_bytes,
                                                            dense_bytes=delta.dense_num_bytes)
    from trainer_scripts.duc_evaluation import write_sentence_scores, write_summaries

    write_summaries(out / "summaries.jsonl", systems)
    write_sentence_scores(out / "sentence_scores.jsonl", sentence_scores)
    write_results(out, results)
    card = write_model_card(out, results)
    logger.info("wrote model, processor, results.json%s, summaries.jsonl and sentence_scores.jsonl to %s",
                ", README.md" if card else "", out)
    return 0


def _objective_source(model_args: ModelArguments) -> str:
    """How ``--objective`` got its value, for messages: the command line or the run's recipe."""
    choice = model_args.recipe_choice
    if choice is None or "objective" in choice.overrides or "objective" not in choice.recipe.settings(choice.stage):
        return "--objective"
    return f"--objective of the recipe {choice.name}"


def _trainer(model: Any, processor: Any, windows: Any, setup: Any, selection: EpochSelection | None,
             duc_args: DucArguments, training_args: Any, base: str) -> tuple[Any, dict[str, Any] | None]:
    """``(trainer, base_state)``: `SubnetworkTrainer` over the chosen subnetwork (``base_state``: the weights before
    training, for ``--save_sparse_delta``), or `QBertTrainer` for full fine-tuning; a new head at its learning rate."""
    from modeling_qbert.trainer import QBertTrainer, SubnetworkTrainer

    chosen = setup.subnetwork
    common = dict(model=model, args=training_args, train_dataset=windows, data_collator=processor.collator(),
                  head_learning_rate=setup.head_learning_rate, ranking_loss_weight=duc_args.ranking_loss_weight,
                  callbacks=[model_folder_callback(processor), *([selection.callback()] if selection else [])])
    if chosen.config is None:
        if duc_args.save_sparse_delta:
            raise ScriptError("--save_sparse_delta needs a subnetwork (--subnetwork_fraction > 0)")
        return QBertTrainer(**common), None
    base_state = ({name: parameter.detach().clone() for name, parameter in model.named_parameters()}
                  if duc_args.save_sparse_delta else None)
    try:
        return SubnetworkTrainer(subnetwork_config=chosen.config, subnetwork_mask=chosen.masks, **common), base_state
    except ValueError as error:
        if chosen.masks is None:
            raise
        raise ScriptError(f"the saved subnetwork mask does not fit {base}: {error}") from None


if __name__ == "__main__":
    from modeling_qbert.trainer import exit_process

    exit_process(main())  # a distributed run's process group is never freed by Python (end_process_group)
