"""DUC reader: topics, the three document dialects, reference summaries, the converted dataset and the CLI."""

import argparse
import logging
import subprocess
import sys
from pathlib import Path

import datasets
import pytest

from wikiref_dataset.duc.cli import add_duc_parser
from wikiref_dataset.duc.reader import (
    DUC_FEATURES,
    CrossYearFold,
    DucError,
    DucSources,
    DucStats,
    clean_text,
    convert_duc,
    cross_year_folds,
    date_from_docno,
    load_cross_year,
    load_duc,
    locate_duc,
    parse_date,
    parse_documents,
    parse_topics,
    read_converted,
    read_duc,
    read_reference,
    reference_topic_id,
    write_duc,
)
from wikiref_dataset.duc.years import load_years

DUC = Path(__file__).resolve().parents[1] / "fixtures" / "duc"


@pytest.fixture(autouse=True)
def _datasets_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(tmp_path / "hf_cache"))


def _document(path):
    documents = parse_documents(path.read_bytes().decode("latin-1"), str(path))
    assert len(documents) == 1
    return documents[0]


# ---- topics ------------------------------------------------------------------------------------------------------


def test_topics_2006_lenient_markup():
    topics = parse_topics(DUC / "duc2006" / "duc2006_topics.sgml")
    assert [topic.topic_id for topic in topics] == ["D0601A", "D0602B"]
    assert topics[0].title == "Harbor ferry sinking"
    assert topics[0].narrative == ("What caused the sinking of the harbor ferry & who was held responsible? "
                                   "Describe the rescue effort and the official inquiry.")  # bare & kept
    assert topics[1].title == "Rooftop solar subsidies"  # stray <b> markup dropped
    # no </narr>: the narrative ends at </topic>; &amp; decoded
    assert topics[1].narrative == ("Describe government subsidies for rooftop solar panels. "
                                   "What effects have they had on prices & installations?")
    assert topics[0].granularity == ""


def test_topics_2005_lowercase_numbers_and_granularity():
    topics = parse_topics(DUC / "duc2005" / "duc2005_topics.sgml")
    assert [(topic.topic_id, topic.granularity) for topic in topics] == [("D301I", "specific"), ("D302G", "general")]
    assert topics[0].narrative.startswith("How have canal tolls affected shipping companies? Include the reactions")


def test_topics_2007_docs_lists_are_not_narrative():
    topics = parse_topics(DUC / "duc2007" / "duc2007_topics.sgml")
    assert topics[0].narrative.endswith("consequences for water supplies?")
    assert topics[1].narrative == "Report on the return of night train services."  # no </narr>, then <docs>


def test_topics_errors(tmp_path):
    with pytest.raises(DucError, match="topics file not found"):
        parse_topics(tmp_path / "duc2006_topics.sgml")
    (tmp_path / "empty.sgml").write_text("<html>nothing here</html>")
    with pytest.raises(DucError, match="no <topic>"):
        parse_topics(tmp_path / "empty.sgml")


def test_topics_skip_numberless_and_duplicate(tmp_path, caplog):
    (tmp_path / "t.sgml").write_text("<topic><title>x</title></topic><topic><num>D1A</num><title>a</title>"
                                     "<narr>n</narr></topic><topic><num> d1a </num><title>b</title></topic>")
    with caplog.at_level(logging.WARNING):
        topics = parse_topics(tmp_path / "t.sgml")
    assert [(topic.topic_id, topic.title) for topic in topics] == [("D1A", "a")]
    assert "has no <num>" in caplog.text and "appears twice" in caplog.text


# ---- documents ---------------------------------------------------------------------------------------------------


def test_ap_document():
    document = _document(DUC / "duc2006" / "duc2006_docs" / "D0601A" / "APW19990707.0181")
    assert document.docno == "APW19990707.0181"
    assert document.date == "1999-07-07"
    assert document.headline == "Harbor ferry sinks after collision, dozens rescued"
    assert len(document.paragraphs) == 4
    assert document.paragraphs[0].startswith("PORT ELLIS (AP) _ A crowded harbor ferry sank on Wednesday after it "
                                             "struck a cargo barge")  # hard line wraps unwrapped
    assert "AP-NY" not in document.text  # the <TRAILER> is not text


def test_nyt_document_entities_annotation_and_us_date():
    document = _document(DUC / "duc2006" / "duc2006_docs" / "D0601A" / "NYT19990709.0044")
    assert document.date == "1999-07-09"  # DATE_TIME 07/09/1999 05:12:00
    assert document.headline == "Inquiry Blames Ferry Captain & Fog for Sinking"  # &AMP;
    assert document.paragraphs == [
        "The official inquiry into the harbor ferry sinking blamed the captain, who kept full speed in thick fog.",
        "Investigators said the ferry's radar had been switched off.",
        "The ferry company was also held responsible for poor training of the crew, the report said.",
    ]  # &HT; &QL; &QR; are typesetting codes; <ANNOTATION> is an editorial note


def test_xinhua_document_without_headline():
    document = _document(DUC / "duc2006" / "duc2006_docs" / "D0601A" / "XIE19990708.0012")
    assert (document.date, document.headline, len(document.paragraphs)) == ("1999-07-08", "", 3)


def test_document_without_closing_tags():
    document = _document(DUC / "duc2006" / "duc2006_docs" / "D0602B" / "APW19990803.0010")
    assert document.paragraphs == [
        "Solar installers reported record demand for rooftop panels after the state expanded its subsidies.",
        "Some installers warned that waiting times now exceed four months.",
    ]


def test_financial_times_documents():
    document = _document(DUC / "duc2005" / "duc2005_docs" / "d301i" / "FT921-5037")
    assert document.date == "1992-02-14"  # <DATE>920214
    assert document.headline == "FT 14 FEB 92 / Canal tolls raised again"
    # plain hard-wrapped text without paragraph marks: one block, which the sentence splitter cuts
    assert document.paragraphs == [
        "The canal authority raised its tolls by 12 per cent yesterday, the third increase in two years. Shipping "
        "companies said the higher tolls would add to freight costs and push some cargo to longer sea routes. The "
        "government defended the increase as necessary for dredging works."]
    assert "The Financial Times" not in document.text and "CORRESPONDENT" not in document.text
    no_date = _document(DUC / "duc2005" / "duc2005_docs" / "d301i" / "FT922-0101")
    assert no_date.date == "1992-01-01"  # from the DOCNO: year only


def test_la_times_document_latin1():
    path = DUC / "duc2005" / "duc2005_docs" / "d301i" / "LA010190-0001"
    from wikiref_dataset.duc.reader import decode_bytes

    document = parse_documents(decode_bytes(path.read_bytes()), str(path))[0]
    assert document.date == "1990-01-01"  # "January 1, 1990, Monday, Home Edition"
    assert document.headline == "CANAL TOLLS PINCH PORT CAFÉ OWNERS"  # <P> inside <HEADLINE>, Latin-1 É
    assert document.paragraphs[1] == "The owner of a waterfront café said trade fell by a quarter."
    assert "Business; Part D" not in document.text and "Column" not in document.text


def test_la_times_correction_is_not_text():
    document = _document(DUC / "duc2005" / "duc2005_docs" / "d302g" / "LA030690-0012")
    assert document.date == "1990-03-06"  # <DATE> says "Correction Appended": the DOCNO gives the date
    assert document.paragraphs == ["Council members argued over which streets should get new trees first."]


def test_malformed_documents_raise_with_reason():
    with pytest.raises(DucError, match="NYT19990802.0001 has no <TEXT>") as error:
        _document(DUC / "duc2006" / "duc2006_docs" / "D0602B" / "NYT19990802.0001")
    assert error.value.reason == "no <TEXT>"
    with pytest.raises(DucError, match="not a DUC document") as error:
        _document(DUC / "duc2006" / "duc2006_docs" / "D0601A" / "NYT19990710.0001")
    assert error.value.reason == "not SGML"
    with pytest.raises(DucError, match="empty <TEXT>"):
        parse_documents("<DOC><DOCNO>X1</DOCNO><TEXT> <P> </P> </TEXT></DOC>", "f")


def test_several_docs_indented_paragraphs_and_docno_fallback():
    text = ("<DOC><DOCNO> A1 </DOCNO><TEXT>\n   First paragraph\nwrapped.\n   Second one.\n</TEXT></DOC>\n"
            "<DOC><TEXT>Only text.</TEXT></DOC>")
    first, second = parse_documents(text, "/x/APW20000102.0003")
    assert first.paragraphs == ["First paragraph wrapped.", "Second one."]
    blank_lines = parse_documents("<DOC><TEXT>\nOne\nwrapped.\n\n  \nTwo.\n</TEXT></DOC>", "f")[0]
    assert blank_lines.paragraphs == ["One wrapped.", "Two."]
    assert (second.docno, second.date) == ("APW20000102.0003", "2000-01-02")  # file name, then its date
    assert parse_documents("<TEXT>No DOC element.</TEXT>", "f")[0].paragraphs == ["No DOC element."]


@pytest.mark.parametrize(("value", "expected"), [
    ("1999-07-07 17:52:03", "1999-07-07"),
    ("07/09/1999 05:12:00", "1999-07-09"),
    ("<P> January 1, 1990, Monday, Home Edition </P>", "1990-01-01"),
    ("Sept. 30, 1989", "1989-09-30"),
    ("920214\n", "1992-02-14"),
    ("19920214", "1992-02-14"),
    ("1999-02-30", ""),
    ("unknown", ""),
])
def test_parse_date(value, expected):
    assert parse_date(value) == expected


@pytest.mark.parametrize(("docno", "expected"), [
    ("APW19990707.0181", "1999-07-07"),
    ("NYT19990709.0044", "1999-07-09"),
    ("XIE19990708.0012", "1999-07-08"),
    ("LA010190-0001", "1990-01-01"),
    ("LA123189-0077", "1989-12-31"),
    ("FT921-5037", "1992-01-01"),
    ("FT944-100", "1994-01-01"),
    ("WSJ-1", ""),
])
def test_date_from_docno(docno, expected):
    assert date_from_docno(docno) == expected


def test_clean_text():
    assert clean_text("a &AMP; b &amp; c & d&HT;e &MD; f <b>g</b> 1 < 2 &#233; &zz;") == "a & b & c & d e -- f g 1 < 2 é"


# ---- reference summaries -----------------------------------------------------------------------------------------


def test_reference_names():
    assert reference_topic_id("D0601.M.250.A.B") == ("D0601A", "B")
    assert reference_topic_id("D301.M.250.I.A") == ("D301I", "A")
    assert reference_topic_id("D0601.M.250.A.12") == ("D0601A", "12")  # a peer (system 12)
    assert reference_topic_id("README.txt") is None


def test_read_reference_keeps_lines(tmp_path):
    (tmp_path / "D0601.M.250.A.A").write_bytes(b"  First line.  \r\n\r\nSecond   line.\n")
    assert read_reference(tmp_path / "D0601.M.250.A.A") == "First line.\nSecond line."


# ---- locating and reading a year ---------------------------------------------------------------------------------


def test_locate_each_year():
    s2005 = locate_duc(DUC / "duc2005", 2005)
    assert s2005.topics_file.name == "duc2005_topics.sgml"
    assert s2005.docs_dir == DUC / "duc2005" / "duc2005_docs"
    assert s2005.models_dirs == (DUC / "duc2005" / "results" / "ROUGE" / "models",)
    assert locate_duc(DUC / "duc2007", 2007).docs_dir == DUC / "duc2007" / "duc2007_testdocs" / "main"
    s2006 = locate_duc(DUC / "duc2006", 2006)
    assert s2006.models_dirs == (DUC / "duc2006" / "NISTeval" / "ROUGE" / "models",)  # not ROUGE/peers


def test_locate_errors(tmp_path):
    with pytest.raises(DucError, match="DUC 2006 topics file not found: duc2006_topics.sgml under"):
        locate_duc(tmp_path, 2006)
    with pytest.raises(DucError, match="documents folder not found"):
        locate_duc(DUC / "duc2006", 2006, docs=tmp_path / "nowhere")
    with pytest.raises(DucError, match="year must be one of"):
        locate_duc(DUC / "duc2006", 2004)
    with pytest.raises(DucError, match="not a folder"):
        locate_duc(tmp_path / "missing", 2006)


def test_read_2006_counts_skips_and_rows(caplog):
    with caplog.at_level(logging.WARNING):
        rows, stats = read_duc(locate_duc(DUC / "duc2006", 2006))
    assert (stats.clusters, stats.documents, stats.references) == (2, 5, 4)
    assert dict(stats.skipped_documents) == {"no <TEXT>": 1, "not SGML": 1}
    assert stats.folders_without_topic == ["D0699Z"]
    assert "NYT19990802.0001 has no <TEXT>" in caplog.text and "D0699Z" in caplog.text
    first = rows[0]
    assert first["topic_id"] == "D0601A" and first["year"] == 2006
    assert first["query"] == ["Harbor ferry sinking",
                              "What caused the sinking of the harbor ferry & who was held responsible?",
                              "Describe the rescue effort and the official inquiry."]
    assert [document["docno"] for document in first["documents"]] == [
        "APW19990707.0181", "NYT19990709.0044", "XIE19990708.0012"]
    assert [document["date"] for document in first["documents"]] == ["1999-07-07", "1999-07-09", "1999-07-08"]
    assert first["documents"][0]["sentences"][1] == (
        "The ferry was carrying 112 passengers and six crew members when it hit the barge near the harbor mouth.")
    assert stats.sentences == sum(len(d["sentences"]) for row in rows for d in row["documents"]) == 15
    assert first["references"][0].startswith("A harbor ferry sank")  # assessor A before B
    assert first["references"][1].startswith("The ferry carrying 112")
    assert stats.summary().startswith("DUC 2006: 2 clusters, 5 documents, 15 sentences, 4 reference summaries")


def test_read_2005_splits_unmarked_ft_text_into_sentences():
    rows, stats = read_duc(locate_duc(DUC / "duc2005", 2005))
    ft = rows[0]["documents"][0]
    assert ft["docno"] == "FT921-5037" and len(ft["sentences"]) == 3
    assert ft["sentences"][1].startswith("Shipping companies said")
    assert (stats.clusters, stats.documents, stats.references) == (2, 5, 3)
    assert rows[1]["query"] == ["Urban tree planting", "Describe city programs that plant street trees."]


def test_read_2007_topic_without_references():
    rows, stats = read_duc(locate_duc(DUC / "duc2007", 2007))
    assert [row["topic_id"] for row in rows] == ["D0701A", "D0702B"]
    assert rows[1]["references"] == [] and stats.topics_without_references == ["D0702B"]


def test_topic_without_documents_folder_and_unreadable_files(tmp_path, caplog):
    (tmp_path / "duc2006_topics.sgml").write_text("<topic><num>D0601A</num><title>t</title><narr>n.</narr></topic>"
                                                  "<topic><num>D0603C</num><title>u</title><narr>m.</narr></topic>")
    folder = tmp_path / "duc2006_docs" / "D0601A"
    folder.mkdir(parents=True)
    (folder / "APW1").write_bytes(b"\x00\xff\xfe binary")
    (folder / "APW2").write_text("<DOC><DOCNO>APW2</DOCNO><TEXT>Good text here.</TEXT></DOC>")
    (folder / "APW3").write_text("<DOC><DOCNO>APW2</DOCNO><TEXT>Same DOCNO again.</TEXT></DOC>")
    with caplog.at_level(logging.WARNING):
        rows, stats = read_duc(locate_duc(tmp_path, 2006))
    assert [row["topic_id"] for row in rows] == ["D0601A"]
    assert rows[0]["documents"][0]["sentences"] == ["Good text here."]
    assert stats.topics_without_documents == ["D0603C"]
    assert dict(stats.skipped_documents) == {"not SGML": 1, "duplicate DOCNO": 1}
    assert rows[0]["references"] == []


# ---- the converted dataset ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    out = tmp_path_factory.mktemp("duc")
    stats = {year: convert_duc(DUC / f"duc{year}", year, out / str(year)) for year in (2005, 2006, 2007)}
    return out, stats


def test_convert_writes_parquet_and_card(converted):
    out, stats = converted
    folder = out / "2005"
    [parquet] = (folder / "data").glob("test-00000-of-00001-*.parquet")
    card = (folder / "README.md").read_text()
    assert f"path: data/{parquet.name}" in card
    assert "split: test" in card and "do not publish" in card and "2 clusters" in card
    assert stats[2005].clusters == 2


def test_load_dataset_reads_the_folder_with_features(converted):
    out, _ = converted
    rows, _ = read_duc(locate_duc(DUC / "duc2005", 2005))
    loaded = datasets.load_dataset(str(out / "2005"), split="test")
    assert loaded.features == DUC_FEATURES
    assert loaded.to_list() == rows
    assert load_duc(out / "2005").to_list() == rows
    assert read_converted(out / "2005") == rows  # pyarrow alone, for the evaluation: the same rows
    assert loaded[0]["granularity"] == "specific"


def test_load_duc_refuses_other_folders(tmp_path):
    with pytest.raises(DucError, match="not a converted DUC dataset"):
        load_duc(tmp_path)
    with pytest.raises(DucError, match="not a converted DUC dataset"):
        read_converted(tmp_path)
    (tmp_path / "README.md").write_text("card\n")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "test-00000-of-00001.parquet").write_text("not parquet\n")
    with pytest.raises(DucError, match=r"test-00000-of-00001.parquet: not a readable Parquet file"):
        read_converted(tmp_path)


def test_load_years_sorts_years_and_keeps_clusters_without_references(converted, tmp_path, caplog):
    out, _ = converted
    years = load_years([out / "2007", str(out / "2005")])
    assert [year.year for year in years] == [2005, 2007]
    assert years[0].path == out / "2005" and years[0].rows == read_converted(out / "2005")
    assert years[0].scorable == years[0].rows  # every fixture cluster has references
    rows = read_converted(out / "2006")
    write_duc([rows[0], {**rows[1], "references": []}], tmp_path / "partial", DucStats(year=2006))
    with caplog.at_level(logging.WARNING, logger="wikiref_dataset.duc.years"):
        (year,) = load_years([tmp_path / "partial"])
    assert len(year.rows) == 2 and [row["topic_id"] for row in year.scorable] == [rows[0]["topic_id"]]
    assert f"1 cluster(s) without reference summaries are not scored: {rows[1]['topic_id']}" in caplog.text


def test_load_years_refuses_other_folders_a_year_twice_and_mixed_years(converted, tmp_path):
    out, _ = converted
    with pytest.raises(DucError, match="not a converted DUC dataset"):
        load_years([out / "2005", tmp_path])
    with pytest.raises(DucError, match=f"DUC 2005 is already given by {out / '2005'}"):
        load_years([out / "2005", out / "2005"])
    mixed = read_converted(out / "2005") + read_converted(out / "2006")
    write_duc(mixed, tmp_path / "mixed", DucStats(year=2005))
    with pytest.raises(DucError, match=r"mixed: expected the clusters of one DUC year, found years \[2005, 2006\]"):
        load_years([tmp_path / "mixed"])


def test_importing_the_reader_imports_no_datasets():
    """The evaluation imports this module to read converted years: `datasets` (≈1.7 s) only where it is used."""
    code = ("import sys\nimport wikiref_dataset.duc.reader as duc\nassert 'datasets' not in sys.modules\n"
            "assert duc.DUC_FEATURES == duc.duc_features() and 'datasets' in sys.modules\nprint('ok')")
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert completed.stdout.strip() == "ok", completed.stderr[-2000:]


def test_convert_with_explicit_paths_and_no_cluster(tmp_path):
    stats = convert_duc(None, 2006, tmp_path / "out", topics=DUC / "duc2006" / "duc2006_topics.sgml",
                        docs=DUC / "duc2006" / "duc2006_docs", models=[DUC / "duc2006" / "NISTeval" / "ROUGE" / "models"])
    assert (stats.clusters, stats.references) == (2, 4)
    (tmp_path / "docs").mkdir()
    with pytest.raises(DucError, match="no cluster converted"):
        convert_duc(None, 2006, tmp_path / "none", topics=DUC / "duc2006" / "duc2006_topics.sgml",
                    docs=tmp_path / "docs", models=[])


def test_cross_year_protocol(converted):
    out, _ = converted
    assert cross_year_folds() == [CrossYearFold((2006, 2007), 2005), CrossYearFold((2005, 2007), 2006),
                                  CrossYearFold((2005, 2006), 2007)]
    train, test = load_cross_year({year: out / str(year) for year in (2005, 2006, 2007)}, test_year=2006)
    assert [row["topic_id"] for row in train] == ["D301I", "D302G", "D0701A", "D0702B"]
    assert [row["topic_id"] for row in test] == ["D0601A", "D0602B"]
    with pytest.raises(ValueError, match="test year 2004"):
        load_cross_year({2005: test, 2006: test}, 2004)
    with pytest.raises(ValueError, match="at least two years"):
        cross_year_folds([2006])


# ---- command line ------------------------------------------------------------------------------------------------


def _parser():
    parser = argparse.ArgumentParser(prog="wikiref")
    add_duc_parser(parser.add_subparsers(dest="command", required=True))
    return parser


def _run(argv):
    from wikiref_dataset.command import dispatch

    return dispatch(_parser(), argv)


def test_cli_convert(tmp_path, capsys):
    assert _run(["duc", "convert", str(DUC / "duc2006"), "--year", "2006", "--out", str(tmp_path / "o"),
                 "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "DUC 2006: 2 clusters, 5 documents, 15 sentences, 4 reference summaries" in out
    assert "skipped documents: 2 (1 no <TEXT>, 1 not SGML)" in out
    assert load_duc(tmp_path / "o").num_rows == 2


def test_cli_convert_missing_topics_is_a_clear_error(tmp_path, capsys):
    assert _run(["duc", "convert", str(tmp_path), "--year", "2007", "--out", str(tmp_path / "o")]) == 2
    assert "wikiref duc convert: error: DUC 2007 topics file not found" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_cli_subcommands_are_registered(capsys):
    parser = _parser()
    args = parser.parse_args(["duc", "convert", "nist", "--year", "2006", "--out", "o"])
    assert args.duc_command == "convert" and callable(args.func)
    with pytest.raises(SystemExit):
        parser.parse_args(["duc"])
    with pytest.raises(SystemExit):  # `duc evaluate` is the model side's (trainer_scripts/cli.py adds it)
        parser.parse_args(["duc", "evaluate", "--dataset", "d", "--baseline", "lead"])
    assert "invalid choice: 'evaluate'" in capsys.readouterr().err


def test_sources_are_plain_paths():
    sources = locate_duc(DUC / "duc2007", 2007)
    assert isinstance(sources, DucSources) and sources.year == 2007


# ---- linked trees and years without reference summaries ----------------------------------------------------------


def _linked_nist_tree(root: Path) -> Path:
    """The 2006 fixture as users often lay NIST's data out: every part linked into place, with a link back up the
    tree (a loop the walk must not follow forever)."""
    root.mkdir()
    (root / "duc2006_topics.sgml").symlink_to(DUC / "duc2006" / "duc2006_topics.sgml")
    (root / "duc2006_docs").symlink_to(DUC / "duc2006" / "duc2006_docs", target_is_directory=True)
    (root / "NISTeval").symlink_to(DUC / "duc2006" / "NISTeval", target_is_directory=True)
    (root / "archives").mkdir()
    (root / "archives" / "back-to-top").symlink_to(root, target_is_directory=True)
    return root


def test_cli_convert_follows_linked_folders(tmp_path, capsys):
    from wikiref_dataset.cli import main

    nist = _linked_nist_tree(tmp_path / "nist")
    assert locate_duc(nist, 2006).models_dirs == (nist / "NISTeval" / "ROUGE" / "models",)  # found once
    assert main(["duc", "convert", str(nist), "--year", "2006", "--out", str(tmp_path / "o"), "--quiet"]) == 0
    captured = capsys.readouterr()
    assert "DUC 2006: 2 clusters, 5 documents, 15 sentences, 4 reference summaries" in captured.out
    assert "warning" not in captured.err
    direct, _ = read_duc(locate_duc(DUC / "duc2006", 2006))
    assert load_duc(tmp_path / "o").to_list() == direct  # the same rows as the unlinked tree, references included


def test_cli_convert_warns_when_a_year_has_no_reference_summary(tmp_path, capsys):
    from wikiref_dataset.cli import main

    nist = tmp_path / "nist"
    nist.mkdir()
    (nist / "duc2006_topics.sgml").symlink_to(DUC / "duc2006" / "duc2006_topics.sgml")
    (nist / "duc2006_docs").symlink_to(DUC / "duc2006" / "duc2006_docs", target_is_directory=True)
    (nist / "NISTeval").mkdir()  # the evaluation archive was not unpacked
    assert main(["duc", "convert", str(nist), "--year", "2006", "--out", str(tmp_path / "o"), "--quiet"]) == 0
    captured = capsys.readouterr()
    assert "wikiref duc convert: warning: DUC 2006: no reference summary found" in captured.err
    card = (tmp_path / "o" / "README.md").read_text(encoding="utf-8")
    assert "- references: 0 (no reference summary found" in card
    assert [row["references"] for row in load_duc(tmp_path / "o")] == [[], []]
