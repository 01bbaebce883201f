"""PSG2SUM dataset folder, split, baselines, datatrove step and CLI."""

import argparse
from dataclasses import asdict
from pathlib import Path

import datasets
import numpy as np
import pytest

from wikiref_dataset.command import dispatch
from wikiref_dataset.psg2sum.baselines import evaluate_baselines, format_table, lead1, textrank, textrank_scores
from wikiref_dataset.psg2sum.cli import add_psg2sum_parser
from wikiref_dataset.psg2sum.dataset import deduplicate, split_pairs, split_sizes, write_psg2sum_folder
from wikiref_dataset.psg2sum.mining import MiningConfig, PassageSummaryPair
from wikiref_dataset.psg2sum.steps import Psg2SumPairs, pair_from_document

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "psg2sum" / "history.xml"


def make_pair(page_id: int, revision_id: int, passage: str = "A passage. Second sentence.",
              summary: str = "A summary.") -> PassageSummaryPair:
    return PassageSummaryPair(id=f"{page_id}-{revision_id}-0", page_id=page_id, title=f"Page {page_id}",
                              revision_id=revision_id, parent_revision_id=revision_id - 1, timestamp="2020",
                              passage=passage, passage_sentences=["A passage.", "Second sentence."],
                              summary=summary, score=0.75)


def test_split_sizes_scale_to_4000():
    assert split_sizes(100_118, 50_000) == (4_000, 4_000)
    assert split_sizes(1_000, 300) == (40, 40)
    assert split_sizes(10, 2) == (0, 0)
    assert split_sizes(10, 5, dev_size=2, test_size=3) == (2, 3)


def test_split_is_page_disjoint_and_deterministic():
    pairs = [make_pair(page, page * 100 + k, passage=f"p{page}-{k}") for page in range(40) for k in range(3)]
    splits = split_pairs(pairs, seed=1, dev_size=10, test_size=10)
    pages = {name: {p.page_id for p in split} for name, split in splits.items()}
    assert not (pages["train"] & pages["validation"]) and not (pages["train"] & pages["test"])
    assert not (pages["validation"] & pages["test"])
    assert sum(len(split) for split in splits.values()) == 120
    assert 10 <= len(splits["test"]) < 13 and 10 <= len(splits["validation"]) < 13
    assert split_pairs(pairs, seed=1, dev_size=10, test_size=10) == splits


def test_deduplicate_keeps_earliest_revision():
    pairs = [make_pair(1, 12), make_pair(2, 11), make_pair(1, 13, summary="Other.")]
    kept, dropped = deduplicate(pairs)
    assert dropped == 1 and [p.revision_id for p in kept] == [11, 13]


def test_folder_loads_with_load_dataset(tmp_path):
    pairs = [make_pair(page, page * 10, passage=f"Passage {page}.") for page in range(6)]
    splits = split_pairs(pairs, dev_size=1, test_size=1)
    sizes = write_psg2sum_folder(splits, tmp_path / "out", {"dumps": ["x.xml"], "counts": {"pairs": 6}})
    assert sizes == {"train": 4, "validation": 1, "test": 1}
    loaded = datasets.load_dataset(str(tmp_path / "out"))
    assert loaded["train"].num_rows == 4
    assert set(loaded["train"].column_names) == {"id", "page_id", "title", "revision_id", "parent_revision_id",
                                                 "timestamp", "passage", "passage_sentences", "summary", "score"}
    card = (tmp_path / "out" / "README.md").read_text()
    assert "pretty_name: PSG2SUM" in card and "| pairs | 6 |" in card


def test_lead1_and_textrank():
    sentences = ["Cats sleep a lot.", "Dogs bark at cats and dogs chase cats.", "Dogs and cats are pets."]
    assert lead1(sentences) == sentences[0]
    assert lead1([]) == ""
    assert textrank(["Only one."]) == "Only one."
    assert textrank(sentences) in sentences
    # the sentence sharing the most words with the others is central: sentence 1 links to both others
    scores = textrank_scores([["a", "b", "c"], ["a", "b", "d", "e"], ["x", "y", "z"]])
    assert scores[2] < scores[0] and np.isclose(scores.sum(), 1.0)
    assert np.allclose(textrank_scores([["a", "b"], ["a", "b"]]), [0.5, 0.5])


def test_evaluate_baselines_table():
    rows = [asdict(make_pair(page, page, summary="A passage.")) for page in range(3)]
    results = evaluate_baselines(rows)
    assert set(results) == {"LEAD1", "TextRank"}
    assert results["LEAD1"].averages["rouge_1"].recall == pytest.approx(1.0)
    table = format_table(results)
    assert table.splitlines()[0].startswith("| Model | ROUGE-1 R")
    assert "| LEAD1 | 100.00±0.00" in table


def test_datatrove_step_shards_pages():
    step = Psg2SumPairs(FIXTURE, MiningConfig(min_score=0.5))
    documents = list(step.run(rank=0, world_size=1))
    pairs = [pair_from_document(document) for document in documents]
    assert [(p.parent_revision_id, p.revision_id) for p in pairs] == [(101, 102), (104, 107)]
    assert pairs[0].summary.startswith("Pears were cultivated") and documents[0].text == pairs[0].passage
    assert list(Psg2SumPairs(FIXTURE).run(rank=1, world_size=2)) == []  # one file: task 0 takes it whole


def run_cli(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="wikiref")
    add_psg2sum_parser(parser.add_subparsers())
    return dispatch(parser, ["psg2sum", *argv])


def test_cli_builds_a_loadable_folder(tmp_path, capsys):
    out = tmp_path / "psg2sum"
    assert run_cli(str(FIXTURE), "--out", str(out), "--min-score", "0.5", "--quiet") == 0
    printed = capsys.readouterr().out
    assert "1 pages, 11 revisions, 8 revision pairs" in printed
    assert "1 deleted, 1 without text, 2 reverts (2 revisions undone), 1 rewrites" in printed
    assert "candidate pairs: 3 (λ≥0.3: 3, λ≥0.4: 3, λ≥0.5: 3, λ≥0.6: 2, λ≥0.7: 2)" in printed
    assert "kept at λ=0.5: 2" in printed
    loaded = datasets.load_dataset(str(out))
    assert sum(split.num_rows for split in loaded.values()) == 2
    assert (out / "build.json").is_file()


def test_cli_errors(tmp_path, capsys):
    assert run_cli(str(tmp_path / "missing.xml"), "--out", str(tmp_path / "o")) == 2
    assert "missing.xml: no such dump file" in capsys.readouterr().err
    assert run_cli(str(FIXTURE), "--out", str(tmp_path / "o"), "--min-score", "2") == 2
