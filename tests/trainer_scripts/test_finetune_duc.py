"""finetune_duc.py: cross-year fine-tuning of a 10% subnetwork (frozen entries bit-identical to the pre-trained
model), full fine-tuning with fraction 0, the sparse delta, the oracle targets, the test-year table and bad inputs."""

import json
import math
import time
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from modeling_qbert.sparse import SUBNETWORK_MASK_NAME, apply_sparse_delta, load_subnetwork_mask
from trainer_scripts import finetune_duc, finetuning, finetuning_data
from trainer_scripts.duc_evaluation import load_years
from wikiref_dataset.rouge import RougeConfig, RougeScorer

FAST = ["--use_cpu", "--max_steps", "3", "--per_device_train_batch_size", "4", "--disable_tqdm", "true",
        "--learning_rate", "1e-2", "--weight_decay", "0.1", "--max_grad_norm", "0.5", "--seed", "0"]


def _run(tmp_path, tiny_qbert_dir, duc_years, *extra):
    out = tmp_path / "finetuned"
    status = finetune_duc.main(["--model_name_or_path", str(tiny_qbert_dir), "--duc_dirs", duc_years[2005],
                                duc_years[2006], duc_years[2007], "--test_year", "2007", "--output_dir", str(out),
                                *FAST, *extra])
    return status, out


def test_subnetwork_finetuning_freezes_90_percent_bit_for_bit(tmp_path, tiny_qbert_dir, duc_years):
    status, out = _run(tmp_path, tiny_qbert_dir, duc_years, "--save_sparse_delta", "true")
    assert status == 0
    before = load_file(tiny_qbert_dir / "model.safetensors")
    after = load_file(out / "model.safetensors")
    masks, config = load_subnetwork_mask(out / SUBNETWORK_MASK_NAME)
    assert config.fraction == 0.1 and masks
    for name, mask in masks.items():
        assert name.startswith("bert.encoder.")
        frozen_before = before[name][~mask].view(torch.int32)
        assert torch.equal(after[name][~mask].view(torch.int32), frozen_before), name  # same bit patterns
        assert mask.float().mean().item() == pytest.approx(0.1, abs=0.02)
    changed = sum(int((after[name][mask] != before[name][mask]).sum()) for name, mask in masks.items())
    assert changed > 0.5 * sum(int(mask.sum()) for mask in masks.values())
    assert not torch.equal(after["classifier.weight"], before["classifier.weight"])  # the head is fully trainable

    # The sparse delta over the pre-trained model rebuilds the fine-tuned one exactly.
    from modeling_qbert import QBertForSentenceScoring

    rebuilt = apply_sparse_delta(QBertForSentenceScoring.from_pretrained(tiny_qbert_dir),
                                 out / "sparse_delta.safetensors")
    for name, tensor in rebuilt.state_dict().items():
        if name in after:
            assert torch.equal(tensor, after[name]), name

    results = json.loads((out / "results.json").read_text())
    finetuning = results["finetuning"]
    assert results["script"] == "finetune_duc"
    assert finetuning["train_years"] == [2005, 2006] and finetuning["test_year"] == 2007
    assert finetuning["subnetwork"]["fraction"] == 0.1
    assert finetuning["subnetwork"]["trainable_fraction"] == pytest.approx(0.1, abs=0.02)
    assert 0 < finetuning["subnetwork"]["changed_fraction"] <= finetuning["subnetwork"]["trainable_fraction"]
    assert finetuning["steps"] == 3 and math.isfinite(finetuning["train_loss"])
    assert finetuning["hyperparameters"]["weight_decay"] == 0.1
    assert finetuning["sparse_delta"]["bytes"] < finetuning["sparse_delta"]["dense_bytes"]
    assert results["pretraining"]["validation"]["rouge_2_f"] == 0.05  # carried over from the starting folder
    evaluation = results["evaluation"]
    assert "-l 250" in evaluation["settings"]
    assert list(evaluation["systems"]) == ["Q-BERT", "LEAD", "QUERY-SIM", "ORACLE"]
    scores = evaluation["systems"]["Q-BERT"]["2007"]
    assert scores["clusters"] == 1 and 0 <= scores["rouge_2_recall"] <= 1
    summaries = [json.loads(line) for line in (out / "summaries.jsonl").read_text().splitlines()]
    assert {line["system"] for line in summaries} == {"Q-BERT", "LEAD", "QUERY-SIM", "ORACLE"}


def test_fraction_zero_is_full_finetuning(tmp_path, tiny_qbert_dir, duc_years):
    status, out = _run(tmp_path, tiny_qbert_dir, duc_years, "--subnetwork_fraction", "0", "--baselines", "none")
    assert status == 0
    before, after = load_file(tiny_qbert_dir / "model.safetensors"), load_file(out / "model.safetensors")
    weight = "bert.encoder.layer.0.attention.self.query.weight"
    assert (after[weight] != before[weight]).float().mean() > 0.9
    assert not (out / SUBNETWORK_MASK_NAME).exists()
    results = json.loads((out / "results.json").read_text())
    subnetwork = results["finetuning"]["subnetwork"]
    assert subnetwork["fraction"] == 0.0 and subnetwork["method"] == "full"
    assert subnetwork["share"]["trainable_share"] == 1.0 and subnetwork["share"]["masked_tensors"] == 0
    assert f"All {subnetwork['share']['total_parameters']:,} parameters were fine-tuned" in (out / "README.md").read_text()
    assert list(results["evaluation"]["systems"]) == ["Q-BERT"]


def test_a_folder_holding_a_model_is_refused_unless_overwritten(tmp_path, tiny_qbert_dir, duc_years, caplog):
    """The same command twice: the second run stops at once, the model left as it was; with
    --overwrite_output_dir it trains, and the first run's subnetwork mask and sparse delta do not outlive it."""
    status, out = _run(tmp_path, tiny_qbert_dir, duc_years, "--save_sparse_delta", "true")
    assert status == 0 and (out / SUBNETWORK_MASK_NAME).is_file() and (out / "sparse_delta.safetensors").is_file()
    weights = (out / "model.safetensors").read_bytes()
    caplog.clear()
    started = time.perf_counter()
    assert _run(tmp_path, tiny_qbert_dir, duc_years, "--save_sparse_delta", "true")[0] == 2
    assert time.perf_counter() - started < 10  # refused before the model or the data load
    errors = [record.getMessage() for record in caplog.records if record.levelname == "ERROR"]
    assert errors == [f"--output_dir {out} already holds a trained model (config.json, model.safetensors, "
                      "results.json); pass --overwrite_output_dir true to replace it, or choose another folder"]
    assert (out / "model.safetensors").read_bytes() == weights
    status, _ = _run(tmp_path, tiny_qbert_dir, duc_years, "--subnetwork_fraction", "0", "--baselines", "none",
                     "--overwrite_output_dir", "true")
    assert status == 0 and (out / "model.safetensors").read_bytes() != weights
    assert not (out / SUBNETWORK_MASK_NAME).exists() and not (out / "sparse_delta.safetensors").exists()
    assert json.loads((out / "results.json").read_text())["finetuning"]["subnetwork"]["method"] == "full"


def test_targets_are_each_sentences_rouge2_recall(duc_years):
    year = load_years([duc_years[2006]])[0]
    rows = [row for row in year.rows if row["references"]]
    labelled = finetuning.label_clusters(year.rows, "oracle_score")
    assert len(labelled) == len(rows) >= 1
    scorer = RougeScorer(RougeConfig(max_n=2, skip_distance=None, word_limit=None, resamples=1))
    checked = 0
    for row, labelled_row in zip(rows, labelled):
        for document, labelled_document in zip(row["documents"], labelled_row["documents"]):
            assert "oracle_score" not in document  # the input rows are not modified
            for sentence, value in zip(document["sentences"], labelled_document["oracle_score"]):
                assert value == pytest.approx(scorer.score(sentence, row["references"])["rouge_2"].recall, abs=1e-5)
                checked += 1
    assert checked > 10
    assert any(value > 0 for d in labelled[0]["documents"] for value in d["oracle_score"])


def test_bad_inputs_exit_2_with_a_message(tmp_path, tiny_qbert_dir, tiny_bert_dir, duc_years, caplog):
    out = ["--output_dir", str(tmp_path / "out"), *FAST]
    years = ["--duc_dirs", duc_years[2005], duc_years[2006]]
    assert finetune_duc.main(["--model_name_or_path", str(tiny_qbert_dir), *years, "--test_year", "2007", *out]) == 2
    assert "--test_year 2007 is not among the given years [2005, 2006]" in caplog.text
    assert finetune_duc.main(["--model_name_or_path", str(tiny_qbert_dir), "--duc_dirs", duc_years[2005],
                              "--test_year", "2005", *out]) == 2
    assert "at least two converted DUC years" in caplog.text
    assert finetune_duc.main(["--model_name_or_path", str(tiny_qbert_dir), *years, "--folds", "2", "--fold", "2",
                              *out]) == 2
    assert "--fold must be one of 0 … 1 with --folds 2, got 2" in caplog.text
    assert finetune_duc.main(["--model_name_or_path", str(tiny_qbert_dir), *years, "--folds", "2", "--fold", "0",
                              "--test_year", "2006", *out]) == 2
    assert "give one of them" in caplog.text
    assert finetune_duc.main(["--model_name_or_path", str(tiny_qbert_dir), *years, "--test_year", "2006",
                              "--target_scaling", "rank", *out]) == 2
    assert "--target_scaling must be one of none, cluster_max, per_word, got 'rank'" in caplog.text
    assert finetune_duc.main(["--model_name_or_path", str(tiny_bert_dir), *years, "--test_year", "2006",
                              "--packing", "pages", *out]) == 2
    assert "--packing must be one of stride, sentences, got 'pages'" in caplog.text
    missing = ["--duc_dirs", str(tmp_path / "no-2005"), str(tmp_path / "no-2006")]  # bad options come first
    assert finetune_duc.main(["--model_name_or_path", str(tiny_qbert_dir), *missing, "--test_year", "2006",
                              "--subnetwork_fraction", "1.5", *out]) == 2
    assert "--subnetwork_fraction must lie in [0, 1]" in caplog.text
    assert finetune_duc.main(["--model_name_or_path", str(tmp_path / "no-model"), *missing, "--pooling", "foo",
                              *out]) == 2
    assert "--pooling must be one of" in caplog.text and "no-2005" not in caplog.text
    caplog.clear()
    assert finetune_duc.main(["--model_name_or_path", duc_years[2005], *years, "--test_year", "2006", *out]) == 2
    assert f"--model_name_or_path {duc_years[2005]}: not a model folder (no config.json); pass a saved Q-BERT " \
           "folder or a BERT-family encoder folder" in caplog.text and "masked-LM" not in caplog.text
    assert finetune_duc.main(["--model_name_or_path", str(tiny_qbert_dir), *years, "--test_year", "2006",
                              "--baselines", "lead", "random", *out]) == 2
    assert "unknown baseline(s) ['random']" in caplog.text
    assert finetune_duc.main(["--model_name_or_path", str(tiny_qbert_dir), "--duc_dirs", duc_years[2005],
                              str(tmp_path), "--test_year", "2005", *out]) == 2
    assert "not a converted DUC dataset" in caplog.text
    assert not (tmp_path / "out").exists()


@pytest.fixture
def regression_qbert_dir(tmp_path, tiny_qbert_dir):
    """The tiny Q-BERT as if pre-trained with regression (config and processor say so)."""
    import shutil

    folder = tmp_path / "regression-qbert"
    shutil.copytree(tiny_qbert_dir, folder)
    for name in ("config.json", "processor_config.json"):
        path = folder / name
        if path.is_file():
            settings = json.loads(path.read_text())
            settings["objective"] = "regression"
            path.write_text(json.dumps(settings))
    results = json.loads((folder / "results.json").read_text())
    results["objective"] = "regression"
    (folder / "results.json").write_text(json.dumps(results))
    return folder


def test_objective_follows_the_run_and_a_switch_can_be_refused(tmp_path, tiny_qbert_dir, regression_qbert_dir,
                                                               duc_years, caplog):
    """Regression pre-training -> regression fine-tuning (MSE on ROUGE-2 recall); a head pre-trained with
    classification is fine-tuned for the regression the run asks for (the paper's DUC training after either
    pre-training), which --switch_objective false refuses in one line; the card states what ran."""
    status, out = _run(tmp_path, regression_qbert_dir, duc_years, "--baselines", "none", "--target_scaling",
                       "cluster_max")
    assert status == 0
    results = json.loads((out / "results.json").read_text())
    assert results["objective"] == results["finetuning"]["objective"] == "regression"
    targets = "mean squared error against each sentence's ROUGE-2 recall, divided by the largest recall in its cluster"
    assert results["finetuning"]["targets"] == targets
    assert json.loads((out / "config.json").read_text())["objective"] == "regression"
    assert f"DUC fine-tuning: regression, {targets}" in (out / "README.md").read_text()

    caplog.clear()
    again = ["--overwrite_output_dir", "true"]  # the same folder again, as a user reruns
    assert _run(tmp_path, tiny_qbert_dir, duc_years, "--finetuning_objective", "regression", "--switch_objective",
                "false", *again)[0] == 2
    assert ("--finetuning_objective asks for regression, but " in caplog.text
            and "was pre-trained with classification and --switch_objective false keeps it" in caplog.text)
    assert _run(tmp_path, tiny_qbert_dir, duc_years, "--finetuning_objective", "ranking", *again)[0] == 2
    assert "--finetuning_objective must be one of ['classification', 'regression']" in caplog.text

    status, out = _run(tmp_path, tiny_qbert_dir, duc_years, "--finetuning_objective", "regression", "--baselines",
                       "none", *again)
    assert status == 0
    results = json.loads((out / "results.json").read_text())
    assert results["finetuning"]["objective"] == "regression"
    assert results["finetuning"]["pretraining_objective"] == results["pretraining"]["objective"] == "classification"
    card = (out / "README.md").read_text()
    assert "(switched from classification pre-training, as the paper fine-tunes on DUC after either)" in card
    assert "WikiRef pre-training: sentence classification" in card


def test_results_record_the_true_trainable_share(tmp_path, tiny_qbert_dir, duc_years):
    """The share of all parameters the subnetwork left trainable, recounted from the saved model and mask."""
    from modeling_qbert import QBertForSentenceScoring

    status, out = _run(tmp_path, tiny_qbert_dir, duc_years, "--baselines", "none")
    assert status == 0
    share = json.loads((out / "results.json").read_text())["finetuning"]["subnetwork"]["share"]
    masks, _ = load_subnetwork_mask(out / SUBNETWORK_MASK_NAME)
    model = QBertForSentenceScoring.from_pretrained(out)
    parameters = dict(model.named_parameters())
    trainable = sum(int(m.sum()) for m in masks.values()) + sum(p.numel() for n, p in parameters.items()
                                                                 if n not in masks)
    assert share["trainable_parameters"] == trainable
    assert share["total_parameters"] == sum(p.numel() for p in parameters.values())
    assert f"**{100 * share['trainable_share']:.2f}% of all parameters**" in (out / "README.md").read_text()


@pytest.fixture(scope="module")
def iterative_qbert_dir(tmp_path_factory, demo_wikiref, tiny_bert_dir):
    """A Q-BERT pre-trained on the demo WikiRef with iterative pruning whose schedule (scaled to the 4-step run: updates
    at steps 0-3) reaches its target of 30% of each encoder matrix."""
    from trainer_scripts import pretrain_wikiref

    out = tmp_path_factory.mktemp("iterative") / "qbert"
    assert pretrain_wikiref.main([
        "--dataset", str(demo_wikiref), "--model_name_or_path", str(tiny_bert_dir), "--output_dir", str(out),
        "--subnetwork_method", "iterative", "--subnetwork_fraction", "0.3", "--use_cpu", "--max_steps", "4",
        "--per_device_train_batch_size", "4", "--max_length", "128", "--disable_tqdm", "true",
        "--learning_rate", "1e-3", "--seed", "0"]) == 0
    return out


def test_iterative_subnetwork_from_pretraining_is_finetuned_as_saved(tmp_path, iterative_qbert_dir, duc_years):
    """Table IX's iterative path end to end: the mask found while pre-training (at its target density) is the one
    fine-tuning trains: the same mask, no new pruning, its frozen entries bit-identical to the pre-trained model."""
    from modeling_qbert.sparse import mask_density

    saved, saved_config = load_subnetwork_mask(iterative_qbert_dir / SUBNETWORK_MASK_NAME)
    assert saved_config.method == "iterative" and mask_density(saved) == pytest.approx(0.3, abs=0.01)
    pretrained_results = json.loads((iterative_qbert_dir / "results.json").read_text())
    assert pretrained_results["subnetwork"]["schedule"]["reached_target"] is True

    status, out = _run(tmp_path, iterative_qbert_dir, duc_years, "--subnetwork_method", "iterative",
                       "--baselines", "none")
    assert status == 0
    used, used_config = load_subnetwork_mask(out / SUBNETWORK_MASK_NAME)
    assert set(used) == set(saved) and all(torch.equal(used[name], saved[name]) for name in saved)
    assert used_config.fixed_mask and used_config.method == "iterative"
    before = load_file(iterative_qbert_dir / "model.safetensors")
    after = load_file(out / "model.safetensors")
    changed = 0
    for name, mask in saved.items():
        assert torch.equal(after[name][~mask].view(torch.int32), before[name][~mask].view(torch.int32)), name
        changed += int((after[name][mask] != before[name][mask]).sum())
    assert changed > 0.5 * sum(int(mask.sum()) for mask in saved.values())

    results = json.loads((out / "results.json").read_text())
    subnetwork = results["subnetwork"]
    assert subnetwork["method"] == "iterative" and subnetwork["fraction"] == 0.3
    assert subnetwork["final_density"] == pytest.approx(mask_density(saved))
    assert subnetwork["schedule"] == pretrained_results["subnetwork"]["schedule"]
    assert subnetwork["mask_file"] == SUBNETWORK_MASK_NAME and "pre-trained model" in subnetwork["source"]
    assert results["finetuning"]["subnetwork"]["method"] == "iterative"
    assert results["finetuning"]["subnetwork"]["trainable_fraction"] == pytest.approx(mask_density(saved))
    assert results["pretraining"]["subnetwork"]["final_density"] == pytest.approx(mask_density(saved))

    # Without --subnetwork_method the saved mask is used too; one_step asks for a new 10% mask instead.
    status, default = _run(tmp_path / "default", iterative_qbert_dir, duc_years, "--baselines", "none")
    assert status == 0
    again, _ = load_subnetwork_mask(default / SUBNETWORK_MASK_NAME)
    assert all(torch.equal(again[name], saved[name]) for name in saved)
    status, fresh = _run(tmp_path / "fresh", iterative_qbert_dir, duc_years, "--subnetwork_method", "one_step",
                         "--baselines", "none")
    assert status == 0
    new, new_config = load_subnetwork_mask(fresh / SUBNETWORK_MASK_NAME)
    assert new_config.method == "one_step" and mask_density(new) == pytest.approx(0.1, abs=0.02)


def test_iterative_without_a_saved_mask_and_bad_values_exit_2(tmp_path, tiny_qbert_dir, duc_years, caplog):
    for extra, message in (
        (["--subnetwork_method", "iterative"], f"has no {SUBNETWORK_MASK_NAME}: pre-train it with"),
        (["--subnetwork_method", "baz"], "--subnetwork_method must be one of one_step, iterative, got 'baz'"),
        (["--subnetwork_method", "iterative", "--subnetwork_fraction", "0"], "asks for full fine-tuning"),
        (["--objective", "bar"], "--objective must be one of classification, regression, got 'bar'"),
        (["--pooling", "foo"], "--pooling must be one of"),
        (["--attention_scope", "document"], "--attention_scope must be one of window, sentence, got 'document'"),
        (["--attention_scope", "sentence"], "--attention_scope sentence encodes each sentence alone and needs "
                                            "--packing sentences"),
        (["--query_similarity", "true", "--use_query", "false", "--pooling", "mean"],
         "--query_similarity compares each sentence with the query and needs --use_query true"),
    ):
        caplog.clear()
        status, out = _run(tmp_path, tiny_qbert_dir, duc_years, *extra)
        assert status == 2, extra
        errors = [record.getMessage() for record in caplog.records if record.levelname == "ERROR"]
        assert len(errors) == 1 and message in errors[0] and "\n" not in errors[0], (extra, errors)
        assert not out.exists()


def test_a_plain_encoder_gets_a_new_head_and_cluster_folds_test_held_out_clusters(tmp_path, tiny_bert_dir, duc_years):
    """The rows without data augmentation: a BERT encoder folder, a new Q-BERT head (regression, --pooling), full
    fine-tuning by default, the head at its own learning rate (30x where the recipe sets none); k-fold over the
    clusters of one year."""
    out = tmp_path / "from-encoder"
    recipe = tmp_path / "bare.yaml"  # a recipe that leaves the head's rate and the targets to the script's defaults
    recipe.write_text("description: the scripts' own defaults\n")
    status = finetune_duc.main(["--model_name_or_path", str(tiny_bert_dir), "--recipe", str(recipe),
                                "--duc_dirs", duc_years[2006],
                                "--folds", "2", "--fold", "1", "--objective", "regression", "--pooling", "mean",
                                "--packing", "sentences", "--max_train_documents", "2", "--attention_dropout", "0",
                                "--baselines", "query-sim", "--output_dir", str(out), *FAST])
    assert status == 0
    results = json.loads((out / "results.json").read_text())
    tuning = results["finetuning"]
    assert results["objective"] == "regression" and tuning["pretraining_objective"] is None
    assert results["pretraining"] is None
    assert tuning["subnetwork"]["method"] == "full"  # nothing pre-trained to identify a subnetwork in
    assert tuning["head_learning_rate"] == pytest.approx(1e-2 * finetuning.NEW_HEAD_LR_FACTOR)
    assert tuning["target_scaling"] == "cluster_max" and tuning["targets"].endswith("largest recall in its cluster")
    assert tuning["packing"] == "sentences" and tuning["max_train_documents"] == 2
    # Fixture DUC 2006 has clusters D0601A and D0602B: fold 1 of 2 tests D0602B, D0601A trains.
    assert tuning["folds"] == {"folds": 2, "fold": 1, "test_clusters": ["D0602B"]} and tuning["test_year"] is None
    assert tuning["clusters"] == 1 and tuning["documents"] == 2  # D0601A, 2 of its 3 documents
    scores = results["evaluation"]["systems"]
    assert set(scores) == {"Q-BERT", "QUERY-SIM"} and scores["Q-BERT"]["2006"]["clusters"] == 1
    config = json.loads((out / "config.json").read_text())
    assert config["model_type"] == "qbert" and config["pooling"] == "mean" and config["objective"] == "regression"
    assert config["attention_probs_dropout_prob"] == 0.0
    assert json.loads((out / "processor_config.json").read_text())["packing"] == "sentences"
    from trainer_scripts.model_card import model_variant
    from trainer_scripts.results import TrainingResults

    assert model_variant(TrainingResults.from_dict(results)) == "Q-BERT" and "+ DA" not in (out / "README.md").read_text()
    assert model_variant(TrainingResults.from_dict({**results, "finetuning": {**tuning, "pooling": "cls"}})) == "BERT"


def test_sentence_scope_and_query_similarity_train_save_and_load(tmp_path, tiny_bert_dir, duc_years):
    """The options for sentence-embedding encoders: trained, recorded in results.json and the card, saved in the
    configuration, and the saved folder scores as the trained model did (the pipeline reloads the options)."""
    out = tmp_path / "scoped"
    status = finetune_duc.main(["--model_name_or_path", str(tiny_bert_dir), "--duc_dirs", duc_years[2006],
                                "--folds", "2", "--fold", "1", "--objective", "regression", "--packing", "sentences",
                                "--attention_scope", "sentence", "--query_similarity", "true",
                                "--baselines", "none", "--output_dir", str(out), *FAST])
    assert status == 0
    tuning = json.loads((out / "results.json").read_text())["finetuning"]
    assert tuning["attention_scope"] == "sentence" and tuning["query_similarity"] is True
    config = json.loads((out / "config.json").read_text())
    assert config["attention_scope"] == "sentence" and config["query_similarity"] is True
    assert "each sentence encoded alone" in (out / "README.md").read_text()
    from trainer_scripts.duc_evaluation import load_model_pipeline

    summarize = load_model_pipeline(out)
    assert summarize.model.config.attention_scope == "sentence" and summarize.model.similarity_scale.item() != 1.0
    summary = {json.loads(line)["topic_id"]: json.loads(line)["summary"]
               for line in (out / "summaries.jsonl").read_text().splitlines()
               if json.loads(line)["system"] == "Q-BERT"}
    row = next(row for row in load_years([duc_years[2006]])[0].rows if row["topic_id"] in summary)
    output = summarize({"query": list(row["query"]), "documents": list(row["documents"])}, selection="duc")
    assert output["summary"] == summary[row["topic_id"]]


def test_split_folds_deals_clusters_round_robin_over_years(duc_years):
    train, test = finetuning_data.split_folds([duc_years[2005], duc_years[2006]], 2, 0)
    clusters = sorted((year.year, row["topic_id"]) for year in (*train, *test) for row in year.rows)
    tested = [(year.year, row["topic_id"]) for year in test for row in year.rows]
    assert tested == clusters[0::2] and len(clusters) == 4
    assert not {(year.year, row["topic_id"]) for year in train for row in year.rows} & set(tested)


def _unchecked(**values):
    """Options that passed `DucArguments.__post_init__`, then given ``values`` (what a helper's own caller may pass)."""
    arguments = finetuning.DucArguments(duc_dirs=["duc2006"], test_year=2006)
    for name, value in values.items():
        setattr(arguments, name, value)
    return arguments


@pytest.mark.parametrize("options, helper, message", [
    ({"max_train_documents": 0}, lambda tmp_path: finetuning.sample_documents([], 0, seed=0),
     "--max_train_documents must be at least 1, got 0"),
    ({"validation_clusters": -1}, lambda tmp_path: finetuning.split_validation([], -1, seed=0),
     "--validation_clusters must be 0 or more, got -1"),
    ({"query_format": "shuffled"}, lambda tmp_path: finetuning.format_queries([], "shuffled"),
     "--query_format must be one of levels, joined, narrative, title, got 'shuffled'"),
    ({"subnetwork_method": "baz"},
     lambda tmp_path: finetuning.choose_subnetwork(_unchecked(subnetwork_method="baz"), str(tmp_path)),
     "--subnetwork_method must be one of one_step, iterative, got 'baz'"),
    ({"test_year": None, "folds": 1, "fold": 0}, lambda tmp_path: finetuning_data.split_folds(["duc2006"], 1, 0),
     "--folds must be at least 2, got 1"),
    ({"test_year": None, "folds": 2, "fold": 2}, lambda tmp_path: finetuning_data.split_folds(["duc2006"], 2, 2),
     "--fold must be one of 0 … 1 with --folds 2, got 2"),
    ({"test_year": None, "folds": 2}, lambda tmp_path: finetuning_data.split_folds(["duc2006"], 2, None),
     "--fold must be one of 0 … 1 with --folds 2, got None"),
])
def test_an_option_is_refused_in_the_same_words_when_parsed_and_by_the_helper_that_uses_it(tmp_path, options,
                                                                                            helper, message):
    """Each check has one source: `DucArguments` refuses the value as the public helper does for its own callers."""
    with pytest.raises(finetuning.ScriptError) as parsed:
        finetuning.DucArguments(**{"duc_dirs": ["duc2006"], "test_year": 2006, **options})
    with pytest.raises(finetuning.ScriptError) as used:
        helper(tmp_path)
    assert str(parsed.value) == str(used.value) == message


def test_cluster_max_targets_keep_the_order_and_put_each_clusters_best_at_one(duc_years):
    year = load_years([duc_years[2006]])[0]
    raw = finetuning.label_clusters(year.rows, "oracle_score")
    scaled = finetuning.label_clusters(year.rows, "oracle_score", scaling="cluster_max")
    for raw_row, scaled_row in zip(raw, scaled):
        raw_values = [v for d in raw_row["documents"] for v in d["oracle_score"]]
        scaled_values = [v for d in scaled_row["documents"] for v in d["oracle_score"]]
        assert max(scaled_values) == 1.0 and max(raw_values) < 0.5
        assert scaled_values == pytest.approx([v / max(raw_values) for v in raw_values])
    per_word = finetuning.label_clusters(year.rows, "oracle_score", scaling="per_word")
    for raw_row, row in zip(raw, per_word):
        words = [max(1, len(s.split())) for d in row["documents"] for s in d["sentences"]]
        density = [v / n for v, n in zip([v for d in raw_row["documents"] for v in d["oracle_score"]], words)]
        assert [v for d in row["documents"] for v in d["oracle_score"]] == pytest.approx(
            [v / max(density) for v in density])


def test_sample_documents_is_reproducible_and_keeps_order(duc_years):
    rows = load_years([duc_years[2006]])[0].rows
    first = finetuning.sample_documents(rows, 2, seed=3)
    assert first == finetuning.sample_documents(rows, 2, seed=3)
    for row, sampled in zip(rows, first):
        docnos = [d["docno"] for d in row["documents"]]
        kept = [d["docno"] for d in sampled["documents"]]
        assert len(kept) == min(2, len(docnos)) and kept == [n for n in docnos if n in kept]
    assert finetuning.sample_documents(rows, None, seed=3) == list(rows)


def test_a_validation_share_chooses_the_epoch(tmp_path, tiny_bert_dir, duc_years, caplog):
    """--validation_clusters: those training clusters are held out, judged after every epoch with the DUC rule, and
    the best epoch's weights are the ones tested and saved; too many is refused in one line."""
    from modeling_qbert import QBertForSentenceScoring, QBertProcessor

    out = tmp_path / "chosen"
    argv = ["--model_name_or_path", str(tiny_bert_dir), "--duc_dirs", duc_years[2005], duc_years[2006],
            duc_years[2007], "--test_year", "2007", "--baselines", "none", "--use_cpu", "--disable_tqdm", "true",
            "--per_device_train_batch_size", "4", "--learning_rate", "5e-3", "--max_length", "128", "--seed", "0"]
    argv += ["--lr_scheduler_type", "constant"]  # epoch 1 of 3 is then the same as a run of 1 epoch
    assert finetune_duc.main([*argv, "--validation_clusters", "1", "--num_train_epochs", "3",
                              "--output_dir", str(out)]) == 0
    results = json.loads((out / "results.json").read_text())
    record = results["finetuning"]["epoch_selection"]
    by_epoch = record["rouge_2_recall_by_epoch"]
    assert len(by_epoch) == 3 and len(record["clusters"]) == 1
    assert record["chosen_epoch"] == 1 + by_epoch.index(max(by_epoch))
    trained = {row["topic_id"] for path in (duc_years[2005], duc_years[2006]) for row in load_years([path])[0].scorable}
    assert record["clusters"][0] in trained and results["finetuning"]["clusters"] == len(trained) - 1

    saved = finetuning.EpochSelection(QBertForSentenceScoring.from_pretrained(out), QBertProcessor.from_pretrained(out),
                                        [row for path in (duc_years[2005], duc_years[2006])
                                         for row in load_years([path])[0].scorable
                                         if row["topic_id"] in record["clusters"]], batch_size=8)
    assert saved.rouge_2() == pytest.approx(by_epoch[record["chosen_epoch"] - 1])  # the saved model is the chosen one
    if record["chosen_epoch"] == 1:  # the fixture's one validation cluster scores alike after every epoch: a tie
        one = tmp_path / "one-epoch"
        assert finetune_duc.main([*argv, "--validation_clusters", "1", "--num_train_epochs", "1",
                                  "--output_dir", str(one)]) == 0
        kept, first = load_file(out / "model.safetensors"), load_file(one / "model.safetensors")
        assert all(torch.allclose(kept[name], first[name]) for name in first)  # epoch 1's weights, not epoch 3's

    caplog.clear()
    assert finetune_duc.main([*argv, "--validation_clusters", "99", "--output_dir", str(tmp_path / "x")]) == 2
    assert "--validation_clusters 99: only" in caplog.text and "none would be left to train on" in caplog.text


# ---- other benchmarks (--qfs_dir) --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def qmsum_converted(tmp_path_factory):
    """The QMSum release fixture (two meetings in the published layout) converted: train and validation."""
    from wikiref_dataset.qfs import convert_benchmark

    out = tmp_path_factory.mktemp("qmsum") / "converted"
    convert_benchmark("qmsum", Path(__file__).resolve().parents[1] / "fixtures" / "qfs" / "qmsum", out)
    return out


def test_span_labels_mark_the_annotated_sentences(qmsum_converted):
    from wikiref_dataset.qfs import read_converted

    rows = read_converted(qmsum_converted, "train")
    labelled = finetuning.span_labels(rows, "oracle_label")
    assert [row["topic_id"] for row in labelled] == ["ES2099a/specific-0", "ES2099a/specific-1"]  # no general query
    for row in labelled:
        labels = row["documents"][0]["oracle_label"]
        assert [i for i, value in enumerate(labels) if value == 1.0] == row["answer_sentences"]
        assert set(labels) == {0.0, 1.0}
    with pytest.raises(finetuning.ScriptError, match="has no answer spans"):
        finetuning.span_labels([{"benchmark": "squality", "documents": []}], "oracle_label")


@pytest.mark.parametrize("labels", ["oracle", "spans"])
def test_finetuning_on_a_converted_benchmark_scores_it_as_its_papers_do(tmp_path, tiny_qbert_dir, qmsum_converted,
                                                                        labels):
    out = tmp_path / "qmsum-model"
    status = finetune_duc.main(["--model_name_or_path", str(tiny_qbert_dir), "--qfs_dir", str(qmsum_converted),
                                "--qfs_labels", labels, "--baselines", "query-sim", "--output_dir", str(out), *FAST,
                                *(["--preprocessing_num_workers", "2", "--packing", "sentences"] if labels == "spans"
                                  else [])])
    assert status == 0
    results = json.loads((out / "results.json").read_text())
    assert results["evaluation"] is None and results["finetuning"]["train_years"] == []
    benchmark = results["finetuning"]["benchmark"]
    assert benchmark["benchmark"] == "qmsum" and benchmark["labels"] == labels and benchmark["test_queries"] == 2
    assert results["finetuning"]["clusters"] == (3 if labels == "oracle" else 2)  # spans: the specific queries
    systems = results["benchmark_evaluation"]["systems"]
    assert list(systems) == ["Q-BERT", "QUERY-SIM"]
    assert 0 < systems["Q-BERT"]["qmsum/validation"]["rouge_1_f"] <= 1
    assert results["benchmark_evaluation"]["settings"].startswith("ROUGE-1.5.5 -c 95 -r 1000 -n 2 -m -a, F1")
    summaries = [json.loads(line) for line in (out / "summaries.jsonl").read_text().splitlines()]
    assert {item["topic_id"] for item in summaries} == {"Bxx001/general-0", "Bxx001/specific-0"}
    card = (out / "README.md").read_text()  # the card reports the benchmark, not DUC
    assert "### Fine-tuning on QMSum" in card and "QMSum's `train` split (3 queries" in card
    assert "### QMSum (validation split)" in card and "ROUGE-1 F1" in card and "DUC: not evaluated." in card
    model_row = next(line for line in card.splitlines() if "(this model)" in line)
    assert f"**{100 * systems['Q-BERT']['qmsum/validation']['rouge_1_f']:.2f} [" in model_row
    assert "word budget (general queries: 110 words; specific queries: 65 words)" in card
    assert "name: QMSum\n      type: qmsum\n      split: validation" in card  # model-index
    steps = results["finetuning"]["steps"]  # how it trained, as a DUC run's card says it
    assert f"- Steps: {steps} of " in card and "| learning rate |" in card
    assert "Only a sparse subnetwork was trained" in card  # from a Q-BERT folder: the default subnetwork
    assert "QMSum's `train` split (meeting transcripts" in card and "news clusters" not in card


def test_benchmark_runs_refuse_duc_options_and_bad_values(tmp_path, tiny_qbert_dir, qmsum_converted, duc_years,
                                                         caplog):
    out = ["--output_dir", str(tmp_path / "out"), *FAST]
    base = ["--model_name_or_path", str(tiny_qbert_dir), "--qfs_dir", str(qmsum_converted)]
    cases = [(["--duc_dirs", duc_years[2005]], "--duc_dirs belong to DUC runs"),
             (["--qfs_labels", "gold"], "--qfs_labels must be one of oracle, spans"),
             (["--qfs_train_split", "validation"], "are both 'validation'"),
             (["--qfs_test_split", "test"], "no split 'test'; it has train, validation"),
             (["--validation_clusters", "1"], "--validation_clusters chooses the epoch with DUC's metric"),
             (["--preprocessing_num_workers", "0"], "--preprocessing_num_workers must be at least 1, got 0"),
             (["--extra_train_dirs", f"{qmsum_converted}:validation"],
              f"--extra_train_dirs {qmsum_converted}:validation is the split this run tests on"),
             (["--extra_train_dirs", str(qmsum_converted), "--qfs_labels", "spans"],
              "--qfs_labels spans would train two kinds of target at once"),
             (["--extra_train_dirs", f"{qmsum_converted}:test"], "no split 'test'"),
             (["--query_format", "joined"], "--query_format changes how a DUC topic is given")]
    for extra, message in cases:
        caplog.clear()
        assert finetune_duc.main([*base, *extra, *out]) == 2, extra
        assert message in caplog.text, (extra, caplog.text[-500:])


def test_extra_training_data_beside_a_converted_benchmark(tmp_path, tiny_qbert_dir, qmsum_converted):
    """--qfs_dir with --extra_train_dirs (a pre-training stage on several benchmarks): the extra split's queries train
    beside the benchmark's own and are counted in the record; DIR:SPLIT picks a split other than train."""
    assert finetuning.extra_split("qfs/debatepedia:validation") == ("qfs/debatepedia", "validation")
    assert finetuning.extra_split("qfs/squality") == ("qfs/squality", "train")
    assert finetuning.extra_split("runs/a:b/c") == ("runs/a:b/c", "train")  # a colon inside a path is no split
    out = tmp_path / "stage"
    assert finetune_duc.main(["--model_name_or_path", str(tiny_qbert_dir), "--qfs_dir", str(qmsum_converted),
                              "--extra_train_dirs", f"{qmsum_converted}:train", "--baselines", "none",
                              "--output_dir", str(out), *FAST]) == 0
    tuning = json.loads((out / "results.json").read_text())["finetuning"]
    assert tuning["extra_train_queries"] == 3 and tuning["clusters"] == 6
    assert tuning["extra_train_dirs"] == [f"{qmsum_converted}:train"]
    card = (out / "README.md").read_text()  # a folder by its own name: a path of this machine means nothing there
    assert f"3 queries of other converted benchmarks beside them (`{qmsum_converted.name}:train`" in card
    assert str(qmsum_converted) not in card


def test_the_levers_train_save_and_load(tmp_path, tiny_bert_dir, duc_years, qmsum_converted):
    """The position bias, the ILP rule, the joined query and extra training data from another benchmark: trained,
    recorded, saved in the configuration; the saved folder summarizes a test cluster as the run did (its rule and
    its position bias reloaded), and its position bias learned something."""
    out = tmp_path / "levers"
    status = finetune_duc.main(["--model_name_or_path", str(tiny_bert_dir), "--duc_dirs", duc_years[2006],
                                "--folds", "2", "--fold", "1", "--objective", "regression", "--packing", "sentences",
                                "--attention_scope", "sentence", "--query_similarity", "true",
                                "--sentence_position_buckets", "4", "--selection", "ilp", "--query_format", "joined",
                                "--extra_train_dirs", str(qmsum_converted), "--baselines", "query-sim",
                                "--output_dir", str(out), *FAST])
    assert status == 0
    results = json.loads((out / "results.json").read_text())
    tuning = results["finetuning"]
    # the same rule for every system: QUERY-SIM under ILP is a row of its own, the model under the greedy rule an
    # ablation chosen from the sentence scores the run saved
    evaluation = results["evaluation"]
    assert list(evaluation["systems"]) == ["Q-BERT", "Q-BERT (greedy)", "QUERY-SIM", "QUERY-SIM (ILP)"]
    assert evaluation["rules"] == {"Q-BERT": "ilp", "Q-BERT (greedy)": "duc", "QUERY-SIM": "duc",
                                   "QUERY-SIM (ILP)": "ilp"}
    written = {}
    for line in (out / "summaries.jsonl").read_text().splitlines():
        record = json.loads(line)
        written.setdefault(record["system"], {})[record["topic_id"]] = record["summary"]
    from trainer_scripts.duc_evaluation import baseline_summaries, summaries_from_scores

    scores = {record["topic_id"]: record["scores"]
              for record in map(json.loads, (out / "sentence_scores.jsonl").read_text().splitlines())}
    tested = [row for row in load_years([duc_years[2006]])[0].rows if row["topic_id"] in scores]
    assert written["Q-BERT (greedy)"] == summaries_from_scores(tested, scores, "duc")
    assert written["QUERY-SIM (ILP)"] == baseline_summaries("query-sim", finetuning.format_queries(tested, "joined"),
                                                            rule="ilp")
    card = (out / "README.md").read_text()
    assert "QUERY-SIM under the same rule (ILP)" in card.split("## How to use")[0]
    assert "| QUERY-SIM (ILP) | ILP |" in card
    assert tuning["sentence_position_buckets"] == 4 and tuning["selection"] == "ilp"
    assert tuning["query_format"] == "joined" and tuning["extra_train_queries"] > 0
    assert tuning["clusters"] == tuning["extra_train_queries"] + 1  # one DUC cluster of the two trains, plus QMSum's
    config = json.loads((out / "config.json").read_text())
    assert config["sentence_position_buckets"] == 4 and config["cluster_selection"] == "ilp"
    assert "bigram concept coverage" in (out / "README.md").read_text()
    from trainer_scripts.duc_evaluation import load_model_pipeline

    summarize = load_model_pipeline(out)
    assert summarize.processor.sentence_positions and summarize.model.position_bias.weight.abs().sum() > 0
    saved = {json.loads(line)["topic_id"]: json.loads(line)["summary"]
             for line in (out / "summaries.jsonl").read_text().splitlines() if json.loads(line)["system"] == "Q-BERT"}
    row = next(row for row in load_years([duc_years[2006]])[0].rows if row["topic_id"] in saved)
    output = summarize({"query": [" ".join(row["query"])], "documents": list(row["documents"])})  # rule: the config's
    assert output["selection"] == "ilp" and output["summary"] == saved[row["topic_id"]]


def test_query_formats_and_bad_lever_values(tmp_path, tiny_qbert_dir, duc_years, qmsum_converted, caplog):
    rows = [{"topic_id": "D1", "query": ["Title", "First sentence.", "Second one."]}]
    assert finetuning.format_queries(rows, "levels")[0]["query"] == ["Title", "First sentence.", "Second one."]
    assert finetuning.format_queries(rows, "joined")[0]["query"] == ["Title First sentence. Second one."]
    assert finetuning.format_queries(rows, "narrative")[0]["query"] == ["First sentence. Second one."]
    assert finetuning.format_queries(rows, "title")[0]["query"] == ["Title"]
    for extra, message in ((["--query_format", "shuffled"], "--query_format must be one of"),
                           (["--selection", "best"], "--selection must be one of duc, mmr, ilp"),
                           (["--extra_train_dirs", str(tmp_path)], "--extra_train_dirs:")):
        caplog.clear()
        status, _ = _run(tmp_path, tiny_qbert_dir, duc_years, *extra)
        assert status == 2
        assert message in caplog.text


def test_a_frozen_prefix_is_refused_where_it_would_not_be_exact(tmp_path, tiny_bert_dir, duc_years, caplog):
    """--frozen_prefix_layers needs each sentence encoded alone, no subnetwork, and at most the encoder's layers: each
    refusal is one line, exit 2, before anything is trained."""
    common = ["--model_name_or_path", str(tiny_bert_dir), "--duc_dirs", duc_years[2006], "--folds", "2", "--fold", "0",
              "--baselines", "none", "--output_dir", str(tmp_path / "out"), *FAST]
    scoped = ["--packing", "sentences", "--attention_scope", "sentence"]
    assert finetune_duc.main([*common, "--frozen_prefix_layers", "1"]) == 2
    assert "--frozen_prefix_layers 1 needs each sentence encoded alone (--attention_scope sentence)" in caplog.text
    assert finetune_duc.main([*common, *scoped, "--frozen_prefix_layers", "3"]) == 2
    assert "--frozen_prefix_layers 3: the encoder has 2 layers" in caplog.text
    assert finetune_duc.main([*common, *scoped, "--frozen_prefix_layers", "1", "--subnetwork_fraction", "0.1"]) == 2
    assert "is not combined with a subnetwork (--subnetwork_fraction 0.1)" in caplog.text
    assert finetune_duc.main([*common, *scoped, "--frozen_prefix_layers", "-1"]) == 2
    assert "--frozen_prefix_layers must be 0 or more, got -1" in caplog.text
    assert not (tmp_path / "out" / "results.json").exists()


def test_a_frozen_prefix_trains_on_a_converted_benchmark(tmp_path, tiny_bert_dir, qmsum_converted, monkeypatch):
    """--qfs_dir with --frozen_prefix_layers: the meetings' parts are cached (in $WIKIREF_PREFIX_CACHE), the encoder's
    first layer and embeddings stay as they were, the record and the card name K."""
    monkeypatch.setenv("WIKIREF_PREFIX_CACHE", str(tmp_path / "prefix"))
    out = tmp_path / "qmsum-k1"
    assert finetune_duc.main(["--model_name_or_path", str(tiny_bert_dir), "--qfs_dir", str(qmsum_converted),
                              "--objective", "regression", "--packing", "sentences", "--attention_scope", "sentence",
                              "--frozen_prefix_layers", "1", "--baselines", "query-sim", "--output_dir", str(out),
                              *FAST]) == 0
    results = json.loads((out / "results.json").read_text())
    assert results["finetuning"]["frozen_prefix_layers"] == 1
    assert "Q-BERT" in results["benchmark_evaluation"]["systems"]
    assert "`--frozen_prefix_layers 1`" in (out / "README.md").read_text()
    saved, start = load_file(out / "model.safetensors"), load_file(Path(tiny_bert_dir) / "model.safetensors")
    assert torch.equal(saved["bert.encoder.layer.0.output.dense.weight"], start["encoder.layer.0.output.dense.weight"])
    assert not torch.equal(saved["bert.encoder.layer.1.output.dense.weight"],
                           start["encoder.layer.1.output.dense.weight"])
    assert len(list((tmp_path / "prefix").iterdir())) == 1
