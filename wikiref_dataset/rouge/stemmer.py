"""ROUGE-1.5.5 ``-m`` stemming: WordNet 2.0 exception lookup, then a modified Porter stemmer.

The official ``ROUGE-1.5.5.pl`` script, when run with ``-m``, stems every token longer than three characters:
it first looks the token up in the WordNet 2.0 exception map (``said -> say``, ``were -> be``,
``children -> child``, ``better -> well``) and uses the base form as is; only tokens that are not in the map
go through a Porter stemmer. Tokens of three characters or fewer are never changed, not even ``men`` or
``was``.

That Porter stemmer is Porter's own reference version of the 1980 algorithm (including the published
departures from the paper: ``bli -> ble`` instead of ``abli -> able`` and the extra ``logi -> log`` rule in
step 2) with two differences:

* step 1c turns a final ``y`` into ``i`` whenever the rest of the word contains a vowel, where ``y`` counts
  as a vowel except at the start of the word (``they -> thei``, ``today -> todai``, ``played -> plai``);
* step 4 (as modified in 2004) applies three rules one after another: the suffixes ``al ance ence er ic able
  ible ant ement ou ism ate iti ous ive ize`` are removed if m > 1; then ``ment`` is removed if m > 1; then
  ``ent`` is removed if m > 1, or else ``sion``/``tion`` become ``s``/``t`` if m > 1
  (``agreement -> agreem``, ``government -> govern``, ``different -> differ``).

Why hand-written: no maintained library implements this variant. NLTK's ``PorterStemmer`` differs in step 1c
(it keeps ``y`` after a vowel) and in step 4, and the stemmer bundled with Google's ``rouge_score`` differs
too, so scores computed with either do not reproduce ROUGE-1.5.5. This module was written from the algorithm
description (Porter, 1980, "An algorithm for suffix stripping") and checked against stems printed by the perl
script for 31,243 tokens (``docs/rouge.md``); it contains no code taken from the perl script.

Input tokens are expected to be ROUGE tokenizer output, i.e. lowercase ASCII ``[a-z0-9]+``; digits count as
consonants.
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

__all__ = ["RougeStemmer", "load_wordnet_exceptions", "porter_stem"]

_PACKAGED_EXCEPTIONS = "data/wordnet-2.0-exceptions.tsv"
_VOWELS = frozenset("aeiou")

# Longest suffix wins (rules are tried longest first); the stem in front of it must be non-empty.
_STEP2_RULES: tuple[tuple[str, str], ...] = tuple(
    sorted(
        (
            ("ational", "ate"),
            ("tional", "tion"),
            ("enci", "ence"),
            ("anci", "ance"),
            ("izer", "ize"),
            ("bli", "ble"),
            ("alli", "al"),
            ("entli", "ent"),
            ("eli", "e"),
            ("ousli", "ous"),
            ("ization", "ize"),
            ("ation", "ate"),
            ("ator", "ate"),
            ("alism", "al"),
            ("iveness", "ive"),
            ("fulness", "ful"),
            ("ousness", "ous"),
            ("aliti", "al"),
            ("iviti", "ive"),
            ("biliti", "ble"),
            ("logi", "log"),
        ),
        key=lambda rule: -len(rule[0]),
    )
)
_STEP3_RULES: tuple[tuple[str, str], ...] = tuple(
    sorted(
        (
            ("icate", "ic"),
            ("ative", ""),
            ("alize", "al"),
            ("iciti", "ic"),
            ("ical", "ic"),
            ("ful", ""),
            ("ness", ""),
        ),
        key=lambda rule: -len(rule[0]),
    )
)
_STEP4_SUFFIXES: tuple[str, ...] = tuple(
    sorted("al ance ence er ic able ible ant ement ou ism ate iti ous ive ize".split(), key=lambda sfx: -len(sfx))
)


def _suffix_table(rules: tuple[tuple[str, str], ...]) -> tuple[tuple[int, dict[str, str]], ...]:
    """The rules grouped by suffix length, longest first: the longest matching suffix is found with one slice and one
    dictionary lookup per length (two suffixes of one length cannot both match)."""
    lengths = sorted({len(suffix) for suffix, _ in rules}, reverse=True)
    return tuple((length, {s: r for s, r in rules if len(s) == length}) for length in lengths)


_STEP2_TABLE = _suffix_table(_STEP2_RULES)
_STEP3_TABLE = _suffix_table(_STEP3_RULES)
_STEP4_TABLE = _suffix_table(tuple((suffix, "") for suffix in _STEP4_SUFFIXES))


def _vowel_flags(word: str) -> list[bool]:
    """Porter's letter classes: ``True`` for a vowel.

    ``a e i o u`` are vowels; ``y`` is a vowel when it follows a consonant (so never at the start); every other
    character, digits included, is a consonant.
    """
    flags: list[bool] = []
    prev = True  # makes a leading "y" a consonant
    for ch in word:
        if ch in _VOWELS:
            prev = True
        elif ch == "y":
            prev = not prev
        else:
            prev = False
        flags.append(prev)
    return flags


def _measure(stem: str) -> int:
    """Porter's m: the number of vowel-run -> consonant-run transitions in ``[C](VC)^m[V]``."""
    m = 0
    prev = False
    first = True
    for ch in stem:
        if ch in _VOWELS:
            cur = True
        elif ch == "y":
            cur = not first and not prev
        else:
            cur = False
        if prev and not cur:
            m += 1
        prev = cur
        first = False
    return m


def _has_vowel(stem: str) -> bool:
    """Porter's *v*: the stem contains a vowel (a ``y`` after the first letter always qualifies)."""
    for ch in stem:
        if ch in _VOWELS:
            return True
    return "y" in stem[1:]


def _ends_cvc(stem: str) -> bool:
    """Porter's *o: the stem ends consonant-vowel-consonant, and the last consonant is not ``w``, ``x`` or ``y``."""
    if len(stem) < 3 or stem[-1] in "wxy":
        return False
    flags = _vowel_flags(stem)
    return not flags[-3] and flags[-2] and not flags[-1]


def _step1ab(word: str) -> str:
    # Step 1a: plurals.
    if word.endswith("s"):
        if word.endswith("sses") or word.endswith("ies"):
            word = word[:-2]
        elif not word.endswith("ss"):
            word = word[:-1]

    # Step 1b: -eed, -ed, -ing.
    if word.endswith("eed"):
        if len(word) > 3 and _measure(word[:-3]) > 0:
            word = word[:-1]
        return word
    if word.endswith("ed"):
        stem = word[:-2]
    elif word.endswith("ing"):
        stem = word[:-3]
    else:
        return word
    if not stem or not _has_vowel(stem):
        return word
    if stem.endswith("at") or stem.endswith("bl") or stem.endswith("iz"):
        return stem + "e"
    last = stem[-1]
    if len(stem) >= 2 and last == stem[-2] and last not in "aeiouylsz":
        return stem[:-1]
    if _measure(stem) == 1 and _ends_cvc(stem):
        return stem + "e"
    return stem


def _step1c(word: str) -> str:
    if word.endswith("y") and _has_vowel(word[:-1]):
        return word[:-1] + "i"
    return word


def _replace_longest(word: str, table: tuple[tuple[int, dict[str, str]], ...]) -> str:
    """Apply the rule with the longest matching suffix if the stem in front of it has m > 0."""
    for length, rules in table:
        replacement = rules.get(word[-length:])
        if replacement is not None:
            stem = word[:-length]
            if stem and _measure(stem) > 0:
                return stem + replacement
            return word
    return word


def _step4(word: str) -> str:
    # (1) the classic suffix list (without -ment, -ent, -ion), longest match, removed if m > 1.
    for length, suffixes in _STEP4_TABLE:
        if word[-length:] in suffixes:
            stem = word[:-length]
            if stem and _measure(stem) > 1:
                word = stem
            break
    # (2) then -ment.
    if word.endswith("ment"):
        stem = word[:-4]
        if stem and _measure(stem) > 1:
            word = stem
    # (3) then -ent, or else -sion / -tion.
    if word.endswith("ent"):
        stem = word[:-3]
        if stem and _measure(stem) > 1:
            word = stem
    elif word.endswith("sion") or word.endswith("tion"):
        stem = word[:-3]
        if len(stem) > 1 and _measure(stem) > 1:
            word = stem
    return word


def _step5(word: str) -> str:
    # Step 5a: final -e.
    if word.endswith("e"):
        stem = word[:-1]
        m = _measure(stem)
        if m > 1 or (m == 1 and not _ends_cvc(stem)):
            word = stem
    # Step 5b: -ll -> -l.
    if word.endswith("ll") and _measure(word) > 1:
        word = word[:-1]
    return word


def porter_stem(word: str) -> str:
    """Stem one lowercase ASCII token with ROUGE-1.5.5's Porter variant.

    This is the stemmer alone: no three-character rule and no WordNet exceptions (see :class:`RougeStemmer`).
    Words shorter than three characters are returned unchanged, as in Porter's reference implementation.
    """
    if len(word) < 3:
        return word
    word = _step1ab(word)
    word = _step1c(word)
    word = _replace_longest(word, _STEP2_TABLE)
    word = _replace_longest(word, _STEP3_TABLE)
    word = _step4(word)
    return _step5(word)


def load_wordnet_exceptions(path: str | os.PathLike[str] | None = None) -> dict[str, str]:
    """Read a WordNet exception map, one ``inflected<TAB>base`` row per line.

    With ``path=None`` the packaged ``wikiref_dataset/data/wordnet-2.0-exceptions.tsv`` (the map shipped with
    ROUGE-1.5.5) is read (in a standalone copy of this module, its ``_rouge_wordnet_exceptions.py``). Empty lines are ignored. A row without exactly one tab, or with an empty field,
    raises :class:`ValueError` naming the file and the line number.
    """
    if path is None:
        try:
            resource = resources.files("wikiref_dataset").joinpath(_PACKAGED_EXCEPTIONS)
            name = str(resource)
            text = resource.read_text(encoding="utf-8")
        except (ImportError, OSError):
            # Python 3.11's importlib.resources cannot read from a namespace package whose __path__ holds a
            # non-directory entry (as a stale setuptools editable install produces); read it from the package folder,
            # above this module's.
            fallback = Path(__file__).resolve().parent.parent / _PACKAGED_EXCEPTIONS
            name = str(fallback)
            if fallback.is_file():
                text = fallback.read_text(encoding="utf-8")
            else:
                # A copy published as code files (a metric Space, a model's remote code) carries the map as a
                # module (wikiref_dataset/metrics/standalone.py writes it); a package install never gets here.
                from ._rouge_wordnet_exceptions import WORDNET_EXCEPTIONS as text

                name = "_rouge_wordnet_exceptions.py"
    else:
        name = os.fspath(path)
        text = Path(path).read_text(encoding="utf-8")

    exceptions: dict[str, str] = {}
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != 2 or not fields[0] or not fields[1]:
            raise ValueError(
                f"{name}, line {lineno}: malformed WordNet exception row {line!r} (expected 'inflected<TAB>base')"
            )
        exceptions[fields[0]] = fields[1]
    return exceptions


class RougeStemmer:
    """Callable: token -> stem with ROUGE-1.5.5 -m semantics; memoises results in a dict (tokens repeat a lot).

    Tokens of three characters or fewer are returned unchanged; longer tokens found in the WordNet exception
    map give its base form as is; every other token goes through :func:`porter_stem`.
    """

    __slots__ = ("_cache", "_exceptions")

    def __init__(self, exceptions: dict[str, str] | None = None) -> None:
        self._exceptions: dict[str, str] = load_wordnet_exceptions() if exceptions is None else dict(exceptions)
        self._cache: dict[str, str] = {}

    def _compute(self, token: str) -> str:
        if len(token) <= 3:
            stem = token
        else:
            stem = self._exceptions.get(token)
            if stem is None:
                stem = porter_stem(token)
        self._cache[token] = stem
        return stem

    def __call__(self, token: str) -> str:
        stem = self._cache.get(token)
        if stem is None:
            stem = self._compute(token)
        return stem

    def stem_many(self, tokens: list[str]) -> list[str]:
        """Stem a list of tokens (a cache lookup per token; misses are computed once and remembered)."""
        cache = self._cache
        compute = self._compute
        return [cache[t] if t in cache else compute(t) for t in tokens]
