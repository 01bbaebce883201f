"""One spaCy language pipeline for the whole project: sentences, tokens, lemmas and stop words.

Every place that splits a document into sentences, counts tokens or compares lemmas (WikiRef curation, the
oracle, PSG2SUM, AQuaMuSe, the DUC reader, the dataset builders) goes through :class:`TextPipeline`, so that
"a sentence", "a token" and "a content lemma" mean the same thing everywhere.

Which spaCy pipeline is used (:func:`get_pipeline`, cached per configuration):

* a *trained* pipeline when one is named in :attr:`TextConfig.model` (package name or path), or, for English
  with ``model=None``, when ``en_core_web_sm`` is installed. Named-entity recognition is excluded; when the
  pipeline ships a ``senter`` it replaces the (slower) dependency parser for sentence boundaries.
* otherwise a *blank* pipeline: ``spacy.blank(lang)`` + the rule-based ``sentencizer`` + the ``lemmatizer`` in
  ``lookup`` mode, whose tables come from ``spacy-lookups-data`` (no model download, no network). Languages
  without a lookup table fall back to lemma = lowercased form, with a logged warning. Pass ``model="blank"`` to
  force this pipeline even where ``en_core_web_sm`` is installed (results then do not depend on the machine).

Every pipeline gets the project's two spaCy components (:mod:`wikiref_dataset.spacy_components`): the repairs of
the sentence boundaries the sentencizer or senter draws (abbreviations, lowercase starts, quotes, blank lines), and
the lemma fallback.

Texts longer than :attr:`TextConfig.max_length` characters are cut into pieces at paragraph boundaries (then
line breaks, then spaces) that are analysed separately and joined back; a piece boundary is a sentence
boundary. spaCy's own ``max_length`` is set to the same value.

spaCy's vocabulary keeps every string it meets (~0.5 KiB each), so :class:`TextPipeline` rebuilds the cached
pipeline between documents once it has gained :data:`MAX_NEW_STRINGS` (200,000; ``WIKIREF_SPACY_MAX_STRINGS``)
strings, and hands the freed memory back (``gc`` + glibc ``malloc_trim``). Results are identical with any bound
(tested). Measured 2026-11-24 on the 2-core machine, blank pipeline, golden texts with every word made distinct:
300k distinct words (356k strings) grow RSS by 179 MiB, under the default bound; 900k distinct words through the
tokenizer grow it by 422 MiB unbounded, and fall back to +27 MiB at each rebuild with the bound (peak +218 MiB).
A rebuild (build + gc + trim) takes 0.14 s, ~1% of the ~25 s between two rebuilds at a 500,000 bound; the default
of 200,000 keeps the vocabulary's growth to ≈ 100 MiB for ≈ 1.5% of the time on such text (from the same
measurements; ordinary text, whose words repeat, rebuilds far less often). The module's token-text cache
(``_WORD_CACHE``: does a token hold a letter or digit) is cleared at the same size.
"""

from __future__ import annotations

import ctypes
import functools
import gc
import importlib.metadata
import importlib.util
import logging
import os
import re
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

import numpy

# isort: split
# Imported before spaCy: keeps thinc from importing torch. A named import, not `from . import _spacy_import`:
# transformers copies a published model folder's relative imports by matching `from .<module> import` lines.
from ._spacy_import import TRANSFORMER_PACKAGES  # noqa: F401

# isort: split
# spaCy inside `try`: transformers' check of a published model folder's code (`check_imports`) then does not demand
# it of a user who gives pre-split documents; this module is imported only to split raw text (`remote_code.py`).
try:
    import spacy
    from spacy.attrs import SENT_START
    from spacy.language import Language
    from spacy.lookups import Lookups, load_lookups
    from spacy.tokens import Doc
except ModuleNotFoundError as _error:
    raise ModuleNotFoundError(f"the project's text pipeline needs spaCy ({_error}): pip install spacy",
                              name=_error.name) from None

# isort: split
# The project's spaCy components, registered as factories on import (a named import, as above).
from .spacy_components import LEMMA_FALLBACK, SENTENCE_BOUNDARIES

logger = logging.getLogger(__name__)

DEFAULT_TRAINED_PIPELINES: dict[str, str] = {"en": "en_core_web_sm"}
"""Trained pipeline used for a language when ``model=None`` and the package is installed."""

BLANK_MODEL = "blank"
"""Value of :attr:`TextConfig.model` that forces the blank + lookup-tables pipeline."""

SENTENCES_MODEL = "sentences"
"""Value of :attr:`TextConfig.model` for the blank pipeline's sentences and tokens alone: the same tokenizer, sentencizer
and boundary repairs, no lemma tables (loading them takes up to seconds per process: 3.7 s for Portuguese). For
:meth:`TextPipeline.sentence_spans`, :meth:`TextPipeline.split_sentences` and :meth:`TextPipeline.tokenize`; asking it
for lemmas raises."""

NewlineBreaks = Literal["paragraph", "line", "none"]

_LEMMA_COMPONENTS = ("tagger", "attribute_ruler", "morphologizer", "lemmatizer", LEMMA_FALLBACK)
"""Components only needed for lemmas; skipped when only sentences are asked for."""

_PARAGRAPH_BREAK = re.compile(r"\n[^\S\n]*\n\s*")
_LINE_BREAK = re.compile(r"\n\s*")
_SPACE = re.compile(r"\s+")
_WORD_CACHE: dict[str, bool] = {}
"""Token text -> holds a letter or digit (a token vocabulary is small; the check runs on every token)."""

MAX_NEW_STRINGS = 200_000
"""Strings a pipeline's vocabulary may gain after it is built before it is rebuilt (between two documents)."""

MAX_NEW_STRINGS_ENV = "WIKIREF_SPACY_MAX_STRINGS"
"""Environment variable that overrides :data:`MAX_NEW_STRINGS` (`0`: never rebuild), read when a
:class:`TextPipeline` is made or unpickled."""

_Item = TypeVar("_Item")
_Result = TypeVar("_Result")
_PipelineKey = tuple[str, str, str, int, bool]
_END = object()


@dataclass(frozen=True)
class TextConfig:
    """How texts are analysed. Hashable: pipelines are cached per configuration.

    Args:
        lang (`str`, *optional*, defaults to `"en"`):
            ISO code of a language spaCy supports (`spacy.blank(lang)` must work).
        model (`str`, *optional*):
            A trained spaCy pipeline (installed package name or path). `None` uses the language's default
            trained pipeline (`en_core_web_sm` for English) when installed, else the blank pipeline;
            `"blank"` always uses the blank pipeline (sentencizer + lookup lemmas); `"sentences"` the same without
            the lemmas (:data:`SENTENCES_MODEL`).
        newline_breaks (`str`, *optional*, defaults to `"paragraph"`):
            Which line breaks end a sentence whatever the punctuation: `"paragraph"` (a blank line), `"line"`
            (every line break) or `"none"`. The default suits both web text (paragraphs) and DUC SGML (hard
            wrapped lines inside sentences).
        batch_size (`int`, *optional*, defaults to 256):
            Texts per batch in `nlp.pipe`.
        n_process (`int`, *optional*, defaults to 1):
            Worker processes for `nlp.pipe` in the `*_many` methods.
        max_length (`int`, *optional*, defaults to 1,000,000):
            Longest text (characters) handed to spaCy at once; longer texts are cut at paragraph boundaries.
        lowercased (`bool`, *optional*, defaults to `False`):
            The texts were lowercased (Debatepedia's release): a sentence may then start with a lowercase letter,
            so the repair that joins a "sentence" starting lowercase to the one before (``approx. three``) is off.
            Only the blank pipelines and the sentencizer's repairs look at it.
    """

    lang: str = field(default="en", metadata={"help": "ISO language code (spacy.blank(lang) must work)."})
    model: str | None = field(
        default=None,
        metadata={"help": "Trained pipeline name/path; None = default trained pipeline if installed; 'blank'; "
                          "'sentences' (blank, sentences and tokens only)."},
    )
    newline_breaks: NewlineBreaks = field(
        default="paragraph", metadata={"help": "Line breaks that end a sentence: paragraph, line or none."}
    )
    batch_size: int = field(default=256, metadata={"help": "Texts per nlp.pipe batch."})
    n_process: int = field(default=1, metadata={"help": "Worker processes for nlp.pipe."})
    max_length: int = field(default=1_000_000, metadata={"help": "Longest text piece handed to spaCy."})
    lowercased: bool = field(default=False, metadata={"help": "The texts were lowercased (sentences may start "
                                                              "lowercase)."})

    def __post_init__(self) -> None:
        if not isinstance(self.lang, str) or not self.lang:
            raise ValueError(f"lang must be a non-empty language code, got {self.lang!r}")
        if self.model is not None and (not isinstance(self.model, str) or not self.model):
            raise ValueError(f"model must be None, 'blank', 'sentences' or a spaCy pipeline name/path, got "
                             f"{self.model!r}")
        if self.newline_breaks not in ("paragraph", "line", "none"):
            raise ValueError(f"newline_breaks must be 'paragraph', 'line' or 'none', got {self.newline_breaks!r}")
        for name in ("batch_size", "n_process", "max_length"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")


@dataclass
class AnalyzedText:
    """One text, analysed: its sentences and its tokens (whitespace tokens dropped).

    Args:
        sentences (`list[str]`):
            Sentence texts, stripped, with every run of whitespace (line wraps included) made one space.
        sentence_char_spans (`list[tuple[int, int]]`):
            `(start, end)` character offsets of each sentence in the original text (exact, unnormalised).
        sentence_token_spans (`list[tuple[int, int]]`):
            `(start, end)` indices of each sentence's tokens in `tokens`.
        tokens (`list[str]`):
            Token texts (punctuation included, whitespace excluded).
        lemmas (`list[str]`):
            One lemma per token, as the lemmatizer gives it (case kept for proper nouns).
        is_stop (`list[bool]`):
            Whether the token or its lemma is in the language's stop-word list (case-insensitive).
        is_word (`list[bool]`):
            Whether the token holds a letter or a digit (`False` for punctuation and symbols).
    """

    sentences: list[str] = field(default_factory=list)
    sentence_char_spans: list[tuple[int, int]] = field(default_factory=list)
    sentence_token_spans: list[tuple[int, int]] = field(default_factory=list)
    tokens: list[str] = field(default_factory=list)
    lemmas: list[str] = field(default_factory=list)
    is_stop: list[bool] = field(default_factory=list)
    is_word: list[bool] = field(default_factory=list)

    @property
    def n_sentences(self) -> int:
        return len(self.sentences)

    @property
    def n_tokens(self) -> int:
        """Number of tokens, punctuation included (the length measure of WikiRef curation)."""
        return len(self.tokens)

    @property
    def words(self) -> list[str]:
        """Tokens that hold a letter or a digit."""
        return [token for token, is_word in zip(self.tokens, self.is_word, strict=True) if is_word]

    @property
    def content_words(self) -> list[str]:
        """Lowercased tokens that are words and not stop words."""
        return [t.lower() for t, w, s in zip(self.tokens, self.is_word, self.is_stop, strict=True) if w and not s]

    @property
    def content_lemmas(self) -> list[str]:
        """Lowercased lemmas of the tokens that are words and not stop words (WikiRef's unigram recall)."""
        return [lem.lower() for lem, w, s in zip(self.lemmas, self.is_word, self.is_stop, strict=True) if w and not s]

    def sentence_tokens(self) -> list[list[str]]:
        """Tokens of each sentence."""
        return [self.tokens[start:end] for start, end in self.sentence_token_spans]

    def _shifted(self, char_offset: int, token_offset: int) -> AnalyzedText:
        return AnalyzedText(
            sentences=self.sentences,
            sentence_char_spans=[(s + char_offset, e + char_offset) for s, e in self.sentence_char_spans],
            sentence_token_spans=[(s + token_offset, e + token_offset) for s, e in self.sentence_token_spans],
            tokens=self.tokens,
            lemmas=self.lemmas,
            is_stop=self.is_stop,
            is_word=self.is_word,
        )

    @classmethod
    def concatenate(cls, parts: list[tuple[int, AnalyzedText]]) -> AnalyzedText:
        """Join the analyses of consecutive pieces of one text; each part comes with its character offset."""
        if len(parts) == 1 and parts[0][0] == 0:
            return parts[0][1]
        joined = cls()
        for char_offset, part in parts:
            shifted = part._shifted(char_offset, len(joined.tokens))
            joined.sentences += shifted.sentences
            joined.sentence_char_spans += shifted.sentence_char_spans
            joined.sentence_token_spans += shifted.sentence_token_spans
            joined.tokens += shifted.tokens
            joined.lemmas += shifted.lemmas
            joined.is_stop += shifted.is_stop
            joined.is_word += shifted.is_word
        return joined


# --------------------------------------------------------------------------------------------------------------
# Pipeline construction (cached)
# --------------------------------------------------------------------------------------------------------------


def resolve_model(config: TextConfig) -> str:
    """The spaCy pipeline a configuration uses: `"blank"` or a trained pipeline's name/path."""
    if config.model is not None:
        return config.model
    default = DEFAULT_TRAINED_PIPELINES.get(config.lang)
    if default is not None and spacy.util.is_package(default):
        return default
    return BLANK_MODEL


_PIPELINES: dict[_PipelineKey, tuple[Language, int]] = {}
"""(lang, model, newline_breaks, max_length, lowercased) -> the cached pipeline and its vocabulary size when it was
built."""


def get_pipeline(config: TextConfig | None = None) -> Language:
    """The spaCy pipeline for `config`, built once per (lang, model, newline_breaks, max_length, lowercased) and
    cached.

    The cached pipeline is replaced by a fresh one when its vocabulary outgrows the bound (see
    :class:`TextPipeline`); call this again rather than keeping the result for long.

    Raises:
        ValueError: unknown language code, or a trained pipeline for another language than `config.lang`.
        OSError: `config.model` names a pipeline that is not installed.
        ImportError: the language needs a tokenizer package that is not installed (e.g. Japanese).
    """
    config = config or TextConfig()
    return _cached_pipeline(_pipeline_key(config))[0]


def _pipeline_key(config: TextConfig) -> _PipelineKey:
    return (config.lang, resolve_model(config), config.newline_breaks, config.max_length, config.lowercased)


def _cached_pipeline(key: _PipelineKey) -> tuple[Language, int]:
    entry = _PIPELINES.get(key)
    if entry is None:
        nlp = _build_pipeline(*key)
        entry = _PIPELINES[key] = (nlp, len(nlp.vocab.strings))
    return entry


def warm_pipelines(objects: Iterable[Any], depth: int = 3) -> int:
    """Build now, in this process, the cached pipeline of every :class:`TextPipeline` among `objects` and their
    attributes (`depth` levels down, through lists, tuples and dict values); returns how many distinct pipelines
    that made ready.

    For the local executor's forked workers (:func:`wikiref_dataset.process.executors.local_executor`): a pipeline built
    before the fork is inherited by every worker of every stage, where each worker would otherwise build it again
    (spaCy's language defaults, tokenizer exceptions and the lemma tables: about 0.3 s per worker per stage, a fifth
    of a sample build's CPU time with 4 workers)."""
    found: list[TextPipeline] = []
    seen: set[int] = set()

    def visit(value: Any, level: int) -> None:
        if id(value) in seen or level < 0:
            return
        seen.add(id(value))
        if isinstance(value, TextPipeline):
            found.append(value)
        elif isinstance(value, (list, tuple, dict)):
            for item in value.values() if isinstance(value, dict) else value:
                visit(item, level - 1)
        elif hasattr(value, "__dict__") and not isinstance(value, type) and type(value).__module__ != "builtins":
            for item in vars(value).values():
                visit(item, level - 1)

    for value in objects:
        visit(value, depth)
    return len({id(pipeline.nlp) for pipeline in found})  # built (or taken from the cache) as each pipeline would


def _rebuild_pipeline(key: _PipelineKey, stale: Language) -> tuple[Language, int]:
    """Replaces the cached pipeline `stale` with a freshly built one, unless another caller already did."""
    entry = _PIPELINES.get(key)
    if entry is not None and entry[0] is stale:
        del _PIPELINES[key]
    return _cached_pipeline(key)


_COLLECT_INTERVAL_S = 2.0
"""Least seconds between two full collections after rebuilds (see :func:`_release_freed_memory`)."""
_last_collect = 0.0


def _release_freed_memory() -> None:
    # The old pipeline is a reference cycle (components hold `nlp`), and glibc keeps freed heap pages: without both
    # steps the process's RSS would not fall after a rebuild. A full collection walks every object of the process
    # (0.2 s in one holding a model and a test session); rebuilds closer together than _COLLECT_INTERVAL_S (only
    # with a tiny bound) leave their old pipelines to the next one, which frees them all.
    global _last_collect
    now = time.monotonic()
    if now - _last_collect < _COLLECT_INTERVAL_S:
        return
    gc.collect()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
    _last_collect = time.monotonic()


@functools.cache
def _malloc_trim() -> Any:
    try:
        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None


def _max_new_strings() -> int:
    value = os.environ.get(MAX_NEW_STRINGS_ENV, "").strip()
    if not value:
        return MAX_NEW_STRINGS
    try:
        limit = int(value)
    except ValueError:
        limit = -1
    if limit < 0:
        raise ValueError(f"{MAX_NEW_STRINGS_ENV} must be a non-negative integer, got {value!r}")
    return limit


def _build_pipeline(lang: str, model: str, newline_breaks: str, max_length: int, lowercased: bool = False
                    ) -> Language:
    if model not in (BLANK_MODEL, SENTENCES_MODEL):
        nlp = _trained_pipeline(lang, model, newline_breaks, lowercased)
    else:
        nlp = _blank_pipeline(lang, lemmas=model == BLANK_MODEL)
        nlp.add_pipe(SENTENCE_BOUNDARIES, after="sentencizer",
                     config={"newline_breaks": newline_breaks, "lowercased": lowercased})
    nlp.max_length = max_length
    return nlp


# Blank pipelines that need a setting: Chinese is segmented into words with jieba (spaCy's default segments
# characters); Japanese uses SudachiPy, spaCy's default (packages sudachipy and sudachidict-core).
_BLANK_CONFIGS: dict[str, dict[str, Any]] = {"zh": {"nlp": {"tokenizer": {"segmenter": "jieba"}}}}
# Languages that need no lemma table: Japanese (SudachiPy gives the dictionary forms) and Chinese (no inflection: a
# word is its own lemma). Others without one get a warning.
_TOKENIZER_LEMMAS = frozenset({"ja", "zh"})


def _blank_pipeline(lang: str, lemmas: bool = True) -> Language:
    try:
        nlp = spacy.blank(lang, config=_BLANK_CONFIGS.get(lang, {}))
    except ImportError as error:
        if "E048" in str(error):
            raise ValueError(f"Unknown language code {lang!r}: spaCy has no `spacy.lang.{lang}`.") from error
        raise ImportError(f"spaCy's {lang!r} tokenizer needs an extra package: {error}") from error
    nlp.add_pipe("sentencizer")
    if not lemmas:
        return nlp
    lookups = _lemma_lookups(lang)
    if lookups.has_table("lemma_lookup"):
        lemmatizer = nlp.add_pipe("lemmatizer", config={"mode": "lookup"})
        lemmatizer.initialize(lookups=lookups)
    elif lang not in _TOKENIZER_LEMMAS:
        # Without spacy-lookups-data (a model folder that only splits sentences, with spaCy alone) this is no news.
        log = logger.warning if importlib.util.find_spec("spacy_lookups_data") is not None else logger.info
        log(
            "spacy-lookups-data has no lemma table for %r: lemmas will be lowercased forms. "
            "Pass TextConfig(model=...) with a trained pipeline for real lemmas.",
            lang,
        )
    nlp.add_pipe(LEMMA_FALLBACK)
    return nlp


@functools.cache
def _lemma_lookups(lang: str) -> Any:
    # Read-only tables (the lemmatizer and LemmaFallback only read them): shared by the rebuilt pipelines.
    if importlib.util.find_spec("spacy_lookups_data") is None:  # spaCy alone (a model folder splitting sentences)
        return Lookups()
    return load_lookups(lang, ["lemma_lookup"], strict=False)


def _trained_pipeline(lang: str, model: str, newline_breaks: str, lowercased: bool = False) -> Language:
    try:
        nlp = spacy.load(model, exclude=["ner", "entity_ruler", "entity_linker"])
    except OSError as error:
        raise OSError(
            f"spaCy pipeline {model!r} is not installed (neither a package nor a pipeline folder). Install it, "
            f"or use TextConfig(model='blank') for the rule-based pipeline with lookup lemmas. ({error})"
        ) from error
    if nlp.lang != lang:
        raise ValueError(f"spaCy pipeline {model!r} is for language {nlp.lang!r}, but TextConfig.lang is {lang!r}.")
    use_senter = "senter" in nlp.component_names
    if use_senter:
        if "parser" in nlp.component_names:
            nlp.remove_pipe("parser")  # the senter alone is several times faster than the parser
        nlp.enable_pipe("senter")
    names = nlp.pipe_names
    if "parser" in names and not use_senter:
        nlp.add_pipe(
            SENTENCE_BOUNDARIES,
            before="parser",
            config={"newline_breaks": newline_breaks, "only_set_starts": True},
        )
    else:
        if "senter" not in names and "sentencizer" not in names:
            nlp.add_pipe("sentencizer")
        source = "senter" if "senter" in nlp.pipe_names else "sentencizer"
        nlp.add_pipe(
            SENTENCE_BOUNDARIES,
            after=source,
            config={"newline_breaks": newline_breaks, "merge": source == "sentencizer", "lowercased": lowercased},
        )
    if "lemmatizer" not in nlp.pipe_names:
        logger.warning("spaCy pipeline %r has no lemmatizer: lemmas will be lowercased forms.", model)
    nlp.add_pipe(LEMMA_FALLBACK)
    return nlp


# --------------------------------------------------------------------------------------------------------------
# The pipeline the project uses
# --------------------------------------------------------------------------------------------------------------


def _check_text(text: Any, index: int | None = None) -> str:
    if not isinstance(text, str):
        where = "text" if index is None else f"texts[{index}]"
        raise TypeError(f"{where} must be a str, got {type(text).__name__}")
    return text


def split_long_text(text: str, max_length: int) -> list[tuple[int, str]]:
    """Cut `text` into `(offset, piece)` pieces of at most `max_length` characters.

    Cuts go after the last paragraph break (blank line) that fits, else the last line break, else the last
    whitespace, else at `max_length` exactly. The pieces, concatenated, give `text` back.
    """
    pieces = []
    start = 0
    while len(text) - start > max_length:
        window = text[start : start + max_length]
        cut = 0
        for pattern in (_PARAGRAPH_BREAK, _LINE_BREAK, _SPACE):
            ends = [m.end() for m in pattern.finditer(window) if m.end() < len(window)]
            if ends:
                cut = ends[-1]
                break
        if cut == 0:
            cut = max_length
        pieces.append((start, text[start : start + cut]))
        start += cut
    pieces.append((start, text[start:]))
    return pieces


class _DocumentFeed:
    """The items for one pipeline: all of them, or up to the first document boundary where the pipeline's
    vocabulary (`strings`) holds more than `limit` strings (then `stopped` is set and the rest stay in `items`)."""

    def __init__(self, items: Iterator[Any], ends_document: Callable[[Any], bool], strings: Any, limit: int | None):
        self.items = items
        self.ends_document = ends_document
        self.strings = strings
        self.limit = limit
        self.stopped = False

    def __iter__(self) -> Iterator[Any]:
        at_boundary = False  # at least one item per pipeline: the stream always advances
        while True:
            if at_boundary and self.limit is not None and len(self.strings) > self.limit:
                self.stopped = True
                return
            item = next(self.items, _END)
            if item is _END:
                return
            at_boundary = self.ends_document(item)
            yield item


class TextPipeline:
    """Sentences, tokens, lemmas and stop words for one language, single texts or batches.

    The `*_many` methods stream through `nlp.pipe` (batched, optionally multi-process) and yield results in
    input order; use them for corpora. The object pickles as its configuration (the spaCy pipeline is rebuilt
    or taken from the cache in the receiving process), so it can travel to datatrove workers.

    spaCy's vocabulary keeps every string it meets, so a long stream of texts would grow without bound: between two
    documents, once the cached pipeline's vocabulary has gained more than `max_new_strings` strings since it was
    built (:data:`MAX_NEW_STRINGS`, or the environment variable ``WIKIREF_SPACY_MAX_STRINGS``; `0` never), it is
    replaced by a freshly built one. Results do not depend on it (every token attribute, lemma and stop-word flag
    comes from the tables the pipeline is built with); `pipeline_reloads` counts the replacements.
    """

    def __init__(self, config: TextConfig | None = None) -> None:
        self.config = config or TextConfig()
        self._key: _PipelineKey | None = None
        self.max_new_strings = _max_new_strings()
        self.pipeline_reloads = 0

    def __getstate__(self) -> dict[str, Any]:
        return {"config": self.config}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["config"])

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.config!r})"

    @property
    def nlp(self) -> Language:
        """The cached spaCy pipeline (built on first use; replaced when its vocabulary outgrows the bound)."""
        return self._pipeline()[0]

    def _pipeline(self) -> tuple[Language, int]:
        if self._key is None:
            self._key = _pipeline_key(self.config)
        return _cached_pipeline(self._key)

    @property
    def description(self) -> str:
        """Which pipeline produced the analyses, for dataset cards and statistics files."""
        nlp = self.nlp
        model = resolve_model(self.config)
        versions = f"spaCy {spacy.__version__}"
        if model in (BLANK_MODEL, SENTENCES_MODEL):
            name = f"spacy.blank({nlp.lang!r})"
            if "lemmatizer" in nlp.pipe_names:  # the lemma tables are versioned separately from spaCy
                versions += f", spacy-lookups-data {importlib.metadata.version('spacy-lookups-data')}"
        else:
            name = f"{nlp.meta.get('lang', nlp.lang)}_{nlp.meta.get('name', model)} {nlp.meta.get('version', '')}"
        lowercased = ", for lowercased text" if self.config.lowercased else ""
        return f"{name.strip()} [{', '.join(nlp.pipe_names)}] ({versions}){lowercased}"

    @functools.cached_property
    def stop_words(self) -> frozenset[str]:
        """The language's stop words (lowercase)."""
        return frozenset(word.lower() for word in self.nlp.Defaults.stop_words)

    def is_stop_word(self, word: str) -> bool:
        """Whether `word` is a stop word (case-insensitive)."""
        return _check_text(word).lower() in self.stop_words

    # ---- single texts ------------------------------------------------------------------------------------------

    def analyze(self, text: str) -> AnalyzedText:
        """Sentences, tokens, lemmas and stop-word flags of one text."""
        return next(self._analyze(iter([_check_text(text)]), n_process=1))

    def split_sentences(self, text: str) -> list[str]:
        """Sentences of one text (stripped, whitespace runs made single spaces, none empty)."""
        return next(self.split_sentences_many([_check_text(text)]))

    def sentence_spans(self, text: str) -> list[tuple[int, int]]:
        """`(start, end)` character offsets of the sentences of one text (lemma components are skipped)."""
        disable = [name for name in _LEMMA_COMPONENTS if name in self.nlp.pipe_names]
        return next(self._analyze(iter([_check_text(text)]), n_process=1, disable=disable,
                                  lemmas=False)).sentence_char_spans

    def tokenize(self, text: str) -> list[str]:
        """Tokens of one text (whitespace excluded)."""
        return next(self.tokenize_many([_check_text(text)]))

    def content_lemmas(self, text: str) -> list[str]:
        """Lowercased lemmas of the non-stop-word words of one text."""
        return self.analyze(text).content_lemmas

    # ---- batches -----------------------------------------------------------------------------------------------

    def analyze_many(self, texts: Iterable[str]) -> Iterator[AnalyzedText]:
        """Analyses of many texts, in order, through `nlp.pipe`."""
        return self._analyze(iter(texts), n_process=self.config.n_process)

    def split_sentences_many(self, texts: Iterable[str]) -> Iterator[list[str]]:
        """Sentences of many texts, in order (lemma components are skipped)."""
        disable = [name for name in _LEMMA_COMPONENTS if name in self.nlp.pipe_names]
        for analysis in self._analyze(iter(texts), n_process=self.config.n_process, disable=disable, lemmas=False):
            yield analysis.sentences

    def tokenize_many(self, texts: Iterable[str]) -> Iterator[list[str]]:
        """Tokens of many texts, in order (tokenizer only: the other components never change tokens)."""
        checked = (_check_text(text, i) for i, text in enumerate(texts))
        batch_size = self.config.batch_size
        docs = self._bounded(checked, lambda nlp, items: nlp.tokenizer.pipe(items, batch_size), lambda text: True)
        for doc in docs:
            yield [token.text for token in doc if not token.is_space]

    def rouge_tokens_many(self, texts: Iterable[str], lemmas: bool = False) -> Iterator[list[str]]:
        """The tokens ROUGE counts outside English (the Unicode ROUGE of :mod:`wikiref_dataset.oracle`): the words of
        each text (tokens holding a letter or digit, punctuation left out) from this language's tokenizer,
        lowercased; with ``lemmas``, their lowercased lemmas (what ROUGE's ``-m`` stemming is for English)."""
        for analysis in self.analyze_many(texts):
            source = analysis.lemmas if lemmas else analysis.tokens
            yield [token.lower() for token, is_word in zip(source, analysis.is_word, strict=True) if is_word]

    def unicode_rouge_texts(self, texts: Sequence[str], lemmas: bool = True) -> list[str]:
        """Texts for the ROUGE-1.5.5 engine (:mod:`wikiref_dataset.rouge`) that score the Unicode ROUGE of this
        language: each word of :meth:`rouge_tokens_many` becomes an ASCII alias (``w0``, ``w1`` ...: the same word,
        the same alias, across all ``texts`` of one call), lines kept. Score them with stemming off (``-m`` would
        stem the aliases; ``lemmas`` is the stemming here); ROUGE's ``-l`` then counts this language's words."""
        aliases: dict[str, str] = {}
        lines = [text.split("\n") for text in texts]
        flat = [line for text_lines in lines for line in text_lines]
        tokens = iter(self.rouge_tokens_many(flat, lemmas=lemmas))
        out = []
        for text_lines in lines:
            out.append("\n".join(" ".join(aliases.setdefault(token, f"w{len(aliases):x}") for token in next(tokens))
                                 for _ in text_lines))
        return out

    def content_lemmas_many(self, texts: Iterable[str]) -> Iterator[list[str]]:
        """Lowercased lemmas of the non-stop-word words of many texts, in order."""
        for analysis in self.analyze_many(texts):
            yield analysis.content_lemmas

    # ---- internals ---------------------------------------------------------------------------------------------

    def _bounded(
        self,
        items: Iterator[_Item],
        run: Callable[[Language, Iterator[_Item]], Iterator[_Result]],
        ends_document: Callable[[_Item], bool],
    ) -> Iterator[_Result]:
        """`run(nlp, items)`, with a fresh pipeline swapped in between documents when the vocabulary outgrew the bound.

        The vocabulary is checked before the stream starts (single-text calls never come back to the stream) and
        before the item after each document is pulled from `items`: spaCy tokenizes items as it pulls them, so it
        then holds at most the bound plus one document's strings (plus, until the batch is processed, the lemmas
        the lemmatizer adds). At least one item goes through each fresh pipeline, so the stream always advances.
        """
        check_first = True
        while True:
            nlp, built_size = self._pipeline()
            strings = nlp.vocab.strings
            limit = built_size + self.max_new_strings if self.max_new_strings else None
            feed = None
            if not (check_first and limit is not None and len(strings) > limit):
                feed = _DocumentFeed(items, ends_document, strings, limit)
                yield from run(nlp, iter(feed))
                if not feed.stopped:
                    return
            check_first = False
            self.pipeline_reloads += 1
            logger.info(
                "spaCy vocabulary grew by %d strings (bound %d): pipeline %r rebuilt (%d rebuilds)",
                len(strings) - built_size, self.max_new_strings, self._key, self.pipeline_reloads,
            )  # fmt: skip
            _rebuild_pipeline(self._key, nlp)
            del nlp, strings, feed  # the last references to the old pipeline's vocabulary
            _release_freed_memory()

    def _pieces(self, texts: Iterator[Any]) -> Iterator[tuple[str, tuple[int, int, int]]]:
        max_length = self.config.max_length
        for index, text in enumerate(texts):
            text = _check_text(text, index)
            if len(text) <= max_length:
                yield text, (0, 0, 1)
            else:
                pieces = split_long_text(text, max_length)
                for number, (offset, piece) in enumerate(pieces):
                    yield piece, (offset, number, len(pieces))

    def _analyze(
        self, texts: Iterator[Any], n_process: int, disable: list[str] | None = None, lemmas: bool = True
    ) -> Iterator[AnalyzedText]:
        def run(nlp: Language, pieces: Iterator[tuple[str, tuple[int, int, int]]]) -> Iterator[Any]:
            return nlp.pipe(
                pieces, as_tuples=True, batch_size=self.config.batch_size, n_process=n_process, disable=disable or []
            )

        if lemmas and resolve_model(self.config) == SENTENCES_MODEL:
            raise ValueError("TextConfig(model='sentences') gives sentences and tokens only; use model='blank' (or "
                             "a trained pipeline) for lemmas and stop words")
        docs = self._bounded(self._pieces(texts), run, lambda piece: piece[1][1] == piece[1][2] - 1)
        parts: list[tuple[int, AnalyzedText]] = []
        for doc, (offset, number, count) in docs:
            parts.append((offset, self._extract(doc, lemmas)))
            if number == count - 1:
                yield AnalyzedText.concatenate(parts)
                parts = []

    def _extract(self, doc: Doc, with_lemmas: bool) -> AnalyzedText:
        result = AnalyzedText()
        if len(doc) == 0:
            return result
        text = doc.text
        stop_words = self.stop_words
        tokens, lemmas, is_stop, is_word = result.tokens, result.lemmas, result.is_stop, result.is_word
        # Sentence starts from the array: iterating `doc.sents` costs more than the rest of this loop.
        starts = (doc.to_array(SENT_START).view(numpy.int64) == 1).tolist()
        starts[0] = True
        first = 0
        start_char = end_char = -1
        for token, is_start in zip(doc, starts, strict=True):
            if is_start and start_char >= 0:
                self._close_sentence(result, text, first, start_char, end_char)
                start_char = -1
            if token.is_space:
                continue
            token_text = token.text
            idx = token.idx
            if start_char < 0:
                first, start_char = len(tokens), idx
            end_char = idx + len(token_text)
            tokens.append(token_text)
            if with_lemmas:
                lemma = token.lemma_ or token.lower_
                lemmas.append(lemma)
                is_stop.append(token.is_stop or lemma.lower() in stop_words)
                word = _WORD_CACHE.get(token_text)
                if word is None:
                    if len(_WORD_CACHE) > MAX_NEW_STRINGS:
                        _WORD_CACHE.clear()
                    word = _WORD_CACHE[token_text] = any(char.isalnum() for char in token_text)
                is_word.append(word)
        if start_char >= 0:
            self._close_sentence(result, text, first, start_char, end_char)
        return result

    @staticmethod
    def _close_sentence(result: AnalyzedText, text: str, first: int, start_char: int, end_char: int) -> None:
        result.sentence_token_spans.append((first, len(result.tokens)))
        result.sentence_char_spans.append((start_char, end_char))
        result.sentences.append(" ".join(text[start_char:end_char].split()))


@functools.cache
def default_pipeline() -> TextPipeline:
    """The shared English :class:`TextPipeline` with the default configuration."""
    return TextPipeline()
