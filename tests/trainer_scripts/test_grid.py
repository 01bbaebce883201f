"""`make grid` / `python -m trainer_scripts.experiments.grid`: the grid's units with a frozen, cached prefix, the one
closing line, a second run into the same folder that runs nothing, the results naming K, and bad input."""

import json
import re
import subprocess
from pathlib import Path

from trainer_scripts.experiments import grid

PROJECT_ROOT = Path(__file__).resolve().parents[2]
FAST = ["--use_cpu", "--max_steps", "2", "--per_device_train_batch_size", "4", "--max_length", "128",
        "--disable_tqdm", "true", "--selection", "duc"]
LINE = re.compile(r"^grid: ROUGE-1 \d+\.\d\d ± \d+\.\d\d, ROUGE-2 \d+\.\d\d ± \d+\.\d\d, 2 units, \d+ s$")


def test_the_grid_runs_resumes_and_ends_with_one_line(tmp_path, capsys, monkeypatch, tiny_bert_dir, duc_years):
    monkeypatch.setenv("WIKIREF_PREFIX_CACHE", str(tmp_path / "prefix"))
    out = tmp_path / "grid"
    argv = ["--duc", duc_years[2006], "--out", str(out), "--encoder", str(tiny_bert_dir), "--recipe", "sentence-encoder",
            "--seeds", "1",
            "--folds", "2", "--frozen_prefix_layers", "2", *FAST]
    assert grid.main(argv) == 0
    captured = capsys.readouterr()
    assert LINE.match(captured.out.strip().splitlines()[-1]), captured.out
    assert "2 unit(s) run, 0 finished earlier" in captured.err
    results = [json.loads(path.read_text()) for path in out.glob("units/finetune-*/results.json")]
    assert len(results) == 2 and {result["finetuning"]["frozen_prefix_layers"] for result in results} == {2}
    assert all("read from a cache" in path.read_text() for path in out.glob("units/finetune-*/README.md"))
    assert len(list((tmp_path / "prefix").iterdir())) == 1  # one cache folder (k = 2 of this encoder) for both units
    # the same command again: nothing runs, the same line (its time aside)
    assert grid.main(argv) == 0
    again = capsys.readouterr()
    assert "0 unit(s) run, 2 finished earlier" in again.err
    assert again.out.strip().splitlines()[-1].rsplit(",", 1)[0] == captured.out.strip().splitlines()[-1].rsplit(",", 1)[0]


def test_all_layers_is_the_encoders_count(tiny_bert_dir):
    assert grid.prefix_layers("all", str(tiny_bert_dir)) == 2
    assert grid.prefix_layers("all", None) == 6  # the shipped MiniLM
    assert grid.prefix_layers("3", None) == 3 and grid.prefix_layers("0", None) == 0


def test_grid_line_reads_the_row_of_one_year():
    results = {"rows": {"qbert": {"duc": {"2006": {"rouge_1": {"mean": 0.4283, "std": 0.0032},
                                                    "rouge_2": {"mean": 0.1108, "std": 0.0013}}}}}}
    assert grid.grid_line(results, 15, 1234.4) == "grid: ROUGE-1 42.83 ± 0.32, ROUGE-2 11.08 ± 0.13, 15 units, 1234 s"
    try:
        grid.grid_line({"rows": {}}, 0, 1.0)
    except ValueError as error:
        assert "no year" in str(error)
    else:
        raise AssertionError("a results file without the row must be refused")


def test_make_grid_without_its_folders_says_how_and_bad_values_are_one_line(tmp_path, capsys):
    run = subprocess.run(["make", "-s", "grid"], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode != 0 and "usage: make grid DUC=" in run.stderr
    assert grid.main(["--duc", str(tmp_path), "--out", str(tmp_path / "o"), "--frozen_prefix_layers", "-1"]) == 2
    assert "--frozen_prefix_layers must be 0 or more, or all, got -1" in capsys.readouterr().err
    assert grid.main(["--duc", str(tmp_path), "--out", str(tmp_path / "o"), "--encoder", str(tmp_path)]) == 2
    assert "--frozen_prefix_layers all: cannot read the layers of" in capsys.readouterr().err
    # --wait is the runner's (the message of a folder another run holds names it), not passed to the units
    arguments, extra = grid.build_parser().parse_known_args(["--duc", "d", "--out", "o", "--wait"])
    assert arguments.wait is True and extra == []
    assert grid.main(["--duc", str(tmp_path / "missing"), "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err.startswith("grid: error: ")
