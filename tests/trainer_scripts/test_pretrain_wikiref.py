"""pretrain_wikiref.py: trains on a real built WikiRef folder, tunes the threshold, reports ROUGE F1, saves a model
that AutoModel and the pipeline load; bad inputs fail with a message. Also `modeling_qbert.inference.score_rows`."""

import json
import math

import datasets
import pytest
import torch
from transformers import AutoModel, AutoProcessor, pipeline

import modeling_qbert
from modeling_qbert.inference import score_rows
from modeling_qbert.selection import select_wikiref, summary_text, tune_threshold
from trainer_scripts import pretrain_wikiref
from trainer_scripts.common import ModelArguments, load_model_and_processor
from wikiref_dataset.rouge import RougeConfig, RougeScorer

FAST = ["--use_cpu", "--max_steps", "2", "--per_device_train_batch_size", "4", "--max_length", "128",
        "--disable_tqdm", "true", "--learning_rate", "1e-3", "--seed", "0"]


@pytest.mark.parametrize("objective", ["classification", "regression"])
def test_pretrain_on_built_wikiref(tmp_path, demo_wikiref, tiny_bert_dir, objective):
    out = tmp_path / "qbert"
    status = pretrain_wikiref.main(["--dataset", str(demo_wikiref), "--model_name_or_path", str(tiny_bert_dir),
                                    "--objective", objective, "--output_dir", str(out), "--run_kind", "demo", *FAST])
    assert status == 0
    results = json.loads((out / "results.json").read_text())
    pretraining = results["pretraining"]
    assert results["script"] == "pretrain_wikiref" and results["objective"] == objective
    assert results["run"]["kind"] == "demo"
    assert pretraining["examples"] == {"train": 17, "validation": 1}
    assert pretraining["steps"] == 2 and math.isfinite(pretraining["train_loss"])
    assert pretraining["hyperparameters"]["learning_rate"] == 1e-3
    assert pretraining["hyperparameters"]["weight_decay"] == 0.01  # the paper's default
    assert pretraining["hyperparameters"]["adam_beta2"] == 0.999
    assert pretraining["hyperparameters"]["max_length"] == 128
    for split in ("validation", "test"):
        scores = pretraining[split]
        assert scores["examples"] == 1
        assert all(0.0 <= scores[key] <= 1.0 for key in ("rouge_1_f", "rouge_2_f", "rouge_l_f"))
        assert scores["rouge_1_f"] > 0  # the top sentence always shares words with the statement here
    assert pretraining["test"]["threshold"] == pretraining["validation"]["threshold"]

    # The saved folder loads the way users load it, with the tuned threshold in its config.
    model = AutoModel.from_pretrained(out)
    assert isinstance(model, modeling_qbert.QBertForSentenceScoring)
    assert model.config.objective == objective
    assert model.config.selection_threshold == pytest.approx(pretraining["validation"]["threshold"])
    summarize = pipeline(modeling_qbert.TASK, model=str(out))
    row = datasets.load_dataset(str(demo_wikiref), split="test")[0]
    output = summarize(query=row["query"], document=row["document"])
    assert output["selection"] == "wikiref" and output["summary"]


def test_evaluate_wikiref_matches_a_direct_computation(demo_wikiref, tiny_bert_dir, monkeypatch):
    """With scores given (the oracle labels), the reported numbers are the mean ROUGE F1 of the selected sentences."""
    rows = list(datasets.load_dataset(str(demo_wikiref), split="train"))[:6]
    oracle_scores = [[[float(label) for label in row["oracle_label"]]] for row in rows]
    monkeypatch.setattr("modeling_qbert.inference.score_rows", lambda *args, **kwargs: oracle_scores)
    result = pretrain_wikiref.evaluate_wikiref(None, None, rows)

    tuned = tune_threshold((row["document"], scores[0], row["summary"]) for row, scores in zip(rows, oracle_scores))
    assert result["threshold"] == tuned.best_threshold
    scorer = RougeScorer(RougeConfig(max_n=2, rouge_l=True, stem=True, skip_distance=None, word_limit=None,
                                     resamples=1))
    expected = {"rouge_1": [], "rouge_2": [], "rouge_l": []}
    for row, scores in zip(rows, oracle_scores):
        chosen = select_wikiref(row["document"], scores[0], tuned.best_threshold)
        scored = scorer.score(summary_text(row["document"], chosen), [row["summary"]])
        for name in expected:
            expected[name].append(scored[name].f)
    assert result["examples"] == 6
    for name, values in expected.items():
        assert result[f"{name}_f"] == pytest.approx(sum(values) / len(values))
    assert result["rouge_2_f"] == pytest.approx(tuned.best_rouge2_f1)
    # The oracle labels select the oracle sentences: ROUGE-2 well above zero on these examples.
    assert result["rouge_2_f"] > 0.2


def test_score_rows_equals_the_pipeline(tiny_bert_dir, demo_wikiref):
    model, processor, _ = load_model_and_processor(ModelArguments(model_name_or_path=str(tiny_bert_dir),
                                                                  max_length=64, stride=16))
    rows = list(datasets.load_dataset(str(demo_wikiref), split="train"))[:4]
    duc_row = {"query": ["city council", "hives"], "documents": [{"sentences": rows[0]["document"]},
                                                                {"sentences": rows[1]["document"][:3]}]}
    model.train()  # dropout on: score_rows must switch it off for the call, and restore the mode
    batched = score_rows(model, processor, [*rows, duc_row], batch_size=3)
    assert model.training
    summarize = pipeline(modeling_qbert.TASK, model=model, processor=processor, tokenizer=processor.tokenizer)
    for row, scores in zip(rows, batched):
        output = summarize(query=row["query"], document=row["document"])
        assert len(scores) == 1 and len(scores[0]) == len(row["document"])
        assert scores[0] == pytest.approx([sentence["score"] for sentence in output["sentences"]], abs=1e-5)
    output = summarize(query=duc_row["query"], documents=[d["sentences"] for d in duc_row["documents"]])
    flat = [score for document in batched[-1] for score in document]
    assert flat == pytest.approx([sentence["score"] for sentence in output["sentences"]], abs=1e-5)
    with pytest.raises(ValueError, match="row 0"):
        score_rows(model, processor, [{"document": ["no query"]}])


def test_bad_inputs_exit_2_with_a_message(tmp_path, demo_wikiref, duc_years, tiny_bert_dir, caplog):
    base = ["--output_dir", str(tmp_path / "out"), "--model_name_or_path", str(tiny_bert_dir), *FAST]
    assert pretrain_wikiref.main(["--dataset", str(tmp_path / "missing"), *base]) == 2
    assert "cannot load the dataset" in caplog.text
    assert pretrain_wikiref.main(["--dataset", duc_years[2006], *base]) == 2
    assert "no 'train' split" in caplog.text
    assert pretrain_wikiref.main(["--dataset", str(demo_wikiref), "--validation_split", "dev", *base]) == 2
    assert "no 'dev' split" in caplog.text
    assert pretrain_wikiref.main(["--dataset", str(demo_wikiref), *base[:2], "--model_name_or_path",
                                  str(tmp_path / "nowhere"), *FAST]) == 2
    assert "no such model folder" in caplog.text
    assert pretrain_wikiref.main(["--dataset", str(demo_wikiref), "--subnetwork_method", "magic", *base]) == 2
    assert "--subnetwork_method" in caplog.text
    assert not (tmp_path / "out" / "results.json").exists()


def test_iterative_pruning_during_pretraining(tmp_path, demo_wikiref, tiny_bert_dir):
    out = tmp_path / "qbert"
    assert pretrain_wikiref.main(["--dataset", str(demo_wikiref), "--model_name_or_path", str(tiny_bert_dir),
                                  "--output_dir", str(out), "--subnetwork_method", "iterative",
                                  "--subnetwork_fraction", "0.5", *FAST]) == 0
    results = json.loads((out / "results.json").read_text())
    assert results["pretraining"]["subnetwork"]["method"] == "iterative"
    assert (out / "subnetwork_mask.safetensors").is_file()
    assert torch.isfinite(torch.tensor(results["pretraining"]["train_loss"]))
    assert AutoProcessor.from_pretrained(out).max_length == 128
