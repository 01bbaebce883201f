"""The ``statements`` subcommand, registered on a fresh parser as ``wikiref`` does it."""

import argparse
from pathlib import Path
from xml.sax.saxutils import escape

import pytest

from wikiref_dataset.command import dispatch
from wikiref_dataset.wiki.cli import add_statements_parser
from wikiref_dataset.wiki.steps import iter_statements

TINY_DUMP = Path(__file__).resolve().parents[2] / "fixtures" / "wiki" / "tiny-dump.xml"


def run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="wikiref")
    commands = parser.add_subparsers(dest="command", required=True)
    add_statements_parser(commands)
    return dispatch(parser, argv)


def test_statements_command(tmp_path, capsys):
    out = tmp_path / "out"
    assert run(["statements", str(TINY_DUMP), "--out", str(out), "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "statements: 5 from 2 pages in 1 task" in printed
    assert "kept by type: cite news 2, cite web 2, cite press release 1" in printed
    assert "skipped types: cite book 1" in printed
    assert len(list(iter_statements(out))) == 5


def test_statements_command_options(tmp_path, capsys):
    out = tmp_path / "out"
    argv = ["statements", str(TINY_DUMP), "--out", str(out), "--keep-types", "cite news", "--bare-urls",
            "--skip-sections", "history", "--min-chars", "5", "--quiet"]
    assert run(argv) == 0
    statements = list(iter_statements(out))
    assert {s.citation.type for s in statements} == {"cite news"}
    skipped = next(line for line in capsys.readouterr().out.splitlines() if "skipped types" in line)
    assert "cite web 1" in skipped and "cite press release 1" in skipped  # Beta Village's History: skipped


def test_missing_dump_and_bad_options(tmp_path, capsys):
    assert run(["statements", str(tmp_path / "absent.xml.bz2"), "--out", str(tmp_path / "o")]) == 2
    assert "no such dump file" in capsys.readouterr().err
    assert run(["statements", str(TINY_DUMP), "--out", str(tmp_path / "o"), "--min-chars", "-3"]) == 2
    assert "min_statement_chars" in capsys.readouterr().err
    bad = tmp_path / "bad.xml.bz2"
    bad.write_bytes(b"not bz2")
    assert run(["statements", str(bad), "--out", str(tmp_path / "o2"), "--quiet"]) in (1, 2)
    assert "bad.xml.bz2" in capsys.readouterr().err


def test_help_lists_the_options(capsys):
    with pytest.raises(SystemExit):
        run(["statements", "--help"])
    help_text = capsys.readouterr().out
    for option in ("--out", "--tasks", "--workers", "--keep-types", "--bare-urls", "--skip-sections"):
        assert option in help_text


def test_statements_command_keeps_the_pages_before_a_damaged_dump(tmp_path, capsys):
    """A real dump cut in half: the statements of the 38 articles before the cut are written, the file is named
    with its error in the summary, the next dump is read, and the exit status is 0."""
    from damaged_files import real_file, truncated

    from wikiref_dataset.cli import main

    sample = real_file("wikipedia_dump/enwiki-pages-articles-sample.xml.bz2")
    cut = truncated(sample.read_bytes(), tmp_path / "enwiki-cut.xml.bz2", 0.5)
    assert main(["statements", str(sample), "--out", str(tmp_path / "whole"), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["statements", str(cut), str(TINY_DUMP), "--out", str(tmp_path / "cut"), "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert ("damaged dump: enwiki-cut.xml.bz2 (EOFError: Compressed file ended before the end-of-stream marker was "
            "reached): 38 pages read before the damage, kept") in printed
    assert "from 40 pages in 2 tasks" in printed  # 38 before the cut + the 2 of the tiny dump read after it
    whole = [s.to_document().text for s in iter_statements(tmp_path / "whole")]
    kept = [s for s in iter_statements(tmp_path / "cut") if s.page_title not in ("Alpha Town", "Beta Village")]
    assert 0 < len(kept) < len(whole) and [s.to_document().text for s in kept] == whole[: len(kept)]


def test_statements_command_exits_2_when_nothing_could_be_read(tmp_path, capsys):
    from damaged_files import real_file, truncated

    from wikiref_dataset.cli import main

    sample = real_file("wikipedia_dump/enwiki-pages-articles-sample.xml.bz2")
    cut = truncated(sample.read_bytes(), tmp_path / "enwiki-head.xml.bz2", 0.01)  # inside the first bz2 block
    assert main(["statements", str(cut), "--out", str(tmp_path / "out"), "--quiet"]) == 2  # bad input
    captured = capsys.readouterr()
    assert "damaged dump: enwiki-head.xml.bz2 (EOFError" in captured.out and "0 pages read" in captured.out
    assert "wikiref statements: error: nothing could be read: 1 damaged dump(s)" in captured.err


HOLE_WIKITEXT = (
    "Gamma Town has a population of {{Unknown census figure|GT}} people in the valley."
    "<ref>{{cite web |url=https://news.example.org/gamma |title=Census}}</ref>\n"
    "The mayor was {{age|1950|1|1}} years old when elected in the spring."
    "<ref>{{cite web |url=https://news.example.org/mayor |title=Mayor}}</ref>\n")


def hole_dump(path: Path) -> Path:
    """A one-page dump (revision of 2020-05-01) whose two statements hold an unknown template and {{age}}."""
    head = TINY_DUMP.read_text(encoding="utf-8").split("<page>")[0]
    page = ("<page><title>Gamma Town</title><ns>0</ns><id>77</id><revision><id>770</id>"
            "<timestamp>2020-05-01T00:00:00Z</timestamp><model>wikitext</model><format>text/x-wiki</format>"
            f'<text xml:space="preserve">{escape(HOLE_WIKITEXT)}</text></revision></page>')
    path.write_text(f"{head}{page}\n</mediawiki>\n", encoding="utf-8")
    return path


def test_statement_text_options(tmp_path, capsys):
    """--keep-unrendered-templates keeps a statement with a hole; --no-relative-dates drops {{age}} statements;
    by default the first is dropped and counted and the age is rendered at the revision's date (70 in 2020)."""
    dump = hole_dump(tmp_path / "holes.xml")
    assert run(["statements", str(dump), "--out", str(tmp_path / "default"), "--quiet"]) == 0
    texts = [s.text for s in iter_statements(tmp_path / "default")]
    assert texts == ["The mayor was 70 years old when elected in the spring."]
    assert "unrendered template 1" in capsys.readouterr().out
    assert run(["statements", str(dump), "--out", str(tmp_path / "kept"), "--keep-unrendered-templates",
                "--quiet"]) == 0
    assert len(list(iter_statements(tmp_path / "kept"))) == 2
    assert run(["statements", str(dump), "--out", str(tmp_path / "nodates"), "--no-relative-dates", "--quiet"]) == 0
    assert list(iter_statements(tmp_path / "nodates")) == []


def test_whole_sentences_and_fragments(tmp_path, capsys):
    """By default a sentence that holds two refs is its last ref's statement, and the closing summary counts it;
    --fragments gives the text since the previous ref (the paper's statement)."""
    wikitext = ("Gamma Town was founded in 1850,<ref>{{cite web |url=https://a.example.org/ |title=A}}</ref> and it "
                "grew after the railway came in 1880.<ref>{{cite web |url=https://b.example.org/ |title=B}}</ref>\n")
    head = TINY_DUMP.read_text(encoding="utf-8").split("<page>")[0]
    page = ("<page><title>Gamma Town</title><ns>0</ns><id>77</id><revision><id>770</id>"
            "<timestamp>2020-05-01T00:00:00Z</timestamp><model>wikitext</model><format>text/x-wiki</format>"
            f'<text xml:space="preserve">{escape(wikitext)}</text></revision></page>')
    dump = tmp_path / "gamma.xml"
    dump.write_text(f"{head}{page}\n</mediawiki>\n", encoding="utf-8")
    assert run(["statements", str(dump), "--out", str(tmp_path / "whole"), "--quiet"]) == 0
    statements = list(iter_statements(tmp_path / "whole"))
    assert [(s.id, s.text, s.citation.url) for s in statements] == [
        ("77-1", "Gamma Town was founded in 1850, and it grew after the railway came in 1880.", "https://b.example.org/")]
    assert ("1 refs stood inside a sentence that goes on, which went whole to its last ref (0 refs got the rest of "
            "their sentence, 1 gave no statement of their own)") in capsys.readouterr().out
    assert run(["statements", str(dump), "--out", str(tmp_path / "fragments"), "--fragments", "--quiet"]) == 0
    assert [s.text for s in iter_statements(tmp_path / "fragments")] == [
        "Gamma Town was founded in 1850,", "and it grew after the railway came in 1880."]
