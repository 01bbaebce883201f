"""Throughput of PSG2SUM mining on one core, with the time split by phase, and the projected cost of mining
English Wikipedia's full history.

Workload: the two real "Anarchism" history windows of ``../shared/realdata/revision_history`` (revisions 0-399 of
2001-2003 and 6000-6300 of January 2006, 700 revisions). Reading (bz2 + XML, :func:`iter_histories`) is timed
once, on its own; mining (:class:`PairMiner` on the revisions held in memory) is timed ``--repeats`` times and the
best run is reported, split into markup stripping (wikitext → plain text with WikiRef's renderer), lead sentence
splitting (spaCy), diffing (tokenizing + difflib + revert/rewrite rules) and scoring; "other" is the rest (hashing,
bookkeeping). The baseline measured in the same run is ``mwparserfromhell.parse(text).strip_code()`` on every
revision (the cheapest plain text one could diff), to show what the markup phase costs against it.

Projection: English Wikipedia's full history is about 1 billion revisions; time = revisions / (revisions/s per
core × cores), assuming pages shard evenly over the cores and reading scales with them (one dump file per task).
The 2006 window's revisions are much larger than 2001-2003's, and today's articles larger still, so the projection
is a lower bound on time. Exits 0 in every case; prints a note when the data is absent.

    .venv/bin/python benchmarks/bench_psg2sum.py            # about half a minute
    .venv/bin/python benchmarks/bench_psg2sum.py --quick    # one repeat
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import _common

ROOT = Path(__file__).resolve().parents[1]
REALDATA = Path(__file__).resolve().parents[2] / "shared" / "realdata" / "revision_history"
WINDOWS = ("derived_Anarchism_history_first400.xml.bz2", "derived_Anarchism_history_rev6000_6300.xml.bz2")
FULL_HISTORY_REVISIONS = 1_000_000_000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="one repeat")
    parser.add_argument("--no-pin", action="store_true", help="do not pin the process to one CPU")
    args = parser.parse_args(argv)
    where = _common.pin_to_one_core(not args.no_pin)
    sys.path.insert(0, str(ROOT))

    import mwparserfromhell

    from wikiref_dataset.psg2sum.history import PageHistory, iter_histories
    from wikiref_dataset.psg2sum.mining import MiningConfig, PairMiner
    from wikiref_dataset.text import TextPipeline

    print(f"bench_psg2sum: {_common.machine_line()}; {where}")
    paths = [REALDATA / name for name in WINDOWS]
    if not all(path.is_file() for path in paths):
        print(f"{REALDATA} is absent: nothing to measure")
        return 0
    started = time.perf_counter()
    pages = [(history, list(history.revisions)) for path in paths for history in iter_histories(path)]
    read_seconds = time.perf_counter() - started
    revisions = sum(len(revs) for _, revs in pages)
    megabytes = sum(len((r.text or "").encode()) for _, revs in pages for r in revs) / 1e6
    print(f"workload: {len(pages)} history windows, {revisions} revisions, {megabytes:.1f} MB of wikitext; "
          f"reading (bz2 + XML) {read_seconds:.2f}s = {revisions / read_seconds:,.0f} revisions/s")

    pipeline = TextPipeline()
    pipeline.split_sentences("Warm up the spaCy pipeline. Twice.")
    repeats = 1 if args.quick else args.repeats
    runs = []
    for _ in range(repeats):
        miner = PairMiner(MiningConfig(), pipeline)
        started = time.perf_counter()
        for history, revs in pages:
            copy = PageHistory(history.page_id, history.title, history.namespace, history.redirect, iter(revs))
            for _pair in miner.mine_page(copy):
                pass
        runs.append((time.perf_counter() - started, miner))
    total, miner = min(runs, key=lambda run: run[0])
    pairs = miner.stats["revision_pairs"]
    phases = {name: miner.timings[name] for name in ("markup", "sentences", "diff", "scoring")}
    phases["other"] = max(total - sum(phases.values()), 0.0)

    strip_times, _ = _common.timed(lambda: [mwparserfromhell.parse(r.text).strip_code()
                                            for _, revs in pages for r in revs if r.text], 1 if args.quick else 2)
    strip = _common.best(strip_times)

    print(f"\nmining ({repeats} run(s), best): {total:.2f}s for {pairs} revision pairs = {pairs / total:,.1f} "
          f"revision pairs/s on one core ({miner.stats['pairs']} pairs kept at λ=0.6)")
    for name, seconds in phases.items():
        print(f"  {name:<9} {seconds:7.2f}s  {100 * seconds / total:5.1f}%")
    print(f"baseline: mwparserfromhell strip_code on every revision {strip:.2f}s; our markup phase / strip_code = "
          f"{phases['markup'] / strip:.2f}x")
    end_to_end = total + read_seconds
    rate = pairs / end_to_end
    print(f"\nend to end (reading + mining): {rate:,.1f} revision pairs/s per core")
    for cores in (16, 128):
        seconds = FULL_HISTORY_REVISIONS / (rate * cores)
        print(f"projected full English history (~{FULL_HISTORY_REVISIONS / 1e9:.0f}B revisions) on {cores:>3} cores: "
              f"{seconds / 3600:,.0f} h = {seconds / 86400:,.1f} days")
    return 0


if __name__ == "__main__":
    sys.exit(main())
