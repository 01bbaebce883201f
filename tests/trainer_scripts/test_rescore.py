"""`wikiref rescore`: summaries chosen again from saved sentence scores (units of a run, grouped by their command,
folds pooled per seed), the rules' and mixes' rows, the seeds' averaged scores, a fold missing, bad input as one line;
and, beside the real data, that the paper's rule on a saved real grid gives back the saved summaries and scores."""

import gzip
import json
import os
import random
from pathlib import Path

import pytest

from trainer_scripts.cli import main as wikiref
from trainer_scripts.duc_evaluation import evaluate_systems, load_years
from trainer_scripts.experiments.rescore import Mix, Rule, read_units, rescore, to_markdown
from wikiref_dataset.selection import ClusterSentences

GRID = Path(__file__).resolve().parents[2] / "benchmarks" / "grids" / "duc2006-5fold-sentence-encoder"
REAL_DUC = Path(__file__).resolve().parents[3] / "shared" / "realdata" / "duc" / "2006"


def _write_units(root: Path, duc_dir: str, seeds=(1, 2), folds=2, skip=()) -> dict:
    """Units as `wikiref experiments` leaves them: unit.json with the command, sentence_scores.jsonl of the fold's
    clusters (random scores, one per sentence). Returns {seed: {topic: flat scores}}."""
    (year,) = load_years([duc_dir])
    topics = sorted(row["topic_id"] for row in year.scorable)
    rows = {row["topic_id"]: row for row in year.scorable}
    written: dict = {}
    for seed in seeds:
        rng = random.Random(seed)
        for fold in range(folds):
            if (seed, fold) in skip:
                continue
            folder = root / "units" / f"finetune-fold{fold}of{folds}-seed{seed}-0123456789abcdef"
            folder.mkdir(parents=True)
            argv = ["--model_name_or_path", "encoder", "--duc_dirs", duc_dir, "--folds", str(folds), "--fold",
                    str(fold), "--seed", str(seed), "--output_dir", str(folder)]
            (folder / "unit.json").write_text(json.dumps({"kind": "finetune", "argv": argv}))
            with open(folder / "sentence_scores.jsonl", "w") as handle:
                for topic in topics[fold::folds]:
                    scores = [[rng.random() for _ in document["sentences"]] for document in rows[topic]["documents"]]
                    written.setdefault(seed, {})[topic] = [value for document in scores for value in document]
                    handle.write(json.dumps({"topic_id": topic, "scores": scores}) + "\n")
    baselines = root / "units" / "baselines-2006-0123456789abcdef"
    baselines.mkdir()
    (baselines / "unit.json").write_text(json.dumps({"kind": "baselines", "argv": ["--dataset", duc_dir]}))
    return written


def _direct(duc_dir, scores, rule="duc"):
    """ROUGE of the summaries chosen from ``scores`` without the command: what the table must say."""
    years = load_years([duc_dir])
    summaries = {}
    for row in years[0].scorable:
        cluster = ClusterSentences.from_row(row)
        summaries[row["topic_id"]] = cluster.summary(cluster.select(scores[row["topic_id"]], rule=rule))
    return evaluate_systems(years, {"x": summaries}).to_dict()["systems"]["x"]["2006"]


def test_rules_mixes_and_averaged_seeds_of_a_run(tmp_path, capsys, duc_years):
    written = _write_units(tmp_path / "run", duc_years[2006])
    status = wikiref(["rescore", str(tmp_path / "run"), "--duc_dirs", duc_years[2006], "--selection", "duc", "ilp",
                      "--mix", "none", "position:0.5", "--average_seeds", "--out", str(tmp_path / "out"), "-q"])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    result = json.loads((tmp_path / "out" / "rescore.json").read_text())
    assert (tmp_path / "out" / "rescore.md").read_text() == captured.out
    (group,) = result["groups"]
    assert group["seeds"] == {"1": [0, 1], "2": [0, 1]} and group["missing"] == []
    assert len(group["units"]) == 4  # the baselines unit is not a fine-tuning unit
    labels = [(row["system"], row["rule"], row["mix"], row["average"]) for row in group["rows"]]
    assert labels == [("Q-BERT", "duc", "none", False), ("Q-BERT", "duc", "none", True),
                      ("Q-BERT", "duc", "position:0.5", False), ("Q-BERT", "duc", "position:0.5", True),
                      ("QUERY-SIM", "duc", "-", False), ("LEAD", "duc", "-", False),
                      ("Q-BERT", "ilp", "none", False), ("Q-BERT", "ilp", "none", True),
                      ("Q-BERT", "ilp", "position:0.5", False), ("Q-BERT", "ilp", "position:0.5", True),
                      ("QUERY-SIM (ILP)", "ilp", "-", False), ("LEAD (ILP)", "ilp", "-", False)]
    plain = group["rows"][0]["years"]["2006"]
    assert plain["runs"] == 2
    expected = [_direct(duc_years[2006], written[seed])["rouge_2_recall"] for seed in (1, 2)]
    assert plain["rouge_2"]["values"] == pytest.approx(expected)
    averaged = {topic: [(a + b) / 2 for a, b in zip(written[1][topic], written[2][topic])] for topic in written[1]}
    assert group["rows"][1]["years"]["2006"]["rouge_2"]["mean"] == pytest.approx(
        _direct(duc_years[2006], averaged)["rouge_2_recall"])
    ilp = group["rows"][6]["years"]["2006"]["rouge_2"]["values"]
    assert ilp == pytest.approx([_direct(duc_years[2006], written[seed], "ilp")["rouge_2_recall"] for seed in (1, 2)])
    assert "| Q-BERT | ilp | position:0.5 | averaged |" in captured.out and "| Q-BERT | duc | none | 2 |" in captured.out
    assert "| QUERY-SIM (ILP) | ilp | - | - |" in captured.out


def test_the_baselines_stand_under_each_rule_with_its_settings(tmp_path, capsys, duc_years, monkeypatch):
    """Under each rule, QUERY-SIM and LEAD chosen by that rule with the same settings (the rule's own function is
    watched: on the tiny fixture clusters every rule takes every sentence); --baselines none leaves them out."""
    from wikiref_dataset import selection
    from wikiref_dataset.baselines import baseline_summary

    _write_units(tmp_path / "run", duc_years[2006], seeds=(1,))
    select_ilp = selection.select_ilp
    calls = []

    def watched(sentences, scores, max_words=250, **settings):
        calls.append(settings)
        return select_ilp(sentences, scores, max_words=max_words, **settings)

    monkeypatch.setattr(selection, "select_ilp", watched)
    result = rescore([tmp_path / "run"], [duc_years[2006]], [Rule("duc"), Rule("ilp", {"candidates": 5})], [Mix()],
                     baselines=["query-sim"])
    rows = {(row["system"], row["rule"]): row for row in result["groups"][0]["rows"]}
    assert list(rows) == [("Q-BERT", "duc"), ("QUERY-SIM", "duc"), ("Q-BERT", "ilp"), ("QUERY-SIM (ILP)", "ilp")]
    assert rows[("QUERY-SIM (ILP)", "ilp")]["settings"] == {"candidates": 5}
    assert len(calls) == 4 and all(settings == {"candidates": 5} for settings in calls)  # Q-BERT's 2, QUERY-SIM's 2
    years = load_years([duc_years[2006]])
    summaries = {row["topic_id"]: baseline_summary("query-sim", row, rule="ilp", candidates=5)
                 for row in years[0].scorable}
    expected = evaluate_systems(years, {"x": summaries}).to_dict()["systems"]["x"]["2006"]
    got = rows[("QUERY-SIM (ILP)", "ilp")]["years"]["2006"]
    assert got["runs"] == 1 and got["rouge_2"]["mean"] == expected["rouge_2_recall"]
    assert "| QUERY-SIM (ILP) | ilp candidates=5 | - | - |" in to_markdown(result)
    assert wikiref(["rescore", str(tmp_path / "run"), "--duc_dirs", duc_years[2006], "--selection", "ilp",
                    "--baselines", "none", "-q"]) == 0
    printed = capsys.readouterr().out
    assert "| Q-BERT | ilp |" in printed and "| QUERY-SIM" not in printed and "| LEAD" not in printed
    assert wikiref(["rescore", str(tmp_path / "run"), "--duc_dirs", duc_years[2006], "--baselines", "oracle"]) == 2
    assert capsys.readouterr().err.strip() == ("wikiref rescore: error: --baselines: unknown 'oracle': choose from "
                                               "query-sim, lead, or none")


def test_the_ilp_settings_reach_the_rule_from_the_command_line(tmp_path, capsys, duc_years, monkeypatch):
    """--unigram_weight, --document_weight and --sentence_weight go to the ILP rule (and its baselines), not to the
    others, and name the row."""
    import wikiref_dataset.selection as selection

    _write_units(tmp_path / "run", duc_years[2006], seeds=(1,))
    calls = []
    real = selection.select_ilp
    monkeypatch.setattr(selection, "select_ilp", lambda *a, **k: calls.append(k) or real(*a, **k))
    assert wikiref(["rescore", str(tmp_path / "run"), "--duc_dirs", duc_years[2006], "--selection", "duc", "ilp",
                    "--unigram_weight", "0.5", "--document_weight", "0.2", "--sentence_weight", "1"]) == 0
    assert calls and all(call["unigram_weight"] == 0.5 and call["document_weight"] == 0.2
                         and call["sentence_weight"] == 1.0 and call["documents"] is not None for call in calls)
    printed = capsys.readouterr().out
    assert "| ilp document_weight=0.2 sentence_weight=1 unigram_weight=0.5 |" in printed


def test_no_empty_table_for_the_wrong_duc_year_or_a_lone_fold(tmp_path, capsys, duc_years):
    """Units scored on DUC 2006 rescored against DUC 2007 (none of their clusters is there), or one fold of a seed
    alone (no year complete): one line, exit 2, never a table without scores."""
    _write_units(tmp_path / "run", duc_years[2006], seeds=(1,))
    assert wikiref(["rescore", str(tmp_path / "run"), "--duc_dirs", duc_years[2007], "--selection", "duc"]) == 2
    captured = capsys.readouterr()
    assert "| Q-BERT" not in captured.out
    err = captured.err.strip().splitlines()[-1]
    assert err.startswith("wikiref rescore: error: 2 units (") and "none of the 2 clusters they scored (D0601A, " in err
    assert "is in the DUC years given (DUC 2007 (" in err and "give the --duc_dirs they tested on" in err
    lone = next((tmp_path / "run" / "units").glob("finetune-fold0*"))
    assert wikiref(["rescore", str(lone), "--duc_dirs", duc_years[2006], "--selection", "duc"]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert f"{lone.name}: no seed's units cover every scorable cluster of a DUC year given (seed 1: no scores" in err
    assert err.endswith("give all the folds of a seed")


def test_a_seed_with_a_fold_missing_is_named_and_left_out(tmp_path, duc_years):
    _write_units(tmp_path / "run", duc_years[2006], seeds=(1, 2, 3), skip={(3, 1)})
    result = rescore([tmp_path / "run" / "units"], [duc_years[2006]], [Rule("duc")], [Mix()], average_seeds=True)
    (group,) = result["groups"]
    assert group["seeds"]["3"] == [0]
    assert len(group["missing"]) == 1 and group["missing"][0].startswith("seed 3: no scores for")
    assert group["rows"][0]["years"]["2006"]["runs"] == 2
    assert "seed 3: no scores for" in to_markdown(result)


def test_the_rules_offered_are_the_selection_modules():
    from trainer_scripts.cli import build_parser
    from wikiref_dataset.selection import CLUSTER_RULES

    parser = build_parser()
    assert parser.parse_args(["rescore", "run"]).selection == list(CLUSTER_RULES)
    with pytest.raises(SystemExit):
        parser.parse_args(["rescore", "run", "--selection", "best"])


def test_mix_parsing_and_what_it_adds():
    assert Mix.parse("none") == Mix() and Mix.parse("query_sim:0.25") == Mix("query_sim", 0.25)
    from trainer_scripts.experiments.rescore import SIGNALS
    from wikiref_dataset.selection import ClusterSentences as Cluster

    cluster = Cluster.from_documents([["a b.", "c d."], ["e f."]])
    signal = SIGNALS["position"]({}, cluster)
    assert signal == [1.0, 0.5, 1.0]
    assert Mix("position", 1.0).apply([0.0, 10.0, 5.0], signal) == [1.0, 1.0, 1.5]  # signal scaled [1, 0, 1]
    assert Mix().apply([0.0, 10.0, 5.0], None) == [0.0, 10.0, 5.0]
    for text, message in (("speed:1", "SIGNAL one of position, query_sim"), ("position", "SIGNAL:WEIGHT"),
                          ("position:x", "is not a number"), ("position:inf", "finite")):
        with pytest.raises(ValueError, match=message):
            Mix.parse(text)


@pytest.mark.parametrize("argv, message", [
    (["--mix", "speed:1"], "--mix 'speed:1'"),
    (["--candidates", "0"], "--candidates must be a whole number of 1 or more, got 0"),
    (["--tradeoff", "2"], r"--tradeoff must lie in \[0, 1\]"),
    (["--unigram_weight", "-1"], "--unigram_weight must be a number of 0 or more, got -1"),
    (["--document_weight", "inf"], "--document_weight must be a number of 0 or more, got inf"),
])
def test_bad_options_are_one_line(tmp_path, capsys, duc_years, argv, message):
    _write_units(tmp_path / "run", duc_years[2006], seeds=(1,))
    assert wikiref(["rescore", str(tmp_path / "run"), "--duc_dirs", duc_years[2006], *argv]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and err.startswith("wikiref rescore: error:")
    import re

    assert re.search(message, err)


def test_bad_input_is_one_line(tmp_path, capsys, duc_years):
    assert wikiref(["rescore", str(tmp_path / "nowhere")]) == 2
    assert "no such folder" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert wikiref(["rescore", str(tmp_path / "empty")]) == 2
    assert "holds no unit" in capsys.readouterr().err
    _write_units(tmp_path / "run", duc_years[2006], seeds=(1,))
    assert wikiref(["rescore", str(tmp_path / "run"), "--duc_dirs", str(tmp_path / "empty")]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "empty" in err
    scores = next((tmp_path / "run" / "units").glob("finetune-fold0*")) / "sentence_scores.jsonl"
    record = json.loads(scores.read_text().splitlines()[0])
    record["scores"][0].append(0.5)  # one score too many: saved for another conversion
    scores.write_text(json.dumps(record) + "\n")
    assert wikiref(["rescore", str(tmp_path / "run"), "--duc_dirs", duc_years[2006]]) == 2
    err = capsys.readouterr().err
    assert f"cluster {record['topic_id']}: document 0: got" in err and "another conversion" in err
    scores.write_text("not json\n")
    assert wikiref(["rescore", str(tmp_path / "run"), "--duc_dirs", duc_years[2006]]) == 2
    assert "line 1: not a sentence-scores record" in capsys.readouterr().err


def _write_output_folders(root: Path, duc_dir: str, seed: int = 7, folds: int = 2, command: bool = True) -> dict:
    """``finetune_duc.py --output_dir`` folders of one seed's folds, as the script leaves them for rescore: results.json
    (the run's command, its folds, seed and evaluated DUC year) and sentence_scores.jsonl (written by the script's
    writer); ``command=False``: a run started from Python, whose record holds another command line. Returns {topic:
    flat scores}."""
    from trainer_scripts.duc_evaluation import write_sentence_scores

    (year,) = load_years([duc_dir])
    topics = sorted(row["topic_id"] for row in year.scorable)
    rows = {row["topic_id"]: row for row in year.scorable}
    rng, written = random.Random(seed), {}
    for fold in range(folds):
        folder = root / f"qbert-fold{fold}"
        folder.mkdir(parents=True)
        argv = ["finetune_duc.py", "--duc_dirs", duc_dir, "--folds", str(folds), "--fold", str(fold), "--seed",
                str(seed), "--output_dir", str(folder)]
        scores = {topic: [[rng.random() for _ in document["sentences"]] for document in rows[topic]["documents"]]
                  for topic in topics[fold::folds]}
        written.update({topic: [value for document in values for value in document] for topic, values in scores.items()})
        results = {"script": "finetune_duc",
                   "run": {"kind": "full", "date": "2026-12-01T00:00:00+00:00",
                           "command": " ".join(argv) if command else "pytest -q tests/trainer_scripts"},
                   "base_model": "encoder", "objective": "regression", "pretraining": None,
                   "finetuning": {"train_years": [], "test_year": None,
                                  "folds": {"folds": folds, "fold": fold, "test_clusters": sorted(scores)},
                                  "selection": "ilp", "hyperparameters": {"learning_rate": 2e-5, "seed": seed}},
                   "evaluation": {"settings": "-n 2", "scale": "0-1",
                                  "datasets": {"2006": {"path": duc_dir, "clusters": len(scores),
                                                        "scored_clusters": len(scores)}},
                                  "systems": {}, "rules": {}},
                   "benchmark_evaluation": None, "subnetwork": None}
        (folder / "results.json").write_text(json.dumps(results, indent=1))
        write_sentence_scores(folder / "sentence_scores.jsonl", scores)
    return written


@pytest.mark.parametrize("command", [True, False], ids=["recorded command", "run from Python"])
def test_finetune_output_folders_are_units(tmp_path, capsys, duc_years, command):
    """What docs/training.md says rescore reads: the --output_dir folders of finetune_duc.py, given one by one or as
    the folder holding them; a seed's folds are pooled (the seed and fold from the command the run records, else from
    its results), the DUC year from their command."""
    written = _write_output_folders(tmp_path / "runs", duc_years[2006], command=command)
    folders = sorted(str(path) for path in (tmp_path / "runs").iterdir())
    for given in (folders, [str(tmp_path / "runs")]):
        status = wikiref(["rescore", *given, "--selection", "duc", "--baselines", "none", "--out",
                          str(tmp_path / "out"), "-q"])
        captured = capsys.readouterr()
        assert status == 0, captured.err
        result = json.loads((tmp_path / "out" / "rescore.json").read_text())
        (group,) = result["groups"]
        assert group["seeds"] == {"7": [0, 1]} and group["missing"] == [] and result["notes"] == []
        assert group["units"] == ["qbert-fold0", "qbert-fold1"]
        (row,) = group["rows"]
        expected = _direct(duc_years[2006], written)
        assert row["years"]["2006"]["rouge_2"]["values"] == pytest.approx([expected["rouge_2_recall"]])


def test_a_folder_of_another_script_is_passed_over(tmp_path, capsys, duc_years):
    _write_output_folders(tmp_path / "runs", duc_years[2006])
    other = tmp_path / "runs" / "qbert-fold1" / "results.json"
    other.write_text(json.dumps({**json.loads(other.read_text()), "script": "pretrain_wikiref"}))
    assert wikiref(["rescore", str(tmp_path / "runs"), "--selection", "duc", "-q"]) == 2
    assert "no seed's units cover every scorable cluster" in capsys.readouterr().err


@pytest.mark.skipif(not (GRID.is_dir() and REAL_DUC.is_dir()) or not os.environ.get("WIKIREF_SLOW_TESTS"),
                    reason="converts NIST's DUC 2006 (25 s, over the suite's time budget): set WIKIREF_SLOW_TESTS=1 "
                           "beside ../shared")
def test_the_paper_rule_on_the_saved_real_grid_gives_back_its_summaries_and_scores(tmp_path):
    from wikiref_dataset.duc.reader import convert_duc

    convert_duc(REAL_DUC, 2006, tmp_path / "duc2006")
    folders = sorted(GRID.glob("units/finetune-*-seed42-*"))
    assert len(folders) == 5
    found = read_units(folders)
    assert sorted(unit.fold for unit in found.units) == [0, 1, 2, 3, 4]
    result = rescore(folders, [str(tmp_path / "duc2006")], [Rule("duc")], [Mix()])
    table = json.loads((GRID / "seed42-results.json").read_text()) if (GRID / "seed42-results.json").is_file() else None
    row = result["groups"][0]["rows"][0]["years"]["2006"]
    assert round(100 * row["rouge_2"]["mean"], 2) == 9.84 and round(100 * row["rouge_1"]["mean"], 2) == 40.96
    assert table is None or table  # the markdown table is what the runner wrote; the numbers above are its numbers
    (year,) = load_years([str(tmp_path / "duc2006")])
    rows = {row["topic_id"]: row for row in year.scorable}
    for unit in found.units:  # every saved summary is the rule's choice from the saved scores
        with gzip.open(unit.folder / "summaries.jsonl.gz", "rt") as handle:
            saved = {record["topic_id"]: record["summary"] for record in map(json.loads, handle)
                     if record.get("system") in (None, "Q-BERT")}
        for topic, per_document in unit.scores.items():
            cluster = ClusterSentences.from_row(rows[topic])
            assert cluster.summary(cluster.select(cluster.flatten_scores(per_document))) == saved[topic], topic


def test_outputs_are_replaced_whole(tmp_path, monkeypatch):
    """rescore.md and rescore.json are renamed into place: a second run replaces them, and one that fails while
    writing leaves the previous files whole and no temporary file behind."""
    import os

    from trainer_scripts.experiments import rescore as module

    module.write_outputs(tmp_path / "out", {"run": 1}, "first\n")
    module.write_outputs(tmp_path / "out", {"run": 2}, "second\n")
    assert (tmp_path / "out" / "rescore.md").read_text() == "second\n"
    assert json.loads((tmp_path / "out" / "rescore.json").read_text()) == {"run": 2}

    def failing(source, target):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", failing)
    with pytest.raises(OSError, match="No space left"):
        module.write_outputs(tmp_path / "out", {"run": 3}, "third\n")
    assert (tmp_path / "out" / "rescore.md").read_text() == "second\n"
    assert sorted(path.name for path in (tmp_path / "out").iterdir()) == ["rescore.json", "rescore.md"]


def test_a_progress_bar_counts_the_clusters_and_quiet_hides_it(tmp_path, duc_years):
    """`wikiref rescore --selection ilp` (minutes on full DUC years) shows a bar on stderr over the cluster summaries
    it chooses: each seed's clusters and each baseline's, under the rule; -q shows nothing on stderr. Fresh
    processes, as a user runs it."""
    import subprocess
    import sys

    written = _write_units(tmp_path / "run", duc_years[2006])
    argv = [sys.executable, "-m", "trainer_scripts.cli", "rescore", str(tmp_path / "run"), "--duc_dirs",
            duc_years[2006], "--selection", "ilp"]
    environment = {**os.environ, "HF_HUB_OFFLINE": "1"}
    shown = subprocess.run(argv, capture_output=True, text=True, timeout=300, env=environment)
    assert shown.returncode == 0, shown.stderr[-2000:]
    topics = len(written[1])  # every scorable cluster: a seed's two folds
    clusters = 2 * topics + 2 * topics  # the two seeds', then QUERY-SIM's and LEAD's
    last = shown.stderr.replace("\r", "\n").strip().splitlines()[-1]
    assert "100%" in last and f"{clusters}/{clusters}" in last and "cluster" in last, shown.stderr
    assert "rescoring 4 unit(s) of" in shown.stderr
    quiet = subprocess.run([*argv, "-q"], capture_output=True, text=True, timeout=300, env=environment)
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr
    assert quiet.stdout == shown.stdout
