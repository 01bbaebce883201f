"""PSG2SUM mining (§2.1 of Zhou, Wei and Zhou, 2020): passage–summary pairs from the edits of Wikipedia pages.

For each pair of adjacent (readable) revisions of a page:

1. **Plain text.** Each revision's wikitext goes through WikiRef's page preparation and rendering
   (:func:`~wikiref_dataset.wiki.markup.prepare`, :func:`~wikiref_dataset.wiki.markup.split_sections`,
   :func:`~wikiref_dataset.wiki.plaintext.render`), so "plain text" means the same as in WikiRef. The *lead* is the
   text before the first heading, split into sentences; the *body* is every later section except the non-prose
   ones (:data:`~wikiref_dataset.wiki.statements.DEFAULT_SKIP_SECTIONS`), split into *passages* at blank lines
   (paragraphs; list items, tables and headings are not passages). Lead paragraphs are split with the Moses
   sentence splitter the paper used (``split-sentences.perl`` as ported by the ``sentence-splitter`` package, the
   paper's footnote 4; :attr:`MiningConfig.lead_splitter`), passages with the text pipeline (their
   ``passage_sentences``). A revision is parsed once: its parsed form is reused as the parent of the next pair;
   paragraphs are rendered once per page (an edit changes a few).
2. **Diff.** Lead sentences are tokenized with the project's :class:`~wikiref_dataset.text.TextPipeline` and the
   two token-sequence lists are diffed with :class:`difflib.SequenceMatcher`; passages are diffed as texts. A
   sentence/passage of the new revision in an ``insert`` or ``replace`` block that does not occur anywhere in the
   parent is *added* (a moved one is not).
3. **Score.** For an added lead sentence ``s`` and an added passage ``p``:
   ``score = |{w ∈ s'} ∩ {w ∈ p'}| / |{w ∈ s'}|`` where ``x'`` is the set of ``x``'s lowercased non-stop words
   (:attr:`~wikiref_dataset.text.AnalyzedText.content_words`). ``s`` is paired with its best passage (the first
   one on ties); the pair is kept when ``score >= λ`` (:attr:`MiningConfig.min_score`).

   The paper leaves three details open: whether words are case-folded, lemmatized or stemmed; which stop list; and
   whether ``|s'|`` counts tokens or distinct words. Here: lowercased spaCy word tokens (punctuation and numbers-
   only tokens out), spaCy's English stop list, distinct words in both numerator and denominator (the numerator is
   a set in eq. 1; a token-count denominator could only lower scores). Checked on the real "Anarchism" windows
   (705 revision pairs, 66 candidates): lemmas, Porter stems, keeping punctuation as words, case-sensitive
   matching, and scoring against every passage of the new revision instead of the added ones all leave the best
   candidate below 0.6 (best 0.44 here; 0.57 with stems against the whole body), so no reading of eq. 1 makes these
   windows yield a pair at the paper's λ — which matches the paper's rate: 100,118 pairs from ~1B revisions is
   one pair per ~10,000 revisions.
4. **Churn.** A revision whose text equals one of the last :attr:`MiningConfig.revert_window` revisions is a
   *revert*: it yields nothing, and the revisions it undid lose the pairs they had yielded (pairs are held back for
   ``revert_window`` revisions for this). Sentences/passages that were present within the last ``revert_window``
   revisions before the parent are *re-added* text (a partial revert), not new writing, and are dropped. A revision
   that changes more than :attr:`MiningConfig.max_rewrite_churn` of the passages of a page that had at least
   :attr:`MiningConfig.min_rewrite_passages` is a whole-page *rewrite* (or vandalism) and yields nothing.
   Revisions without text (missing, empty, ``<text deleted="deleted"/>``) are skipped; the next revision is
   diffed against the last readable one.
5. **Dedup.** A (passage, summary) pair already yielded for the same page is dropped; across pages, the dataset
   step dedups (keeping the earliest revision), so the output does not depend on how pages are sharded.

Everything is counted in :attr:`PairMiner.stats` (keys in :data:`STAT_KEYS`). One page that raises is logged and
counted (``pages_failed``); mining goes on.
"""

from __future__ import annotations

import difflib
import hashlib
import logging
import re
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from ..text import TextConfig, TextPipeline
from ..wiki.dump import DumpError
from ..wiki.inline import language_templates
from ..wiki.languages import wiki_language
from ..wiki.markup import prepare, split_sections
from ..wiki.plaintext import render
from ..wiki.statements import DEFAULT_SKIP_SECTIONS
from .history import PageHistory, Revision

__all__ = ["STAT_KEYS", "MiningConfig", "PairMiner", "PassageSummaryPair", "RevisionText", "overlap_score",
           "parse_revision", "render_paragraph"]

logger = logging.getLogger(__name__)

STAT_KEYS = (
    "pages", "pages_failed", "revisions", "revisions_deleted", "revisions_without_text", "revision_pairs",
    "reverts", "reverted_revisions", "rewrites", "added_sentences", "added_passages", "readded_sentences",
    "readded_passages", "pairs_with_additions", "candidate_pairs", "below_min_score", "short_passages", "duplicates",
    "pairs",
)  # fmt: skip
LEAD_SPLITTERS = ("moses", "spacy")
"""Counters of :class:`PairMiner` (plus ``candidates_at_<λ>`` for each λ of :attr:`MiningConfig.score_grid`)."""

_BLANK_LINE = re.compile(r"\n[^\S\n]*\n\s*")
_NOT_PROSE_LINE = re.compile(r"^\s*(?:[*#;]|\{\||\|\}|\||!|\{\{\s*[^{}|]*\}\}\s*$|\[\[\s*(?:file|image|category):)",
                             re.IGNORECASE)
_WORD = re.compile(r"\w")
_CACHE_LIMIT = 20_000  # lead paragraphs / sentences remembered per page (they recur from revision to revision)


@dataclass
class MiningConfig:
    """How pairs are mined.

    Args:
        min_score (`float`, defaults to 0.6): λ, the lowest overlap score kept (Table 3 of Zhou et al.).
        score_grid (`tuple[float, ...]`, defaults to ``(0.3, 0.4, 0.5, 0.6, 0.7)``): λ values whose candidate
            counts are reported (Table 3's rows and lower ones), whatever ``min_score`` is.
        lead_splitter (`str`, defaults to ``"moses"``): ``"moses"`` (the paper's Moses splitter, ``sentence-
            splitter`` package) or ``"spacy"`` (the text pipeline's sentences) for the lead.
        min_summary_words (`int`, defaults to 3): an added lead sentence needs at least this many distinct
            non-stop words to be a candidate (a score over one or two words means little).
        min_passage_sentences (`int`, defaults to 1): fewest sentences in a kept passage.
        revert_window (`int`, defaults to 5): how many earlier revisions a revert / re-added text is looked for in.
        max_rewrite_churn (`float`, defaults to 0.8): a revision changing more than this share of the passages
            is a whole-page rewrite and is skipped.
        min_rewrite_passages (`int`, defaults to 3): the rewrite rule applies to pages with at least this many
            passages (small stubs are rewritten legitimately).
        skip_sections (`tuple[str, ...]`): non-prose section headings whose text is not passages.
        namespaces (`tuple[int, ...]`, defaults to ``(0,)``): namespaces mined.
        text (:class:`TextConfig`): the spaCy pipeline (sentences, tokens, stop words).
        language (`str`, defaults to ``"en"``): the Wikipedia language of the histories
            (:mod:`~wikiref_dataset.wiki.languages`): its inline templates and file links are rendered as its table
            says, its non-prose sections are skipped (with the default ``skip_sections``), and the text pipeline is
            its spaCy language (with the default ``text``). The Moses splitter has no Japanese or Chinese: their lead
            sentences are split by the text pipeline.
    """

    min_score: float = field(default=0.6, metadata={"help": "λ: lowest overlap score kept."})
    score_grid: tuple[float, ...] = field(default=(0.3, 0.4, 0.5, 0.6, 0.7), metadata={"help": "λ values counted."})
    lead_splitter: str = field(default="moses", metadata={"help": "Lead sentence splitter: moses or spacy."})
    min_summary_words: int = field(default=3, metadata={"help": "Fewest distinct non-stop words in a summary."})
    min_passage_sentences: int = field(default=1, metadata={"help": "Fewest sentences in a passage."})
    revert_window: int = field(default=5, metadata={"help": "Revisions looked back for reverts and re-added text."})
    max_rewrite_churn: float = field(default=0.8, metadata={"help": "Share of passages changed = rewrite."})
    min_rewrite_passages: int = field(default=3, metadata={"help": "Pages this small are never rewrites."})
    skip_sections: tuple[str, ...] = field(default=DEFAULT_SKIP_SECTIONS, metadata={"help": "Non-prose sections."})
    namespaces: tuple[int, ...] = field(default=(0,), metadata={"help": "Namespaces mined."})
    text: TextConfig = field(default_factory=TextConfig, metadata={"help": "spaCy pipeline settings."})
    language: str = field(default="en", metadata={"help": "Wikipedia language of the histories."})

    def __post_init__(self) -> None:
        language = wiki_language(self.language)  # UnsupportedLanguage (a ValueError) names the supported ones
        self.language = language.code
        self.skip_sections = language.sections_to_skip(self.skip_sections)
        self.text = language.text_config(self.text, "the histories")
        if not 0.0 <= self.min_score <= 1.0:
            raise ValueError(f"min_score (λ) must be in [0, 1], got {self.min_score}")
        if any(not 0.0 <= value <= 1.0 for value in self.score_grid):
            raise ValueError(f"score_grid values must be in [0, 1], got {self.score_grid}")
        if not 0.0 < self.max_rewrite_churn <= 1.0:
            raise ValueError(f"max_rewrite_churn must be in (0, 1], got {self.max_rewrite_churn}")
        for name in ("min_summary_words", "min_passage_sentences", "revert_window", "min_rewrite_passages"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        if self.lead_splitter not in LEAD_SPLITTERS:
            raise ValueError(f"lead_splitter must be one of {LEAD_SPLITTERS}, got {self.lead_splitter!r}")
        self.score_grid = tuple(sorted(set(self.score_grid)))

    def to_dict(self) -> dict[str, Any]:
        values = asdict(self)
        values["skip_sections"] = list(self.skip_sections)
        return values


@dataclass
class PassageSummaryPair:
    """One mined example: a passage added to a page's body and the lead sentence added with it (its summary)."""

    id: str
    page_id: int
    title: str
    revision_id: int
    parent_revision_id: int
    timestamp: str
    passage: str
    passage_sentences: list[str]
    summary: str
    score: float


@dataclass
class RevisionText:
    """A revision's plain text as the miner sees it: lead sentences and body passages."""

    lead_sentences: list[str]
    passages: list[str]


def overlap_score(summary_words: set[str], passage_words: set[str]) -> float:
    """Zhou et al., eq. 1: share of the summary's distinct non-stop words found in the passage (0 for none)."""
    if not summary_words:
        return 0.0
    return len(summary_words & passage_words) / len(summary_words)


NO_MOSES_LANGUAGES = frozenset({"ja", "zh", "ko", "th"})
"""Languages the Moses splitter has no rules for: their lead sentences are split by the text pipeline."""


def moses_sentence_splitter(language: str = "en") -> Callable[[str], list[str]]:
    """The Moses sentence splitter (``split-sentences.perl`` with its non-breaking prefix lists, as ported by the
    ``sentence-splitter`` package) as a function from a paragraph to its sentences."""
    try:
        from sentence_splitter import SentenceSplitter
    except ImportError as err:
        raise ImportError("the Moses lead splitter needs `pip install sentence-splitter` "
                          "(or MiningConfig(lead_splitter='spacy'))") from err
    splitter = SentenceSplitter(language=language)

    def split(paragraph: str) -> list[str]:
        return [sentence for sentence in splitter.split(paragraph) if sentence.strip()]

    return split


def render_paragraph(block: str) -> str:
    """Plain text of one blank-line separated block of prepared wikitext, without its list/table/image lines
    (empty when nothing readable is left)."""
    lines = [line for line in block.split("\n") if line.strip() and not _NOT_PROSE_LINE.match(line)]
    if not lines:
        return ""
    text = render("\n".join(lines))
    return text if _WORD.search(text) else ""


def _paragraphs(wikitext: str, render_block: Callable[[str], str]) -> Iterator[str]:
    """Plain text of the prose paragraphs of a section body."""
    for block in _BLANK_LINE.split(wikitext):
        text = render_block(block)
        if text:
            yield text


def parse_revision(wikitext: str, split_sentences: Callable[[str], list[str]],
                   skip_sections: Iterable[str] = DEFAULT_SKIP_SECTIONS,
                   render_block: Callable[[str], str] = render_paragraph) -> RevisionText:
    """Lead sentences and body passages of one revision's wikitext (``split_sentences`` splits a lead paragraph;
    ``render_block`` renders a paragraph's wikitext, :func:`render_paragraph` or a cached version of it)."""
    skip = frozenset(skip_sections)
    prepared = prepare(wikitext)
    sections = split_sections(prepared.text)
    lead: list[str] = []
    for paragraph in _paragraphs(sections[0].body, render_block):
        lead.extend(split_sentences(paragraph))
    passages: list[str] = []
    skip_level: int | None = None
    for section in sections[1:]:
        if skip_level is not None and section.level <= skip_level:
            skip_level = None
        if skip_level is None and " ".join(render(section.title).split()).lower().rstrip(":") in skip:
            skip_level = section.level
        if skip_level is None:
            passages.extend(_paragraphs(section.body, render_block))
    return RevisionText(lead_sentences=lead, passages=passages)


@dataclass
class _Parsed:
    revision: Revision
    text_hash: bytes
    lead: list[tuple[str, ...]]  # token tuples of the lead sentences
    view: RevisionText


class PairMiner:
    """Mines :class:`PassageSummaryPair` records from page histories; counts in :attr:`stats`, seconds per phase in
    :attr:`timings` (``markup`` = wikitext → plain text, ``sentences`` = lead sentence splitting, ``diff`` =
    tokenizing + difflib + churn rules, ``scoring`` = analysis + overlap scores)."""

    def __init__(self, config: MiningConfig | None = None, pipeline: TextPipeline | None = None) -> None:
        self.config = config if config is not None else MiningConfig()
        self.pipeline = pipeline if pipeline is not None else TextPipeline(self.config.text)
        self.stats: Counter = Counter()
        self.timings: Counter = Counter()
        self._seen: set[bytes] = set()
        self._sentence_cache: dict[str, list[str]] = {}
        self._token_cache: dict[str, tuple[str, ...]] = {}
        self._render_cache: dict[str, str] = {}
        self._skip = frozenset(self.config.skip_sections)
        self._language = wiki_language(self.config.language)
        self._split_lead: Callable[[str], list[str]] = (
            moses_sentence_splitter(self.config.text.lang) if self._moses
            else self.pipeline.split_sentences)

    @property
    def _moses(self) -> bool:
        return self.config.lead_splitter == "moses" and self.config.text.lang not in NO_MOSES_LANGUAGES

    @property
    def description(self) -> str:
        """Lead splitter and text pipeline, for the dataset card."""
        if self._moses:
            from importlib.metadata import version

            lead = f"Moses sentence splitter (sentence-splitter {version('sentence-splitter')})"
        else:
            lead = "the text pipeline"
        return f"lead sentences: {lead}; tokens, stop words, passage sentences: {self.pipeline.description}"

    # -- public ----------------------------------------------------------------------------------------------------

    def mine(self, histories: Iterable[PageHistory],
             on_revision: Callable[[], None] | None = None) -> Iterator[PassageSummaryPair]:
        """The pairs of all pages (``on_revision`` is called once per revision read, for progress bars)."""
        for history in histories:
            yield from self.mine_page(history, on_revision)

    def mine_page(self, history: PageHistory,
                  on_revision: Callable[[], None] | None = None) -> Iterator[PassageSummaryPair]:
        """The pairs of one page, in revision order."""
        self.stats["pages"] += 1
        self._seen.clear()
        self._sentence_cache.clear()
        self._token_cache.clear()
        self._render_cache.clear()
        try:
            yield from self._mine_page(history, on_revision)
        except DumpError:  # a damaged file is not one bad page: stop
            raise
        except Exception as err:  # one bad page must not stop a dump
            logger.warning("page %s (%r): PSG2SUM mining failed: %s: %s", history.page_id, history.title,
                           type(err).__name__, err)
            self.stats["pages_failed"] += 1

    def candidate_counts(self) -> dict[float, int]:
        """Candidate pairs (best passage per added sentence) whose score is ≥ each λ of the grid."""
        return {value: self.stats[f"candidates_at_{value:g}"] for value in self.config.score_grid}

    # -- one page --------------------------------------------------------------------------------------------------

    def _mine_page(self, history: PageHistory,
                   on_revision: Callable[[], None] | None) -> Iterator[PassageSummaryPair]:
        window = self.config.revert_window
        recent: deque[_Parsed] = deque(maxlen=window + 1)  # the parent last
        # pairs held back until no revert within the window can undo their revision: (position, pairs)
        pending: deque[tuple[int, list[PassageSummaryPair]]] = deque()
        position = 0
        for revision in history.revisions:
            if on_revision is not None:
                on_revision()
            self.stats["revisions"] += 1
            if revision.text_deleted:
                self.stats["revisions_deleted"] += 1
                continue
            if revision.text is None or not revision.text.strip():
                self.stats["revisions_without_text"] += 1
                continue
            position += 1
            text_hash = hashlib.sha1(revision.text.encode("utf-8")).digest()
            parent = recent[-1] if recent else None
            if parent is not None:
                self.stats["revision_pairs"] += 1
            earlier = [index for index, item in enumerate(list(recent)[:-1]) if item.text_hash == text_hash]
            if earlier:
                # a revert to an earlier revision: the revisions in between are undone
                self.stats["reverts"] += 1
                undone = len(recent) - 1 - earlier[-1]
                self.stats["reverted_revisions"] += undone
                first_undone = position - undone
                pending = deque(item for item in pending if item[0] < first_undone)
                yield from self._release(pending, position, window)
                recent.append(replace(recent[earlier[-1]], revision=revision))  # same text, this id
                continue
            current = self._parse(revision, text_hash)
            if parent is not None and text_hash != parent.text_hash:
                pairs = self._pairs(history, parent, current, list(recent)[:-1])
                if pairs:
                    pending.append((position, pairs))
            recent.append(current)
            yield from self._release(pending, position, window)
        while pending:
            yield from self._emit(pending.popleft()[1])

    def _release(self, pending: deque, position: int, window: int) -> Iterator[PassageSummaryPair]:
        while pending and pending[0][0] <= position - window:
            yield from self._emit(pending.popleft()[1])

    def _emit(self, pairs: list[PassageSummaryPair]) -> Iterator[PassageSummaryPair]:
        for pair in pairs:
            key = hashlib.sha1(f"{pair.passage}\x00{pair.summary}".encode()).digest()
            if key in self._seen:
                self.stats["duplicates"] += 1
                continue
            self._seen.add(key)
            self.stats["pairs"] += 1
            yield pair

    def _parse(self, revision: Revision, text_hash: bytes) -> _Parsed:
        started, splitting = time.perf_counter(), self.timings["sentences"]
        with language_templates(self._language):
            view = parse_revision(revision.text or "", self._split_lead_paragraph, self._skip, self._render_block)
        self.timings["markup"] += time.perf_counter() - started - (self.timings["sentences"] - splitting)
        return _Parsed(revision=revision, text_hash=text_hash, lead=self._tokens(view.lead_sentences), view=view)

    def _render_block(self, block: str) -> str:
        # a revision changes a few paragraphs: the others are rendered once per page (rendering is a function of
        # the block's text alone: ref placeholders are removed whatever their number)
        text = self._render_cache.get(block)
        if text is None:
            if len(self._render_cache) >= _CACHE_LIMIT:
                self._render_cache.clear()
            text = render_paragraph(block)
            self._render_cache[block] = text
        return text

    def _split_lead_paragraph(self, paragraph: str) -> list[str]:
        sentences = self._sentence_cache.get(paragraph)
        if sentences is None:
            if len(self._sentence_cache) >= _CACHE_LIMIT:  # bounded memory on pages with huge histories
                self._sentence_cache.clear()
            started = time.perf_counter()
            sentences = self._split_lead(paragraph)
            self._sentence_cache[paragraph] = sentences
            self.timings["sentences"] += time.perf_counter() - started
        return sentences

    def _tokens(self, sentences: list[str]) -> list[tuple[str, ...]]:
        if len(self._token_cache) + len(sentences) >= _CACHE_LIMIT:  # bounded memory on huge histories
            self._token_cache.clear()
        missing = [sentence for sentence in dict.fromkeys(sentences) if sentence not in self._token_cache]
        if missing:
            started = time.perf_counter()
            for sentence, tokens in zip(missing, self.pipeline.tokenize_many(missing), strict=True):
                self._token_cache[sentence] = tuple(tokens)
            self.timings["diff"] += time.perf_counter() - started
        return [self._token_cache[sentence] for sentence in sentences]

    # -- one revision pair -----------------------------------------------------------------------------------------

    def _pairs(self, history: PageHistory, parent: _Parsed, current: _Parsed,
               older: list[_Parsed]) -> list[PassageSummaryPair]:
        config = self.config
        started = time.perf_counter()
        old_passages, new_passages = parent.view.passages, current.view.passages
        matcher = difflib.SequenceMatcher(None, old_passages, new_passages, autojunk=False)
        if len(old_passages) >= config.min_rewrite_passages:
            matched = sum(block.size for block in matcher.get_matching_blocks())
            churn = 1.0 - matched / max(len(old_passages), len(new_passages))
            if churn > config.max_rewrite_churn:
                self.stats["rewrites"] += 1
                self.timings["diff"] += time.perf_counter() - started
                return []
        passages = _added(matcher, old_passages, new_passages)
        sentence_matcher = difflib.SequenceMatcher(None, parent.lead, current.lead, autojunk=False)
        sentence_indexes = _added_indexes(sentence_matcher, parent.lead, current.lead)
        if older and (passages or sentence_indexes):
            seen_passages = {p for item in older for p in item.view.passages}
            seen_sentences = {s for item in older for s in item.lead}
            kept_passages = [p for p in passages if p not in seen_passages]
            kept_indexes = [j for j in sentence_indexes if current.lead[j] not in seen_sentences]
            self.stats["readded_passages"] += len(passages) - len(kept_passages)
            self.stats["readded_sentences"] += len(sentence_indexes) - len(kept_indexes)
            passages, sentence_indexes = kept_passages, kept_indexes
        self.stats["added_passages"] += len(passages)
        self.stats["added_sentences"] += len(sentence_indexes)
        self.timings["diff"] += time.perf_counter() - started
        if not passages or not sentence_indexes:
            return []
        self.stats["pairs_with_additions"] += 1
        started = time.perf_counter()
        sentences = [current.view.lead_sentences[j] for j in sentence_indexes]
        analyses = list(self.pipeline.analyze_many(sentences + passages))
        sentence_words = [set(a.content_words) for a in analyses[: len(sentences)]]
        passage_analyses = analyses[len(sentences):]
        passage_words = [set(a.content_words) for a in passage_analyses]
        revision = current.revision
        pairs = []
        for j, sentence, words in zip(sentence_indexes, sentences, sentence_words, strict=True):
            if len(words) < config.min_summary_words:
                continue
            scores = [overlap_score(words, candidate) for candidate in passage_words]
            best = max(range(len(scores)), key=lambda i: (scores[i], -i))
            score = scores[best]
            self.stats["candidate_pairs"] += 1
            for value in config.score_grid:
                if score >= value:
                    self.stats[f"candidates_at_{value:g}"] += 1
            if score < config.min_score:
                self.stats["below_min_score"] += 1
                continue
            passage_sentences = passage_analyses[best].sentences
            if len(passage_sentences) < config.min_passage_sentences:
                self.stats["short_passages"] += 1
                continue
            pairs.append(PassageSummaryPair(
                id=f"{history.page_id}-{revision.revision_id}-{j}",
                page_id=history.page_id,
                title=history.title,
                revision_id=revision.revision_id,
                parent_revision_id=parent.revision.revision_id,
                timestamp=revision.timestamp,
                passage=passages[best],
                passage_sentences=list(passage_sentences),
                summary=sentence,
                score=round(score, 6),
            ))
        self.timings["scoring"] += time.perf_counter() - started
        return pairs


def _added(matcher: difflib.SequenceMatcher, old: list, new: list) -> list:
    """Items of ``new`` in inserted/replaced blocks that do not occur anywhere in ``old`` (moves are not added)."""
    return [new[j] for j in _added_indexes(matcher, old, new)]


def _added_indexes(matcher: difflib.SequenceMatcher, old: list, new: list) -> list[int]:
    present = set(old)
    indexes: list[int] = []
    for tag, _, _, j1, j2 in matcher.get_opcodes():
        if tag in ("insert", "replace"):
            indexes.extend(j for j in range(j1, j2) if new[j] not in present)
    return list(dict.fromkeys(indexes))
