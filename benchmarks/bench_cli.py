"""Start-up cost of the ``wikiref`` command: wall time and peak memory of every subcommand's ``--help`` and of the
smallest real runs, beside ``python -c pass`` and the import of each heavy library, each in a fresh process.

Rows, each measured ``--repeats`` times in a new interpreter (the best wall time and its peak RSS are printed):

* ``python -c pass`` and ``import X`` for the libraries a command may pull in (numpy, pyarrow, datasets, spaCy,
  torch, transformers, evaluate): the floor, and what each import costs;
* ``wikiref <subcommand> --help`` for every subcommand (walked from the parser);
* real runs: ``duc evaluate --baseline lead`` and ``--summaries`` on real DUC 2006 (the issue's target: ≤ 1.5 s and
  ≤ 250 MB on the 2-core machine), ``rouge`` on the 621 golden items, ``duc convert`` and ``statements`` on the
  project's small fixtures.

Baseline, in the same run: with ``--before REV`` (a git revision of this repository, e.g. the commit before the
evaluation stopped importing the model side), the same rows run from a temporary worktree of that revision (first on
``PYTHONPATH``), and the ratio before/now is printed per row.

DUC 2006 is converted once from NIST's folders (``--nist``, default ``../shared/realdata/duc/2006`` beside the project)
into ``--work`` (a temporary folder unless given; a folder that already holds the conversion is reused). Without it, the
DUC rows are skipped with the reason.

    .venv/bin/python benchmarks/bench_cli.py --before 4f91c70          # about 3 minutes on 2 cores
    .venv/bin/python benchmarks/bench_cli.py --quick                   # one repeat, no --help rows but two
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import _common

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
TARGET_SECONDS, TARGET_MB = 1.5, 250
LIBRARIES = ("numpy", "pyarrow", "datasets", "spacy", "torch", "transformers", "evaluate")
WIKIREF = ["-c", "import sys; from trainer_scripts.cli import main; sys.exit(main(sys.argv[1:]))"]


@dataclass
class Measure:
    seconds: float
    peak_mb: float
    status: int


def run_once(argv: list[str], env: dict[str, str], cwd: Path) -> Measure:
    """One fresh process: its wall time and its own peak RSS (``wait4``'s rusage is the child's alone)."""
    start = time.perf_counter()
    process = subprocess.Popen([sys.executable, *argv], env=env, cwd=cwd, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    return Measure(seconds, usage.ru_maxrss / 1024, process.returncode)


def measure(argv: list[str], env: dict[str, str], cwd: Path, repeats: int) -> Measure:
    runs = [run_once(argv, env, cwd) for _ in range(repeats)]
    fastest = min(runs, key=lambda run: run.seconds)
    return Measure(fastest.seconds, max(run.peak_mb for run in runs), max(run.status for run in runs))


def subcommands() -> list[list[str]]:
    """Every leaf subcommand of ``wikiref`` (``duc convert``, ``duc evaluate``, ...), from the parser."""
    code = ("import argparse, json\nfrom trainer_scripts.cli import build_parser\n"
            "def leaves(parser, prefix=()):\n"
            "    for action in parser._actions:\n"
            "        if isinstance(action, argparse._SubParsersAction):\n"
            "            for name, sub in action.choices.items():\n"
            "                yield from leaves(sub, (*prefix, name))\n"
            "            return\n"
            "    yield list(prefix)\n"
            "print(json.dumps(list(leaves(build_parser()))))")
    return json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                     cwd=ROOT).stdout)


def prepare(work: Path, nist: Path) -> tuple[dict[str, list[str]], list[str]]:
    """The real runs' command lines, and the reasons of those that cannot run here."""
    skipped = []
    runs: dict[str, list[str]] = {}
    golden = SHARED / "rouge_golden" / "items.jsonl"
    if golden.is_file():
        items = work / "golden_items.jsonl"
        with open(golden, encoding="utf-8") as source, open(items, "w", encoding="utf-8") as target:
            for line in source:
                record = json.loads(line)
                target.write(json.dumps({"prediction": record["system"], "references": record["references"]}) + "\n")
        runs["rouge (621 golden items)"] = ["rouge", str(items), "-q"]
    else:
        skipped.append(f"rouge: {golden} is absent")
    duc = work / "duc2006"
    if not (duc / "README.md").is_file() and nist.is_dir():
        print(f"converting DUC 2006 from {nist} into {duc} (once) ...", file=sys.stderr, flush=True)
        subprocess.run([sys.executable, *WIKIREF, "duc", "convert", str(nist), "--year", "2006", "--out", str(duc),
                        "-q"], check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    if (duc / "README.md").is_file():
        lead = work / "lead.jsonl"
        subprocess.run([sys.executable, *WIKIREF, "duc", "evaluate", "--dataset", str(duc), "--baseline", "lead",
                        "--save_summaries", str(lead), "-q"], check=True, cwd=ROOT, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        runs["duc evaluate --baseline lead (DUC 2006)"] = ["duc", "evaluate", "--dataset", str(duc), "--baseline",
                                                           "lead", "-q"]
        runs["duc evaluate --summaries (DUC 2006)"] = ["duc", "evaluate", "--dataset", str(duc), "--summaries",
                                                       str(lead), "-q"]
    else:
        skipped.append(f"duc evaluate: no NIST DUC 2006 folder at {nist} (--nist)")
    fixtures = ROOT / "tests" / "fixtures"
    runs["duc convert (fixture, 2 clusters)"] = ["duc", "convert", str(fixtures / "duc" / "duc2006"), "--year",
                                                 "2006", "--out", str(work / "convert_out"), "--overwrite", "-q"]
    runs["statements (fixture dump)"] = ["statements", str(fixtures / "wiki" / "tiny-dump.xml"), "--out",
                                         str(work / "statements_out"), "-q"]
    return runs, skipped


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3, help="fresh processes per row (best wall time)")
    parser.add_argument("--before", metavar="REV", help="also run every row from this git revision, for the ratio")
    parser.add_argument("--nist", type=Path, default=SHARED / "realdata" / "duc" / "2006",
                        help="NIST's DUC 2006 folder")
    parser.add_argument("--work", type=Path, help="folder for the converted year and outputs (default: temporary)")
    parser.add_argument("--quick", action="store_true", help="one repeat, two --help rows")
    args = parser.parse_args(argv)
    repeats = 1 if args.quick else args.repeats

    work = args.work or Path(tempfile.mkdtemp(prefix="bench_cli_"))
    work.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_CACHE": str(work / "hf_cache"),
           "TOKENIZERS_PARALLELISM": "false"}
    env.pop("PYTHONPATH", None)
    trees = {"now": None}
    if args.before:
        before = work / f"before-{args.before}"
        if not before.is_dir():
            subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(before), args.before],
                           check=True, capture_output=True)
        trees["before"] = before
    try:
        runs, skipped = prepare(work, args.nist)
        rows: list[tuple[str, list[str]]] = [("python -c pass", ["-c", "pass"])]
        rows += [(f"import {name}", ["-c", f"import {name}"]) for name in LIBRARIES]
        helps = subcommands()
        if args.quick:
            helps = [helps[0], next(leaf for leaf in helps if leaf[-1] == "evaluate")]
        rows += [(f"wikiref {' '.join(leaf)} --help", [*WIKIREF, *leaf, "--help"]) for leaf in helps]
        rows += [(f"wikiref {name}", [*WIKIREF, *command]) for name, command in runs.items()]

        print(f"{_common.machine_line()}; best of {repeats} fresh processes per row; peak RSS of the process")
        header = f"{'row':<48} {'now s':>7} {'now MB':>7}"
        if "before" in trees:
            header += f" {'before s':>9} {'before MB':>10} {'ratio s':>8}"
        print(header)
        results = {}
        for name, command in rows:
            now = measure(command, env, ROOT, repeats)
            line = f"{name:<48} {now.seconds:>7.2f} {now.peak_mb:>7.0f}" + ("" if now.status == 0 else " (failed)")
            results[name] = {"now": now.__dict__}
            if "before" in trees and (name.startswith("wikiref")):
                old = measure(command, {**env, "PYTHONPATH": str(trees["before"])}, trees["before"], repeats)
                line += (f" {old.seconds:>9.2f} {old.peak_mb:>10.0f} {old.seconds / now.seconds:>7.1f}x"
                         + ("" if old.status == 0 else " (failed)"))
                results[name]["before"] = old.__dict__
            print(line, flush=True)
        for reason in skipped:
            print(f"skipped: {reason}")
        target = results.get("wikiref duc evaluate --baseline lead (DUC 2006)")
        if target:
            met = target["now"]["seconds"] <= TARGET_SECONDS and target["now"]["peak_mb"] <= TARGET_MB
            print(f"RESULT bench_cli: duc evaluate --baseline lead on DUC 2006 {target['now']['seconds']:.2f} s, "
                  f"{target['now']['peak_mb']:.0f} MB (target <= {TARGET_SECONDS} s, <= {TARGET_MB} MB: "
                  f"{'met' if met else 'NOT met'})")
        return 0
    finally:
        if "before" in trees:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(trees["before"])],
                           capture_output=True)
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
