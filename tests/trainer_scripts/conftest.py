"""Fixtures of the training-script tests: a tiny BERT encoder folder, a tiny pre-trained Q-BERT folder, the WikiRef
built from the embedded sample and the DUC fixture years converted."""

from pathlib import Path

import datasets
import pytest
import torch
from transformers import BertConfig, BertModel, BertTokenizer

ROOT = Path(__file__).resolve().parents[2]
DUC = ROOT / "tests" / "fixtures" / "duc"
WORDS = ("the a of and to in is was for on that with by as at from it city council hives bees honey rooftop "
         "garden rules law new old river bridge school students year years water power plant energy wind solar "
         "team game season club player coach museum art history war king queen north south east west . , ' ( )"
         ).split()


@pytest.fixture(autouse=True)
def _isolated_caches(tmp_path, monkeypatch):
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(tmp_path / "hf_cache"))


@pytest.fixture(autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def tiny_bert_config() -> BertConfig:
    return BertConfig(vocab_size=len(WORDS) + 5, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                      intermediate_size=64, max_position_embeddings=256)


@pytest.fixture(scope="session")
def tiny_bert_dir(tmp_path_factory) -> Path:
    """A BERT encoder folder (random weights, 2 layers of 32) with a WordPiece tokenizer of a few words."""
    folder = tmp_path_factory.mktemp("tiny-bert")
    torch.manual_seed(0)
    BertModel(tiny_bert_config()).save_pretrained(folder)
    vocab = {token: index for index, token in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS])}
    BertTokenizer(vocab=vocab, do_lower_case=True).save_pretrained(folder)
    return folder


@pytest.fixture(scope="session")
def demo_wikiref(tmp_path_factory) -> Path:
    """WikiRef built from the embedded sample (19 examples: 17 train, 1 validation, 1 test)."""
    from wikiref_dataset.pipeline import run_demo_build

    folder = tmp_path_factory.mktemp("wikiref") / "wikiref"
    run_demo_build(folder)
    return folder


@pytest.fixture(scope="session")
def duc_years(tmp_path_factory) -> dict[int, str]:
    """The DUC fixture years (tests/fixtures/duc) converted with `wikiref duc convert`'s function."""
    from wikiref_dataset.duc import convert_duc

    out = tmp_path_factory.mktemp("duc")
    for year in (2005, 2006, 2007):
        convert_duc(DUC / f"duc{year}", year, out / f"duc{year}")
    return {year: str(out / f"duc{year}") for year in (2005, 2006, 2007)}


@pytest.fixture(scope="session")
def tiny_qbert_dir(tmp_path_factory, tiny_bert_dir) -> Path:
    """A Q-BERT folder as `pretrain_wikiref.py` leaves it (model, tokenizer, processor, results.json), built
    directly from the tiny encoder without training."""
    import json

    from modeling_qbert import QBertForSentenceScoring
    from trainer_scripts.common import ModelArguments, load_model_and_processor

    folder = tmp_path_factory.mktemp("tiny-qbert")
    torch.manual_seed(1)
    model, processor, _ = load_model_and_processor(ModelArguments(model_name_or_path=str(tiny_bert_dir),
                                                                  max_length=128))
    assert isinstance(model, QBertForSentenceScoring)
    model.save_pretrained(folder)
    processor.save_pretrained(folder)
    (folder / "results.json").write_text(json.dumps({
        "script": "pretrain_wikiref", "base_model": "tiny-bert", "objective": "classification",
        "pretraining": {"dataset": "fixture", "examples": {"train": 1, "validation": 1}, "steps": 0,
                        "validation": {"examples": 1, "threshold": 0.5, "rouge_1_f": 0.1, "rouge_2_f": 0.05,
                                       "rouge_l_f": 0.1}}}))
    return folder
