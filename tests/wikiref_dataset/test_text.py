"""Tests for wikiref_dataset.text: sentences, tokens, lemmas, stop words, batching, caching and errors."""

from __future__ import annotations

import json
import logging
import pickle
from pathlib import Path

import pytest
import spacy
from spacy.training import Example

from wikiref_dataset.text import (
    BLANK_MODEL,
    MAX_NEW_STRINGS,
    SENTENCES_MODEL,
    AnalyzedText,
    TextConfig,
    TextPipeline,
    default_pipeline,
    get_pipeline,
    resolve_model,
    split_long_text,
)

# Always the blank + lookup-tables pipeline, so that results do not depend on whether en_core_web_sm is installed.
BLANK = TextConfig(model=BLANK_MODEL)


@pytest.fixture(scope="module")
def text_pipeline() -> TextPipeline:
    return TextPipeline(BLANK)


def _normalized(text: str) -> str:
    return " ".join(text.split())


# ---- sentences ---------------------------------------------------------------------------------------------------

SENTENCE_CASES = {
    "abbreviations": (
        "Dr. Smith moved to the U.S. in 1990. He works at Acme Inc. now. See Fig. 3 and No. 5 for e.g. details. "
        "Capt. Jones met Gov. Brown on Jan. 5. They talked.",
        [
            "Dr. Smith moved to the U.S. in 1990.",
            "He works at Acme Inc. now.",
            "See Fig. 3 and No. 5 for e.g. details.",
            "Capt. Jones met Gov. Brown on Jan. 5.",
            "They talked.",
        ],
    ),
    "citations_and_lowercase": (
        "Smith et al. (2020) showed it. Jones et al., 2019, agreed. It cost approx. $5 per unit. "
        "Prices rose... and then fell. (See below.) Next one.",
        [
            "Smith et al. (2020) showed it.",
            "Jones et al., 2019, agreed.",
            "It cost approx. $5 per unit.",
            "Prices rose... and then fell.",
            "(See below.)",
            "Next one.",
        ],
    ),
    "quotes": (
        'She said, "Go home." Then she left. Is it? Yes! "No," he said. "Why?" he asked.',
        ['She said, "Go home."', "Then she left.", "Is it?", "Yes!", '"No," he said.', '"Why?" he asked.'],
    ),
    "newlines": (
        "Marina Beach\n\nThe beach is long.  It is hard\nwrapped here.\n \n\nLast paragraph without a stop",
        ["Marina Beach", "The beach is long.", "It is hard wrapped here.", "Last paragraph without a stop"],
    ),
}


@pytest.mark.parametrize("case", sorted(SENTENCE_CASES))
def test_split_sentences(text_pipeline: TextPipeline, case: str) -> None:
    text, expected = SENTENCE_CASES[case]
    assert text_pipeline.split_sentences(text) == expected


def test_spacy_doc_carries_the_repaired_boundaries() -> None:
    doc = get_pipeline(BLANK)('See Fig. 3 now. Yes! "No," he said.')
    assert [sentence.text for sentence in doc.sents] == ["See Fig. 3 now.", "Yes!", '"No," he said.']


@pytest.mark.parametrize(
    ("newline_breaks", "expected"),
    [
        ("paragraph", ["Title", "A line wrapped here.", "Next."]),
        ("line", ["Title", "A line", "wrapped here.", "Next."]),
        ("none", ["Title A line wrapped here.", "Next."]),
    ],
)
def test_newline_breaks(newline_breaks: str, expected: list[str]) -> None:
    pipeline = TextPipeline(TextConfig(model=BLANK_MODEL, newline_breaks=newline_breaks))
    assert pipeline.split_sentences("Title\n\nA line\nwrapped here. Next.") == expected


def test_sentence_offsets_point_into_the_text(text_pipeline: TextPipeline) -> None:
    text = "  Marina Beach\n\nThe beach is  long. It is\nwrapped here.\n"
    analysis = text_pipeline.analyze(text)
    assert analysis.sentences == ["Marina Beach", "The beach is long.", "It is wrapped here."]
    assert [_normalized(text[start:end]) for start, end in analysis.sentence_char_spans] == analysis.sentences
    assert analysis.sentence_tokens() == [["Marina", "Beach"], ["The", "beach", "is", "long", "."],
                                          ["It", "is", "wrapped", "here", "."]]  # fmt: skip
    assert analysis.sentence_token_spans[-1][1] == analysis.n_tokens == len(analysis.tokens)
    assert all(not token.isspace() for token in analysis.tokens)


# ---- tokens, lemmas, stop words --------------------------------------------------------------------------------


def test_lemmas_from_lookup_tables(text_pipeline: TextPipeline) -> None:
    analysis = text_pipeline.analyze("Children were running. The children ran home.")
    lemmas = dict(zip(analysis.tokens, analysis.lemmas, strict=True))
    assert lemmas["Children"] == "child"  # sentence-initial capital looked up again in lowercase
    assert lemmas["children"] == "child"
    assert lemmas["running"] == "run"
    assert lemmas["ran"] == "run"
    assert lemmas["were"] == "be"
    assert analysis.content_lemmas == ["child", "run", "child", "run", "home"]
    assert analysis.content_words == ["children", "running", "children", "ran", "home"]
    assert analysis.words == ["Children", "were", "running", "The", "children", "ran", "home"]


def test_stop_words_and_word_flags(text_pipeline: TextPipeline) -> None:
    assert text_pipeline.is_stop_word("the") and text_pipeline.is_stop_word("The")
    assert not text_pipeline.is_stop_word("beach")
    assert {"the", "and", "of"} <= text_pipeline.stop_words
    analysis = text_pipeline.analyze("The beach, and COVID-19 cases: 42%!")
    assert analysis.tokens == ["The", "beach", ",", "and", "COVID-19", "cases", ":", "42", "%", "!"]
    assert analysis.is_stop == [True, False, False, True, False, False, False, False, False, False]
    assert analysis.is_word == [True, True, False, True, True, True, False, True, False, False]
    assert analysis.content_lemmas == ["beach", "covid-19", "case", "42"]


def test_tokenize_matches_analyze(text_pipeline: TextPipeline) -> None:
    text = "Dr. Smith's U.S. trip\n\ncost $1,000 (approx.)."
    assert text_pipeline.tokenize(text) == text_pipeline.analyze(text).tokens
    assert text_pipeline.tokenize(text) == ["Dr.", "Smith", "'s", "U.S.", "trip", "cost", "$", "1,000", "(",
                                            "approx", ".", ")", "."]  # fmt: skip


def test_other_language_lemmas_and_stop_words() -> None:
    pipeline = TextPipeline(TextConfig(lang="de", model=BLANK_MODEL))
    analysis = pipeline.analyze("Die Kinder liefen nach Hause. Sie waren müde.")
    assert analysis.sentences == ["Die Kinder liefen nach Hause.", "Sie waren müde."]
    assert dict(zip(analysis.tokens, analysis.lemmas, strict=True))["Kinder"] == "Kind"
    assert pipeline.is_stop_word("die") and not pipeline.is_stop_word("Kinder")


def test_language_without_lemma_table_falls_back_to_lowercase(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="wikiref_dataset.text"):
        # An unusual max_length gives a configuration no other test built, so the warning is not cached away.
        pipeline = TextPipeline(TextConfig(lang="af", model=BLANK_MODEL, max_length=123_457))
        analysis = pipeline.analyze("Die Kinders Speel. Hulle lag.")
    assert "no lemma table for 'af'" in caplog.text
    assert analysis.lemmas == ["die", "kinders", "speel", ".", "hulle", "lag", "."]
    assert analysis.n_sentences == 2


# ---- batches, caching, pickling -------------------------------------------------------------------------------

BATCH = [
    "Dr. Smith moved to the U.S. in 1990. He works at Acme Inc. now.",
    "",
    'Title\n\nChildren were running. "Why?" he asked.',
    "   \n\n  ",
    "One more sentence without a full stop",
]


def test_batch_api_gives_the_single_call_results(text_pipeline: TextPipeline) -> None:
    singles = [text_pipeline.analyze(text) for text in BATCH]
    assert list(text_pipeline.analyze_many(iter(BATCH))) == singles
    assert list(text_pipeline.split_sentences_many(BATCH)) == [analysis.sentences for analysis in singles]
    assert list(text_pipeline.tokenize_many(BATCH)) == [analysis.tokens for analysis in singles]
    assert list(text_pipeline.content_lemmas_many(BATCH)) == [analysis.content_lemmas for analysis in singles]
    small_batches = TextPipeline(TextConfig(model=BLANK_MODEL, batch_size=2))
    assert list(small_batches.analyze_many(BATCH)) == singles


def test_multiprocess_batches_give_the_same_results(text_pipeline: TextPipeline) -> None:
    texts = BATCH * 4
    parallel = TextPipeline(TextConfig(model=BLANK_MODEL, n_process=2, batch_size=3))
    assert list(parallel.analyze_many(texts)) == list(text_pipeline.analyze_many(texts))


def test_pipelines_are_cached_per_configuration() -> None:
    nlp = get_pipeline(BLANK)
    assert get_pipeline(TextConfig(model=BLANK_MODEL, batch_size=7, n_process=3)) is nlp  # batching: same object
    assert TextPipeline(BLANK).nlp is nlp
    assert get_pipeline(TextConfig(model=BLANK_MODEL, newline_breaks="line")) is not nlp
    assert default_pipeline() is default_pipeline()
    assert default_pipeline().nlp is get_pipeline(TextConfig())
    assert nlp.pipe_names == ["sentencizer", "wikiref_sentence_boundaries", "lemmatizer", "wikiref_lemma_fallback"]


def test_text_pipeline_pickles_as_its_config(text_pipeline: TextPipeline) -> None:
    restored = pickle.loads(pickle.dumps(text_pipeline))
    assert restored.config == text_pipeline.config
    assert restored.nlp is text_pipeline.nlp  # rebuilt from the cache, not shipped
    assert restored.analyze(BATCH[0]) == text_pipeline.analyze(BATCH[0])
    assert "spacy.blank('en')" in text_pipeline.description and "spacy-lookups-data" in text_pipeline.description


# ---- model selection -----------------------------------------------------------------------------------------


def test_resolve_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spacy.util, "is_package", lambda name: name == "en_core_web_sm")
    assert resolve_model(TextConfig()) == "en_core_web_sm"
    assert resolve_model(TextConfig(model=BLANK_MODEL)) == BLANK_MODEL
    assert resolve_model(TextConfig(lang="de")) == BLANK_MODEL
    monkeypatch.setattr(spacy.util, "is_package", lambda name: False)
    assert resolve_model(TextConfig()) == BLANK_MODEL


@pytest.fixture(scope="module")
def saved_pipelines(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Small pipelines saved to disk, standing in for trained packages such as en_core_web_sm."""
    paths = {}
    rules = spacy.blank("en")
    rules.add_pipe("sentencizer")
    rules.add_pipe("lemmatizer", config={"mode": "lookup"})
    rules.initialize()
    paths["rules"] = str(tmp_path_factory.mktemp("rules"))
    rules.to_disk(paths["rules"])

    words = ["Hi", "there", ".", "Go", "now", "."]
    senter = spacy.blank("en")
    senter.add_pipe("senter")
    senter.initialize(
        lambda: [Example.from_dict(senter.make_doc(" ".join(words)), {"sent_starts": [1, 0, 0, 1, 0, 0]})]
    )
    paths["senter"] = str(tmp_path_factory.mktemp("senter"))
    senter.to_disk(paths["senter"])

    parser = spacy.blank("en")
    parser.add_pipe("parser")
    annotations = {"heads": [0, 0, 0, 3, 3, 3], "deps": ["ROOT", "dep", "punct", "ROOT", "dep", "punct"]}
    parser.initialize(lambda: [Example.from_dict(parser.make_doc(" ".join(words)), annotations)])
    paths["parser"] = str(tmp_path_factory.mktemp("parser"))
    parser.to_disk(paths["parser"])
    return paths


def test_saved_pipeline_with_rules_matches_blank(saved_pipelines: dict[str, str], text_pipeline: TextPipeline) -> None:
    pipeline = TextPipeline(TextConfig(model=saved_pipelines["rules"]))
    for text in BATCH + [case[0] for case in SENTENCE_CASES.values()]:
        assert pipeline.analyze(text) == text_pipeline.analyze(text)


def test_saved_pipeline_with_senter(saved_pipelines: dict[str, str], caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="wikiref_dataset.text"):
        pipeline = TextPipeline(TextConfig(model=saved_pipelines["senter"]))
        assert pipeline.nlp.pipe_names == ["senter", "wikiref_sentence_boundaries", "wikiref_lemma_fallback"]
    assert "has no lemmatizer" in caplog.text
    analysis = pipeline.analyze("Some Words here\n\nand more Words")
    assert analysis.sentences[-1].endswith("and more Words")  # a blank line always starts a sentence
    assert analysis.lemmas == [token.lower() for token in analysis.tokens]


def test_saved_pipeline_with_parser_gets_paragraph_starts_first(saved_pipelines: dict[str, str]) -> None:
    nlp = get_pipeline(TextConfig(model=saved_pipelines["parser"]))
    assert nlp.pipe_names == ["wikiref_sentence_boundaries", "parser", "wikiref_lemma_fallback"]
    doc = nlp.make_doc("One two\n\nthree four")
    doc = nlp.get_pipe("wikiref_sentence_boundaries")(doc)
    assert [token.is_sent_start for token in doc] == [True, None, None, True, None]


# ---- errors and edge cases ---------------------------------------------------------------------------------------


def test_unknown_language() -> None:
    with pytest.raises(ValueError, match="Unknown language code 'zz'"):
        get_pipeline(TextConfig(lang="zz", model=BLANK_MODEL))


def test_missing_model() -> None:
    with pytest.raises(OSError, match="'en_core_web_not_a_model' is not installed"):
        get_pipeline(TextConfig(model="en_core_web_not_a_model"))


def test_model_language_mismatch(saved_pipelines: dict[str, str]) -> None:
    with pytest.raises(ValueError, match="is for language 'en'"):
        get_pipeline(TextConfig(lang="de", model=saved_pipelines["rules"]))


@pytest.mark.parametrize(
    "kwargs",
    [{"lang": ""}, {"model": ""}, {"newline_breaks": "sometimes"}, {"batch_size": 0}, {"n_process": 0},
     {"max_length": -1}, {"batch_size": 2.5}],
)  # fmt: skip
def test_config_validation(kwargs: dict) -> None:
    with pytest.raises(ValueError):
        TextConfig(**kwargs)


def test_bad_input_types(text_pipeline: TextPipeline) -> None:
    with pytest.raises(TypeError, match="text must be a str, got NoneType"):
        text_pipeline.analyze(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="text must be a str, got bytes"):
        text_pipeline.split_sentences(b"Hello.")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="text must be a str, got NoneType"):
        text_pipeline.tokenize(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"texts\[1\] must be a str, got NoneType"):
        list(text_pipeline.analyze_many(["Fine.", None]))  # type: ignore[list-item]
    with pytest.raises(TypeError, match=r"texts\[0\] must be a str, got int"):
        list(text_pipeline.tokenize_many([3]))  # type: ignore[list-item]


@pytest.mark.parametrize("text", ["", "   ", "\n\n \n"])
def test_empty_text(text_pipeline: TextPipeline, text: str) -> None:
    assert text_pipeline.analyze(text) == AnalyzedText()
    assert text_pipeline.split_sentences(text) == []
    assert text_pipeline.tokenize(text) == []
    assert text_pipeline.content_lemmas(text) == []


# ---- long texts -----------------------------------------------------------------------------------------------


def test_split_long_text() -> None:
    text = "First paragraph here.\n\nSecond one is a bit longer.\nIt has two lines.\n\nThird."
    pieces = split_long_text(text, 40)
    assert "".join(piece for _, piece in pieces) == text
    assert all(len(piece) <= 40 and text[offset:].startswith(piece) for offset, piece in pieces)
    assert pieces[0][1] == "First paragraph here.\n\n"  # cut after the blank line, not inside a sentence
    assert split_long_text("abcdefghij", 4) == [(0, "abcd"), (4, "efgh"), (8, "ij")]
    assert split_long_text("short", 40) == [(0, "short")]


def test_long_texts_are_cut_at_paragraphs(text_pipeline: TextPipeline) -> None:
    paragraphs = [f"Paragraph {i} talks about children. Dr. Smith ran {i} miles." for i in range(30)]
    text = "\n\n".join(paragraphs)
    chunked = TextPipeline(TextConfig(model=BLANK_MODEL, max_length=200))
    analysis = chunked.analyze(text)
    assert analysis == text_pipeline.analyze(text)
    assert analysis.n_sentences == 60
    assert [_normalized(text[start:end]) for start, end in analysis.sentence_char_spans] == analysis.sentences
    assert list(chunked.analyze_many([text, "Short.", text])) == [analysis, chunked.analyze("Short."), analysis]


# ---- bounded vocabulary ------------------------------------------------------------------------------------------

GOLDEN_ITEMS = Path(__file__).resolve().parents[3] / "shared" / "rouge_golden" / "items.jsonl"


@pytest.fixture(scope="module")
def golden_texts() -> list[str]:
    """24 real multi-sentence texts (100 sentences) from the ROUGE golden items; skipped when absent. (Each rebuild of
    the pipeline takes ~0.3 s, and the tests rebuild it after nearly every text.)"""
    if not GOLDEN_ITEMS.is_file():
        pytest.skip(f"{GOLDEN_ITEMS} is absent")
    lines = GOLDEN_ITEMS.read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["system"] for line in lines[:24]]


def _vocabulary_growth(pipeline: TextPipeline, texts: list[str]) -> tuple[list[AnalyzedText], list[int]]:
    """Analyses, and the strings the pipeline in use had gained since it was built, after each text."""
    analyses, growth = [], []
    for analysis in pipeline.analyze_many(texts):
        nlp, built_size = pipeline._pipeline()  # the pipeline that analysed this text: swaps happen between texts
        analyses.append(analysis)
        growth.append(len(nlp.vocab.strings) - built_size)
    return analyses, growth


def test_bounded_vocabulary_gives_the_same_results(golden_texts: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    config = TextConfig(model=BLANK_MODEL, batch_size=1)  # batch of 1: the vocabulary is read after each text
    monkeypatch.setenv("WIKIREF_SPACY_MAX_STRINGS", "0")
    unbounded = TextPipeline(config)
    expected, unbounded_growth = _vocabulary_growth(unbounded, golden_texts)
    assert unbounded.pipeline_reloads == 0
    monkeypatch.setenv("WIKIREF_SPACY_MAX_STRINGS", "1")
    fresh = TextPipeline(config)  # every text on a freshly built pipeline: what one text adds at most
    analyses, added = _vocabulary_growth(fresh, golden_texts)
    assert analyses == expected
    assert fresh.pipeline_reloads == 1 + len(golden_texts)  # before the first text (the cache holds the grown
    # pipeline of the unbounded run), then after each text, before the next item is asked for
    monkeypatch.setenv("WIKIREF_SPACY_MAX_STRINGS", "50")
    bounded = TextPipeline(config)
    analyses, growth = _vocabulary_growth(bounded, golden_texts)
    assert analyses == expected
    assert sum(len(analysis.sentences) for analysis in analyses) >= 100
    assert 10 < bounded.pipeline_reloads < len(golden_texts)
    assert all(g <= 50 + a for g, a in zip(growth, added, strict=True))
    assert max(growth) < unbounded_growth[-1] / 4
    bounded.max_new_strings = 1000  # fewer rebuilds (~60 ms each) for the other entry points
    assert list(bounded.split_sentences_many(golden_texts)) == [analysis.sentences for analysis in expected]
    assert list(bounded.tokenize_many(golden_texts)) == [analysis.tokens for analysis in expected]
    reloads = bounded.pipeline_reloads
    assert [bounded.analyze(text) for text in golden_texts] == expected  # single texts: checked before each
    assert bounded.pipeline_reloads > reloads
    # the cache stays coherent: every pipeline object of this configuration sees the rebuilt spaCy pipeline
    assert bounded.nlp is get_pipeline(config) is unbounded.nlp is TextPipeline(config).nlp


def test_bounded_vocabulary_keeps_long_texts_and_trained_pipelines_whole(
    golden_texts: list[str], saved_pipelines: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = golden_texts[:12] + BATCH
    for config in (TextConfig(model=BLANK_MODEL, max_length=300), TextConfig(model=saved_pipelines["senter"])):
        monkeypatch.setenv("WIKIREF_SPACY_MAX_STRINGS", "0")
        expected = list(TextPipeline(config).analyze_many(texts))
        monkeypatch.setenv("WIKIREF_SPACY_MAX_STRINGS", "50")
        bounded = TextPipeline(config)
        assert list(bounded.analyze_many(texts)) == expected  # pieces of one text never straddle a rebuild
        assert bounded.pipeline_reloads > 5


def test_bounded_vocabulary_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WIKIREF_SPACY_MAX_STRINGS", raising=False)
    assert TextPipeline(BLANK).max_new_strings == MAX_NEW_STRINGS == 200_000
    monkeypatch.setenv("WIKIREF_SPACY_MAX_STRINGS", "1234")
    assert pickle.loads(pickle.dumps(TextPipeline(BLANK))).max_new_strings == 1234  # read where it runs
    for value in ("-1", "many"):
        monkeypatch.setenv("WIKIREF_SPACY_MAX_STRINGS", value)
        with pytest.raises(ValueError, match="WIKIREF_SPACY_MAX_STRINGS must be a non-negative integer"):
            TextPipeline(BLANK)


def test_text_imports_spacy_without_torch_and_torch_still_works():
    """thinc's torch import (2 s, ~200 MiB) is kept out of the commands that only read text; torch itself still imports
    afterwards, and a process that imported torch first gets spaCy as usual."""
    import subprocess
    import sys

    code = ("import sys, wikiref_dataset.text as text; assert 'torch' not in sys.modules, 'torch imported';"
            "import thinc.compat; assert not thinc.compat.has_torch;"
            "print(text.TextPipeline().split_sentences('The cat sat. The dog ran.'));"
            "import torch; print(float(torch.ones(2).sum()))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["['The cat sat.', 'The dog ran.']", "2.0"]
    first = subprocess.run([sys.executable, "-c", "import torch, wikiref_dataset.text, thinc.compat; "
                            "print(thinc.compat.has_torch)"], capture_output=True, text=True, timeout=120)
    assert first.stdout.strip() == "True", first.stderr


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_the_sentences_pipeline_splits_as_the_blank_one_without_lemma_tables(golden_texts: list[str], lang: str):
    """model='sentences' (the statements stage's splitter) is the blank pipeline without its lemma tables: the same
    sentences, offsets and tokens; lemmas are refused rather than left empty."""
    blank = TextPipeline(TextConfig(lang=lang, model=BLANK_MODEL))
    sentences = TextPipeline(TextConfig(lang=lang, model=SENTENCES_MODEL))
    assert "lemmatizer" not in sentences.nlp.pipe_names and "lemmatizer" in blank.nlp.pipe_names
    for text in golden_texts:
        assert sentences.sentence_spans(text) == blank.sentence_spans(text) == blank.analyze(text).sentence_char_spans
        assert sentences.split_sentences(text) == blank.split_sentences(text)
        assert sentences.tokenize(text) == blank.tokenize(text)
    with pytest.raises(ValueError, match="sentences and tokens only"):
        sentences.analyze(golden_texts[0])
    with pytest.raises(ValueError, match="sentences and tokens only"):
        list(sentences.content_lemmas_many(golden_texts[:1]))
