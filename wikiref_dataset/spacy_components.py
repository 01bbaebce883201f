"""The two spaCy components the project adds to every pipeline of :mod:`wikiref_dataset.text`: the sentence-boundary
repairs (:class:`SentenceBoundaries`) and the lemma fallback (:class:`LemmaFallback`).

spaCy's rule-based sentencizer splits after every ``.``/``?``/``!`` token. Its English tokenizer already keeps most
abbreviations whole (``Dr.``, ``U.S.``, ``e.g.``, ``Jan.``, initials), and a token that is not pure terminal
punctuation never ends a sentence. :class:`SentenceBoundaries` (``wikiref_sentence_boundaries``) then repairs what the
sentencizer gets wrong, without changing tokens:

* a boundary is removed when the next sentence starts with a lowercase letter (``approx. three``,
  ``"Why?" he asked``), when the previous one does not end with terminal punctuation (``et al., 2020``),
  after an English abbreviation that precedes a name or number (``Fig. 3``, ``No. 5``, ``Capt. Smith``), and
  between ``et al.`` and a bracket or number (``Smith et al. (2020)``);
* an opening quote or bracket that the sentencizer glued to the end of a sentence moves to the next one;
* a blank line (by default; see :attr:`TextConfig.newline_breaks`) always ends a sentence, so that headings
  and titles without a full stop do not run into the text after them.

Known limit: an abbreviation at the very end of a sentence (``... in the U.S. He ...``) does not end it.

:class:`LemmaFallback` (``wikiref_lemma_fallback``) completes lookup lemmas: sentence-initial capitals, and languages
without a lemma table. Both are registered as spaCy factories when this module is imported.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import numpy

# isort: split
# Imported before spaCy: keeps thinc from importing torch (see text.py).
from ._spacy_import import TRANSFORMER_PACKAGES  # noqa: F401

# isort: split
# spaCy inside `try`, as in text.py: a published model folder imports this module only to split raw text.
try:
    from spacy.attrs import IS_SPACE, IS_TITLE, LEMMA, LOWER, ORTH, SENT_START
    from spacy.language import Language
    from spacy.pipeline import Sentencizer
    from spacy.tokens import Doc
except ModuleNotFoundError as _error:
    raise ModuleNotFoundError(f"the project's text pipeline needs spaCy ({_error}): pip install spacy",
                              name=_error.name) from None

__all__ = ["SENTENCE_BOUNDARIES", "LEMMA_FALLBACK", "SentenceBoundaries", "LemmaFallback"]

SENTENCE_BOUNDARIES = "wikiref_sentence_boundaries"
"""The factory name of :class:`SentenceBoundaries` (``nlp.add_pipe(SENTENCE_BOUNDARIES)``)."""
LEMMA_FALLBACK = "wikiref_lemma_fallback"
"""The factory name of :class:`LemmaFallback`."""

_F = TypeVar("_F", bound=Callable[..., Any])

# Abbreviations (without their period) that precede a name or a number and so almost never end a sentence.
# Only those spaCy's English tokenizer splits off their period are listed ("Dr.", "Mr.", "St.", "Prof.",
# "Gen.", "Jan.", "e.g." ... are single tokens already). Abbreviations that often end a sentence ("etc.",
# "Jr.", "Sr.", "Ave.", "ibid.") are left out on purpose: a lowercase next word still merges them.
_NON_FINAL_ABBREVIATIONS: dict[str, frozenset[str]] = {
    "en": frozenset(
        {
            "Fig", "Figs", "fig", "figs", "No", "Nos", "Vol", "Vols", "vol", "vols", "pp", "Ch", "Chap", "Sec",
            "Eq", "Eqs", "Ref", "Refs", "approx", "Approx", "cf", "Cf", "ca", "viz", "est", "Est", "incl",
            "Capt", "Cpl", "Col", "Cmdr", "Lt", "Maj", "Sgt", "Pvt", "Hon", "Mme", "Mlle", "Mx", "Fr", "Ft",
            "Pres", "Supt", "Insp", "Gov", "Sen", "Rep", "Gen",
        }
    ),
}  # fmt: skip


class SentenceBoundaries:
    """Repairs sentence boundaries in place (see the module docstring for the rules).

    With `merge=False` (pipelines whose boundaries come from a trained senter) only line breaks and opening
    quotes are handled; with `only_set_starts=True` (placed before a dependency parser, which keeps boundaries
    set before it) only line-break starts are set.
    """

    def __init__(self, nlp: Language, newline_breaks: str, merge: bool, only_set_starts: bool,
                 lowercased: bool = False) -> None:
        self.newline_breaks = newline_breaks
        self.lowercased = lowercased
        self.merge = merge
        self.only_set_starts = only_set_starts
        self.abbreviations = _NON_FINAL_ABBREVIATIONS.get(nlp.lang, frozenset())
        sentencizer = nlp.get_pipe("sentencizer") if "sentencizer" in nlp.pipe_names else None
        punct_chars = getattr(sentencizer, "punct_chars", None) or Sentencizer.default_punct_chars
        self.terminal_chars = frozenset(punct_chars)
        self.min_newlines = {"paragraph": 2, "line": 1}.get(newline_breaks, 0)

    def __call__(self, doc: Doc) -> Doc:
        if len(doc) < 2:
            return doc
        # Work on arrays and write back once: `Token.is_sent_start = ...` rescans the whole Doc on every call.
        columns = doc.to_array([SENT_START, IS_SPACE])
        sent_start = columns[:, 0].view(numpy.int64).copy()
        is_space = columns[:, 1].astype(bool).tolist()
        hard = self._line_break_starts(doc, is_space)
        if self.only_set_starts:
            sent_start[sorted(hard)] = 1
            doc.from_array([SENT_START], sent_start.view(numpy.uint64))
            return doc
        sent_start[0] = 1
        old = numpy.flatnonzero(sent_start == 1).tolist()
        starts = {self._skip_space(is_space, i) for i in old}
        starts.update(hard)
        starts.discard(len(doc))
        starts.discard(0)
        new = [0]
        for i in sorted(starts):
            if i not in hard:
                i = self._move_opening_punct(doc, i, new[-1])
                if i <= new[-1] or (self.merge and self._should_merge(doc, i)):
                    continue
            new.append(i)
        if new != old:
            sent_start[old] = -1
            sent_start[new] = 1
            doc.from_array([SENT_START], sent_start.view(numpy.uint64))
        return doc

    def _line_break_starts(self, doc: Doc, is_space: list[bool]) -> set[int]:
        if not self.min_newlines or "\n" not in doc.text:
            return set()
        starts = set()
        for i, space in enumerate(is_space):
            if space and doc[i].text.count("\n") >= self.min_newlines:
                start = self._skip_space(is_space, i + 1)
                if 0 < start < len(doc):
                    starts.add(start)
        return starts

    @staticmethod
    def _skip_space(is_space: list[bool], i: int) -> int:
        while i < len(is_space) and is_space[i]:
            i += 1
        return i

    @staticmethod
    def _move_opening_punct(doc: Doc, i: int, previous_start: int) -> int:
        # The sentencizer glues an opening quote/bracket to the sentence before it: `Yes! "No," he said.`
        while i - 1 > previous_start:
            token = doc[i - 1]
            before = doc[i - 2]
            opening = (token.is_quote or token.is_left_punct) and not token.whitespace_
            if opening and (before.whitespace_ or before.is_space):
                i -= 1
            else:
                break
        return i

    def _should_merge(self, doc: Doc, i: int) -> bool:
        last = i - 1
        while last > 0 and doc[last].is_space:
            last -= 1
        end = last
        while end > 0 and (doc[end].is_quote or doc[end].is_right_punct):
            end -= 1
        if doc[end].text[-1] not in self.terminal_chars:
            return True  # `et al., 2020`: the sentencizer skipped punctuation after the period
        first = i
        while first < len(doc) - 1 and (doc[first].is_quote or doc[first].is_left_punct):
            first += 1
        first_char = doc[first].text[0]
        if first_char.isalpha() and first_char.islower() and not self.lowercased:
            return True
        if doc[end].text == "." and end > 0 and not doc[end - 1].whitespace_:
            word = doc[end - 1].text
            if word in self.abbreviations:
                return True
            if (
                word == "al"
                and end > 1
                and doc[end - 2].lower_ == "et"
                and (first_char in "([" or first_char.isdigit())
            ):
                return True
        return False


class LemmaFallback:
    """Completes lookup lemmas: sentence-initial capitals and languages without a lemma table.

    spaCy's lookup lemmatizer looks the token text up as written, so `Children` at the start of a sentence
    stays `Children`; a title-case token left unchanged is looked up again in lowercase. Without a table
    (`table=None`) every lemma is the lowercased form.
    """

    def __init__(self, nlp: Language) -> None:
        self.nlp = nlp
        self._table: Any = None
        self._resolved = False

    def _lookup_table(self) -> Any:
        if not self._resolved:
            lemmatizer = self.nlp.get_pipe("lemmatizer") if "lemmatizer" in self.nlp.pipe_names else None
            if lemmatizer is not None and getattr(lemmatizer, "mode", None) == "lookup":
                self._table = lemmatizer.lookups.get_table("lemma_lookup", None)
            self._resolved = True
        return self._table

    def __call__(self, doc: Doc) -> Doc:
        if len(doc) == 0:
            return doc
        table = self._lookup_table()
        if table is None:
            columns = doc.to_array([LEMMA, LOWER])
            missing = columns[:, 0] == 0
            if missing.any():
                columns[missing, 0] = columns[missing, 1]
                doc.from_array([LEMMA], columns[:, 0])
            return doc
        columns = doc.to_array([IS_TITLE, LEMMA, ORTH])
        for i in numpy.flatnonzero((columns[:, 0] == 1) & (columns[:, 1] == columns[:, 2])).tolist():
            token = doc[i]
            lemma = table.get(token.lower_)
            if lemma is not None:
                token.lemma_ = lemma if isinstance(lemma, str) else lemma[0]
        return doc


def _factory(name: str, default_config: dict[str, Any] | None = None) -> Callable[[_F], _F]:
    """``Language.factory(name)``, unless a factory of that name exists: a process that loads published model folders
    (each with its copy of this module, ``remote_code.py``) beside this package would otherwise stop at spaCy's
    "a factory for ... already exists". The first copy's components serve them all."""

    def register(function: _F) -> _F:
        if not Language.has_factory(name):
            Language.factory(name, default_config=default_config or {})(function)
        return function

    return register


@_factory(SENTENCE_BOUNDARIES,
          default_config={"newline_breaks": "paragraph", "merge": True, "only_set_starts": False,
                          "lowercased": False})
def make_sentence_boundaries(
    nlp: Language, name: str, newline_breaks: str, merge: bool, only_set_starts: bool, lowercased: bool
) -> SentenceBoundaries:
    return SentenceBoundaries(nlp, newline_breaks, merge, only_set_starts, lowercased)


@_factory(LEMMA_FALLBACK)
def make_lemma_fallback(nlp: Language, name: str) -> LemmaFallback:
    return LemmaFallback(nlp)
