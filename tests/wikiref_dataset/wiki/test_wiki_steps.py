"""The datatrove stage: sharding by dump file, JSONL shards, stats, summary, resume."""

import bz2
import gzip
import json
from pathlib import Path

import pytest

from wikiref_dataset.wiki.statements import Statement, StatementConfig
from wikiref_dataset.wiki.steps import (
    StatementsSummary,
    WikiDumpStatements,
    build_statements_pipeline,
    iter_statements,
    read_summary,
    run_statements,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "wiki"
TINY_DUMP = FIXTURES / "tiny-dump.xml"


@pytest.fixture()
def two_dumps(tmp_path) -> list[Path]:
    """The tiny dump, and a bz2 dump holding the fixture article as page 7."""
    article = (FIXTURES / "article.wiki").read_text(encoding="utf-8")
    xml = TINY_DUMP.read_text(encoding="utf-8")
    head = xml.split("<page>", 1)[0]
    escaped = article.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    second = (head + "<page><title>Testville</title><ns>0</ns><id>7</id><revision><id>70</id>"
              "<timestamp>2020-05-01T00:00:00Z</timestamp><text xml:space=\"preserve\">" + escaped +
              "</text></revision></page></mediawiki>")
    path = tmp_path / "second.xml.bz2"
    path.write_bytes(bz2.compress(second.encode("utf-8")))
    return [TINY_DUMP, path]


def test_step_takes_files_rank_by_world_size(two_dumps):
    step = WikiDumpStatements(two_dumps)
    rank0 = list(step.run(None, rank=0, world_size=2))
    rank1 = list(WikiDumpStatements(two_dumps).run(None, rank=1, world_size=2))
    assert [doc.id for doc in rank0] == ["101-0", "101-1", "101-2", "104-0", "104-1"]
    assert {doc.metadata["page_id"] for doc in rank1} == {7}
    assert len(rank1) == 10  # "Its water is <math>H_2O</math> clean." is dropped: the formula is a hole
    assert list(WikiDumpStatements(two_dumps).run(None, rank=2, world_size=3)) == []
    stats = step.stats.stats
    assert stats["pages"].total == 2 and stats["statements"].total == 5 and stats["kept/cite web"].total == 2
    assert stats["dump_files"].total == 1 and step.stats.time_stats.n == 2


def test_step_passes_documents_through_and_limits_pages(two_dumps):
    from datatrove.data import Document

    upstream = [Document(text="kept", id="upstream")]
    documents = list(WikiDumpStatements(two_dumps[:1], limit=1).run(iter(upstream)))
    assert [doc.id for doc in documents] == ["upstream", "101-0", "101-1", "101-2"]


def test_pipeline_writes_shards_and_summary(two_dumps, tmp_path):
    out = tmp_path / "statements"
    summary = run_statements(two_dumps, out, config=StatementConfig(), workers=1)
    assert sorted(path.name for path in out.glob("*.jsonl.gz")) == ["00000.jsonl.gz", "00001.jsonl.gz"]
    with gzip.open(out / "00000.jsonl.gz", "rt", encoding="utf-8") as handle:
        record = json.loads(handle.readline())
    assert record["id"] == "101-0" and record["text"] == "Alpha Town is a town."
    assert record["metadata"]["fetch_url"] == "https://alpha.example.org/"
    statements = list(iter_statements(out))
    assert len(statements) == 15 and all(isinstance(s, Statement) for s in statements)
    assert isinstance(summary, StatementsSummary)
    assert (summary.tasks, summary.pages, summary.statements, summary.pages_failed) == (2, 3, 15, 0)
    assert summary.kept == {"cite web": 7, "cite news": 6, "cite press release": 2}
    assert summary.skipped == {"cite book": 2, "sfn": 1}
    assert (summary.bare_urls_skipped, summary.named_refs_resolved, summary.archive_urls_used) == (1, 5, 4)
    assert summary.counts["dropped_unrendered_template"] == summary.counts["unrendered_template/math tag"] == 1
    text = summary.format()
    assert "statements: 15 from 3 pages in 2 tasks" in text and "cite press release 2" in text
    assert "unrendered template 1" in text

    # a rerun skips the finished tasks and the summary is unchanged
    (out / "00000.jsonl.gz").unlink()
    again = run_statements(two_dumps, out, workers=1)
    assert not (out / "00000.jsonl.gz").exists()
    assert again == summary
    assert read_summary(out) == summary


def test_summary_leaves_out_an_unreadable_stats_file_and_names_it(two_dumps, tmp_path, caplog):
    out = tmp_path / "statements"
    summary = run_statements(two_dumps, out, workers=1)
    (out / "logs" / "stats" / "00001.json").write_text("[{", encoding="utf-8")
    with caplog.at_level("WARNING"):
        partial = read_summary(out)
    assert "00001.json: unreadable stats file" in caplog.text
    assert partial.tasks == 1 and 0 < partial.statements < summary.statements


def test_pipeline_with_two_workers(two_dumps, tmp_path):
    out = tmp_path / "parallel"
    summary = run_statements(two_dumps, out, workers=2)
    assert summary.statements == 15 and summary.tasks == 2
    assert sorted(s.id for s in iter_statements(out)) == sorted(
        ["101-0", "101-1", "101-2", "104-0", "104-1"] + [f"7-{p}" for p in (0, 1, 3, 4, 5, 6, 7, 8, 12, 13)])


def test_build_pipeline_checks_its_arguments(two_dumps, tmp_path):
    with pytest.raises(ValueError, match="no dump file"):
        build_statements_pipeline([], tmp_path)
    with pytest.raises(ValueError, match="tasks and workers"):
        build_statements_pipeline(two_dumps, tmp_path, workers=0)
    executor = build_statements_pipeline(two_dumps, tmp_path / "o", logging_dir=tmp_path / "l", tasks=4)
    assert executor.world_size == 4
    assert [type(step).__name__ for step in executor.pipeline] == ["WikiDumpStatements", "JsonlWriter"]
