"""Curation rules, labels and split (``wikiref_dataset/wikiref/curation.py``)."""

from __future__ import annotations

import json

import pytest
from datatrove.data import Document

from wikiref_dataset.oracle import ExtractiveOracle, OracleConfig
from wikiref_dataset.text import TextConfig, TextPipeline
from wikiref_dataset.wikiref.curation import (
    CurationConfig,
    Example,
    LengthBounds,
    LengthFilter,
    LengthStatistics,
    OracleFilter,
    OracleLabeler,
    UnigramRecallFilter,
    assign_splits,
    label_example,
    measure_examples,
    merge_length_bounds,
    split_sizes,
    unigram_recall,
)

DOCUMENT = [
    "Lake Varnholm at a glance",
    "Lake Varnholm is a freshwater lake covering about 14 square kilometres in the Eskby district.",
    "It is the largest lake in the district.",
    "Winter ice usually covers the lake from December until early April.",
]


def make_example(id: str = "1-0", summary: str = "Lake Varnholm is a freshwater lake in the Eskby district.",
                 url: str = "https://example.org/a", document: list[str] | None = None) -> Example:
    return Example(id=id, query=["Lake Varnholm"], document_title=DOCUMENT[0], document=document or list(DOCUMENT),
                   summary=summary, url=url, archive_url="", citation_type="cite web", wiki_page_id=1,
                   wiki_revision_id=2, wiki_title="Lake Varnholm", section_path=[], url_key=url)


@pytest.fixture(scope="module")
def text() -> TextPipeline:
    return TextPipeline(TextConfig(model="blank"))


def test_unigram_recall_counts_clipped_lemmas():
    assert unigram_recall(["lake", "lake", "ice"], ["lake", "ice"]) == pytest.approx(2 / 3)
    assert unigram_recall([], ["lake"]) == 0.0
    assert unigram_recall(["lake"], ["lake"]) == 1.0


def test_measure_examples_sets_lengths_and_recall(text):
    supported, unsupported = measure_examples(
        [make_example(), make_example("1-1", "Dragons breathe fire over volcanic mountains.")], text)
    assert supported.document_sentences == 4
    assert supported.summary_sentences == ["Lake Varnholm is a freshwater lake in the Eskby district."]
    assert supported.summary_sentences_count == 1 and supported.summary_tokens == 11
    assert supported.document_tokens > 30 and supported.query_tokens == 2
    assert supported.unigram_recall == 1.0
    assert unsupported.unigram_recall == 0.0


def test_unigram_recall_filter_threshold_and_reason():
    keep = Document(text="s", id="a", metadata={"unigram_recall": 0.5})
    drop = Document(text="s", id="b", metadata={"unigram_recall": 0.49})
    step = UnigramRecallFilter(0.5)
    assert step.filter(keep) is True
    assert step.filter(drop) == (False, "low_unigram_recall")
    assert UnigramRecallFilter(0.4).filter(drop) is True


def test_length_statistics_merge_exact_percentiles(tmp_path):
    config = CurationConfig()
    for rank, values in enumerate(([1, 2, 3, 4, 5], [6, 7, 8, 9, 10, 100])):
        step = LengthStatistics(tmp_path)
        documents = []
        for position, value in enumerate(values):
            example = make_example(f"{rank}-{position}")
            example.document_tokens = example.document_sentences = value
            example.summary_tokens = example.summary_sentences_count = value
            documents.append(example.to_document())
        assert len(list(step.run(iter(documents), rank=rank, world_size=2))) == len(values)
    bounds = merge_length_bounds(sorted(tmp_path.glob("*.json")), config)
    assert bounds.examples == 11
    # numpy's linear percentile over [1..10, 100]
    assert bounds.bounds["document_tokens"] == pytest.approx((1.5, 55.0))
    assert LengthBounds.from_json(bounds.to_json()) == bounds
    # the same values in other shards give the same bounds
    merged = json.loads((tmp_path / "00000.json").read_text())
    assert merged["examples"] == 5


def test_length_filter_reasons():
    bounds = LengthBounds({"document_tokens": (10, 20), "summary_sentences": (1, 2)}, 100)
    step = LengthFilter(bounds, CurationConfig())
    example = make_example()
    example.document_tokens, example.summary_sentences_count = 15, 1
    assert step.filter(example.to_document()) is True
    example.document_tokens = 9
    assert step.filter(example.to_document()) == (False, "document_tokens_low")
    example.document_tokens, example.summary_sentences_count = 15, 3
    assert step.filter(example.to_document()) == (False, "summary_sentences_high")


def test_oracle_filter_uses_the_project_oracle():
    example = make_example()
    step = OracleFilter(min_score=0.2, max_sentences=5)
    document = example.to_document()
    assert step.filter(document) is True
    expected = ExtractiveOracle(OracleConfig(objective="recall", max_sentences=5)).select(DOCUMENT, example.summary)
    assert document.metadata["oracle_rouge2_recall"] == pytest.approx(expected.score)
    unrelated = make_example(summary="Dragons breathe fire over volcanic mountains.").to_document()
    assert step.filter(unrelated) == (False, "low_oracle_score")


def test_labels_f1_oracle_and_sentence_scores():
    example = label_example(make_example())
    oracle = ExtractiveOracle(OracleConfig(objective="f1", max_sentences=None))
    problem = oracle.prepare(DOCUMENT, example.summary)
    assert example.oracle_label == oracle.search(problem).labels(4)
    assert example.oracle_label[1] == 1 and sum(example.oracle_label) >= 1
    assert example.oracle_score == pytest.approx(oracle.sentence_scores(problem, "f1"))
    labelled = list(OracleLabeler().run(iter([make_example().to_document()])))
    assert labelled[0].metadata["oracle_label"] == example.oracle_label


def test_example_round_trips_through_documents():
    example = label_example(make_example())
    assert Example.from_document(example.to_document()) == example
    assert Example.from_document(json.loads(json.dumps({"text": example.summary, "id": example.id,
                                                        "metadata": example.to_document().metadata}))) == example


def test_split_is_grouped_by_url_seeded_and_order_free():
    examples = [make_example(f"{i}-{j}", url=f"https://example.org/{i}") for i in range(40) for j in range(i % 3 + 1)]
    config = CurationConfig(dev_size=5, test_size=5, seed=7)
    splits = assign_splits(examples, config)
    assert sum(len(v) for v in splits.values()) == len(examples)
    owner = {}
    for name, members in splits.items():
        for example in members:
            assert owner.setdefault(example.url_key, name) == name  # no URL in two splits
    assert 5 <= len(splits["test"]) <= 7 and 5 <= len(splits["validation"]) <= 7
    assert assign_splits(list(reversed(examples)), config) == splits  # input order does not matter
    other = assign_splits(examples, CurationConfig(dev_size=5, test_size=5, seed=8))
    assert [e.id for e in other["test"]] != [e.id for e in splits["test"]]


def test_split_groups_redirect_aliases_by_final_url():
    """Two cited URLs that redirect to one page are one document: they land in one split, whatever the seed."""
    examples = [make_example(f"{i}-0", url=f"https://example.org/{i}") for i in range(30)]
    for i, example in enumerate(examples):
        example.final_url_key = f"example.org/page-{i // 2}"  # 0 and 1 both reach page-0, 2 and 3 page-1, ...
    for seed in range(8):
        splits = assign_splits(examples, CurationConfig(dev_size=5, test_size=5, seed=seed))
        owner = {}
        for name, members in splits.items():
            for example in members:
                assert owner.setdefault(example.final_url_key, name) == name  # no final URL in two splits
        assert sum(len(v) for v in splits.values()) == 30 and len(owner) == 15
    plain = [make_example(f"{i}-0", url=f"https://example.org/{i}") for i in range(30)]
    same = [make_example(f"{i}-0", url=f"https://example.org/{i}") for i in range(30)]
    for example in same:
        example.final_url_key = example.url_key  # no redirect: the split is the cited URL's, as before
    def ids(splits):
        return {name: [e.id for e in members] for name, members in splits.items()}

    assert ids(assign_splits(plain, CurationConfig(seed=3))) == ids(assign_splits(same, CurationConfig(seed=3)))


def test_split_sizes_scale_with_the_build():
    config = CurationConfig()
    assert split_sizes(280_724, 200_000, config) == (12_000, 12_000)
    assert split_sizes(2_807_240, 2_000_000, config) == (12_000, 12_000)
    assert split_sizes(28_072, 20_000, config) == (1_200, 1_200)
    assert split_sizes(10, 10, config) == (1, 1)
    assert split_sizes(2, 2, config) == (0, 0)
    assert split_sizes(10, 10, CurationConfig(dev_size=3, test_size=0)) == (3, 0)


@pytest.mark.parametrize("bad", [dict(min_unigram_recall=1.5), dict(low_percentile=96), dict(bounded=("x",)),
                                 dict(oracle_max_sentences=0), dict(dev_size=-1)])
def test_config_validation(bad):
    with pytest.raises(ValueError):
        CurationConfig(**bad)
