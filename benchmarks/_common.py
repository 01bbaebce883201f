"""Shared pieces of the benchmark scripts: one-core pinning, timing, and deterministic text sources.

Only the standard library is imported here, so a script can call :func:`pin_to_one_core` before anything loads
numpy (whose BLAS reads its thread count once, at import).
"""

from __future__ import annotations

import json
import os
import platform
import random
import re
import time
from collections.abc import Callable
from pathlib import Path

_THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS",
                     "VECLIB_MAXIMUM_THREADS", "BLIS_NUM_THREADS")

# ../shared/rouge_golden next to the project root (benchmarks/<script> -> parents[2] is the folder above the root).
GOLDEN_DIR = Path(__file__).resolve().parents[2] / "shared" / "rouge_golden"

# Sentences are split at "\n" and after ". " (the period stays with its sentence).
_SENTENCE_SPLIT = re.compile(r"\n|(?<=\.) ")


def pin_to_one_core(pin_cpu: bool = True) -> str:
    """Limit numeric libraries to one thread and, on Linux, the process to one CPU. Call before importing numpy."""
    for variable in _THREAD_VARIABLES:
        os.environ[variable] = "1"
    where = "threads=1"
    if pin_cpu and hasattr(os, "sched_setaffinity"):
        cpu = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})
        where += f", pinned to CPU {cpu}"
    return where


def machine_line() -> str:
    cpus = os.cpu_count() or 0
    return f"{platform.python_implementation()} {platform.python_version()} on {platform.machine()}, {cpus} CPUs"


def timed(function: Callable[[], object], repeats: int) -> tuple[list[float], object]:
    """Run ``function`` ``repeats`` times; return every wall time (perf_counter) and the last result."""
    times = []
    result = None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return times, result


def best(times: list[float]) -> float:
    return min(times)


# ----------------------------------------------------------------------------------------------------------------
# Text sources
# ----------------------------------------------------------------------------------------------------------------


def load_golden_items(golden_dir: Path | None = None) -> list[dict] | None:
    """The ROUGE golden items (``items.jsonl``), or ``None`` when the folder is absent."""
    path = Path(golden_dir or GOLDEN_DIR) / "items.jsonl"
    if not path.is_file():
        return None
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def split_sentences(text: str, min_words: int = 4) -> list[str]:
    """Sentences of a text split at ``"\\n"`` and ``". "``, stripped; shorter ones than ``min_words`` dropped."""
    sentences = []
    for piece in _SENTENCE_SPLIT.split(text):
        piece = piece.strip()
        if len(piece.split()) >= min_words:
            sentences.append(piece)
    return sentences


def golden_topics(items: list[dict], min_sentences: int = 8) -> list[list[str]]:
    """One sentence pool per golden item (its system and references, deduplicated, in order): sentences of one
    topic share vocabulary, like a DUC cluster or a web page and the statement that cites it."""
    topics = []
    for item in items:
        pool: dict[str, None] = {}
        for text in (item["system"], *item["references"]):
            for sentence in split_sentences(text):
                pool.setdefault(sentence, None)
        if len(pool) >= min_sentences:
            topics.append(list(pool))
    return topics


_FUNCTION_WORDS = ("the of and to in a is that for it as was with be by on not he this are or his from at which "
                   "but have an they you were her she there been one all we their has would when if so no will "
                   "more can who its into than them these other some could only also after first two new most").split()
_SYLLABLES = ("ka ro mi te sul van dor pri le ta gen mon ral cu bi nes tor ash lim qui fe dra po zen har "
              "ul ment tion ing ed er al ous ive ize ate ly ness ful").split()


def synthetic_topics(n_topics: int = 400, sentences_per_topic: int = 30, seed: int = 0) -> list[list[str]]:
    """English-like sentence pools from a fixed seed, for when the golden texts are absent: Zipf-distributed
    content words from a shared vocabulary, a topic-specific vocabulary, and English function words."""
    rng = random.Random(seed)
    vocabulary = sorted({"".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(1, 4))) for _ in range(6000)})
    rng.shuffle(vocabulary)
    weights = [1.0 / (rank + 1) for rank in range(len(vocabulary))]
    topics = []
    for _ in range(n_topics):
        topic_words = rng.sample(vocabulary[200:], 40)
        pool = []
        for _ in range(sentences_per_topic):
            words = []
            for _ in range(rng.randint(8, 35)):
                draw = rng.random()
                if draw < 0.4:
                    words.append(rng.choice(_FUNCTION_WORDS))
                elif draw < 0.7:
                    words.append(rng.choice(topic_words))
                else:
                    words.append(rng.choices(vocabulary, weights)[0])
            sentence = " ".join(words)
            pool.append(sentence[0].upper() + sentence[1:] + ".")
        topics.append(pool)
    return topics


def text_topics(items: list[dict] | None) -> tuple[list[list[str]], str]:
    """Sentence pools from the golden texts when present, else from the seeded generator; with a label."""
    if items is not None:
        topics = golden_topics(items)
        return topics, f"golden texts ({len(topics)} topics of {len(items)} items)"
    return synthetic_topics(), "seeded English-like generator (golden texts absent)"
