"""Output folders (``wikiref_dataset/process/folders.py``) as a user meets them: a rebuilt folder loads as its last build in a
fresh process with the default ``datasets`` cache, for each of the four writers; folders are published whole,
interrupted builds leave the previous build, foreign folders are refused or, with ``--overwrite``, kept intact."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from wikiref_dataset.cli import main as wikiref_main
from wikiref_dataset.process.folders import (
    MANIFEST,
    OutputFolderError,
    card_data_files,
    check_output_folder,
    load_dataset_folder,
    publish_folder,
    staging_folder,
)
from wikiref_dataset.wikiref.build import sample_inputs

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
DUMPS, WARCS = sample_inputs()

_LOAD = """
import hashlib, json, sys
import datasets
loaded = datasets.load_dataset(sys.argv[1])
print(json.dumps({split: hashlib.sha256(json.dumps(part.to_list(), sort_keys=True, default=str).encode()).hexdigest()
                  for split, part in loaded.items()}))
"""


def loaded_in_fresh_process(folder: Path) -> dict[str, str]:
    """``datasets.load_dataset(folder)`` in a new interpreter with the default cache: a digest of each split's rows."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", _LOAD, str(folder)], capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def on_disk(folder: Path) -> dict[str, str]:
    """The same digests computed from the Parquet files the card names, without ``datasets``."""
    import pyarrow.parquet as pq

    return {split: hashlib.sha256(json.dumps([row for f in files for row in pq.read_table(f).to_pylist()],
                                             sort_keys=True, default=str).encode()).hexdigest()
            for split, files in card_data_files(folder).items()}


def check_three_builds(build, first: Path, other: Path) -> None:
    """build(path, variant) writes variant 0/1/2 (different content); each load must return the files' content."""
    build(first, 0)
    before = loaded_in_fresh_process(first)
    assert before == on_disk(first)
    build(first, 1)  # different content, same path
    again = loaded_in_fresh_process(first)
    assert again == on_disk(first) and again != before
    build(other, 2)  # different content, another path with the same folder name
    assert other.name == first.name
    elsewhere = loaded_in_fresh_process(other)
    assert elsewhere == on_disk(other) and elsewhere not in (before, again)


def test_wikiref_rebuilds_load_as_built(tmp_path):
    options = [[], ["--min-unigram-recall", "0.95"], ["--seed", "7"]]  # 19 rows; 15 rows; 19 rows, other splits

    def build(out: Path, variant: int) -> None:
        assert wikiref_main(["build", *DUMPS, "--warc", *WARCS, "--out", str(out), "--tasks", "2",
                             "--quiet", *options[variant]]) == 0

    check_three_builds(build, tmp_path / "a" / "wikiref", tmp_path / "b" / "wikiref")


def test_duc_conversions_load_as_converted(tmp_path):
    """The issue's case: a year converted without its reference summaries, then the full year."""
    no_models = tmp_path / "no-models"
    no_models.mkdir()
    tree = FIXTURES / "duc" / "duc2006"
    variants = [["--models", str(no_models)], [], ["--models", str(no_models)]]

    def build(out: Path, variant: int) -> None:
        source = tree
        if variant == 2:  # another tree: one cluster fewer
            source = tmp_path / "tree2"
            shutil.copytree(tree, source, dirs_exist_ok=True)
            clusters = sorted(p for p in source.rglob("D06*") if p.is_dir())
            shutil.rmtree(clusters[0])
        assert wikiref_main(["duc", "convert", str(source), "--year", "2006", "--out", str(out), "--quiet",
                             *variants[variant]]) == 0

    first = tmp_path / "x" / "duc2006"
    check_three_builds(build, first, tmp_path / "y" / "duc2006")
    from wikiref_dataset.duc.reader import load_duc

    assert all(row["references"] for row in load_duc(first))


def test_psg2sum_rebuilds_load_as_built(tmp_path):
    options = [["--min-score", "0.5"], ["--min-score", "0.7"], ["--min-score", "0.5", "--validation-size", "1"]]

    def build(out: Path, variant: int) -> None:  # 3 pairs; 2 pairs; the 3 pairs split otherwise
        assert wikiref_main(["psg2sum", str(FIXTURES / "psg2sum" / "history.xml"), "--out", str(out), "--quiet",
                             "--no-baselines", "--validation-size", "0", "--test-size", "0", *options[variant]]) == 0

    check_three_builds(build, tmp_path / "a" / "psg2sum", tmp_path / "b" / "psg2sum")


def released_lines(count: int, salt: str) -> str:
    return "".join(json.dumps({"query": f"question {salt} {i}?", "input_urls": f"https://e.org/{salt}/{i}",
                               "target": f"Answer {salt} number {i}. It has two sentences."}) + "\n"
                   for i in range(count))


def test_aquamuse_rebuilds_load_as_built(tmp_path):
    """Every AQuaMuSe build names its variant folders ``abstractive``/``extractive``: the most shared names."""
    def build(out: Path, variant: int) -> None:
        source = tmp_path / f"released{variant}" / "train" / "release.jsonl"
        source.parent.mkdir(parents=True, exist_ok=True)
        source.write_text(released_lines(3 + variant, str(variant)), encoding="utf-8")
        assert wikiref_main(["aquamuse", "--released", str(source), "--out", str(out.parent), "--quiet"]) == 0

    check_three_builds(build, tmp_path / "a" / "abstractive", tmp_path / "b" / "abstractive")


# ---- the project's own loader -------------------------------------------------------------------------------------


def test_load_dataset_folder_reads_an_old_folder_past_a_stale_cache(tmp_path):
    """Folders written before content-addressed names (card patterns ``data/train-*.parquet``): the cache returns
    the first folder's rows for the second; the project's loader notices and reads the files."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    def old_folder(path: Path, rows: int) -> None:
        (path / "data").mkdir(parents=True)
        pq.write_table(pa.table({"x": list(range(rows))}), path / "data" / "train-00000-of-00001.parquet")
        (path / "README.md").write_text("---\nconfigs:\n- config_name: default\n  data_files:\n  - split: train\n"
                                        "    path: data/train-*.parquet\n---\n", encoding="utf-8")

    cache = str(tmp_path / "cache")
    old_folder(tmp_path / "a" / "old", 3)
    old_folder(tmp_path / "b" / "old", 5)
    import datasets

    assert datasets.load_dataset(str(tmp_path / "a" / "old"), split="train", cache_dir=cache).num_rows == 3
    assert datasets.load_dataset(str(tmp_path / "b" / "old"), split="train", cache_dir=cache).num_rows == 3  # stale
    assert load_dataset_folder(tmp_path / "b" / "old", split="train", cache_dir=cache)["x"] == [0, 1, 2, 3, 4]
    assert load_dataset_folder(tmp_path / "b" / "old", cache_dir=cache)["train"].num_rows == 5


# ---- ownership, publication, interruption -------------------------------------------------------------------------


def build_argv(out: Path, *extra: str) -> list[str]:
    return ["build", *DUMPS, "--warc", *WARCS, "--out", str(out), "--tasks", "2", "--quiet", *extra]


def test_foreign_folder_refused_then_overwritten_keeping_foreign_files(tmp_path, capsys):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("my notes", encoding="utf-8")
    assert wikiref_main(build_argv(out)) == 2
    error = capsys.readouterr().err
    assert "files this project did not write (notes.txt)" in error and "--overwrite" in error
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]
    assert wikiref_main(build_argv(out, "--overwrite")) == 0
    first = sorted(p.name for p in (out / "data").iterdir())
    assert (out / "notes.txt").read_text(encoding="utf-8") == "my notes" and (out / MANIFEST).is_file()
    # a rebuild with other content: the previous build's files go, the user's stay
    assert wikiref_main(build_argv(out, "--overwrite", "--min-unigram-recall", "0.95")) == 0
    second = sorted(p.name for p in (out / "data").iterdir())
    assert len(second) == 3 and second != first  # the old train file is gone (the others have the same rows)
    assert (out / "notes.txt").read_text(encoding="utf-8") == "my notes"
    assert load_dataset_folder(out)["train"].num_rows == 13


def test_other_kinds_and_files_are_refused(tmp_path):
    (tmp_path / "file").write_text("x", encoding="utf-8")
    with pytest.raises(OutputFolderError, match="not a folder"):
        check_output_folder(tmp_path / "file", "wikiref", overwrite=True)
    psg = tmp_path / "psg"
    staging = staging_folder(psg)
    (staging / "README.md").write_text("card", encoding="utf-8")
    publish_folder(staging, psg, "psg2sum")
    with pytest.raises(OutputFolderError, match="holds a psg2sum build, not a wikiref one"):
        check_output_folder(psg, "wikiref")
    check_output_folder(psg, "psg2sum")  # a previous build of the same kind is replaced without asking


def test_publication_killed_between_renames_recovers(tmp_path, monkeypatch):
    """Publication is two renames (previous build aside, new build in): a kill between them leaves no folder, and
    the next publication puts the new build in place and removes the set-aside one."""
    import wikiref_dataset.process.folders as folders

    out = tmp_path / "ds"

    def stage(text: str) -> Path:
        staging = staging_folder(out)
        (staging / "README.md").write_text(text, encoding="utf-8")
        return staging

    publish_folder(stage("one"), out, "wikiref")
    real_replace, calls = os.replace, []

    def dying_replace(source, target):
        calls.append(target)
        if len(calls) == 2:
            raise KeyboardInterrupt  # killed after the previous build was set aside
        real_replace(source, target)

    monkeypatch.setattr(folders.os, "replace", dying_replace)
    with pytest.raises(KeyboardInterrupt):
        publish_folder(stage("two"), out, "wikiref")
    monkeypatch.setattr(folders.os, "replace", real_replace)
    assert not out.exists() and (tmp_path / ".ds.previous").is_dir()
    publish_folder(stage("two"), out, "wikiref")  # the rerun stages again (over the stale staging) and publishes
    assert (out / "README.md").read_text(encoding="utf-8") == "two"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds"]


def _build_process(out: Path, stderr: Path, *extra: str) -> subprocess.Popen:
    code = f"import sys; from wikiref_dataset.cli import main; sys.exit(main({build_argv(out, *extra)!r}))"
    with open(stderr, "w", encoding="utf-8") as handle:
        return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=handle,
                                start_new_session=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})


@pytest.mark.parametrize(("sig", "stage"), [(signal.SIGINT, "statistics"), (signal.SIGTERM, "curation")])
def test_interrupted_rebuild_leaves_the_previous_build_and_resumes(tmp_path, sig, stage):
    out = tmp_path / "wikiref"
    log = tmp_path.parent / f"{tmp_path.name}.stderr"
    marker = tmp_path / "wikiref.work" / "logs" / stage / "completions" / "00000"
    for _attempt in range(3):  # on a loaded machine the rerun can end between our poll and the signal: try again
        assert wikiref_main(build_argv(out)) == 0
        previous = on_disk(out)
        process = _build_process(out, log, "--min-unigram-recall", "0.95")  # restarts stages 3-5
        deadline = time.monotonic() + 120
        while marker.exists() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)  # the rerun deletes the markers of the stages it redoes (its inputs changed) ...
        while not marker.exists() and process.poll() is None and time.monotonic() < deadline:  # ... and redoes them
            time.sleep(0.005)
        running = process.poll() is None
        os.kill(process.pid, sig)
        process.wait(timeout=60)
        if process.returncode != 0:  # interrupted; 0: it had published the new build when the signal came
            break
    stderr = log.read_text(encoding="utf-8")
    assert running and process.returncode != 0, "the build finished before it could be interrupted"
    if sig == signal.SIGINT:
        assert process.returncode == 130 and "interrupted" in stderr and "resume" in stderr
    else:
        assert process.returncode == -signal.SIGTERM
    assert on_disk(out) == previous  # the previous complete build, untouched
    assert wikiref_main(build_argv(out, "--min-unigram-recall", "0.95")) == 0
    assert load_dataset_folder(out)["train"].num_rows == 13
    assert sorted(p.name for p in tmp_path.iterdir()) == ["wikiref", "wikiref.work"]


def test_wikiref_build_that_keeps_nothing_exits_1_and_publishes_nothing(tmp_path, capsys):
    out = tmp_path / "wikiref"
    assert wikiref_main(build_argv(out, "--min-oracle-score", "1.0")) == 1
    captured = capsys.readouterr()
    assert "tightest filter is 'dropped by extractive oracle: low oracle score'" in captured.err
    assert "nothing was published" in captured.err and "nothing published" in captured.out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["wikiref.work"]


def test_generator_based_builder_follows_a_rebuilt_folder(tmp_path):
    """The ``WikiRef`` builder class caches under its data_dir; a rebuild at the same path must not be served stale."""
    from wikiref_dataset.wikiref.dataset import WikiRef

    out = tmp_path / "wikiref"

    def rows() -> dict[str, int]:
        builder = WikiRef(data_dir=str(out), cache_dir=str(tmp_path / "cache"), dataset_name="wikiref")
        builder.download_and_prepare()
        return {split: part.num_rows for split, part in builder.as_dataset().items()}

    assert wikiref_main(build_argv(out)) == 0
    assert rows() == {"train": 17, "validation": 1, "test": 1}
    assert wikiref_main(build_argv(out, "--min-unigram-recall", "0.95")) == 0
    assert rows() == {"train": 13, "validation": 1, "test": 1}
