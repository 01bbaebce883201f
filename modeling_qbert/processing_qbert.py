"""Q-BERT input packing: query levels + one document → 512-token windows with sentence maps, labels and a collator.

One example is a query (a list of levels: title, section, subsection… or title, narrative sentences) and one document
(a list of sentences). It becomes

    [CLS] [L1] level-1 [L2] level-2 … [SEP] document tokens [SEP]      segment ids 0 … 0 | 1 … 1

([CLS] and [SEP] are the tokenizer's own: `<s>` and `</s>` for RoBERTa, XLM-R and MPNet; an encoder that embeds fewer
than two segments, as those do, gets segment id 0 everywhere.)

Documents longer than a window are split BERT-style (run_squad's doc-stride rule): windows of the same length whose
starts are `stride` tokens apart, the query repeated in each. Every sentence is scored exactly once, in the window
that contains it whole with the largest min(left, right) context (ties: the earlier window). A sentence that no
regular window contains whole gets an extra window around it; a sentence longer than a window is truncated to the
window (with a warning), never dropped. Windows in which no sentence is scored are not produced.

Inside a window `sentence_ids` gives every token of a scored sentence its sentence's position among the window's
scored sentences (0, 1, …) and every other token -1; `sentence_index` maps those positions back to the sentences of
the example, and `example_index` the window to its example. [`QBertDataCollator`] pads windows into a batch and
[`QBertProcessor.gather_sentence_scores`] maps window scores back to (example, sentence).

This file is copied next to the weights by ``save_pretrained`` (``auto_map``) and loaded with
``trust_remote_code=True``. Splitting raw text into sentences uses the project's `wikiref_dataset.text` pipeline,
imported only when a document is given as text; a saved folder carries that module too (``remote_code.py``), so
spaCy is all it needs, and pre-split documents need nothing.
"""

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from transformers import BatchFeature
from transformers.processing_utils import ProcessorMixin
from transformers.tokenization_utils_base import PreTrainedTokenizerBase
from transformers.utils import logging

from .configuration_qbert import POOLINGS

logger = logging.get_logger(__name__)

LEVEL_TOKEN = "[L{}]"
"""The marker inserted before the #-th query level (§III-A of Zhu et al., 2022)."""

MODEL_INPUT_NAMES = ("input_ids", "token_type_ids", "attention_mask", "query_mask", "sentence_ids")
MAPPING_NAMES = ("example_index", "sentence_index")
LABEL_FIELDS = {"classification": "oracle_label", "regression": "oracle_score"}


@dataclass
class QBertExample:
    """One (query, document) pair as the processor reads it.

    Args:
        query_levels (`list[str]`): the query's levels, most general first (title, section, …).
        sentences (`list[str]`): the document's sentences, in order.
        labels (`list[float]`, *optional*): one label per sentence (`oracle_label` or `oracle_score`).
    """

    query_levels: list[str]
    sentences: list[str]
    labels: list[float] | None = None


@dataclass
class QBertWindow:
    """One packed window: model inputs (unpadded lists), its labels and where its scored sentences come from."""

    input_ids: list[int]
    token_type_ids: list[int]
    query_mask: list[int]
    sentence_ids: list[int]
    example_index: int
    sentence_index: list[int]
    labels: list[float] | None = None
    sentence_positions: list[int] | None = None

    def to_features(self) -> dict[str, Any]:
        features = {
            "input_ids": self.input_ids,
            "token_type_ids": self.token_type_ids,
            "attention_mask": [1] * len(self.input_ids),
            "query_mask": self.query_mask,
            "sentence_ids": self.sentence_ids,
            "example_index": self.example_index,
            "sentence_index": self.sentence_index,
        }
        if self.labels is not None:
            features["labels"] = self.labels
        if self.sentence_positions is not None:
            features["sentence_positions"] = self.sentence_positions
        return features


@dataclass
class WindowPlan:
    """Where the windows of one document lie and which window scores which sentence (document-token offsets).

    Args:
        windows (`list[tuple[int, int]]`): `[start, end)` of each window in the document's token sequence.
        assignment (`list[int]`): for each sentence, the index in `windows` of the window that scores it.
    """

    windows: list[tuple[int, int]]
    assignment: list[int]


def plan_windows(sentence_spans: Sequence[tuple[int, int]], window_length: int, stride: int) -> WindowPlan:
    """Windows over a document of sentences with token spans `sentence_spans` (contiguous, in order) and the window
    each sentence is scored in.

    Windows follow BERT's doc-stride rule: `window_length` tokens, starts `stride` apart, the last one ending at the
    document's end. A sentence no window contains whole (possible when it is longer than `window_length - stride`)
    gets an extra window centred on it. Each sentence then goes to the window that contains it whole with the largest
    min(left context, right context); ties go to the earlier window. Windows that score no sentence are dropped.
    Spans must be at most `window_length` long (the processor truncates longer sentences first).
    """
    if window_length < 1 or stride < 1:
        raise ValueError(f"window_length and stride must be positive, got {window_length} and {stride}")
    num_tokens = sentence_spans[-1][1] if sentence_spans else 0
    windows: list[tuple[int, int]] = []
    start = 0
    while start < num_tokens:
        length = min(num_tokens - start, window_length)
        windows.append((start, start + length))
        if start + length >= num_tokens:
            break
        start += min(length, stride)

    def covered(span: tuple[int, int]) -> bool:
        return any(window_start <= span[0] and span[1] <= window_end for window_start, window_end in windows)

    extra = set()
    for sentence_start, sentence_end in sentence_spans:
        if sentence_end - sentence_start > window_length:
            raise ValueError(f"sentence span {sentence_start}-{sentence_end} is longer than a window "
                             f"({window_length})")
        if not covered((sentence_start, sentence_end)):
            slack = window_length - (sentence_end - sentence_start)
            window_start = max(0, min(sentence_start - slack // 2, num_tokens - window_length))
            extra.add((window_start, min(num_tokens, window_start + window_length)))
    windows = sorted(set(windows) | extra)

    assignment = []
    for sentence_start, sentence_end in sentence_spans:
        best, best_context = -1, -1
        for position, (window_start, window_end) in enumerate(windows):
            if window_start <= sentence_start and sentence_end <= window_end:
                context = min(sentence_start - window_start, window_end - sentence_end)
                if context > best_context:
                    best, best_context = position, context
        assignment.append(best)

    used = sorted(set(assignment))
    renumber = {old: new for new, old in enumerate(used)}
    return WindowPlan(windows=[windows[position] for position in used],
                      assignment=[renumber[position] for position in assignment])


def plan_sentence_windows(sentence_spans: Sequence[tuple[int, int]], window_length: int) -> WindowPlan:
    """Windows that hold whole sentences, side by side, each sentence in exactly one window: a window starts at a
    sentence and takes the following sentences while they fit in `window_length` tokens.

    The `"sentences"` packing: about `window_length / stride` times fewer windows than the doc-stride rule (a DUC
    document of 800 tokens gives 2 windows of 512 instead of 5), at the price of less context for the sentences at
    a window's edges. Spans must be contiguous, in order, and at most `window_length` long.
    """
    if window_length < 1:
        raise ValueError(f"window_length must be positive, got {window_length}")
    windows: list[tuple[int, int]] = []
    assignment: list[int] = []
    for sentence_start, sentence_end in sentence_spans:
        if sentence_end - sentence_start > window_length:
            raise ValueError(f"sentence span {sentence_start}-{sentence_end} is longer than a window "
                             f"({window_length})")
        if windows and sentence_end - windows[-1][0] <= window_length:
            windows[-1] = (windows[-1][0], sentence_end)
        else:
            windows.append((sentence_start, sentence_end))
        assignment.append(len(windows) - 1)
    return WindowPlan(windows=windows, assignment=assignment)


PACKING_FORMAT = 1
"""Version of the window layout, part of the cache key of packed windows: bump it when `encode_example` changes."""

PACKINGS = ("stride", "sentences")
"""How a long document is cut into windows: `stride` (BERT's doc-stride rule, overlapping windows, the paper's) or
`sentences` (whole sentences side by side, no overlap: `plan_sentence_windows`)."""


def split_into_sentences(text: str) -> list[str]:
    """Sentences of a raw text with the project's one sentence splitter (`wikiref_dataset.text.TextPipeline`), which
    needs spaCy and nothing else: a saved folder carries it as `text.py` (`remote_code.py` makes this import relative
    there), so raw text is split the way the training data was wherever the folder is loaded."""
    try:
        from wikiref_dataset.text import default_pipeline
    except ModuleNotFoundError as error:
        if (error.name or "").split(".")[0] in ("spacy", "thinc"):
            raise ImportError(
                "splitting a raw-text document into sentences needs spaCy: pip install spacy "
                "(or pass the document as a list of sentences)", name=error.name
            ) from None
        raise ImportError(
            f"splitting a raw-text document into sentences needs the project's sentence splitter ({error}); this "
            "folder was saved without it: save it again with the wikiref package, or pass the document as a list of "
            "sentences"
        ) from None
    return default_pipeline().split_sentences(text)


def max_window_length(config: Any) -> int:
    """The longest window the model's position table holds: `max_position_embeddings` less the position the encoder
    gives the first token (`config.encoder_position_offset`: 2 for RoBERTa, XLM-R and MPNet, whose tables count from
    padding_idx + 1; 0 for BERT)."""
    return config.max_position_embeddings - getattr(config, "encoder_position_offset", 0)


class QBertProcessor(ProcessorMixin):
    r"""
    Packs (query, document) pairs into Q-BERT windows and maps scores back; wraps a BERT tokenizer to which it adds
    the level markers `[L1]` … `[Lk]` as special tokens (saved with the tokenizer; resize the model's embeddings to
    `len(processor.tokenizer)`).

    Args:
        tokenizer (`PreTrainedTokenizerBase`):
            A BERT (WordPiece) tokenizer.
        max_length (`int`, *optional*, defaults to 512):
            Tokens per window, special tokens and query included.
        stride (`int`, *optional*, defaults to 100):
            Distance in document tokens between the starts of consecutive windows (BERT's `doc_stride`).
        max_query_levels (`int`, *optional*, defaults to 8):
            k, the number of level markers; levels beyond the k-th are joined into the k-th.
        max_query_length (`int`, *optional*, defaults to 128):
            Query tokens per window (markers included); longer queries are cut at the end, with a warning.
        pooling (`str`, *optional*, defaults to `"query_focused"`):
            The model's pooling. With `"cls"` a [CLS] token is put before every sentence (the BERT baseline).
        use_query (`bool`, *optional*, defaults to `True`):
            `False` packs `[CLS] document [SEP]` only (the w/o-query ablation).
        objective (`str`, *optional*, defaults to `"classification"`):
            Which dataset column gives the labels: `oracle_label` (classification) or `oracle_score` (regression).
        packing (`str`, *optional*, defaults to `"stride"`):
            `"stride"`: overlapping windows `stride` tokens apart, each sentence scored where its context is largest
            (the paper's). `"sentences"`: whole sentences side by side, no overlap (`plan_sentence_windows`): about
            `max_length / stride` times fewer windows to run, less context at the windows' edges.
        sentence_positions (`bool`, *optional*, defaults to `False`):
            Also return `sentence_positions`: each scored sentence's index in its document, for a model with
            `config.sentence_position_buckets > 0`.
        segment_types (`int`, *optional*, defaults to 2):
            How many token types the model's encoder embeds (`config.encoder_segment_types`): with two or more the
            document part gets token type 1 (BERT's sentence pairs), with fewer (RoBERTa and XLM-R embed one, MPNet
            none) every token gets 0.
    """

    def __init__(
        self,
        tokenizer: PreTrainedTokenizerBase,
        max_length: int = 512,
        stride: int = 100,
        max_query_levels: int = 8,
        max_query_length: int = 128,
        pooling: str = "query_focused",
        use_query: bool = True,
        objective: str = "classification",
        packing: str = "stride",
        sentence_positions: bool = False,
        segment_types: int = 2,
    ):
        super().__init__(tokenizer)
        if packing not in PACKINGS:
            raise ValueError(f"packing must be one of {PACKINGS}, got {packing!r}")
        if pooling not in POOLINGS:
            raise ValueError(f"pooling must be one of {POOLINGS}, got {pooling!r}")
        if objective not in LABEL_FIELDS:
            raise ValueError(f"objective must be one of {tuple(LABEL_FIELDS)}, got {objective!r}")
        if max_query_levels < 1 or stride < 1:
            raise ValueError(f"max_query_levels and stride must be positive, got {max_query_levels} and {stride}")
        reserved = 3 + (max_query_length if use_query else 0)
        if max_length <= reserved:
            raise ValueError(f"max_length={max_length} leaves no room for the document after the query "
                             f"(max_query_length={max_query_length} + 3 special tokens)")
        self.max_length = max_length
        self.stride = stride
        self.max_query_levels = max_query_levels
        self.max_query_length = max_query_length
        self.pooling = pooling
        self.use_query = use_query
        self.objective = objective
        self.packing = packing
        self.sentence_positions = bool(sentence_positions)
        self.segment_types = int(segment_types)

        level_tokens = [LEVEL_TOKEN.format(level) for level in range(1, max_query_levels + 1)]
        known = set(tokenizer.get_vocab())
        missing = [token for token in level_tokens if token not in known]
        if missing:
            tokenizer.add_special_tokens({"extra_special_tokens": missing}, replace_extra_special_tokens=False)
        self.level_token_ids = tokenizer.convert_tokens_to_ids(level_tokens)

    # ---- construction ------------------------------------------------------------------------------------------

    @classmethod
    def from_config(cls, tokenizer: PreTrainedTokenizerBase, config: Any, **kwargs) -> "QBertProcessor":
        """A processor whose packing matches a `QBertConfig` (pooling, use_query, max_query_levels, objective)."""
        settings = {name: getattr(config, name) for name in ("pooling", "use_query", "max_query_levels", "objective")}
        settings["sentence_positions"] = getattr(config, "sentence_position_buckets", 0) > 0
        settings["segment_types"] = getattr(config, "encoder_segment_types", 2)
        settings["max_length"] = min(kwargs.pop("max_length", 512), max_window_length(config))
        # Small test models have short windows: keep at least half of a window for the document.
        settings["max_query_length"] = min(kwargs.pop("max_query_length", 128), settings["max_length"] // 2)
        return cls(tokenizer, **{**settings, **kwargs})

    def check_config(self, config: Any) -> None:
        """Raise when this processor packs inputs differently from what the model with `config` expects."""
        for name in ("pooling", "use_query", "max_query_levels"):
            if getattr(config, name) != getattr(self, name):
                raise ValueError(f"processor {name}={getattr(self, name)!r} does not match the model's "
                                 f"{name}={getattr(config, name)!r}; build it with QBertProcessor.from_config")
        if (getattr(config, "sentence_position_buckets", 0) > 0) != self.sentence_positions:
            raise ValueError(f"processor sentence_positions={self.sentence_positions} does not match the model's "
                             f"sentence_position_buckets={getattr(config, 'sentence_position_buckets', 0)}; build it "
                             "with QBertProcessor.from_config")
        if getattr(config, "attention_scope", "window") == "sentence" and self.packing != "sentences":
            raise ValueError(f"the model encodes each sentence alone (attention_scope='sentence'), which needs "
                             f"packing='sentences', not {self.packing!r}")
        if self.max_length > max_window_length(config):
            raise ValueError(f"processor windows of {self.max_length} tokens exceed the model's "
                             f"max_position_embeddings={config.max_position_embeddings} (less the encoder's first "
                             f"position, {getattr(config, 'encoder_position_offset', 0)})")
        encoder_types = getattr(config, "encoder_segment_types", 2)
        if (self.segment_types >= 2) != (encoder_types >= 2):
            raise ValueError(f"processor segment_types={self.segment_types} (document token type "
                             f"{self.document_token_type}) does not match the model's {encoder_types} token type(s) "
                             f"({getattr(config, 'encoder_model_type', 'bert')} encoder); build it with "
                             "QBertProcessor.from_config")
        if len(self.tokenizer) > config.vocab_size:
            raise ValueError(f"the tokenizer has {len(self.tokenizer)} tokens (with the [L#] markers) but the model "
                             f"only {config.vocab_size}: call model.resize_token_embeddings(len(processor.tokenizer))")

    @property
    def document_token_type(self) -> int:
        """The token type of the document part: 1 after a query for an encoder with two segment types, else 0."""
        return 1 if self.use_query and self.segment_types >= 2 else 0

    @property
    def model_input_names(self) -> list[str]:
        return list(MODEL_INPUT_NAMES)

    @property
    def label_field(self) -> str:
        """The dataset column that holds the labels for this objective."""
        return LABEL_FIELDS[self.objective]

    # ---- reading inputs ----------------------------------------------------------------------------------------

    @staticmethod
    def make_example(
        query: str | Sequence[str], document: str | Sequence[str], labels: Sequence[float] | None = None
    ) -> QBertExample:
        """A `QBertExample` from raw inputs: the query as a string or a list of levels, the document as text (split
        into sentences) or as a list of sentences."""
        levels = [query] if isinstance(query, str) else [str(level) for level in query]
        sentences = split_into_sentences(document) if isinstance(document, str) else [str(s) for s in document]
        if labels is not None:
            labels = [float(label) for label in labels]
            if len(labels) != len(sentences):
                raise ValueError(f"{len(labels)} labels for {len(sentences)} sentences")
        return QBertExample(query_levels=levels, sentences=sentences, labels=labels)

    def examples_from_row(self, row: Mapping[str, Any], with_labels: bool = True) -> list[QBertExample]:
        """The examples of one `datasets` row: a WikiRef row (`query`, `document`, `oracle_label`, `oracle_score`)
        gives one; a DUC row (`query`, `documents` = [{docno, date, headline, sentences}], `references`) gives one per
        document, labelled when its documents (or the row, as one list per document) carry the label field."""
        if "query" not in row:
            raise KeyError(f"row has no 'query' field (fields: {sorted(row)})")
        query = row["query"]
        field_name = self.label_field
        if "document" in row:
            labels = row.get(field_name) if with_labels else None
            return [self.make_example(query, row["document"], labels)]
        if "documents" in row:
            row_labels = row.get(field_name) if with_labels else None
            examples = []
            for position, document in enumerate(row["documents"]):
                sentences = document["sentences"] if isinstance(document, Mapping) else document
                labels = None
                if with_labels:
                    if isinstance(document, Mapping) and document.get(field_name) is not None:
                        labels = document[field_name]
                    elif row_labels is not None:
                        labels = row_labels[position]
                examples.append(self.make_example(query, sentences, labels))
            return examples
        raise KeyError(f"row has neither 'document' (WikiRef) nor 'documents' (DUC) (fields: {sorted(row)})")

    # ---- packing -----------------------------------------------------------------------------------------------

    def encode_query(self, query_levels: Sequence[str]) -> list[int]:
        """`[L1] level-1 [L2] level-2 …` token ids, levels past the k-th joined into the k-th, cut to
        `max_query_length`."""
        levels = [str(level) for level in query_levels]
        k = self.max_query_levels
        if len(levels) > k:
            levels = levels[: k - 1] + [" ".join(levels[k - 1:])]
        level_ids = self.tokenizer(levels, add_special_tokens=False)["input_ids"] if levels else []
        ids: list[int] = []
        for marker, tokens in zip(self.level_token_ids, level_ids):
            ids.append(marker)
            ids.extend(tokens)
        if len(ids) > self.max_query_length:
            logger.warning_once(f"query of {len(ids)} tokens cut to max_query_length={self.max_query_length}")
            ids = ids[: self.max_query_length]
        return ids

    def encode_sentences(self, sentences: Sequence[str]) -> list[list[int]]:
        """WordPiece ids of each sentence (no special tokens). A sentence with no token (only spaces or characters
        the vocabulary drops) becomes `[UNK]`, so that it still gets a score."""
        if not sentences:
            return []
        encoded = self.tokenizer(list(sentences), add_special_tokens=False)["input_ids"]
        return [ids if ids else [self.tokenizer.unk_token_id] for ids in encoded]

    def encode_example(self, example: QBertExample, example_index: int = 0) -> list[QBertWindow]:
        """The windows of one example (see the module docstring for the packing and window rules)."""
        tokenizer = self.tokenizer
        query_ids = self.encode_query(example.query_levels) if self.use_query else []
        prefix = [tokenizer.cls_token_id] + (query_ids + [tokenizer.sep_token_id] if self.use_query else [])
        prefix_types = [0] * len(prefix)
        prefix_query_mask = [0] + [1] * len(query_ids) + ([0] if self.use_query else [])
        document_type = self.document_token_type
        window_length = self.max_length - len(prefix) - 1

        sentence_tokens = self.encode_sentences(example.sentences)
        if self.pooling == "cls":
            sentence_tokens = [[tokenizer.cls_token_id] + ids for ids in sentence_tokens]
        document: list[int] = []
        owner: list[int] = []  # sentence of each document token
        spans = []
        truncated = []
        for position, ids in enumerate(sentence_tokens):
            if len(ids) > window_length:
                truncated.append(f"{position} ({len(ids)} tokens)")
                ids = ids[:window_length]
            spans.append((len(document), len(document) + len(ids)))
            document.extend(ids)
            owner.extend([position] * len(ids))
        if truncated:
            logger.warning(f"example {example_index}: sentence(s) {', '.join(truncated)} longer than a window of "
                           f"{window_length} document tokens, truncated to the window (still scored)")

        if self.packing == "sentences":
            plan = plan_sentence_windows(spans, window_length)
        else:
            plan = plan_windows(spans, window_length, self.stride)
        scored: list[list[int]] = [[] for _ in plan.windows]
        for sentence, window in enumerate(plan.assignment):
            scored[window].append(sentence)

        windows = []
        for (start, end), sentences in zip(plan.windows, scored):
            local = {sentence: position for position, sentence in enumerate(sentences)}
            windows.append(QBertWindow(
                input_ids=prefix + document[start:end] + [tokenizer.sep_token_id],
                token_type_ids=prefix_types + [document_type] * (end - start + 1),
                query_mask=prefix_query_mask + [0] * (end - start + 1),
                sentence_ids=[-1] * len(prefix) + [local.get(s, -1) for s in owner[start:end]] + [-1],
                example_index=example_index,
                sentence_index=sentences,
                labels=[example.labels[s] for s in sentences] if example.labels is not None else None,
                sentence_positions=list(sentences) if self.sentence_positions else None,
            ))
        return windows

    def encode_examples(self, examples: Sequence[QBertExample], start_index: int = 0) -> list[QBertWindow]:
        """The windows of several examples; `example_index` counts from `start_index`."""
        windows = []
        for offset, example in enumerate(examples):
            windows.extend(self.encode_example(example, start_index + offset))
        return windows

    def __call__(
        self,
        query: str | Sequence[str] | None = None,
        document: str | Sequence[str] | None = None,
        labels: Sequence[float] | None = None,
        *,
        examples: Sequence[QBertExample] | None = None,
        return_tensors: str | None = None,
        **kwargs,
    ) -> BatchFeature:
        r"""
        Windows of one (query, document) pair, or of `examples`.

        Args:
            query (`str` or `list[str]`): the query, or its levels.
            document (`str` or `list[str]`): the document as text (split into sentences) or as sentences.
            labels (`list[float]`, *optional*): one label per sentence.
            examples (`list[QBertExample]`, *optional*): several examples instead of `query`/`document`.
            return_tensors (`str`, *optional*): `"pt"` pads the windows into tensors with [`QBertDataCollator`].

        Returns:
            [`BatchFeature`] with one entry per window: `input_ids`, `token_type_ids`, `attention_mask`,
            `query_mask`, `sentence_ids`, `labels` (when labelled), `example_index`, `sentence_index`.
        """
        if kwargs:
            raise TypeError(f"unexpected arguments {sorted(kwargs)}")
        if examples is None:
            if query is None or document is None:
                raise ValueError("pass query and document, or examples")
            examples = [self.make_example(query, document, labels)]
        features = [window.to_features() for window in self.encode_examples(examples)]
        if return_tensors is None:
            return BatchFeature({key: [f[key] for f in features] for key in (features[0] if features else {})})
        if return_tensors != "pt":
            raise ValueError(f"return_tensors must be 'pt' or None, got {return_tensors!r}")
        return BatchFeature(self.collator(keep_mapping=True)(features))

    # ---- datasets ----------------------------------------------------------------------------------------------

    def encode_rows(self, rows: Mapping[str, list], indices: Sequence[int] | None = None) -> dict[str, list]:
        """`datasets.map(batched=True, with_indices=True)` function: WikiRef or DUC rows → one row per window.
        `example_index` is the row's index (DUC: the row's index; `document_index` says which document)."""
        size = len(rows["query"])
        indices = list(indices) if indices is not None else list(range(size))
        columns: dict[str, list] = {}
        for position in range(size):
            row = {key: values[position] for key, values in rows.items()}
            for document_index, example in enumerate(self.examples_from_row(row)):
                for window in self.encode_example(example, indices[position]):
                    features = window.to_features()
                    features["document_index"] = document_index
                    for key, value in features.items():
                        columns.setdefault(key, []).append(value)
        return columns

    def packing_fingerprint(self, dataset: Any) -> str:
        """A key for the windows of `dataset` packed by this processor: the dataset's content fingerprint (`datasets`
        hashes an in-memory table's data, and a loaded one's files), every packing setting and the tokenizer's whole
        state (vocabulary, added `[L#]` tokens, normalizer). Two runs that would pack the same windows get the same
        key."""
        import hashlib
        import json

        settings = {name: getattr(self, name) for name in ("max_length", "stride", "max_query_levels",
                                                             "max_query_length", "pooling", "use_query", "objective",
                                                             "packing", "sentence_positions")}
        tokenizer = getattr(self.tokenizer, "backend_tokenizer", None)
        state = tokenizer.to_str() if tokenizer is not None else json.dumps(self.tokenizer.get_vocab(), sort_keys=True)
        digest = hashlib.sha256()
        for part in (PACKING_FORMAT, dataset._fingerprint, json.dumps(settings, sort_keys=True), state):
            digest.update(str(part).encode("utf-8"))
            digest.update(b"\0")
        return digest.hexdigest()[:32]

    def prepare_dataset(self, dataset: Any, num_proc: int | None = None, cache_dir: str | None = None) -> Any:
        """A `datasets.Dataset` of WikiRef or DUC rows → a dataset of windows, the input of [`QBertDataCollator`].

        With `cache_dir`, the windows are written there as Arrow under :meth:`packing_fingerprint` and a later call
        with the same rows, settings and tokenizer loads them instead of packing again (in-memory datasets, such as
        labelled DUC rows, get no cache from `datasets` otherwise)."""
        options: dict[str, Any] = {}
        if cache_dir is not None:
            import os

            key = self.packing_fingerprint(dataset)
            os.makedirs(cache_dir, exist_ok=True)
            options = {"cache_file_name": os.path.join(cache_dir, f"qbert-windows-{key}.arrow"),
                       "new_fingerprint": key, "load_from_cache_file": True}
        return dataset.map(self.encode_rows, batched=True, with_indices=True, remove_columns=dataset.column_names,
                           num_proc=num_proc, desc="packing Q-BERT windows", **options)

    def collator(self, keep_mapping: bool = False) -> "QBertDataCollator":
        """A [`QBertDataCollator`] with this tokenizer's padding id."""
        return QBertDataCollator(pad_token_id=self.tokenizer.pad_token_id or 0, keep_mapping=keep_mapping)

    # ---- back to sentences -------------------------------------------------------------------------------------

    @staticmethod
    def gather_sentence_scores(
        scores: Sequence[Sequence[float]] | torch.Tensor,
        example_index: Sequence[int] | torch.Tensor,
        sentence_index: Sequence[Sequence[int]] | torch.Tensor,
        num_sentences: Sequence[int] | None = None,
    ) -> list[list[float]]:
        """Window scores → one list per example of one score per sentence.

        Args:
            scores: `(windows, S)` scores (model output), position j of a window being its j-th scored sentence.
            example_index: the example of each window, numbered `0 … n-1` (for windows of DUC rows, which carry a
                row and a document index, use [`gather_cluster_scores`]).
            sentence_index: `(windows, S)` the example's sentence of each position (-1 or absent: padding).
            num_sentences: sentences per example; default: as many as the windows score.

        A sentence scored twice raises `ValueError`; one never scored gets NaN (it cannot happen with windows from
        this processor).
        """
        scores = scores.tolist() if isinstance(scores, torch.Tensor) else scores
        example_index = example_index.tolist() if isinstance(example_index, torch.Tensor) else example_index
        sentence_index = sentence_index.tolist() if isinstance(sentence_index, torch.Tensor) else sentence_index
        if num_sentences is None:
            counts: dict[int, int] = {}
            for example, indices in zip(example_index, sentence_index):
                counts[example] = max([counts.get(example, 0)] + [index + 1 for index in indices])
            num_sentences = [counts.get(example, 0) for example in range(max(counts, default=-1) + 1)]
        result = [[math.nan] * count for count in num_sentences]
        seen = [[False] * count for count in num_sentences]
        for example, window_scores, indices in zip(example_index, scores, sentence_index):
            for position, sentence in enumerate(indices):
                if sentence < 0:
                    continue
                if seen[example][sentence]:
                    raise ValueError(f"example {example}, sentence {sentence} is scored in two windows")
                seen[example][sentence] = True
                result[example][sentence] = float(window_scores[position])
        return result

    @classmethod
    def gather_cluster_scores(
        cls,
        scores: Sequence[Sequence[float]] | torch.Tensor,
        example_index: Sequence[int] | torch.Tensor,
        document_index: Sequence[int] | torch.Tensor,
        sentence_index: Sequence[Sequence[int]] | torch.Tensor,
    ) -> dict[int, list[list[float]]]:
        """Window scores of DUC rows ([`encode_rows`] windows carry `example_index` = the row and
        `document_index`) → `{row: [one list of sentence scores per document]}`."""
        example_index = example_index.tolist() if isinstance(example_index, torch.Tensor) else list(example_index)
        document_index = document_index.tolist() if isinstance(document_index, torch.Tensor) else list(document_index)
        keys = sorted(set(zip(example_index, document_index)))
        number = {key: position for position, key in enumerate(keys)}
        flat = cls.gather_sentence_scores(scores, [number[key] for key in zip(example_index, document_index)],
                                          sentence_index)
        clusters: dict[int, list[list[float]]] = {}
        for (row, document), values in zip(keys, flat):
            documents = clusters.setdefault(row, [])
            documents.extend([] for _ in range(document + 1 - len(documents)))
            documents[document] = values
        return clusters


@dataclass
class QBertDataCollator:
    """Pads Q-BERT windows into a batch of tensors.

    Token fields are padded to the longest window (`input_ids` with `pad_token_id`, `sentence_ids` with -1, masks
    and segment ids with 0); `labels` (float) to the most scored sentences with -100, which the loss ignores.
    With `keep_mapping`, `example_index` (windows,), `document_index` (DUC rows) and `sentence_index` (windows, S,
    padded with -1) are kept for [`QBertProcessor.gather_sentence_scores`]; otherwise they (and any other non-model
    field) are dropped, so that the batch can go straight into the model or a `Trainer`.
    """

    pad_token_id: int = 0
    label_pad_value: float = -100.0
    keep_mapping: bool = False
    pad_to_multiple_of: int | None = None
    token_pad_values: dict[str, int] = field(default_factory=lambda: {"sentence_ids": -1})

    def __call__(self, features: Sequence[Mapping[str, Any]]) -> dict[str, torch.Tensor]:
        if not features:
            raise ValueError("no windows to collate")
        length = max(len(feature["input_ids"]) for feature in features)
        if self.pad_to_multiple_of:
            length = -(-length // self.pad_to_multiple_of) * self.pad_to_multiple_of
        batch: dict[str, torch.Tensor] = {}
        for name in MODEL_INPUT_NAMES:
            if name not in features[0]:
                continue
            pad = self.pad_token_id if name == "input_ids" else self.token_pad_values.get(name, 0)
            batch[name] = torch.tensor([list(f[name]) + [pad] * (length - len(f[name])) for f in features])
        if "attention_mask" not in batch:
            batch["attention_mask"] = torch.tensor(
                [[1] * len(f["input_ids"]) + [0] * (length - len(f["input_ids"])) for f in features])
        width = max(len(f["sentence_index"]) if "sentence_index" in f else len(f.get("labels", [])) for f in features)
        if "labels" in features[0]:
            batch["labels"] = torch.tensor(
                [[float(v) for v in f["labels"]] + [self.label_pad_value] * (width - len(f["labels"]))
                 for f in features], dtype=torch.float32).reshape(len(features), width)
        if "sentence_positions" in features[0]:
            batch["sentence_positions"] = torch.tensor(
                [list(f["sentence_positions"]) + [-1] * (width - len(f["sentence_positions"])) for f in features],
                dtype=torch.long).reshape(len(features), width)
        if self.keep_mapping and "sentence_index" in features[0]:
            batch["example_index"] = torch.tensor([int(f["example_index"]) for f in features])
            if "document_index" in features[0]:
                batch["document_index"] = torch.tensor([int(f["document_index"]) for f in features])
            batch["sentence_index"] = torch.tensor(
                [list(f["sentence_index"]) + [-1] * (width - len(f["sentence_index"])) for f in features],
                dtype=torch.long).reshape(len(features), width)
        return batch


__all__ = ["QBertProcessor", "QBertDataCollator", "QBertExample", "QBertWindow", "WindowPlan", "plan_windows",
           "plan_sentence_windows", "PACKINGS",
           "split_into_sentences", "LEVEL_TOKEN"]
