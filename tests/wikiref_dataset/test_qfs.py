"""QMSum, SQuALITY and Debatepedia converters: releases in their published layout (written here, and the real ones in
../shared/realdata/qfs when present), malformed records, the converted folder, `load_dataset` and the command."""

import json
import shutil
from pathlib import Path

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from wikiref_dataset.cli import main
from wikiref_dataset.process.folders import OutputFolderError
from wikiref_dataset.qfs import QfsError, convert_benchmark, load_split, read_benchmark, read_converted
from wikiref_dataset.qfs.common import benchmark_features, converted_splits
from wikiref_dataset.qfs.qmsum import clean_turn, meeting_domain

REAL = Path(__file__).resolve().parents[3] / "shared" / "realdata" / "qfs"


@pytest.fixture(autouse=True)
def _datasets_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(tmp_path / "hf_cache"))


# ---- QMSum ---------------------------------------------------------------------------------------------------------


def _meeting(turns, general=(), specific=()):
    return {"topic_list": [{"topic": "t", "relevant_text_span": [["0", str(len(turns) - 1)]]}],
            "general_query_list": [{"query": q, "answer": a} for q, a in general],
            "specific_query_list": [{"query": q, "answer": a, "relevant_text_span": s} for q, a, s in specific],
            "meeting_transcripts": [{"speaker": s, "content": c} for s, c in turns]}


@pytest.fixture
def qmsum(tmp_path):
    root = tmp_path / "QMSum"
    train, val = root / "data" / "ALL" / "train", root / "data" / "ALL" / "val"
    train.mkdir(parents=True)
    val.mkdir(parents=True)
    turns = [("Project Manager", "Okay . {vocalsound} Let 's start . The T_V_ remote is first ."),
             ("Marketing", "{disfmarker} {vocalsound}"),
             ("Industrial Designer", "I looked at L_C_D_s . They cost too much ."),
             ("Project Manager", "So we drop them .")]
    (train / "ES2004a.json").write_text(json.dumps(_meeting(
        turns, general=[("Summarize the whole meeting.", "They discussed the remote.")],
        specific=[("What did the designer say about screens?", "Too expensive.", [["2", "3"]]),
                  ("Bad spans?", "Answer.", [["x", "1"], ["3", "9"], ["2", "1"]]),
                  ("Overlap?", "Answer two.", [["2", "3"], ["0", "2"]]),
                  ("", "No query text.", [["0", "1"]])])), encoding="utf-8")
    (train / "broken.json").write_text("{not json", encoding="utf-8")
    (val / "Bed002.json").write_text(json.dumps(_meeting(
        [("Grad A", "OK , we 're on ."), ("Professor B", "Good . Let 's go on .")],
        general=[("Summarize the meeting", "A short meeting.")])), encoding="utf-8")
    return root


def test_clean_turn_and_domain():
    assert clean_turn("The T_V_ and L_C_D_s {disfmarker} work , uh {vocalsound} .") == "The TV and LCDs work , uh ."
    assert clean_turn("The T_V_ {gap} .", keep_markup=True) == "The T_V_ {gap} ."
    assert [meeting_domain(name) for name in ("Bed002", "ES2004a", "IS1002b", "covid_4", "education_2")] == \
        ["academic", "product", "product", "committee", "committee"]


def test_qmsum_rows_sentences_speakers_and_spans(qmsum):
    rows, stats = read_benchmark("qmsum", qmsum)
    assert list(rows) == ["train", "validation"]
    by_id = {row["topic_id"]: row for row in rows["train"]}
    assert list(by_id) == ["ES2004a/general-0", "ES2004a/specific-0", "ES2004a/specific-1", "ES2004a/specific-2"]
    [document] = by_id["ES2004a/general-0"]["documents"]
    assert document["sentences"] == ["Okay .", "Let 's start .", "The TV remote is first .", "I looked at LCDs .",
                                     "They cost too much .", "So we drop them ."]
    assert document["turns"] == [0, 0, 0, 2, 2, 3]  # turn 1 held only tags: no sentence, its index kept reserved
    assert document["speakers"][3:] == ["Industrial Designer"] * 2 + ["Project Manager"]
    specific = by_id["ES2004a/specific-0"]
    assert specific["answer_spans"] == [{"start": 2, "end": 3}]
    assert specific["answer_sentences"] == [3, 4, 5]
    assert specific["query_type"] == "specific" and specific["domain"] == "product"
    assert specific["references"] == ["Too expensive."] and specific["query"] == ["What did the designer say about screens?"]
    assert by_id["ES2004a/general-0"]["answer_sentences"] == [] and by_id["ES2004a/specific-1"]["answer_spans"] == []
    assert by_id["ES2004a/specific-2"]["answer_spans"] == [{"start": 2, "end": 3}, {"start": 0, "end": 2}]
    assert rows["validation"][0]["domain"] == "academic"
    problems = stats.problems
    assert problems["unreadable meeting file (skipped)"][0].startswith("train/broken.json")
    assert problems["span not two integers (dropped)"] == ["train/ES2004a.json: specific query 1: ['x', '1']"]
    assert problems["span out of range or reversed (dropped)"] == [
        "train/ES2004a.json: specific query 1: [3, 9] of 4 turns", "train/ES2004a.json: specific query 1: [2, 1] of 4 turns"]
    assert problems["spans overlapping or out of order (kept)"] == ["train/ES2004a.json: specific query 2"]
    assert problems["query without text or answer (skipped)"] == ["train/ES2004a.json: specific query 3"]
    assert stats.rows == {"train": 4, "validation": 1}
    assert stats.notes["turns without text once tags are removed (no sentence)"] == 1
    summary = stats.summary()
    assert "train: 4 queries, 1 documents, 6 sentences, 4 reference summaries (from data/ALL/train/ (2 meetings))" \
        in summary and "span not two integers (dropped): 1" in summary


def test_qmsum_split_choice_and_bad_release(qmsum, tmp_path):
    rows, _ = read_benchmark("qmsum", qmsum, splits=["validation"])
    assert list(rows) == ["validation"]
    with pytest.raises(QfsError, match="no test split; the release holds train, validation"):
        read_benchmark("qmsum", qmsum, splits=["test"])
    with pytest.raises(QfsError, match="not a QMSum release"):
        read_benchmark("qmsum", tmp_path)
    with pytest.raises(QfsError, match="no such folder"):
        read_benchmark("qmsum", tmp_path / "absent")
    with pytest.raises(QfsError, match="unknown benchmark 'duc'"):
        read_benchmark("duc", qmsum)


# ---- SQuALITY ------------------------------------------------------------------------------------------------------


def _story(passage, questions):
    return json.dumps({"metadata": {"passage_id": passage, "uid": "u", "license": "Gutenberg"},
                       "document": "A Title\n \n\n By An Author\n \n \n The ship landed. Everyone cheered!\n \n It left.",
                       "questions": [{"question_text": text, "question_number": number,
                                      "responses": [{"worker_id": str(w), "uid": f"w{w}", "response_text": f"\n{answer} By writer {w}.\n"}
                                                    for w, answer in enumerate(answers)]}
                                     for number, (text, answers) in enumerate(questions, 1)]})


@pytest.fixture
def squality(tmp_path):
    root = tmp_path / "SQuALITY"
    old, new = root / "data" / "v1-2" / "txt", root / "data" / "v1-3" / "txt"
    old.mkdir(parents=True)
    new.mkdir(parents=True)
    five = [("What is the plot of the story?", ["A ship lands."] * 4)] + [(f"Question {n}?", ["Answer."] * 4)
                                                                        for n in range(2, 6)]
    (old / "dev.jsonl").write_text(_story("1", five) + "\n")
    (new / "train.jsonl").write_text(_story("100", five) + "\n" + "[1, 2]\n")
    three = five[:2] + [("", ["x"] * 4), ("Who?", ["Someone."] * 3)]
    (new / "dev.jsonl").write_text(_story("200", three) + "\n")
    return root


def test_squality_rows_newest_version_and_problems(squality):
    rows, stats = read_benchmark("squality", squality)
    assert list(rows) == ["train", "validation"]
    first = rows["train"][0]
    assert first["topic_id"] == "100/q1" and first["query"] == ["What is the plot of the story?"]
    assert first["references"] == [f"A ship lands.\nBy writer {w}." for w in range(4)]  # one sentence per line
    assert first["reference_workers"] == ["0", "1", "2", "3"] and first["question_number"] == 1
    assert first["documents"][0]["sentences"] == ["A Title", "By An Author", "The ship landed.", "Everyone cheered!",
                                                  "It left."]
    assert [row["topic_id"] for row in rows["validation"]] == ["200/q1", "200/q2", "200/q4"]
    assert stats.problems["unreadable story line (skipped)"] == ["train.jsonl:2: not a JSON object but list"]
    assert stats.problems["question without text or answer (skipped)"] == ["dev.jsonl:1 (story 200): question 3"]
    assert stats.problems["question without four answers (kept)"] == ["dev.jsonl:1 (story 200): question 4: 3"]
    assert stats.problems["story whose questions are not numbered 1-5 (kept)"] == ["dev.jsonl:1 (story 200): [1, 2, 4]"]
    assert stats.released_files["validation"] == ["data/v1-3/txt/dev.jsonl"]
    older, _ = read_benchmark("squality", squality, version="v1-2")
    assert list(older) == ["validation"] and older["validation"][0]["topic_id"] == "1/q1"
    with pytest.raises(QfsError, match="no version 'v9'; the release has v1-2, v1-3"):
        read_benchmark("squality", squality, version="v9")
    with pytest.raises(QfsError, match="squality: .*keep_markup"):
        read_benchmark("squality", squality, keep_markup=True)


# ---- Debatepedia ---------------------------------------------------------------------------------------------------


@pytest.fixture
def debatepedia(tmp_path):
    data = tmp_path / "debatepedia" / "data"
    data.mkdir(parents=True)
    (data / "valid_content").write_text("<s> taxes are low . yet the poor pay more . <eos>\n<s> <eos>\n"
                                        "<s> guns protect people . <eos>\n")
    (data / "valid_query").write_text("<s> taxes : are they fair ? <eos>\n<s> empty : ? <eos>\n"
                                      "<s> guns : do they protect ? <eos>\n")
    (data / "valid_summary").write_text("<s> the poor pay more <eos>\n<s> nothing <eos>\n<s> guns protect <eos>\n")
    (data / "train_query").write_text("<s> guns : do they protect ? <eos>\n")
    (data / "train_summary").write_text("<s> guns protect <eos>\n")
    return data.parent


def test_debatepedia_rows_partial_train_and_overlap(debatepedia):
    rows, stats = read_benchmark("debatepedia", debatepedia)
    assert list(rows) == ["validation"]
    assert rows["validation"][0] == {
        "topic_id": "valid/1", "benchmark": "debatepedia", "query": ["taxes : are they fair ?"],
        "documents": [{"docno": "valid/1", "date": "", "headline": "",
                       "sentences": ["taxes are low .", "yet the poor pay more ."]}],
        "references": ["the poor pay more"]}
    assert [row["topic_id"] for row in rows["validation"]] == ["valid/1", "valid/3"]
    assert stats.problems["line with an empty part (skipped)"] == ["valid line 2: content"]
    assert stats.notes["train not converted: train_content missing"] == 1
    assert stats.notes["validation rows whose query and summary also stand in train_query/train_summary"] == 1
    with pytest.raises(QfsError, match="train not converted: train_content missing"):
        read_benchmark("debatepedia", debatepedia, splits=["train"])


def test_debatepedia_misaligned_files_are_refused(debatepedia):
    with open(debatepedia / "data" / "valid_summary", "a") as handle:
        handle.write("<s> one line too many <eos>\n")
    with pytest.raises(QfsError, match="not aligned .*valid_content 3, valid_query 3, valid_summary 4"):
        read_benchmark("debatepedia", debatepedia)


# ---- the converted folder and the command --------------------------------------------------------------------------


def test_convert_loads_with_load_dataset_and_reruns(qmsum, tmp_path):
    out = tmp_path / "qmsum-converted"
    stats = convert_benchmark("qmsum", qmsum, out)
    expected, _ = read_benchmark("qmsum", qmsum)
    loaded = datasets.load_dataset(str(out))
    assert sorted(loaded) == ["train", "validation"]
    assert loaded["train"].features == benchmark_features("qmsum")
    assert loaded["train"].to_list() == expected["train"]
    assert read_converted(out, "validation") == expected["validation"]
    card = (out / "README.md").read_text()
    assert "license: mit" in card and "# QMSum (converted)" in card and "span not two integers (dropped): 1" in card
    assert "\nQuery-based meeting summarization (Zhong et al., 2021" in card and "**Licence**: MIT" in card
    assert json.loads((out / "conversion.json").read_text())["rows"] == dict(stats.rows)
    convert_benchmark("qmsum", qmsum, out, splits=["validation"])  # the same folder again: replaced whole
    assert datasets.load_dataset(str(out)).keys() == {"validation"}
    with pytest.raises(QfsError, match="no split 'train'; it has validation"):
        read_converted(out, "train")
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    with pytest.raises(OutputFolderError, match="files this project did not write"):
        convert_benchmark("qmsum", qmsum, foreign)
    with pytest.raises(QfsError, match="not a converted benchmark"):
        read_converted(foreign, "train")


def test_load_split_reads_one_benchmark_with_references(qmsum, debatepedia, tmp_path):
    out = tmp_path / "converted"
    convert_benchmark("qmsum", qmsum, out)
    split = load_split(out, "validation")
    assert (split.path, split.benchmark, split.split, split.key) == (out, "qmsum", "validation", "qmsum/validation")
    assert split.rows == read_converted(out, "validation")
    with pytest.raises(QfsError, match="no split 'test'; it has train, validation"):
        load_split(out, "test")
    with pytest.raises(QfsError, match="not a converted benchmark"):
        load_split(tmp_path, "train")


@pytest.mark.parametrize("change, message", [
    (lambda row, index: {**row, "references": [""]} if index == 0 else row,
     r"validation: 1 row\(s\) without a reference \(valid/1\)"),
    (lambda row, index: {**row, "benchmark": "other"} if index == 0 else row,
     r"expected the rows of one benchmark, found \['debatepedia', 'other'\]"),
])
def test_load_split_refuses_rows_without_references_or_of_several_benchmarks(debatepedia, tmp_path, change,
                                                                            message):
    out = tmp_path / "converted"
    convert_benchmark("debatepedia", debatepedia, out)
    [path] = converted_splits(out)["validation"]
    table = pq.read_table(path)
    rows = [change(row, index) for index, row in enumerate(table.to_pylist())]
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)
    with pytest.raises(QfsError, match=message):
        load_split(out, "validation")


def test_command_converts_and_refuses_options_of_other_benchmarks(debatepedia, tmp_path, capsys):
    out = tmp_path / "debate"
    assert main(["qfs", "convert", "debatepedia", str(debatepedia), "--out", str(out), "-q"]) == 0
    printed = capsys.readouterr().out
    assert "validation: 2 queries, 2 documents, 3 sentences, 2 reference summaries" in printed
    assert f"load with datasets.load_dataset({str(out)!r}, split='validation')" in printed
    assert main(["qfs", "convert", "debatepedia", str(debatepedia), "--out", str(out), "--keep-markup"]) == 2
    assert "--keep-markup applies to qmsum only" in capsys.readouterr().err
    assert main(["qfs", "convert", "squality", str(debatepedia), "--out", str(tmp_path / "x")]) == 2
    assert "not a SQuALITY release" in capsys.readouterr().err


# ---- the real releases (../shared/realdata/qfs, skipped when absent) -----------------------------------------------


def _real(name):
    if not (REAL / name).is_dir():
        pytest.skip(f"{REAL / name} is not present")
    return REAL / name


def test_real_qmsum_meetings(tmp_path):
    """Four real meetings in the released layout: an ICSI, an AMI (with IS1002b's overlapping spans) and a committee
    meeting; every specific query keeps its spans, every sentence its speaker and released turn."""
    real = _real("qmsum") / "data" / "ALL"
    root = tmp_path / "QMSum"
    for split, name in (("val", "Bed002"), ("train", "IS1002b"), ("val", "ES2006a")):
        (root / "data" / "ALL" / split).mkdir(parents=True, exist_ok=True)
        shutil.copy(real / split / f"{name}.json", root / "data" / "ALL" / split)
    committee = sorted((real / "val").glob("*_*.json"))[0]
    shutil.copy(committee, root / "data" / "ALL" / "val")
    rows, stats = read_benchmark("qmsum", root)
    assert stats.problems == {"spans overlapping or out of order (kept)": ["train/IS1002b.json: specific query 6"]}
    released = json.loads((real / "val" / "Bed002.json").read_text())
    bed = [row for row in rows["validation"] if row["topic_id"].startswith("Bed002/")]
    assert len(bed) == len(released["general_query_list"]) + len(released["specific_query_list"])
    for row in bed:
        assert row["domain"] == "academic"
        document = row["documents"][0]
        assert len(document["sentences"]) == len(document["speakers"]) == len(document["turns"])
        assert not any("{" in sentence for sentence in document["sentences"])
        turns = released["meeting_transcripts"]
        assert all(document["speakers"][i] == turns[turn]["speaker"] for i, turn in enumerate(document["turns"]))
        if row["query_type"] == "specific":
            assert row["answer_spans"] and row["answer_sentences"]
    assert {row["domain"] for row in rows["validation"]} == {"academic", "product", "committee"}


def test_real_squality_and_debatepedia(tmp_path):
    real = _real("squality") / "data" / "v1-3" / "txt"
    root = tmp_path / "SQuALITY" / "data" / "v1-3" / "txt"
    root.mkdir(parents=True)
    (root / "dev.jsonl").write_text("\n".join((real / "dev.jsonl").read_text().splitlines()[:2]) + "\n")
    rows, stats = read_benchmark("squality", root.parents[2])
    assert len(rows["validation"]) == 10 and not stats.problems
    assert all(len(row["references"]) == 4 and all(line == line.strip() and line for reference in row["references"]
                                                   for line in reference.split("\n")) for row in rows["validation"])
    assert rows["validation"][0]["query"] == ["What is the plot of the story?"]
    assert len(rows["validation"][0]["documents"][0]["sentences"]) > 100
    out = tmp_path / "debatepedia"
    stats = convert_benchmark("debatepedia", _real("debatepedia"), out)
    assert stats.rows == {"validation": 719} and not stats.problems
    assert stats.notes["train not converted: train_content missing"] == 1
    assert len(datasets.load_dataset(str(out), split="validation")) == 719


def test_every_benchmark_has_a_title_and_a_phrase_for_model_cards():
    from wikiref_dataset.qfs import BENCHMARKS, benchmark_content, benchmark_title

    assert [benchmark_title(name) for name in BENCHMARKS] == ["QMSum", "SQuALITY", "Debatepedia"]
    assert benchmark_content("qmsum").startswith("meeting transcripts; queries: questions")
    assert all("; queries: " in benchmark_content(name) for name in BENCHMARKS)
    assert benchmark_content("duc2099") == "a converted query-focused benchmark"


def test_the_light_parser_names_the_same_benchmarks_and_splits():
    """qfs/cli.py repeats the names to stay light (the `wikiref` command builds its parser on every call)."""
    from wikiref_dataset.qfs import cli, common

    assert (cli.BENCHMARKS, cli.SPLITS) == (common.BENCHMARKS, common.SPLITS)
