"""Throughput of AQuaMuSe's matching: sentences embedded per second (MiniLM, sentence-transformers) and answer-index
queries per second (faiss), and the projected cost of the paper's corpus (355M Common Crawl documents).

Workload: the sentences of the real web samples in ``../shared/realdata/web_corpus`` (C4 and CCNet/Dolma jsonl),
split by the project's text pipeline and filtered as the build does (at least 4 words); the answer side is the
sentences of the 661 real AQuaMuSe dev targets. Encoding is timed on the whole workload (``--repeats`` times,
best run). Index queries are timed for (a) the exact index over the dev answer sentences, against the baseline
measured in the same run, a NumPy matrix product + argpartition doing the same search; and (b) the approximate
``IndexIVFFlat`` over ``--answers`` synthetic unit vectors (the size of NQ's long-answer side, ~300k sentences).

Projection: corpus sentences = 355M documents × the mean embeddable sentences per document of the sample;
time = sentences / (sentences/s) for encoding and the same for index queries; the paper's Beam job did the
equivalent. Runs on the GPU when torch sees one (faiss stays on the CPU unless faiss-gpu is installed).

    .venv/bin/python benchmarks/bench_aquamuse.py            # about a minute on 2 CPU cores
    .venv/bin/python benchmarks/bench_aquamuse.py --quick
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import _common

ROOT = Path(__file__).resolve().parents[1]
REALDATA = ROOT.parent / "shared" / "realdata"
PAPER_DOCUMENTS = 355_000_000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one repeat, fewer synthetic answers")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--answers", type=int, default=300_000, help="synthetic answer vectors for the IVF index")
    parser.add_argument("--batch-size", type=int, default=128)
    args = parser.parse_args(argv)
    if args.quick:
        args.repeats, args.answers = 1, 60_000
    if not (REALDATA / "web_corpus").is_dir():
        print("bench_aquamuse: ../shared/realdata/web_corpus is absent; nothing to measure")
        return 0
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import numpy as np
    import torch

    from wikiref_dataset.aquamuse.corpus import iter_corpus_documents
    from wikiref_dataset.aquamuse.embedding import AnswerIndex, SentenceEncoder
    from wikiref_dataset.aquamuse.released import read_released
    from wikiref_dataset.aquamuse.steps import CORPUS_TEXT_CONFIG
    from wikiref_dataset.text import TextPipeline, default_pipeline

    print(_common.machine_line())
    device = "cuda" if torch.cuda.is_available() else "cpu"
    print(f"device: {device}" + (f" ({torch.cuda.get_device_name(0)})" if device == "cuda" else
                                 f", torch threads {torch.get_num_threads()}"))
    files = sorted((REALDATA / "web_corpus").glob("*/*.json*"))
    documents = [d for f in files for d in iter_corpus_documents(f)]
    pipeline = TextPipeline(CORPUS_TEXT_CONFIG)
    per_document = [[s for s in sentences if len(s.split()) >= 4]
                    for sentences in pipeline.split_sentences_many(d.text for d in documents)]
    sentences = [s for group in per_document for s in group]
    mean_sentences = statistics.fmean(len(group) for group in per_document)
    print(f"workload: {len(documents)} real documents, {len(sentences):,} sentences "
          f"({mean_sentences:.1f} per document)")
    encoder = SentenceEncoder(device=device, batch_size=args.batch_size)
    encoder.encode(sentences[:64])  # load and warm up
    workload = sentences * (8 if device == "cuda" else 1)
    times = []
    for _ in range(args.repeats):
        started = time.perf_counter()
        vectors = encoder.encode(workload)
        if device == "cuda":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - started)
    encode_rate = len(workload) / min(times)
    print(f"encode: {len(workload):,} sentences in {min(times):.2f}s -> {encode_rate:,.0f} sentences/s")

    targets = list(read_released(REALDATA / "aquamuse" / "v2_abstractive_dev.jsonl"))
    answer_sentences = [s for group in default_pipeline().split_sentences_many(t.target for t in targets)
                        for s in group]
    answers = encoder.encode(answer_sentences)
    exact = AnswerIndex(answers, use_gpu=False)
    queries = np.ascontiguousarray(np.tile(vectors[: len(sentences)], (4, 1)))
    started = time.perf_counter()
    exact.search(queries, 10)
    exact_rate = len(queries) / (time.perf_counter() - started)
    started = time.perf_counter()
    scores = queries @ answers.T
    np.argpartition(-scores, 10, axis=1)[:, :10]
    numpy_rate = len(queries) / (time.perf_counter() - started)
    print(f"index, exact over {len(answers):,} dev answer sentences: {exact_rate:,.0f} queries/s "
          f"(NumPy baseline {numpy_rate:,.0f} queries/s, ratio {exact_rate / numpy_rate:.2f})")
    rng = np.random.default_rng(0)
    synthetic = rng.standard_normal((args.answers, answers.shape[1])).astype(np.float32)
    synthetic /= np.linalg.norm(synthetic, axis=1, keepdims=True)
    started = time.perf_counter()
    approximate = AnswerIndex(synthetic, use_gpu=False)
    build_seconds = time.perf_counter() - started
    started = time.perf_counter()
    approximate.search(queries, 10)
    ivf_rate = len(queries) / (time.perf_counter() - started)
    print(f"index, {approximate.kind} over {args.answers:,} answer vectors (built in {build_seconds:.1f}s): "
          f"{ivf_rate:,.0f} queries/s")

    corpus_sentences = PAPER_DOCUMENTS * mean_sentences
    encode_hours = corpus_sentences / encode_rate / 3600
    search_hours = corpus_sentences / ivf_rate / 3600
    unit = "GPU" if device == "cuda" else f"{torch.get_num_threads()}-core CPU"
    print(f"projection for {PAPER_DOCUMENTS:,} documents (~{corpus_sentences / 1e9:.1f}B sentences): encoding "
          f"{encode_hours:,.0f} {unit}-hours, index search {search_hours:,.0f} CPU-hours (faiss threads "
          f"{__import__('faiss').omp_get_max_threads()})")
    print(f"RESULT aquamuse device={device} encode_sentences_per_s={encode_rate:.0f} "
          f"exact_queries_per_s={exact_rate:.0f} ivf_queries_per_s={ivf_rate:.0f} "
          f"projected_encode_hours={encode_hours:.0f} projected_search_hours={search_hours:.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
