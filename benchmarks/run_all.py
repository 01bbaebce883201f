"""Run every benchmark of this folder with its default sizes (``make bench``) and repeat their RESULT lines.

Each benchmark runs in its own interpreter (so each pins its own thread settings before numpy loads). The runner
exits 0 when every script ran, whether or not the targets were met: benchmarks report, they do not gate. It exits 1
only when a script itself failed.

    .venv/bin/python benchmarks/run_all.py            # default sizes, a few minutes on 2 cores
    .venv/bin/python benchmarks/run_all.py --quick    # smoke run of every script
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCHMARKS = (
    "bench_duc_rouge.py", "bench_oracle.py", "bench_statements.py", "bench_web.py", "bench_extract.py",
    "bench_curation.py", "bench_qbert.py", "bench_sparse.py", "bench_psg2sum.py", "bench_aquamuse.py", "bench_cli.py",
    "bench_statement_sentences.py", "bench_qfs_scoring.py", "bench_app.py",
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="Pass --quick to every benchmark (smoke run).")
    parser.add_argument("--only", choices=BENCHMARKS, action="append", help="Run only this script (repeatable).")
    args = parser.parse_args(argv)

    summary = []
    failed = []
    for script in args.only or BENCHMARKS:
        command = [sys.executable, str(HERE / script)] + (["--quick"] if args.quick else [])
        print(f"=== {script} {'(quick)' if args.quick else ''}".rstrip(), flush=True)
        start = time.perf_counter()
        output = []
        with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              env={**os.environ, "PYTHONUNBUFFERED": "1"}) as process:
            for line in process.stdout:  # streamed, so a long benchmark shows its progress
                print(line, end="", flush=True)
                output.append(line.rstrip("\n"))
        elapsed = time.perf_counter() - start
        results = [line for line in output if line.startswith("RESULT ")]
        if process.returncode != 0:
            failed.append(script)
            summary.append(f"{script}: FAILED with exit code {process.returncode} after {elapsed:.0f} s")
        else:
            summary.extend(results or [f"{script}: finished in {elapsed:.0f} s without a RESULT line"])
        print(f"=== {script} took {elapsed:.0f} s\n", flush=True)

    print("Summary")
    for line in summary:
        print(f"  {line}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
