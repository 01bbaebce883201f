"""Tests for wikiref_dataset.web.cli: the `documents` subcommand on a fresh argparse parser."""

from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path

import pytest

from wikiref_dataset.command import dispatch
from wikiref_dataset.web.cli import add_documents_parser, warc_files


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="wikiref")
    commands = root.add_subparsers(dest="command", required=True)
    add_documents_parser(commands)
    return root


def run(argv: list[str]) -> int:
    return dispatch(parser(), argv)


def test_documents_command(tmp_path: Path, web_fixtures: Path, warc_builder, capsys) -> None:
    crawl = tmp_path / "crawl" / "nested"
    crawl.mkdir(parents=True)
    warc_builder().response("https://ledger.example/bridge", (web_fixtures / "article.html").read_bytes()).write(
        crawl / "part-1.warc.gz")
    (crawl / "notes.txt").write_text("not a WARC file")
    statements = tmp_path / "statements.jsonl.gz"
    with gzip.open(statements, "wt") as out:
        for number, url in enumerate(["https://ledger.example/bridge", "https://ledger.example/other"]):
            out.write(json.dumps({"text": "s", "id": f"s{number}", "metadata": {"url": url, "fetch_url": url}}) + "\n")
    out_dir = tmp_path / "out"
    assert run(["documents", str(statements), "--warc", str(tmp_path / "crawl"), "--out", str(out_dir), "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "fetched        1  (warc 1)" in printed and "missing        1  (not_archived 1)" in printed
    assert "archive: 1 WARC files, 1 captures indexed" in printed
    assert (out_dir / "warc_index.sqlite").is_file() and list((out_dir / "documents").glob("*.jsonl.gz"))

    # the index is reused by path, without the WARC files
    again = tmp_path / "again"
    assert run(["documents", str(statements), "--warc-index", str(out_dir / "warc_index.sqlite"), "--out",
                str(again), "--quiet"]) == 0
    assert "fetched        1  (warc 1)" in capsys.readouterr().out


def test_documents_command_errors(tmp_path: Path, capsys) -> None:
    assert run(["documents", str(tmp_path / "missing.jsonl"), "--warc", str(tmp_path), "--out", str(tmp_path)]) == 2
    assert "no WARC files" in capsys.readouterr().err
    statements = tmp_path / "s.jsonl"
    statements.write_text("")
    assert run(["documents", str(statements), "--out", str(tmp_path / "o")]) == 2
    assert "nothing to fetch from" in capsys.readouterr().err
    warc = tmp_path / "a.warc"
    warc.write_bytes(b"")
    assert run(["documents", str(tmp_path / "nope.jsonl"), "--warc", str(warc), "--out", str(tmp_path / "o")]) == 2
    assert "nope.jsonl: no such file" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:
        parser().parse_args(["documents", "--help"])
    assert exit_info.value.code == 0
    assert "--http" in capsys.readouterr().out


def test_warc_files(tmp_path: Path) -> None:
    (tmp_path / "a.warc.gz").write_bytes(b"")
    (tmp_path / "b.ARC").write_bytes(b"")
    (tmp_path / "c.txt").write_bytes(b"")
    assert [p.name for p in warc_files([str(tmp_path)])] == ["a.warc.gz", "b.ARC"]
    with pytest.raises(FileNotFoundError):
        warc_files([str(tmp_path / "none")])


def test_source_option_defaults_match_the_configs():
    """The command line's copy of the source settings' defaults and help (kept to keep --help light) equals what
    CommonCrawlConfig and HttpConfig declare."""
    from wikiref_dataset.web.cli import SOURCE_DEFAULTS, field_defaults
    from wikiref_dataset.web.commoncrawl import CommonCrawlConfig
    from wikiref_dataset.web.http import HttpConfig

    for name, config in (("common_crawl", CommonCrawlConfig), ("http", HttpConfig)):
        declared = field_defaults(config)
        for option, copied in SOURCE_DEFAULTS[name].items():
            assert copied == declared[option], (name, option)
