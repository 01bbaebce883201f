"""The "query-focused-summarization" pipeline: loading by task name, single- and multi-document selection, inputs."""

import math

import pytest
import torch
from transformers import BertTokenizer, pipeline

from modeling_qbert import (
    TASK,
    QBertConfig,
    QBertExample,
    QBertForSentenceScoring,
    QBertProcessor,
    QueryFocusedSummarizationPipeline,
)
from wikiref_dataset.selection import select_duc, select_wikiref, summary_text

WORDS = ("the a of was in on cat dog sat mat fish runs red blue house tree river city war king queen born early "
         "life school music film . ,").split()
DOCUMENT = ["The king was born in the city.", "A river runs in the city.", "The war was early in his life.",
            "The cat sat on the mat.", "The queen was born in a house."]
SECOND = ["The dog runs.", "Music and film in the city.", "The king was born in the city."]


def build(**overrides) -> tuple[QBertForSentenceScoring, QBertProcessor]:
    torch.manual_seed(0)
    tokenizer = BertTokenizer(vocab={t: i for i, t in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]",
                                                                 *WORDS])})
    config = QBertConfig(**{**dict(vocab_size=len(WORDS) + 5, hidden_size=16, num_hidden_layers=1,
                                   num_attention_heads=2, intermediate_size=32, max_position_embeddings=48,
                                   max_query_levels=3), **overrides})
    processor = QBertProcessor.from_config(tokenizer, config, stride=8)
    model = QBertForSentenceScoring(config)
    model.resize_token_embeddings(len(processor.tokenizer))
    return model.eval(), processor


@pytest.fixture(scope="module")
def saved_model(tmp_path_factory):
    model, processor = build()
    folder = tmp_path_factory.mktemp("qbert")
    model.save_pretrained(folder)
    processor.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def summarize(saved_model):
    return pipeline(TASK, model=str(saved_model))


def direct_scores(pipe, query, documents):
    """Each document's sentence scores computed without the pipeline."""
    processor = pipe.processor
    examples = [QBertExample(query, sentences) for sentences in documents]
    batch = processor.collator(keep_mapping=True)([w.to_features() for w in processor.encode_examples(examples)])
    mapping = {name: batch.pop(name) for name in ("example_index", "sentence_index")}
    with torch.no_grad():
        scores = pipe.model(**batch).scores
    return QBertProcessor.gather_sentence_scores(scores, mapping["example_index"], mapping["sentence_index"],
                                                 [len(d) for d in documents])


def test_pipeline_loads_by_task_name(summarize):
    assert isinstance(summarize, QueryFocusedSummarizationPipeline)
    assert isinstance(summarize.processor, QBertProcessor)
    assert isinstance(summarize.model, QBertForSentenceScoring)


def test_single_document_uses_the_wikiref_rule(summarize):
    query = ["King", "Early life"]
    result = summarize(query=query, documents=[DOCUMENT])
    assert result["selection"] == "wikiref"
    scores = direct_scores(summarize, query, [DOCUMENT])[0]
    assert [item["score"] for item in result["sentences"]] == pytest.approx(scores, abs=1e-6)
    assert [item["text"] for item in result["sentences"]] == DOCUMENT
    assert [(item["document"], item["sentence"]) for item in result["sentences"]] == [(0, i) for i in range(5)]
    chosen = select_wikiref(DOCUMENT, scores, summarize.model.config.default_threshold)
    assert [item["sentence"] for item in result["selected"]] == chosen
    assert result["summary"] == summary_text(DOCUMENT, chosen)
    # A document= keyword and a WikiRef-style mapping give the same result.
    assert summarize(query=query, document=DOCUMENT) == result
    assert summarize({"query": query, "document": DOCUMENT}) == result


def test_wikiref_parameters(summarize):
    everything = summarize(query="king", documents=[DOCUMENT], threshold=-1.0)
    scores = [item["score"] for item in everything["sentences"]]
    assert [item["sentence"] for item in everything["selected"]] == select_wikiref(DOCUMENT, scores, -1.0)
    one = summarize(query="king", documents=[DOCUMENT], threshold=-1.0, max_sentences=1)
    assert len(one["selected"]) == 1 and one["selected"][0]["score"] == max(scores)


def test_several_documents_use_the_duc_rule_across_the_cluster(summarize):
    query = ["The king", "Where was the king born?"]
    result = summarize(query=query, documents=[DOCUMENT, SECOND], max_words=12, budget="rouge")  # the rule's own
    assert result["selection"] == "duc"
    per_document = direct_scores(summarize, query, [DOCUMENT, SECOND])
    flat_texts, flat_scores = DOCUMENT + SECOND, per_document[0] + per_document[1]
    assert [item["score"] for item in result["sentences"]] == pytest.approx(flat_scores, abs=1e-6)
    chosen = select_duc(flat_texts, [item["score"] for item in result["sentences"]], max_words=12)
    assert [item["text"] for item in result["selected"]] == [flat_texts[i] for i in chosen]
    assert result["summary"] == summary_text(flat_texts, chosen)
    assert {item["document"] for item in result["sentences"]} == {0, 1}
    forced = summarize(query=query, documents=[DOCUMENT, SECOND], selection="wikiref", threshold=-1.0)
    assert forced["selection"] == "wikiref"


def test_the_cluster_rules_by_name_and_the_models_own(summarize):
    """mmr and ilp over the same scores as the selection functions; `auto` takes the configuration's rule for
    several documents; a rule's setting reaches it and another rule's is left alone."""
    from wikiref_dataset.rouge import count_words
    from wikiref_dataset.selection import select_ilp, select_mmr, within_budget

    query = ["The king", "Where was the king born?"]
    texts = DOCUMENT + SECOND
    for rule, select, settings in (("mmr", select_mmr, {"tradeoff": 0.4}), ("ilp", select_ilp, {"candidates": 3})):
        result = summarize(query=query, documents=[DOCUMENT, SECOND], selection=rule, max_words=12, redundancy=0.1,
                           budget="rouge", **settings)
        scores = [item["score"] for item in result["sentences"]]
        assert result["selection"] == rule
        chosen = select(texts, scores, 12, *settings.values())
        assert [item["text"] for item in result["selected"]] == [texts[i] for i in chosen]
        strict = summarize(query=query, documents=[DOCUMENT, SECOND], selection=rule, max_words=12, redundancy=0.1,
                           **settings)  # the default: whole sentences within the budget
        assert [item["text"] for item in strict["selected"]] == [
            texts[i] for i in within_budget(texts, scores, chosen, 12, redundancy=0.1)]
        assert sum(count_words(item["text"]) for item in strict["selected"]) <= 12
        assert len(strict["summary"].split()) <= 12
    config = summarize.model.config
    try:
        config.cluster_selection = "ilp"
        assert summarize(query=query, documents=[DOCUMENT, SECOND])["selection"] == "ilp"
        assert summarize(query=query, documents=[DOCUMENT])["selection"] == "wikiref"
    finally:
        config.cluster_selection = "duc"
    with pytest.raises(ValueError, match="selection must be one of"):
        summarize(query=query, documents=[DOCUMENT, SECOND], selection="best")
    scored = []
    forward = summarize.forward
    summarize.forward = lambda *args, **kwargs: scored.append(1) or forward(*args, **kwargs)
    try:  # a setting out of range is refused before anything is scored, whichever rule would take it
        for settings, message in (({"tradeoff": 3}, r"tradeoff must lie in \[0, 1\], got 3"),
                                  ({"redundancy": -1}, r"redundancy must lie in \[0, 1\]"),
                                  ({"candidates": 2.5}, "candidates must be a whole number of 1 or more, got 2.5"),
                                  ({"max_words": 0}, "max_words must be at least 1, got 0"),
                                  ({"budget": "loose"}, r"budget must be one of \('strict', 'rouge'\)")):
            with pytest.raises(ValueError, match=message):
                summarize(query=query, documents=[DOCUMENT, SECOND], selection="ilp", **settings)
    finally:
        summarize.forward = forward
    assert not scored


def test_documents_as_text_mappings_and_duc_rows(summarize):
    query = "king"
    as_sentences = summarize(query=query, documents=[DOCUMENT, SECOND])
    as_text = summarize(query=query, documents=[" ".join(DOCUMENT), {"text": " ".join(SECOND)}])
    assert [item["text"] for item in as_text["sentences"]] == DOCUMENT + SECOND
    assert as_text["summary"] == as_sentences["summary"]
    duc_row = {"query": [query], "documents": [{"docno": "D1", "sentences": DOCUMENT}, {"docno": "D2",
                                                                                       "sentences": SECOND}]}
    assert summarize(duc_row)["summary"] == as_sentences["summary"]
    batch = summarize([duc_row, {"query": query, "document": DOCUMENT}])
    assert isinstance(batch, list) and len(batch) == 2 and batch[0]["selection"] == "duc"
    with pytest.raises(ValueError, match="query"):
        summarize({"documents": [DOCUMENT]})
    for empty in ("", "  ", [], [""], ["", " "]):  # an empty query is refused, never summarized without a word
        with pytest.raises(ValueError, match=r"the query is empty \(.*\): give the topic or question"):
            summarize(query=empty, documents=[DOCUMENT])


def test_long_documents_are_scored_window_by_window(summarize):
    long_document = DOCUMENT * 6  # 30 sentences, several 48-token windows
    windows = summarize.preprocess({"query": "king", "documents": [long_document]})["windows"]
    assert len(windows) > 3
    result = summarize(query="king", documents=[long_document], batch_size=3)
    assert len(result["sentences"]) == 30 and all(math.isfinite(item["score"]) for item in result["sentences"])
    single = summarize(query="king", documents=[long_document], batch_size=1)
    assert [item["score"] for item in single["sentences"]] == pytest.approx(
        [item["score"] for item in result["sentences"]], abs=1e-5)


def test_batch_size_at_construction_batches_windows_not_inputs(saved_model):
    pipe = pipeline(TASK, model=str(saved_model), batch_size=4)
    assert pipe._forward_params["window_batch_size"] == 4
    results = pipe([{"query": "king", "documents": [DOCUMENT * 3]}, {"query": "war", "document": SECOND}])
    assert [len(result["sentences"]) for result in results] == [15, 3]


def test_pipeline_from_objects_and_processor_checks():
    model, processor = build(pooling="cls")
    pipe = QueryFocusedSummarizationPipeline(model=model, processor=processor, device=-1)
    assert pipe(query="king", documents=[SECOND])["selection"] == "wikiref"
    from_tokenizer = QueryFocusedSummarizationPipeline(model=model, tokenizer=processor.tokenizer, device=-1)
    assert from_tokenizer.processor.pooling == "cls"
    _, other = build(pooling="mean")
    with pytest.raises(ValueError, match="pooling"):
        QueryFocusedSummarizationPipeline(model=model, processor=other, device=-1)


def test_inputs_in_every_form_transformers_pipelines_take(summarize):
    """`summarize(query, documents)` positionally (as the question-answering pipeline takes (question, context)), by
    keyword, mixed, as one input mapping and as a list of them: the same summary; a missing or doubled part is one
    ValueError saying which."""
    query, documents = ["King", "Early life"], [DOCUMENT, SECOND]
    expected = summarize(query=query, documents=documents)
    assert summarize(query, documents) == expected
    assert summarize(query, documents=documents) == expected
    assert summarize(query, documents, selection="duc") == expected  # pipeline parameters as keywords beside them
    assert summarize({"query": query, "documents": documents}) == expected
    assert summarize([{"query": query, "documents": documents}, {"query": "war", "documents": [SECOND]}])[0] == expected
    assert summarize("king", DOCUMENT)["sentences"] == summarize(query="king", documents=DOCUMENT)["sentences"]
    assert summarize("king", document=DOCUMENT) == summarize(query="king", documents=[DOCUMENT])
    with pytest.raises(ValueError, match="a query without documents"):
        summarize(query)
    with pytest.raises(ValueError, match="the query is given twice"):
        summarize(query, documents, query=query)
    with pytest.raises(ValueError, match="an input mapping holds its own documents"):
        summarize({"query": query, "documents": documents}, documents)
    with pytest.raises(ValueError, match="documents without a query"):
        summarize(documents=documents)
    with pytest.raises(ValueError, match="not both"):
        summarize(query, documents, document=DOCUMENT)
