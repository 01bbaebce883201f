"""The `evaluate` module: loads offline from its folder, is importable as a class, and is the engine's numbers."""

import json

import evaluate
import pytest

from wikiref_dataset.metrics import DUC_ROUGE_PATH
from wikiref_dataset.metrics.duc_rouge.duc_rouge import DucRouge
from wikiref_dataset.rouge import RougeConfig, rouge

PREDICTIONS = ["The cat sat on the mat.\nIt was a red mat.", "Dogs bark at night in the old town."]
REFERENCES = [["A cat sat on a red mat.", "The cat was sitting on the mat."], ["At night the dogs of the town bark."]]


@pytest.fixture(scope="module")
def metric():
    return evaluate.load(DUC_ROUGE_PATH)


def test_loads_offline_and_matches_engine(metric, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    results = metric.compute(predictions=PREDICTIONS, references=REFERENCES)
    expected = rouge(PREDICTIONS, REFERENCES).to_dict()
    assert results == expected
    assert set(results) >= {"rouge_1_recall", "rouge_2_recall", "rouge_su4_recall", "rouge_2_recall_ci_low"}
    assert "rouge_l_recall" not in results  # -x is part of the DUC settings


def test_class_import_gives_the_same_numbers(metric):
    assert DucRouge().compute(predictions=PREDICTIONS, references=REFERENCES) == metric.compute(
        predictions=PREDICTIONS, references=REFERENCES)


def test_single_reference_strings_and_per_item(metric):
    results = metric.compute(predictions=PREDICTIONS, references=[refs[0] for refs in REFERENCES],
                             return_per_item=True)
    assert len(results["per_item"]) == 2
    assert results["per_item"][0]["rouge_1"]["recall"] == rouge([PREDICTIONS[0]], [[REFERENCES[0][0]]]).per_item[0][
        "rouge_1"].recall


def test_options_and_rouge_args(metric):
    by_kwargs = metric.compute(predictions=PREDICTIONS, references=REFERENCES, rouge_l=True, word_limit=None,
                               max_n=1, skip_distance=None)
    by_args = metric.compute(predictions=PREDICTIONS, references=REFERENCES, rouge_args="-n 1 -m -c 95 -r 1000")
    assert by_kwargs == by_args
    assert set(by_args) == {f"rouge_{m}_{v}{s}" for m in ("1", "l") for v in ("recall", "precision", "f")
                            for s in ("", "_ci_low", "_ci_high")}


def test_bad_options_raise(metric):
    with pytest.raises(ValueError, match="not implemented"):
        metric.compute(predictions=PREDICTIONS, references=REFERENCES, rouge_args="-n 2 -b 665")
    with pytest.raises(ValueError, match="scoring"):
        metric.compute(predictions=PREDICTIONS, references=REFERENCES, scoring="C")


def test_reproduces_golden_averages(metric, rouge_golden):
    items = [json.loads(line) for line in (rouge_golden / "items.jsonl").read_text(encoding="utf-8").splitlines()]
    expected = json.loads((rouge_golden / "expected_duc.json").read_text(encoding="utf-8"))
    results = metric.compute(predictions=[item["system"] for item in items],
                             references=[item["references"] for item in items])
    for name, official in expected["official"].items():
        for value in ("recall", "precision", "f"):
            assert f"{results[f'{name}_{value}']:.5f}" == f"{official[value]:.5f}"
            assert [f"{results[f'{name}_{value}_ci_{side}']:.5f}" for side in ("low", "high")] == [
                f"{bound:.5f}" for bound in official[f"{value}_ci"]]
    assert RougeConfig().to_args() == expected["rouge_args"]
