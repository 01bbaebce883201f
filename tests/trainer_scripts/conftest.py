"""Fixtures of the training-script tests (the shared tiny models and datasets are in tests/conftest.py)."""

import datasets
import pytest


@pytest.fixture(autouse=True)
def _isolated_caches(tmp_path, monkeypatch):
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(tmp_path / "hf_cache"))


@pytest.fixture(autouse=True)
def _one_torch_thread(one_thread):
    """Every training-script test runs with one torch thread (``one_thread`` in tests/conftest.py)."""


@pytest.fixture(scope="module")
def tiny_wikiref(tmp_path_factory):
    """A WikiRef-shaped folder (train 12, validation 2, test 2) with the columns pre-training and Fig. 6 read."""
    folder = tmp_path_factory.mktemp("wikiref") / "wikiref"
    words = "the city council hives bees honey rooftop garden rules law river bridge school water".split()

    def example(index):
        document = [" ".join(words[(index + 3 * j + k) % len(words)] for k in range(7)) + " ." for j in range(4)]
        labels = [int(j == index % 4) for j in range(4)]
        return {"id": str(index), "query": ["city", "bees"], "document": document, "summary": document[index % 4],
                "oracle_label": labels, "oracle_score": [float(label) for label in labels],
                "oracle_rouge2_recall": ((7 * index) % 12) / 12}

    (folder / "data").mkdir(parents=True)
    card = ["---", "configs:", "- config_name: default", "  data_files:"]
    start = 0
    for split, count in (("train", 12), ("validation", 2), ("test", 2)):
        name = f"data/{split}-00000-of-00001.parquet"
        datasets.Dataset.from_list([example(start + i) for i in range(count)]).to_parquet(str(folder / name))
        card += [f"  - split: {split}", f"    path: {name}"]
        start += count
    (folder / "README.md").write_text("\n".join([*card, "---", "", "# tiny WikiRef", ""]), encoding="utf-8")
    return folder
