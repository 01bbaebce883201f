"""`wikiref aquamuse --released` on a tree laid out exactly as Google's AQuaMuSe v2 release
(``v2/{abstractive,extractive}/{train,dev,test}/release-set-tf-examples-0000N-of-00002``, no extension), written here
as TFRecord shards of the real decoded dev examples (made-up ones when ../shared/realdata is absent). Checks the
records per split and variant, dev -> validation, the extractive folder labelled extractive, a file given twice
counted once, the folders loading with `datasets`, a damaged shard keeping the records before the damage, and a file
in neither format refused with one line naming it."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from test_aquamuse_readers import example_bytes, tfrecord  # the tf.train.Example / TFRecord writers of the readers

from wikiref_dataset.aquamuse.released import read_release, read_released, released_format
from wikiref_dataset.cli import main

ROOT = Path(__file__).resolve().parents[3]
DEV = ROOT.parent / "shared" / "realdata" / "aquamuse" / "v2_abstractive_dev.jsonl"
SHARD = "release-set-tf-examples-{:05d}-of-00002"
LAYOUT = {  # variant -> release split folder -> records (slices of the source examples), each folder in two shards
    "abstractive": {"train": slice(0, 300), "dev": slice(300, 420), "test": slice(420, 500)},
    "extractive": {"train": slice(500, 560), "dev": slice(560, 600), "test": slice(600, 630)},
}
SPLIT = {"train": "train", "dev": "validation", "test": "test"}


def source_records() -> list[dict[str, str]]:
    """``{query, input_urls, target}`` strings: the real decoded dev set, else made-up records."""
    if DEV.is_file():
        lines = DEV.read_text(encoding="utf-8").splitlines()
        return [{key: value[0] for key, value in json.loads(line).items()} for line in lines]
    return [{"query": f"what is made-up question {n}", "input_urls": f"https://a.example/{n}<EOD>https://b.example/{n}",
             "target": f"Made-up answer {n} is a sentence. It has a second sentence."} for n in range(661)]


def shard_bytes(records: list[dict[str, str]]) -> bytes:
    payloads = [example_bytes({key: [record[key].encode()] for key in ("query", "input_urls", "target")})
                for record in records]
    return tfrecord(payloads)


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> tuple[Path, dict[str, dict[str, list[dict[str, str]]]]]:
    """The tree and, per variant and split, the records written."""
    records = source_records()
    root = tmp_path_factory.mktemp("release") / "v2"
    written: dict[str, dict[str, list[dict[str, str]]]] = {}
    for variant, folders in LAYOUT.items():
        written[variant] = {}
        for folder, part in folders.items():
            chosen = records[part]
            written[variant][SPLIT[folder]] = chosen
            (root / variant / folder).mkdir(parents=True)
            half = len(chosen) // 2
            for number, shard in enumerate((chosen[:half], chosen[half:])):
                (root / variant / folder / SHARD.format(number)).write_bytes(shard_bytes(shard))
    return root, written


def run(argv: list[str]) -> tuple[int, str, str]:
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        status = main(argv)
    return status, stdout.getvalue(), stderr.getvalue()


def expected_sizes(written: dict[str, dict[str, list]]) -> dict[str, dict[str, int]]:
    return {variant: {split: len(records) for split, records in splits.items()} for variant, splits in written.items()}


# ---- the reader -----------------------------------------------------------------------------------------------------

def test_first_record_whose_length_ends_in_an_open_brace_is_a_tfrecord(tmp_path):
    """The issue's "'utf-8' codec can't decode byte": a shard whose first length byte is 0x7B (``{``) was taken for
    JSON lines. Trailing spaces (stripped on reading) pad the target until the payload length ends in 0x7B."""
    record = {"query": "who wrote it", "input_urls": "https://a.example/", "target": "Someone did."}
    while len(example_bytes({k: [v.encode()] for k, v in record.items()})) % 256 != 0x7B:
        record["target"] += " "
    path = tmp_path / SHARD.format(0)
    path.write_bytes(shard_bytes([record]))
    assert path.read_bytes()[:1] == b"{"
    assert released_format(path) == "tfrecord"
    assert [(e.query, e.target) for e in read_released(path)] == [("who wrote it", "Someone did.")]


def test_release_tree_read_by_folders(release):
    root, written = release
    read = read_release([root])
    assert len(read.files) == 12 and {f.format for f in read.files} == {"tfrecord"}
    assert read.records == expected_sizes(written)
    extractive_dev = [e.query for e in read.examples["extractive"]["validation"]]
    assert extractive_dev == [r["query"] for r in written["extractive"]["validation"]]
    assert read.records_read == 630 and read.duplicates == {"abstractive": 0, "extractive": 0} and not read.damaged


def test_same_records_in_both_variants_are_kept_in_each(tmp_path):
    records = source_records()[:5]
    for variant in ("abstractive", "extractive"):
        (tmp_path / variant / "test").mkdir(parents=True)
        (tmp_path / variant / "test" / SHARD.format(0)).write_bytes(shard_bytes(records))
    copy = tmp_path / "extractive" / "test" / "copy" / SHARD.format(0)  # the same records in another file
    copy.parent.mkdir()
    copy.write_bytes(shard_bytes(records))
    read = read_release([tmp_path, tmp_path / "extractive"])  # the extractive folder twice: its files read once
    assert read.records == {"abstractive": {"train": 0, "validation": 0, "test": 5},
                            "extractive": {"train": 0, "validation": 0, "test": 5}}
    assert read.records_read == 15 and read.duplicates == {"abstractive": 0, "extractive": 5}


# ---- the command ----------------------------------------------------------------------------------------------------

def test_command_on_the_release_tree(release, tmp_path):
    """One run through the installed ``wikiref`` script; counts, split names and folders checked on its output."""
    import datasets

    script = Path(sys.executable).parent / "wikiref"
    if not script.is_file():
        pytest.skip("the wikiref script is not installed next to this Python")
    root, written = release
    out = tmp_path / "out"
    result = subprocess.run([str(script), "aquamuse", "--released", str(root), "--out", str(out), "--quiet"],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    sizes = expected_sizes(written)
    for variant, splits in sizes.items():
        line = f"  {variant}: " + ", ".join(f"{split} {size:,}" for split, size in splits.items())
        assert line + f"  -> {out / variant}" in result.stdout.splitlines()
    build = json.loads((out / "build.json").read_text(encoding="utf-8"))
    assert build["splits"] == sizes
    assert build["counts"]["records read"] == 630 and build["counts"]["TFRecord shards"] == 12
    assert build["counts"]["duplicate records (skipped)"] == 0 and build["damaged_files"] == []
    for variant, splits in written.items():
        loaded = datasets.load_dataset(str(out / variant), cache_dir=str(tmp_path / "cache"))
        assert {split: loaded[split].num_rows for split in loaded} == sizes[variant]
        assert sorted(loaded["validation"]["query"]) == sorted(r["query"] for r in splits["validation"])
        first = splits["train"][0]
        row = next(row for row in loaded["train"] if row["query"] == first["query"])
        assert [d["url"] for d in row["documents"]] == first["input_urls"].split("<EOD>")


def test_files_given_twice_are_counted_once(release, tmp_path):
    """A file given twice (and inside a given folder) is read once; a copy of it elsewhere is read and its records
    are counted as duplicates and kept once."""
    root, written = release
    shard = root / "extractive" / "dev" / SHARD.format(0)
    copy = tmp_path / "mirror" / "extractive" / "dev" / shard.name
    copy.parent.mkdir(parents=True)
    shutil.copy(shard, copy)
    status, stdout, stderr = run(["aquamuse", "--released", str(root / "extractive"), str(shard), str(shard),
                                  str(copy), "--out", str(tmp_path / "out"), "--quiet"])
    assert status == 0, stderr
    build = json.loads((tmp_path / "out" / "build.json").read_text(encoding="utf-8"))
    assert build["splits"] == {"extractive": expected_sizes(written)["extractive"]}
    assert build["counts"]["files"] == 7
    twice = len(list(read_released(copy)))
    assert build["counts"]["duplicate records (skipped)"] == twice == build["duplicates"]["extractive"]
    assert build["counts"]["records read"] == 130 + twice
    assert f"  extractive: train 60, validation 40, test 30  -> {tmp_path / 'out' / 'extractive'}" in stdout
    assert not (tmp_path / "out" / "abstractive").exists()


def test_damaged_shards_keep_the_records_before_the_damage(release, tmp_path):
    root, written = release
    tree = tmp_path / "v2"
    shutil.copytree(root / "abstractive" / "test", tree / "abstractive" / "test")
    truncated, flipped = (tree / "abstractive" / "test" / SHARD.format(n) for n in (0, 1))
    truncated.write_bytes(truncated.read_bytes()[:-10])  # the last record loses its end
    data = bytearray(flipped.read_bytes())
    (length,) = struct.unpack("<Q", data[:8])
    data[16 + length + 12 + 5] ^= 0xFF  # a byte of the second record's payload
    flipped.write_bytes(bytes(data))
    status, stdout, stderr = run(["aquamuse", "--released", str(tree), "--out", str(tmp_path / "out"),
                                  "--quiet"])
    assert status == 0, stderr
    half = len(written["abstractive"]["test"]) // 2
    build = json.loads((tmp_path / "out" / "build.json").read_text(encoding="utf-8"))
    assert build["splits"] == {"abstractive": {"train": 0, "validation": 0, "test": (half - 1) + 1}}
    assert build["counts"]["damaged files (records before the damage kept)"] == 2
    damaged = [line for line in stdout.splitlines() if line.startswith("  damaged file: ")]
    assert len(damaged) == 2 and damaged == [f"  damaged file: {line}" for line in build["damaged_files"]]
    assert f"{truncated}: record {half - 1} at byte " in damaged[0] and "truncated payload" in damaged[0]
    assert f"kept the {half - 1:,} record(s) before it" in damaged[0]
    assert f"{flipped}: record 1 at byte {16 + length}: payload CRC mismatch" in damaged[1]
    assert "kept the 1 record(s) before it" in damaged[1]


def test_a_file_in_neither_format_is_refused_naming_it(release, tmp_path):
    root, _ = release
    stray = tmp_path / "release-set-tf-examples-00000-of-00001"
    stray.write_bytes(b"\x0a\xf8\x01" + bytes(range(256)))
    status, stdout, stderr = run(["aquamuse", "--released", str(root), str(stray), "--out", str(tmp_path / "out"),
                                  "--quiet"])
    assert status == 2 and stdout == ""
    assert stderr == (f"wikiref aquamuse: error: {stray}: neither a TFRecord shard (its first 12 bytes are not a length "
                      "and its CRC-32C) nor JSON lines (it does not start with '{')\n")
    assert not (tmp_path / "out").exists()


def test_a_linked_release_tree_is_walked(release, tmp_path):
    """Release folders linked into place (and a link loop) are followed, each real folder once."""
    root, written = release
    linked = tmp_path / "v2"
    linked.mkdir()
    for variant in ("abstractive", "extractive"):
        (linked / variant).symlink_to(root / variant, target_is_directory=True)
    (tmp_path / "v2" / "loop").symlink_to(linked, target_is_directory=True)
    read = read_release([linked])
    assert read.records == expected_sizes(written) and read.records_read == 630


def test_a_wrong_released_path_is_told_before_the_builder_loads(tmp_path):
    """`wikiref aquamuse --released` with a path that does not exist, or a file that is no release shard: one line,
    exit 2, in a fresh process that has not imported the builder's libraries (spaCy, torch, faiss: seconds)."""
    (tmp_path / "notes.txt").write_text("not a shard\n", encoding="utf-8")
    probe = ("import sys\nfrom trainer_scripts.cli import main\ncode = main(sys.argv[1:])\n"
             "print(sorted(name for name in ('spacy', 'torch', 'faiss', 'datatrove') if name in sys.modules))\n"
             "sys.exit(code)")
    for path, message in (("nope", "nope: no such file or folder"), ("notes.txt", "notes.txt")):
        done = subprocess.run([sys.executable, "-c", probe, "aquamuse", "--released", path, "--out", "out"],
                              cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert done.returncode == 2, done.stderr
        assert done.stderr.count("\n") == 1 and message in done.stderr
        assert done.stdout.strip() == "[]"
        assert not (tmp_path / "out").exists()
