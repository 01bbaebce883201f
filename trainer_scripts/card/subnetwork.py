"""The card's subnetwork paragraphs: what fine-tuning could change (the sparse subnetwork's true share of the
parameters, counted on the trained model and its mask; a frozen prefix; or all weights) and the gradual pruning of an
iterative subnetwork."""

from __future__ import annotations

from trainer_scripts.card.names import card_model_name
from trainer_scripts.results import FinetuningResults, TrainingResults


def _subnetwork_text(finetuning: FinetuningResults, wikiref: bool = True) -> str:
    """What fine-tuning could change, in numbers counted on the trained model and its mask: "p% of each encoder
    matrix + embeddings + head = N% of all parameters" (``wikiref``: the model fine-tuning started from was
    pre-trained on WikiRef; else it is named as the card names models, :func:`card_model_name`)."""
    subnetwork = finetuning.subnetwork
    share = subnetwork.share if subnetwork else None
    fraction = subnetwork.fraction if subnetwork else None
    frozen = finetuning.frozen_prefix_layers
    if isinstance(frozen, int) and frozen > 0:
        layers = "the first encoder layer" if frozen == 1 else f"the first {frozen} encoder layers"
        return (f"The embeddings and {layers} were frozen (`--frozen_prefix_layers {frozen}`): each query's and "
                "sentence's states after them were computed once and read from a cache, and only the encoder layers "
                "above them, the pooling and the scoring head were fine-tuned (all their weights, no subnetwork).")
    if not isinstance(fraction, (int, float)) or fraction <= 0 or fraction >= 1:
        total = share.total_parameters if share else None
        return (f"All {total:,} parameters were fine-tuned (no subnetwork)." if isinstance(total, int)
                else "All weights were fine-tuned (no subnetwork).")
    start = ("the WikiRef pre-trained model" if wikiref
             else f"the model fine-tuning started from (`{card_model_name(finetuning.init_checkpoint)}`)")
    method = {"one_step": "one-step identification: in each encoder matrix the top entries by magnitude of "
                          + start,
              "iterative": "gradual magnitude pruning (Zhu & Gupta 2017) during WikiRef pre-training, the mask "
                           "saved with the pre-trained model"}.get(
        subnetwork.method, f"method {subnetwork.method!r}")
    text = f"Only a sparse subnetwork was trained (§III-F of the paper), chosen by {method}"
    if not share:  # results written before the share was recorded: say only what is known
        return text + f": {100 * fraction:g}% of each encoder matrix; embeddings and the scoring head fully trainable."
    groups = share.fully_trainable or {}
    names = {"embeddings": "embeddings", "encoder": "encoder biases and LayerNorm", "head": "pooling and scoring head"}
    rest = " + ".join(f"{names.get(group, group)} ({count:,})" for group, count in groups.items())
    tensors = (f"{share.recorded_or('masked_matrices', share.masked_tensors)} "
               "encoder matrices")
    if share.masked_vectors:
        tensors += f" and {share.masked_vectors} bias/LayerNorm vectors"
    text += (f": {100 * share.mask_density:.2f}% of each of the {tensors} "
             f"({share.masked_trainable:,} of {share.masked_entries:,} entries)" + (f" + {rest}" if rest else "")
             + f" = {share.trainable_parameters:,} of {share.total_parameters:,} parameters, "
             f"**{100 * share.trainable_share:.2f}% of all parameters**. The other entries are bit-identical to "
             "the pre-trained ones")
    if isinstance(subnetwork.changed_fraction, (int, float)):
        text += f"; {100 * subnetwork.changed_fraction:.2f}% of the masked matrices' entries changed"
    return text + "."


def _pruning_text(results: TrainingResults) -> str:
    """The gradual pruning of an iterative subnetwork (``results.subnetwork``): its schedule, the final density
    of the mask and whether the run reached the schedule's target; ``""`` for other subnetworks."""
    record = results.subnetwork
    if not record or record.method != "iterative":
        return ""
    schedule = record.schedule or {}
    text = "Gradual magnitude pruning (Zhu & Gupta, 2017) during WikiRef pre-training"
    if schedule:
        fraction = record.recorded_or("fraction", 0)
        text += (f": from {100 * schedule.get('initial_fraction', 1.0):g}% to {100 * fraction:g}% of "
                 f"each encoder matrix between steps {schedule.get('begin_step', '?')} and "
                 f"{schedule.get('end_step', '?')}, pruning every {schedule.get('update_frequency', '?')} steps")
    density = record.final_density
    if isinstance(density, (int, float)):
        text += f"; the final mask keeps **{100 * density:.2f}%** of their entries"
    if schedule.get("reached_target") is False:
        text += (f" — the run ended (step {schedule.get('steps', '?')}) before the schedule reached its target, so "
                 "the subnetwork is larger than asked")
    return text + "."
