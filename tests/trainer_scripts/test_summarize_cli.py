"""`wikiref summarize`: the subcommand's parser, summaries of text files, JSON output and clear errors."""

import argparse
import json
import os
import subprocess
import sys

import pytest
import torch
from transformers import BertTokenizer

from modeling_qbert import QBertConfig, QBertForSentenceScoring, QBertProcessor
from trainer_scripts.summarize_cli import add_summarize_parser
from wikiref_dataset.command import dispatch

WORDS = "the a of was in on king queen born city river runs war early life house cat sat mat . ,".split()


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    torch.manual_seed(0)
    tokenizer = BertTokenizer(vocab={t: i for i, t in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]",
                                                                 *WORDS])})
    config = QBertConfig(vocab_size=len(WORDS) + 5, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                         intermediate_size=32, max_position_embeddings=64, max_query_levels=2)
    processor = QBertProcessor.from_config(tokenizer, config)
    model = QBertForSentenceScoring(config)
    model.resize_token_embeddings(len(processor.tokenizer))
    folder = tmp_path_factory.mktemp("model")
    model.save_pretrained(folder)
    processor.save_pretrained(folder)
    return folder


@pytest.fixture
def documents(tmp_path):
    first = tmp_path / "one.txt"
    first.write_text("The king was born in the city.\nA river runs in the city.\nThe cat sat on the mat.\n",
                     encoding="utf-8")
    second = tmp_path / "two.txt"
    second.write_text("The queen was born in a house.\nThe war was early in her life.\n", encoding="utf-8")
    return first, second


def run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="wikiref")
    commands = parser.add_subparsers(dest="command", required=True)
    add_summarize_parser(commands)
    return dispatch(parser, argv)


def test_the_rules_offered_are_the_pipelines():
    from modeling_qbert.pipeline_qfs import SELECTIONS as PIPELINE_SELECTIONS
    from trainer_scripts.summarize_cli import SELECTIONS

    assert SELECTIONS == PIPELINE_SELECTIONS


def test_parser_registers_summarize_with_its_options():
    parser = argparse.ArgumentParser(prog="wikiref")
    commands = parser.add_subparsers(dest="command", required=True)
    sub = add_summarize_parser(commands)
    args = parser.parse_args(["summarize", "--model", "m", "--query", "King", "--query", "Early life", "a.txt",
                              "b.txt", "--max-words", "100"])
    assert args.command == "summarize" and callable(args.func) and sub.prog.endswith("summarize")
    assert args.query == ["King", "Early life"] and args.files == ["a.txt", "b.txt"] and args.max_words == 100
    with pytest.raises(SystemExit):
        parser.parse_args(["summarize", "--query", "King", "a.txt"])  # --model is required


def test_one_file_is_summarized_with_the_wikiref_rule(model_dir, documents, capsys):
    assert run(["summarize", "--model", str(model_dir), "--query", "King", "--query", "Early life",
                "--sentences-per-line", "--threshold", "-1", str(documents[0])]) == 0
    captured = capsys.readouterr()
    lines = captured.out.strip().splitlines()
    assert lines and set(lines) <= {"The king was born in the city.", "A river runs in the city.",
                                    "The cat sat on the mat."}
    assert "with the wikiref rule" in captured.err and "selected" in captured.err


def test_several_files_json_output_and_text_splitting(model_dir, documents, capsys):
    assert run(["summarize", "--model", str(model_dir), "--query", "King", "--json", "--max-words", "8",
                *map(str, documents)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["selection"] == "duc"
    assert [item["text"] for item in result["sentences"]] == [
        "The king was born in the city.", "A river runs in the city.", "The cat sat on the mat.",
        "The queen was born in a house.", "The war was early in her life."]
    assert [item["document"] for item in result["sentences"]] == [0, 0, 0, 1, 1]
    assert result["summary"].splitlines() == [item["text"] for item in result["selected"]]


def test_the_summary_respects_the_word_budget_unless_rouges_cut_is_asked_for(model_dir, documents, capsys):
    """The budget the user asked for: whole sentences, never over --max-words; --budget rouge keeps the rule's
    crossing sentence, as DUC systems submit summaries for ROUGE's -l to cut."""
    for budget, check in (([], lambda words: words <= 10), (["--budget", "rouge"], lambda words: words > 10)):
        for rule in ("duc", "mmr", "ilp"):
            assert run(["summarize", "--model", str(model_dir), "--query", "King", "--json", "--max-words", "10",
                        "--selection", rule, *budget, *map(str, documents)]) == 0
            captured = capsys.readouterr()
            result = json.loads(captured.out)
            words = len(result["summary"].split())
            assert check(words) and f"({words} words)" in captured.err, (rule, budget, result["summary"])


def test_errors_are_one_line_and_exit_2(model_dir, documents, tmp_path, capsys):
    assert run(["summarize", "--model", str(model_dir), "--query", "King", str(tmp_path / "missing.txt")]) == 2
    assert "missing.txt: no such file" in capsys.readouterr().err
    assert run(["summarize", "--model", str(tmp_path), "--query", "King", str(documents[0])]) == 2
    assert "not a model folder (no config.json); pass a saved Q-BERT folder" in capsys.readouterr().err
    binary = tmp_path / "binary.txt"
    binary.write_bytes(b"\xff\xfe\x00bad")
    assert run(["summarize", "--model", str(model_dir), "--query", "King", str(binary)]) == 2
    assert "not UTF-8 text" in capsys.readouterr().err
    for query in ("", "  "):
        assert run(["summarize", "--model", str(model_dir), "--query", query, str(documents[0])]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "--query is empty: give the topic or question to summarize for" in err
    for option, value, message in (("--tradeoff", "3", "--tradeoff must lie in [0, 1], got 3.0"),
                                   ("--redundancy", "-0.5", "--redundancy must lie in [0, 1], got -0.5"),
                                   ("--candidates", "0", "--candidates must be a whole number of 1 or more, got 0")):
        assert run(["summarize", "--model", str(model_dir), "--query", "King", option, value, str(documents[0])]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err and "loading" not in err  # refused before the model loads


def test_importing_the_cli_module_does_not_import_transformers():
    code = "import sys, trainer_scripts.summarize_cli; print('transformers' in sys.modules, 'torch' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.stdout.split() == ["False", "False"], result.stderr


def test_raw_text_without_spacy_names_the_extra_in_one_line(model_dir, documents, tmp_path):
    """The core install has no spaCy (the build extra's): `wikiref summarize FILE`, run as a user runs it (the console
    script in a fresh process, spaCy not importable), stops at once with one line naming the extra and
    --sentences-per-line, before the model loads; with --sentences-per-line it summarizes."""
    import os
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    shim = tmp_path / "shim"  # sitecustomize runs at start-up: spaCy then cannot be imported, as where not installed
    shim.mkdir()
    helper = root / "tests" / "not_installed.py"
    (shim / "sitecustomize.py").write_text(
        "import importlib.util\n"
        f"_spec = importlib.util.spec_from_file_location('not_installed', {str(helper)!r})\n"
        "_helper = importlib.util.module_from_spec(_spec)\n_spec.loader.exec_module(_helper)\n"
        "_helper.hide_packages(('spacy', 'thinc'))\n", encoding="utf-8")
    script = Path(sys.executable).with_name("wikiref")
    command = [str(script)] if script.is_file() else [sys.executable, "-m", "trainer_scripts.cli"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join([str(shim), str(root)])}
    probe = subprocess.run([sys.executable, "-c", "import spacy"], env=env, capture_output=True, text=True, timeout=60)
    assert "No module named 'spacy'" in probe.stderr  # the shim works

    raw = subprocess.run([*command, "summarize", "--model", str(model_dir), "--query", "king", str(documents[0])],
                         env=env, capture_output=True, text=True, timeout=300)
    assert raw.returncode == 2 and raw.stdout == ""
    assert raw.stderr == ('wikiref summarize: error: raw text needs the sentence splitter, spaCy, which is the build '
                          'extra: pip install "wikiref[build]" (or pass --sentences-per-line, one sentence per line)\n')

    lines = subprocess.run([*command, "summarize", "--model", str(model_dir), "--query", "king", "--sentences-per-line",
                            "--threshold", "-1", str(documents[0])], env=env, capture_output=True, text=True,
                           timeout=300)
    assert lines.returncode == 0, lines.stderr[-2000:]
    assert lines.stdout.strip() and set(lines.stdout.splitlines()) <= set(documents[0].read_text().splitlines())


def _wikiref(argv: list[str]) -> subprocess.CompletedProcess:
    """``wikiref ARGV`` in a fresh process, as a user runs it."""
    return subprocess.run([sys.executable, "-m", "trainer_scripts.cli", *argv], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "HF_HUB_OFFLINE": "1"})


def test_quiet_hides_the_loading_bar(model_dir, documents):
    """`wikiref summarize -q`: no "Loading weights" bar nor loading lines on stderr, only the closing line; without
    -q the bar is there (transformers shows it on every load)."""
    argv = ["summarize", "--model", str(model_dir), "--query", "King", "--sentences-per-line", str(documents[0])]
    plain, quiet = _wikiref(argv), _wikiref([*argv, "-q"])
    assert plain.returncode == 0 and quiet.returncode == 0, plain.stderr[-2000:] + quiet.stderr[-2000:]
    assert "Loading weights" in plain.stderr
    assert quiet.stderr.strip().startswith("selected ") and len(quiet.stderr.strip().splitlines()) == 1, quiet.stderr


SOLVER_PRINTS = r'''
import ctypes, os, sys
import scipy.optimize

solve = scipy.optimize.milp


def printing_milp(*args, **kwargs):  # what HiGHS does when it repairs a solution: C code writing to descriptor 1
    ctypes.CDLL(None).printf(b"HighsMipSolverData::transformNewIntegerFeasibleSolution tmpSolver.run();\n")
    os.write(1, b"written to descriptor 1\n")
    return solve(*args, **kwargs)


scipy.optimize.milp = printing_milp
from trainer_scripts.cli import main
sys.exit(main(sys.argv[1:]))
'''


def test_json_with_the_ilp_rule_is_json_whatever_the_solver_prints(model_dir, documents):
    """`wikiref summarize --json --selection ilp`: standard output parses as JSON, as it is; and when the solver's C
    code writes to descriptor 1 during the solve (HiGHS's `tmpSolver.run();` line, reproduced here), that goes to
    stderr, not into the JSON."""
    argv = ["summarize", "--model", str(model_dir), "--query", "King", "--sentences-per-line", "--json", "--selection",
            "ilp", *map(str, documents)]
    plain = _wikiref(argv)
    assert plain.returncode == 0, plain.stderr[-2000:]
    assert json.loads(plain.stdout)["selection"] == "ilp"
    printed = subprocess.run([sys.executable, "-c", SOLVER_PRINTS, *argv], capture_output=True, text=True, timeout=300,
                             env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert printed.returncode == 0, printed.stderr[-2000:]
    assert json.loads(printed.stdout) == json.loads(plain.stdout)
    assert "tmpSolver.run();" in printed.stderr and "written to descriptor 1" in printed.stderr
