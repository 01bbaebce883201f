"""run_experiments.py / `wikiref experiments`: rows x folds x seeds as cached units of the real scripts (a rerun runs
nothing, one row's changed option redoes only its units, a unit without results.json is redone), the results folder
(tables with the published numbers beside, results.json, plots, the best row a model card reads), pre-training shared
by the rows that need it, cluster folds in fresh processes, and one-line errors."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from trainer_scripts import run_experiments
from trainer_scripts.cli import main as wikiref
from trainer_scripts.experiments import executors, options, plan, run

FAST = ["--use_cpu", "--max_steps", "1", "--per_device_train_batch_size", "4", "--max_length", "128",
        "--disable_tqdm", "true"]


def _units_run(stderr: str) -> list[str]:
    """The progress lines of the units a run ran (one per unit)."""
    return [line for line in stderr.splitlines() if re.match(r"\[\d+/\d+\] .*: done in ", line)]


def _results_mtimes(out):
    return {path.parent.name: path.stat().st_mtime_ns for path in (out / "units").glob("*/results.json")}


def _run(capsys, *argv):
    status = run_experiments.main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _watch_figures(monkeypatch) -> dict[str, dict]:
    """What each figure the report saves shows: whether its title lies inside the image, and the published numbers
    marked on it (the scatter points' heights)."""
    from matplotlib.collections import PathCollection

    from trainer_scripts.experiments import report

    seen: dict[str, dict] = {}
    save = report.Report._save

    def watching(figure, folder, name):
        figure.tight_layout()
        renderer = figure.canvas.get_renderer()
        axis = figure.axes[0]
        title = axis.title.get_window_extent(renderer)
        inside = figure.bbox.x0 <= title.x0 and title.x1 <= figure.bbox.x1 and title.y1 <= figure.bbox.y1
        marked = [round(float(y), 2) for collection in axis.collections if isinstance(collection, PathCollection)
                  for _, y in collection.get_offsets()]
        seen[name] = {"title_inside": inside, "published": marked}
        return save(figure, folder, name)

    monkeypatch.setattr(report.Report, "_save", staticmethod(watching))
    return seen


def test_rows_folds_seeds_are_cached_units(tmp_path, capsys, monkeypatch, tiny_bert_dir, duc_years):
    out = tmp_path / "experiments"
    figures = _watch_figures(monkeypatch)
    argv = ["--duc_dirs", duc_years[2006], duc_years[2007], "--encoder", str(tiny_bert_dir), "--rows", "bert",
            "qbert", "--seeds", "1", "2", "--out", str(out), "--subprocess", "false", *FAST]
    status, stdout, stderr = _run(capsys, *argv)
    assert status == 0, stderr
    ran = _units_run(stderr)
    assert len(ran) == 2 + 2 * 2 * 2  # baselines per year + 2 rows x 2 folds (test 2006, test 2007) x 2 seeds
    assert all("ETA" in line for line in ran[:-1])
    assert "bert" in stdout and "qbert" in stdout  # the closing table

    results = json.loads((out / "results.json").read_text())
    assert results["script"] == "run_experiments" and results["settings"]["protocol"] == "cross_year"
    for name in ("bert", "qbert"):
        row = results["rows"][name]
        assert row["status"] == "done" and len(row["units"]["finetune"]) == 4
        for year in ("2006", "2007"):
            rouge_2 = row["duc"][year]["rouge_2"]
            assert row["duc"][year]["runs"] == 2 and len(rouge_2["values"]) == 2
            assert rouge_2["mean"] == pytest.approx(sum(rouge_2["values"]) / 2)
            median = json.loads((out / "units" / rouge_2["median_run"] / "results.json").read_text())
            scores = median["evaluation"]["systems"]["Q-BERT"][year]  # the interval is the median run's own
            assert rouge_2["ci_median_run"] == [scores["rouge_2_recall_ci_low"], scores["rouge_2_recall_ci_high"]]
            assert scores["rouge_2_recall"] == sorted(rouge_2["values"])[0]  # the lower of the middle two
    assert results["rows"]["lead"]["duc"]["2007"]["runs"] == 1  # baselines once, not per seed
    best = results["best"]
    assert best["row"] in ("bert", "qbert") and (out / best["card_results"]).is_file()
    table = (out / "results.md").read_text()
    assert "## Table VI" in table
    assert "*paper 41.35*" in table and "*paper 11.24*" in table  # BERT DUC 2006 R-1, Q-BERT DUC 2007 R-2
    assert "mean ± std of 2 seeds" in table and "--max_steps 1" in table
    assert "not run here (row `qbert_da`)" in table and "published only: another system" in table
    assert (out / "figures" / "duc_rouge2.png").stat().st_size > 1000
    # the figure's title is whole, and each row's published ROUGE-2 is marked beside ours (BERT and Q-BERT, LEAD,
    # QUERY-SIM and ORACLE on DUC 2006 and 2007)
    assert figures["figures/duc_rouge2.png"]["title_inside"]
    assert sorted(figures["figures/duc_rouge2.png"]["published"]) == sorted(
        [9.60, 11.39, 9.54, 11.24, 5.71, 8.12, 7.10, 7.94, 17.22, 19.19])
    assert stdout.startswith("recipe paper (the default for the encoder")

    # the seeds' scores averaged: each test sentence scored by the mean of the two seeds' models, the DUC rule, ROUGE
    from trainer_scripts.duc_evaluation import evaluate_systems, load_years
    from wikiref_dataset.selection import select_duc, summary_text

    years = load_years([duc_years[2006], duc_years[2007]])
    rows = {row["topic_id"]: row for year in years for row in year.scorable}
    units = {unit: [json.loads(line) for line in (out / "units" / unit / "sentence_scores.jsonl").read_text()
                    .splitlines()] for unit in results["rows"]["qbert"]["units"]["finetune"]}
    summaries = {}
    for seed_one, seed_two in ((units[a], units[b]) for a, b in zip(sorted(u for u in units if "seed1" in u),
                                                                     sorted(u for u in units if "seed2" in u))):
        for one, two in zip(seed_one, seed_two):
            assert one["topic_id"] == two["topic_id"]
            sentences = [text for document in rows[one["topic_id"]]["documents"] for text in document["sentences"]]
            mean = [(x + y) / 2 for a, b in zip(one["scores"], two["scores"]) for x, y in zip(a, b)]
            summaries[one["topic_id"]] = summary_text(sentences, select_duc(sentences, mean))
    expected = evaluate_systems(years, {"average": summaries}).to_dict()["systems"]["average"]
    average = results["rows"]["qbert"]["duc_seed_average"]
    for year in ("2006", "2007"):
        assert average[year]["rouge_2_recall"] == pytest.approx(expected[year]["rouge_2_recall"])
        assert average[year]["seeds"] == [1, 2]
    assert "## Seeds' scores averaged" in table and "`qbert`" in table.split("## Seeds' scores averaged")[1]

    # the same command: every unit is finished, none runs
    before = _results_mtimes(out)
    status, _, stderr = _run(capsys, *argv)
    assert status == 0 and not _units_run(stderr) and "nothing to run" in stderr
    assert _results_mtimes(out) == before

    # one row's option changed: only that row's units run again
    changed = [*argv, "--row_options", "qbert=--learning_rate 1e-3"]
    status, _, stderr = _run(capsys, *changed)
    ran = _units_run(stderr)
    assert status == 0 and len(ran) == 4 and all("(qbert)" in line for line in ran), stderr
    assert all(_results_mtimes(out)[name] == mtime for name, mtime in before.items())

    # a unit interrupted before its results.json: redone, alone
    crashed = json.loads((out / "results.json").read_text())["rows"]["bert"]["units"]["finetune"][0]
    (out / "units" / crashed / "results.json").unlink()
    status, _, stderr = _run(capsys, *changed)
    assert status == 0 and len(_units_run(stderr)) == 1, stderr
    assert (out / "units" / crashed / "results.json").is_file()


def test_pretraining_is_shared_and_the_card_reads_the_best_row(tmp_path, capsys, tiny_bert_dir, duc_years,
                                                               tiny_wikiref):
    out = tmp_path / "experiments"
    status, _, stderr = _run(capsys, "--duc_dirs", duc_years[2006], duc_years[2007], "--encoder", str(tiny_bert_dir),
                             "--wikiref", str(tiny_wikiref), "--rows", "qbert_da", "qbert_da_st",
                             "da_pretrained_regression", "fig4_bert", "--data_fractions", "0.5", "1", "--seeds", "7",
                             "--out", str(out), "--subprocess", "false", *FAST)
    assert status == 0, stderr
    units = {path.name: json.loads((path / "unit.json").read_text()) for path in (out / "units").iterdir()}
    pretrain = [unit for unit in units.values() if unit["kind"] == "pretrain"]
    assert len(pretrain) == 1  # one WikiRef pre-training, shared by the three DA rows
    assert pretrain[0]["rows"] == ["da_pretrained_regression", "qbert_da", "qbert_da_st"]
    assert sorted(unit["kind"] for unit in units.values()).count("evaluate") == 2  # DA PRE-TRAINED on each year
    shares = [unit for unit in units.values() if unit["kind"] == "data"]
    assert len(shares) == 1 and shares[0]["params"]["fraction"] == 0.5  # Fig. 4: half of DUC 2006's clusters

    results = json.loads((out / "results.json").read_text())
    rows = results["rows"]
    assert rows["qbert_da"]["wikiref"]["validation"]["rouge_2_f"]["mean"] >= 0
    assert rows["da_pretrained_regression"]["duc"]["2006"]["rouge_2"]["mean"] >= 0
    assert set(rows["fig4_bert@50%"]["duc"]) == {"2007"}  # Fig. 4 runs on the fold testing the latest year
    assert (out / "figures" / "fig4_data_fraction.png").is_file()
    table = (out / "results.md").read_text()
    assert "*paper 12.55*" in table and "## Fig. 4" in table  # Q-BERT + DA + ST, DUC 2007 R-2

    from trainer_scripts.model_card import load_results, render_model_card

    card_results = load_results(out / "results.json")
    assert card_results.experiments.row == results["best"]["variant"]
    card = render_model_card(card_results, model_repo="org/qbert")
    assert f"row `{results['best']['variant']}` of `wikiref experiments`" in card


def test_single_year_runs_cluster_folds_in_fresh_processes(tmp_path, capsys, tiny_bert_dir, duc_years):
    out = tmp_path / "experiments"
    status, _, stderr = _run(capsys, "--duc_dirs", duc_years[2006], "--encoder", str(tiny_bert_dir), "--rows",
                             "qbert", "--folds", "2", "--seeds", "1", "--baselines", "false", "--out", str(out),
                             "--jobs", "2", *FAST)
    assert status == 0, stderr
    assert len(_units_run(stderr)) == 2
    assert f"experiments: 2 units at a time, {max(1, (os.cpu_count() or 1) // 2)} thread(s) each" in stderr
    import datetime

    records = [json.loads(path.read_text()) for path in (out / "units").glob("finetune-fold*/unit.json")]
    starts = sorted(datetime.datetime.strptime(record["started"], "%Y-%m-%dT%H:%M:%S%z") for record in records)
    assert (starts[1] - starts[0]).total_seconds() < min(record["seconds"] for record in records)  # side by side
    logs = [path.read_text() for path in (out / "units").glob("finetune-fold*/log.txt")]
    assert len(logs) == 2 and all("fine-tuning" in log for log in logs)  # each unit's own process wrote its log
    results = json.loads((out / "results.json").read_text())
    assert results["settings"]["protocol"] == "kfold"
    pooled = results["rows"]["qbert"]["duc"]["2006"]
    assert pooled["runs"] == 1 and "rouge_2" in pooled  # both folds' summaries scored as one year
    assert len(list((out / "pooled").glob("*.json"))) == 1


def test_plan_of_the_figure_rows(tmp_path, tiny_bert_dir, duc_years, tiny_wikiref):
    """Fig. 6: six pre-trainings on halves of WikiRef sorted by oracle ROUGE-2 recall; a slice holds what it says."""
    arguments = options.ExperimentArguments(duc_dirs=[duc_years[2006], duc_years[2007]], encoder=str(tiny_bert_dir),
                                            wikiref=str(tiny_wikiref), rows=["fig6_qbert_da"], seeds=[1, 2],
                                            out=str(tmp_path / "x"))
    known = options.script_options()
    routed = options.route_options(arguments, [], ["fig6_qbert_da"], known)
    planned = plan.make_plan(arguments, plan.check_inputs(arguments), ["fig6_qbert_da"], routed)
    kinds = [planned.units[key].kind for key in planned.order]
    assert kinds.count("data") == 6 and kinds.count("pretrain") == 6  # pre-trained once, shared by both seeds
    assert kinds.count("finetune") == 6 * 2  # six slices x two seeds, on the fold testing DUC 2007 only
    slices = sorted(tuple(planned.units[key].params["slice"]) for key in planned.order
                    if planned.units[key].kind == "data")
    assert slices == [(start / 10, start / 10 + 0.5) for start in range(6)]

    executors._wikiref_slice(str(tiny_wikiref), (0.5, 1.0), tmp_path / "excellent")
    from wikiref_dataset.process.folders import load_dataset_folder

    full = load_dataset_folder(tiny_wikiref)["train"]["oracle_rouge2_recall"]
    best = load_dataset_folder(tmp_path / "excellent")
    assert best["train"].num_rows == 6 and min(best["train"]["oracle_rouge2_recall"]) >= sorted(full)[5]
    assert best["validation"].num_rows == 2


def test_other_benchmarks_fill_one_table_with_duc(tmp_path, capsys, tiny_bert_dir, duc_years):
    """--qfs_dirs: each benchmark scored beside DUC (baselines, the DUC-trained model zero-shot, the row fine-tuned
    on the benchmark's train split where it has one), in one table; --keep_models false waits for the zero-shot
    evaluations before deleting the DUC models' weights."""
    from trainer_scripts.qfs_evaluation import QfsEvaluateArguments, evaluate
    from wikiref_dataset.qfs import convert_benchmark

    fixtures = Path(__file__).resolve().parents[1] / "fixtures" / "qfs"
    qmsum, debatepedia = tmp_path / "qmsum", tmp_path / "debatepedia"
    convert_benchmark("qmsum", fixtures / "qmsum", qmsum)
    convert_benchmark("debatepedia", fixtures / "debatepedia", debatepedia)
    out = tmp_path / "experiments"
    argv = ["--duc_dirs", duc_years[2006], duc_years[2007], "--qfs_dirs", str(qmsum), str(debatepedia),
            "--encoder", str(tiny_bert_dir), "--rows", "qbert", "--seeds", "1", "--out", str(out),
            "--subprocess", "false", "--keep_models", "false", *FAST]
    status, stdout, stderr = _run(capsys, *argv, "--dry_run", "--estimate", "false")
    assert status == 0 and "9 units, 9 to run" in stderr, stderr
    assert stdout.count("evaluate_qfs.py --dataset") == 4  # two benchmarks' baselines and zero-shot units
    assert f"--qfs_dir {qmsum.resolve()} --qfs_test_split validation --qfs_labels oracle" in stdout
    status, stdout, stderr = _run(capsys, *argv)
    assert status == 0, stderr
    ran = _units_run(stderr)
    # DUC: 2 years' baselines + 2 folds; the benchmarks: 2 baselines + 2 zero-shot + QMSum's fine-tuning (Debatepedia
    # has no train split here)
    assert len(ran) == 4 + 5, stderr
    results = json.loads((out / "results.json").read_text())
    assert results["settings"]["benchmarks"]["debatepedia"]["fine_tuned"] is False
    qbert = results["rows"]["qbert"]
    assert qbert["status"] == "done" and set(qbert["benchmarks"]) == {"qmsum", "debatepedia"}
    assert set(qbert["benchmarks"]["qmsum"]) == {"zero_shot", "fine_tuned"}
    assert set(qbert["benchmarks"]["debatepedia"]) == {"zero_shot"}
    units = out / "units"
    zero_shot = json.loads((units / qbert["benchmarks"]["qmsum"]["zero_shot"]["rouge_2_f"]["median_run"]
                            / "results.json").read_text())
    model = Path(zero_shot["command"][zero_shot["command"].index("--model") + 1])
    assert model.name in qbert["units"]["finetune"] and "test2007" in model.name  # the fold that tests 2007
    assert zero_shot["script"] == "evaluate_qfs"
    values = zero_shot["evaluation"]["systems"]["Q-BERT"]["qmsum/validation"]
    assert qbert["benchmarks"]["qmsum"]["zero_shot"]["rouge_2_f"]["mean"] == values["rouge_2_f"]
    fine_tuned = qbert["benchmarks"]["qmsum"]["fine_tuned"]["rouge_1_f"]
    tuned = json.loads((units / fine_tuned["median_run"] / "results.json").read_text())
    command = json.loads((units / fine_tuned["median_run"] / "unit.json").read_text())["argv"]
    assert command[command.index("--qfs_dir") + 1] == str(qmsum.resolve()) and "--duc_dirs" not in command
    assert fine_tuned["mean"] == tuned["benchmark_evaluation"]["systems"]["Q-BERT"]["qmsum/validation"]["rouge_1_f"]
    assert not list(units.glob("finetune-*/*.safetensors"))  # deleted, after the zero-shot runs that needed them

    # the baselines are what `wikiref qfs evaluate` gives
    direct = tmp_path / "direct.json"
    evaluate(QfsEvaluateArguments(dataset=str(qmsum), baseline=["all"], out=str(direct), quiet=True))
    capsys.readouterr()
    expected = json.loads(direct.read_text())["systems"]
    for row, system in (("lead", "LEAD"), ("query_sim", "QUERY-SIM"), ("oracle", "ORACLE")):
        got = results["rows"][row]["benchmarks"]["qmsum"]["baseline"]
        assert got["rouge_l_f"]["mean"] == expected[system]["qmsum/validation"]["rouge_l_f"]

    table = (out / "results.md").read_text().split("## DUC and the other query-focused benchmarks")[1]
    header = table.strip().splitlines()[0]
    assert "DUC 2006 R-2 R" in header and "QMSum R-1 F1" in header and "Debatepedia R-L F1" in header
    assert "`qbert`): trained on DUC (zero-shot)" in table and "fine-tuned on the benchmark" in table
    assert "no train split" in table
    assert "QMSum R-2 F1" in stdout  # the closing table: zero-shot / fine-tuned, "-" where not run
    closing = next(line for line in stdout.splitlines() if line.startswith("qbert "))
    assert re.search(r"\d / \d+\.\d+ +\d+\.\d+ / -$", closing), closing

    # the model card of the best row shows its zero-shot scores on the benchmarks beside the baselines
    from trainer_scripts.model_card import load_results, render_model_card

    card = render_model_card(load_results(out / "results.json"), model_repo="org/qbert")
    section = card.split("### Other query-focused benchmarks, zero-shot")[1].split("###")[0]
    assert "QMSum ROUGE-1 F1" in section and "Debatepedia ROUGE-L F1" in section
    line = next(line for line in section.splitlines() if "trained on DUC (this model's row)" in line)
    assert f"**{100 * qbert['benchmarks']['qmsum']['zero_shot']['rouge_2_f']['mean']:.2f}**" in line
    lead = next(line for line in section.splitlines() if line.startswith("| LEAD"))
    assert f"{100 * results['rows']['lead']['benchmarks']['debatepedia']['baseline']['rouge_l_f']['mean']:.2f}" in lead

    status, _, stderr = _run(capsys, *argv)  # the same command again: nothing runs
    assert status == 0 and not _units_run(stderr) and "nothing to run" in stderr

    # a benchmark added later: the DUC model its zero-shot unit needs was deleted (--keep_models false), so that
    # fine-tuning runs again, alone among the DUC units
    squality = tmp_path / "squality"
    convert_benchmark("squality", fixtures / "squality", squality)
    position = argv.index("--encoder")
    status, _, stderr = _run(capsys, *argv[:position], str(squality), *argv[position:])
    ran = _units_run(stderr)
    assert status == 0 and len(ran) == 4, stderr  # SQuALITY's baselines, zero-shot and fine-tuning; the 2007 fold
    assert sum("finetune test2007" in line for line in ran) == 1 and not any("test2006" in line for line in ran)
    qbert = json.loads((out / "results.json").read_text())["rows"]["qbert"]
    assert set(qbert["benchmarks"]["squality"]) == {"zero_shot", "fine_tuned"}


def test_other_benchmarks_bad_input_is_one_line(tmp_path, capsys, duc_years, tiny_bert_dir):
    from wikiref_dataset.qfs import convert_benchmark

    debatepedia = tmp_path / "debatepedia"
    convert_benchmark("debatepedia", Path(__file__).resolve().parents[1] / "fixtures" / "qfs" / "debatepedia",
                      debatepedia)
    out = tmp_path / "experiments"
    for argv, message in ((["--qfs_dirs", "missing"], "missing: no such benchmark folder"),
                          (["--qfs_dirs", duc_years[2006]], "not a converted benchmark"),
                          (["--qfs_dirs", str(debatepedia), str(debatepedia)], "are both debatepedia"),
                          (["--qfs_dirs", str(debatepedia), "--qfs_split", "test"], "no split 'test' to score on"),
                          (["--qfs_dirs", str(debatepedia), "--qfs_labels", "gold"], "--qfs_labels must be one of"),
                          (["--qfs_dirs", str(debatepedia), "--qfs_dir", "x"], "--qfs_dir is set by the runner")):
        status = wikiref(["experiments", "--duc_dirs", duc_years[2006], duc_years[2007], "--encoder",
                          str(tiny_bert_dir), "--rows", "qbert", "--out", str(out), *argv])
        lines = capsys.readouterr().err.strip().splitlines()
        assert status == 2 and message in lines[-1], (argv, lines)
        assert not out.exists()


@pytest.mark.parametrize(("argv", "message"), [
    (["--rows", "nope"], "--rows: no row or group named 'nope'"),
    (["--rows", "qbert_da"], "row qbert_da pre-trains on WikiRef: give --wikiref DIR"),
    (["--rows", "qbert", "--duc_dirs", "missing"], "missing: no such DUC folder"),
    (["--rows", "qbert", "--seed", "3"], "--seed is set by the runner"),
    (["--rows", "qbert", "--pooling", "max"], "--pooling is what the rows differ in"),
    (["--rows", "qbert", "--bogus", "1"], "unknown option --bogus"),
    (["--rows", "qbert", "--row_options", "bert=--pooling max"], "row bert is not among the rows to run"),
    (["--rows", "qbert", "--protocol", "kfold", "--folds", "1"], "--folds must be at least 2, got 1"),
])
def test_bad_input_is_one_line_and_writes_nothing(tmp_path, capsys, duc_years, tiny_bert_dir, argv, message):
    out = tmp_path / "experiments"
    duc = [] if "--duc_dirs" in argv else ["--duc_dirs", duc_years[2006], duc_years[2007]]
    status = wikiref(["experiments", *duc, "--encoder", str(tiny_bert_dir), "--out", str(out), *argv])
    lines = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and lines[-1].startswith("wikiref experiments: error: ") and message in lines[-1], lines
    assert not out.exists()


def test_the_note_on_rows_left_out_comes_only_when_the_input_passes(tmp_path, capsys, duc_years, tiny_bert_dir):
    """A group run without --wikiref notes the pre-training rows it leaves out; a typo in the same command is one
    error line, with no note before it."""
    argv = ["--duc_dirs", duc_years[2006], duc_years[2007], "--encoder", str(tiny_bert_dir), "--rows", "table6",
            "--out", str(tmp_path / "experiments")]
    status = wikiref(["experiments", *argv, "--dry_run", "--estimate", "false"])
    err = capsys.readouterr().err
    assert status == 0 and "experiments: note: without --wikiref, not running " in err and "qbert_da" in err, err
    status = wikiref(["experiments", *argv, "--learning_rat", "1"])
    lines = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(lines) == 1 and "unknown option --learning_rat" in lines[0], lines
    assert not (tmp_path / "experiments").exists()


def test_a_second_run_into_the_same_out_folder_stops_in_one_line(tmp_path, capsys, duc_years, tiny_bert_dir):
    """One run per results folder: with --out held by another run, `wikiref experiments` and the script stop with one
    line naming it (exit 2) and write nothing."""
    from wikiref_dataset.process.locks import FolderLock

    out = tmp_path / "experiments"
    argv = ["--duc_dirs", duc_years[2006], duc_years[2007], "--encoder", str(tiny_bert_dir), "--rows", "qbert",
            "--seeds", "1", "--baselines", "false", "--out", str(out), *FAST]
    with FolderLock(out, command="the other run"):
        status = wikiref(["experiments", *argv])
        line = capsys.readouterr().err.strip().splitlines()[-1]
        assert status == 2 and line.startswith("wikiref experiments: error: ") and "'the other run'" in line, line
        status, _, stderr = _run(capsys, *argv)
        assert status == 2 and "is being written by another run ('the other run'" in stderr.splitlines()[-1]
    assert not out.exists()


def test_a_failing_unit_is_reported_and_the_rest_written(tmp_path, capsys, tiny_bert_dir, duc_years):
    out = tmp_path / "experiments"
    status = wikiref(["experiments", "--duc_dirs", duc_years[2006], duc_years[2007], "--encoder", str(tiny_bert_dir),
                      "--rows", "qbert", "--seeds", "1", "--baselines", "false", "--subprocess", "false", "--out",
                      str(out), "--row_options", "qbert=--packing bogus", *FAST])
    lines = capsys.readouterr().err.strip().splitlines()
    assert status == 1 and "FAILED" in "\n".join(lines) and "--packing must be one of" in "\n".join(lines)
    assert lines[-1].startswith("wikiref experiments: error: 2 unit(s) did not finish"), lines[-1]
    assert "## Units that did not finish" in (out / "results.md").read_text()
    assert not list((out / "units").glob("*/results.json"))


def test_a_row_whose_option_a_script_lacks_fails_alone(tmp_path, capsys, monkeypatch, tiny_bert_dir, duc_years,
                                                      tiny_wikiref):
    """A row needing an option the script does not have is not run without it: it fails with one line naming the
    option, the other rows are planned; alone, the command refuses."""
    known = options.script_options()
    monkeypatch.setattr(run, "script_options",
                        lambda: {**known, "finetune": known["finetune"] - {"switch_objective"}})
    common = ["--duc_dirs", duc_years[2006], duc_years[2007], "--encoder", str(tiny_bert_dir), "--wikiref",
              str(tiny_wikiref), "--out", str(tmp_path / "x"), "--dry_run"]
    status, stdout, stderr = _run(capsys, *common, "--rows", "bert", "bert_da_classification")
    message = "row bert_da_classification cannot run: finetune_duc.py has no --switch_objective option"
    assert status == 1 and message in stderr.splitlines()[-1]
    assert "finetune test2007-seed42 (bert)" in stdout and "bert_da_classification)" not in stdout
    status, _, stderr = _run(capsys, *common, "--rows", "bert_da_classification")
    assert status == 2 and message in stderr.splitlines()[-1]


def test_wikiref_experiments_parses_like_the_script():
    """`wikiref experiments` (argparse, no transformers import) and run_experiments.py (HfArgumentParser) read a
    command line alike, the options they do not know kept in order for the training units."""
    from trainer_scripts.cli import build_parser

    argv = ["--duc_dirs", "a", "b", "--rows", "bert", "table9", "--seeds", "1", "2", "--folds", "3", "--max_steps",
            "2", "--data_fractions", "0.5", "1", "--subprocess", "false", "--bf16", "--seed-like", "x"]
    arguments, extra = run_experiments.to_arguments(build_parser().parse_args(["experiments", *argv]))
    script, script_extra = run_experiments.build_parser().parse_args_into_dataclasses(
        args=argv, return_remaining_strings=True)
    assert arguments == script and extra == script_extra == ["--max_steps", "2", "--bf16", "--seed-like", "x"]
    assert arguments.seeds == [1, 2] and arguments.folds == 3 and arguments.data_fractions == [0.5, 1.0]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_unit_process_ends_when_the_runner_is_killed(tmp_path):
    """A unit started the way run_script_process starts it does not outlive a runner killed with SIGKILL."""
    import signal
    import time

    pid_file = tmp_path / "child.pid"
    runner = subprocess.Popen([sys.executable, "-c", (
        "import subprocess, sys, pathlib\n"
        "from wikiref_dataset.process.lifetime import die_with_parent  # run_script_process's preexec_fn\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], preexec_fn=die_with_parent)\n"
        f"pathlib.Path({str(pid_file)!r}).write_text(str(child.pid))\n"
        "child.wait()\n")], cwd=Path(__file__).resolve().parents[2])
    deadline = time.monotonic() + 30
    while not pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    child = int(pid_file.read_text())
    runner.send_signal(signal.SIGKILL)
    runner.wait()
    def running(pid: int) -> bool:  # a zombie left for its new parent to reap has ended too
        try:
            return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
        except FileNotFoundError:
            return False

    while running(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    if running(child):
        os.kill(child, signal.SIGKILL)
        pytest.fail("the unit process outlived its killed runner")


def test_eta_of_a_kind_not_timed_yet_is_its_estimate(tmp_path, duc_years, tiny_bert_dir):
    """After the baselines (seconds), the fine-tuning units' ETA is their dry-run estimate, not the baselines' time;
    a kind timed here takes its own mean; without an estimate, the ETA says how many units it leaves out."""
    arguments = options.ExperimentArguments(duc_dirs=[duc_years[2006]], folds=2, encoder=str(tiny_bert_dir),
                                            rows=["qbert"], seeds=[1], out=str(tmp_path / "x"))
    known = options.script_options()
    routed = options.route_options(arguments, [], ["lead", "qbert"], known)
    planned = plan.make_plan(arguments, plan.check_inputs(arguments), ["lead", "qbert"], routed)
    runner = executors.Runner(planned, tmp_path / "x", arguments, loaded=["loaded"])
    finetune = [key for key in planned.order if planned.units[key].kind == "finetune"]
    assert len(finetune) == 2
    runner.seconds["baselines"] = [8.0]

    class Estimator:
        calls = 0

        def estimate(self, kind, argv):
            Estimator.calls += 1
            return type("Estimate", (), {"seconds": 360.0})()

    runner._estimator = Estimator()  # what Runner.estimator builds, measured instead of read
    assert runner.eta(finetune, jobs=1) == "ETA 12 min 00 s"  # 2 x 6 minutes, not 2 x 8 s
    assert runner.eta(finetune, jobs=2) == "ETA 6 min 00 s"
    assert Estimator.calls == 2  # measured once per unit, then kept
    runner.seconds["finetune"] = [100.0]
    assert runner.eta(finetune, jobs=1) == "ETA 3 min 20 s"  # timed here: its own mean
    runner.seconds.pop("finetune")
    runner.estimates.clear()
    runner.arguments = options.ExperimentArguments(**{**vars(arguments), "estimate": False})
    assert runner.eta(finetune, jobs=1) == "ETA unknown"
    assert runner.eta([*finetune, planned.order[0]], jobs=1) == "ETA 8 s + 2 unit(s) not estimated"


def test_a_rerun_says_which_finished_units_other_code_produced(tmp_path, capsys, tiny_bert_dir, duc_years):
    """Each unit records the code fingerprint it ran with; a rerun that reuses a unit another code produced says so
    in one line (the code is not part of the key: nothing is redone by itself)."""
    from trainer_scripts.experiments.common import code_fingerprint

    out = tmp_path / "experiments"
    argv = ["--duc_dirs", duc_years[2006], "--encoder", str(tiny_bert_dir), "--rows", "qbert", "--folds", "2",
            "--seeds", "1", "--baselines", "false", "--subprocess", "false", "--out", str(out), *FAST]
    status, _, stderr = _run(capsys, *argv)
    assert status == 0, stderr
    records = sorted((out / "units").glob("finetune-*/unit.json"))
    assert len(records) == 2 and all(json.loads(path.read_text())["code"] == code_fingerprint() for path in records)
    status, _, stderr = _run(capsys, *argv)
    assert status == 0 and "other code" not in stderr and "all 2 units finished earlier" in stderr
    record = json.loads(records[0].read_text())
    records[0].write_text(json.dumps({**record, "code": "0123456789abcdef"}))
    status, _, stderr = _run(capsys, *argv)
    assert status == 0 and not _units_run(stderr)
    line = next(line for line in stderr.splitlines() if "other code" in line)
    assert line.startswith("experiments: 1 finished unit(s) were produced by other code than this checkout's")
    assert records[0].parent.name in line and "delete a unit's folder" in line


def test_the_seeds_average_chooses_with_the_units_own_rule(tmp_path, capsys, monkeypatch, tiny_bert_dir, duc_years):
    """Units trained with --selection ilp: their seeds' averaged scores are chosen by ILP too (the ensemble row used
    to take the paper's greedy rule whatever the units used; on the tiny fixture clusters both rules choose alike, so
    the rule the ensemble asked for is watched too)."""
    from trainer_scripts.duc_evaluation import evaluate_systems, load_years
    from trainer_scripts.experiments import rescore
    from wikiref_dataset.selection import ClusterSentences

    rules = []
    summaries_of = rescore.Clusters.summaries

    def watched(self, scores, rule, mix):
        rules.append(rule.name)
        return summaries_of(self, scores, rule, mix)

    monkeypatch.setattr(rescore.Clusters, "summaries", watched)
    out = tmp_path / "experiments"
    status, _, stderr = _run(capsys, "--duc_dirs", duc_years[2006], "--encoder", str(tiny_bert_dir), "--rows",
                             "qbert", "--folds", "2", "--seeds", "1", "2", "--baselines", "false", "--subprocess",
                             "false", "--out", str(out), *FAST, "--selection", "ilp")
    assert status == 0, stderr
    results = json.loads((out / "results.json").read_text())
    years = load_years([duc_years[2006]])
    clusters = {row["topic_id"]: ClusterSentences.from_row(row) for row in years[0].scorable}
    by_seed: dict = {}
    for unit in results["rows"]["qbert"]["units"]["finetune"]:
        for line in (out / "units" / unit / "sentence_scores.jsonl").read_text().splitlines():
            record = json.loads(line)
            by_seed.setdefault(unit.split("-seed")[1][0], {})[record["topic_id"]] = \
                clusters[record["topic_id"]].flatten_scores(record["scores"])
    summaries = {topic: cluster.summary(cluster.select([(a + b) / 2 for a, b in zip(by_seed["1"][topic],
                                                                                    by_seed["2"][topic])], rule="ilp"))
                 for topic, cluster in clusters.items()}
    expected = evaluate_systems(years, {"ilp": summaries}).to_dict()["systems"]["ilp"]["2006"]
    average = results["rows"]["qbert"]["duc_seed_average"]["2006"]
    assert average["rouge_2_recall"] == pytest.approx(expected["rouge_2_recall"])
    assert average["rouge_1_recall"] == pytest.approx(expected["rouge_1_recall"]) and average["seeds"] == [1, 2]
    assert rules == ["ilp"]


def test_the_baseline_units_score_under_the_fine_tuned_rows_rule(tmp_path, duc_years, tiny_bert_dir):
    """The rule of the fine-tuned rows (the recipe's, every unit's --selection or one row's) reaches the baseline units
    (--selection duc RULE) and adds LEAD and QUERY-SIM variants under it; a run that keeps the greedy rule plans the
    baseline units it always did (their keys unchanged); a rule no selection knows is refused by name."""
    arguments = options.ExperimentArguments(duc_dirs=[duc_years[2006]], folds=2, encoder=str(tiny_bert_dir),
                                            rows=["qbert"], seeds=[1], out=str(tmp_path / "x"))
    known = options.script_options()
    rows = ["lead", "query_sim", "oracle", "qbert"]

    def planned(extra=(), recipe=None, row_options=()):
        chosen = options.ExperimentArguments(**{**vars(arguments), "recipe": recipe, "row_options": list(row_options)})
        routed = options.route_options(chosen, list(extra), rows, known)
        return plan.make_plan(chosen, plan.check_inputs(chosen), rows, routed)

    def baseline_argv(made):
        (key,) = made.baseline_units.values()
        return made.units[key].template

    greedy = planned()
    assert greedy.rules == ["duc"] and greedy.row_rules == {"qbert": "duc"}
    assert "--selection" not in baseline_argv(greedy)
    assert [variant.name for variant in greedy.variants] == rows
    for made, rule in ((planned(["--selection", "ilp"]), "ilp"), (planned(recipe="sentence-encoder"), "ilp"),
                       (planned(row_options=["qbert=--selection mmr"]), "mmr")):
        assert made.rules == ["duc", rule] and made.row_rules == {"qbert": rule}
        argv = baseline_argv(made)
        assert argv[argv.index("--selection"):argv.index("--selection") + 3] == ["--selection", "duc", rule]
        assert [variant.name for variant in made.variants] == [
            "lead", f"lead@{rule}", "query_sim", f"query_sim@{rule}", "oracle", "qbert"]
    assert planned(["--selection", "ilp"], recipe="sentence-encoder").rules == ["duc", "ilp"]
    assert planned(["--selection", "duc"], recipe="sentence-encoder").rules == ["duc"]  # the option overrides
    with pytest.raises(options.ExperimentError, match=r"^row qbert: --selection: unknown selection rule 'best'; "
                                                      r"choose one of duc, mmr, ilp$"):
        planned(["--selection", "best"])


def test_table_vi_shows_the_baselines_under_the_models_rule(tmp_path, capsys, tiny_bert_dir, duc_years):
    """A row fine-tuned with --selection ilp beside the baselines: the baseline unit scores LEAD and QUERY-SIM under
    both rules, results.json has 'query_sim@ilp' (QUERY-SIM (ILP), no published row) and every DUC row's rule, and
    Table VI names each row's rule, QUERY-SIM (ILP) right after QUERY-SIM."""
    from trainer_scripts.duc_evaluation import EvaluateArguments, evaluate

    out = tmp_path / "experiments"
    status, _, stderr = _run(capsys, "--duc_dirs", duc_years[2006], "--encoder", str(tiny_bert_dir), "--rows",
                             "qbert", "--folds", "2", "--seeds", "1", "--subprocess", "false", "--out", str(out),
                             *FAST, "--selection", "ilp")
    assert status == 0, stderr
    results = json.loads((out / "results.json").read_text())
    rows = results["rows"]
    assert {name: rows[name]["rule"] for name in rows} == {
        "lead": "duc", "lead@ilp": "ilp", "query_sim": "duc", "query_sim@ilp": "ilp", "oracle": "oracle",
        "qbert": "ilp"}
    assert rows["query_sim@ilp"]["system"] == "QUERY-SIM (ILP)" and rows["query_sim@ilp"]["published_row"] is None
    direct = tmp_path / "direct.json"
    evaluate(EvaluateArguments(dataset=[duc_years[2006]], baseline=["query-sim"], selection=["duc", "ilp"],
                               out=str(direct), quiet=True))
    capsys.readouterr()
    expected = json.loads(direct.read_text())["systems"]
    for variant, system in (("query_sim", "QUERY-SIM"), ("query_sim@ilp", "QUERY-SIM (ILP)")):
        assert rows[variant]["duc"]["2006"]["rouge_2"]["mean"] == expected[system]["2006"]["rouge_2_recall"]
    table = (out / "results.md").read_text().split("## Table VI")[1].split("\n## ")[0]
    lines = [line for line in table.splitlines() if line.startswith("| ")]
    assert lines[0].startswith("| Section | System | Rule | DUC 2006 R-1")
    named = [(line.split(" | ")[1], line.split(" | ")[2]) for line in lines[1:]]
    at = named.index(("**QUERY-SIM** (`query_sim`)", "greedy"))
    assert named[at + 1] == ("**QUERY-SIM (ILP)** (`query_sim@ilp`)", "ILP")
    assert ("**LEAD (ILP)** (`lead@ilp`)", "ILP") in named and ("**Q-BERT** (`qbert`)", "ILP") in named
    assert ("**ORACLE** (`oracle`)", "oracle") in named
    assert "sentences chosen by the ilp rule, the fine-tuned rows' (paper: the greedy rule" in table


def test_held_out_years_train_on_the_others_and_test_only_those(tmp_path, capsys, duc_years, tiny_bert_dir):
    """--test_years 2007: every seed trains on 2006 and tests on 2007; no unit tests 2006, the baselines score
    2007 only; a year not given, or --test_years with cluster folds, is one error line."""
    out = tmp_path / "experiments"
    argv = ["--duc_dirs", duc_years[2006], duc_years[2007], "--encoder", str(tiny_bert_dir), "--rows", "qbert",
            "--seeds", "42", "43", "--baselines", "true", "--out", str(out)]
    status, stdout, stderr = _run(capsys, *argv, "--test_years", "2007", "--dry_run", "--estimate", "false")
    assert status == 0 and "3 units, 3 to run" in stderr, stderr
    assert stdout.count("--test_year 2007") == 2 and "--test_year 2006" not in stdout, stdout
    assert stdout.count("evaluate_duc.py") == 1 and f"--dataset {duc_years[2006]} --baseline" not in stdout, stdout
    for extra, message in ((["--test_years", "2005"], "--test_years 2005: not among the given DUC years (2006, 2007)"),
                           (["--test_years", "2007", "--protocol", "kfold"], "--test_years chooses the held-out")):
        assert wikiref(["experiments", *argv, *extra, "--dry_run"]) == 2
        assert message in capsys.readouterr().err.strip().splitlines()[-1]
    assert not out.exists()
