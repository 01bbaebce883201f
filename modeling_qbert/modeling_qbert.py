"""Q-BERT (§III-B-E of Zhu et al., 2022): an encoder, a sentence pooling layer and a linear sentence-scoring head.

The encoder is BERT (the paper's) or any encoder `transformers.AutoModel` builds from `config.encoder_model_type`
(RoBERTa, XLM-RoBERTa, MPNet, …), kept under the attribute `bert` whatever its class, so that the weights of every
Q-BERT keep their `bert.` names.

The input packs the query and one document (see `processing_qbert.QBertProcessor`); `sentence_ids` says which
document sentence each token belongs to, so one forward pass scores every sentence of a window. Pooling is vectorised
with segment (scatter) operations: no Python loop over sentences.

This file is copied next to the weights by ``save_pretrained`` (``auto_map``) and loaded with
``trust_remote_code=True``: it imports only ``torch``, ``transformers`` and the configuration file, relatively.
"""

import inspect
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn
from torch.nn import functional
from transformers import AutoModel, PreTrainedModel
from transformers import initialization as init
from transformers.models.auto.modeling_auto import MODEL_MAPPING
from transformers.models.bert.modeling_bert import BertPreTrainedModel
from transformers.processing_utils import Unpack
from transformers.utils import ModelOutput, TransformersKwargs, logging
from transformers.utils.generic import can_return_tuple

from .configuration_qbert import QBertConfig

logger = logging.get_logger(__name__)

PREFIX_ENCODERS = ("bert", "roberta", "xlm-roberta", "mpnet")
"""Encoder types whose embeddings and layers a frozen prefix runs on their own (`QBertForSentenceScoring.prefix_modules`,
`encoder_layers`): their layers take `(hidden_states, attention_mask)`, MPNet's a position bias as well."""

IGNORE_INDEX = -100
"""Label value of a sentence that takes no part in the loss (NaN is ignored too, for regression labels)."""


@dataclass
class SentenceScoringOutput(ModelOutput):
    r"""
    Output of [`QBertForSentenceScoring`].

    Args:
        loss (`torch.FloatTensor` of shape `()`, *optional*, returned when `labels` is provided):
            Binary cross-entropy (classification) or mean squared error (regression), averaged over the sentences
            that have a label.
        scores (`torch.FloatTensor` of shape `(batch_size, num_sentences)`):
            Sentence scores: probabilities P(s_j | Q, D) for classification, r(s_j | Q, D) for regression. Zero where
            `sentence_mask` is `False`.
        sentence_mask (`torch.BoolTensor` of shape `(batch_size, num_sentences)`):
            `True` for the sentences that have tokens in the row (the ones scored there).
        logits (`torch.FloatTensor` of shape `(batch_size, num_sentences)`):
            The head's output before the sigmoid (equal to `scores` for regression). Zero where `sentence_mask` is
            `False`.
        hidden_states (`tuple(torch.FloatTensor)`, *optional*, returned when `output_hidden_states=True`):
            The encoder's hidden states (embeddings + one per layer), each of shape
            `(batch_size, sequence_length, hidden_size)`.
        attentions (`tuple(torch.FloatTensor)`, *optional*, returned when `output_attentions=True`):
            The encoder's attention weights, each of shape `(batch_size, num_heads, sequence_length, sequence_length)`.
    """

    loss: torch.FloatTensor | None = None
    scores: torch.FloatTensor | None = None
    sentence_mask: torch.BoolTensor | None = None
    logits: torch.FloatTensor | None = None
    hidden_states: tuple[torch.FloatTensor, ...] | None = None
    attentions: tuple[torch.FloatTensor, ...] | None = None


def _segment_index(sentence_ids: torch.Tensor, num_sentences: int) -> torch.Tensor:
    """`sentence_ids` with every non-sentence token (-1) sent to an extra bucket `num_sentences`, dropped later."""
    # The check reads a value back from the device; under torch.compile it would break the graph (an index out of
    # range still fails there, in the scatter).
    if not torch.compiler.is_compiling() and sentence_ids.numel() and int(sentence_ids.max()) >= num_sentences:
        raise ValueError(
            f"sentence_ids holds sentence {int(sentence_ids.max())} but only {num_sentences} sentences are scored "
            "(the second dimension of `labels`)"
        )
    return torch.where(sentence_ids >= 0, sentence_ids, torch.full_like(sentence_ids, num_sentences))


def _segment_softmax(logits: torch.Tensor, index: torch.Tensor, num_segments: int) -> torch.Tensor:
    """Softmax of `logits` (batch, seq) within each segment of `index` (batch, seq) with values < `num_segments`."""
    batch_size = logits.shape[0]
    # Shift by the segment maximum for stability; the shift cancels out, so it needs no gradient.
    segment_max = logits.new_full((batch_size, num_segments), float("-inf"))
    segment_max = segment_max.scatter_reduce(1, index, logits.detach(), reduce="amax", include_self=True)
    exponentials = torch.exp(logits - segment_max.gather(1, index))
    denominators = logits.new_zeros((batch_size, num_segments)).scatter_add(1, index, exponentials)
    return exponentials / denominators.gather(1, index)


def sentence_scope_inputs(sentence_ids: torch.Tensor) -> tuple[torch.BoolTensor, torch.LongTensor]:
    """The attention mask and position ids of `attention_scope="sentence"`: every scored sentence attends only to its
    own tokens, the prefix (`[CLS]` and the query, every token before the first scored sentence) only to itself, and
    every other token (the closing `[SEP]`, padding) only to itself; positions restart at 0 for the prefix and at 1
    for each sentence (as after a `[CLS]`), so that a sentence is encoded as if it were alone.

    Returns `(mask, position_ids)`: a `(batch_size, 1, sequence_length, sequence_length)` boolean mask, `True` where a
    token may attend, and `(batch_size, sequence_length)` positions.
    """
    batch_size, length = sentence_ids.shape
    positions = torch.arange(length, device=sentence_ids.device).expand(batch_size, length)
    scored = sentence_ids >= 0
    started = scored.long().cumsum(1) > 0
    # Segment ids: sentences 0 … S-1, the prefix -1, every other token a segment of its own (-2 - position).
    segment = torch.where(scored, sentence_ids, torch.where(started, -2 - positions, torch.full_like(positions, -1)))
    mask = (segment.unsqueeze(2) == segment.unsqueeze(1)).unsqueeze(1)
    change = torch.ones_like(scored)
    change[:, 1:] = segment[:, 1:] != segment[:, :-1]
    start = torch.where(change, positions, torch.zeros_like(positions)).cummax(1).values
    position_ids = positions - start + scored.long()
    return mask, position_ids


def query_encoding(hidden_states: torch.Tensor, query_mask: torch.Tensor) -> torch.Tensor:
    """h_Q: the mean of the token encodings where `query_mask` is 1, `(batch_size, hidden_size)` (zero without any)."""
    weights = query_mask.to(hidden_states.dtype).unsqueeze(-1)
    return (hidden_states * weights).sum(1) / weights.sum(1).clamp(min=1.0)


class QBertSentencePooling(nn.Module):
    """Token encodings → one vector per sentence, with the pooling named by `config.pooling`.

    `query_focused` (Eq. 2-3): h_Q = mean of the query token encodings, v_j = softmax(h_Q W_q H_jᵀ) H_j, the softmax
    over sentence j's tokens; W_q is `query_weight` (`nn.Linear` stores W_qᵀ). `attention`: the same with the learned
    vector `attention_vector` in place of h_Q W_q. `mean` / `max`: over the sentence's tokens. `cls`: the encoding of
    the sentence's first token, the [CLS] the processor puts before every sentence.
    """

    def __init__(self, config: QBertConfig):
        super().__init__()
        self.pooling = config.pooling
        if self.pooling == "query_focused":
            self.query_weight = nn.Linear(config.hidden_size, config.hidden_size, bias=False)
        elif self.pooling == "attention":
            self.attention_vector = nn.Parameter(torch.zeros(config.hidden_size))

    def forward(
        self,
        hidden_states: torch.Tensor,
        sentence_ids: torch.LongTensor,
        num_sentences: int,
        query_mask: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.BoolTensor]:
        r"""
        Args:
            hidden_states (`torch.FloatTensor` of shape `(batch_size, sequence_length, hidden_size)`):
                Token encodings H.
            sentence_ids (`torch.LongTensor` of shape `(batch_size, sequence_length)`):
                Sentence of each token, `0 … num_sentences-1`, or -1 for tokens of no scored sentence.
            num_sentences (`int`):
                S, the size of the output's second dimension.
            query_mask (`torch.Tensor` of shape `(batch_size, sequence_length)`, *optional*):
                1 for the query tokens averaged into h_Q; needed by `query_focused` pooling.

        Returns:
            `(pooled, sentence_mask)`: `(batch_size, S, hidden_size)` sentence vectors (zero for empty sentences) and
            the `(batch_size, S)` mask of the sentences that have tokens.
        """
        batch_size, _, hidden_size = hidden_states.shape
        index = _segment_index(sentence_ids, num_sentences)
        num_segments = num_sentences + 1
        counts = hidden_states.new_zeros((batch_size, num_segments)).scatter_add(
            1, index, torch.ones_like(index, dtype=hidden_states.dtype)
        )
        sentence_mask = counts[:, :num_sentences] > 0
        vector_index = index.unsqueeze(-1).expand(-1, -1, hidden_size)
        empty = hidden_states.new_zeros((batch_size, num_segments, hidden_size))

        if self.pooling in ("query_focused", "attention"):
            if self.pooling == "query_focused":
                if query_mask is None:
                    raise ValueError("pooling='query_focused' needs `query_mask` (the processor returns it)")
                direction = self.query_weight(query_encoding(hidden_states, query_mask))  # h_Q W_q
            else:
                direction = self.attention_vector.unsqueeze(0).expand(batch_size, -1)
            token_logits = torch.einsum("btd,bd->bt", hidden_states, direction)
            token_weights = _segment_softmax(token_logits, index, num_segments)
            pooled = empty.scatter_add(1, vector_index, token_weights.unsqueeze(-1) * hidden_states)
        elif self.pooling == "mean":
            pooled = empty.scatter_add(1, vector_index, hidden_states) / counts.clamp(min=1.0).unsqueeze(-1)
        elif self.pooling == "max":
            pooled = empty.scatter_reduce(1, vector_index, hidden_states, reduce="amax", include_self=False)
        elif self.pooling == "cls":
            positions = torch.arange(index.shape[1], device=index.device).expand_as(index)
            first = index.new_full((batch_size, num_segments), index.shape[1] - 1)
            first = first.scatter_reduce(1, index, positions, reduce="amin", include_self=True)
            pooled = hidden_states.gather(1, first.unsqueeze(-1).expand(-1, -1, hidden_size))
        else:  # the configuration validates the name; this guards hand-edited objects
            raise ValueError(f"unknown pooling {self.pooling!r}")
        pooled = pooled[:, :num_sentences] * sentence_mask.unsqueeze(-1)
        return pooled, sentence_mask


def build_encoder(config: QBertConfig) -> PreTrainedModel:
    """The encoder of a Q-BERT: `AutoModel.from_config(config.to_encoder_config())`, without a pooler where the class
    has one (Q-BERT pools sentences itself), with Q-BERT's attention implementation where the encoder supports it."""
    encoder_config = config.to_encoder_config()
    options = {}
    if "add_pooling_layer" in inspect.signature(MODEL_MAPPING[type(encoder_config)].__init__).parameters:
        options["add_pooling_layer"] = False
    try:
        return AutoModel.from_config(encoder_config, attn_implementation=config._attn_implementation, **options)
    except ValueError:  # an implementation this encoder lacks (MPNet has eager attention only): its default, from a
        # fresh configuration (the failed attempt left the implementation it asked for in `encoder_config`)
        return AutoModel.from_config(config.to_encoder_config(), **options)


class QBertPreTrainedModel(BertPreTrainedModel):
    """Weight initialisation and loading for Q-BERT; `base_model_prefix = "bert"` lets an encoder checkpoint whose
    weights have no prefix (a `BertModel`, `RobertaModel`, `MPNetModel` …) fill the encoder; the encoder's own
    initialisation runs for its modules (transformers dispatches it to the sub-model)."""

    config: QBertConfig
    config_class = QBertConfig
    base_model_prefix = "bert"
    # forward takes **kwargs (attention outputs), but the loss is a mean computed here: Trainer must not rescale it.
    accepts_loss_kwargs = False

    @torch.no_grad()
    def _init_weights(self, module: nn.Module) -> None:
        super()._init_weights(module)
        if isinstance(module, QBertSentencePooling) and module.pooling == "attention":
            init.normal_(module.attention_vector, mean=0.0, std=self.config.initializer_range)
        if isinstance(module, QBertForSentenceScoring) and self.config.query_similarity:
            # An untrained head ranks by similarity to the query alone: the linear part starts at zero.
            init.zeros_(module.classifier.weight)
            init.zeros_(module.classifier.bias)
            init.ones_(module.similarity_scale)
        if isinstance(module, QBertForSentenceScoring) and self.config.sentence_position_buckets > 0:
            init.zeros_(module.position_bias.weight)  # an untrained model ignores where a sentence stands


class QBertForSentenceScoring(QBertPreTrainedModel):
    """Q-BERT: encoder (`config.encoder_model_type`) → sentence pooling (`config.pooling`) → linear head, one score per document sentence.

    Classification (`config.objective="classification"`): P(s_j) = σ(W_c v_j + b_c), BCE against `oracle_label`.
    Regression: r(s_j) = W_r v_j + b_r, MSE against `oracle_score`. With `config.query_similarity` the logit gains
    `similarity_scale * cos(h_Q, v_j)`; with `config.sentence_position_buckets` it gains a learned bias for the
    sentence's index in its document; with `config.attention_scope="sentence"` each sentence is encoded alone (see
    [`sentence_scope_inputs`]).
    """

    def __init__(self, config: QBertConfig):
        super().__init__(config)
        self.bert = build_encoder(config)  # the name keeps the weights' `bert.` prefix whatever the encoder's class
        # read once, not in every forward pass: whether the encoder takes segment ids at all (MPNet does not)
        self._encoder_takes_token_types = "token_type_ids" in inspect.signature(self.bert.forward).parameters
        offset = self.position_offset
        if offset != config.encoder_position_offset:
            logger.warning(f"the {config.encoder_model_type} encoder counts positions from {offset}, its configuration "
                           f"from {config.encoder_position_offset}: processor windows may exceed its position table")
        self.sentence_pooling = QBertSentencePooling(config)
        classifier_dropout = (
            config.classifier_dropout if config.classifier_dropout is not None else config.hidden_dropout_prob
        )
        self.dropout = nn.Dropout(classifier_dropout)
        self.classifier = nn.Linear(config.hidden_size, 1)
        if config.query_similarity:
            self.similarity_scale = nn.Parameter(torch.ones(()))
        if config.sentence_position_buckets > 0:
            self.position_bias = nn.Embedding(config.sentence_position_buckets, 1)

        # Initialize weights and apply final processing
        self.post_init()

    def get_input_embeddings(self) -> nn.Embedding:
        return self.bert.get_input_embeddings()

    def set_input_embeddings(self, value: nn.Embedding) -> None:
        self.bert.set_input_embeddings(value)

    @property
    def position_offset(self) -> int:
        """The position id the encoder gives a sequence's first token: `padding_idx + 1` where its embeddings count
        positions after the padding index (RoBERTa, XLM-R, MPNet), else 0. Added to the positions of
        [`sentence_scope_inputs`], which count from 0 as BERT does."""
        padding_idx = getattr(getattr(self.bert, "embeddings", None), "padding_idx", None)
        return 0 if padding_idx is None else int(padding_idx) + 1

    def segment_inputs(self, token_type_ids: torch.Tensor | None) -> dict[str, torch.Tensor]:
        """`{"token_type_ids": ...}` for an encoder that embeds segments, `{}` for one that has none (MPNet).

        Raises:
            ValueError: a token type the encoder does not embed (a processor built for BERT's two segments feeding a
                RoBERTa or XLM-R encoder, which embeds one).
        """
        if token_type_ids is None or not self._encoder_takes_token_types:
            return {}
        types = getattr(self.bert.config, "type_vocab_size", None)
        if types is not None and not torch.compiler.is_compiling() and token_type_ids.numel():
            if int(token_type_ids.max()) >= types:
                raise ValueError(
                    f"token_type_ids hold type {int(token_type_ids.max())} but the {self.config.encoder_model_type} "
                    f"encoder embeds {types} token type(s): build the processor with QBertProcessor.from_config(tokenizer, "
                    "model.config), which gives every token type 0 for such an encoder"
                )
        return {"token_type_ids": token_type_ids}

    def encoder_attention_mask(self, mask: torch.Tensor) -> torch.Tensor:
        """A `(batch_size, 1, sequence_length, sequence_length)` boolean mask (`True`: may attend) in the form the
        encoder's attention takes a prepared mask, which transformers passes on as it is: boolean for `sdpa` (and
        the other kernels), additive for `eager` attention (0 where a token may attend, the dtype's minimum elsewhere),
        which adds the mask to the scores (MPNet has eager attention only)."""
        if mask.dtype != torch.bool or self.bert.config._attn_implementation != "eager":
            return mask
        return torch.zeros(mask.shape, dtype=self.dtype, device=mask.device).masked_fill(
            ~mask, torch.finfo(self.dtype).min)

    def encoder_embeddings(
        self, input_ids: torch.Tensor, token_type_ids: torch.Tensor | None, position_ids: torch.Tensor
    ) -> torch.Tensor:
        """The encoder's embeddings of `input_ids`, `position_ids` counted from 0 as [`sentence_scope_inputs`] counts
        them ([`position_offset`] is added here)."""
        return self.bert.embeddings(input_ids=input_ids, position_ids=position_ids + self.position_offset,
                                    **self.segment_inputs(token_type_ids))

    @can_return_tuple
    def forward(
        self,
        input_ids: torch.Tensor | None = None,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
        sentence_ids: torch.LongTensor | None = None,
        query_mask: torch.Tensor | None = None,
        labels: torch.Tensor | None = None,
        sentence_positions: torch.LongTensor | None = None,
        position_ids: torch.Tensor | None = None,
        inputs_embeds: torch.Tensor | None = None,
        **kwargs: Unpack[TransformersKwargs],
    ) -> tuple[torch.Tensor, ...] | SentenceScoringOutput:
        r"""
        Args:
            input_ids (`torch.LongTensor` of shape `(batch_size, sequence_length)`):
                `[CLS] [L1] level-1 … [SEP] document [SEP]` token ids, as the processor packs them.
            attention_mask (`torch.Tensor` of shape `(batch_size, sequence_length)`, *optional*):
                1 for real tokens, 0 for padding.
            token_type_ids (`torch.LongTensor` of shape `(batch_size, sequence_length)`, *optional*):
                0 for the query part, 1 for the document part (0 everywhere for an encoder with fewer than two token
                types; ignored by one without any, MPNet).
            sentence_ids (`torch.LongTensor` of shape `(batch_size, sequence_length)`):
                Index `0 … S-1` of the scored sentence each token belongs to, -1 for every other token (special
                tokens, query, padding, and sentences scored in another window).
            query_mask (`torch.Tensor` of shape `(batch_size, sequence_length)`, *optional*):
                1 for the query tokens (level markers and level text) averaged into h_Q. Needed by `query_focused`
                pooling.
            labels (`torch.Tensor` of shape `(batch_size, S)`, *optional*):
                `oracle_label` (0/1) for classification or `oracle_score` for regression; -100 or NaN for sentences
                that take no part in the loss. Its second dimension fixes S; without labels S = max(sentence_ids)+1.
            sentence_positions (`torch.LongTensor` of shape `(batch_size, S)`, *optional*):
                Each scored sentence's index in its document (-1 for padding). Needed when
                `config.sentence_position_buckets > 0` (a processor built with `sentence_positions=True` returns it);
                ignored otherwise.
            position_ids (`torch.LongTensor` of shape `(batch_size, sequence_length)`, *optional*):
                Position indices as the encoder takes them; default: the encoder's own (`0 … sequence_length-1` for
                BERT), or with `attention_scope="sentence"` those of [`sentence_scope_inputs`] plus
                [`position_offset`].
            inputs_embeds (`torch.FloatTensor` of shape `(batch_size, sequence_length, hidden_size)`, *optional*):
                Embeddings to use instead of `input_ids`.
        """
        if sentence_ids is None:
            raise ValueError("QBertForSentenceScoring needs `sentence_ids` (the processor returns them)")
        if labels is not None:
            num_sentences = labels.shape[-1]
        else:
            num_sentences = int(sentence_ids.max()) + 1 if sentence_ids.numel() else 0

        prefix = self.frozen_prefix
        if prefix is not None and input_ids is not None and inputs_embeds is None:
            if kwargs.get("output_hidden_states") or kwargs.get("output_attentions"):
                raise ValueError("a model with a frozen prefix cache returns no hidden states or attentions: "
                                 "detach the cache (set_frozen_prefix(None)) to get them")
            # The cache gives the states after the frozen layers; only the layers above them run here.
            start_layer, prefix_states = prefix.states(self, input_ids, token_type_ids, sentence_ids)
            attention_mask, _ = sentence_scope_inputs(sentence_ids)
            last_hidden_state = self.encoder_layers(prefix_states, attention_mask, start=start_layer)
            outputs = None
        else:
            if self.config.attention_scope == "sentence":
                scope_mask, scope_positions = sentence_scope_inputs(sentence_ids)
                attention_mask = self.encoder_attention_mask(scope_mask)
                # the encoder takes given position ids as they are: RoBERTa's and MPNet's count from padding_idx + 1
                position_ids = scope_positions + self.position_offset if position_ids is None else position_ids
            outputs = self.bert(input_ids, attention_mask=attention_mask, position_ids=position_ids,
                                inputs_embeds=inputs_embeds, return_dict=True, **self.segment_inputs(token_type_ids),
                                **kwargs)
            last_hidden_state = outputs.last_hidden_state
        pooled, sentence_mask = self.sentence_pooling(
            last_hidden_state, sentence_ids, num_sentences, query_mask=query_mask
        )
        logits = self.classifier(self.dropout(pooled)).squeeze(-1)
        if self.config.query_similarity:
            if query_mask is None:
                raise ValueError("query_similarity needs `query_mask` (the processor returns it)")
            query_vector = query_encoding(last_hidden_state, query_mask)
            similarity = functional.cosine_similarity(pooled, query_vector.unsqueeze(1).to(pooled.dtype), dim=-1)
            logits = logits + self.similarity_scale * similarity
        if self.config.sentence_position_buckets > 0:
            logits = logits + self.position_logits(sentence_positions, logits.shape[-1])
        logits = logits * sentence_mask
        scores = torch.sigmoid(logits) * sentence_mask if self.config.objective == "classification" else logits

        loss = None
        if labels is not None:
            loss = self.sentence_loss(logits, labels, sentence_mask)

        return SentenceScoringOutput(
            loss=loss,
            scores=scores,
            sentence_mask=sentence_mask,
            logits=logits,
            hidden_states=outputs.hidden_states if outputs is not None else None,
            attentions=outputs.attentions if outputs is not None else None,
        )

    @property
    def frozen_prefix(self) -> Any:
        """The frozen-prefix cache the forward pass reads (see [`set_frozen_prefix`]), or `None`."""
        return self.__dict__.get("_frozen_prefix")

    def set_frozen_prefix(self, cache: Any) -> None:
        r"""
        Read the encoder's first layers from `cache` instead of running them, or stop (`cache=None`).

        `cache` is an object with a `layers` attribute k and a method `states(model, input_ids, token_type_ids,
        sentence_ids) -> (k, states)` giving, for a batch, the hidden states after the embeddings and the first k
        encoder layers (`modeling_qbert.prefix_cache.PrefixCache`). The forward pass then runs only the layers above
        k. That is exact only when every sentence is encoded alone (`attention_scope="sentence"`: its states do not
        depend on the window it is packed in) and the prefix does not change: the modules of [`prefix_modules`] (the
        embeddings, the first k layers and, for MPNet, the relative position bias all its layers share) are frozen
        here (`requires_grad=False`) and given back their previous setting when the cache is detached.

        Raises:
            ValueError: a window attention scope, a k the encoder does not have, or an encoder type outside
                [`PREFIX_ENCODERS`].
        """
        previous = self.frozen_prefix
        if previous is not None:
            for parameter, trainable in self.__dict__.pop("_prefix_trainable"):
                parameter.requires_grad_(trainable)
            self.__dict__.pop("_frozen_prefix")
        if cache is None:
            return
        if self.config.attention_scope != "sentence":
            raise ValueError("a frozen prefix cache needs attention_scope='sentence' (each sentence encoded alone); "
                             f"this model attends across its window ({self.config.attention_scope!r})")
        layers = int(cache.layers)
        if not 1 <= layers <= self.config.num_hidden_layers:
            raise ValueError(f"a frozen prefix of {layers} layers: the encoder has {self.config.num_hidden_layers}")
        frozen = [parameter for _, module in self.prefix_modules(layers) for parameter in module.parameters()]
        self.__dict__["_prefix_trainable"] = [(parameter, parameter.requires_grad) for parameter in frozen]
        for parameter in frozen:
            parameter.requires_grad_(False)
        self.__dict__["_frozen_prefix"] = cache

    def prefix_modules(self, layers: int) -> list[tuple[str, nn.Module]]:
        """`(name, module)` of every module the states after the first `layers` encoder layers depend on besides the
        word embeddings: `embeddings`, `layer.0` … and, for MPNet, `encoder.relative_attention_bias` (its layers'
        shared position bias).

        Raises:
            ValueError: an encoder whose layers this model does not run on their own (not in `PREFIX_ENCODERS`).
        """
        if self.config.encoder_model_type not in PREFIX_ENCODERS:
            raise ValueError(f"a frozen prefix runs the encoder's embeddings and layers one by one, which Q-BERT does "
                             f"for {', '.join(PREFIX_ENCODERS)} encoders; this one is "
                             f"{self.config.encoder_model_type!r}")
        modules = [("embeddings", self.bert.embeddings)]
        modules += [(f"layer.{index}", layer) for index, layer in enumerate(self.bert.encoder.layer[:layers])]
        bias = getattr(self.bert.encoder, "relative_attention_bias", None)
        if bias is not None:
            modules.append(("encoder.relative_attention_bias", bias))
        return modules

    def encoder_layers(
        self,
        hidden_states: torch.Tensor,
        attention_mask: torch.Tensor | None,
        start: int = 0,
        stop: int | None = None,
    ) -> torch.Tensor:
        r"""
        Run encoder layers `start … stop-1` over `hidden_states` (the embeddings' output for `start=0`).

        Args:
            hidden_states (`torch.FloatTensor` of shape `(batch_size, sequence_length, hidden_size)`):
                The states entering layer `start`.
            attention_mask (`torch.Tensor`, *optional*):
                A `(batch_size, sequence_length)` padding mask or a `(batch_size, 1, sequence_length,
                sequence_length)` boolean mask (the sentence scope's), as the encoder takes it.
            start, stop (`int`): the layers to run; `stop` defaults to the last.

        MPNet's layers also take the relative position bias its encoder computes once from the sequence's length
        (`MPNetEncoder.compute_position_bias`); it is computed here the same way.
        """
        from transformers.masking_utils import create_bidirectional_mask

        if attention_mask is not None and attention_mask.dim() == 4:
            attention_mask = self.encoder_attention_mask(attention_mask)
        # the encoder's configuration: its attention implementation decides the mask's form (boolean or additive)
        mask = create_bidirectional_mask(config=self.bert.config, inputs_embeds=hidden_states,
                                         attention_mask=attention_mask)
        extra = ()
        if hasattr(self.bert.encoder, "compute_position_bias"):
            extra = (self.bert.encoder.compute_position_bias(hidden_states),)
        for layer in self.bert.encoder.layer[start:stop]:
            output = layer(hidden_states, mask, *extra)
            hidden_states = output[0] if isinstance(output, tuple) else output
        return hidden_states

    def position_logits(self, sentence_positions: torch.LongTensor | None, num_sentences: int) -> torch.Tensor:
        """The learned bias of each scored sentence's place in its document, `(batch_size, S)`: bucket `min(index,
        B-1)` of `position_bias` (padding, -1, takes bucket 0 and is masked with its sentence)."""
        if sentence_positions is None:
            raise ValueError("config.sentence_position_buckets > 0 needs `sentence_positions` (a processor built with "
                             "QBertProcessor.from_config returns them)")
        positions = sentence_positions[:, :num_sentences]
        if positions.shape[-1] < num_sentences:
            positions = functional.pad(positions, (0, num_sentences - positions.shape[-1]), value=-1)
        buckets = positions.clamp(min=0, max=self.config.sentence_position_buckets - 1)
        return self.position_bias(buckets).squeeze(-1)

    def sentence_loss(
        self, logits: torch.Tensor, labels: torch.Tensor, sentence_mask: torch.BoolTensor
    ) -> torch.Tensor:
        """BCE-with-logits (classification) or MSE (regression), averaged over the labelled sentences that have
        tokens; labels of -100 or NaN are ignored. A batch without any labelled sentence gives a zero loss that keeps
        the graph."""
        labels = labels.to(logits.dtype)
        valid = sentence_mask & labels.ne(IGNORE_INDEX) & ~torch.isnan(labels)
        if not bool(valid.any()):
            return logits.sum() * 0.0
        if self.config.objective == "classification":
            return functional.binary_cross_entropy_with_logits(logits[valid], labels[valid])
        return functional.mse_loss(logits[valid], labels[valid])

    @classmethod
    def from_bert(
        cls,
        bert: "str | os.PathLike | PreTrainedModel",
        *,
        vocab_size: int | None = None,
        output_loading_info: bool = False,
        **config_overrides,
    ) -> "QBertForSentenceScoring | tuple[QBertForSentenceScoring, dict[str, list[str]]]":
        r"""
        Q-BERT whose encoder is initialised from an encoder checkpoint (BERT, RoBERTa, XLM-RoBERTa, MPNet, … as
        `AutoModel` loads it); the pooling and head start random. The checkpoint's `model_type` becomes
        `config.encoder_model_type`.

        Args:
            bert (`str`, `os.PathLike` or `PreTrainedModel`):
                A checkpoint folder or Hub id (as `from_pretrained` takes), or a loaded encoder (`BertModel`,
                `RobertaModel`, … or a model with a head, `BertFor…`, whose base model is used). A checkpoint's
                weights may be named without a prefix (a base model) or with the base model's (`roberta.`, `mpnet.`).
            vocab_size (`int`, *optional*):
                Resize the token embeddings to this size afterwards — pass `len(processor.tokenizer)` so the
                `[L#]` level tokens get embeddings (new rows start at the mean embedding).
            output_loading_info (`bool`, *optional*, defaults to `False`):
                Also return `{"missing_keys", "unexpected_keys", "mismatched_keys"}`.
            config_overrides:
                `QBertConfig` fields to set (`pooling`, `objective`, `use_query`, `max_query_levels`, dropouts…).

        The keys of the checkpoint that were not used (BERT's pooler, pre-training heads) and the weights that start
        random (the Q-BERT head) are logged as one summary; missing *encoder* weights are logged as a warning.
        """
        if isinstance(bert, PreTrainedModel):
            encoder = getattr(bert, bert.base_model_prefix, bert)
            settings = {key: value for key, value in encoder.config.to_dict().items()
                        if key not in ("model_type", "architectures", "auto_map", "transformers_version")}
            settings["encoder_model_type"] = encoder.config.model_type
            model = cls(QBertConfig(**{**settings, **config_overrides}))
            missing, unexpected = model.bert.load_state_dict(encoder.state_dict(), strict=False)
            info = {
                "missing_keys": sorted(f"bert.{key}" for key in missing)
                + sorted(name for name in model.state_dict() if not name.startswith("bert.")),
                "unexpected_keys": sorted(unexpected),
                "mismatched_keys": [],
            }
            source = type(bert).__name__
        else:
            with expected_new_head():
                model, info = cls.from_pretrained(bert, output_loading_info=True, key_mapping=_encoder_key_mapping(bert),
                                                  **config_overrides)
            info = {key: sorted(str(item) for item in info.get(key, [])) for key in
                    ("missing_keys", "unexpected_keys", "mismatched_keys")}
            source = str(bert)
        _log_encoder_init(source, info)
        if vocab_size is not None and vocab_size != model.config.vocab_size:
            with expected_new_head():
                model.resize_token_embeddings(vocab_size)
        return (model, info) if output_loading_info else model


def _encoder_key_mapping(checkpoint: "str | os.PathLike") -> dict[str, str] | None:
    """`from_pretrained`'s `key_mapping` that renames a checkpoint's weights saved under its own base model's prefix
    (`roberta.`, `mpnet.`: a `RobertaForMaskedLM`, …) to Q-BERT's `bert.`; `None` for a BERT checkpoint (its prefix is
    already `bert.`). Weights saved without a prefix (a base model) get `bert.` from `base_model_prefix`."""
    from transformers import PreTrainedConfig
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    model_type = PreTrainedConfig.get_config_dict(checkpoint)[0].get("model_type")
    if model_type not in CONFIG_MAPPING or CONFIG_MAPPING[model_type] not in MODEL_MAPPING:
        return None
    prefix = getattr(MODEL_MAPPING[CONFIG_MAPPING[model_type]], "base_model_prefix", "bert")
    return None if prefix == "bert" else {rf"^{prefix}\.": "bert."}


_EXPECTED_NOTES = ("transformers.utils.loading_report", "transformers.configuration_utils",
                   "transformers.modeling_utils")
"""transformers' loggers of its load report, of the "a `bert` config makes a `qbert` model" note and of the note
on new embedding rows."""


@contextmanager
def expected_new_head() -> Iterator[None]:
    """Hold back transformers' notes that are expected when a Q-BERT is built from a BERT checkpoint: the load report
    (the Q-BERT head's weights MISSING, BERT's pooler UNEXPECTED), the warning that a ``bert`` configuration makes a
    ``qbert`` model, the note that new embedding rows (the ``[L#]`` level tokens) start at the mean embedding, and the
    weight-loading progress bar. :meth:`QBertForSentenceScoring.from_bert` says in one line instead which weights
    are new and why, and warns when encoder weights are missing. What transformers raises (shapes that do not match,
    failed conversions) still raises: only its warnings below ``ERROR`` are held back, and only in this block."""
    import logging as std_logging

    # a filter, not a level: transformers reads its loggers' levels to decide what to check (at WARNING and above,
    # from_pretrained checks a tensor-parallel plan and warns about every layer it does not shard)
    def errors_only(record: std_logging.LogRecord) -> bool:
        return record.levelno >= std_logging.ERROR

    loggers = [std_logging.getLogger(name) for name in _EXPECTED_NOTES]
    bar = logging.is_progress_bar_enabled()
    for item in loggers:
        item.addFilter(errors_only)
    if bar:
        logging.disable_progress_bar()
    try:
        yield
    finally:
        for item in loggers:
            item.removeFilter(errors_only)
        if bar:
            logging.enable_progress_bar()


def _log_encoder_init(source: str, info: dict[str, list[str]]) -> None:
    """One summary line, and a warning when encoder weights were missing or had the wrong shape."""
    missing_encoder = [key for key in info["missing_keys"] if key.startswith("bert.")]
    new_head = [key for key in info["missing_keys"] if not key.startswith("bert.")]
    unused = info["unexpected_keys"]
    logger.info(
        f"Q-BERT encoder initialised from {source}; new by design, starting random: the Q-BERT pooling and scoring "
        f"head ({', '.join(new_head) or 'none'}); not used from the checkpoint: {', '.join(unused) or 'nothing'}"
        + (" (BERT's pooler or pre-training heads: Q-BERT pools sentences itself)" if unused else "")
    )
    if missing_encoder or info["mismatched_keys"]:
        logger.warning(
            f"Q-BERT encoder from {source} is incomplete: {len(missing_encoder)} encoder weights missing "
            f"{missing_encoder[:8]}{' …' if len(missing_encoder) > 8 else ''}, mismatched shapes "
            f"{info['mismatched_keys'] or 'none'}; these start random"
        )


__all__ = ["QBertPreTrainedModel", "QBertForSentenceScoring", "QBertSentencePooling", "SentenceScoringOutput",
           "expected_new_head", "sentence_scope_inputs"]
