"""Citation types, fields, archives and the url the documents stage fetches."""

import pytest

from wikiref_dataset.wiki.citations import (
    BARE_URL,
    TEXT,
    canonical_citation_type,
    classify_ref,
    fetch_url,
    parse_bare_url,
    parse_citation,
)


@pytest.mark.parametrize("name, expected", [
    ("cite web", "cite web"), ("Cite web", "cite web"), ("Cite_Web", "cite web"), ("cite  web", "cite web"),
    ("Cite website", "cite web"), ("cite url", "cite web"), ("Web cite", "cite web"),
    ("cite news", "cite news"), ("Cite newspaper", "cite news"), ("cite-news", "cite news"),
    ("Cite press release", "cite press release"), ("cite pr", "cite press release"),
    ("Cite press", "cite press release"), ("cite_press_release", "cite press release"),
    ("cite video", "cite av media"), ("Cite book", "cite book"), ("vcite journal", "cite journal"),
])
def test_canonical_citation_type(name, expected):
    assert canonical_citation_type(name) == expected


@pytest.mark.parametrize("content, expected", [
    ("{{cite web|url=https://a.example.org}}", "cite web"),
    ("{{Cite_News |url=https://a.example.org}}", "cite news"),
    ("{{fr icon}} {{cite web|url=https://a.example.org}}", "cite web"),
    ("See {{cite book|title=B}} and {{cite web|url=https://a.example.org}}", "cite book"),
    ("{{harvnb|Smith|2001|p=4}}", "harvnb"),
    ("{{Citation|title=T|url=https://a.example.org}}", "citation"),
    ("[https://a.example.org Title]. Retrieved 2010.", BARE_URL),
    ("https://a.example.org", BARE_URL),
    ("Smith 2001, p. 5.", TEXT),
    ("{{cite AV media|url=https://a.example.org}}", "cite av media"),
])
def test_classify_ref(content, expected):
    assert classify_ref(content) == expected


def test_parse_citation_fields():
    citation = parse_citation(
        "{{cite news |url= https://news.example.org/a |title=A ''big'' [[story]] |newspaper=[[The Times]] "
        "|publisher=Times Group |date=2 May 2010 |accessdate=3 May 2010}}",
        "cite news",
    )
    assert citation.type == "cite news"
    assert citation.url == citation.fetch_url == "https://news.example.org/a"
    assert (citation.title, citation.work, citation.publisher, citation.date) == (
        "A big story", "The Times", "Times Group", "2 May 2010")
    assert citation.archive_url is None and citation.url_status is None


@pytest.mark.parametrize("parameters, status, fetched", [
    ("|url-status=dead |archive-url=https://web.archive.org/web/1/https://a.example.org", "dead", "archive"),
    ("|url-status=unfit |archive-url=https://web.archive.org/web/1/https://a.example.org", "unfit", "archive"),
    ("|url-status=usurped |archive-url=https://web.archive.org/web/1/https://a.example.org", "usurped", "archive"),
    ("|url-status=live |archive-url=https://web.archive.org/web/1/https://a.example.org", "live", "original"),
    ("|deadurl=yes |archiveurl=https://web.archive.org/web/1/https://a.example.org", "dead", "archive"),
    ("|dead-url=no |archiveurl=https://web.archive.org/web/1/https://a.example.org", "live", "original"),
    ("|archive-url=https://web.archive.org/web/1/https://a.example.org", None, "archive"),
    ("|url-status=dead", "dead", "original"),
])
def test_archive_rules(parameters, status, fetched):
    citation = parse_citation("{{cite web |url=https://a.example.org " + parameters + "}}", "cite web")
    assert citation.url_status == status
    expected = citation.url if fetched == "original" else "https://web.archive.org/web/1/https://a.example.org"
    assert citation.fetch_url == expected


def test_archive_when_status_missing_can_be_turned_off():
    citation = parse_citation("{{cite web |url=https://a.example.org |archive-url=https://web.archive.org/web/1/x}}",
                              "cite web", archive_when_status_missing=False)
    assert citation.fetch_url == "https://a.example.org"


def test_webarchive_wayback_and_dead_link_next_to_the_citation():
    citation = parse_citation("{{cite web |url=https://a.example.org |deadurl=no}} {{dead link|date=May 2014}} "
                              "{{webarchive |url=https://web.archive.org/web/2/https://a.example.org}}", "cite web")
    assert citation.url_status == "dead"
    assert citation.fetch_url == citation.archive_url == "https://web.archive.org/web/2/https://a.example.org"
    citation = parse_citation("{{cite web |url=https://b.example.org |url-status=dead}}"
                              "{{wayback |url=https://b.example.org |date=20100101}}", "cite web")
    assert citation.fetch_url == "https://web.archive.org/web/20100101/https://b.example.org"


def test_protocol_relative_urls_become_https():
    citation = parse_citation("{{cite web |url=//a.example.org/x |archiveurl=//web.archive.org/web/1/x}}", "cite web")
    assert citation.url == "https://a.example.org/x"
    assert citation.fetch_url == "https://web.archive.org/web/1/x"


def test_fetch_url_without_original_uses_the_archive():
    assert fetch_url("", "https://web.archive.org/web/1/x", "live", True) == "https://web.archive.org/web/1/x"


def test_parse_bare_url():
    citation = parse_bare_url('[https://a.example.org/p "A \'\'page\'\'"]. Retrieved 2010.')
    assert (citation.type, citation.url, citation.title) == (BARE_URL, "https://a.example.org/p", '"A page"')
    assert parse_bare_url("https://b.example.org/q").url == "https://b.example.org/q"
    assert parse_bare_url("no link") is None
