"""The `"query-focused-summarization"` pipeline: (query, documents) → an extractive summary and scored sentences.

    from transformers import pipeline
    import modeling_qbert  # registers the task (on first use of the package, or modeling_qbert.register())

    summarize = pipeline("query-focused-summarization", model="path/to/qbert")
    result = summarize(query=["Barack Obama", "Early life"], documents=["Obama was born in …", ["Sentence 1.", …]])
    result["summary"], result["selected"], result["sentences"]

Without this package: ``pipeline("query-focused-summarization", model="org/qbert", trust_remote_code=True)`` on a
repo published by ``trainer_scripts/push_to_hub.py``, which ships this file, the ones it imports and the ROUGE engine
(``remote_code.py``); documents are then given as sentence lists (text splitting needs the project's spaCy pipeline).

Each document is scored with (query, that document) by Q-BERT, window by window (`processing_qbert`). Selection
(`selection.py`): one document → the WikiRef rule (rank by score, keep a sentence whose score exceeds the threshold
and that shares no trigram with the summary so far); several documents → the model's `config.cluster_selection`: the
DUC rule (rank across the cluster, skip sentences with more than `redundancy` of their bigrams in the summary, stop at
`max_words`), maximal marginal relevance, or bigram concept coverage by integer linear programming.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from transformers import Pipeline

from wikiref_dataset.selection import (
    BUDGETS,
    CLUSTER_RULES,
    ClusterSentences,
    check_settings,
    rule_settings,
    select_cluster,
    select_wikiref,
    summary_text,
    within_budget,
)

from .inference import score_windows
from .processing_qbert import QBertProcessor, split_into_sentences

TASK = "query-focused-summarization"
SELECTIONS = ("auto", "wikiref", *CLUSTER_RULES)


def document_sentences(document: Any, position: int = 0) -> list[str]:
    """The sentences of one document given as text (split with the project's splitter), a list of sentences, or a
    mapping with `sentences` (a DUC document) or `text`."""
    if isinstance(document, str):
        return split_into_sentences(document)
    if isinstance(document, Mapping):
        if "sentences" in document:
            return [str(sentence) for sentence in document["sentences"]]
        if "text" in document:
            return split_into_sentences(str(document["text"]))
        raise ValueError(f"document {position}: a mapping needs 'sentences' or 'text' (got {sorted(document)})")
    if isinstance(document, Sequence):
        return [str(sentence) for sentence in document]
    raise TypeError(f"document {position}: expected text, a list of sentences or a mapping, got {type(document)}")


def is_qbert_processor(processor: Any) -> bool:
    """Whether ``processor`` is a `QBertProcessor`: this module's class, or the same class from another copy of
    ``processing_qbert.py``. Loaded from a folder or Hub repo with ``trust_remote_code``, the processor
    ``AutoProcessor`` gives and the one this file imports come from two imports of that code (transformers imports
    each module it is asked for on its own), so an ``isinstance`` check alone would drop the folder's saved processor
    (its packing, lengths) for one rebuilt from the model's configuration."""
    return isinstance(processor, QBertProcessor) or any(cls.__name__ == QBertProcessor.__name__
                                                        for cls in type(processor).__mro__)


def _input_mappings(inputs: Any) -> bool:
    """Whether ``inputs`` is one input mapping or a non-empty list of them (not a query, which is a string or a list of
    level strings)."""
    return isinstance(inputs, Mapping) or (isinstance(inputs, list) and bool(inputs)
                                           and all(isinstance(item, Mapping) for item in inputs))


class QueryFocusedSummarizationPipeline(Pipeline):
    r"""
    Extractive query-focused summarization with a [`QBertForSentenceScoring`] model and its [`QBertProcessor`].

    Call with `query` (a string or a list of levels) and `documents` (a list of documents, each text, a list of
    sentences or a DUC document mapping; a single string is one document), positionally as transformers' pipelines
    take two inputs (`summarize(query, documents)`) or by keyword (`summarize(query=…, documents=…)`), or with one
    input mapping `{"query": …, "documents": […]}` or a list of them. A DUC row works as it is, and so does a WikiRef
    row (`{"query": …, "document": […]}`).

    Parameters (at construction or per call):
        selection (`str`, defaults to `"auto"`): `"wikiref"`, a cluster rule (`"duc"`, `"mmr"`, `"ilp"`), or
            `"auto"` (WikiRef for one document, `model.config.cluster_selection` for several: `"duc"` unless the
            model was trained with another).
        threshold (`float`, *optional*): WikiRef rule's score threshold; default `model.config.selection_threshold`,
            else 0.5 (classification) or 0.0 (regression).
        max_sentences (`int`, *optional*): WikiRef rule's sentence limit.
        max_words (`int`, defaults to 250): the cluster rules' word budget.
        budget (`str`, defaults to `"strict"`): how a cluster rule's summary meets `max_words`. `"strict"`: whole
            sentences, never more than `max_words` words (the rule's sentences while they fit, then the words left
            filled with sentences that fit whole): what a reader gets. `"rouge"`: the rule's own choice, whose last
            sentence crosses `max_words` for ROUGE's `-l` to cut, as DUC systems submit summaries and as this
            project's DUC evaluation scores them.
        redundancy (`float`, defaults to 0.5): the DUC rule's bigram-overlap limit.
        tradeoff (`float`, defaults to 0.7): MMR's weight of the score against redundancy.
        candidates (`int`, defaults to 300): how many of the best-scored sentences the ILP rule chooses from.
        batch_size (`int`, defaults to 8): windows per forward pass.

    Returns a dict: `summary` (the selected sentences, one per line, in selection order), `selected` (those
    sentences) and `sentences` (every sentence in document order), sentences as
    `{"document", "sentence", "text", "score"}`; and `selection`, the rule used. With `budget="rouge"` the last
    selected sentence may cross `max_words`; `selection.summary_text(…, max_words=…)` then cuts it as ROUGE does.
    """

    _load_processor = None
    _load_tokenizer = None
    _load_image_processor = False
    _load_feature_extractor = False
    _load_video_processor = False

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not is_qbert_processor(self.processor):
            if self.tokenizer is None:
                raise ValueError(f"the {TASK} pipeline needs a QBertProcessor (processor=) or a tokenizer")
            self.processor = QBertProcessor.from_config(self.tokenizer, self.model.config)
        self.processor.check_config(self.model.config)
        self.model.eval()
        # Inputs are not batched together (each is a whole cluster); `batch_size` is the number of windows per pass.
        if self._batch_size is not None:
            self._forward_params.setdefault("window_batch_size", int(self._batch_size))
            self._batch_size = None

    def __call__(self, inputs: Any = None, documents: Any = None, *, query: Any = None, document: Any = None,
                 **kwargs) -> dict[str, Any] | list[dict[str, Any]]:
        """Summarize ``documents`` for a query, in the forms transformers' pipelines take their inputs: positionally,
        ``summarize(query, documents)`` (as the question-answering pipeline takes ``(question, context)``); by keyword,
        ``summarize(query=…, documents=…)`` (or ``document=`` for one); one input mapping ``{"query": …,
        "documents": […]}``; or a list of such mappings (a list of results).

        Raises:
            ValueError: the query or the documents are missing, or given twice (one line saying which).
        """
        if documents is not None or document is not None:
            if documents is not None and document is not None:
                raise ValueError("give documents= or document=, not both")
            if inputs is not None:  # summarize(query, documents): the first argument is the query
                if query is not None:
                    raise ValueError("the query is given twice: positionally and as query=")
                if _input_mappings(inputs):
                    raise ValueError("an input mapping holds its own documents: pass it alone, or pass "
                                     "(query, documents)")
                query = inputs
            if query is None:
                raise ValueError("documents without a query: pass (query, documents) or query= and documents=")
            inputs = {"query": query, "documents": documents if documents is not None else [document]}
        elif inputs is None:
            raise ValueError("pass (query, documents), query= and documents= (or document=), one input mapping or a "
                             "list of them")
        elif query is not None or not _input_mappings(inputs):
            raise ValueError("a query without documents: pass (query, documents), query= and documents=, or an input "
                             "mapping {'query': ..., 'documents': [...]}")
        if "batch_size" in kwargs:  # inputs are not batched together; their windows are
            kwargs["window_batch_size"] = kwargs.pop("batch_size")
        return super().__call__(inputs, **kwargs)

    def _sanitize_parameters(
        self,
        selection: str | None = None,
        threshold: float | None = None,
        max_sentences: int | None = None,
        max_words: int | None = None,
        redundancy: float | None = None,
        tradeoff: float | None = None,
        candidates: int | None = None,
        budget: str | None = None,
        window_batch_size: int | None = None,
        batch_size: int | None = None,
    ) -> tuple[dict, dict, dict]:
        forward: dict[str, Any] = {}
        if window_batch_size is not None or batch_size is not None:
            forward["window_batch_size"] = int(window_batch_size or batch_size)
        postprocess: dict[str, Any] = {}
        if selection is not None:
            if selection not in SELECTIONS:
                raise ValueError(f"selection must be one of {SELECTIONS}, got {selection!r}")
            postprocess["selection"] = selection
        check_settings(max_words=max_words, redundancy=redundancy, tradeoff=tradeoff, candidates=candidates)
        if budget is not None and budget not in BUDGETS:
            raise ValueError(f"budget must be one of {BUDGETS}, got {budget!r}")
        for name, value in (("threshold", threshold), ("max_sentences", max_sentences), ("max_words", max_words),
                            ("redundancy", redundancy), ("tradeoff", tradeoff), ("candidates", candidates),
                            ("budget", budget)):
            if value is not None:
                postprocess[name] = value
        return {}, forward, postprocess

    def preprocess(self, inputs: Any) -> dict[str, Any]:
        if not isinstance(inputs, Mapping) or "query" not in inputs:
            raise ValueError(f"an input is a mapping with 'query' and 'documents' (or 'document'), got {type(inputs)}")
        query = inputs["query"]
        levels = [query] if isinstance(query, str) else list(query or [])
        if not any(str(level).strip() for level in levels) and getattr(self.model.config, "use_query", True):
            raise ValueError(f"the query is empty ({query!r}): give the topic or question to summarize for, a string "
                             "or a list of levels")
        if "documents" in inputs:
            documents = inputs["documents"]
            documents = [documents] if isinstance(documents, (str, Mapping)) else list(documents)
        elif "document" in inputs:
            documents = [inputs["document"]]
        else:
            raise ValueError("an input needs 'documents' (or 'document')")
        sentences = [document_sentences(document, position) for position, document in enumerate(documents)]
        examples = [self.processor.make_example(inputs["query"], document) for document in sentences]
        windows = [window.to_features() for window in self.processor.encode_examples(examples)]
        return {"windows": windows, "sentences": sentences}

    def _forward(self, model_inputs: dict[str, Any], window_batch_size: int = 8) -> dict[str, Any]:
        windows = model_inputs["windows"]
        return {
            "window_scores": score_windows(self.model, self.processor, windows, window_batch_size, self.device),
            "example_index": [window["example_index"] for window in windows],
            "sentence_index": [window["sentence_index"] for window in windows],
            "sentences": model_inputs["sentences"],
        }

    def postprocess(
        self,
        model_outputs: dict[str, Any],
        selection: str = "auto",
        threshold: float | None = None,
        max_sentences: int | None = None,
        max_words: int = 250,
        redundancy: float | None = None,
        tradeoff: float | None = None,
        candidates: int | None = None,
        budget: str = "strict",
    ) -> dict[str, Any]:
        documents = model_outputs["sentences"]
        per_document = QBertProcessor.gather_sentence_scores(
            model_outputs["window_scores"], model_outputs["example_index"], model_outputs["sentence_index"],
            num_sentences=[len(sentences) for sentences in documents],
        )
        cluster = ClusterSentences.from_documents(documents)
        texts = list(cluster.sentences)
        scores = cluster.flatten_scores(per_document)
        flat = [{"document": document, "sentence": sentence, "text": text, "score": score}
                for (document, sentence), text, score in zip(cluster.positions, texts, scores)]
        if selection == "auto":
            selection = "wikiref" if len(documents) == 1 else getattr(self.model.config, "cluster_selection", "duc")
        if selection == "wikiref":
            if threshold is None:
                threshold = getattr(self.model.config, "default_threshold", 0.5)
            indices = select_wikiref(texts, scores, threshold, max_sentences=max_sentences)
        else:  # a rule's own setting only: another rule's is ignored (a pipeline may be built with several)
            indices = select_cluster(selection, texts, scores, max_words=max_words, **rule_settings(
                selection, redundancy=redundancy, tradeoff=tradeoff, candidates=candidates))
            if budget == "strict":
                indices = within_budget(texts, scores, indices, max_words,
                                        redundancy if redundancy is not None else 0.5)
        return {
            "summary": summary_text(texts, indices),
            "selected": [flat[index] for index in indices],
            "sentences": flat,
            "selection": selection,
        }


__all__ = ["QueryFocusedSummarizationPipeline", "TASK", "document_sentences", "is_qbert_processor"]
