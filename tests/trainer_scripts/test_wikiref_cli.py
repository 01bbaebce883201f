"""The ``wikiref`` command (``trainer_scripts/cli.py``): the data side's subcommands composed with the model side's."""

import json
import os
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from trainer_scripts.cli import build_parser, main
from wikiref_dataset.cli import build_parser as build_data_parser

ROOT = Path(__file__).resolve().parents[2]


def _subcommands(parser):
    (action,) = [action for action in parser._actions if action.dest == "command"]
    return action.choices


def test_wikiref_has_every_data_subcommand_and_the_model_side():
    data = set(_subcommands(build_data_parser()))
    assert data == {"rouge", "statements", "documents", "duc", "qfs", "build", "psg2sum", "aquamuse"}
    assert set(_subcommands(build_parser())) == data | {"demo", "summarize", "experiments", "rescore", "app"}


def test_duc_holds_convert_and_evaluate():
    parser = build_parser()
    args = parser.parse_args(["duc", "convert", "nist", "--year", "2006", "--out", "o"])
    assert args.duc_command == "convert" and args.func.__module__ == "wikiref_dataset.duc.cli"
    args = parser.parse_args(["duc", "evaluate", "--dataset", "d", "--baseline", "lead"])
    assert args.duc_command == "evaluate" and args.func.__module__ == "trainer_scripts.cli"


def test_duc_evaluate_errors_are_one_line(capsys):
    assert main(["duc", "evaluate", "--dataset", "d"]) == 2  # a system is required
    assert capsys.readouterr().err.splitlines()[-1] == ("wikiref duc evaluate: error: give the systems to score: "
                                                        "--baseline, --summaries, --model (several together: one "
                                                        "table)")


def test_data_subcommands_run_through_the_top_level_command(tmp_path, capsys):
    (tmp_path / "items.jsonl").write_text('{"prediction": "a cat sat", "references": ["the cat sat"]}\n')
    assert main(["rouge", str(tmp_path / "items.jsonl"), "--quiet"]) == 0
    assert "ROUGE-1 Average_R" in capsys.readouterr().out
    assert main(["rouge", str(tmp_path / "absent.jsonl")]) == 2
    assert capsys.readouterr().err.startswith("wikiref rouge: error:")


def test_console_script_is_this_module():
    (script,) = [entry for entry in entry_points(group="console_scripts") if entry.name == "wikiref"]
    assert script.value == "trainer_scripts.cli:main"


def test_runs_as_a_module():
    completed = subprocess.run([sys.executable, "-m", "trainer_scripts.cli", "duc", "evaluate", "--help"],
                               capture_output=True, text=True, check=True)
    assert "--baseline" in completed.stdout


@pytest.mark.parametrize("argv", [["--help"], ["duc", "--help"], ["summarize", "--help"]])
def test_help_imports_no_heavy_library(argv):
    """`wikiref --help` builds every subcommand's parser: none may import spaCy, torch, transformers, faiss,
    sentence-transformers, datasets or the model package (seconds of start-up for every call), nor numpy or tqdm
    (0.35 s of the 0.44 s every command took to start while the ROUGE command's parser imported them)."""
    code = (f"import sys\nfrom trainer_scripts.cli import main\ntry:\n    main({argv!r})\nexcept SystemExit:\n    pass\n"
            "heavy = {'spacy', 'torch', 'transformers', 'faiss', 'sentence_transformers', 'datasets', 'datatrove',\n"
            "         'modeling_qbert', 'numpy', 'tqdm'}\n"
            "print(sorted(heavy & set(sys.modules)))")
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip().splitlines()[-1] == "[]"


# Every subcommand's --help, then the commands that score or convert, in one fresh process; after each, which of the
# watched modules are imported. Written to a file (the commands print to stdout).
LIGHT_COMMANDS = r'''
import argparse, json, sys
from trainer_scripts.cli import build_parser, main

def leaves(parser, prefix=()):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from leaves(sub, (*prefix, name))
            return
    yield list(prefix)

runs, report_path = json.loads(sys.argv[1]), sys.argv[2]
WATCH = {"torch", "transformers", "evaluate", "modeling_qbert", "spacy", "datasets", "sentence_transformers", "faiss"}
report = []
for argv in [[*leaf, "--help"] for leaf in leaves(build_parser())] + runs:
    try:
        status = main(argv)
    except SystemExit as exit:
        status = exit.code
    report.append([" ".join(argv), status, sorted(WATCH & set(sys.modules))])
open(report_path, "w").write(json.dumps(report))
'''


def test_scoring_and_converting_import_neither_torch_nor_transformers(duc_years, tmp_path):
    """`wikiref duc evaluate` with --baseline or --summaries, `wikiref qfs evaluate --baseline`, `wikiref rouge`,
    `wikiref duc convert`, `wikiref experiments` refusing an option it sets itself, and every subcommand's --help, run
    as a user runs them (a fresh process): none imports torch or transformers (9 s and 490 MB before the first score),
    nor `evaluate` (which imports both); a --help imports none of the heavy libraries."""
    (tmp_path / "items.jsonl").write_text(json.dumps({"prediction": "a cat sat", "references": ["the cat sat"]}) + "\n")
    (tmp_path / "system.jsonl").write_text(json.dumps({"topic_id": "D0601A", "summary": "A cat sat."}) + "\n"
                                           + json.dumps({"topic_id": "D0602B", "summary": "A dog ran."}) + "\n")
    from wikiref_dataset.qfs import convert_benchmark

    release = tmp_path / "debatepedia" / "data"
    release.mkdir(parents=True)
    for part, line in (("content", "<s> taxes are low . the poor pay more . <eos>"), ("query", "<s> taxes ? <eos>"),
                       ("summary", "<s> the poor pay more <eos>")):
        (release / f"valid_{part}").write_text(line + "\n")
    convert_benchmark("debatepedia", release.parent, tmp_path / "debatepedia-converted")
    runs = [["duc", "evaluate", "--dataset", duc_years[2006], "--baseline", "all", "-q"],
            ["qfs", "evaluate", "--dataset", str(tmp_path / "debatepedia-converted"), "--baseline", "all", "-q"],
            ["duc", "evaluate", "--dataset", duc_years[2006], "--summaries", str(tmp_path / "system.jsonl"), "-q"],
            ["rouge", str(tmp_path / "items.jsonl"), "-q"],
            ["duc", "convert", str(ROOT / "tests" / "fixtures" / "duc" / "duc2006"), "--year", "2006",
             "--out", str(tmp_path / "converted"), "-q"],
            # refused in one line (an option the runner sets) before the training scripts' parsers are built
            ["experiments", "--duc_dirs", duc_years[2006], "--rows", "qbert", "--seed", "3", "-q"]]
    report_path = tmp_path / "report.json"
    env = {**os.environ, "HF_DATASETS_CACHE": str(tmp_path / "hf_cache"), "HF_HUB_OFFLINE": "1"}
    completed = subprocess.run([sys.executable, "-c", LIGHT_COMMANDS, json.dumps(runs), str(report_path)],
                               capture_output=True, text=True, timeout=300, env=env)
    assert completed.returncode == 0, completed.stderr[-3000:]
    report = json.loads(report_path.read_text())
    helps = [entry for entry in report if entry[0].endswith("--help")]
    assert len(helps) == 15 and all(status == 0 for _, status, _ in helps)
    assert [(command, loaded) for command, _, loaded in helps if loaded] == []  # nothing heavy for a --help
    done = report[len(helps):]
    assert [status for _, status, _ in done] == [0, 0, 0, 0, 0, 2], completed.stderr[-3000:]
    assert "--seed is set by the runner" in completed.stderr
    heavy = {"torch", "transformers", "evaluate", "modeling_qbert"}
    assert [(command, sorted(heavy & set(loaded))) for command, _, loaded in done if heavy & set(loaded)] == []
    assert "spacy" in done[-2][2]  # the check sees imports: converting splits sentences with spaCy
