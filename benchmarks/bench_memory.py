"""Peak memory of each build at 1x and Nx (default 10x) the shipped samples: the builds stream or spill, so the peak
must not grow with the input.

Each build runs in its own child process (``_builds.py``: one worker, 2 tasks, numeric libraries on one thread) on
inputs made by ``scale_inputs.py``; the child reports ``resource.getrusage(RUSAGE_SELF).ru_maxrss`` once the build
has finished, so the peak covers every stage (with one worker datatrove runs the tasks in the child itself). The
baseline is the same build at 1x, measured in the same run; the script prints the ratio Nx / 1x and checks the Nx
peak against the stated bound, which does not depend on the input size:

    bound = peak at 1x + allowance, allowance = what the builds may hold whatever the input size beyond what the 1x
    run already held: WikiRef 2 sort buffers (stage 3 sorts statements and documents) + 64 MiB (stage 5's Parquet
    row groups, 1,000 examples per split); PSG2SUM 1 sort buffer + 64 MiB; AQuaMuSe 1 sort buffer + 512 MiB (the
    sentence encoder's transient tensors: a full batch of 128 sentences of 256 tokens has ~400 MiB of attention
    scores, and the 1x questions fill no batch; glibc keeps such freed blocks in the heap, so the peak creeps up
    with the number of encoder calls; ``--fixed-mmap-threshold`` runs the children with
    ``MALLOC_MMAP_THRESHOLD_=131072 MALLOC_TRIM_THRESHOLD_=131072``, which returns them to the system and shows
    the builds' own memory flat).

The sort buffer is ``WIKIREF_SORT_BUFFER_MB`` (64 MiB by default). Not measured here: spaCy's vocabulary keeps every
distinct token it meets, and the Nx inputs repeat the samples' text, so they add few new tokens (see README).
Exits 0 in every case; prints a note when ``../shared/realdata`` is absent.

    .venv/bin/python benchmarks/bench_memory.py                       # the three builds, 1x and 10x (~3 minutes)
    .venv/bin/python benchmarks/bench_memory.py --build psg2sum --scale 20
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

import _common
from _builds import run_child
from scale_inputs import BUILDS, DEFAULT_OUT, MissingData, input_bytes, make_inputs

ALLOWANCE = {"wikiref": (2, 64), "psg2sum": (1, 64), "aquamuse": (1, 512)}  # (sort buffers, MiB)
FIXED_MMAP_THRESHOLD = {"MALLOC_MMAP_THRESHOLD_": "131072", "MALLOC_TRIM_THRESHOLD_": "131072"}


def allowance_mib(build: str, sort_buffer_mb: float) -> float:
    buffers, fixed = ALLOWANCE[build]
    return buffers * sort_buffer_mb + fixed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", choices=[*BUILDS, "all"], default="all")
    parser.add_argument("--scale", type=int, default=10, help="the large input, times the samples (default 10)")
    parser.add_argument("--inputs", default=str(DEFAULT_OUT), help=f"where inputs are made (default {DEFAULT_OUT})")
    parser.add_argument("--tasks", type=int, default=2)
    parser.add_argument("--sort-buffer-mb", type=float, default=64.0, help="WIKIREF_SORT_BUFFER_MB of the builds")
    parser.add_argument("--documents-per-batch", type=int, default=None,
                        help="AQuaMuSe's corpus matching batch (default: the build's, 256 documents)")
    parser.add_argument("--fixed-mmap-threshold", action="store_true",
                        help="run the builds with glibc's mmap and trim thresholds fixed at 128 KiB")
    args = parser.parse_args(argv)
    print(f"bench_memory: {_common.machine_line()}; one worker, {args.tasks} tasks, sort buffer "
          f"{args.sort_buffer_mb:g} MiB" + ("; glibc mmap/trim thresholds 128 KiB" if args.fixed_mmap_threshold else ""))
    rows, results = [], []
    scratch = Path(tempfile.mkdtemp(prefix="wikiref-bench-memory-"))
    try:
        for build in BUILDS if args.build == "all" else [args.build]:
            peaks = {}
            for scale in (1, args.scale):
                try:
                    inputs = make_inputs(build, scale, args.inputs)
                except MissingData as error:
                    print(f"{build}: {error}; skipped")
                    break
                options = ({"documents_per_batch": args.documents_per_batch}
                           if build == "aquamuse" and args.documents_per_batch else {})
                report = run_child(build, inputs, scratch / f"{build}-x{scale}" / "out", workers=1, tasks=args.tasks,
                                   sort_buffer_mb=args.sort_buffer_mb, options=options,
                                   environment=FIXED_MMAP_THRESHOLD if args.fixed_mmap_threshold else None)
                peak = report["peak_rss_mib"]["self"]
                peaks[scale] = peak
                examples = report["splits"]
                kept = sum(examples.values()) if all(isinstance(v, int) for v in examples.values()) else \
                    sum(next(iter(examples.values())).values())
                rows.append((build, f"{scale}x", f"{input_bytes(inputs) / 1e6:.1f}", f"{kept:,}",
                             f"{report['wall_seconds']:.1f}", f"{peak:,.0f}",
                             f"{report['peak_rss_mib']['children']:,.0f}"))
                shutil.rmtree(scratch / f"{build}-x{scale}", ignore_errors=True)
            if len(peaks) == 2:
                bound = peaks[1] + allowance_mib(build, args.sort_buffer_mb)
                ratio = peaks[args.scale] / peaks[1]
                results.append((build, ratio, bound, peaks[args.scale] <= bound))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if not rows:
        print("nothing measured (../shared/realdata is absent)")
        return 0
    header = ("build", "input", "input MB", "examples", "wall s", "peak RSS MiB", "children MiB")
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    print()
    for row in [header, *rows]:
        print("  ".join(str(cell).rjust(width) for cell, width in zip(row, widths, strict=True)))
    print("\n(children: the largest child process, here datatrove's multiprocessing manager, forked from the build)")
    for build, ratio, bound, met in results:
        print(f"RESULT {build}: peak RSS {args.scale}x / 1x = {ratio:.3f}; bound {bound:,.0f} MiB (1x peak + "
              f"{allowance_mib(build, args.sort_buffer_mb):g} MiB): {'met' if met else 'MISSED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
