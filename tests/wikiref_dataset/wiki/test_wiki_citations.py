"""Citation types, fields, archives and the url the documents stage fetches."""

import pytest

from wikiref_dataset.wiki.citations import (
    BARE_URL,
    TEXT,
    archived_original,
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


@pytest.mark.parametrize("content, expected", [
    ("{{cite magazine |url=https://m.example.org |magazine=Time}}", "cite magazine"),
    ("{{Cite mag|url=https://m.example.org}}", "cite magazine"),
    ("{{citation |url=https://a.example.org |title=T |work=The Times}}", "citation"),
    ("{{citation |url=https://a.example.org |journal=Nature}}", "citation (journal)"),
    ("{{citation |url=https://a.example.org |encyclopedia=Britannica}}", "citation (encyclopedia)"),
    ("{{citation |url=https://a.example.org |conference=ACL}}", "citation (conference)"),
    ("{{citation |url=https://a.example.org |isbn=0-19-852663-6}}", "citation (book)"),
    ("{{citation |contribution=Alchemy |contribution-url=https://d.example.org |title=Dictionary}}",
     "citation (book)"),
    ("{{citation |url=https://books.google.com/books?id=x}}", "citation (book)"),
    ("{{citation |title=T |publisher=P |journal=}}", "citation (no url)"),
    ("{{Wayback |date=20090312022528 |url=http://a.example.org}}", "wayback"),
    ("[http://a.example.org A] {{wayback|url=http://a.example.org|date=2015}}", "wayback"),
    ("[http://a.example.org A] {{Web archive|url=https://web.archive.org/web/1/http://a.example.org}}", "webarchive"),
])
def test_classify_ref_web_sources_in_spirit(content, expected):
    assert classify_ref(content) == expected


@pytest.mark.parametrize("archive, original", [
    ("https://web.archive.org/web/20100101000000/http://a.example.org/x?y=1", "http://a.example.org/x?y=1"),
    ("http://web.archive.org/web/20100101000000id_/https://a.example.org/", "https://a.example.org/"),
    ("https://web.archive.org/web/2010/a.example.org/x", "http://a.example.org/x"),
    ("https://archive.org/web/20100101/http://a.example.org/", "http://a.example.org/"),
    ("https://archive.today/20190101000000/https://a.example.org/", "https://a.example.org/"),
    ("http://www.webcitation.org/5gzbWaTky?url=http%3A%2F%2Fa.example.org%2Fx", "http://a.example.org/x"),
    ("https://archive.ph/AbCd1", None),
    ("http://www.webcitation.org/5gzbWaTky", None),
])
def test_archived_original(archive, original):
    assert archived_original(archive) == original


def test_wayback_first_ref_carries_the_original_url():
    citation = parse_citation("{{Wayback |date=20090312022528 |url=http://a.example.org/p |title=''A'' page}}",
                              "wayback")
    assert citation.url == "http://a.example.org/p"
    assert citation.archive_url == citation.fetch_url == (
        "https://web.archive.org/web/20090312022528/http://a.example.org/p")
    assert (citation.archive_date, citation.title, citation.url_status) == ("2009-03-12", "A page", None)
    # with url-status unknown the archive is fetched as for any citation; turned off, the original is
    citation = parse_citation("{{wayback|url=http://a.example.org/p|date=20090312}}", "wayback",
                              archive_when_status_missing=False)
    assert citation.fetch_url == "http://a.example.org/p"
    # without a date {{wayback}} names no capture
    citation = parse_citation("[http://a.example.org/p P] {{wayback|url=http://a.example.org/p}}", "wayback")
    assert (citation.url, citation.archive_url, citation.fetch_url, citation.title) == (
        "http://a.example.org/p", None, "http://a.example.org/p", "P")


def test_wayback_after_a_link_to_another_page_keeps_its_own_pair():
    citation = parse_citation("[http://patents.example.org/1 A patent] {{Wayback |date=20090215131340 "
                              "|url=http://news.example.org/2}}", "wayback")
    assert citation.url == "http://news.example.org/2"
    assert citation.archive_url == "https://web.archive.org/web/20090215131340/http://news.example.org/2"
    assert citation.title is None


def test_webarchive_first_ref():
    citation = parse_citation("{{webarchive |url=https://web.archive.org/web/20070707071918/http://a.example.org/x "
                              "|date=7 July 2007 |title=X}}", "webarchive")
    assert (citation.type, citation.url, citation.archive_date, citation.title) == (
        "webarchive", "http://a.example.org/x", "7 July 2007", "X")
    assert citation.fetch_url == citation.archive_url
    # an archive address that does not name the page: the link before the template is the page
    citation = parse_citation("[http://a.example.org/y Y] {{webarchive |url=https://archive.ph/AbCd1 "
                              "|date=2019-01-01}}", "webarchive")
    assert (citation.url, citation.archive_url, citation.title) == (
        "http://a.example.org/y", "https://archive.ph/AbCd1", "Y")
    # neither: nothing to fetch but the archive
    citation = parse_citation("{{webarchive |url=https://archive.ph/AbCd1}}", "webarchive")
    assert (citation.url, citation.fetch_url) == ("", "https://archive.ph/AbCd1")
    assert parse_citation("{{webarchive |url=not a url}}", "webarchive") is None


def test_archive_date_of_a_citation():
    citation = parse_citation("{{cite web |url=https://a.example.org |archive-url=https://web.archive.org/web/1/x "
                              "|archivedate=3 May 2016}}", "cite web")
    assert citation.archive_date == "3 May 2016"
    citation = parse_citation("{{cite web |url=https://a.example.org |url-status=dead}} {{webarchive "
                              "|url=https://web.archive.org/web/20160503000000/https://a.example.org}}", "cite web")
    assert (citation.archive_date, citation.fetch_url) == (
        "2016-05-03", "https://web.archive.org/web/20160503000000/https://a.example.org")
    assert parse_citation("{{cite web |url=https://a.example.org |archive-date=3 May 2016}}", "cite web"
                          ).archive_date is None  # no archive, no archive date


def test_citation_fields_lose_unrendered_templates():
    citation = parse_citation("{{cite web |url=https://a.example.org |title=Cost of {{frobnicate|x}} today}}",
                              "cite web")
    assert citation.title == "Cost of today"


@pytest.mark.parametrize("name", ["access-date", "accessdate"])
def test_access_date_is_kept_as_written(name):
    citation = parse_citation(f"{{{{cite news |url=https://a.example.org/x |{name}=14 April 2008 |date=2 May 2007}}}}",
                              "cite news")
    assert (citation.access_date, citation.date) == ("14 April 2008", "2 May 2007")
    assert parse_citation("{{cite web |url=https://a.example.org/x}}", "cite web").access_date is None
