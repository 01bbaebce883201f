"""The data side of the ``wikiref`` command (``wikiref_dataset/cli.py``): ``rouge`` on JSON lines and ROUGE file
lists, the layering (the data subcommands run without the model side; the whole command:
tests/trainer_scripts/test_wikiref_cli.py), and what the datatrove commands print: their own summary, datatrove's
logs and statistics only with -v."""

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest
from not_installed import prelude

from wikiref_dataset.cli import main
from wikiref_dataset.rouge import rouge


def _write_items(path, items):
    path.write_text("".join(json.dumps(item) + "\n" for item in items), encoding="utf-8")


ITEMS = [
    {"id": "a", "prediction": "The cat sat on the mat.", "references": ["A cat sat on a mat.", "The cat sat."]},
    {"id": "b", "system": "Dogs bark at night.", "references": "Dogs bark loudly at night."},
]


def test_rouge_jsonl_json_output(tmp_path, capsys):
    _write_items(tmp_path / "items.jsonl", ITEMS)
    assert main(["rouge", str(tmp_path / "items.jsonl"), "--json", "--per-item"]) == 0
    output = json.loads(capsys.readouterr().out)
    expected = rouge([item.get("prediction", item.get("system")) for item in ITEMS],
                     [item["references"] if isinstance(item["references"], list) else [item["references"]]
                      for item in ITEMS])
    assert output["averages"] == expected.to_dict()
    assert output["per_item"]["a"]["rouge_1"]["recall"] == expected.per_item[0]["rouge_1"].recall


def test_rouge_filelist_text_report(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the list's relative paths are read from the working directory
    (tmp_path / "sys1.txt").write_bytes(b"The cat sat on the mat.\nIt was red.")
    (tmp_path / "ref1.txt").write_bytes(b"A cat sat on a red mat.")
    (tmp_path / "ref2.txt").write_bytes(b"The cat was on the mat.")
    (tmp_path / "list.txt").write_text("sys1.txt ref1.txt ref2.txt\n")
    assert main(["rouge", str(tmp_path / "list.txt"), "--filelist", "--rouge-args", "-n 2 -m -c 95 -r 1000",
                 "--per-item", "--system-id", "mine"]) == 0
    out = capsys.readouterr().out
    expected = rouge(["The cat sat on the mat.\nIt was red."], [["A cat sat on a red mat.", "The cat was on the mat."]],
                     word_limit=None, rouge_l=True, skip_distance=None)
    assert expected.averages["rouge_l"].printed("rouge_l", "mine")[0] in out
    assert f"mine ROUGE-1 Eval 1 R:{expected.per_item[0]['rouge_1'].recall:7.5f}" in out


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json\n", "items.jsonl:1: not valid JSON"),
        ('{"prediction": "x"}\n', "items.jsonl:1: needs 'references'"),
        ('{"references": ["x"]}\n', "items.jsonl:1: needs a string field 'prediction'"),
        ("\n", "no items"),
    ],
)
def test_rouge_bad_input_is_a_clear_error(tmp_path, capsys, content, message):
    (tmp_path / "items.jsonl").write_text(content)
    assert main(["rouge", str(tmp_path / "items.jsonl")]) == 2
    assert message in capsys.readouterr().err


def test_rouge_filelist_paths_are_read_from_the_working_directory_as_rouge_reads_them(tmp_path):
    """ROUGE-1.5.5 with ``-z SPL`` opens each path of the list as given (no root before it: relative to the working
    directory) and skips blank and ``#`` lines, numbering the pairs from 1; `wikiref rouge --filelist`, run as a user
    runs it, does the same, and a list written for its own folder, read from elsewhere, says to run from there."""
    (tmp_path / "texts").mkdir()
    (tmp_path / "lists").mkdir()
    (tmp_path / "texts" / "peer.txt").write_bytes(b"The cat sat on the mat.\nIt was red.")
    (tmp_path / "texts" / "model.txt").write_bytes(b"A cat sat on a red mat.")
    (tmp_path / "lists" / "list.txt").write_text("# peer model\n\ntexts/peer.txt texts/model.txt\n", encoding="utf-8")
    script = Path(sys.executable).with_name("wikiref")
    command = [str(script)] if script.is_file() else [sys.executable, "-m", "wikiref_dataset.cli"]
    completed = subprocess.run([*command, "rouge", "lists/list.txt", "--filelist", "--json", "--per-item"],
                               cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    output = json.loads(completed.stdout)
    expected = rouge(["The cat sat on the mat.\nIt was red."], [["A cat sat on a red mat."]])
    assert output["averages"] == expected.to_dict() and list(output["per_item"]) == ["1"]

    (tmp_path / "lists" / "peer.txt").write_bytes(b"The cat sat.")  # a list naming the files beside it
    (tmp_path / "lists" / "model.txt").write_bytes(b"A cat sat.")
    (tmp_path / "lists" / "beside.txt").write_text("peer.txt model.txt\n", encoding="utf-8")
    completed = subprocess.run([*command, "rouge", "lists/beside.txt", "--filelist"], cwd=tmp_path,
                               capture_output=True, text=True, timeout=120)
    assert completed.returncode == 2 and len(completed.stderr.strip().splitlines()) == 1
    assert "lists/beside.txt:1: cannot read peer.txt (No such file or directory); paths are read from the working " \
           "directory, as ROUGE-1.5.5 reads them, and peer.txt is beside the list: run from lists" in completed.stderr
    completed = subprocess.run([*command, "rouge", "beside.txt", "--filelist"], cwd=tmp_path / "lists",
                               capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr


def test_rouge_missing_files_and_bad_options(tmp_path, capsys):
    assert main(["rouge", str(tmp_path / "absent.jsonl")]) == 2
    assert "no such file" in capsys.readouterr().err
    (tmp_path / "list.txt").write_text("sys.txt ref.txt\n")
    assert main(["rouge", str(tmp_path / "list.txt"), "--filelist"]) == 2
    assert "cannot read" in capsys.readouterr().err
    _write_items(tmp_path / "items.jsonl", ITEMS)
    assert main(["rouge", str(tmp_path / "items.jsonl"), "--rouge-args", "-n 2 -w 1.2"]) == 2
    assert "not implemented" in capsys.readouterr().err


def test_console_script_entry_point_runs(tmp_path):
    completed = subprocess.run([sys.executable, "-m", "wikiref_dataset.cli", "rouge", "--help"], capture_output=True,
                               text=True, check=True)
    assert "--rouge-args" in completed.stdout


def test_help_imports_no_heavy_library():
    """`wikiref --help` builds every subcommand's parser: none may import spaCy, torch, transformers, faiss or
    sentence-transformers (seconds of start-up for every call)."""
    code = ("import sys\nfrom wikiref_dataset.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "heavy = {'spacy', 'torch', 'transformers', 'faiss', 'sentence_transformers', 'datasets', 'datatrove'}\n"
            "print(sorted(heavy & set(sys.modules)))")
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip().splitlines()[-1] == "[]"


ROOT = Path(__file__).resolve().parents[2]
MODEL_SIDE = ("modeling_qbert", "trainer_scripts", "torch", "transformers")
# The one exception: the AQuaMuSe miner's sentence encoder runs on torch (imported when `wikiref aquamuse` builds).
ALLOWED_IMPORTS = {("aquamuse/embedding.py", "torch")}

DATA_COMMANDS = """
import json, sys
from pathlib import Path

model_side, out = json.loads(sys.argv[1]), Path(sys.argv[2])

from wikiref_dataset.cli import main
from wikiref_dataset.wikiref.build import sample_inputs

dumps, warcs = sample_inputs()
out.mkdir(parents=True, exist_ok=True)
(out / "items.jsonl").write_text(json.dumps({"prediction": "a cat sat", "references": ["the cat sat"]}) + "\\n")
fixtures = Path("tests/fixtures")
commands = {
    "rouge": ["rouge", str(out / "items.jsonl"), "--quiet"],
    "statements": ["statements", str(fixtures / "wiki" / "tiny-dump.xml"), "--out", str(out / "statements"), "--quiet"],
    "build": ["build", *dumps, "--warc", *warcs, "--out", str(out / "build"), "--tasks", "2", "--quiet"],
    "duc convert": ["duc", "convert", str(fixtures / "duc" / "duc2006"), "--year", "2006", "--out", str(out / "duc"),
                    "--quiet"],
    "psg2sum": ["psg2sum", str(fixtures / "psg2sum" / "history.xml"), "--out", str(out / "psg2sum"), "--quiet"],
}
status = {name: main(argv) for name, argv in commands.items()}
loaded = sorted(name for name in model_side if sys.modules.get(name) is not None)
print(json.dumps({"status": status, "loaded": loaded, "thinc": "thinc" in sys.modules}))
"""


@pytest.mark.parametrize("mode", ["installed", "blocked"])
def test_data_commands_import_nothing_of_the_model_side(tmp_path, mode):
    """Data flows one way: `wikiref_dataset` and its subcommands (rouge, statements, build on the embedded sample,
    duc convert, psg2sum) import neither `modeling_qbert` nor `trainer_scripts` nor torch/transformers, in a fresh
    process; and they run where those are not installed at all ("blocked")."""
    # "blocked": as if not installed (tests/not_installed.py): `import` raises ImportError, find_spec says absent
    script = (prelude(MODEL_SIDE) if mode == "blocked" else "") + DATA_COMMANDS
    completed = subprocess.run([sys.executable, "-c", script, json.dumps(MODEL_SIDE), str(tmp_path)],
                               capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert completed.returncode == 0, completed.stderr[-3000:]
    report = json.loads(completed.stdout.strip().splitlines()[-1])
    assert report["status"] == dict.fromkeys(["rouge", "statements", "build", "duc convert", "psg2sum"], 0)
    # spaCy's backend (thinc) imports torch itself when it is installed; nothing else may
    allowed = {"torch"} if report["thinc"] and mode == "installed" else set()
    assert set(report["loaded"]) <= allowed, report["loaded"]


def test_package_has_no_import_of_the_model_side():
    """Every import statement in wikiref_dataset, inside functions too."""
    found = set()
    for path in sorted((ROOT / "wikiref_dataset").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            found |= {(path.relative_to(ROOT / "wikiref_dataset").as_posix(), name.split(".")[0]) for name in names
                      if name.split(".")[0] in MODEL_SIDE}
    assert found <= ALLOWED_IMPORTS, sorted(found - ALLOWED_IMPORTS)


SAMPLE_DUMP, SAMPLE_WARC = (Path(__file__).resolve().parents[2] / "wikiref_dataset" / "data" / "sample" / "wikiref" / name
                            for name in ("samplewiki-20240601-pages-articles.xml", "sample.warc.gz"))
BUILD_STAGES = ("statements", "documents", "statistics", "curation", "dataset")


def _data_command(argv: list[str]) -> subprocess.CompletedProcess:
    """``wikiref ARGV`` (the data side) in a fresh process, as a user runs it."""
    return subprocess.run([sys.executable, "-m", "wikiref_dataset.cli", *argv], capture_output=True, text=True,
                          timeout=300)


def test_build_prints_its_summary_and_keeps_datatrove_stats_in_the_logs(tmp_path):
    """`wikiref build` on the embedded sample printed ~290 lines of datatrove's pipelines and statistics tables on
    stderr: now its own summary on stdout (naming the logs folder) and nothing on stderr; each stage's task logs and
    stats.json are in OUT.work/logs/<stage>/; -v shows datatrove's tables on stderr."""
    argv = ["build", str(SAMPLE_DUMP), "--warc", str(SAMPLE_WARC), "--tasks", "2"]
    done = _data_command([*argv, "--out", str(tmp_path / "quiet")])
    assert done.returncode == 0, done.stderr[-3000:]
    assert len(done.stderr.splitlines()) <= 3 and "Stats" not in done.stderr, done.stderr
    logs = tmp_path / "quiet.work" / "logs"
    assert "WikiRef build ->" in done.stdout and f"logs and statistics: {logs}" in done.stdout
    for stage in BUILD_STAGES:
        assert (logs / stage / "stats.json").is_file(), stage
        assert "Stats" in (logs / stage / "logs" / "task_00000.log").read_text(), stage
    verbose = _data_command([*argv, "--out", str(tmp_path / "verbose"), "-v"])
    assert verbose.returncode == 0, verbose.stderr[-3000:]
    assert "Stats: All 2 tasks" in verbose.stderr and len(verbose.stderr.splitlines()) > 100


def test_statements_prints_its_summary_and_keeps_datatrove_stats_in_the_logs(tmp_path):
    """`wikiref statements` on the sample dump: its summary (naming the logs folder), at most a few lines on stderr
    (a warning, the progress bar), stats.json in OUT/logs; -v adds datatrove's tables."""
    done = _data_command(["statements", str(SAMPLE_DUMP), "--out", str(tmp_path / "quiet")])
    assert done.returncode == 0, done.stderr[-3000:]
    assert len(done.stderr.splitlines()) <= 3 and "Stats" not in done.stderr, done.stderr
    assert f"logs and statistics: {tmp_path / 'quiet' / 'logs'}" in done.stdout
    assert (tmp_path / "quiet" / "logs" / "stats.json").is_file()
    verbose = _data_command(["statements", str(SAMPLE_DUMP), "--out", str(tmp_path / "verbose"), "--verbose"])
    assert verbose.returncode == 0, verbose.stderr[-3000:]
    assert "Stats: All 1 tasks" in verbose.stderr
