"""PSG2SUM build on datatrove executors (psg2sum/pipeline.py), the CLI's exit codes and .7z history dumps."""

import argparse
import bz2
import hashlib
import json
import re
from pathlib import Path

import datasets
import pytest

from wikiref_dataset.command import dispatch
from wikiref_dataset.psg2sum.cli import add_psg2sum_parser
from wikiref_dataset.psg2sum.history import iter_histories
from wikiref_dataset.psg2sum.mining import MiningConfig
from wikiref_dataset.psg2sum.pipeline import Psg2SumBuildConfig, run_psg2sum_build
from wikiref_dataset.wiki.dump import DumpError
from wikiref_dataset.wiki.sevenzip import SevenZipUnavailable, find_7z_command, open_7z

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "psg2sum" / "history.xml"
REALDATA = Path(__file__).resolve().parents[4] / "shared" / "realdata" / "revision_history"
REAL_WINDOWS = [REALDATA / "derived_Anarchism_history_first400.xml.bz2",
                REALDATA / "derived_Anarchism_history_rev6000_6300.xml.bz2",
                REALDATA / "pywikibot_xml" / "article-pear.xml", REALDATA / "pywikibot_xml" / "article-pyrus.xml.bz2"]


def run_cli(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="wikiref")
    add_psg2sum_parser(parser.add_subparsers())
    return dispatch(parser, ["psg2sum", *argv])


def multi_page_dump(path: Path) -> Path:
    """The fixture's article page three times (ids 1, 4, 5): the copies repeat its pairs on other pages, and page 4's
    revision ids (1-11) are the lowest, so cross-page dedup must keep page 4's pairs whichever task mined it."""
    text = FIXTURE.read_text(encoding="utf-8")
    start, end = text.index("  <page>"), text.index("  </page>") + len("  </page>\n")
    page = text[start:end]

    def copy(page_id: int, offset: int) -> str:
        renamed = page.replace("<title>Pear (fixture)</title>", f"<title>Pear copy {page_id}</title>")
        renamed = renamed.replace("<id>1</id>\n    <revision>", f"<id>{page_id}</id>\n    <revision>", 1)
        return re.sub(r"<(id|parentid)>(1\d\d)</\1>", lambda m: f"<{m[1]}>{int(m[2]) + offset}</{m[1]}>", renamed)

    path.write_text(text[:end] + copy(4, -100) + copy(5, 400) + text[end:], encoding="utf-8")
    return path


def parquet_hashes(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted((folder / "data").glob("*.parquet"))}


def test_same_output_for_one_and_two_tasks(tmp_path):
    dump = multi_page_dump(tmp_path / "history.xml")
    assert [page.page_id for page in iter_histories(dump, rank=1, world_size=2)] == [4]  # page 4 is task 1's
    mining = MiningConfig(min_score=0.5)
    one = run_psg2sum_build(Psg2SumBuildConfig([str(dump)], output_dir=str(tmp_path / "one"), mining=mining,
                                               dev_size=1, test_size=1, baselines=False))
    two = run_psg2sum_build(Psg2SumBuildConfig([str(dump)], output_dir=str(tmp_path / "two"), tasks=2, workers=2,
                                               mining=mining, dev_size=1, test_size=1, baselines=False))
    assert parquet_hashes(tmp_path / "one") == parquet_hashes(tmp_path / "two") != {}
    assert one.counts == two.counts
    assert one.counts["pages"] == 3 and one.counts["pairs"] == 2 and one.counts["duplicates"] == 4
    loaded = datasets.load_dataset(str(tmp_path / "two"))
    rows = [row for split in loaded.values() for row in split]
    assert sorted((row["page_id"], row["revision_id"]) for row in rows) == [(4, 2), (4, 7)]
    # a rerun skips the finished mining tasks and gives the same folder; other inputs redo the mining
    again = run_psg2sum_build(Psg2SumBuildConfig([str(dump)], output_dir=str(tmp_path / "two"), tasks=2, workers=2,
                                                 mining=mining, dev_size=1, test_size=1, baselines=False))
    assert again.counts == two.counts and parquet_hashes(tmp_path / "two") == parquet_hashes(tmp_path / "one")
    three = run_psg2sum_build(Psg2SumBuildConfig([str(dump)], output_dir=str(tmp_path / "two"), tasks=3, mining=mining,
                                                 dev_size=1, test_size=1, baselines=False))
    assert three.counts == two.counts and parquet_hashes(tmp_path / "two") == parquet_hashes(tmp_path / "one")
    assert len(list((tmp_path / "two.work" / "logs" / "pairs" / "completions").iterdir())) == 3  # mined again


def test_cli_without_pairs_exits_1_and_names_a_lambda(tmp_path, capsys):
    out = tmp_path / "empty"
    assert run_cli(str(FIXTURE), "--out", str(out), "--min-score", "0.9", "--quiet", "--no-baselines") == 1
    captured = capsys.readouterr()
    assert "kept at λ=0.9: 0" in captured.out
    assert "no example kept from 3 candidate pairs: the tightest filter is 'score below λ=0.9'" in captured.err
    assert "rerun with --min-score 0.7" in captured.err
    assert not out.exists() and not list(tmp_path.glob(".*partial"))  # nothing that looks like a build
    assert json.loads((tmp_path / "empty.work" / "build.json").read_text())["splits"]["train"] == 0


@pytest.mark.skipif(not REALDATA.is_dir(), reason="../shared/realdata/revision_history is absent")
def test_cli_on_the_real_windows(tmp_path, capsys):
    """At the paper's λ = 0.6 the real windows hold no pair (exit 1, the message names λ = 0.4); at λ = 0.3 the
    command writes a folder that load_dataset reads: the five pairs of test_psg2sum_mining.ANARCHISM_PAIRS_AT_0_3."""
    windows = [str(path) for path in REAL_WINDOWS]
    assert run_cli(*windows, "--out", str(tmp_path / "at06"), "--quiet", "--no-baselines") == 1
    captured = capsys.readouterr()
    assert "4 pages, 710 revisions, 705 revision pairs" in captured.out
    assert "candidate pairs: 66 (λ≥0.3: 6, λ≥0.4: 1, λ≥0.5: 0, λ≥0.6: 0, λ≥0.7: 0)" in captured.out
    assert "rerun with --min-score 0.4" in captured.err
    out = tmp_path / "at03"
    assert run_cli(*windows, "--out", str(out), "--min-score", "0.3", "--quiet", "--tasks", "2") == 0
    printed = capsys.readouterr().out
    assert "kept at λ=0.3: 5" in printed and "| LEAD1 |" in printed
    loaded = datasets.load_dataset(str(out))
    assert sorted(row["revision_id"] for split in loaded.values() for row in split) == [
        368656, 441225, 441225, 441225, 1152836]


# -- .7z ---------------------------------------------------------------------------------------------------------


def make_7z(source: Path, target: Path) -> Path:
    py7zr = pytest.importorskip("py7zr")
    with py7zr.SevenZipFile(target, "w") as archive:
        archive.write(source, source.name)
    return target


@pytest.mark.parametrize("backend", ["py7zr", "command"])
def test_7z_history_dump(tmp_path, backend):
    if backend == "command" and find_7z_command() is None:
        pytest.skip("no 7z / 7za / 7zr command installed")
    archive = make_7z(FIXTURE, tmp_path / "history.xml.7z")
    with open_7z(archive, backend=backend) as handle:
        assert handle.read() == FIXTURE.read_bytes()
    pages = [(page.page_id, [r.revision_id for r in page.revisions]) for page in iter_histories(archive)]
    assert pages == [(1, list(range(101, 112)))]
    with open_7z(archive, backend=backend) as handle:  # abandoned after one block: closes cleanly
        assert handle.read(10) == FIXTURE.read_bytes()[:10]


def test_7z_damaged_and_unavailable(tmp_path, monkeypatch):
    broken = tmp_path / "broken.xml.7z"
    broken.write_bytes(b"7z\xbc\xaf\x27\x1c not really an archive")
    with pytest.raises(DumpError, match="broken.xml.7z"):
        list(iter_histories(broken))
    two = tmp_path / "two.7z"
    py7zr = pytest.importorskip("py7zr")
    with py7zr.SevenZipFile(two, "w") as archive:
        archive.write(FIXTURE, "a.xml")
        archive.write(FIXTURE, "b.xml")
    with pytest.raises(OSError, match="expected one file in the archive, found 2"):
        open_7z(two, backend="py7zr").read()
    monkeypatch.setattr("wikiref_dataset.wiki.sevenzip.find_7z_command", lambda: None)
    with pytest.raises(SevenZipUnavailable, match=r"two.7z: reading .7z needs the 7z command.*apt-get install"):
        open_7z(two, backend="command")
    monkeypatch.setitem(__import__("sys").modules, "py7zr", None)  # as if py7zr were not installed
    with pytest.raises(DumpError, match=r"broken.xml.7z: reading .7z needs the 7z command or the py7zr package"):
        list(iter_histories(broken))


def test_7z_streams_a_long_history(tmp_path):
    """20,000 revisions through py7zr's streaming writer arrive in order, and the same as from the bz2 file."""
    revisions = "".join(f"<revision><id>{i}</id><timestamp>2020-01-01T00:00:00Z</timestamp><text>t{i}</text>"
                        "</revision>" for i in range(20_000))
    xml = tmp_path / "big.xml"
    xml.write_text(f"<mediawiki><page><title>Big</title><ns>0</ns><id>7</id>{revisions}</page></mediawiki>")
    archive = make_7z(xml, tmp_path / "big.xml.7z")
    (tmp_path / "big.xml.bz2").write_bytes(bz2.compress(xml.read_bytes()))
    ids = [r.revision_id for page in iter_histories(archive) for r in page.revisions]
    assert ids == list(range(20_000))


# -- damaged history dumps -----------------------------------------------------------------------------------------


def test_cli_keeps_the_pairs_mined_before_a_damaged_dump(tmp_path, capsys):
    """The two real windows as one dump of two pages, cut inside the second: the build finishes (exit 0) with the
    pairs of the first page, names the file in its summary and build.json; the page cut by the damage is dropped."""
    from damaged_files import real_file, truncated, two_page_history

    from wikiref_dataset.cli import main

    whole = tmp_path / "anarchism.xml.bz2"
    whole.write_bytes(bz2.compress(two_page_history()))
    cut = truncated(whole.read_bytes(), tmp_path / "anarchism-cut.xml.bz2", 0.7)
    options = ["--min-score", "0.3", "--quiet", "--no-baselines"]
    assert main(["psg2sum", str(whole), "--out", str(tmp_path / "whole"), *options]) == 0
    assert "PSG2SUM: 2 pages, 700 revisions" in capsys.readouterr().out
    assert main(["psg2sum", str(cut), "--out", str(tmp_path / "cut"), "--tasks", "2", *options]) == 0
    printed = capsys.readouterr().out
    reason = "EOFError: Compressed file ended before the end-of-stream marker was reached"
    assert "PSG2SUM: 1 pages, 400 revisions" in printed
    assert f"damaged dump: anarchism-cut.xml.bz2 ({reason}): 1 pages mined before the damage" in printed
    build = json.loads((tmp_path / "cut" / "build.json").read_text(encoding="utf-8"))
    assert build["counts"][f"damaged_dump/anarchism-cut.xml.bz2 ({reason})"] == 1  # summed over both tasks

    first_page = {r.revision_id for page in iter_histories(
        real_file("revision_history/derived_Anarchism_history_first400.xml.bz2")) for r in page.revisions}

    def pairs(folder: Path) -> list[tuple[int, str, str]]:
        rows = [row for split in datasets.load_dataset(str(folder)).values() for row in split]
        return sorted((row["revision_id"], row["summary"], row["passage"]) for row in rows)

    kept = pairs(tmp_path / "cut")
    assert kept and kept == [pair for pair in pairs(tmp_path / "whole") if pair[0] in first_page]


def test_cli_exits_2_when_no_page_could_be_read(tmp_path, capsys):
    from damaged_files import real_file, truncated

    from wikiref_dataset.cli import main

    window = real_file("revision_history/derived_Anarchism_history_first400.xml.bz2")
    cut = truncated(window.read_bytes(), tmp_path / "first400-cut.xml.bz2", 0.5)  # its only page is cut
    assert main(["psg2sum", str(cut), "--out", str(tmp_path / "out"), "--quiet", "--no-baselines"]) == 2
    captured = capsys.readouterr()
    assert "PSG2SUM: 0 pages" in captured.out and "damaged dump: first400-cut.xml.bz2 (EOFError" in captured.out
    assert "wikiref psg2sum: error: nothing could be read: 1 damaged dump(s)" in captured.err
    assert not (tmp_path / "out").exists()


def test_dataset_stage_streams_and_spills_to_the_same_bytes(tmp_path, monkeypatch):
    """The dataset stage run again on the same pair shards with a ~1 KB sort buffer: its sort spills, the folder has
    the same Parquet bytes, and at most two pairs are alive at any time (a return to deduplicating a list of every
    pair would hold the six the shards hold)."""
    import weakref

    from wikiref_dataset.psg2sum import pipeline
    from wikiref_dataset.psg2sum.dataset import Psg2SumFolderWriter

    dump = multi_page_dump(tmp_path / "history.xml")
    options = dict(tasks=2, mining=MiningConfig(min_score=0.5), dev_size=1, test_size=1, baselines=False)
    first = Psg2SumBuildConfig([str(dump)], output_dir=str(tmp_path / "first"), **options)
    summary = run_psg2sum_build(first)
    assert summary.counts["pairs"] == 2 and summary.counts["duplicates"] == 4

    alive, created, peaks = [0], [0], []

    def freed() -> None:
        alive[0] -= 1

    def tracked(record):
        pair = pair_from_document(record)
        alive[0] += 1
        created[0] += 1
        weakref.finalize(pair, freed)
        return pair

    add = Psg2SumFolderWriter.add

    def counting_add(self, split, pair):
        peaks.append(alive[0])
        add(self, split, pair)

    pair_from_document = pipeline.pair_from_document
    monkeypatch.setattr(pipeline, "pair_from_document", tracked)
    monkeypatch.setattr(Psg2SumFolderWriter, "add", counting_add)
    monkeypatch.setenv("WIKIREF_SORT_BUFFER_MB", "0.001")
    again = Psg2SumBuildConfig([str(dump)], output_dir=str(tmp_path / "again"), work_dir=str(first.work), **options)
    step = pipeline.WritePsg2SumDataset(again)
    list(step.run())
    assert parquet_hashes(tmp_path / "again") == parquet_hashes(tmp_path / "first") != {}
    assert step.stats["sort_runs_spilled"].total >= 2
    assert created[0] == 2 * 6 and len(peaks) == 2 and max(peaks) <= 2
