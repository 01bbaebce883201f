"""The WikiRef build (``wikiref_dataset/wikiref/build.py`` + ``build_cli.py``): end to end on the embedded sample,
worker-count determinism, kill-and-resume, and the real dump / real WARC join."""

from __future__ import annotations

import gzip
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from wikiref_dataset.wikiref.build import BuildConfig, dataset_hashes, run_build, run_demo_build, sample_inputs
from wikiref_dataset.wikiref.cli import main as build_main

REALDATA = Path(__file__).resolve().parents[3] / "shared" / "realdata"
REAL_DUMP = REALDATA / "wikipedia_dump" / "enwiki-pages-articles-sample.xml.bz2"
REAL_WARCS = sorted([*REALDATA.glob("warc/dolma/*.warc.gz"), *REALDATA.glob("warc/resiliparse/*.warc.gz"),
                     *REALDATA.glob("warc/whirlwind/whirlwind.warc.gz"),
                     *REALDATA.glob("warc/warcio_testdata/test/data/example.warc.gz")])


def work_of(out: Path) -> Path:
    """The default work folder: beside the output folder, never inside it."""
    return out.with_name(out.name + ".work")


@pytest.fixture(scope="module")
def demo_build(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo") / "wikiref"
    return out, run_demo_build(out, progress=False)


def test_demo_build_counts_and_outputs(demo_build):
    out, summary = demo_build
    counts = summary.counts
    assert counts["raw statements"] == 29
    assert counts["dropped: document not archived"] == 1
    assert counts["examples joined"] == 28
    assert counts["dropped by unigram recall: low unigram recall"] == 2
    assert sum(v for k, v in counts.items() if k.startswith("dropped by length bounds")) == 6
    assert counts["dropped by extractive oracle: low oracle score"] == 1
    assert counts["examples curated"] == sum(summary.splits.values()) == 19
    assert all(summary.splits[name] >= 1 for name in ("train", "validation", "test"))
    names = sorted(p.name for p in (out / "data").iterdir())
    assert [re.fullmatch(r"(\w+)-00000-of-00001-[0-9a-f]{16}\.parquet", n).group(1) for n in names] == [
        "test", "train", "validation"]
    assert (out / "README.md").is_file() and len(list((out / "figures").glob("*.png"))) == 6
    assert not (out / "work").exists() and summary.work == str(work_of(out))
    rejects = [json.loads(line) for path in (work_of(out) / "rejects" / "missing").glob("*.jsonl.gz")
               for line in gzip.open(path, "rt")]
    assert [r["reason"] for r in rejects] == ["missing/not_archived"]
    assert "raw statements" in summary.format()


def test_stage_stats_reader_gives_the_counts_the_build_printed(demo_build, tmp_path):
    """The one reader of datatrove's per-task stats on a real build's logs: each step's counters summed over the two
    tasks (as the raw files add up), the counts the build printed; a task without its stats file is named, a file
    that is not datatrove's stats is named too, or left out when asked."""
    import shutil
    from collections import Counter

    from wikiref_dataset.mining.stages import read_stage_stats
    from wikiref_dataset.wikiref.build import collect_counts

    out, summary = demo_build
    work = work_of(out)
    for stage in ("statements", "documents", "statistics", "curation"):
        raw: dict[str, Counter] = {}
        for path in sorted((work / "logs" / stage / "stats").glob("*.json")):
            for step in json.loads(path.read_text(encoding="utf-8")):
                counter = raw.setdefault(step["name"], Counter())
                for key, value in step["stats"].items():
                    counter[key] += value["total"] if isinstance(value, dict) else value
        stats = read_stage_stats(work / "logs" / stage, tasks=2)
        assert stats.steps == raw and list(stats.steps) == list(raw)
        assert set(stats.tasks.values()) == {2} and stats.missing == [] and stats.unreadable == []
    statements = read_stage_stats(work / "logs" / "statements")
    assert statements.totals()["statements"] == summary.counts["raw statements"] == 29
    assert collect_counts(work).items() <= summary.counts.items()

    logs = tmp_path / "statements"
    shutil.copytree(work / "logs" / "statements", logs)
    (logs / "stats" / "00001.json").unlink()
    alone = read_stage_stats(logs, tasks=2)
    assert alone.missing == [1] and set(alone.tasks.values()) == {1}
    first = [step["stats"].get("statements", 0) for step in json.loads((logs / "stats" / "00000.json").read_bytes())]
    assert alone.totals()["statements"] == sum(v["total"] if isinstance(v, dict) else v for v in first)
    assert read_stage_stats(logs).missing == []  # without `tasks`, only the files there are read
    (logs / "stats" / "00000.json").write_text('[{"name": "cut', encoding="utf-8")
    with pytest.raises(ValueError, match=r"00000\.json: not a datatrove stats file"):
        read_stage_stats(logs)
    skipped = read_stage_stats(logs, skip_unreadable=True)
    assert skipped.steps == {} and [path.name for path, _ in skipped.unreadable] == ["00000.json"]


def test_one_and_two_workers_give_identical_parquet(demo_build, tmp_path):
    out, _ = demo_build
    dumps, warcs = sample_inputs()
    run_build(BuildConfig(dumps=dumps, warcs=warcs, output_dir=str(tmp_path / "two"), workers=2, tasks=2),
              progress=False)
    assert dataset_hashes(tmp_path / "two") == dataset_hashes(out)


def test_rerun_is_resumed_and_changed_inputs_redo_only_their_stages(tmp_path):
    """Same inputs: every stage is reused. Other curation options: stages 1-2 are reused, 3-5 redone, and the folder
    equals a fresh build with those options."""
    from wikiref_dataset.wikiref.curation import CurationConfig

    out = tmp_path / "wikiref"
    summary = run_demo_build(out, progress=False)
    dumps, warcs = sample_inputs()
    statements_done = work_of(out) / "logs" / "statements" / "completions" / "00000"
    stamp = statements_done.stat().st_mtime_ns
    again = run_build(BuildConfig(dumps=dumps, warcs=warcs, output_dir=str(out), tasks=2), progress=False)
    assert again.counts == summary.counts
    stricter = CurationConfig(min_unigram_recall=0.95)
    changed = run_build(BuildConfig(dumps=dumps, warcs=warcs, output_dir=str(out), tasks=2, curation=stricter),
                        progress=False)
    fresh = run_build(BuildConfig(dumps=dumps, warcs=warcs, output_dir=str(tmp_path / "fresh"), tasks=2,
                                  curation=stricter), progress=False)
    assert statements_done.stat().st_mtime_ns == stamp  # stage 1 reused
    assert changed.counts == fresh.counts and changed.counts["examples curated"] < 19
    assert dataset_hashes(out) == dataset_hashes(tmp_path / "fresh")


def _command(out: Path) -> list[str]:
    dumps, warcs = sample_inputs()
    code = ("import sys; from wikiref_dataset.wikiref.cli import main; "
            f"sys.exit(main([{dumps[0]!r}, '--warc', {warcs[0]!r}, '--out', {str(out)!r}, '--tasks', '2',"
            " '--quiet']))")
    return [sys.executable, "-c", code]


@pytest.mark.parametrize("after_stage", ["statements", "statistics"])
def test_killed_build_resumes_to_the_same_dataset(demo_build, tmp_path, after_stage):
    """SIGKILL the build (the whole process group) as soon as a stage's completion marker appears, rerun it,
    and compare the Parquet hashes with the uninterrupted build's."""
    out, _ = demo_build
    killed = tmp_path / "killed"
    marker = work_of(killed) / "logs" / after_stage / "completions" / "00000"
    process = subprocess.Popen(_command(killed), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)
    deadline = time.monotonic() + 60
    while not marker.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert marker.exists(), f"stage {after_stage} never finished"
    was_running = process.poll() is None
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    assert was_running, "the build finished before it could be killed"
    assert not killed.exists()  # the output folder appears whole at the end, or not at all
    rerun = subprocess.run(_command(killed), capture_output=True, text=True, timeout=120)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    assert dataset_hashes(killed) == dataset_hashes(out)


def test_cli_reports_bad_options(tmp_path, capsys):
    dumps, warcs = sample_inputs()
    assert build_main([*dumps, "--warc", *warcs, "--out", str(tmp_path), "--percentiles", "90", "10"]) == 2
    assert "percentile" in capsys.readouterr().err


@pytest.mark.skipif(not REAL_DUMP.is_file(), reason="../shared/realdata is absent")
def test_real_dump_statements_and_real_warc_join(tmp_path):
    """Statements from the real dump inside the build; joined with the real WARC pages where URLs match. The
    WARCs are unrelated crawls, so the join finds no cited page (0 examples): every statement is counted as
    missing, the build publishes nothing and says which filter emptied it."""
    summary = run_build(BuildConfig(dumps=[str(REAL_DUMP)], warcs=[str(p) for p in REAL_WARCS],
                                    output_dir=str(tmp_path / "real"), tasks=2), progress=False)
    counts = summary.counts
    assert counts["raw statements"] > 1_000
    joined = counts["examples joined"]
    missing = sum(v for k, v in counts.items() if k.startswith("dropped: document"))
    assert joined + missing + counts.get("dropped: bad statement records", 0) == counts["raw statements"]
    print(f"real join: {counts['raw statements']} statements, {joined} with a page in the real WARCs")
    assert joined == 0
    assert sum(summary.splits.values()) == 0
    assert "tightest filter is 'dropped: document not archived'" in summary.empty_reason
    assert not (tmp_path / "real").exists()


def test_slurm_build_is_one_submission_of_the_five_stages_chained(tmp_path, monkeypatch, capsys):
    """One call submits all five stages, each job after the previous one; a rerun while they are queued submits
    nothing; a chain broken by a failed task is cancelled and resubmitted; once the jobs finished, a rerun returns
    the summary. Without a cluster: the submission and Slurm's queue are faked."""
    from types import SimpleNamespace

    import wikiref_dataset.process.executors as executors
    import wikiref_dataset.process.slurm as slurm

    submitted, cancelled, queue = [], [], []

    class FakeExecutor:
        def __init__(self, stage, steps, tasks, depends):
            self.stage, self.steps, self.tasks, self.depends, self.job_id = stage, steps, tasks, depends, None

        def run(self):  # like datatrove's: the dependencies are submitted first, each after the one before
            chain, executor = [], self
            while executor is not None:
                chain.append(executor)
                executor = executor.depends
            for executor in reversed(chain):
                executor.job_id = str(100 + sum(map(len, submitted)) + chain[::-1].index(executor))
            submitted.append([executor.stage for executor in reversed(chain)])

    monkeypatch.setattr(executors, "make_executor", lambda config, stage, steps, tasks, depends=None:
                        FakeExecutor(stage, steps, tasks, depends))
    monkeypatch.setattr(slurm, "_slurm_queue", lambda: list(queue))
    monkeypatch.setattr(executors, "subprocess", SimpleNamespace(
        run=lambda command, check: cancelled.append(command), CalledProcessError=subprocess.CalledProcessError))
    dumps, warcs = sample_inputs()
    config = BuildConfig(dumps=dumps, warcs=warcs, output_dir=str(tmp_path / "out"), executor="slurm", tasks=2)
    assert run_build(config) is None
    stages = ["statements", "documents", "statistics", "curation", "dataset"]
    assert submitted == [stages]
    jobs = {stage: str(100 + position) for position, stage in enumerate(stages)}
    assert json.loads((config.work / "slurm_jobs.json").read_text()) == jobs
    message = capsys.readouterr().out
    assert "documents   job      101  2 task(s), after job 100" in message
    assert f"{config.work / 'logs'}/<stage>/slurm_logs/" in message and "squeue -j 100,101,102,103,104" in message

    queue[:] = [("100", "None", "(null)"), ("101", "Dependency", "afterok:100_*(unfulfilled)")]
    assert run_build(config) is None and len(submitted) == 1
    assert "still queued or running (squeue -j 100,101)" in capsys.readouterr().out

    queue[:] = [("103", "DependencyNeverSatisfied", "afterok:102_*(failed)"), ("999", "None", "(null)")]
    assert run_build(config) is None
    assert cancelled == [["scancel", "103"]] and submitted[-1] == stages

    (config.work / "build.json").write_text(json.dumps({"counts": {"raw statements": 3}, "splits": {"train": 1}}))
    summary = run_build(config)
    assert summary is not None and summary.counts == {"raw statements": 3} and len(submitted) == 2


def test_bad_records_are_counted_and_rejected_not_fatal(demo_build, tmp_path):
    """Garbage lines and broken statement records in the stage 1/2 files: counted, written to the rejects file,
    and the other examples still come out."""
    import shutil

    from wikiref_dataset.wikiref.build import CurationExamples

    out, summary = demo_build
    work = tmp_path / "work"
    shutil.copytree(work_of(out) / "statements", work / "statements", ignore=shutil.ignore_patterns("logs"))
    shutil.copytree(work_of(out) / "documents", work / "documents", ignore=shutil.ignore_patterns("logs", "*.sqlite"))
    with gzip.open(work / "statements" / "00001" / "00009.jsonl.gz", "wt") as handle:  # bucket 1, another writer
        handle.write('{"id": "9-9", "text": "no metadata"}\nnot json at all\n[1, 2]\n')
    steps = [CurationExamples(str(work / "statements"), str(work / "documents"), str(tmp_path / "rejects"))
             for _ in range(2)]
    examples = [e for rank, step in enumerate(steps) for e in step.run(None, rank=rank, world_size=2)]
    assert len(examples) == summary.counts["examples joined"]
    assert steps[0].stats["bad_records"].total == 0 and steps[1].stats["bad_records"].total == 3
    rejects = [json.loads(line) for line in gzip.open(tmp_path / "rejects" / "00001.jsonl.gz", "rt")]
    assert sum(r["reason"] == "bad_record" for r in rejects) == 3


def test_damaged_dump_and_warcs_are_counted_by_file_and_the_build_goes_on(demo_build, tmp_path, capsys):
    """A real dump cut in half and two damaged real WARCs beside the embedded sample: the build finishes (exit 0),
    the closing table and build.json name each damaged file, and the sample's examples all come out."""
    from damaged_files import flipped, real_file, truncated

    from wikiref_dataset.cli import main

    dumps, warcs = sample_inputs()
    cut_dump = truncated(real_file("wikipedia_dump/enwiki-pages-articles-sample.xml.bz2").read_bytes(),
                         tmp_path / "enwiki-cut.xml.bz2", 0.5)
    cut_warc = truncated(real_file("warc/dolma/sample-0000.warc.gz").read_bytes(), tmp_path / "dolma-cut.warc.gz", 0.5)
    bad_warc = flipped(real_file("warc/resiliparse/warcfile.warc.gz").read_bytes(), tmp_path / "cc-flipped.warc.gz",
                       0.5)
    out = tmp_path / "out"
    assert main(["build", *dumps, str(cut_dump), "--warc", *warcs, str(cut_warc), str(bad_warc),
                 "--out", str(out), "--tasks", "2", "--quiet"]) == 0
    printed = capsys.readouterr().out
    damaged = {"damaged dump files": 1,
               "damaged dump enwiki-cut.xml.bz2 (EOFError: Compressed file ended before the end-of-stream marker "
               "was reached): pages read": 38,
               "WARC dolma-cut.warc.gz: truncated": 1, "WARC dolma-cut.warc.gz: captures kept": 13,
               "WARC cc-flipped.warc.gz: corrupt_record": 1, "WARC cc-flipped.warc.gz: captures kept": 15}
    counts = json.loads((out / "build.json").read_text(encoding="utf-8"))["counts"]
    assert {name: counts.get(name) for name in damaged} == damaged
    for name, value in damaged.items():
        assert re.search(rf"^  {re.escape(name)}\s+{value}$", printed, re.MULTILINE), name
    assert counts["examples joined"] == demo_build[1].counts["examples joined"]  # the sample's pages all joined


def test_build_says_so_when_no_dump_could_be_read(tmp_path, capsys):
    from damaged_files import real_file, truncated

    from wikiref_dataset.cli import main

    _, warcs = sample_inputs()
    head = truncated(real_file("wikipedia_dump/enwiki-pages-articles-sample.xml.bz2").read_bytes(),
                     tmp_path / "enwiki-head.xml.bz2", 0.01)  # inside the first bz2 block: no page
    assert main(["build", str(head), "--warc", *warcs, "--out", str(tmp_path / "out"), "--quiet"]) == 2
    assert ("wikiref build: error: nothing could be read: 1 damaged dump(s), no page read before the damage: "
            "enwiki-head.xml.bz2 (EOFError") in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_stage_3_join_spills_past_its_sort_buffer_and_yields_the_same_examples(demo_build, tmp_path, monkeypatch):
    """Stage 3's merge join with a sort buffer of ~2 KB: its sorts spill runs to disk (and remove them) and the
    examples are the same, in id order per task, as with the default buffer."""
    import shutil

    from wikiref_dataset.wikiref.build import CurationExamples

    out, summary = demo_build
    work = tmp_path / "work"
    shutil.copytree(work_of(out) / "statements", work / "statements", ignore=shutil.ignore_patterns("logs"))
    shutil.copytree(work_of(out) / "documents", work / "documents", ignore=shutil.ignore_patterns("logs", "*.sqlite"))

    def joined(rejects: str) -> tuple[list, list[list[tuple]]]:
        steps = [CurationExamples(str(work / "statements"), str(work / "documents"), str(tmp_path / rejects),
                                  spill_dir=str(tmp_path / "spill")) for _ in range(2)]
        return steps, [[(d.id, d.text, d.metadata) for d in step.run(None, rank=rank, world_size=2)]
                       for rank, step in enumerate(steps)]

    _, default = joined("rejects-default")
    monkeypatch.setenv("WIKIREF_SORT_BUFFER_MB", "0.002")
    steps, spilled = joined("rejects-spilled")
    assert spilled == default and sum(map(len, default)) == summary.counts["examples joined"]
    assert all([item[0] for item in task] == sorted(item[0] for item in task) for task in spilled)
    assert sum(step.stats["sort_runs_spilled"].total for step in steps) > 4
    assert not any((tmp_path / "spill").iterdir())


def test_stage_5_streams_the_curated_shards(demo_build, tmp_path, monkeypatch):
    """Stage 5 run again on the demo's curated shards: the same Parquet bytes, and at most one example per shard (plus
    the one being written) alive at any time, so a return to loading every example into a list fails here."""
    import shutil
    import weakref

    from wikiref_dataset.wikiref import build as pipeline
    from wikiref_dataset.wikiref.curation import Example
    from wikiref_dataset.wikiref.dataset import WikiRefFolderWriter

    out, summary = demo_build
    work = tmp_path / "work"
    shutil.copytree(work_of(out) / "curated", work / "curated")
    alive = [0]  # examples created and not yet freed

    def freed() -> None:
        alive[0] -= 1

    class TrackedExample(Example):
        @classmethod
        def from_document(cls, document):
            example = super().from_document(document)
            alive[0] += 1
            weakref.finalize(example, freed)
            return example

    peaks = []
    add = WikiRefFolderWriter.add

    def counting_add(self, split, example):
        peaks.append(alive[0])
        add(self, split, example)

    monkeypatch.setattr(pipeline, "Example", TrackedExample)
    monkeypatch.setattr(WikiRefFolderWriter, "add", counting_add)
    dumps, warcs = sample_inputs()
    config = BuildConfig(dumps=dumps, warcs=warcs, output_dir=str(tmp_path / "out"), work_dir=str(work), tasks=2)
    list(pipeline.WriteDataset(config).run())
    assert dataset_hashes(tmp_path / "out") == dataset_hashes(out)
    assert len(peaks) == summary.counts["examples curated"] == 19
    assert max(peaks) <= 2 + 1  # the head of each of the 2 shards, and the example being written


def test_a_former_slurm_build_rerun_here_without_slurm_goes_on(tmp_path, monkeypatch, caplog):
    """A work folder whose last submission went to Slurm, rerun locally with other inputs on a machine where
    ``squeue`` cannot run: whether the old jobs still run cannot be told, so the build says so and goes on."""
    import wikiref_dataset.process.slurm as slurm

    def unreachable():
        raise ValueError("cannot reach the Slurm cluster (squeue: No such file or directory)")

    monkeypatch.setattr(slurm, "_slurm_queue", unreachable)
    dumps, warcs = sample_inputs()
    config = BuildConfig(dumps=dumps, warcs=warcs, output_dir=str(tmp_path / "out"), tasks=2)
    config.work.mkdir(parents=True)
    (config.work / "inputs.json").write_text("{}", encoding="utf-8")  # a previous run with other inputs
    (config.work / "slurm_jobs.json").write_text(json.dumps({"statements": "100"}), encoding="utf-8")
    with caplog.at_level("WARNING"):
        summary = run_build(config, progress=False)
    assert summary is not None and summary.counts["examples curated"] > 0
    assert "cannot tell whether the Slurm jobs 100 still run" in caplog.text
