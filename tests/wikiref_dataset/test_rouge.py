"""Tests for the ROUGE-1.5.5 engine (``wikiref_dataset.rouge``).

Two parts:

* golden tests: every number ROUGE-1.5.5.pl printed for the 621 items of ``shared/rouge_golden`` (per-item R/P/F and
  raw counts, the printed bootstrap averages) and every field of its ``tokenize_cases.jsonl``; skipped when the shared
  folder is absent;
* hand-written tests that need no shared data: drand48, the bootstrap, option parsing, ROUGE-N/SU/L on small examples
  computed by hand, the API's errors.

Some hand-written tests pin ROUGE-1.5.5.pl behaviour outside the golden settings (CI interpolation, -f B ties).
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from wikiref_dataset.rouge import (
    RougeConfig,
    RougeResult,
    RougeScorer,
    _summary_bytes,
    bootstrap_average,
    clipped_hits,
    count_words,
    drand48_sequence,
    load_stopwords,
    ngram_counts,
    read_lines,
    rouge,
    rouge_tokenize,
    skip_bigram_counts,
    truncate_lines,
)

GOLDEN_DIR = Path(__file__).resolve().parents[3] / "shared" / "rouge_golden"
GOLDEN_FILES = ("items.jsonl", "expected_duc.json", "expected_nolimit.json", "tokenize_cases.jsonl")

# The two perl runs of shared/rouge_golden/README.md and the engine configs that must reproduce them.
GOLDEN_RUNS = {
    "duc": ("expected_duc.json", RougeConfig()),
    "nolimit": ("expected_nolimit.json", RougeConfig(word_limit=None, rouge_l=True)),
}
SCORE_FIELDS = ("recall", "precision", "f")
COUNT_FIELDS = ("hit", "model_count", "peer_count")
SHOW = 15  # mismatches listed in a failure message

# A config without stemming, length limit or skip bigrams, for small hand-computed examples.
PLAIN = RougeConfig(stem=False, word_limit=None, skip_distance=None)


def _mismatch_message(mismatches: list, what: str) -> str:
    lines = [f"{len(mismatches)} {what} mismatch(es); first {min(SHOW, len(mismatches))}:"]
    lines += [f"  {mismatch}" for mismatch in mismatches[:SHOW]]
    return "\n".join(lines)


def _read_jsonl(path: Path) -> list[dict]:
    # U+0085/U+2028/U+2029 are escaped in the files, so splitlines() is safe (README).
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _round5(value: float) -> float:
    return float(f"{value:.5f}")


# ----------------------------------------------------------------------------------------------------------------
# Golden data: shared/rouge_golden
# ----------------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def golden_dir() -> Path:
    missing = [name for name in GOLDEN_FILES if not (GOLDEN_DIR / name).is_file()]
    if missing:
        pytest.skip(f"ROUGE golden data not available in {GOLDEN_DIR} (missing {missing})")
    return GOLDEN_DIR


@pytest.fixture(scope="module")
def golden_items(golden_dir: Path) -> list[dict]:
    items = _read_jsonl(golden_dir / "items.jsonl")
    assert len(items) == 621
    return items


@dataclass
class GoldenRun:
    name: str
    config: RougeConfig
    expected: dict
    items: list[dict]
    result: RougeResult


@pytest.fixture(scope="module", params=sorted(GOLDEN_RUNS))
def golden_run(request: pytest.FixtureRequest, golden_dir: Path, golden_items: list[dict]) -> GoldenRun:
    """The whole item set scored once per expected file (items.jsonl order: item k is eval ID k, key "k.X")."""
    filename, config = GOLDEN_RUNS[request.param]
    expected = json.loads((golden_dir / filename).read_text(encoding="utf-8"))
    result = RougeScorer(config).evaluate([item["system"] for item in golden_items],
                                          [item["references"] for item in golden_items])
    return GoldenRun(request.param, config, expected, golden_items, result)


def test_golden_run_setup(golden_run: GoldenRun) -> None:
    """The config is the one perl ran (same options, same measures, same items in the same order)."""
    expected, config = golden_run.expected, golden_run.config
    assert config.to_args() == expected["rouge_args"]
    assert RougeConfig.from_args(expected["rouge_args"]) == config
    assert config.metric_names == expected["metrics"]
    assert golden_run.result.metrics == expected["metrics"]
    assert expected["n_items"] == len(golden_run.items) == len(golden_run.result.per_item)
    assert list(expected["per_item"]) == [item["id"] for item in golden_run.items]


def test_golden_per_item_scores(golden_run: GoldenRun) -> None:
    """Every per-item R/P/F, as the "%.5f" strings perl printed."""
    mismatches = []
    for item, got in zip(golden_run.items, golden_run.result.per_item, strict=True):
        want = golden_run.expected["per_item"][item["id"]]
        for metric in golden_run.expected["metrics"]:
            for value in SCORE_FIELDS:
                expected_text, got_text = f"{want[metric][value]:.5f}", f"{getattr(got[metric], value):.5f}"
                if expected_text != got_text:
                    mismatches.append((item["id"], item["kind"], metric, value, expected_text, got_text))
    assert not mismatches, _mismatch_message(mismatches, f"{golden_run.name} per-item score")


def test_golden_per_item_counts(golden_run: GoldenRun) -> None:
    """Every per-item hit / model_count / peer_count (perl's -t 2 raw counts, summed over references under -f A)."""
    mismatches = []
    for item, got in zip(golden_run.items, golden_run.result.per_item, strict=True):
        want = golden_run.expected["per_item"][item["id"]]
        for metric in golden_run.expected["metrics"]:
            for count in COUNT_FIELDS:
                got_count = getattr(got[metric], count)
                if not isinstance(got_count, int) or want[metric][count] != got_count:
                    mismatches.append((item["id"], item["kind"], metric, count, want[metric][count], got_count))
    assert not mismatches, _mismatch_message(mismatches, f"{golden_run.name} per-item count")


def test_golden_printed_averages(golden_run: GoldenRun) -> None:
    """The Average_R/P/F lines (bootstrap means and 95% intervals) exactly as perl printed them."""
    report = golden_run.result.report()
    mismatches = []
    for metric in golden_run.expected["metrics"]:
        official = golden_run.expected["official"][metric]
        average = golden_run.result.averages[metric]
        printed = average.printed(metric)
        if printed != official["printed"]:
            mismatches.append((metric, official["printed"], printed))
        for value in SCORE_FIELDS:
            if getattr(average, value) != official[value]:
                mismatches.append((metric, value, official[value], getattr(average, value)))
            ci = getattr(average, f"{value}_ci")
            if list(ci) != official[f"{value}_ci"]:
                mismatches.append((metric, f"{value}_ci", official[f"{value}_ci"], ci))
        missing_lines = [line for line in official["printed"] if line not in report.splitlines()]
        if missing_lines:
            mismatches.append((metric, "report() lacks", missing_lines))
    assert not mismatches, _mismatch_message(mismatches, f"{golden_run.name} average")


def test_golden_plain_mean(golden_run: GoldenRun) -> None:
    """RougeResult.mean is the plain mean of the rounded per-item values (not what ROUGE prints)."""
    for metric, values in golden_run.expected["plain_mean_of_per_item"].items():
        for value, want in values.items():
            assert golden_run.result.mean(metric, value) == pytest.approx(want, abs=1e-9), (metric, value)


def _normalise_whitespace(text: str) -> str:
    """What some wrappers do before writing the files (README): splitlines, collapse whitespace, drop empty lines."""
    lines = (" ".join(line.split()) for line in text.splitlines())
    return "\n".join(line for line in lines if line)


def test_golden_whitespace_sensitive_items(golden_run: GoldenRun) -> None:
    """The engine does not normalise whitespace: exactly the listed items change when the texts are normalised."""
    scorer = RougeScorer(golden_run.config)
    changed = []
    for item, raw_scores in zip(golden_run.items, golden_run.result.per_item, strict=True):
        system = _normalise_whitespace(item["system"])
        references = [_normalise_whitespace(reference) for reference in item["references"]]
        if system == item["system"] and references == item["references"]:
            continue
        if scorer.score(system, references) != raw_scores:
            changed.append(item["id"])
    assert golden_run.expected["whitespace_sensitive_items"], "the golden file lists no whitespace-sensitive item"
    assert changed == golden_run.expected["whitespace_sensitive_items"]


# -- tokenize_cases.jsonl ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tokenize_cases(golden_dir: Path) -> list[dict]:
    cases = _read_jsonl(golden_dir / "tokenize_cases.jsonl")
    assert len(cases) == 197
    return cases


@pytest.fixture(scope="module")
def stem_scorer() -> RougeScorer:
    return RougeScorer(RougeConfig(word_limit=None, rouge_l=True))  # -m, no length limit


def _check_cases(cases: list[dict], field: str, compute) -> None:
    mismatches = []
    for case in cases:
        got = compute(case)
        if got != case[field]:
            mismatches.append((case["id"], case["category"], repr(case["text"][:60]), case[field], got))
    assert not mismatches, _mismatch_message(mismatches, f"tokenize_cases {field!r}")


def test_tokenize_cases_tokens(tokenize_cases: list[dict]) -> None:
    _check_cases(tokenize_cases, "tokens", lambda case: rouge_tokenize(" ".join(read_lines(case["text"]))))
    # Per line and then concatenated gives the same tokens (lines are joined with a space).
    _check_cases(tokenize_cases, "tokens",
                 lambda case: [token for line in read_lines(case["text"]) for token in rouge_tokenize(line)])


def test_tokenize_cases_tokenized_text(tokenize_cases: list[dict]) -> None:
    """perl's tokenized text keeps standalone "-" tokens, which are then dropped (they do not start with [a-z0-9])."""
    mismatches = []
    for case in tokenize_cases:
        want = [token for token in case["tokenized"].split() if token != "-"]
        got = rouge_tokenize(" ".join(read_lines(case["text"])))
        if want != got:
            mismatches.append((case["id"], case["tokenized"], got))
    assert not mismatches, _mismatch_message(mismatches, "tokenize_cases 'tokenized'")


def test_tokenize_cases_stems(tokenize_cases: list[dict], stem_scorer: RougeScorer) -> None:
    _check_cases(tokenize_cases, "stems", lambda case: stem_scorer.tokens(" ".join(read_lines(case["text"]))))
    _check_cases(tokenize_cases, "stems", lambda case: stem_scorer.summary_tokens(case["text"]))


def test_tokenize_cases_stems_by_line(tokenize_cases: list[dict], stem_scorer: RougeScorer) -> None:
    """The ROUGE-L units, one per line of read_lines (whitespace-only lines give empty units)."""
    _check_cases(tokenize_cases, "stems_by_line",
                 lambda case: [stem_scorer.tokens(line) for line in read_lines(case["text"])])
    _check_cases(tokenize_cases, "stems_by_line", lambda case: stem_scorer.analyze(case["text"]).units)


def _stems_of(scorer: RougeScorer, ids: np.ndarray) -> list[str]:
    """The stems (tokens, without -m) behind a scorer's token ids."""
    stems = {number: stem for stem, number in scorer._vocabulary.items()}
    return [stems[number] for number in ids.tolist()]


def test_tokenize_cases_token_ids(tokenize_cases: list[dict], rouge_path: str) -> None:
    """The ids the scorer counts stand for perl's stems, and for its tokens after -l, one text at a time and all
    texts tokenized together."""
    stem_scorer = RougeScorer(RougeConfig(word_limit=None))
    _check_cases(tokenize_cases, "stems", lambda case: _stems_of(stem_scorer, stem_scorer.analyze(case["text"]).ids))

    def tokens_at_limit(case: dict) -> list[str]:
        scorer = RougeScorer(RougeConfig(stem=False, word_limit=case["limit"]))
        return _stems_of(scorer, scorer.analyze(case["text"]).ids)

    _check_cases(tokenize_cases, "tokens_at_limit", tokens_at_limit)
    scorer = RougeScorer(RougeConfig(word_limit=None))
    ids, lengths = scorer._number_texts([_summary_bytes(case["text"], None)[0] for case in tokenize_cases],
                                        [False] * len(tokenize_cases))
    together = np.split(ids, np.cumsum(lengths)[:-1])
    _check_cases(tokenize_cases, "stems", lambda case: _stems_of(scorer, together[tokenize_cases.index(case)]))


def test_golden_runs_on_both_paths(golden_run: GoldenRun, rouge_path: str) -> None:
    """Plain Python and numpy each reproduce the golden run (which mixes them: short items go the plain way)."""
    result = RougeScorer(golden_run.config).evaluate([item["system"] for item in golden_run.items],
                                                     [item["references"] for item in golden_run.items])
    assert result.per_item == golden_run.result.per_item
    assert result.averages == golden_run.result.averages


def test_tokenize_cases_words_for_length_limit(tokenize_cases: list[dict]) -> None:
    _check_cases(tokenize_cases, "words_for_length_limit", lambda case: count_words(case["text"]))


def test_tokenize_cases_tokens_at_limit(tokenize_cases: list[dict]) -> None:
    _check_cases(tokenize_cases, "tokens_at_limit",
                 lambda case: rouge_tokenize(" ".join(truncate_lines(read_lines(case["text"]), case["limit"]))))


# ----------------------------------------------------------------------------------------------------------------
# Hand-written tests (no shared data needed)
# ----------------------------------------------------------------------------------------------------------------

# -- drand48 and the bootstrap -----------------------------------------------------------------------------------


def _drand48(seed: int, length: int) -> list[float]:
    """srand(seed); rand() x length, with Perl >= 5.20's drand48, in Python ints."""
    state = (seed << 16) + 0x330E
    values = []
    for _ in range(length):
        state = (0x5DEECE66D * state + 0xB) % (1 << 48)
        values.append(state / (1 << 48))
    return values


def test_drand48_sequence() -> None:
    seeds = [0, 1, 999]
    got = drand48_sequence(seeds, 8)
    assert got.shape == (3, 8)
    for seed, row in zip(seeds, got, strict=True):
        assert row.tolist() == _drand48(seed, 8), seed
    # srand48(0); drand48() of the C library.
    assert got[0, 0] == pytest.approx(0.170828036106, abs=1e-12)
    assert drand48_sequence(np.arange(3), 2).tolist() == [_drand48(seed, 2) for seed in range(3)]


def _reference_bootstrap(rows: list[list[float]], resamples: int, confidence: float,
                         keys: list[str] | None = None) -> tuple[list[float], list[float], list[float]]:
    """ROUGE-1.5.5's computeAverages/bootstrapResampling, written out plainly."""
    n = len(rows)
    keys = keys or [f"{k}.X" for k in range(1, n + 1)]
    by_key = dict(zip(keys, rows, strict=True))
    instances = sorted(keys)  # perl's sort: as strings
    samples: list[list[float]] = [[] for _ in rows[0]]
    for seed in range(resamples):
        draws = _drand48(seed, n)
        sums = [0.0] * len(rows[0])
        for draw in draws:
            row = by_key[instances[int(draw * n)]]
            for column, value in enumerate(row):
                sums[column] += value
        for column, total in enumerate(sums):
            samples[column].append(total / n)
    delta = resamples * ((100 - confidence) / 2.0) / 100.0
    upper_a = int(resamples - delta - 1)
    lower_a = int(delta)
    ratio = resamples - delta - 1 - upper_a

    def at(ranked: list[float], index: int) -> float:
        return ranked[index] + (ranked[index + 1] - ranked[index]) * ratio if ratio else ranked[index]

    means, lows, highs = [], [], []
    for column_samples in samples:
        ranked = sorted(column_samples)
        total = 0.0
        for value in ranked:
            total += value
        means.append(_round5(total / resamples))
        lows.append(_round5(at(ranked, lower_a)))
        highs.append(_round5(at(ranked, upper_a)))
    return means, lows, highs


# 12 items (so that "10.X" < "2.X" matters), 3 columns of 5-decimal values.
BOOTSTRAP_ROWS = [[_round5(((7 * k) % 11) / 13), _round5(k / 17), _round5(1 / (k + 2))] for k in range(12)]


@pytest.mark.parametrize(("resamples", "confidence"), [(40, 95.0), (200, 90.0), (1000, 95.0)])
def test_bootstrap_average_matches_plain_reimplementation(resamples: int, confidence: float) -> None:
    mean, low, high = bootstrap_average(np.array(BOOTSTRAP_ROWS), resamples, confidence)
    want_mean, want_low, want_high = _reference_bootstrap(BOOTSTRAP_ROWS, resamples, confidence)
    assert mean.tolist() == want_mean
    assert low.tolist() == want_low
    assert high.tolist() == want_high
    assert all(lo <= m <= hi for lo, m, hi in zip(low, mean, high, strict=True))


def test_bootstrap_average_sorts_keys_as_strings() -> None:
    values = np.array(BOOTSTRAP_ROWS)
    default = bootstrap_average(values, 40, 95.0)
    explicit = bootstrap_average(values, 40, 95.0, keys=[f"{k}.X" for k in range(1, 13)])
    assert all(a.tolist() == b.tolist() for a, b in zip(default, explicit, strict=True))
    # Numeric order differs from ROUGE's string order (1.X, 10.X, 11.X, 12.X, 2.X, ...): another result.
    numeric_rank = [f"{k:02d}.X" for k in range(1, 13)]
    assert bootstrap_average(values, 40, 95.0, keys=numeric_rank)[0].tolist() != default[0].tolist()
    custom = [f"doc{k}" for k in (5, 3, 11, 0, 7, 1, 9, 2, 10, 4, 8, 6)]
    got = bootstrap_average(values, 40, 95.0, keys=custom)
    assert [a.tolist() for a in got] == list(_reference_bootstrap(BOOTSTRAP_ROWS, 40, 95.0, keys=custom))
    with pytest.raises(ValueError, match="keys"):
        bootstrap_average(values, 40, 95.0, keys=["1.X"])


def test_bootstrap_average_single_item_and_empty() -> None:
    mean, low, high = bootstrap_average(np.array([[0.25, 0.5]]), 50, 95.0)
    assert mean.tolist() == low.tolist() == high.tolist() == [0.25, 0.5]
    mean, low, high = bootstrap_average(np.zeros((0, 2)), 50, 95.0)
    assert mean.tolist() == low.tolist() == high.tolist() == [0.0, 0.0]


@pytest.mark.parametrize(("resamples", "confidence"), [(10, 95.0), (1000, 97.5)])
def test_bootstrap_interval_interpolation(resamples: int, confidence: float) -> None:
    _, low, high = bootstrap_average(np.array(BOOTSTRAP_ROWS), resamples, confidence)
    _, want_low, want_high = _reference_bootstrap(BOOTSTRAP_ROWS, resamples, confidence)
    assert (low.tolist(), high.tolist()) == (want_low, want_high)


# -- options -----------------------------------------------------------------------------------------------------

DUC_ARGS = "-n 2 -x -m -2 4 -u -c 95 -r 1000 -f A -p 0.5 -t 0 -l 250"


def test_from_args_duc_defaults() -> None:
    assert RougeConfig.from_args(DUC_ARGS) == RougeConfig() == RougeConfig.duc()
    assert RougeConfig.from_args(DUC_ARGS.split()) == RougeConfig()
    assert RougeConfig().to_args() == DUC_ARGS.split()
    # Input-handling options are accepted and ignored.
    assert RougeConfig.from_args("-a -d -v -e /data " + DUC_ARGS + " -z SPL") == RougeConfig()
    # Absent options take ROUGE's own defaults: no stemming, no skip bigrams, ROUGE-L on, no length limit.
    assert RougeConfig.from_args("-n 1") == RougeConfig(max_n=1, rouge_l=True, stem=False, skip_distance=None,
                                                        skip_unigrams=False, word_limit=None)
    assert RougeConfig.from_args("-2 -1 -u").metric_names == ["rouge_l", "rouge_su*"]
    assert RougeConfig.from_args("-n 3 -2 4").metric_names == ["rouge_1", "rouge_2", "rouge_3", "rouge_l", "rouge_s4"]


@pytest.mark.parametrize(
    "config",
    [
        RougeConfig(),
        RougeConfig(word_limit=None, rouge_l=True),
        RougeConfig(max_n=4, scoring="B", alpha=0.25, confidence=90.0, resamples=200, word_limit=100),
        RougeConfig(max_n=1, stem=False, skip_distance=-1, skip_unigrams=False, rouge_l=True),
        RougeConfig(max_n=0, rouge_l=True, skip_distance=None, skip_unigrams=False, alpha=1.0),
    ],
)
def test_to_args_round_trip(config: RougeConfig) -> None:
    args = config.to_args()
    assert all(isinstance(arg, str) for arg in args)
    assert RougeConfig.from_args(args) == config
    assert RougeConfig.from_args(" ".join(args)) == config


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ("-n 2 -q", "not implemented"),  # unknown option
        ("-n 2 -t 1", "-t"),
        ("-n 2 -t 2", "-t"),
        ("-n 2 -f C", "scoring"),
        ("-n 2 -u", "-u needs -2"),
        ("-n 2 -l -5", "word_limit"),
        ("-n 2 -l 0", "word_limit"),
        ("-n 2 -p 1.5", "alpha"),
        ("-n 2 -p -0.1", "alpha"),
        ("-n 2 -p half", "-p"),
        ("-n two", "-n"),
        ("-n", "needs a value"),
        ("-n 2 -c 100", "confidence"),
        ("-n 2 -r 0", "resamples"),
        ("-n 2 -b 665", "not implemented"),
        ("-n 2 -w 1.2", "not implemented"),
        ("-n 2 -3 HM", "not implemented"),
        ("-n 2 -s", "stop-word"),
        ("-n 0 -x", "no ROUGE measure"),
    ],
)
def test_from_args_rejects_bad_options(args: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        RougeConfig.from_args(args)


def test_config_validation() -> None:
    for bad in ({"scoring": "C"}, {"alpha": 1.5}, {"alpha": -0.1}, {"word_limit": 0}, {"max_n": -1},
                {"resamples": 0}, {"confidence": 0.0}, {"confidence": 100.0},
                {"max_n": 0, "rouge_l": False, "skip_distance": None}):
        with pytest.raises(ValueError):
            RougeConfig(**bad)
    assert RougeConfig(stopwords={"the"}).stopwords == frozenset({"the"})


def test_from_args_rejects_model_only_stemming() -> None:
    with pytest.raises(ValueError):
        RougeConfig.from_args("-n 2 -m -M")


def test_to_args_round_trip_keeps_full_precision() -> None:
    config = RougeConfig(alpha=1 / 3)
    assert RougeConfig.from_args(config.to_args()) == config


# -- reading, truncation, tokens ---------------------------------------------------------------------------------


def test_read_lines() -> None:
    assert read_lines("a b\n\nc\r\n  \n") == ["a b", "c\r", "  "]
    assert read_lines(["a\nb", "", "c"]) == ["a", "b", "c"]
    assert read_lines("") == []
    with pytest.raises(TypeError, match="sentence 1"):
        read_lines(["ok", 3])
    with pytest.raises(TypeError):
        read_lines(42)


def test_rouge_tokenize() -> None:
    assert rouge_tokenize("The U.S.-led coalition") == ["the", "u", "s", "led", "coalition"]
    assert rouge_tokenize("don't pay $3.5") == ["don", "t", "pay", "3", "5"]
    assert rouge_tokenize("Zürich -LRB- x -RRB-") == ["z", "rich", "lrb", "x", "rrb"]
    # ASCII-only lowercasing: KELVIN SIGN and U+0130 are separators, not "k"/"i".
    assert rouge_tokenize("\u212aelvin \u0130stanbul") == ["elvin", "stanbul"]
    assert rouge_tokenize(" - -- !!! ") == []


def test_count_words_and_truncate_lines() -> None:
    # Perl's split(/\s+/): "U.S.-led" and a standalone "-" are one word each; a leading-space line counts one more.
    assert count_words("the U.S.-led - coalition") == 4
    assert count_words(" a b\nc \n \t \nd\u00a0e") == 3 + 1 + 0 + 1
    lines = ["a b c", "d e", "f g h i"]
    assert truncate_lines(lines, None) == lines
    assert truncate_lines(lines, 6) == ["a b c", "d e", "f"]
    assert truncate_lines(lines, 5) == ["a b c", "d e"]  # the line that reaches the limit is cut (to all its words)
    assert truncate_lines(lines, 2) == ["a b"]
    assert truncate_lines(["a  b\tc", "d"], 3) == ["a b c"]  # the cut line is re-joined with single spaces
    assert truncate_lines(["x", "  y z"], 2) == ["x", ""]  # the leading empty field is one of the kept words
    assert truncate_lines(["x", " ", "y z"], 3) == ["x", " ", "y z"]  # whitespace-only lines add no word


def test_counting_helpers() -> None:
    tokens = ["a", "b", "a", "b", "a"]
    assert ngram_counts(tokens, 1) == Counter({"a": 3, "b": 2})
    assert ngram_counts(tokens, 2) == Counter({("a", "b"): 2, ("b", "a"): 2})
    assert ngram_counts(tokens, 3) == Counter({("a", "b", "a"): 2, ("b", "a", "b"): 1})
    assert clipped_hits(Counter({"a": 3, "b": 1}), Counter({"a": 1, "b": 2, "c": 5})) == 2
    assert clipped_hits(Counter({"a": 1, "b": 2, "c": 5}), Counter({"a": 3, "b": 1})) == 2


# -- ROUGE-N, modes A and B --------------------------------------------------------------------------------------


def test_rouge_n_two_references_mode_a() -> None:
    """Clipping per reference; R = sum(hit) / sum(ref count), P = sum(hit) / (k * sys count); F from rounded R, P."""
    scores = RougeScorer(PLAIN).score("the cat the cat sat", ["the cat sat on the mat", "a cat sat"])
    # Unigrams: system the:2 cat:2 sat:1 (5). ref1 the:2 cat:1 sat:1 on mat (6) -> 2+1+1 = 4 hits;
    # ref2 a cat sat (3) -> cat clipped to 1, sat 1 = 2 hits. R = 6/9, P = 6/(2*5).
    r1 = scores["rouge_1"]
    assert (r1.hit, r1.model_count, r1.peer_count) == (6, 9, 10)
    assert (r1.recall, r1.precision) == (0.66667, 0.6)
    assert r1.f == 0.63158  # 0.6*0.66667 / (0.5*0.6 + 0.5*0.66667) = 0.631580...
    # Bigrams: system "the cat":2 "cat the" "cat sat" (4). ref1 (5 bigrams): "the cat" clipped to 1, "cat sat" 1;
    # ref2 (2 bigrams): "cat sat" 1. R = 3/7, P = 3/(2*4).
    r2 = scores["rouge_2"]
    assert (r2.hit, r2.model_count, r2.peer_count) == (3, 7, 8)
    assert (r2.recall, r2.precision, r2.f) == (0.42857, 0.375, 0.4)
    assert list(scores) == ["rouge_1", "rouge_2"]


def test_rouge_n_mode_b_best_reference() -> None:
    config = RougeConfig(max_n=1, stem=False, word_limit=None, skip_distance=None, scoring="B")
    # ref1 recall 1/4, ref2 recall 2/2: B keeps ref2 only; A sums both.
    best = RougeScorer(config).score("x y z", ["x q q q", "y z"])["rouge_1"]
    assert (best.hit, best.model_count, best.peer_count) == (2, 2, 3)
    assert (best.recall, best.precision, best.f) == (1.0, 0.66667, 0.8)
    summed = RougeScorer(PLAIN).score("x y z", ["x q q q", "y z"])["rouge_1"]
    assert (summed.hit, summed.model_count, summed.peer_count) == (3, 6, 6)
    # Equal recall (1/2 and 2/4): the first reference is kept (perl replaces only on a strictly better score).
    tie = RougeScorer(config).score("x y z", ["x q", "y z q q"])["rouge_1"]
    assert (tie.hit, tie.model_count, tie.peer_count) == (1, 2, 3)


def test_rouge_n_mode_b_compares_rounded_recall() -> None:
    config = RougeConfig(max_n=1, stem=False, word_limit=None, skip_distance=None, scoring="B")
    system = " ".join(f"s{i}" for i in range(137))
    first = " ".join([f"s{i}" for i in range(134)] + [f"f{i}" for i in range(179)])  # 134 hits / 313
    second = " ".join([f"s{i}" for i in range(137)] + [f"g{i}" for i in range(183)])  # 137 hits / 320
    score = RougeScorer(config).score(system, [first, second])["rouge_1"]
    assert (score.hit, score.model_count, score.peer_count) == (134, 313, 137)
    assert (score.recall, score.precision) == (0.42812, 0.9781)


def test_rouge_n_stemming_and_length_limit() -> None:
    stemmed = RougeScorer(RougeConfig(word_limit=None)).score("the cats were running", "a cat is running")["rouge_1"]
    assert stemmed.hit == 2  # cats -> cat, running -> run
    unstemmed = RougeScorer(RougeConfig(word_limit=None, stem=False)).score("the cats were running",
                                                                            "a cat is running")["rouge_1"]
    assert unstemmed.hit == 1
    limited = RougeScorer(RougeConfig(word_limit=3, stem=False)).score("a b c d e", "a b c d e")["rouge_1"]
    assert (limited.hit, limited.model_count, limited.peer_count) == (3, 3, 3)


# -- ROUGE-SU ----------------------------------------------------------------------------------------------------


def test_skip_bigram_counts_su4_quirk() -> None:
    # Unigrams of every token but the last; pairs with at most 4 words between them.
    assert skip_bigram_counts(["a", "b", "c"], 4, True) == Counter(
        {"a": 1, "b": 1, ("a", "b"): 1, ("a", "c"): 1, ("b", "c"): 1})
    assert skip_bigram_counts(["a"], 4, True) == Counter()
    assert skip_bigram_counts([], 4, True) == Counter()
    seven = [f"t{i}" for i in range(7)]
    su4 = skip_bigram_counts(seven, 4, True)
    assert sum(su4.values()) == 6 + (5 + 5 + 4 + 3 + 2 + 1)
    assert ("t0", "t5") in su4 and ("t0", "t6") not in su4 and "t6" not in su4
    assert sum(skip_bigram_counts(seven, -1, False).values()) == 7 * 6 // 2  # ROUGE-S*: every pair
    assert sum(skip_bigram_counts(seven, 0, False).values()) == 6  # gap 0: plain bigrams


def test_rouge_su4_scores() -> None:
    scorer = RougeScorer(RougeConfig(stem=False, word_limit=None))
    # System grams: a, b, (a,b), (a,c), (b,c); reference grams: a, c, (a,c), (a,b), (c,b).
    # Hits a, (a,b), (a,c): "b" is only a system unigram because the reference's last token is not counted.
    su4 = scorer.score("a b c", "a c b")["rouge_su4"]
    assert (su4.hit, su4.model_count, su4.peer_count) == (3, 5, 5)
    assert (su4.recall, su4.precision, su4.f) == (0.6, 0.6, 0.6)
    # A one-token text has no SU4 gram at all, while ROUGE-1 is perfect.
    one = scorer.score("word", "word")
    assert (one["rouge_su4"].model_count, one["rouge_su4"].peer_count, one["rouge_su4"].recall) == (0, 0, 0.0)
    assert one["rouge_1"].recall == 1.0


# -- ROUGE-L -----------------------------------------------------------------------------------------------------


def test_rouge_l_union_lcs_across_system_lines() -> None:
    """Lin (2004), section 3.2: r = w1..w5, c1 = w1 w2 w6 w7 w8, c2 = w1 w3 w8 w9 w5: union LCS = w1 w2 w3 w5."""
    scorer = RougeScorer(RougeConfig(max_n=1, rouge_l=True, stem=False, word_limit=None, skip_distance=None))
    score = scorer.score("w1 w2 w6 w7 w8\nw1 w3 w8 w9 w5", "w1 w2 w3 w4 w5")["rouge_l"]
    assert (score.hit, score.model_count, score.peer_count) == (4, 5, 10)
    assert (score.recall, score.precision, score.f) == (0.8, 0.4, 0.53333)
    # The same text as one system line: the LCS with "w1 w2 w3 w4 w5" is w1 w2 w3 w5 as well.
    joined = scorer.score("w1 w2 w6 w7 w8 w1 w3 w8 w9 w5", "w1 w2 w3 w4 w5")["rouge_l"]
    assert joined.hit == 4


def test_rouge_l_clipping_and_tie_rule() -> None:
    scorer = RougeScorer(RougeConfig(max_n=1, rouge_l=True, stem=False, word_limit=None, skip_distance=None))
    # Each system token is used once: the second reference unit finds nothing left.
    clipped = scorer.score("a b", "a b\na b")["rouge_l"]
    assert (clipped.hit, clipped.model_count, clipped.peer_count) == (2, 4, 2)
    assert (clipped.recall, clipped.precision) == (0.5, 1.0)
    # Reference unit "a b" vs system "b a": the backtrack goes "up" on ties, so it marks "a", not "b"; the
    # second unit "a" then finds no system "a" left. (Marking "b" would have given 2 hits.)
    tie = scorer.score("b a", "a b\na")["rouge_l"]
    assert (tie.hit, tie.model_count, tie.peer_count) == (1, 3, 2)
    # Empty (whitespace-only) units add nothing.
    assert scorer.score("a b\n \n", " \na b")["rouge_l"].recall == 1.0


# -- scorer API and errors ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("system", ["", "!!! ...", "   \n\t", "- -- ---", "\u4e2d\u6587 \u00e9\u00e8"])
def test_empty_system_scores_zero(system: str) -> None:
    scores = RougeScorer(RougeConfig(word_limit=None, rouge_l=True)).score(system, ["the cat sat", "a dog"])
    for metric, score in scores.items():
        assert (score.recall, score.precision, score.f, score.hit, score.peer_count) == (0.0, 0.0, 0.0, 0, 0), metric
        assert score.model_count > 0, metric


def test_errors() -> None:
    scorer = RougeScorer()
    with pytest.raises(ValueError, match="at least one reference"):
        scorer.score("the cat", [])
    with pytest.raises(TypeError, match="sentence 1 is int"):
        scorer.score(["the cat", 7], ["the cat"])
    with pytest.raises(TypeError, match="sentence 0 is NoneType"):
        scorer.score("the cat", [[None]])
    with pytest.raises(TypeError, match=r"item 1: .*sentence 2"):
        list(scorer.score_many(["a", ["b", "c", 3.0]], [["a"], ["b"]]))
    with pytest.raises(ValueError, match="item 0: .*reference"):
        list(scorer.score_many(["a"], [[]]))
    with pytest.raises(ValueError, match="2 system summaries but 1 reference"):
        list(scorer.score_many(["a", "b"], [["a"]]))
    with pytest.raises(ValueError):
        scorer.evaluate(["a", "b"], [["a"]])


def test_score_accepts_strings_and_sentence_lists() -> None:
    scorer = RougeScorer(RougeConfig(word_limit=None, rouge_l=True))
    text = "The cat sat on the mat.\nIt was happy."
    as_list = ["The cat sat on the mat.", "It was happy."]
    reference = "A cat was on the mat.\nThe cat was happy."
    assert scorer.score(as_list, reference) == scorer.score(text, [reference])
    assert scorer.score(text, [reference.split("\n")]) == scorer.score(text, reference)


def test_rouge_function() -> None:
    predictions = ["the cat sat on the mat", "a dog barked"]
    references = [["a cat sat on a mat", "the cat was on the mat"], "the dog barked loudly"]
    result = rouge(predictions, references, word_limit=None, rouge_l=True)
    assert result.config == RougeConfig(word_limit=None, rouge_l=True)
    assert result.metrics == ["rouge_1", "rouge_2", "rouge_l", "rouge_su4"]
    assert result.per_item == list(RougeScorer(result.config).score_many(predictions, references))
    default = rouge(predictions, references)
    assert default.config == RougeConfig()
    overridden = rouge(predictions, references, config=RougeConfig(scoring="B"), max_n=1)
    assert (overridden.config.scoring, overridden.config.max_n) == ("B", 1)
    with pytest.raises(TypeError, match="wordlimit"):
        rouge(predictions, references, wordlimit=100)


def test_stopwords(tmp_path: Path) -> None:
    path = tmp_path / "stopwords.txt"
    path.write_text("# a stop-word list\nthe\nOn  \n\nrunning # unstemmed form\n", encoding="utf-8")
    stopwords = load_stopwords(path)
    assert stopwords == frozenset({"the", "on", "running"})
    scorer = RougeScorer(RougeConfig(stem=False, word_limit=None, stopwords=stopwords))
    assert scorer.tokens("The cat sat on THE mat") == ["cat", "sat", "mat"]
    assert scorer.score("the cat on the mat", "the dog on the mat")["rouge_1"].recall == 0.5
    plain = RougeScorer(RougeConfig(stem=False, word_limit=None))
    assert plain.score("the cat on the mat", "the dog on the mat")["rouge_1"].recall == 0.8
    # Stop words are removed before stemming: "running" goes, "runs" is stemmed to "run".
    stemming = RougeScorer(RougeConfig(word_limit=None, stopwords=stopwords))
    assert stemming.tokens("running runs") == ["run"]
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing\n\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no words"):
        load_stopwords(empty)


@pytest.fixture(scope="module")
def small_result() -> RougeResult:
    return RougeScorer(RougeConfig(resamples=100)).evaluate(
        ["the cat sat on the mat", "a dog barked at the mailman", ""],
        [["a cat sat on a mat", "the cat was on the mat"], ["the dog barked loudly"], ["nothing here"]],
    )


def test_result_to_dict(small_result: RougeResult) -> None:
    flat = small_result.to_dict()
    assert set(flat) == {f"{metric}_{value}{suffix}" for metric in ("rouge_1", "rouge_2", "rouge_su4")
                         for value in SCORE_FIELDS for suffix in ("", "_ci_low", "_ci_high")}
    for metric, average in small_result.averages.items():
        for value in SCORE_FIELDS:
            assert flat[f"{metric}_{value}"] == getattr(average, value)
            assert (flat[f"{metric}_{value}_ci_low"], flat[f"{metric}_{value}_ci_high"]) == getattr(
                average, f"{value}_ci")
            assert flat[f"{metric}_{value}_ci_low"] <= flat[f"{metric}_{value}"] <= flat[f"{metric}_{value}_ci_high"]
    assert all(isinstance(value, float) and math.isfinite(value) for value in flat.values())


def test_result_report(small_result: RougeResult) -> None:
    report = small_result.report()
    for metric in small_result.metrics:
        for line in small_result.averages[metric].printed(metric):
            assert line in report.splitlines()
    r1 = small_result.averages["rouge_1"]
    assert r1.printed("rouge_1")[0] == (f"X ROUGE-1 Average_R: {r1.recall:.5f} "
                                        f"(95%-conf.int. {r1.recall_ci[0]:.5f} - {r1.recall_ci[1]:.5f})")
    assert small_result.averages["rouge_su4"].printed("rouge_su4", "SYS")[2].startswith("SYS ROUGE-SU4 Average_F: ")
    assert "ROUGE-SU4 Average_P" in small_result.report("SYS")


def test_result_report_separator(small_result: RougeResult) -> None:
    assert small_result.report().splitlines()[0] == "-" * 45


def test_single_item_average_is_the_item() -> None:
    scorer = RougeScorer(RougeConfig(resamples=20))
    result = scorer.evaluate(["the cat sat on the mat"], [["a cat sat on a mat"]])
    item = result.per_item[0]
    for metric in result.metrics:
        average = result.averages[metric]
        for value in SCORE_FIELDS:
            assert getattr(average, value) == getattr(item[metric], value)
            assert getattr(average, f"{value}_ci") == (getattr(item[metric], value),) * 2
    assert result.mean("rouge_1") == item["rouge_1"].recall
