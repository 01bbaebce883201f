"""Tests for wikiref_dataset.web.extract: title + main text + sentences, decoding, errors, and trafilatura's
evaluation snippets (../shared/realdata/html_news/trafilatura)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from wikiref_dataset.text import BLANK_MODEL, TextConfig, TextPipeline
from wikiref_dataset.web.extract import (
    ExtractedPage,
    ExtractionConfig,
    ExtractionError,
    extract_page,
    extract_pages,
    is_html_content_type,
    looks_like_html,
)


@pytest.fixture(scope="module")
def nlp() -> TextPipeline:
    return TextPipeline(TextConfig(model=BLANK_MODEL))  # the same sentences whatever spaCy models are installed


def test_article(web_fixtures: Path, nlp: TextPipeline) -> None:
    page = extract_page((web_fixtures / "article.html").read_bytes(), "https://ledger.example/bridge",
                        "text/html; charset=utf-8", pipeline=nlp)
    assert page.title == "Harbour bridge reopens after two years of repairs"
    assert "cost 41 million euros" in page.text and "30,000 vehicles" in page.text
    for boilerplate in ("Subscribe to our newsletter", "Cookie settings", "Reader123", "All rights reserved"):
        assert boilerplate not in page.text
    assert "A crossing used by 30,000 vehicles a day" in page.sentences  # a heading is its own sentence
    assert ("During the works, ferries carried commuters across the bay and buses took a forty-minute detour."
            in page.sentences)  # a <br> inside a paragraph does not cut the sentence
    assert "Cables replaced: 1,200" in page.sentences and "Cost: 41 million euros" in page.sentences
    assert all(sentence == sentence.strip() and sentence for sentence in page.sentences)


def test_charset_from_content_type(web_fixtures: Path, nlp: TextPipeline) -> None:
    html = (web_fixtures / "latin1.html").read_bytes()
    page = extract_page(html, "https://cafe.example/", "text/html; charset=ISO-8859-1", pipeline=nlp)
    assert "a café owner told reporters" in page.text and page.title == "Café prices"
    assert len(page.sentences) == 3
    utf8_bom = b"\xef\xbb\xbf" + html.decode("latin-1").encode("utf-8")
    assert "café" in extract_page(utf8_bom, "https://cafe.example/", "text/html; charset=latin-1", pipeline=nlp).text


def test_errors_name_the_url_and_reason(web_fixtures: Path, nlp: TextPipeline) -> None:
    with pytest.raises(ExtractionError) as error:
        extract_page((web_fixtures / "empty.html").read_bytes(), "https://empty.example/", "text/html", pipeline=nlp)
    assert error.value.reason == "no_text" and "https://empty.example/" in str(error.value)
    with pytest.raises(ExtractionError) as error:
        extract_page(b"%PDF-1.7 ...", "https://doc.example/a.pdf", "application/pdf", pipeline=nlp)
    assert error.value.reason == "not_html" and "application/pdf" in str(error.value)
    with pytest.raises(ExtractionError) as error:
        extract_page(b"%PDF-1.7 binary", "https://doc.example/b", None, pipeline=nlp)
    assert error.value.reason == "not_html"
    with pytest.raises(ExtractionError) as error:
        extract_page(b"<html><body>\x00\x01\x02</body></html>", "https://bad.example/", None, pipeline=nlp)
    assert error.value.reason in ("no_text", "parse_error")


def test_extract_pages_keeps_order_and_batches(web_fixtures: Path, nlp: TextPipeline) -> None:
    article = (web_fixtures / "article.html").read_bytes()
    empty = (web_fixtures / "empty.html").read_bytes()
    items = [(article, "u1", "text/html"), (empty, "u2", "text/html"), (article.decode(), "u3"),
             (b"{}", "u4", "application/json")]
    results = list(extract_pages(items, pipeline=nlp, batch_size=2))
    assert [type(r).__name__ for r in results] == ["ExtractedPage", "ExtractionError", "ExtractedPage",
                                                  "ExtractionError"]
    assert [r.url for r in results] == ["u1", "u2", "u3", "u4"]
    assert results[0].sentences == results[2].sentences and results[0].sentences
    no_sentences = next(extract_pages([(article, "u1")], pipeline=nlp, sentences=False))
    assert isinstance(no_sentences, ExtractedPage) and no_sentences.sentences == [] and no_sentences.text


def test_helpers_and_config() -> None:
    assert is_html_content_type("text/html; charset=UTF-8") and is_html_content_type("application/xhtml+xml")
    assert not is_html_content_type("application/pdf") and not is_html_content_type(None)
    assert looks_like_html(b"\xef\xbb\xbf  <!DOCTYPE html><html>") and not looks_like_html(b"%PDF-1.4")
    with pytest.raises(ValueError):
        ExtractionConfig(min_text_chars=0)
    with pytest.raises(ValueError):
        ExtractionConfig(include_tables="yes")


def _normalize(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def test_trafilatura_evaluation_snippets(realdata: Path, nlp: TextPipeline) -> None:
    """Over all pages of trafilatura's evaluation subset: >= 90% of the must-have snippets kept, <= 10% of the
    boilerplate snippets (title + main text, whitespace runs made one space)."""
    folder = realdata / "html_news" / "trafilatura"
    cases = json.loads((folder / "evaldata_subset.json").read_text(encoding="utf-8"))
    pages = [((folder / case["file"]).read_bytes(), url) for url, case in cases.items()]
    kept_with = total_with = kept_without = total_without = 0
    for (_, url), result in zip(pages, extract_pages(pages, pipeline=nlp, sentences=False), strict=True):
        text = _normalize(f"{result.title}\n{result.text}") if isinstance(result, ExtractedPage) else ""
        case = cases[url]
        kept_with += sum(_normalize(snippet) in text for snippet in case["with"])
        kept_without += sum(_normalize(snippet) in text for snippet in case["without"])
        total_with += len(case["with"])
        total_without += len(case["without"])
    with_rate, without_rate = kept_with / total_with, kept_without / total_without
    print(f"\ntrafilatura eval subset ({len(cases)} pages): 'with' snippets kept {kept_with}/{total_with} = "
          f"{with_rate:.1%}; 'without' snippets kept {kept_without}/{total_without} = {without_rate:.1%}")
    assert with_rate >= 0.90
    assert without_rate <= 0.10
