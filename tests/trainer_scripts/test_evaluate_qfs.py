"""`wikiref qfs evaluate`: baselines within each benchmark's budget, system summaries, the table and its JSON, errors."""

import json

import pytest

from trainer_scripts.cli import main
from wikiref_dataset.baselines import sentences_cut
from wikiref_dataset.qfs import convert_benchmark, read_converted
from wikiref_dataset.rouge import count_words


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    """A Debatepedia release of four lines (two sentences of more than ten words) and a QMSum release of one meeting
    with a general and a specific query, converted."""
    root = tmp_path_factory.mktemp("qfs")
    data = root / "debatepedia" / "data"
    data.mkdir(parents=True)
    contents = ["taxes on the rich are low in most countries of the world today . yet the poor pay more . <eos>",
                "guns protect people who live far from any police station in rural areas . <eos>",
                "the death penalty deters murder . studies disagree on it . <eos>",
                "school uniforms reduce bullying among children . <eos>"]
    (data / "valid_content").write_text("".join(f"<s> {line}\n" for line in contents))
    (data / "valid_query").write_text("".join(f"<s> {q} ? <eos>\n" for q in ("taxes", "guns", "death penalty",
                                                                             "uniforms")))
    (data / "valid_summary").write_text("<s> the poor pay more <eos>\n<s> guns protect rural people <eos>\n"
                                        "<s> penalty deters murder <eos>\n<s> uniforms reduce bullying <eos>\n")
    meeting = {"topic_list": [], "general_query_list": [{"query": "Summarize the meeting", "answer":
                                                         "The team chose a yellow remote. They will meet again."}],
               "specific_query_list": [{"query": "What colour?", "answer": "Yellow, because it is easy to find.",
                                        "relevant_text_span": [["1", "2"]]}],
               "meeting_transcripts": [{"speaker": "A", "content": "Hello everyone . Let 's begin ."},
                                       {"speaker": "B", "content": "I think the remote should be yellow ."},
                                       {"speaker": "C", "content": "Yes , yellow is easy to find ."},
                                       {"speaker": "A", "content": "We will meet again tomorrow ."}]}
    (root / "qmsum" / "data" / "ALL" / "val").mkdir(parents=True)
    (root / "qmsum" / "data" / "ALL" / "val" / "ES2002a.json").write_text(json.dumps(meeting))
    convert_benchmark("debatepedia", root / "debatepedia", root / "debatepedia-converted")
    convert_benchmark("qmsum", root / "qmsum", root / "qmsum-converted")
    return root


def test_baselines_table_json_and_budgets(converted, tmp_path, capsys):
    out, saved = tmp_path / "table.json", tmp_path / "summaries.jsonl"
    assert main(["qfs", "evaluate", "--dataset", str(converted / "debatepedia-converted"), "--baseline", "all",
                 "--out", str(out), "--save-summaries", str(saved), "-q"]) == 0
    printed = capsys.readouterr().out
    assert "debatepedia: ROUGE F1 x100 as its papers score it (ROUGE-1.5.5 -c 95 -r 1000 -n 2 -m -a, F1" in printed
    assert "debatepedia/validation (4 queries)" in printed and "ROUGE-L F1" in printed
    table = json.loads(out.read_text())
    assert list(table["systems"]) == ["LEAD", "QUERY-SIM", "ORACLE"]
    lead = table["systems"]["LEAD"]["debatepedia/validation"]
    assert lead["queries"] == 4 and {"rouge_1_f", "rouge_1_f_ci_low", "rouge_1_recall", "rouge_l_f"} <= set(lead)
    assert table["datasets"]["debatepedia/validation"]["budgets"] == {"": 10}
    summaries = [json.loads(line) for line in saved.read_text().splitlines()]
    assert len(summaries) == 12 and all(count_words(item["summary"]) <= 10 for item in summaries)
    by_system = {(item["system"], item["topic_id"]): item["summary"] for item in summaries}
    # LEAD: the first sentence, cut to the budget; ORACLE: a candidate cut to the budget (the first sentence of
    # valid/1 has 15 words)
    assert by_system[("LEAD", "valid/1")] == "taxes on the rich are low in most countries of"
    assert by_system[("ORACLE", "valid/1")] == "yet the poor pay more ."
    assert by_system[("ORACLE", "valid/2")] == "guns protect people who live far from any police station"
    # the saved summaries score the same as the baselines did
    assert main(["qfs", "evaluate", "--dataset", str(converted / "debatepedia-converted"), "--summaries", str(saved),
                 "--out", str(tmp_path / "again.json"), "-q"]) == 0
    again = json.loads((tmp_path / "again.json").read_text())["systems"]
    assert again["LEAD"] == table["systems"]["LEAD"] and again["ORACLE"] == table["systems"]["ORACLE"]


def test_the_baselines_under_another_rule_are_rows_of_their_own(converted, tmp_path, capsys, monkeypatch):
    """--selection duc ilp within Debatepedia's 10 words: LEAD under its own greedy rule and under ILP, each row named
    with its rule in the table and the JSON. ILP is replaced by a rule that takes the lowest-scored sentence (on
    these short arguments ILP chooses as the greedy rule does), so the ILP row shows it went through the rule."""
    from wikiref_dataset import selection

    monkeypatch.setattr(selection, "select_ilp", lambda sentences, scores, max_words=250, **settings: [
        min(range(len(scores)), key=lambda index: (scores[index], -index))])
    out, saved = tmp_path / "rules.json", tmp_path / "rules.jsonl"
    assert main(["qfs", "evaluate", "--dataset", str(converted / "debatepedia-converted"), "--baseline", "lead",
                 "oracle", "--selection", "duc", "ilp", "--out", str(out), "--save-summaries", str(saved), "-q"]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("System"))
    assert lines[header].split()[:2] == ["System", "Rule"]
    rows = [line.split() for line in lines[header + 2:header + 5]]
    assert [rows[0][:2], rows[1][:3], rows[2][:2]] == [["LEAD", "greedy"], ["LEAD", "(ILP)", "ILP"],
                                                       ["ORACLE", "oracle"]]
    assert lines[-1].startswith("Rule: how each row's sentences were chosen")
    table = json.loads(out.read_text())
    assert table["rules"] == {"LEAD": "duc", "LEAD (ILP)": "ilp", "ORACLE": "oracle"}
    by_system = {(item["system"], item["topic_id"]): item["summary"]
                 for item in map(json.loads, saved.read_text().splitlines())}
    assert by_system[("LEAD", "valid/1")] == "taxes on the rich are low in most countries of"
    assert by_system[("LEAD (ILP)", "valid/1")] == "yet the poor pay more ."
    assert main(["qfs", "evaluate", "--dataset", str(converted / "debatepedia-converted"), "--baseline", "lead",
                 "--selection", "greedy", "-q"]) == 2
    assert capsys.readouterr().err.strip() == ("wikiref qfs evaluate: error: --selection: unknown selection rule "
                                               "'greedy'; choose one of duc, mmr, ilp")


def test_qmsum_budget_by_query_type_and_recall(converted, tmp_path, capsys):
    out = tmp_path / "qmsum.json"
    assert main(["qfs", "evaluate", "--dataset", str(converted / "qmsum-converted"), "--baseline", "oracle",
                 "--value", "recall", "--out", str(out), "-q"]) == 0
    assert "ROUGE-1 R" in capsys.readouterr().out
    table = json.loads(out.read_text())
    assert table["datasets"]["qmsum/validation"]["budgets"] == {"": 65, "specific": 65, "general": 110}
    assert table["systems"]["ORACLE"]["qmsum/validation"]["rouge_1_recall"] > 0.5


def test_sentences_cut_keeps_short_sentences():
    row = {"topic_id": "t", "documents": [{"sentences": ["one two three", "a b c d e f g h i j k l"]}]}
    assert sentences_cut(row, 5)["documents"][0]["sentences"] == ["one two three", "a b c d e"]
    assert row["documents"][0]["sentences"][1] == "a b c d e f g h i j k l"  # the row itself is not changed


def test_bad_input_is_one_line(converted, tmp_path, capsys):
    dataset = str(converted / "debatepedia-converted")
    partial = tmp_path / "partial.jsonl"
    partial.write_text(json.dumps({"topic_id": "valid/1", "summary": "the poor pay more"}) + "\n"
                       + json.dumps({"topic_id": "valid/99", "summary": "unknown"}) + "\n")
    cases = [
        (["--baseline", "lead", "--summaries", str(partial)],
         "give --summaries alone, or --baseline with --model (got --baseline, --summaries)"),
        (["--baseline", "best"], "--baseline: unknown 'best'"),
        (["--baseline", "lead", "--split", "train"], "no split 'train'; it has validation"),
        (["--baseline", "lead", "--value", "precision"], "--value: expected one of f, recall"),
        (["--summaries", str(partial)], "system 'partial': no summary for 3 of the 4 debatepedia/validation queries"),
        (["--summaries", str(tmp_path / "absent.jsonl")], "absent.jsonl: no such file"),
    ]
    for options, message in cases:
        assert main(["qfs", "evaluate", "--dataset", dataset, *options, "-q"]) == 2, options
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1, (options, err)
    assert main(["qfs", "evaluate", "--dataset", str(tmp_path), "--baseline", "lead"]) == 2
    assert "not a converted benchmark" in capsys.readouterr().err
    assert len(read_converted(dataset, "validation")) == 4


def test_a_qbert_model_summarizes_within_the_budget(converted, tiny_qbert_dir, tmp_path, capsys):
    """--model: the Q-BERT pipeline scores every sentence of the meeting (windows over a long document), the DUC rule
    picks within the query type's budget, and the summary is cut to it."""
    out, saved = tmp_path / "model.json", tmp_path / "model.jsonl"
    assert main(["qfs", "evaluate", "--dataset", str(converted / "qmsum-converted"), "--model", str(tiny_qbert_dir),
                 "--out", str(out), "--save-summaries", str(saved), "-q"]) == 0
    assert tiny_qbert_dir.name in capsys.readouterr().out
    scores = json.loads(out.read_text())["systems"][tiny_qbert_dir.name]["qmsum/validation"]
    assert scores["queries"] == 2 and 0 < scores["rouge_1_f"] <= 1
    summaries = {item["topic_id"]: item["summary"] for item in map(json.loads, saved.read_text().splitlines())}
    assert set(summaries) == {"ES2002a/general-0", "ES2002a/specific-0"}
    sentences = read_converted(converted / "qmsum-converted", "validation")[0]["documents"][0]["sentences"]
    for summary in summaries.values():  # whole sentences of the meeting, the last one perhaps cut
        lines = summary.split("\n")
        assert all(line in sentences for line in lines[:-1]) and any(s.startswith(lines[-1]) for s in sentences)
    assert count_words(summaries["ES2002a/specific-0"]) <= 65
