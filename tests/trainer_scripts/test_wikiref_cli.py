"""The ``wikiref`` command (``trainer_scripts/cli.py``): the data side's subcommands composed with the model side's."""

import subprocess
import sys
from importlib.metadata import entry_points

import pytest

from trainer_scripts.cli import build_parser, main
from wikiref_dataset.cli import build_parser as build_data_parser


def _subcommands(parser):
    (action,) = [action for action in parser._actions if action.dest == "command"]
    return action.choices


def test_wikiref_has_every_data_subcommand_and_the_model_side():
    data = set(_subcommands(build_data_parser()))
    assert data == {"rouge", "statements", "documents", "duc", "build", "psg2sum", "aquamuse"}
    assert set(_subcommands(build_parser())) == data | {"demo", "summarize", "experiments"}


def test_duc_holds_convert_and_evaluate():
    parser = build_parser()
    args = parser.parse_args(["duc", "convert", "nist", "--year", "2006", "--out", "o"])
    assert args.duc_command == "convert" and args.func.__module__ == "wikiref_dataset.duc_cli"
    args = parser.parse_args(["duc", "evaluate", "--dataset", "d", "--baseline", "lead"])
    assert args.duc_command == "evaluate" and args.func.__module__ == "trainer_scripts.cli"


def test_duc_evaluate_errors_are_one_line(capsys):
    assert main(["duc", "evaluate", "--dataset", "d"]) == 2  # a system is required
    assert capsys.readouterr().err.splitlines()[-1] == ("wikiref duc evaluate: error: give exactly one of "
                                                        "--baseline, --summaries, --model")


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
    sentence-transformers, datasets or the model package (seconds of start-up for every call)."""
    code = (f"import sys\nfrom trainer_scripts.cli import main\ntry:\n    main({argv!r})\nexcept SystemExit:\n    pass\n"
            "heavy = {'spacy', 'torch', 'transformers', 'faiss', 'sentence_transformers', 'datasets', 'datatrove',\n"
            "         'modeling_qbert'}\n"
            "print(sorted(heavy & set(sys.modules)))")
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip().splitlines()[-1] == "[]"
