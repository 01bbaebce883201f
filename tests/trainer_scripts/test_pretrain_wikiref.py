"""pretrain_wikiref.py: trains on a real built WikiRef folder, tunes the threshold, reports ROUGE F1, saves a model
that AutoModel and the pipeline load; bad inputs fail with a message. Also `modeling_qbert.inference.score_rows`."""

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import datasets
import pytest
import torch
from transformers import AutoModel, AutoProcessor, pipeline

import modeling_qbert
from modeling_qbert.inference import score_rows
from modeling_qbert.sparse import SUBNETWORK_MASK_NAME, load_subnetwork_mask, mask_density
from trainer_scripts import pretrain_wikiref, pretraining
from trainer_scripts.common import ModelArguments, load_model_and_processor
from wikiref_dataset.rouge import RougeConfig, RougeScorer
from wikiref_dataset.selection import select_wikiref, summary_text, tune_threshold

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
    # The folder carries its pipeline code (custom_pipelines): transformers then asks for trust_remote_code, or the
    # installed class; both summarize alike.
    row = datasets.load_dataset(str(demo_wikiref), split="test")[0]
    outputs = [pipeline(modeling_qbert.TASK, model=str(out), **how)(query=row["query"], document=row["document"])
               for how in ({"trust_remote_code": True},
                           {"pipeline_class": modeling_qbert.QueryFocusedSummarizationPipeline})]
    assert outputs[0]["selection"] == "wikiref" and outputs[0]["summary"]
    assert outputs[0]["summary"] == outputs[1]["summary"]


def test_evaluate_wikiref_matches_a_direct_computation(demo_wikiref, tiny_bert_dir, monkeypatch):
    """With scores given (the oracle labels), the reported numbers are the mean ROUGE F1 of the selected sentences."""
    rows = list(datasets.load_dataset(str(demo_wikiref), split="train"))[:6]
    oracle_scores = [[[float(label) for label in row["oracle_label"]]] for row in rows]
    monkeypatch.setattr("modeling_qbert.inference.score_rows", lambda *args, **kwargs: oracle_scores)
    result = pretraining.evaluate_wikiref(None, None, rows).to_dict()

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
    assert "nowhere: no such folder (no model hub is used here: pass a local folder)" in caplog.text
    assert pretrain_wikiref.main(["--dataset", str(demo_wikiref), "--subnetwork_method", "magic", *base]) == 2
    assert "--subnetwork_method" in caplog.text
    assert not (tmp_path / "out" / "results.json").exists()


def test_iterative_pruning_during_pretraining(tmp_path, demo_wikiref, tiny_bert_dir, caplog):
    """The default schedule is scaled to the run (2 steps: updates at steps 0 and 1, t0 + nΔt = 1 = 75% of 2 rounded
    down) and reaches its target: the saved mask keeps 50% of every encoder matrix, no bias or LayerNorm vector."""
    out = tmp_path / "qbert"
    assert pretrain_wikiref.main(["--dataset", str(demo_wikiref), "--model_name_or_path", str(tiny_bert_dir),
                                  "--output_dir", str(out), "--subnetwork_method", "iterative",
                                  "--subnetwork_fraction", "0.5", *FAST]) == 0
    assert "before the iterative schedule reaches its target" not in caplog.text
    results = json.loads((out / "results.json").read_text())
    assert results["pretraining"]["subnetwork"]["method"] == "iterative"
    masks, config = load_subnetwork_mask(out / SUBNETWORK_MASK_NAME)
    assert config.method == "iterative" and (config.end_step, config.update_frequency) == (1, 1)
    model = AutoModel.from_pretrained(out)
    encoder = {name: p for name, p in model.named_parameters() if name.startswith("bert.encoder.")}
    assert set(masks) == {name for name, p in encoder.items() if p.dim() == 2}  # matrices only, by default
    for name, mask in masks.items():
        assert int(mask.sum()) == round(0.5 * mask.numel()), name
    subnetwork = results["subnetwork"]
    assert subnetwork["method"] == "iterative" and subnetwork["fraction"] == 0.5
    assert subnetwork["final_density"] == pytest.approx(mask_density(masks)) and mask_density(masks) == 0.5
    assert subnetwork["schedule"] == {"initial_fraction": 1.0, "begin_step": 0, "end_step": 1, "update_frequency": 1,
                                      "steps": 2, "reached_target": True}
    assert subnetwork["mask_file"] == SUBNETWORK_MASK_NAME and subnetwork["include_vectors"] is False
    assert torch.isfinite(torch.tensor(results["pretraining"]["train_loss"]))
    assert AutoProcessor.from_pretrained(out).max_length == 128


def test_a_run_that_ends_before_the_schedule_target_warns(tmp_path, demo_wikiref, tiny_bert_dir, caplog):
    out = tmp_path / "qbert"
    fast = [*FAST[:FAST.index("--max_steps")], "--max_steps", "6", *FAST[FAST.index("--max_steps") + 2:]]
    assert pretrain_wikiref.main(["--dataset", str(demo_wikiref), "--model_name_or_path", str(tiny_bert_dir),
                                  "--output_dir", str(out), "--subnetwork_method", "iterative",
                                  "--subnetwork_fraction", "0.5", "--subnetwork_end_step", "10",
                                  "--subnetwork_update_frequency", "5", *fast]) == 0
    warnings = [r.getMessage() for r in caplog.records if "before the iterative schedule reaches" in r.getMessage()]
    assert len(warnings) == 1 and "not 50.00%" in warnings[0]
    # updates at steps 0 and 5 of 0-5: the share after the one at step 5, s_5 = 0.5 - 0.5 * (1 - 5/10)^3
    expected = 1 - (0.5 - 0.5 * 0.5**3)
    masks, _ = load_subnetwork_mask(out / SUBNETWORK_MASK_NAME)
    assert mask_density(masks) == pytest.approx(expected, abs=0.01)
    subnetwork = json.loads((out / "results.json").read_text())["subnetwork"]
    assert subnetwork["final_density"] == pytest.approx(expected, abs=0.01)
    assert subnetwork["schedule"]["reached_target"] is False and subnetwork["schedule"]["end_step"] == 10


TABLE_IV = {
    "cls pooling": (["--pooling", "cls"], {"pooling": "cls", "use_query": True}, "pretrained"),
    "mean pooling": (["--pooling", "mean"], {"pooling": "mean", "use_query": True}, "pretrained"),
    "max pooling": (["--pooling", "max"], {"pooling": "max", "use_query": True}, "pretrained"),
    "attention pooling": (["--pooling", "attention"], {"pooling": "attention", "use_query": True}, "pretrained"),
    "w/o query": (["--use_query", "false", "--pooling", "attention"], {"pooling": "attention", "use_query": False},
                  "pretrained"),
    "transformer": (["--random_init", "true", "--use_query", "false", "--pooling", "mean"],
                    {"pooling": "mean", "use_query": False}, "random"),
}


@pytest.mark.parametrize("flags, expected, encoder_init", TABLE_IV.values(), ids=TABLE_IV.keys())
def test_table_iv_rows(tmp_path, demo_wikiref, tiny_bert_dir, flags, expected, encoder_init):
    """Each Table IV row from the command line: the saved config and processor say what ran, and the encoder starts
    from the BERT checkpoint or (random_init) from random weights (a learning rate of 1e-12 keeps it where it
    started)."""
    from safetensors.torch import load_file

    out = tmp_path / "qbert"
    assert pretrain_wikiref.main(["--dataset", str(demo_wikiref), "--model_name_or_path", str(tiny_bert_dir),
                                  "--output_dir", str(out), *FAST, "--max_steps", "1", "--learning_rate", "1e-12",
                                  "--seed", "1", *flags]) == 0
    config = json.loads((out / "config.json").read_text())
    assert {key: config[key] for key in expected} == expected
    processor = AutoProcessor.from_pretrained(out)
    assert (processor.pooling, processor.use_query) == (expected["pooling"], expected["use_query"])
    results = json.loads((out / "results.json").read_text())
    assert results["pretraining"]["architecture"] == {**expected, "encoder_init": encoder_init}
    bert = load_file(tiny_bert_dir / "model.safetensors")
    trained = load_file(out / "model.safetensors")
    for name in ("encoder.layer.0.attention.self.query.weight", "encoder.layer.1.output.dense.weight"):
        distance = (trained[f"bert.{name}"] - bert[name]).abs().max().item()
        assert (distance > 1e-3) if encoder_init == "random" else (distance < 1e-6), (name, distance)


@pytest.mark.parametrize("flags, message", [
    (["--pooling", "foo"], "--pooling must be one of query_focused, cls, mean, max, attention, got 'foo'"),
    (["--objective", "bar"], "--objective must be one of classification, regression, got 'bar'"),
    (["--subnetwork_method", "baz"], "--subnetwork_method must be 'none' or 'iterative', got 'baz'"),
    (["--use_query", "false"], "--use_query false needs another --pooling than query_focused"),
    (["--subnetwork_method", "iterative", "--subnetwork_end_step", "10", "--subnetwork_update_frequency", "3"],
     "end_step - begin_step must be a positive multiple of update_frequency"),
])
def test_bad_values_end_in_one_line(tmp_path, demo_wikiref, tiny_bert_dir, caplog, flags, message):
    status = pretrain_wikiref.main(["--dataset", str(demo_wikiref), "--model_name_or_path", str(tiny_bert_dir),
                                    "--output_dir", str(tmp_path / "out"), *FAST, *flags])
    assert status == 2
    errors = [record.getMessage() for record in caplog.records if record.levelname == "ERROR"]
    assert len(errors) == 1 and message in errors[0] and "\n" not in errors[0]
    assert not (tmp_path / "out" / "results.json").exists()


def test_bad_command_lines_exit_2_with_one_line(tmp_path, demo_wikiref, tiny_bert_dir):
    """As a script: a bad value of our options (refused before the dataset is read: here there is none) and an
    option nobody knows each end in one stderr line, no traceback, no usage block."""
    script = Path(pretrain_wikiref.__file__)
    base = [sys.executable, str(script), "--dataset", str(demo_wikiref), "--model_name_or_path", str(tiny_bert_dir),
            "--output_dir", str(tmp_path / "out"), "--use_cpu", "true", "--max_steps", "1"]
    for extra, expected in ((["--pooling", "foo", "--dataset", str(tmp_path / "none")], "--pooling must be one of"),
                            (["--poling", "mean"], "error: Some specified arguments are not used")):
        result = subprocess.run([*base, *extra], capture_output=True, text=True, check=False,
                                env={**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_CACHE": str(tmp_path / "c")})
        assert result.returncode == 2, result.stderr
        assert "Traceback" not in result.stderr and "usage:" not in result.stderr
        lines = [line for line in result.stderr.splitlines() if expected in line]
        assert len(lines) == 1, result.stderr


@pytest.mark.parametrize("script, options", [
    ("pretrain_wikiref", ["--subnetwork_end_step", "--subnetwork_update_frequency", "--subnetwork_include_vectors",
                          "--use_query", "--random_init", "--pooling"]),
    ("finetune_duc", ["--subnetwork_method", "--subnetwork_include_vectors"]),
])
def test_help_lists_the_ablation_options(script, options, capsys):
    import importlib

    with pytest.raises(SystemExit) as exit_info:
        importlib.import_module(f"trainer_scripts.{script}").main(["--help"])
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    assert all(option in text for option in options)
