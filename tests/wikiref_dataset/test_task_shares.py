"""Every task reads only its share, checked through the steps' own ``input_bytes`` counters: WikiRef stage 1 on a
multistream dump cut at stream boundaries, stages 2-3 on their URL bucket's files only, PSG2SUM on whole files; and
the output is the same as with one task."""

from __future__ import annotations

import bz2
import json
import sys
from pathlib import Path

import pytest

from wikiref_dataset.wiki.dump import DumpPart, iter_pages, multistream_index, plan_dump_parts
from wikiref_dataset.wiki.steps import WikiDumpStatements
from wikiref_dataset.wikiref.build import BuildConfig, dataset_hashes, run_build, sample_inputs

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from multistream import make_multistream  # noqa: E402  (tests/multistream.py)

ROOT = Path(__file__).resolve().parents[2]
REAL_DUMP = ROOT.parent / "shared" / "realdata" / "wikipedia_dump" / "enwiki-pages-articles-sample.xml.bz2"


def task_stats(work: Path, stage: str, step: str) -> list[dict[str, int]]:
    """Each task's counters of the step whose name contains ``step``, from datatrove's per-task stats files."""
    result = []
    for path in sorted((work / "logs" / stage / "stats").glob("*.json")):
        for entry in json.loads(path.read_text()):
            if step in entry["name"]:
                stats = entry.get("stats", {})
                result.append({key: int(value["total"] if isinstance(value, dict) else value)
                               for key, value in stats.items()})
    return result


@pytest.fixture(scope="module")
def real_multistream(tmp_path_factory):
    if not REAL_DUMP.is_file():
        pytest.skip("../shared/realdata is absent")
    xml = bz2.open(REAL_DUMP, "rt", encoding="utf-8").read()
    return make_multistream(xml, tmp_path_factory.mktemp("multistream"), name="enwiki-20160601-pages-articles")


def test_multistream_ranges_cover_every_page_once(real_multistream):
    dump, index = real_multistream
    assert multistream_index(dump) == index
    whole = sorted(page.page_id for page in iter_pages(dump))
    assert len(whole) == 106
    for tasks in (2, 3, 5):
        plan = plan_dump_parts([dump], tasks)
        parts = [part for task in plan for part in task]
        assert all(not part.whole for part in parts) and len(plan) == tasks
        assert sorted(page.page_id for part in parts for page in iter_pages(part)) == whole
        assert sorted((part.start, part.end) for part in parts)[-1][1] is None  # the last range runs to the end


@pytest.mark.parametrize("tasks", [2, 3])
def test_stage1_tasks_read_their_share_of_one_multistream_file(real_multistream, tasks):
    """Three tasks on one 1.7 MB multistream file: each reads about a third of the bytes (its streams + the header
    stream), and together they extract exactly the statements one task does."""
    dump, _ = real_multistream
    one = WikiDumpStatements([str(dump)])
    alone = sorted((d.id, d.text) for d in one.run(rank=0, world_size=1))
    steps = [WikiDumpStatements([str(dump)]) for _ in range(tasks)]
    together = sorted((d.id, d.text) for rank, step in enumerate(steps) for d in step.run(rank=rank, world_size=tasks))
    assert together == alone and len(alone) > 2_000
    size = dump.stat().st_size
    shares = [step.stats["input_bytes"].total / size for step in steps]
    print(f"stage 1, {tasks} tasks: input share per task {[round(s, 3) for s in shares]}")
    assert one.stats["input_bytes"].total == size
    assert all(abs(share - 1 / tasks) < 0.15 / tasks for share in shares)  # within 15% of an even share
    assert sum(shares) < 1.01  # the header stream, read by each, is a few hundred bytes


def test_psg2sum_tasks_take_whole_files(tmp_path):
    """Three history files, three tasks: each task reads one file, and the pairs are those of one task."""
    from wikiref_dataset.psg2sum.mining import MiningConfig
    from wikiref_dataset.psg2sum.steps import Psg2SumPairs

    source = (ROOT / "tests" / "fixtures" / "psg2sum" / "history.xml").read_text(encoding="utf-8")
    files = []
    for number in range(3):
        path = tmp_path / f"history{number}.xml"
        path.write_text(source.replace("<title>Pear (fixture)</title>", f"<title>Pear {number}</title>")
                        .replace("<id>1</id>", f"<id>{number + 1}</id>", 1), encoding="utf-8")
        files.append(str(path))
    config = MiningConfig(min_score=0.5)
    alone = Psg2SumPairs(files, config)
    one = sorted(d.id for d in alone.run(rank=0, world_size=1))
    steps = [Psg2SumPairs(files, config) for _ in range(3)]
    three = sorted(d.id for rank, step in enumerate(steps) for d in step.run(rank=rank, world_size=3))
    assert three == one and len(one) == 6
    sizes = sorted(Path(f).stat().st_size for f in files)
    assert sorted(step.stats["input_bytes"].total for step in steps) == sizes
    assert alone.stats["input_bytes"].total == sum(sizes)


def test_wikiref_stages_read_only_their_bucket_and_the_output_is_unchanged(tmp_path):
    """The embedded sample as a multistream dump, 3 shards: stage 1 cuts it into 3 ranges, stages 2-3 read only
    their bucket's files (each file read by exactly one task), and the dataset equals the one-file build's."""
    dumps, warcs = sample_inputs()
    plain = run_build(BuildConfig(dumps=dumps, warcs=warcs, output_dir=str(tmp_path / "plain"), tasks=3),
                      progress=False)
    dump, _ = make_multistream(Path(dumps[0]).read_text(encoding="utf-8"), tmp_path / "ms", pages_per_stream=1)
    config = BuildConfig(dumps=[str(dump)], warcs=warcs, output_dir=str(tmp_path / "split"), tasks=3)
    split = run_build(config, progress=False)
    assert dataset_hashes(tmp_path / "split") == dataset_hashes(tmp_path / "plain") != {}
    assert split.counts == plain.counts
    work = config.work
    stage1 = task_stats(work, "statements", "statements")
    assert len(stage1) == 3 and all(stats.get("dump_ranges") == 1 for stats in stage1)
    size = dump.stat().st_size
    assert all(stats["input_bytes"] < 0.6 * size for stats in stage1)  # a third each, give or take whole pages
    # stage 2: task k read statements/<k>/ only; stage 3: statements/<k>/ + documents/<k> + failed/<k>
    buckets = {k: sum(p.stat().st_size for p in (work / "statements" / f"{k:05d}").glob("*.jsonl.gz")) for k in range(3)}
    stage2 = task_stats(work, "documents", "statements")
    assert [stats.get("input_bytes", 0) for stats in stage2] == [buckets[k] for k in range(3)]
    stage3 = task_stats(work, "statistics", "join")
    for k, stats in enumerate(stage3):
        documents = sum((work / "documents" / folder / f"{k:05d}.jsonl.gz").stat().st_size
                        for folder in ("documents", "failed") if (work / "documents" / folder / f"{k:05d}.jsonl.gz").is_file())
        assert stats.get("input_bytes", 0) == buckets[k] + documents
    assert sum(buckets.values()) > 0 and sum(1 for size in buckets.values() if size) >= 2


def test_part_names_its_range():
    part = DumpPart("/d/x-multistream.xml.bz2", 10, 20, 5)
    assert str(part) == "/d/x-multistream.xml.bz2[10:20]" and not part.whole
    assert str(DumpPart("/d/x.xml.bz2")) == "/d/x.xml.bz2"
