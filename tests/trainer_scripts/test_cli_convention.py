"""One convention for every ``wikiref`` subcommand, checked through the installed console script in a fresh process:
the bad-input matrix (exit status, one line ``wikiref <command>: error: ...``, no traceback, the user's files
untouched and nothing left behind), ``--debug``, the old option spellings, ``rouge``'s warnings, and every
subcommand's ``--help`` (a description, help on every option, an example; for ``build`` the exact command on the
shipped sample, which runs)."""

from __future__ import annotations

import argparse
import bz2
import hashlib
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from trainer_scripts.cli import build_parser
from wikiref_dataset.wikiref.cli import SAMPLE

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
DUMP = SAMPLE / "samplewiki-20240601-pages-articles.xml"
WARC = SAMPLE / "sample.warc.gz"
TINY = FIXTURES / "wiki" / "tiny-dump.xml"
HISTORY = FIXTURES / "psg2sum" / "history.xml"
DUC2006 = FIXTURES / "duc" / "duc2006"


def wikiref_command() -> list[str]:
    """The console script installed beside this Python (``pip install -e .``), else the module it runs."""
    script = Path(sys.executable).with_name("wikiref")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "trainer_scripts.cli"]


def run_wikiref(argv: list[str], cwd: Path, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run([*wikiref_command(), *argv], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"})


def user_files(folder: Path) -> None:
    """What a user has in the working folder before running a command."""
    (folder / "mine" / "data").mkdir(parents=True)
    (folder / "mine" / "README.md").write_text("# my notes\n", encoding="utf-8")
    (folder / "mine" / "data" / "mine.parquet").write_bytes(b"PAR1 mine")
    (folder / "afile").write_text("a file, not a folder\n", encoding="utf-8")
    (folder / "adir").mkdir()
    (folder / "empty.xml").write_bytes(b"")
    (folder / "truncated.xml.bz2").write_bytes(bz2.compress(DUMP.read_bytes())[:300])
    (folder / "bad.jsonl").write_text("not json\n", encoding="utf-8")
    (folder / "items.jsonl").write_text(json.dumps({"prediction": "a cat sat", "references": ["the cat sat"]}) + "\n",
                                        encoding="utf-8")


def snapshot(folder: Path) -> dict[str, str]:
    return {str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "dir"
            for path in sorted(folder.rglob("*"))}


# (argv, exit status, what the error line says). Paths: {dump} {warc} {tiny} {history} {duc2006} are inputs that
# exist; everything else is relative to a working folder holding user_files(). Each command must leave that folder
# exactly as it was: nothing of the user's changed, nothing new (no output folder, no work folder).
BAD_INPUT = [
    # build: the observed cases
    ("build nope.xml --out out", 2, "nope.xml: no such dump file"),
    ("build adir --out out", 2, "adir: is a folder, not a dump file"),
    ("build empty.xml --out out --quiet", 2, "nothing could be read: 1 damaged dump(s)"),
    ("build truncated.xml.bz2 --out out --quiet", 2, "nothing could be read: 1 damaged dump(s)"),
    ("build {dump} --warc {warc} --out afile", 2, "afile: exists and is not a folder"),
    ("build {dump} --warc {warc} --out mine", 2, "mine holds files this project did not write (README.md"),
    ("build {dump} --warc nope.warc.gz --out out", 2, "nope.warc.gz: no such file or folder"),
    ("build --out out", 2, "no dump file given"),
    ("build {dump}", 2, "the following arguments are required: --out"),
    ("build {dump} --out out --tasks 0", 2, "argument --tasks: must be at least 1, got 0"),
    ("build {dump} --out out --workers many", 2, "argument --workers: expected a whole number, got 'many'"),
    ("build {dump} --out out --executor nope", 2, "argument --executor: invalid choice: 'nope'"),
    ("build {dump} --out out --executor-options [", 2, "argument --executor-options: not valid JSON"),
    ("build {dump} --out out --executor-options [1]", 2, "expected a JSON object"),
    ("build {dump} --out out --percentiles 90 10", 2, "low_percentile <= high_percentile"),
    ("build {dump} --out out --bogus", 2, "unrecognized arguments: --bogus"),
    # statements
    ("statements nope.xml --out out", 2, "nope.xml: no such dump file"),
    ("statements adir --out out", 2, "adir: is a folder, not a dump file"),
    ("statements empty.xml --out out --quiet", 2, "nothing could be read: 1 damaged dump(s)"),
    ("statements {tiny} --out afile", 2, "afile: exists and is not a folder"),
    ("statements {tiny} --out mine", 2, "mine holds files this command did not write"),
    ("statements {tiny} --out out --min-chars -3", 2, "min_statement_chars"),
    # documents
    ("documents nope.jsonl --warc {warc} --out out", 2, "nope.jsonl: no such file"),
    ("documents items.jsonl --out out", 2, "nothing to fetch from"),
    ("documents items.jsonl --warc adir --out out", 2, "adir"),
    ("documents items.jsonl --warc {warc} --out afile", 2, "afile: exists and is not a folder"),
    ("documents items.jsonl --warc {warc} --out mine", 2, "mine holds files this command did not write"),
    # rouge
    ("rouge adir", 2, "adir: is a folder; give a JSON-lines file"),
    ("rouge nope.jsonl", 2, "nope.jsonl: no such file"),
    ("rouge bad.jsonl", 2, "bad.jsonl:1: not valid JSON"),
    ("rouge items.jsonl --rouge-args '-n 2 -w 1.2'", 2, "not implemented"),
    # psg2sum
    ("psg2sum nope.xml --out out", 2, "nope.xml: no such dump file"),
    ("psg2sum empty.xml --out out --quiet --no-baselines", 2, "nothing could be read: 1 damaged dump(s)"),
    ("psg2sum {history} --out mine", 2, "mine holds files this project did not write"),
    ("psg2sum {history} --out afile", 2, "afile: exists and is not a folder"),
    ("psg2sum {history} --out out --min-score 2", 2, "min_score"),
    ("psg2sum {history} --out out --tasks 0", 2, "argument --tasks: must be at least 1"),
    # aquamuse
    ("aquamuse --out out", 2, "give --nq FILE... and --corpus FILE..."),
    ("aquamuse --nq nope.jsonl --corpus items.jsonl --out out", 2, "nope.jsonl: no such Natural Questions file"),
    ("aquamuse --nq items.jsonl --corpus adir --out out", 2, "adir: is a folder, not a corpus file"),
    ("aquamuse --released adir --nq items.jsonl --out out", 2, "do not combine it with --nq/--corpus"),
    ("aquamuse --released nope --out out", 2, "nope"),
    ("aquamuse --nq items.jsonl --corpus items.jsonl --out out --executor-options 3", 2, "expected a JSON object"),
    # duc convert / duc evaluate
    ("duc convert adir --year 2006 --out out", 2, "DUC 2006 topics file not found"),
    ("duc convert {duc2006} --year 2004 --out out", 2, "argument --year: invalid choice: 2004"),
    ("duc convert {duc2006} --year 2006 --out mine", 2, "mine holds files this project did not write"),
    ("duc evaluate --dataset adir --baseline lead", 2, "adir: not a converted DUC dataset"),
    ("duc evaluate --dataset adir", 2, "give the systems to score: --baseline, --summaries, --model"),
    ("duc evaluate --dataset adir --baseline foo", 2, "--baseline: unknown 'foo'"),
    # qfs convert / qfs evaluate
    ("qfs convert qmsum adir --out out", 2, "adir: not a QMSum release"),
    ("qfs evaluate --dataset adir --baseline lead", 2, "adir: not a converted benchmark"),
    # experiments
    ("experiments --duc_dirs adir --rows nope", 2, "--rows: no row or group named 'nope'"),
    ("experiments --duc_dirs adir --rows qbert", 2, "adir: not a converted DUC dataset"),
    ("experiments --duc_dirs nope --rows qbert", 2, "nope: no such DUC folder"),
    ("experiments --duc_dirs adir --rows qbert --out afile", 2, "afile: exists and is not a folder"),
    ("experiments --duc_dirs adir --rows qbert --out mine", 2, "mine holds files this command did not write"),
    ("experiments --duc_dirs adir --rows qbert --seed 3", 2, "--seed is set by the runner"),
    # summarize, demo, the command itself
    ("summarize --model adir --query q afile", 2, "adir: not a model folder (no config.json); pass a saved Q-BERT folder"),
    ("summarize --model adir --query q", 2, "the following arguments are required: FILE"),
    ("demo --out afile", 2, "afile: exists and is not a folder"),
    ("nope", 2, "argument COMMAND: invalid choice: 'nope'"),
    ("duc", 2, "wikiref duc: error: give a subcommand: convert, evaluate (see wikiref duc --help)"),
    ("qfs", 2, "wikiref qfs: error: give a subcommand: convert,"),
]


def _argv(template: str) -> list[str]:
    paths = {"dump": DUMP, "warc": WARC, "tiny": TINY, "history": HISTORY, "duc2006": DUC2006}
    return [part.format(**{key: str(value) for key, value in paths.items()}) for part in shlex.split(template)]


def _command_name(argv: list[str]) -> str:
    name = argv[0]
    if name in ("duc", "qfs") and len(argv) > 1 and argv[1] in ("convert", "evaluate"):
        name = f"{name} {argv[1]}"
    return name if name in {*_subcommands(build_parser()), "duc convert", "duc evaluate", "qfs convert",
                            "qfs evaluate"} else ""


@pytest.mark.parametrize(("template", "status", "message"), BAD_INPUT, ids=[case[0] for case in BAD_INPUT])
def test_bad_input_is_one_line_and_touches_nothing(tmp_path, template, status, message):
    user_files(tmp_path)
    before = snapshot(tmp_path)
    argv = _argv(template)
    result = run_wikiref(argv, tmp_path)
    assert result.returncode == status, result.stderr[-3000:]
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    lines = result.stderr.strip().splitlines()
    errors = [line for line in lines if ": error:" in line]
    name = _command_name(argv)
    prefix = f"wikiref {name}: error: " if name else "wikiref: error: "
    assert len(errors) == 1 and errors[0] == lines[-1] and lines[-1].startswith(prefix), result.stderr[-3000:]
    assert message is None or message in lines[-1], lines[-1]
    others = [line for line in lines[:-1] if not line.startswith("WARNING:") and ": note:" not in line]
    assert not others, result.stderr  # --quiet or an early refusal: nothing but the error (and warnings, notes)
    assert snapshot(tmp_path) == before  # the user's files untouched, nothing left behind


def test_debug_shows_the_traceback(tmp_path):
    result = run_wikiref(["build", "nope.xml", "--out", "out", "--debug"], tmp_path)
    assert result.returncode == 1 and "Traceback" in result.stderr and "nope.xml: no such dump file" in result.stderr


def test_old_spellings_still_work_with_a_note(tmp_path):
    """--dump, --shards, --dev-size, --no-progress, duc evaluate --output: accepted, each with a one-line note."""
    from wikiref_dataset.command import dispatch

    parser = build_parser()
    args = parser.parse_args(["build", "--dump", "a.xml", "b.xml", "--out", "o", "--shards", "3", "--dev-size", "7"])
    assert (args.dump_option, args.tasks, args.validation_size) == (["a.xml", "b.xml"], 3, 7)
    args = parser.parse_args(["psg2sum", "h.xml", "--out", "o", "--no-progress", "--dev-size", "2"])
    assert args.quiet is True and args.validation_size == 2
    args = parser.parse_args(["aquamuse", "--nq", "n", "--corpus", "c", "--out", "o", "--no-progress"])
    assert args.quiet is True
    args = parser.parse_args(["duc", "evaluate", "--dataset", "d", "--baseline", "lead", "--output", "r.json"])
    assert args.out == "r.json"
    result = run_wikiref(["build", "--dump", "nope.xml", "--out", "o", "--shards", "2"], tmp_path)
    notes = [line for line in result.stderr.splitlines() if ": note:" in line]
    assert notes == ["wikiref build: note: --dump is now given positionally: wikiref build DUMP...",
                     "wikiref build: note: --shards is now --tasks"]
    assert result.returncode == 2 and result.stderr.splitlines()[-1] == "wikiref build: error: nope.xml: no such dump file"
    assert dispatch  # the same dispatch runs the data side alone (python -m wikiref_dataset.cli)


def test_rouge_warns_about_what_scores_zero(tmp_path):
    """An empty prediction and one with no ASCII letter or digit score 0, as in ROUGE-1.5.5: kept, with warnings."""
    items = [{"id": "ok", "prediction": "the cat sat", "references": ["a cat sat"]},
             {"id": "empty", "prediction": "", "references": ["a cat sat"]},
             {"id": "greek", "prediction": "Η γάτα κάθισε.", "references": ["a cat sat"]}]
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(item) + "\n" for item in items), encoding="utf-8")
    result = run_wikiref(["rouge", "items.jsonl", "--json", "--per-item"], tmp_path)
    assert result.returncode == 0, result.stderr
    scores = json.loads(result.stdout)["per_item"]
    assert scores["empty"]["rouge_1"]["recall"] == scores["greek"]["rouge_1"]["recall"] == 0
    assert scores["ok"]["rouge_1"]["recall"] > 0
    warnings = [line for line in result.stderr.splitlines() if line.startswith("wikiref rouge: warning:")]
    assert len(warnings) == 2
    assert "1 empty prediction(s) score 0 (items empty)" in warnings[0]
    assert "no ASCII letter or digit" in warnings[1] and "(items greek)" in warnings[1]


# ---- --help ------------------------------------------------------------------------------------------------------


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    (action,) = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]
    return dict(action.choices)


def _every_subcommand() -> dict[str, argparse.ArgumentParser]:
    found = {}
    for name, parser in _subcommands(build_parser()).items():
        if name in ("duc", "qfs"):
            found |= {f"{name} {sub}": nested for sub, nested in _subcommands(parser).items()}
        else:
            found[name] = parser
    return found


SUBCOMMANDS = sorted(_every_subcommand())


def test_every_subcommand_is_checked():
    assert SUBCOMMANDS == ["app", "aquamuse", "build", "demo", "documents", "duc convert", "duc evaluate", "experiments",
                           "psg2sum", "qfs convert", "qfs evaluate", "rescore", "rouge", "statements", "summarize"]


@pytest.mark.parametrize("name", SUBCOMMANDS)
def test_help_has_a_description_help_on_every_option_and_an_example(name):
    parser = _every_subcommand()[name]
    assert parser.description and len(parser.description.split()) >= 25, "a one-paragraph description"
    assert "\n\n" not in parser.description.strip()
    assert parser.epilog.startswith(("example:", "examples:"))
    examples = [line.strip() for line in parser.epilog.splitlines()[1:] if line.strip()]
    assert examples and all(line.startswith(f"wikiref {name} ") for line in examples), examples
    for example in examples:  # each example parses as the command it shows
        parsed = build_parser().parse_args(shlex.split(example)[1:])
        assert parsed.command_name == name
    undocumented = [action.option_strings or action.dest for action in parser._actions
                    if action.help != argparse.SUPPRESS and not (action.help or "").strip()]
    assert not undocumented
    options = {option for action in parser._actions for option in action.option_strings}
    assert {"--quiet", "-v", "--debug"} <= options  # the common options (duc evaluate's --quiet is its dataclass's)
    text = parser.format_help()
    assert "example" in text and text.rstrip().endswith(examples[-1].split()[-1])


@pytest.mark.parametrize("name", ["build", "psg2sum", "aquamuse"])
def test_build_commands_share_the_output_and_execution_options(name):
    parser = _every_subcommand()[name]
    groups = {group.title: {option for action in group._group_actions for option in action.option_strings}
              for group in parser._action_groups}
    assert groups["output"] == {"--out", "--work", "--overwrite"}
    assert groups["execution (the same options for every build command)"] >= {"--tasks", "--workers", "--executor",
                                                                              "--executor-options"}


def test_build_help_shows_the_sample_and_that_command_runs(tmp_path):
    """The example of `wikiref build --help` is the exact command on the shipped sample; run as printed (from the
    checkout, so its relative paths hold), it builds a loadable folder, and --quiet prints only the closing table."""
    result = subprocess.run([*wikiref_command(), "build", "--help"], cwd=ROOT, capture_output=True, text=True,
                            check=True)
    example = result.stdout.rstrip().splitlines()[-1].strip()
    assert example.startswith("wikiref build wikiref_dataset/data/sample/wikiref/samplewiki-20240601-pages-articles")
    argv = shlex.split(example)[1:]
    argv[argv.index("--out") + 1] = str(tmp_path / "wikiref-sample")
    built = run_wikiref([*argv, "--quiet"], ROOT)
    assert built.returncode == 0, built.stderr[-3000:]
    assert built.stderr == "" and built.stdout.startswith("WikiRef build ->")
    from wikiref_dataset.process.folders import load_dataset_folder

    assert load_dataset_folder(tmp_path / "wikiref-sample")["train"].num_rows > 0


def test_interrupt_says_how_to_resume_and_leaves_no_dataset(tmp_path):
    """Ctrl-C in `wikiref build`: exit 130 with the resume hint and no traceback; the output folder does not exist
    until the end (load_dataset says it finds no data there), and the same command then finishes the build."""
    import signal
    import time

    argv = [*wikiref_command(), "build", str(DUMP), "--warc", str(WARC), "--out", "wikiref", "--tasks", "2", "--quiet"]
    environment = {**os.environ, "HF_HUB_OFFLINE": "1"}
    process = subprocess.Popen(argv, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=environment)
    marker = tmp_path / "wikiref.work" / "logs" / "statements" / "completions" / "00000"
    deadline = time.monotonic() + 120
    while not marker.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.002)
    running = process.poll() is None
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=120)
    assert running, "the build finished before it could be interrupted"
    assert process.returncode == 130 and "Traceback" not in stderr
    assert stderr.strip().splitlines()[-1] == "wikiref build: interrupted; rerun the same command to resume"
    assert not (tmp_path / "wikiref").exists()
    import datasets

    with pytest.raises(FileNotFoundError, match="Couldn't find any data file"):
        datasets.load_dataset(str(tmp_path / "wikiref"))
    resumed = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, env=environment, timeout=300)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert (tmp_path / "wikiref" / "README.md").is_file()


def test_every_long_option_takes_both_spellings():
    """--a_b and --a-b everywhere (rescore --duc-dirs, summarize --max_words and rouge --rouge_args were refused):
    every long option of every subcommand, given in the other spelling, reaches the option the command declares."""
    from wikiref_dataset.command import either_spelling, option_strings

    parser = build_parser()
    known = option_strings(parser)
    for name in sorted(known):
        if not name.startswith("--") or not any(mark in name[2:] for mark in "-_"):
            continue
        other = "--" + name[2:].translate(str.maketrans("-_", "_-"))
        expected = other if other in known else name  # a command declaring both keeps each as declared
        assert either_spelling([other, "x"], known) == [expected, "x"], name
        assert either_spelling([f"{other}=3"], known) == [f"{expected}=3"], name
    assert either_spelling(["--", "--duc-dirs"], known) == ["--", "--duc-dirs"]  # after --, values as given
    args = parser.parse_args(["rescore", "run", "--duc-dirs", "d2006", "--average-seeds"])
    assert args.duc_dirs == ["d2006"] and args.average_seeds is True
    args = parser.parse_args(["summarize", "--model", "m", "--query", "q", "--max_words", "100", "doc.txt"])
    assert args.max_words == 100
    args = parser.parse_args(["rouge", "input.txt", "--rouge_args=-n 2", "--per_item"])
    assert args.rouge_args == "-n 2" and args.per_item is True


def test_every_subcommand_takes_the_shared_flags():
    """-q/--quiet, -v/--verbose and --debug on every subcommand (`wikiref duc evaluate -q` was refused)."""
    found = _every_subcommand()
    assert "duc evaluate" in found and "experiments" in found and len(found) >= 10
    missing = {name: sorted({"-q", "--quiet", "-v", "--verbose", "--debug"} - set(parser._option_string_actions))
               for name, parser in found.items()}
    assert not {name: flags for name, flags in missing.items() if flags}
    for name, parser in found.items():  # -q parses to quiet everywhere
        assert parser._option_string_actions["-q"].dest == "quiet", name
    args = build_parser().parse_args(["duc", "evaluate", "--dataset", "d", "--baseline", "lead", "-q"])
    assert args.quiet is True


TWO_ERRORS = r'''
import runpy, sys
for script, arguments in (("pretrain_wikiref", ["--recipe", "nosuch"]),  # refused when parsed
                          ("finetune_duc", ["--folds", "2", "--fold", "5", "--duc_dirs", sys.argv[2]])):  # by the run
    main = runpy.run_path(f"{sys.argv[1]}/trainer_scripts/{script}.py", run_name=script)["main"]
    try:
        status = main([*arguments, "--output_dir", "out"])
    except SystemExit as exit:  # argparse's way out
        status = exit.code
    print(script, status, flush=True)
'''


def test_training_scripts_say_an_error_in_one_style(tmp_path):
    """An option refused when parsed or by the run: the same one line, ``<script>.py: error: ...``, exit 2."""
    done = subprocess.run([sys.executable, "-c", TWO_ERRORS, str(ROOT), str(DUC2006)], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert done.stdout.split() == ["pretrain_wikiref", "2", "finetune_duc", "2"], done.stderr[-2000:]
    lines = [line for line in done.stderr.splitlines() if "error" in line.lower()]
    assert len(lines) == 2, done.stderr
    assert lines[0].startswith("pretrain_wikiref.py: error: --recipe nosuch: no such recipe"), lines
    assert lines[1].startswith("finetune_duc.py: error: --fold must be one of 0 … 1 with --folds 2, got 5"), lines
    assert "Traceback" not in done.stderr and not (tmp_path / "out").exists()


QUIET_HIDES = {"rouge": "progress bar", "summarize": "Loading weights", "app": "Loading weights",
               "rescore": "progress bar", "demo": "Loading weights"}
DATATROVE_COMMANDS = ("aquamuse", "build", "documents", "psg2sum", "statements")


def test_quiet_and_verbose_help_say_what_they_change_in_each_command():
    """-q's help spoke of datatrove's logs on commands that run no datatrove stage (rouge, summarize, app, rescore):
    each says what -q hides there, and none speaks of datatrove (its logs show only with -v); -v's help on the
    commands that run datatrove stages says it adds datatrove's logs and statistics tables."""
    found = _every_subcommand()
    for name, parser in found.items():
        quiet = parser._option_string_actions["-q"].help or ""
        assert "datatrove" not in quiet, (name, quiet)
    for name, hidden in QUIET_HIDES.items():
        assert hidden in found[name]._option_string_actions["-q"].help, name
    for name in DATATROVE_COMMANDS:
        verbose = found[name]._option_string_actions["-v"].help
        assert "datatrove" in verbose and "statistics" in verbose, name
    assert "datatrove" not in found["rouge"]._option_string_actions["-v"].help
