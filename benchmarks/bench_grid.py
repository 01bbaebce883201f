"""The DUC grid (seeds 42, 43, 44 x 5 cluster folds of NIST's DUC 2006, the default recipe) under several settings,
each its own `make grid` run in a fresh process, against full fine-tuning: ROUGE-1 and ROUGE-2 (mean ± sd over the
seeds, ILP rule) and the wall time of each grid on this machine.

    .venv/bin/python benchmarks/bench_grid.py --settings k6 k5 k4
    .venv/bin/python benchmarks/bench_grid.py --settings k6 k6:--sentence_position_buckets=16 k6:--num_train_epochs=2
    .venv/bin/python benchmarks/bench_grid.py --quick          # two tiny units on the fixtures (a smoke run)

A setting is ``kK`` (``--frozen_prefix_layers K``; ``k0`` full fine-tuning), optionally followed by ``:`` and unit
options joined by commas (``k6:--query_format=joined``). The baseline is full fine-tuning: the saved grid in
``benchmarks/grids/duc2006-5fold-sentence-encoder`` rescored with the ILP rule (its numbers are given below as
measured; rescore it with ``wikiref rescore``), or ``k0`` run here when asked for. Each grid keeps its folder under
``--work``: a second run of the script resumes every grid where it stopped. The prefix cache is shared by the grids
(``$WIKIREF_PREFIX_CACHE``, default ``--work``/prefix_states): its first fill is counted in the first grid that needs
it, and the table says so.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
REALDATA = PROJECT.parent / "shared" / "realdata"
FULL_FINETUNING = {"rouge_1": (42.83, 0.32), "rouge_2": (11.08, 0.13)}
"""The saved full fine-tuning grid rescored with the ILP rule (benchmarks/README.md, "The levers that change no
weight"): bf16 autocast on an Intel CPU with AMX, the same units otherwise."""
LINE = re.compile(r"grid: ROUGE-1 (?P<r1>[\d.]+) ± (?P<r1sd>[\d.]+), ROUGE-2 (?P<r2>[\d.]+) ± (?P<r2sd>[\d.]+), "
                  r"(?P<units>\d+) units, (?P<seconds>\d+) s")


def parse_setting(text: str) -> tuple[int, list[str]]:
    """``k6:--a=1,--b=2`` → ``(6, ["--a", "1", "--b", "2"])``."""
    head, _, options = text.partition(":")
    if not re.fullmatch(r"k\d+", head):
        raise SystemExit(f"bench_grid: a setting starts with kK (K the frozen prefix layers), got {text!r}")
    argv: list[str] = []
    for option in filter(None, options.split(",")):
        name, equals, value = option.partition("=")
        argv += [name, value] if equals else [name]
    return int(head[1:]), argv


def convert_duc(work: Path, quick: bool) -> Path:
    folder = work / ("duc-fixture" if quick else "duc2006")
    if (folder / "README.md").exists():
        return folder
    source = PROJECT / "tests" / "fixtures" / "duc" / "duc2006" if quick else REALDATA / "duc" / "2006"
    if not source.exists():
        raise SystemExit(f"bench_grid: {source} is missing (NIST's DUC 2006 beside the project)")
    subprocess.run([sys.executable, "-m", "trainer_scripts.cli", "duc", "convert", str(source), "--year", "2006",
                    "--out", str(folder), "-q"], check=True, cwd=PROJECT)
    return folder


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--settings", nargs="+", default=["k6", "k5"], metavar="SETTING")
    parser.add_argument("--work", default=None, metavar="DIR", help="Where the grids are kept (default: a temp dir).")
    parser.add_argument("--duc", default=None, metavar="DIR", help="A converted DUC 2006 (default: converted here).")
    parser.add_argument("--quick", action="store_true", help="Two tiny units on the fixtures (a smoke run).")
    arguments = parser.parse_args()
    work = Path(arguments.work or tempfile.mkdtemp(prefix="bench_grid-"))
    work.mkdir(parents=True, exist_ok=True)
    duc = Path(arguments.duc) if arguments.duc else convert_duc(work, arguments.quick)
    environment = {**os.environ, "HF_HUB_OFFLINE": "1"}
    environment.setdefault("WIKIREF_PREFIX_CACHE", str(work / "prefix_states"))
    rows = []
    for text in arguments.settings:
        layers, options = parse_setting(text)
        out = work / re.sub(r"[^\w.=-]+", "_", text)
        command = [sys.executable, "-m", "trainer_scripts.experiments.grid", "--duc", str(duc), "--out", str(out),
                   "--frozen_prefix_layers", str(layers), *options]
        if arguments.quick:
            command += ["--seeds", "1", "--folds", "2", "--max_steps", "2", "--max_length", "128"]
        started = time.perf_counter()
        run = subprocess.run(command, cwd=PROJECT, env=environment, capture_output=True, text=True)
        seconds = time.perf_counter() - started
        found = LINE.search(run.stdout)
        if run.returncode != 0 or not found:
            print(f"{text}: failed (exit {run.returncode}): {run.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
            rows.append((text, None, seconds))
            continue
        rows.append((text, found, seconds))
        print(run.stdout.strip().splitlines()[-1], f"({text})", flush=True)
    base_r1, base_r2 = FULL_FINETUNING["rouge_1"], FULL_FINETUNING["rouge_2"]
    print("\n| setting | ROUGE-1 | ROUGE-2 | ΔR-2 vs full fine-tuning | units | grid wall time |")
    print("|---|---|---|---|---|---|")
    print(f"| full fine-tuning (saved grid, ILP) | {base_r1[0]:.2f} ± {base_r1[1]:.2f} | {base_r2[0]:.2f} ± "
          f"{base_r2[1]:.2f} | 0 | 15 | (another machine) |")
    for text, found, seconds in rows:
        if found is None:
            print(f"| {text} | failed | | | | {seconds:.0f} s |")
            continue
        delta = float(found["r2"]) - base_r2[0]
        print(f"| {text} | {found['r1']} ± {found['r1sd']} | {found['r2']} ± {found['r2sd']} | {delta:+.2f} | "
              f"{found['units']} | {seconds:.0f} s |")
    good = [found for _, found, _ in rows if found is not None]
    if arguments.quick:
        print(f"RESULT smoke run on the fixtures: {len(good)}/{len(rows)} grids ran (their scores are not DUC 2006's)")
        return 0 if len(good) == len(rows) else 1
    print(f"RESULT grids {len(good)}/{len(rows)} ran; within 0.2 ROUGE-2 of full fine-tuning: "
          + (", ".join(text for text, found, _ in rows if found is not None
                       and float(found["r2"]) >= base_r2[0] - 0.2) or "none"))
    return 0 if len(good) == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
