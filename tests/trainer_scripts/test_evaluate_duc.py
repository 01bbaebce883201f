"""The DUC evaluation script end to end: fixture folders → converted years → baselines, summary files, DUC peer
folders and a Q-BERT model → Table VI's shape and a JSON file, scored by the `evaluate` module."""

import json
import subprocess
import sys
from pathlib import Path

import datasets
import pytest

from trainer_scripts import duc_evaluation, evaluate_duc
from trainer_scripts.cli import build_parser as build_wikiref_parser
from trainer_scripts.cli import main as wikiref_main
from trainer_scripts.evaluate_duc import main
from wikiref_dataset.baselines import baseline_summary
from wikiref_dataset.duc.reader import load_duc, read_reference
from wikiref_dataset.metrics import DUC_ROUGE_PATH
from wikiref_dataset.rouge import rouge

ROOT = Path(__file__).resolve().parents[2]
DUC = ROOT / "tests" / "fixtures" / "duc"
PEERS = DUC / "duc2006" / "NISTeval" / "ROUGE" / "peers"


@pytest.fixture(autouse=True)
def _datasets_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(tmp_path / "hf_cache"))


@pytest.fixture(scope="module")
def years(duc_years):
    return duc_years


def _expected(system_summaries, rows):
    """The DUC metric's numbers computed directly with the engine (official settings)."""
    rows = [row for row in rows if row["references"]]
    return rouge([system_summaries[row["topic_id"]] for row in rows], [row["references"] for row in rows])


def test_baselines_table_vi_end_to_end(years, tmp_path, capsys):
    output, saved = tmp_path / "results.json", tmp_path / "summaries.jsonl"
    assert main(["--dataset", years[2005], "--dataset", years[2006], "--dataset", years[2007], "--baseline", "all",
                 "--output", str(output), "--save-summaries", str(saved), "--quiet"]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert "-n 2 -x -m -2 4 -u -c 95 -r 1000 -f A -p 0.5 -t 0 -l 250" in lines[0]
    header = next(i for i, line in enumerate(lines) if line.startswith("Systems"))
    assert lines[header].split() == ["Systems", "Rule", "DUC", "2005", "DUC", "2006", "DUC", "2007"]
    assert lines[header + 1].split() == ["ROUGE-1", "ROUGE-2", "ROUGE-SU4"] * 3
    body = lines[header + 3:lines.index("", header)]
    assert [line.split()[:2] for line in body] == [["LEAD", "greedy"], ["QUERY-SIM", "greedy"], ["ORACLE", "oracle"]]
    assert lines[-1].startswith("Rule: how each row's sentences were chosen (greedy: the paper's DUC rule")
    assert "3 system(s) scored (9 system-year results" in captured.err

    results = json.loads(output.read_text())
    assert results["rules"] == {"LEAD": "duc", "QUERY-SIM": "duc", "ORACLE": "oracle"}
    assert results["datasets"]["2007"] == {"path": years[2007], "clusters": 2, "scored_clusters": 1}
    rows = list(load_duc(years[2006]))
    lead = {row["topic_id"]: baseline_summary("lead", row) for row in rows}
    expected = _expected(lead, rows).to_dict()
    got = results["systems"]["LEAD"]["2006"]
    assert got["clusters"] == 2
    assert {key: got[key] for key in expected} == expected
    # the table prints recall x100 with its interval
    cell = (f"{100 * got['rouge_2_recall']:.2f} [{100 * got['rouge_2_recall_ci_low']:.2f}-"
            f"{100 * got['rouge_2_recall_ci_high']:.2f}]")
    assert cell in body[0]

    # the saved summaries read back with --summaries give the same numbers
    capsys.readouterr()
    again = tmp_path / "again.json"
    assert main(["--dataset", years[2005], "--dataset", years[2006], "--dataset", years[2007],
                 "--summaries", str(saved), "--output", str(again), "--quiet"]) == 0
    assert json.loads(again.read_text())["systems"] == results["systems"]
    assert "rules" not in json.loads(again.read_text())  # summaries from a file: their rule is not known
    assert "Rule" not in capsys.readouterr().out.split()


def _watch_ilp(monkeypatch):
    """``select_ilp`` replaced by a rule that takes the lowest-scored sentence only, and the calls it got: on the tiny
    fixture clusters every rule takes every sentence, so the rows under ILP would not show whether it chose them."""
    from wikiref_dataset import selection

    calls = []

    def lowest(sentences, scores, max_words=250, **settings):
        calls.append(len(sentences))
        return [min(range(len(scores)), key=lambda index: (scores[index], -index))]

    monkeypatch.setattr(selection, "select_ilp", lowest)
    return calls


def test_the_baselines_under_the_models_rule_are_rows_of_their_own(years, tmp_path, capsys, monkeypatch):
    """--selection duc ilp: LEAD and QUERY-SIM under their own greedy rule keep their names, under ILP they are
    'LEAD (ILP)' and 'QUERY-SIM (ILP)', chosen by ILP from the same scores; ORACLE once, without a rule."""
    from wikiref_dataset.baselines import baseline_scores
    from wikiref_dataset.selection import ClusterSentences

    calls = _watch_ilp(monkeypatch)
    output, saved = tmp_path / "rules.json", tmp_path / "rules.jsonl"
    assert main(["--dataset", years[2006], "--baseline", "all", "--selection", "duc", "ilp", "--out", str(output),
                 "--save_summaries", str(saved), "--quiet"]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("Systems"))
    body = [line.split() for line in lines[header + 3:lines.index("", header)]]
    assert [row[:3] if row[1] == "(ILP)" else row[:2] for row in body] == [
        ["LEAD", "greedy"], ["LEAD", "(ILP)", "ILP"], ["QUERY-SIM", "greedy"], ["QUERY-SIM", "(ILP)", "ILP"],
        ["ORACLE", "oracle"]]
    results = json.loads(output.read_text())
    assert results["rules"] == {"LEAD": "duc", "LEAD (ILP)": "ilp", "QUERY-SIM": "duc", "QUERY-SIM (ILP)": "ilp",
                                "ORACLE": "oracle"}
    assert len(calls) == 4  # LEAD and QUERY-SIM on the two clusters
    summaries = {}
    for record in map(json.loads, saved.read_text().splitlines()):
        summaries.setdefault(record["system"], {})[record["topic_id"]] = record["summary"]
    for row in load_duc(years[2006]):
        cluster = ClusterSentences.from_row(row)
        scores = baseline_scores("query-sim", row)
        lowest = cluster.sentences[min(range(len(scores)), key=lambda index: (scores[index], -index))]
        assert summaries["QUERY-SIM (ILP)"][row["topic_id"]] == lowest
        assert summaries["QUERY-SIM"][row["topic_id"]] == baseline_summary("query-sim", row)  # the greedy rule's
    expected = _expected(summaries["QUERY-SIM (ILP)"], list(load_duc(years[2006]))).to_dict()
    got = results["systems"]["QUERY-SIM (ILP)"]["2006"]
    assert {key: got[key] for key in expected} == expected


def test_the_commands_metric_is_the_evaluate_module(years, tmp_path, capsys):
    """The command scores with the engine directly (evaluate imports torch and transformers); its numbers, intervals
    included, are those of the DUC ROUGE `evaluate` module on the same summaries."""
    import evaluate

    output, saved = tmp_path / "results.json", tmp_path / "summaries.jsonl"
    assert main(["--dataset", years[2006], "--baseline", "all", "--out", str(output), "--save_summaries", str(saved),
                 "--quiet"]) == 0
    results = json.loads(output.read_text())["systems"]
    module = evaluate.load(DUC_ROUGE_PATH)
    rows = [row for row in load_duc(years[2006]) if row["references"]]
    summaries = {}
    for line in saved.read_text().splitlines():
        record = json.loads(line)
        summaries.setdefault(record["system"], {})[record["topic_id"]] = record["summary"]
    assert set(summaries) == set(results) == {"LEAD", "QUERY-SIM", "ORACLE"}
    for system, by_topic in summaries.items():
        expected = module.compute(predictions=[by_topic[row["topic_id"]] for row in rows],
                                  references=[row["references"] for row in rows])
        assert results[system]["2006"] == {"clusters": len(rows), **expected}, system


def test_the_years_are_read_as_datasets_loads_them(years):
    """`load_years` reads the Parquet files itself (no `datasets` import): the same rows as `load_duc`."""
    (year,) = duc_evaluation.load_years([years[2006]])
    assert year.year == 2006 and year.rows == list(load_duc(years[2006]))


def test_duc_peer_folder(years, tmp_path, capsys):
    output = tmp_path / "peers.json"
    assert main(["--dataset", years[2005], "--dataset", years[2006], "--summaries", str(PEERS),
                 "--output", str(output), "--quiet"]) == 0
    table = capsys.readouterr().out
    peer_rows = [line.split() for line in table.splitlines() if line.startswith("peer")]
    assert [row[:2] for row in peer_rows] == [["peer", "1"], ["peer", "2"]]
    assert peer_rows[0][2:5] == ["-", "-", "-"]  # no peer summary for the 2005 topics: "-" as in Table VI
    results = json.loads(output.read_text())["systems"]
    assert results["peer 1"]["2005"] is None
    rows = list(load_duc(years[2006]))
    peer = {row["topic_id"]: read_reference(PEERS / f"{row['topic_id'][:-1]}.M.250.{row['topic_id'][-1]}.1")
            for row in rows}
    recall = _expected(peer, rows).averages["rouge_1"].recall
    assert results["peer 1"]["2006"]["rouge_1_recall"] == recall
    assert peer_rows[0][5] == f"{100 * recall:.2f}"


def test_summaries_jsonl_with_sentence_lists(years, tmp_path, capsys):
    path = tmp_path / "mine.jsonl"
    path.write_text(json.dumps({"topic_id": "d0601a", "summary": ["A harbor ferry sank.", "Fog."]}) + "\n"
                    + json.dumps({"topic_id": "D0602B", "summary": "Solar panels."}) + "\n")
    assert main(["--dataset", years[2006], "--summaries", str(path), "--quiet"]) == 0
    assert any(line.startswith("mine ") for line in capsys.readouterr().out.splitlines())


def test_partial_coverage_and_bad_input_are_errors(years, tmp_path, capsys):
    partial = tmp_path / "partial.jsonl"
    partial.write_text(json.dumps({"topic_id": "D0601A", "summary": "A ferry sank."}) + "\n")
    assert main(["--dataset", years[2006], "--summaries", str(partial), "--quiet"]) == 2
    assert "system 'partial': no summary for 1 of the 2 DUC 2006 topics (D0602B)" in capsys.readouterr().err

    elsewhere = tmp_path / "elsewhere.jsonl"  # summaries of another year's topics: never a row of "-" with exit 0
    elsewhere.write_text(json.dumps({"topic_id": "D0701A", "summary": "A ferry sank."}) + "\n")
    assert main(["--dataset", years[2006], "--summaries", str(elsewhere), "--quiet"]) == 2
    captured = capsys.readouterr()
    assert not captured.out and captured.err.count("\n") == 1
    assert (f"{elsewhere}: system 'elsewhere': none of its 1 summaries is for a topic of DUC 2006 (e.g. D0701A); "
            "give the year its summaries are for") in captured.err

    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"topic_id": "D0601A", "summary": "x"}\n{not json\n')
    assert main(["--dataset", years[2006], "--summaries", str(broken)]) == 2
    assert f"{broken}:2: not valid JSON" in capsys.readouterr().err

    assert main(["--dataset", str(tmp_path), "--baseline", "lead"]) == 2
    assert "not a converted DUC dataset" in capsys.readouterr().err

    import pyarrow as pa
    import pyarrow.parquet as pq

    other = tmp_path / "wikiref"  # another dataset's folder: README.md and data/test-*.parquet, other columns
    (other / "data").mkdir(parents=True)
    (other / "README.md").write_text("---\n---\n")
    pq.write_table(pa.table({"query": [["A"]], "document": ["x"], "summary": ["y"]}),
                   other / "data" / "test-00000-of-00001.parquet")
    assert main(["--dataset", str(other), "--baseline", "lead"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "KeyError" not in err
    assert (f"{other}: not a converted DUC year: its data has no 'topic_id', 'year', 'documents', 'references' "
            "columns (another dataset's folder?") in err

    assert main(["--dataset", years[2006], "--dataset", years[2006], "--baseline", "lead"]) == 2
    assert "DUC 2006 is already given by" in capsys.readouterr().err

    assert main(["--dataset", years[2006], "--summaries", str(tmp_path / "nothing.jsonl")]) == 2
    assert "no such file or folder" in capsys.readouterr().err

    assert main(["--dataset", years[2006], "--model", str(tmp_path / "no-model")]) == 2
    assert "no-model: no such folder, and not a Hub id (org/name)" in capsys.readouterr().err


def _tiny_qbert(folder):
    from transformers import BertTokenizer

    from modeling_qbert import QBertConfig, QBertForSentenceScoring, QBertProcessor

    words = "the a of harbor ferry sank fog barge captain inquiry solar panels state subsidies".split()
    tokenizer = BertTokenizer(vocab={token: i for i, token in enumerate(
        ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", ",", *words])})
    config = QBertConfig(vocab_size=64, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                         intermediate_size=32, max_position_embeddings=128)
    processor = QBertProcessor.from_config(tokenizer, config, max_query_length=32)
    model = QBertForSentenceScoring(config)
    model.resize_token_embeddings(len(processor.tokenizer))
    model.save_pretrained(folder)
    processor.save_pretrained(folder)


def test_a_model_beside_the_baselines_under_its_rule_and_the_greedy_one(years, tmp_path, capsys, monkeypatch):
    """--model with --baseline, a model saved with the ILP rule: the model's row under ILP keeps its name, under the
    paper's greedy rule it is 'MODEL (greedy)', chosen from the scores it gave once (what the pipeline with the
    greedy rule gives); QUERY-SIM stands under both rules beside it."""
    import json as json_module

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    folder = tmp_path / "ilp-qbert"
    _tiny_qbert(folder)
    config = json_module.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json_module.dumps({**config, "cluster_selection": "ilp"}))
    calls = _watch_ilp(monkeypatch)
    scored = []  # the model scores the sentences once, under its own rule; the greedy row reuses the scores
    model_summaries = duc_evaluation.model_summaries
    monkeypatch.setattr(duc_evaluation, "model_summaries", lambda *args, **kwargs: scored.append(
        kwargs.get("rule")) or model_summaries(*args, **kwargs))
    output, saved = tmp_path / "model.json", tmp_path / "model.jsonl"
    assert main(["--dataset", years[2006], "--baseline", "query-sim", "--model", str(folder), "--out", str(output),
                 "--save_summaries", str(saved), "--quiet"]) == 0
    assert scored == ["ilp"]
    results = json.loads(output.read_text())
    assert results["rules"] == {"QUERY-SIM": "duc", "QUERY-SIM (ILP)": "ilp", "ilp-qbert": "ilp",
                                "ilp-qbert (greedy)": "duc"}
    assert len(calls) == 4  # QUERY-SIM (ILP) and the model, each on the two clusters
    table = capsys.readouterr().out
    assert any(line.split()[:3] == ["ilp-qbert", "(greedy)", "greedy"] for line in table.splitlines())
    summaries = {}
    for record in map(json.loads, saved.read_text().splitlines()):
        summaries.setdefault(record["system"], {})[record["topic_id"]] = record["summary"]
    monkeypatch.undo()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    summarize = duc_evaluation.load_model_pipeline(folder)
    rows = list(load_duc(years[2006]))
    assert summaries["ilp-qbert (greedy)"] == duc_evaluation.model_summaries(summarize, rows, rule="duc")
    scores: dict = {}
    duc_evaluation.model_summaries(summarize, rows, scores=scores, rule="duc")
    assert duc_evaluation.summaries_from_scores(rows, scores, "mmr") == duc_evaluation.model_summaries(
        summarize, rows, rule="mmr")


def test_the_model_the_baselines_and_summaries_in_one_table(years, tmp_path, monkeypatch):
    """Table VI's shape: `wikiref duc evaluate` with --baseline, --model and --summaries, run as a user runs it (the
    console script, a fresh process): one table and one JSON file with the baselines' rows, the model's and the
    summaries' (scored as they are, no rule), each with the numbers it has alone; a summaries system named as a
    baseline's row is one error line."""
    import os

    folder = tmp_path / "tiny-qbert"
    _tiny_qbert(folder)
    summaries = tmp_path / "mine.jsonl"
    summaries.write_text("".join(json.dumps({"topic_id": topic, "summary": "A ferry sank in the harbor fog.",
                                             "system": "MINE"}) + "\n" for topic in ("D0601A", "D0602B")))
    script = Path(sys.executable).with_name("wikiref")
    command = [str(script)] if script.is_file() else [sys.executable, "-m", "trainer_scripts.cli"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", "HF_DATASETS_CACHE": str(tmp_path / "hf")}
    together = tmp_path / "together.json"
    completed = subprocess.run([*command, "duc", "evaluate", "--dataset", years[2006], "--baseline", "lead",
                                "query-sim", "--model", str(folder), "--summaries", str(summaries), "--out",
                                str(together), "--quiet"], env=env, capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, completed.stderr[-3000:]
    table = [line.split()[0] for line in completed.stdout.splitlines() if line.split()[:1]
             and line.split()[0] in ("LEAD", "QUERY-SIM", "tiny-qbert", "MINE")]
    assert table == ["LEAD", "QUERY-SIM", "tiny-qbert", "MINE"]
    results = json.loads(together.read_text())
    assert list(results["systems"]) == ["LEAD", "QUERY-SIM", "tiny-qbert", "MINE"]
    assert results["rules"] == {"LEAD": "duc", "QUERY-SIM": "duc", "tiny-qbert": "duc"}  # summaries: no rule
    alone = tmp_path / "alone.json"
    assert main(["--dataset", years[2006], "--summaries", str(summaries), "--out", str(alone), "--quiet"]) == 0
    assert json.loads(alone.read_text())["systems"]["MINE"] == results["systems"]["MINE"]
    assert main(["--dataset", years[2006], "--baseline", "lead", "query-sim", "--out", str(alone), "--quiet"]) == 0
    assert {name: results["systems"][name] for name in ("LEAD", "QUERY-SIM")} == json.loads(alone.read_text())["systems"]

    summaries.write_text(summaries.read_text().replace('"MINE"', '"LEAD"'))
    completed = subprocess.run([*command, "duc", "evaluate", "--dataset", years[2006], "--baseline", "lead",
                                "--summaries", str(summaries), "--quiet"], env=env, capture_output=True, text=True,
                               timeout=300)
    assert completed.returncode == 2 and completed.stderr.count("\n") == 1
    assert "system 'LEAD' has the name of a row of --baseline/--model" in completed.stderr


def test_model_folder(years, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    folder = tmp_path / "tiny-qbert"
    _tiny_qbert(folder)
    saved = tmp_path / "model.jsonl"
    assert main(["--dataset", years[2006], "--model", str(folder), "--save-summaries", str(saved), "--quiet"]) == 0
    assert any(line.startswith("tiny-qbert ") for line in capsys.readouterr().out.splitlines())
    summaries = [json.loads(line) for line in saved.read_text().splitlines()]
    assert [item["topic_id"] for item in summaries] == ["D0601A", "D0602B"]
    rows = list(load_duc(years[2006]))
    for item, row in zip(summaries, rows):
        sentences = {sentence for document in row["documents"] for sentence in document["sentences"]}
        assert set(item["summary"].split("\n")) <= sentences  # extractive, across the cluster


def test_wikiref_duc_evaluate_is_the_same_command(years, capsys):
    assert wikiref_main(["duc", "evaluate", "--dataset", years[2006], "--baseline", "lead", "oracle", "--quiet"]) == 0
    through_cli = capsys.readouterr().out
    assert main(["--dataset", years[2006], "--baseline", "lead", "oracle", "--quiet"]) == 0
    assert capsys.readouterr().out == through_cli


def test_runs_as_a_script():
    result = subprocess.run([sys.executable, str(ROOT / "trainer_scripts" / "evaluate_duc.py"), "--help"],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0 and "--baseline" in result.stdout


def test_format_table_marks_missing_years():
    year = duc_evaluation.DucYear(path=Path("x"), year=2005, rows=[])
    evaluation = duc_evaluation.Evaluation(settings="", years=[year], scores={"S": {2005: None}})
    assert duc_evaluation.format_table(evaluation).splitlines()[-1].split() == ["S", "-", "-", "-"]


def test_a_baseline_has_one_name_in_every_spelling(years, capsys):
    """--baseline query_sim (the experiments' row name) and QUERY-SIM (the tables') are query-sim."""
    from wikiref_dataset.baselines import baseline_key

    assert [baseline_key(name) for name in ("query_sim", "QUERY-SIM", " Lead ", "oracle")] == [
        "query-sim", "query-sim", "lead", "oracle"]
    assert main(["--dataset", years[2006], "--baseline", "query_sim", "LEAD", "--quiet"]) == 0
    rows = [line.split()[0] for line in capsys.readouterr().out.splitlines() if line.startswith(("QUERY", "LEAD"))]
    assert sorted(rows) == ["LEAD", "QUERY-SIM"]
    from trainer_scripts.finetuning import DucArguments

    assert DucArguments(baselines=["query_sim", "lead", "QUERY-SIM"]).baseline_names == ["query-sim", "lead"]


def test_quiet_and_wait_are_flags_in_the_wikiref_commands():
    """-q and --wait take no value in `wikiref duc evaluate`, `qfs evaluate` and `experiments`, as in every other
    subcommand: a positional argument after -q stays positional."""
    parser = build_wikiref_parser()
    assert parser.parse_args(["duc", "evaluate", "--dataset", "a", "--baseline", "lead", "-q"]).quiet is True
    args = parser.parse_args(["experiments", "--duc_dirs", "d", "--out", "o", "--wait", "-q"])
    assert args.wait is True and args.quiet is True
    with pytest.raises(SystemExit):
        parser.parse_args(["duc", "evaluate", "--dataset", "a", "--baseline", "lead", "-q", "false"])


@pytest.mark.parametrize("argv, datasets", [
    (["--dataset", "a", "--dataset", "b", "--baseline", "lead", "oracle", "--quiet"], ["a", "b"]),
    (["--dataset", "a", "b", "--summaries", "x.jsonl", "--save-summaries", "s.jsonl", "--output", "o.json"],
     ["a", "b"]),
    (["--dataset", "a", "--model", "m", "--save_summaries", "s.jsonl", "--quiet"], ["a"]),
    (["--dataset", "a", "--baseline", "all"], ["a"]),
    (["--dataset", "a", "--baseline", "query-sim", "--model", "m", "--selection", "duc", "ilp"], ["a"]),
])
def test_wikiref_duc_evaluate_parses_like_the_hf_argument_parser(argv, datasets):
    """One set of options, `EvaluateArguments`: the script parses it with HfArgumentParser, `wikiref duc evaluate`
    declares the same fields on its argparse subcommand; both give the same dataclass."""
    (from_script,) = evaluate_duc.build_parser().parse_args_into_dataclasses(args=argv)
    parser = build_wikiref_parser()
    from_cli = duc_evaluation.to_arguments(parser.parse_args(["duc", "evaluate", *argv]))
    assert isinstance(from_script, duc_evaluation.EvaluateArguments)
    assert from_cli == from_script
    assert from_script.dataset == datasets


@pytest.mark.parametrize("argv, message", [
    (["--baseline", "lead"], "--dataset is required"),
    (["--dataset", "{year}", "--baseline", "foo"], "--baseline: unknown 'foo': choose from lead, query-sim, oracle, all"),
    (["--dataset", "{year}"], "give the systems to score: --baseline, --summaries, --model (several together: one "
                              "table)"),
    (["--dataset", "{year}", "--baseline", "lead", "--selection", "duc", "best"],
     "--selection: unknown selection rule 'best'; choose one of duc, mmr, ilp"),
    (["--dataset", "{year}", "--summaries", "s.jsonl", "--selection", "ilp"],
     "--selection chooses the sentences of the baselines and the model; summaries given with --summaries are "
     "scored as they are"),
])
def test_bad_values_exit_2_with_one_line(years, capsys, argv, message):
    argv = [value.format(year=years[2006]) for value in argv]
    assert main(argv) == 2
    assert wikiref_main(["duc", "evaluate", *argv]) == 2
    lines = capsys.readouterr().err.splitlines()
    what = lines[0].split("error: ", 1)[1]
    assert lines == [f"evaluate_duc.py: error: {what}", f"wikiref duc evaluate: error: {what}"] and message in what


def test_unknown_option_is_one_line(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--dataset", "a", "--baselines", "lead"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "evaluate_duc.py: error:" in err and "'--baselines'" in err


def test_quiet_hides_the_models_loading_bar(years, tmp_path):
    """`wikiref duc evaluate --model DIR -q` in a fresh process, as a user runs it: no "Loading weights" bar (nor any
    progress bar) on stderr; without -q the bar is there."""
    import os

    folder = tmp_path / "tiny-qbert"
    _tiny_qbert(folder)
    argv = [sys.executable, "-m", "trainer_scripts.cli", "duc", "evaluate", "--dataset", years[2006], "--model",
            str(folder)]
    environment = {**os.environ, "HF_HUB_OFFLINE": "1"}
    plain = subprocess.run(argv, capture_output=True, text=True, timeout=300, env=environment)
    quiet = subprocess.run([*argv, "-q"], capture_output=True, text=True, timeout=300, env=environment)
    assert plain.returncode == 0 and quiet.returncode == 0, plain.stderr[-2000:] + quiet.stderr[-2000:]
    assert "Loading weights" in plain.stderr
    assert "Loading weights" not in quiet.stderr and "it/s" not in quiet.stderr, quiet.stderr
    assert quiet.stdout == plain.stdout
