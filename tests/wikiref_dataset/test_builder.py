"""The WikiRef dataset folder and builder (``wikiref_dataset/wikiref/dataset.py``)."""

from __future__ import annotations

import hashlib

import datasets
import pytest

from wikiref_dataset.wikiref.build import run_demo_build
from wikiref_dataset.wikiref.curation import Example, label_example
from wikiref_dataset.wikiref.dataset import FEATURES, WikiRef, split_statistics, write_dataset_folder


def make_example(index: int) -> Example:
    example = Example(id=f"{index}-0", query=["Title", "Section"], document_title="Page",
                      document=["Page", "The lake is deep.", "The lake is cold in winter."],
                      summary="The lake is deep and cold.", url=f"https://example.org/{index}", archive_url="",
                      citation_type="cite web", wiki_page_id=index, wiki_revision_id=10 * index, wiki_title="Title",
                      section_path=["Section"], url_key=f"example.org/{index}")
    example.summary_sentences = [example.summary]
    example.document_tokens, example.document_sentences, example.summary_tokens = 12, 3, 7
    example.summary_sentences_count, example.query_tokens, example.oracle_rouge2_recall = 1, 2, 0.5
    return label_example(example)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    out = tmp_path_factory.mktemp("folder")
    splits = {"train": [make_example(i) for i in range(5)], "validation": [make_example(5)],
              "test": [make_example(6)]}
    write_dataset_folder(splits, out, {"dumps": ["x.xml"], "counts": {"raw statements": 9}})
    return out, splits


def test_load_dataset_reads_the_folder_with_typed_features(folder):
    out, splits = folder
    loaded = datasets.load_dataset(str(out))
    assert set(loaded) == {"train", "validation", "test"}
    assert loaded["train"].features == FEATURES
    assert loaded["train"].num_rows == 5
    row = loaded["test"][0]
    assert row["id"] == "6-0" and row["document"][0] == "Page" and row["oracle_label"] == [0, 1, 0]
    assert row["query"] == ["Title", "Section"]


def test_card_has_configs_tables_licence_and_citation(folder):
    out, _ = folder
    card = (out / "README.md").read_text()
    train = next((out / "data").glob("train-*.parquet")).name
    assert "configs:" in card and f"path: data/{train}" in card  # the exact, content-addressed file
    assert train == f"train-00000-of-00001-{hashlib.sha256((out / 'data' / train).read_bytes()).hexdigest()[:16]}.parquet"
    for text in ("Table I", "Table II", "CC BY-SA", "publishers' copyright", "raw statements", "figures/"):
        assert text in card
    assert len(list((out / "figures").glob("*.png"))) == 6


def test_parquet_bytes_are_reproducible(folder, tmp_path):
    out, splits = folder
    write_dataset_folder(splits, tmp_path, {})
    names = sorted(path.name for path in (out / "data").glob("*.parquet"))
    assert len(names) == 3 and names == sorted(path.name for path in (tmp_path / "data").glob("*.parquet"))
    for name in names:  # same rows -> same bytes -> same (content-addressed) names
        assert (out / "data" / name).read_bytes() == (tmp_path / "data" / name).read_bytes()


def test_statistics_tables():
    stats = split_statistics([make_example(i) for i in range(3)])
    assert stats["Total Examples"] == 3 and stats["Wiki Articles"] == 3
    assert stats["Document Tokens"]["mean"] == 12 and stats["Query Depth"]["percentiles"]["50"] == 2


def test_generator_based_builder_reads_a_build(tmp_path):
    out = tmp_path / "build"
    run_demo_build(out, progress=False)
    builder = WikiRef(data_dir=str(out), cache_dir=str(tmp_path / "cache"), dataset_name="wikiref")
    builder.download_and_prepare()
    dataset = builder.as_dataset()
    assert dataset["train"].features == FEATURES
    assert sum(split.num_rows for split in dataset.values()) == 19
    assert dataset["test"].to_list() == datasets.load_dataset(str(out), split="test").to_list()


def test_empty_splits_are_left_out_so_small_builds_load(tmp_path):
    """datasets cannot load an empty split: a build whose validation split is empty still loads (train, test)."""
    out = tmp_path / "small"
    sizes = write_dataset_folder({"train": [make_example(1), make_example(2)], "validation": [],
                                  "test": [make_example(3)]}, out)
    assert sizes == {"train": 2, "validation": 0, "test": 1}
    assert not list((out / "data").glob("validation-*"))
    assert "split: validation" not in (out / "README.md").read_text(encoding="utf-8")
    loaded = datasets.load_dataset(str(out), cache_dir=str(tmp_path / "cache"))
    assert {split: len(rows) for split, rows in loaded.items()} == {"train": 2, "test": 1}


def test_a_build_with_no_example_writes_a_typed_empty_train_split(tmp_path):
    out = tmp_path / "empty"
    write_dataset_folder({"train": [], "validation": [], "test": []}, out)
    assert [path.name[:21] for path in (out / "data").iterdir()] == ["train-00000-of-00001-"]
    assert "split: train" in (out / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("rows", [0, 3, 8, 9])
def test_split_files_stream_row_group_by_row_group_into_the_bytes_of_one_write(tmp_path, monkeypatch, rows):
    """The Parquet file fed one row at a time (at most one row group held) is the file ``pq.write_table`` writes
    from the whole table, so a streamed build publishes the same content-addressed names."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from wikiref_dataset.mining import dataset_folder
    from wikiref_dataset.mining.dataset_folder import SplitFilesWriter
    from wikiref_dataset.wikiref.dataset import feature_row

    monkeypatch.setattr(dataset_folder, "ROW_GROUP_SIZE", 4)
    examples = [feature_row(make_example(i)) for i in range(10, 10 + rows)]
    writer = SplitFilesWriter(tmp_path / "out", FEATURES, ordered_by="id")
    held = []
    for row in examples:
        writer.add("train", row)
        held.append(len(writer._pending["train"]))
    files = writer.close()
    assert max(held, default=0) < 4
    expected = tmp_path / "expected.parquet"
    table = pa.Table.from_pylist(examples, schema=FEATURES.arrow_schema) if rows else FEATURES.arrow_schema.empty_table()
    pq.write_table(table, expected, row_group_size=4, compression="zstd", write_statistics=True)
    written = (tmp_path / "out" / files["train"]).read_bytes()
    assert written == expected.read_bytes()
    assert pq.ParquetFile(tmp_path / "out" / files["train"]).metadata.num_row_groups == max(1, -(-rows // 4))
    assert files["train"] == f"data/train-00000-of-00001-{hashlib.sha256(written).hexdigest()[:16]}.parquet"


def test_split_files_refuse_rows_out_of_id_order(tmp_path):
    from wikiref_dataset.mining.dataset_folder import SplitFilesWriter
    from wikiref_dataset.wikiref.dataset import feature_row

    writer = SplitFilesWriter(tmp_path, FEATURES, ordered_by="id")
    writer.add("test", feature_row(make_example(2)))
    writer.add("train", feature_row(make_example(1)))  # another split: its own order
    with pytest.raises(ValueError, match="test: row id='1-0' comes after '2-0'"):
        writer.add("test", feature_row(make_example(1)))
