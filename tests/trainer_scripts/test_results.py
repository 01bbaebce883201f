"""The typed results (`trainer_scripts.results`): every record round-trips, every saved results.json of the repository
loads and is written back byte for byte, and the model card rendered from an old results.json is unchanged."""

import copy
import json
from pathlib import Path

import pytest

from trainer_scripts.results import (
    EvaluationResults,
    EvaluationUnitResults,
    FinetuningSubnetwork,
    ResultsError,
    SystemScores,
    TrainingResults,
    results_from_dict,
    results_json,
)

ROOT = Path(__file__).resolve().parents[2]
SAVED = sorted((ROOT / "benchmarks" / "grids").rglob("results.json"))
OLD_RUN = ROOT / "benchmarks/grids/duc2006-5fold-sentence-encoder/units/finetune-fold4of5-seed44/results.json"
OLD_CARD = ROOT / "tests/fixtures/model_card/finetune-fold4of5-seed44.README.md"


def test_there_are_saved_results_to_check():
    assert len(SAVED) >= 10 and OLD_RUN in SAVED


@pytest.mark.parametrize("path", SAVED, ids=lambda path: path.parent.name)
def test_every_saved_results_file_loads_and_is_written_back_byte_for_byte(path):
    text = path.read_text(encoding="utf-8")
    record = results_from_dict(json.loads(text), str(path))
    assert isinstance(record, EvaluationUnitResults if '"script": "evaluate_duc"' in text else TrainingResults)
    assert results_json(record) == text
    assert type(record).from_dict(record.to_dict()) == record


def test_a_record_built_in_code_round_trips():
    from test_model_card import FULL, PRETRAIN_DEMO

    for data in (FULL, PRETRAIN_DEMO):
        record = TrainingResults.from_dict(copy.deepcopy(data))
        assert record.to_dict() == data and list(record.to_dict()) == list(data)
        assert TrainingResults.from_dict(record.to_dict()) == record
    subnetwork = FinetuningSubnetwork.full(None)
    assert subnetwork.to_dict() == {"fraction": 0.0, "method": "full", "share": None}
    assert FinetuningSubnetwork.from_dict(subnetwork.to_dict()) == subnetwork
    pretraining_run = TrainingResults.for_pretraining(script="pretrain_wikiref", objective="regression")
    assert "benchmark_evaluation" not in pretraining_run.to_dict()
    assert TrainingResults.from_dict(pretraining_run.to_dict()) == pretraining_run


def test_older_and_newer_keys_are_kept_where_they_were():
    """A key an older version did not write stays out; a key this version does not know is kept, in its place."""
    data = json.loads(OLD_RUN.read_text(encoding="utf-8"))
    assert "selection" not in data["finetuning"]
    record = TrainingResults.from_dict(data)
    assert not record.finetuning.recorded("selection") and record.finetuning.selection is None
    data["finetuning"] = {"future_key": 1, **data["finetuning"]}
    assert list(TrainingResults.from_dict(data).to_dict()["finetuning"])[0] == "future_key"


def test_scores_read_as_intervals():
    evaluation = TrainingResults.from_dict(json.loads(OLD_RUN.read_text(encoding="utf-8"))).evaluation
    scores = evaluation.scores("Q-BERT", 2006)
    assert isinstance(scores, SystemScores) and scores.count == 10 and scores.count_name == "clusters"
    interval = scores.interval("rouge_1")
    assert interval.value == scores["rouge_1_recall"] and interval.low < interval.value < interval.high
    assert scores.interval("rouge_9") is None and evaluation.scores("nobody", 2006) is None


@pytest.mark.parametrize("bad, message", [
    ([], "results: expected an object, got list"),
    ({"pretraining": "yes"}, "results.pretraining: expected an object, got str"),
    ({"evaluation": {"datasets": {}}}, "results.evaluation: no 'systems'"),
    ({"finetuning": {"subnetwork": {"share": 3}}}, "results.finetuning.subnetwork.share: expected an object"),
])
def test_a_malformed_record_is_named_by_its_path(bad, message):
    with pytest.raises(ResultsError, match=message.replace(".", r"\.").replace("(", r"\(")):
        TrainingResults.from_dict(bad, "results")


def test_an_evaluation_of_another_benchmark_keeps_its_source_and_queries():
    data = {"settings": "s", "source": "the QMSum paper", "scale": "0-1 (the printed table shows x100)",
            "datasets": {"qmsum/validation": {"path": "qfs/qmsum", "queries": 2, "budgets": {"": 65}}},
            "systems": {"LEAD": {"qmsum/validation": {"queries": 2, "rouge_1_f": 0.3}}}}
    record = EvaluationResults.from_dict(data)
    assert record.to_dict() == data and record.scores("LEAD", "qmsum/validation").count_name == "queries"


def test_the_rules_of_an_evaluation_round_trip_and_are_left_out_when_absent():
    """``rules`` (the rule each system was chosen with) is written only when recorded: an evaluation written before
    it reads and writes back without it."""
    data = {"settings": "s", "scale": "0-1", "datasets": {}, "systems": {"QUERY-SIM (ILP)": {"2006": None}},
            "rules": {"QUERY-SIM (ILP)": "ilp"}}
    record = EvaluationResults.from_dict(data)
    assert record.to_dict() == data and record.rule("QUERY-SIM (ILP)") == "ilp" and record.rule("LEAD") is None
    old = {key: value for key, value in data.items() if key != "rules"}
    record = EvaluationResults.from_dict(old)
    assert record.rules is None and record.rule("QUERY-SIM (ILP)") is None and record.to_dict() == old
    with pytest.raises(ResultsError, match=r"^evaluation\.rules\.LEAD: expected a rule name, got int$"):
        EvaluationResults.from_dict({**data, "rules": {"LEAD": 1}}, "evaluation")
    with pytest.raises(ResultsError, match=r"^evaluation\.rules: expected an object, got list$"):
        EvaluationResults.from_dict({**data, "rules": ["ilp"]}, "evaluation")


def test_the_card_of_an_old_results_file_is_unchanged():
    """The card rendered from a results.json written before the typed results and the recorded rules is the one
    rendered then, with the headline added (the test clusters' scores; no QUERY-SIM in the run to compare with), the
    encoder named by its Hub id instead of the folder it was read from, and the install line naming the extras."""
    from trainer_scripts.model_card import load_results, render_model_card

    card = render_model_card(load_results(OLD_RUN), model_repo="org/x", metric_repo="org/m")
    assert card == OLD_CARD.read_text(encoding="utf-8")
