"""Q-BERT model configuration: the encoder's configuration (BERT's fields, the encoder's type) plus the sentence-scoring
options of §III of Zhu et al. (2022).

This file is copied next to the weights by ``save_pretrained`` (``auto_map``) and loaded with
``trust_remote_code=True``: it imports nothing from this project.
"""

from typing import Literal

from huggingface_hub.dataclasses import strict
from transformers import AutoConfig, BertConfig, PreTrainedConfig
from transformers.models.auto.configuration_auto import CONFIG_MAPPING

POOLINGS = ("query_focused", "cls", "mean", "max", "attention")
OBJECTIVES = ("classification", "regression")
ATTENTION_SCOPES = ("window", "sentence")
PADDING_OFFSET_ENCODERS = ("roberta", "xlm-roberta", "xlm-roberta-xl", "camembert", "data2vec-text", "mpnet")
"""Encoder types whose embeddings count positions from `padding_idx + 1` (fairseq's rule): their position table has
`max_position_embeddings - padding_idx - 1` usable rows. MPNet fixes its `padding_idx` at 1, the others take
`pad_token_id`."""
_NOT_ENCODER_KEYS = ("model_type", "architectures", "auto_map", "custom_pipelines", "transformers_version",
                     "encoder_model_type")


@strict
class QBertConfig(BertConfig):
    r"""
    Configuration of [`QBertForSentenceScoring`]: the encoder's fields (those of [`BertConfig`], and any other its
    type has, such as MPNet's `relative_attention_num_buckets`), the encoder's type, and the options below.

    Why flat, with the type as one field. An encoder checkpoint's `config.json` (BERT, RoBERTa, XLM-RoBERTa, MPNet…)
    loads into this class unchanged: its `model_type` becomes `encoder_model_type`, and its sizes stay where the head,
    the processor and the prefix cache read them (`hidden_size`, `max_position_embeddings`, …), as in every Q-BERT
    folder saved before the field existed (which therefore load as BERT, the default). The encoder's own configuration
    is derived from these fields when the model is built ([`to_encoder_config`], `AutoConfig.for_model`) rather than
    kept as a nested sub-configuration: a nested one would break those folders' `config.json` and every reader of the
    flat sizes, and the two could disagree. Fields the encoder's type does not use (`type_vocab_size` for MPNet) are
    carried along and ignored by it.

    Args:
        encoder_model_type (`str`, *optional*, defaults to `"bert"`):
            The encoder's `model_type` (`"bert"`, `"roberta"`, `"xlm-roberta"`, `"mpnet"`, or another type that
            `transformers.AutoModel` builds): the encoder is `AutoModel.from_config(self.to_encoder_config())`, kept
            under the attribute `bert` whatever its class (the weights keep their `bert.` names). Set from the
            `model_type` of an encoder checkpoint's `config.json` when one is loaded into this class.
        pooling (`str`, *optional*, defaults to `"query_focused"`):
            How a sentence vector is pooled from its token encodings. `"query_focused"` (the paper's Eq. 2-3):
            h_Q = mean of the query token encodings, v_j = softmax(h_Q W_q H_jᵀ) H_j. `"attention"`: the same with a
            learned vector instead of h_Q W_q. `"mean"` / `"max"`: mean / max over the sentence's tokens. `"cls"`: the
            processor puts a [CLS] token before every sentence and the model reads its encoding (the BERT baseline).
        objective (`str`, *optional*, defaults to `"classification"`):
            `"classification"`: linear + sigmoid, binary cross-entropy against `oracle_label` (Eq. 4, 6).
            `"regression"`: linear, mean squared error against `oracle_score` (Eq. 5, 7).
        use_query (`bool`, *optional*, defaults to `True`):
            Whether the query is packed into the input. `False` gives the "w/o Query" ablation (and, with a random
            encoder, the TRANSFORMER baseline); `"query_focused"` pooling needs the query.
        max_query_levels (`int`, *optional*, defaults to `8`):
            Number of level marker tokens `[L1]` … `[Lk]` the processor adds to the vocabulary. Query levels beyond
            the k-th are joined into the k-th level.
        attention_scope (`str`, *optional*, defaults to `"window"`):
            `"window"` (the paper): every token of a window attends to every other, query and sentences together.
            `"sentence"`: the query attends only to itself and each sentence only to itself, with positions counted
            from the start of each part, so that a sentence is encoded as if it were alone. A sentence-embedding
            encoder (all-MiniLM-L6-v2) was trained that way; packed into one window it loses what it learned (see
            `query_similarity`). Not in the paper.
        query_similarity (`bool`, *optional*, defaults to `False`):
            Add `similarity_scale * cos(h_Q, v_j)` to each sentence's logit, h_Q the mean of the query token
            encodings and v_j the pooled sentence; the linear head starts at zero, so an untrained model ranks the
            sentences by their similarity to the query, as a sentence-embedding encoder does. Needs `use_query`. Not
            in the paper.
        selection_threshold (`float`, *optional*):
            Score threshold of the WikiRef selection rule, as tuned on a dev set (`selection.tune_threshold`); the
            pipeline's default for single-document inputs. `None`: 0.5 for classification, 0.0 for regression.
        sentence_position_buckets (`int`, *optional*, defaults to `0`):
            With `B > 0`, each sentence's logit gains a learned bias for its index in its document (sentences
            `0 … B-2` each their own, every later one the last bucket), starting at zero: where a sentence stands,
            which `attention_scope="sentence"` hides from the encoder and which news summaries depend on. The
            processor then returns `sentence_positions` (it is built with `sentence_positions=True`). `0`: none (the
            paper's). Not in the paper.
        cluster_selection (`str`, *optional*, defaults to `"duc"`):
            The rule the pipeline's `selection="auto"` uses for several documents (a cluster): `"duc"` (the paper's
            greedy rule with its bigram-redundancy threshold), `"mmr"` (maximal marginal relevance) or `"ilp"` (bigram
            concept coverage by integer linear programming, Gillick and Favre, 2009; needs scipy). Fine-tuning records
            the rule it was evaluated with.

    Example:

    ```python
    >>> from modeling_qbert import QBertConfig, QBertForSentenceScoring

    >>> config = QBertConfig(hidden_size=384, num_hidden_layers=6, num_attention_heads=12, intermediate_size=1536)
    >>> model = QBertForSentenceScoring(config)
    ```"""

    model_type = "qbert"

    encoder_model_type: str = "bert"
    pooling: Literal["query_focused", "cls", "mean", "max", "attention"] = "query_focused"
    objective: Literal["classification", "regression"] = "classification"
    use_query: bool = True
    max_query_levels: int = 8
    attention_scope: Literal["window", "sentence"] = "window"
    query_similarity: bool = False
    selection_threshold: float | int | None = None
    sentence_position_buckets: int = 0
    cluster_selection: Literal["duc", "mmr", "ilp"] = "duc"

    def __post_init__(self, **kwargs):
        # An encoder checkpoint's config.json names its own type ("bert", "roberta", …): that is the encoder's type;
        # this class is "qbert" (a class attribute). A saved Q-BERT's says "qbert" and carries encoder_model_type.
        model_type = kwargs.pop("model_type", None)
        if model_type not in (None, self.model_type) and self.encoder_model_type == "bert":
            self.encoder_model_type = model_type
        super().__post_init__(**kwargs)

    def validate_encoder_model_type(self):
        """Part of `@strict`-powered validation: `encoder_model_type` names a configuration transformers knows."""
        if self.encoder_model_type == self.model_type or self.encoder_model_type not in CONFIG_MAPPING:
            raise ValueError(f"encoder_model_type={self.encoder_model_type!r} is not an encoder type transformers "
                             "knows (e.g. 'bert', 'roberta', 'xlm-roberta', 'mpnet')")

    def validate_sentence_scoring(self):
        """Part of `@strict`-powered validation: the Q-BERT options are consistent."""
        if self.pooling == "query_focused" and not self.use_query:
            raise ValueError(
                "pooling='query_focused' pools with the query's encoding and needs use_query=True; "
                "use pooling='attention' (a learned query vector) or 'mean'/'max'/'cls' for the w/o-query ablation"
            )
        if self.query_similarity and not self.use_query:
            raise ValueError("query_similarity compares each sentence with the query and needs use_query=True")
        if self.sentence_position_buckets < 0:
            raise ValueError(f"sentence_position_buckets must be at least 0, got {self.sentence_position_buckets}")
        if self.max_query_levels < 1:
            raise ValueError(f"max_query_levels must be at least 1, got {self.max_query_levels}")

    def to_encoder_config(self) -> PreTrainedConfig:
        """The encoder's own configuration (`AutoConfig.for_model(encoder_model_type, ...)`) built from these fields,
        without the Q-BERT options."""
        own = set(QBertConfig.__annotations__)
        fields = {key: value for key, value in self.to_dict().items()
                  if key not in own and key not in _NOT_ENCODER_KEYS}
        return AutoConfig.for_model(self.encoder_model_type, **fields)

    @property
    def encoder_segment_types(self) -> int:
        """How many token types (segments) the encoder embeds: `type_vocab_size` (2 for BERT, 1 for RoBERTa and
        XLM-R), 0 for an encoder without segment embeddings (MPNet). The processor gives the document part type 1
        only when there are two."""
        if not hasattr(CONFIG_MAPPING[self.encoder_model_type], "type_vocab_size"):
            return 0
        return self.type_vocab_size

    @property
    def encoder_position_offset(self) -> int:
        """The position id the encoder gives a sequence's first token: `padding_idx + 1` for the encoders that count
        positions after the padding index (RoBERTa, XLM-R, MPNet: 2), 0 for BERT."""
        if self.encoder_model_type not in PADDING_OFFSET_ENCODERS:
            return 0
        return 2 if self.encoder_model_type == "mpnet" else (self.pad_token_id or 0) + 1

    @property
    def default_threshold(self) -> float:
        """The selection threshold to use when none is given: the tuned one, else 0.5 (probability) or 0.0."""
        if self.selection_threshold is not None:
            return float(self.selection_threshold)
        return 0.5 if self.objective == "classification" else 0.0


__all__ = ["QBertConfig", "POOLINGS", "OBJECTIVES", "ATTENTION_SCOPES", "PADDING_OFFSET_ENCODERS"]
