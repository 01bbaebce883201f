"""QBertProcessor: packing, the window rule (every sentence once, maximal context), label alignment through
windows, the collator, and reading WikiRef / DUC `datasets` rows and raw inputs."""

import logging
import math
import random

import pytest
import torch
from transformers import AutoProcessor, BertTokenizer

from modeling_qbert import QBertDataCollator, QBertExample, QBertProcessor, plan_sentence_windows, plan_windows

WORDS = ("the a of cat dog sat on mat fish runs fast slow red blue green house tree river city war king "
         "queen early life born school music film").split()


def tiny_tokenizer() -> BertTokenizer:
    vocab = {token: i for i, token in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", *WORDS])}
    return BertTokenizer(vocab=vocab)


def random_sentences(rng: random.Random, count: int, low: int = 1, high: int = 12) -> list[str]:
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high))) for _ in range(count)]


def tokens(processor: QBertProcessor, ids: list[int]) -> list[str]:
    return processor.tokenizer.convert_ids_to_tokens(ids)


# ---- packing ---------------------------------------------------------------------------------------------------


def test_packing_layout_segments_and_query_mask():
    processor = QBertProcessor(tiny_tokenizer(), max_query_levels=3)
    encoding = processor(["cat king", "early life"], ["the cat sat .", "a dog runs"], labels=[1, 0])
    assert len(encoding["input_ids"]) == 1
    assert tokens(processor, encoding["input_ids"][0]) == [
        "[CLS]", "[L1]", "cat", "king", "[L2]", "early", "life", "[SEP]",
        "the", "cat", "sat", ".", "a", "dog", "runs", "[SEP]"]  # fmt: skip
    assert encoding["token_type_ids"][0] == [0] * 8 + [1] * 8
    assert encoding["query_mask"][0] == [0] + [1] * 6 + [0] * 9
    assert encoding["sentence_ids"][0] == [-1] * 8 + [0, 0, 0, 0, 1, 1, 1, -1]
    assert encoding["attention_mask"][0] == [1] * 16
    assert encoding["sentence_index"] == [[0, 1]] and encoding["labels"] == [[1.0, 0.0]]


def test_level_tokens_are_special_tokens_and_extra_levels_join_the_last():
    tokenizer = tiny_tokenizer()
    base = len(tokenizer)
    processor = QBertProcessor(tokenizer, max_query_levels=2)
    assert len(tokenizer) == base + 2
    assert set(processor.tokenizer.extra_special_tokens) >= {"[L1]", "[L2]"}
    # A marker in the text is one token, never split into "[", "l", "1", "]".
    assert processor.tokenizer("[L2] cat", add_special_tokens=False)["input_ids"][0] == processor.level_token_ids[1]
    query = processor.encode_query(["city", "war", "king", "queen"])
    assert tokens(processor, query) == ["[L1]", "city", "[L2]", "war", "king", "queen"]
    # A second processor on the same tokenizer adds nothing.
    QBertProcessor(tokenizer, max_query_levels=2)
    assert len(tokenizer) == base + 2


def test_query_is_cut_to_max_query_length(caplog):
    processor = QBertProcessor(tiny_tokenizer(), max_query_length=4)
    with caplog.at_level(logging.WARNING):
        query = processor.encode_query(["cat dog fish river city"])
    assert len(query) == 4 and "cut to max_query_length" in caplog.text


def test_without_query_and_with_cls_pooling():
    processor = QBertProcessor(tiny_tokenizer(), use_query=False, pooling="mean")
    encoding = processor("cat", ["the cat sat", "a dog"])
    assert tokens(processor, encoding["input_ids"][0]) == ["[CLS]", "the", "cat", "sat", "a", "dog", "[SEP]"]
    assert encoding["token_type_ids"][0] == [0] * 7
    assert encoding["query_mask"][0] == [0] * 7

    processor = QBertProcessor(tiny_tokenizer(), pooling="cls")
    encoding = processor("cat", ["the cat sat", "a dog"])
    packed = tokens(processor, encoding["input_ids"][0])
    assert packed == ["[CLS]", "[L1]", "cat", "[SEP]", "[CLS]", "the", "cat", "sat", "[CLS]", "a", "dog", "[SEP]"]
    sentence_ids = encoding["sentence_ids"][0]
    firsts = [sentence_ids.index(sentence) for sentence in (0, 1)]
    assert [packed[position] for position in firsts] == ["[CLS]", "[CLS]"]


def test_empty_sentence_still_gets_a_token_and_a_score():
    processor = QBertProcessor(tiny_tokenizer())
    encoding = processor("cat", ["the cat", "   ", "a dog"])
    assert encoding["sentence_index"] == [[0, 1, 2]]
    ids = encoding["input_ids"][0]
    assert [ids[i] for i, s in enumerate(encoding["sentence_ids"][0]) if s == 1] == [processor.tokenizer.unk_token_id]


# ---- windows ---------------------------------------------------------------------------------------------------


def regular_windows(num_tokens: int, length: int, stride: int) -> list[tuple[int, int]]:
    """BERT run_squad's doc spans, written out independently."""
    spans, start = [], 0
    while start < num_tokens:
        end = min(start + length, num_tokens)
        spans.append((start, end))
        if end == num_tokens:
            break
        start += min(end - start, stride)
    return spans


def context(span: tuple[int, int], window: tuple[int, int]) -> int:
    return min(span[0] - window[0], window[1] - span[1])


@pytest.mark.parametrize("seed", range(40))
def test_window_rule_every_sentence_once_with_maximal_context(seed):
    rng = random.Random(seed)
    length, stride = rng.randint(8, 40), rng.randint(1, 20)
    lengths = [rng.randint(1, length) for _ in range(rng.randint(1, 30))]
    spans, start = [], 0
    for size in lengths:
        spans.append((start, start + size))
        start += size
    plan = plan_windows(spans, length, stride)

    assert len(plan.assignment) == len(spans)
    assert all(end - start <= length for start, end in plan.windows)
    assert sorted(set(plan.assignment)) == list(range(len(plan.windows)))  # no window without a scored sentence
    regular = regular_windows(start, length, stride)
    for span, chosen in zip(spans, plan.assignment):
        window = plan.windows[chosen]
        assert window[0] <= span[0] and span[1] <= window[1], "scored in a window that contains it whole"
        containing = [w for w in set(plan.windows) | set(regular) if w[0] <= span[0] and span[1] <= w[1]]
        assert context(span, window) == max(context(span, w) for w in containing)
    # Regular windows are used as they are; only sentences no regular window contains get an extra one.
    for window in plan.windows:
        if window not in regular:
            scored = [span for span, chosen in zip(spans, plan.assignment) if plan.windows[chosen] == window]
            assert any(not any(w[0] <= s[0] and s[1] <= w[1] for w in regular) for s in scored)


def test_window_rule_prefers_the_window_with_more_context():
    # 30 one-token sentences, windows of 10 tokens, starts 4 apart: sentence 12 is at offset 4 in window 8-18 and at
    # offset 8 in window 4-14 (context 1); window 8-18 (context 4) wins, window 12-22 (context 0) does not.
    plan = plan_windows([(i, i + 1) for i in range(30)], 10, 4)
    assert plan.windows[plan.assignment[12]] == (8, 18)
    assert plan.windows[plan.assignment[0]] == (0, 10)
    assert plan.windows[plan.assignment[29]][1] == 30


def test_long_document_windows_repeat_the_query_and_score_each_sentence_once():
    rng = random.Random(7)
    processor = QBertProcessor(tiny_tokenizer(), max_length=40, stride=10, max_query_length=8)
    sentences = random_sentences(rng, 25)
    encoding = processor(["king", "early life"], sentences, labels=list(range(25)))
    assert len(encoding["input_ids"]) > 2
    prefix = tokens(processor, encoding["input_ids"][0][:7])
    assert prefix == ["[CLS]", "[L1]", "king", "[L2]", "early", "life", "[SEP]"]
    scored = []
    for ids, sentence_ids, index in zip(encoding["input_ids"], encoding["sentence_ids"], encoding["sentence_index"]):
        assert len(ids) <= 40
        assert tokens(processor, ids[:7]) == prefix and ids[-1] == processor.tokenizer.sep_token_id
        assert sorted(set(sentence_ids) - {-1}) == list(range(len(index)))
        scored.extend(index)
        for local, sentence in enumerate(index):  # the scored tokens are exactly the sentence's tokens
            window_tokens = [t for t, s in zip(ids, sentence_ids) if s == local]
            assert window_tokens == processor.tokenizer(sentences[sentence], add_special_tokens=False)["input_ids"]
    assert sorted(scored) == list(range(25))


@pytest.mark.parametrize("seed", range(5))
def test_sentence_packing_puts_whole_sentences_side_by_side(seed):
    rng = random.Random(seed)
    spans, start = [], 0
    for _ in range(40):
        length = rng.randint(1, 12)
        spans.append((start, start + length))
        start += length
    plan = plan_sentence_windows(spans, 30)
    assert len(plan.assignment) == len(spans)
    for position, (window_start, window_end) in enumerate(plan.windows):
        members = [spans[i] for i, w in enumerate(plan.assignment) if w == position]
        assert members and window_start == members[0][0] and window_end == members[-1][1] <= window_start + 30
        if position + 1 < len(plan.windows):  # full: the next sentence would not have fitted
            following = spans[plan.assignment.index(position + 1)]
            assert following[1] - window_start > 30
    assert [end for _, end in plan.windows][-1] == spans[-1][1] and plan.assignment == sorted(plan.assignment)
    with pytest.raises(ValueError, match="longer than a window"):
        plan_sentence_windows([(0, 31)], 30)


def test_sentence_packing_needs_fewer_windows_and_scores_each_sentence_once():
    rng = random.Random(11)
    sentences = random_sentences(rng, 60)
    strided = QBertProcessor(tiny_tokenizer(), max_length=48, stride=10, max_query_length=8)
    packed = QBertProcessor(tiny_tokenizer(), max_length=48, stride=10, max_query_length=8, packing="sentences")
    many, few = strided("king", sentences), packed("king", sentences)
    assert len(few["input_ids"]) < len(many["input_ids"]) / 2
    assert sorted(i for index in few["sentence_index"] for i in index) == list(range(60))
    for ids, sentence_ids in zip(few["input_ids"], few["sentence_ids"]):
        assert len(ids) <= 48 and -1 not in sentence_ids[sentence_ids.index(0):-1]  # no token of an unscored sentence
    with pytest.raises(ValueError, match="packing must be one of"):
        QBertProcessor(tiny_tokenizer(), packing="pages")


def test_sentence_longer_than_a_window_is_truncated_not_dropped(caplog):
    processor = QBertProcessor(tiny_tokenizer(), max_length=20, stride=5, max_query_length=4)
    long_sentence = " ".join(["cat"] * 40)
    with caplog.at_level(logging.WARNING):
        encoding = processor("king", ["a dog", long_sentence, "the end"])
    assert "sentence(s) 1 (40 tokens)" in caplog.text and "truncated" in caplog.text
    assert sorted(i for index in encoding["sentence_index"] for i in index) == [0, 1, 2]
    for ids, index in zip(encoding["input_ids"], encoding["sentence_index"]):
        assert len(ids) <= 20
        if 1 in index:
            # The window minus [CLS] [L1] king [SEP] … [SEP].
            assert ids.count(processor.tokenizer.convert_tokens_to_ids("cat")) == 20 - 5


# ---- labels, collator, mapping back ----------------------------------------------------------------------------


def test_labels_stay_aligned_through_windows_and_back():
    rng = random.Random(3)
    processor = QBertProcessor(tiny_tokenizer(), max_length=32, stride=7, max_query_length=6)
    examples = []
    for _ in range(6):
        sentences = random_sentences(rng, rng.randint(1, 20))
        labels = [rng.random() for _ in sentences]
        examples.append(QBertExample(["city", "war"], sentences, labels))
    windows = [window.to_features() for window in processor.encode_examples(examples)]
    for window in windows:  # each window's labels are its scored sentences' labels, in order
        labels = examples[window["example_index"]].labels
        assert window["labels"] == [labels[i] for i in window["sentence_index"]]

    batch = processor.collator(keep_mapping=True)(windows)
    # Mapping the labels back as if they were scores rebuilds every example's labels exactly.
    back = QBertProcessor.gather_sentence_scores(batch["labels"], batch["example_index"], batch["sentence_index"],
                                                 num_sentences=[len(e.sentences) for e in examples])
    for example, values in zip(examples, back):
        assert values == pytest.approx(example.labels, abs=1e-6)


def test_collator_pads_and_drops_mapping_for_the_model():
    processor = QBertProcessor(tiny_tokenizer())
    windows = [w.to_features() for w in processor.encode_examples([
        QBertExample(["cat"], ["the cat sat on the mat", "a dog"], [1, 0]),
        QBertExample(["dog"], ["a dog runs"], [1]),
    ])]
    batch = QBertDataCollator(pad_token_id=0)(windows)
    assert set(batch) == {"input_ids", "token_type_ids", "attention_mask", "query_mask", "sentence_ids", "labels"}
    assert batch["input_ids"].shape == batch["sentence_ids"].shape == (2, len(windows[0]["input_ids"]))
    short = len(windows[1]["input_ids"])
    assert batch["input_ids"][1, short:].eq(0).all() and batch["attention_mask"][1, short:].eq(0).all()
    assert batch["sentence_ids"][1, short:].eq(-1).all()
    assert batch["labels"].tolist() == [[1.0, 0.0], [1.0, -100.0]] and batch["labels"].dtype == torch.float32
    mapped = processor.collator(keep_mapping=True)(windows)
    assert mapped["sentence_index"].tolist() == [[0, 1], [0, -1]] and mapped["example_index"].tolist() == [0, 1]
    assert QBertDataCollator(pad_to_multiple_of=8)(windows)["input_ids"].shape[1] % 8 == 0


def test_gather_refuses_a_sentence_scored_twice_and_marks_missing_ones():
    with pytest.raises(ValueError, match="two windows"):
        QBertProcessor.gather_sentence_scores([[0.1], [0.2]], [0, 0], [[0], [0]])
    scores = QBertProcessor.gather_sentence_scores([[0.1, 0.0]], [0], [[1, -1]], num_sentences=[2])
    assert math.isnan(scores[0][0]) and scores[0][1] == pytest.approx(0.1)


# ---- datasets rows and raw inputs ------------------------------------------------------------------------------


def wikiref_row(index: int) -> dict:
    return {
        "query": ["City", "Early life"],
        "document": [f"the city page {index}", "the king was born", "a river runs", "the war"],
        "oracle_label": [0, 1, 0, index % 2],
        "oracle_score": [0.0, 0.8, 0.1, 0.3],
    }


def duc_row() -> dict:
    return {
        "query": ["River cities", "Describe the river.", "Name the cities."],
        "documents": [
            {"docno": "APW1", "date": "1990-01-01", "headline": "River", "sentences": ["a river runs", "the city"]},
            {"docno": "APW2", "date": "1990-01-02", "headline": "Cities", "sentences": ["the king", "a war", "fish"]},
        ],
        "references": ["the river runs by the city ."],
    }


def test_wikiref_dataset_rows_become_labelled_windows():
    datasets = pytest.importorskip("datasets")
    rows = datasets.Dataset.from_list([wikiref_row(i) for i in range(5)])
    for objective, field in (("classification", "oracle_label"), ("regression", "oracle_score")):
        processor = QBertProcessor(tiny_tokenizer(), max_length=16, stride=3, max_query_length=6, objective=objective)
        windows = processor.prepare_dataset(rows)
        assert {"input_ids", "sentence_ids", "labels", "example_index", "sentence_index"} <= set(windows.column_names)
        batch = processor.collator(keep_mapping=True)(list(windows))
        back = QBertProcessor.gather_sentence_scores(batch["labels"], batch["example_index"], batch["sentence_index"])
        assert back == [pytest.approx([float(v) for v in row[field]]) for row in rows]
        assert len(windows) > len(rows)  # the 16-token windows split every document


def test_duc_dataset_rows_map_back_per_row_and_document():
    datasets = pytest.importorskip("datasets")
    rows = []
    for index in range(3):
        row = duc_row()
        row["oracle_score"] = [[0.1 * index, 0.2], [0.3, 0.4, 0.5 + index]]
        rows.append(row)
    processor = QBertProcessor(tiny_tokenizer(), max_length=16, stride=2, max_query_length=6, objective="regression")
    windows = processor.prepare_dataset(datasets.Dataset.from_list(rows))
    assert sorted(set(zip(windows["example_index"], windows["document_index"]))) == [
        (row, document) for row in range(3) for document in range(2)]
    batch = processor.collator(keep_mapping=True)(list(windows))
    clusters = QBertProcessor.gather_cluster_scores(batch["labels"], batch["example_index"], batch["document_index"],
                                                    batch["sentence_index"])
    assert sorted(clusters) == [0, 1, 2]
    for index, row in enumerate(rows):
        assert clusters[index] == [pytest.approx(scores) for scores in row["oracle_score"]]


def test_duc_row_gives_one_example_per_document():
    processor = QBertProcessor(tiny_tokenizer(), max_query_levels=2)
    examples = processor.examples_from_row(duc_row())
    assert [e.sentences for e in examples] == [["a river runs", "the city"], ["the king", "a war", "fish"]]
    assert all(e.labels is None for e in examples)
    # Levels past max_query_levels join the last one.
    query = tokens(processor, processor.encode_query(examples[0].query_levels))
    assert query[:4] == ["[L1]", "river", "[UNK]", "[L2]"]
    labelled = duc_row()
    labelled["oracle_label"] = [[1, 0], [0, 0, 1]]
    assert [e.labels for e in processor.examples_from_row(labelled)] == [[1.0, 0.0], [0.0, 0.0, 1.0]]
    with pytest.raises(KeyError, match="neither"):
        processor.examples_from_row({"query": ["x"], "text": "y"})


def test_raw_inputs_query_string_or_levels_document_text_or_sentences():
    processor = QBertProcessor(tiny_tokenizer())
    as_sentences = processor("cat", ["The cat sat on the mat.", "A dog runs."])
    as_text = processor(["cat"], "The cat sat on the mat. A dog runs.")  # split by wikiref_dataset.text
    assert as_text["input_ids"] == as_sentences["input_ids"]
    assert as_text["sentence_index"] == [[0, 1]]
    with pytest.raises(ValueError, match="2 labels for 1 sentences"):
        processor("cat", ["a dog"], labels=[0, 1])
    tensors = processor("cat", ["the cat", "a dog"], return_tensors="pt")
    assert tensors["input_ids"].dtype == torch.long and tensors["sentence_index"].tolist() == [[0, 1]]


def test_processor_save_load_round_trip(tmp_path):
    import modeling_qbert

    modeling_qbert.register()
    processor = QBertProcessor(tiny_tokenizer(), max_length=64, stride=16, max_query_levels=3, max_query_length=16,
                               pooling="mean",
                               use_query=True, objective="regression", packing="sentences")
    processor.save_pretrained(tmp_path)
    for loaded in (QBertProcessor.from_pretrained(tmp_path), AutoProcessor.from_pretrained(tmp_path)):
        assert type(loaded) is QBertProcessor
        for name in ("max_length", "stride", "max_query_levels", "max_query_length", "pooling", "objective", "packing"):
            assert getattr(loaded, name) == getattr(processor, name)
        assert loaded.level_token_ids == processor.level_token_ids
        assert len(loaded.tokenizer) == len(processor.tokenizer)
        assert loaded("war", ["the king", "a war"]) == processor("war", ["the king", "a war"])


def test_packed_windows_are_cached_and_reused(tmp_path, monkeypatch):
    """prepare_dataset(cache_dir=...) packs once: the same rows, settings and tokenizer load the cached windows (also
    for an in-memory dataset); other rows or another setting pack anew."""
    datasets = pytest.importorskip("datasets")
    rng = random.Random(5)
    rows = [{"query": ["king"], "document": random_sentences(rng, 12), "oracle_label": [0] * 12} for _ in range(3)]
    processor = QBertProcessor(tiny_tokenizer(), max_length=40, stride=10, max_query_length=8)
    first = processor.prepare_dataset(datasets.Dataset.from_list(rows), cache_dir=str(tmp_path))
    assert len(list(tmp_path.glob("qbert-windows-*.arrow"))) == 1

    def refuse(*args, **kwargs):
        raise AssertionError("packed again")

    monkeypatch.setattr(QBertProcessor, "encode_rows", refuse)
    again = QBertProcessor(tiny_tokenizer(), max_length=40, stride=10, max_query_length=8)
    assert again.prepare_dataset(datasets.Dataset.from_list(rows), cache_dir=str(tmp_path)).to_list() == first.to_list()
    monkeypatch.undo()
    other = QBertProcessor(tiny_tokenizer(), max_length=40, stride=10, max_query_length=8, packing="sentences")
    other.prepare_dataset(datasets.Dataset.from_list(rows), cache_dir=str(tmp_path))
    processor.prepare_dataset(datasets.Dataset.from_list(rows[:2]), cache_dir=str(tmp_path))
    assert len(list(tmp_path.glob("qbert-windows-*.arrow"))) == 3
