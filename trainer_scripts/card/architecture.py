"""What the card says the model does: its Architecture paragraph (how the encoder reads the query and the
sentences, the pooling, the scoring head) and the rule its cluster summaries are chosen with."""

from __future__ import annotations

from trainer_scripts.card.names import card_model_name
from trainer_scripts.results import FinetuningResults, TrainingResults


def architecture_text(results: TrainingResults, max_length: int) -> str:
    """The card's Architecture paragraph for what this checkpoint does (`TrainingResults.model_settings`): the
    paper's joint windows, or (the `sentence-encoder` recipe) each sentence encoded alone; its pooling; the
    query-similarity term and the position bias where it has them."""
    settings = results.model_settings()
    base = card_model_name(results.base_model) if results.base_model else "base encoder not recorded"
    if settings.attention_scope == "sentence":
        reading = (f"a BERT encoder ({base}) reads the query (`[CLS] [L1] level 1 [L2] level 2 … [SEP]`) and whole "
                   f"document sentences packed side by side in {max_length}-token windows, but the query and each "
                   "sentence attend only to themselves (a block-diagonal attention mask, positions restarting at each "
                   "part): each is encoded alone, as a sentence-embedding encoder was trained")
    elif settings.packing == "sentences":
        reading = (f"a BERT encoder ({base}) reads `[CLS] [L1] level 1 [L2] level 2 … [SEP] document [SEP]` (query "
                   f"segment 0, document segment 1), whole sentences packed side by side in {max_length}-token "
                   "windows, every token attending to every other")
    else:
        reading = (f"a BERT encoder ({base}) reads `[CLS] [L1] level 1 [L2] level 2 … [SEP] document [SEP]` (query "
                   f"segment 0, document segment 1; long documents in {max_length}-token windows with a stride, each "
                   "sentence scored once, in the window where its context is largest)")
    pooling = settings.pooling
    pooled = {"query_focused": "**Query-focused pooling** turns each sentence's token encodings H_j into a vector "
                               "v_j = softmax(h_Q W_q H_jᵀ) H_j, with h_Q the mean encoding of the query tokens",
              "attention": "**Attention pooling** (a learned query vector) turns each sentence's token encodings into "
                           "one vector",
              "mean": "Each sentence's token encodings are **averaged**",
              "max": "Each sentence's token encodings are **max-pooled**",
              "cls": "A [CLS] token before each sentence gives its vector"}.get(pooling, f"{pooling} pooling")
    extras = []
    if settings.query_similarity:
        extras.append("a learned multiple of the cosine between the query and the sentence")
    if settings.sentence_position_buckets:
        extras.append(f"a learned bias for the sentence's place in its document "
                      f"({settings.sentence_position_buckets} positions)")
    head = "a linear **scoring head** gives one score per sentence"
    if extras:
        head += ", to which each score adds " + " and ".join(extras)
    return f"{reading}. {pooled}, and {head}."


CLUSTER_RULE_TEXT = {
    "duc": "the paper's DUC rule (by score, skipping a sentence with more than half of its bigrams in the summary)",
    "mmr": "maximal marginal relevance (score against the largest unigram cosine to the summary)",
    "ilp": "bigram concept coverage (the bigrams of the 300 best-scored sentences, weighted by their scores, covered "
           "under the word budget by integer linear programming; Gillick and Favre, 2009)",
}
"""What each cluster selection rule (``finetune_duc.py --selection``, ``config.cluster_selection``) is, for the card."""


def cluster_rule_text(finetuning: FinetuningResults | None) -> str:
    """The rule the model's cluster summaries were chosen with (the paper's for a run that recorded none)."""
    rule = (finetuning.selection if finetuning else None) or "duc"
    return CLUSTER_RULE_TEXT.get(rule, f"the {rule!r} rule")
